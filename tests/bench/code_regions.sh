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

# The agent: CPU seconds of record (user+sys, from its rusage) per sample.
agent_cpu() {	# MODE -> "cpu_s samples"
	local out
	out=$( { /usr/bin/time -f 'TIME %U %S' "$BUILD/tagprof" record -F 999 \
		-o /dev/null -- "$BUILD/workloads/jitengine" "$1" 4; } 2>&1 >/dev/null)
	awk '/^TIME/ { cpu = $2 + $3 } / samples, / { for (i = 1; i <= NF; i++)
		if ($(i+1) == "samples,") n = $i } END { print cpu, n }' <<<"$out"
}
[ "$(id -u)" -eq 0 ] || { echo "agent: needs root for BPF, skipped"; exit 0; }
with=() without=()
for r in $(seq "$RUNS"); do
	with+=("$(agent_cpu run)")
	without+=("$(agent_cpu run-noregions)")
done
per_sample() {	# "cpu n"... -> median us per sample
	for x in "$@"; do echo "$x"; done |
		awk '$2 > 0 { printf "%.2f\n", $1 / $2 * 1e6 }' | sort -n |
		awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
echo "agent: $(per_sample "${with[@]}") us CPU per sample with regions, $(per_sample "${without[@]}") without (record -F 999 of jitengine, median of $RUNS each)"
