#!/usr/bin/env bash
# Start-up cost of `tagprof record -a`: CPU spent before the first sample,
# and the whole short run (start, 0.2 s of sampling at 999 Hz, exit) beside
# perf record and bpftrace doing the same, in the same invocation.
#
# "Before the first sample" is two parts, measured apart because no
# outside counter stops at the first sample:
#   process start  task-clock of `tagprof --version`: exec, the dynamic
#                  loader and exit, the same for any start of the binary
#   main to sampling  what `tagprof record -v` prints as "start-up: N ms
#                  CPU ... until sampling began" (CLOCK_PROCESS_CPUTIME_ID
#                  from main until every CPU's event is attached)
# each for a warm start (the kernel's BTF cut is cached, as on every start
# but the first on a kernel: src/kernel/btfcut.c) and a cold one (an empty
# TAGPROF_CACHE_DIR: the cut is made, which reads the whole kernel BTF).
# Rows run interleaved, RUNS times; medians are printed.
#
# usage: tests/bench/startup.sh   (root, after make)
# env:   RUNS (default 9), BUILD (default build)
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-9}
B=${BUILD:-build}
T=$B/tagprof
TARGET_MS=25
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. tests/bench/lib.sh

[ "$(id -u)" -eq 0 ] || { echo "startup: needs root" >&2; exit 1; }
[ -x "$T" ] || { echo "startup: $T not built (make)" >&2; exit 1; }
command -v perf >/dev/null || { echo "startup: needs perf (apt-get install linux-perf)" >&2; exit 1; }

# task_ms CMD...: task-clock (ms) of CMD and its children, from exec on.
task_ms() {
	perf stat -x, -e task-clock -o "$TMP/stat" -- "$@" >/dev/null 2>"$TMP/err" || true
	awk -F, '/task-clock/ { printf "%.2f", $1 }' "$TMP/stat"
}

# main_ms [ENV...]: tagprof's own "start-up: N ms CPU" figure.
main_ms() {
	env "$@" "$T" record -v -a -F 999 -d 0.1 -o "$TMP/t.pb.gz" 2>"$TMP/rec.err" >/dev/null
	sed -n 's/^tagprof: start-up: \([0-9.]*\) ms CPU.*/\1/p' "$TMP/rec.err"
}

# Warm the cache once: every warm row then finds the cut.
main_ms >/dev/null
peers=(tagprof perf)
command -v bpftrace >/dev/null && peers+=(bpftrace)
for r in $(seq "$RUNS"); do
	task_ms "$T" --version >>"$TMP/floor"
	main_ms >>"$TMP/warm"
	rm -rf "$TMP/cold"
	main_ms TAGPROF_CACHE_DIR="$TMP/cold" >>"$TMP/cold.ms"
	for p in "${peers[@]}"; do
		case $p in
		tagprof) task_ms "$T" record -a -F 999 -d 0.2 -o "$TMP/w.pb.gz" ;;
		perf) task_ms perf record -q -a -g -F 999 -o "$TMP/perf.data" -- sleep 0.2 ;;
		bpftrace) task_ms bpftrace -e 'profile:hz:999 { @[ustack,kstack] = count(); }' -c 'sleep 0.2' ;;
		esac >>"$TMP/whole.$p"
		echo >>"$TMP/whole.$p"
	done
	echo >>"$TMP/floor"
	echo "startup: run $r/$RUNS done" >&2
done

floor=$(median <"$TMP/floor")
warm=$(median <"$TMP/warm")
cold=$(median <"$TMP/cold.ms")
before=$(awk -v a="$floor" -v b="$warm" 'BEGIN { printf "%.1f", a + b }')
before_cold=$(awk -v a="$floor" -v b="$cold" 'BEGIN { printf "%.1f", a + b }')
echo
echo "tagprof record -a start-up, CPU ms, median of $RUNS interleaved runs ($(nproc) CPUs)"
printf '%-44s %8s\n' "process start (tagprof --version)" "$floor"
printf '%-44s %8s\n' "main to sampling, BTF cut cached" "$warm"
printf '%-44s %8s\n' "main to sampling, first start (cut made)" "$cold"
printf '%-44s %8s\n' "before the first sample, cached" "$before"
printf '%-44s %8s\n' "before the first sample, first start" "$before_cold"
echo
echo "a whole run: start, 0.2 s at 999 Hz on every CPU, exit (task-clock ms)"
for p in "${peers[@]}"; do
	printf '%-44s %8s\n' "$p" "$(median <"$TMP/whole.$p")"
done
echo
awk -v v="$before" -v t="$TARGET_MS" 'BEGIN { exit !(v < t) }' && v=PASS || v=MISS
echo "target record start-up < $TARGET_MS ms CPU before the first sample: $v ($before ms)"
