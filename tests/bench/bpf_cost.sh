#!/usr/bin/env bash
# BPF run time per sample of tagprof's sampler, with and without reading
# thread context (labels) and register tags, on the same binaries so the
# stacks are alike. Uses the kernel's BPF statistics (run_time_ns/run_cnt).
# Cases run in interleaved rounds; the median of the rounds is printed.
# With bpftrace installed, the labelled workload is also profiled system-wide
# by tagprof -a and by bpftrace's `@[ustack,kstack] = count()` in the same
# round, and the two are compared (target: tagprof <= 0.8 x bpftrace).
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

# measure NAME [-a|-bpftrace] ENV... -- CMD...: profile CMD at 999 Hz (with
# tagprof -p, or system-wide: tagprof -a or bpftrace), read the stats just
# before stopping.
measure() {
	local name=$1 how=-p; shift
	case $1 in -a | -bpftrace) how=$1; shift ;; esac
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" "$@" >/dev/null 2>&1 &
	local wl=$!
	sleep 2		# past labelpool_dlopen's dlopen, so labels are there from the start
	case $how in
	-p) "$T" record -p $wl -F 999 -d $((SECS + 5)) -o "$TMP/$name.pb.gz" 2>/dev/null & ;;
	-a) "$T" record -a -F 999 -d $((SECS + 5)) -o "$TMP/$name.pb.gz" 2>/dev/null & ;;
	-bpftrace)
		# END clears the map: printing it is not what is measured.
		bpftrace -e 'profile:hz:999 { @[ustack,kstack] = count(); }
			END { clear(@); }' >"$TMP/bpftrace.out" 2>&1 & ;;
	esac
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
BT=
if command -v bpftrace >/dev/null; then
	BT=1
	cases+=("labels, system-wide: tagprof -a" "labels, system-wide: bpftrace")
fi
for r in $(seq "$ROUNDS"); do
	measure "${cases[0]}" LABELPOOL_NOLABELS=1 -- \
		$W/labelpool_dlopen $((SECS + 4)) $B/libtagprof.so
	measure "${cases[1]}" X=1 -- $W/labelpool_dlopen $((SECS + 4)) $B/libtagprof.so
	if [ -x $W/tagops ]; then
		measure "${cases[2]}" X=1 -- $W/tagops undeclared $((SECS + 4))
		measure "${cases[3]}" X=1 -- $W/tagops shared $((SECS + 4))
	fi
	if [ -n "$BT" ]; then
		measure "labels, system-wide: tagprof -a" -a X=1 -- \
			$W/labelpool_dlopen $((SECS + 4)) $B/libtagprof.so
		measure "labels, system-wide: bpftrace" -bpftrace X=1 -- \
			$W/labelpool_dlopen $((SECS + 4)) $B/libtagprof.so
	fi
done
for c in "${cases[@]}"; do
	printf "%-34s %8s ns/sample   rounds: %s\n" "$c" "$(median nan <"$TMP/$c.ns")" \
		"$(tr '\n' ' ' < "$TMP/$c.ns")"
done
if [ -n "$BT" ]; then
	# Per round, tagprof's figure over bpftrace's; the median of those.
	ratio=$(paste "$TMP/labels, system-wide: tagprof -a.ns" \
		"$TMP/labels, system-wide: bpftrace.ns" |
		awk '$2 > 0 && $1 != "nan" { print $1 / $2 }' | median nan)
	printf "labels, system-wide: tagprof %s vs bpftrace %s ns/sample, ratio %s: target <= 0.8 x bpftrace: %s\n" \
		"$(median nan <"$TMP/labels, system-wide: tagprof -a.ns")" \
		"$(median nan <"$TMP/labels, system-wide: bpftrace.ns")" "$ratio" \
		"$(awk -v r="$ratio" 'BEGIN { print (r != "nan" && r <= 0.8) ? "PASS" : "MISS" }')"
fi
