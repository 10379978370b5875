#!/usr/bin/env bash
# BPF run time per sample of tagprof's sampler, with and without reading
# thread context (labels) and register tags, on the same binaries so the
# stacks are alike. Uses the kernel's BPF statistics (run_time_ns/run_cnt).
# Cases run in interleaved rounds; the median of the rounds is printed.
# usage: tests/bench/bpf_cost.sh [SECONDS] [ROUNDS]  (root; after `make tests`)
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${1:-6}
ROUNDS=${2:-5}
B=${BUILD:-build}
T=$B/tagprof
W=$B/workloads
TMP=$(mktemp -d)
old=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled=$old; rm -rf "$TMP"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1

# on_sample_ids: ids of the loaded on_sample programs (tagprof samplers).
on_sample_ids() {
	bpftool prog show -j | python3 -c '
import json, sys
print(" ".join(str(p["id"]) for p in json.load(sys.stdin) if p.get("name") == "on_sample"))'
}

# ns_per_sample "IDS BEFORE": run_time_ns/run_cnt of the on_sample program
# loaded since (bpftool here cannot tell which process owns a program).
ns_per_sample() {
	bpftool prog show -j | python3 -c '
import json, sys
before = set(sys.argv[1].split())
new = [p for p in json.load(sys.stdin)
       if p.get("name") == "on_sample" and str(p["id"]) not in before]
if len(new) == 1 and new[0].get("run_cnt"):
    p = new[0]
    print("%.0f %d" % (p["run_time_ns"] / p["run_cnt"], p["run_cnt"]))
else:
    print("nan 0")' "$1"
}

# measure NAME ENV... -- CMD...: profile CMD (-p) at 999 Hz, read the stats
# just before stopping.
measure() {
	local name=$1; shift
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" "$@" >/dev/null 2>&1 &
	local wl=$! before
	before=$(on_sample_ids)
	sleep 2		# past labelpool_dlopen's dlopen, so labels are there from the start
	"$T" record -p $wl -F 999 -d $((SECS + 5)) -o "$TMP/$name.pb.gz" 2>/dev/null &
	local rec=$!
	sleep "$SECS"
	local r
	r=$(ns_per_sample "$before")
	kill -INT $rec; wait $rec || true
	wait $wl || true
	echo "${r% *}" >> "$TMP/$name.ns"
}

median() { sort -n "$1" | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "nan") }'; }

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
	printf "%-34s %8s ns/sample   rounds: %s\n" "$c" "$(median "$TMP/$c.ns")" \
		"$(tr '\n' ' ' < "$TMP/$c.ns")"
done
