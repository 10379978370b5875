#!/usr/bin/env bash
# BPF run time per sample of tagprof's sampler, with and without reading
# thread context (labels) and register tags, on the same binaries so the
# stacks are alike. Uses the kernel's BPF statistics (run_time_ns/run_cnt).
# Cases run in interleaved rounds; the median of the rounds is printed.
# usage: tests/bench/bpf_cost.sh [SECONDS] [ROUNDS]  (root; after `make tests`)
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/bench/lib.sh
SECS=${1:-6}
ROUNDS=${2:-5}
B=${BUILD:-build}
T=$B/tagprof
W=$B/workloads
TMP=$(mktemp -d)
trap 'bpf_stats_restore; rm -rf "$TMP"' EXIT
bpf_stats_enable

# ns_per_sample PID: run_time_ns/run_cnt of the sampling program PID holds.
ns_per_sample() {
	bpf_stats "$1" | awk '{ printf "%.0f %d\n", $2 ? $1 / $2 : 0, $2 }' ||
		echo "nan 0"
}

# measure NAME ENV... -- CMD...: profile CMD (-p) at 999 Hz, read the stats
# just before stopping.
measure() {
	local name=$1; shift
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" "$@" >/dev/null 2>&1 &
	local wl=$!
	sleep 2		# past labelpool_dlopen's dlopen, so labels are there from the start
	"$T" record -p $wl -F 999 -d $((SECS + 5)) -o "$TMP/$name.pb.gz" 2>/dev/null &
	local rec=$!
	sleep "$SECS"
	local r
	r=$(ns_per_sample $rec)
	kill -INT $rec; wait $rec || true
	wait $wl || true
	echo "${r% *}" >> "$TMP/$name.ns"
}


echo "BPF run time per sample, $SECS s at 999 Hz per case, median of $ROUNDS interleaved rounds ($(nproc) CPUs)"
cases=("labels: none (no libtagprof)" "labels: read every sample")
[ -x $W/tagops ] && cases+=("tags: process declared none" "tags: read every sample")
for r in $(seq "$ROUNDS"); do
	measure "${cases[0]}" LABELPOOL_NOLABELS=1 -- \
		$W/labelpool_dlopen $((SECS + 4)) $B/libtagprof.so
	measure "${cases[1]}" X=1 -- $W/labelpool_dlopen $((SECS + 4)) $B/libtagprof.so
	if [ -x $W/tagops ]; then
		measure "${cases[2]}" X=1 -- $W/tagops undeclared $((SECS + 4))
		measure "${cases[3]}" X=1 -- $W/tagops shared $((SECS + 4))
	fi
done
for c in "${cases[@]}"; do
	printf "%-34s %8s ns/sample   rounds: %s\n" "$c" "$(median nan <"$TMP/$c.ns")" \
		"$(tr '\n' ' ' < "$TMP/$c.ns")"
done
