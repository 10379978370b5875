#!/usr/bin/env bash
# The tagging dictionary's costs (tests/bench/code_regions.c): per
# tagprof_code_region() call, table bytes per region, the agent reader's
# memory and time with N live regions, attribution per sample. Then the
# agent end to end: CPU per sample of `tagprof record` on the same
# generated-code workload with and without its regions registered,
# alternated, medians. Not part of `make check`.
#
#	tests/bench/code_regions.sh [N] [RUNS]	(100000 regions, 5 runs)
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
N=${1:-100000}
RUNS=${2:-5}
make -s "$BUILD/bench/code_regions" "$BUILD/workloads/jitengine"
"$BUILD/bench/code_regions" "$N" "$RUNS"

# The agent: CPU seconds of `record -a` (user+sys; it has no children) per
# sample, while jitengine runs apart on both CPUs, with or without its
# regions registered.
agent_cpu() {	# [--no-regions] -> "cpu_s samples"
	local pid
	"$BUILD/workloads/jitengine" --jitdump-dir "$tmp" --warmup 0 "$@" run 11 \
		>/dev/null 2>&1 &
	pid=$!
	sleep 1
	TIMEFORMAT='%U %S'
	{ time "$BUILD/tagprof" record -F 999 -a -d 8 -o "$tmp/p.pb.gz" \
		2>"$tmp/err"; } 2>"$tmp/time"
	wait "$pid"
	awk 'NR == FNR { cpu = $1 + $2; next } / samples, / { for (i = 1; i < NF; i++)
		if ($(i+1) == "samples,") n = $i } END { print cpu, n }' "$tmp/time" "$tmp/err"
}
[ "$(id -u)" -eq 0 ] || { echo "agent: needs root for BPF, skipped"; exit 0; }
tmp=$(mktemp -d /tmp/code_regions.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
with=() without=()
for r in $(seq "$RUNS"); do
	with+=("$(agent_cpu)")
	without+=("$(agent_cpu --no-regions)")
done
per_sample() {	# "cpu n"... -> median us per sample
	for x in "$@"; do echo "$x"; done |
		awk '$2 > 0 { printf "%.2f\n", $1 / $2 * 1e6 }' | sort -n |
		awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
echo "agent: $(per_sample "${with[@]}") us CPU per sample with regions, $(per_sample "${without[@]}") without (record -a -F 999 for 8 s while jitengine runs on both CPUs, median of $RUNS each)"
