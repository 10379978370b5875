#!/usr/bin/env bash
# Page-fault sampling (record -e page-faults): what it costs.
#  1. the slowdown of a fault-bound workload (build/workloads/memaccess
#     flat out: PASSES passes over an 8 MiB .bss array, then over a 24 MiB
#     mapping, every page read a minor fault) under record -e page-faults
#     -c 1 (every fault a sample) and -c 16, against no profiler: the
#     workload's own wall time for its two phases and the CPU time it used
#     in them (it prints both; the profiler's start-up and exit are left
#     out; the BPF program runs in the faulting thread, so its cost is in
#     that CPU time, which other load on the machine disturbs less than the
#     wall time), medians of RUNS runs interleaved round-robin, and their
#     ratios to the unprofiled medians; the ring-buffer bytes per sample
#     the record summary prints, and its samples and lost samples;
#  2. tagprof report memory (text, and HTML) over a per-sample profile of
#     about 1M samples (record -T -c 1 of a longer run): CPU (user+sys) and
#     peak RSS per 1M samples, medians of RUNS runs; and report pprof over
#     the same file, for scale (both read the whole profile first).
# usage: sudo tests/bench/memory.sh          (after make tests)
# env:   EVENT (default page-faults; mem-loads on a PMU with PEBS or IBS),
#        PERIODS (default "1 16": the -c values against no profiler),
#        RUNS (default 5), PASSES (default 20: 164k faults a run),
#        BIG_PASSES (default 122: 1M faults), BUILD (default build),
#        QUIET_WAIT (default 30: seconds a run waits for idle CPUs)
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/bench/lib.sh
B=${BUILD:-build}
RUNS=${RUNS:-5}
PASSES=${PASSES:-20}
BIG_PASSES=${BIG_PASSES:-122}
W=$B/workloads/memaccess
EVENT=${EVENT:-page-faults}
PERIODS=${PERIODS:-1 16}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

[ -x "$B/tagprof" ] && [ -x "$W" ] || { echo "memory: build first (make && make tests)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "memory: needs root (BPF)" >&2; exit 1; }

# phases_ms FILE: the workload's two phases' wall time and CPU time, in
# ms, from its output.
phases_ms() {
	awk '/^phase / { for (i = 2; i <= NF; i++) { split($i, kv, "=")
		if (kv[1] == "start_ns") s = kv[2]; if (kv[1] == "end_ns") e = kv[2]
		if (kv[1] == "cpu_ns") c += kv[2] / 1e6 }
		t += (e - s) / 1e6 } END { printf "%.1f %.1f", t, c }' "$1"
}

# 1. The slowdown.
echo "memaccess 0 $PASSES (flat out; $((PASSES * 2048)) faults in A, $((PASSES * 6144)) in B), median of $RUNS interleaved runs:"
for r in $(seq "$RUNS"); do
	for mode in none $PERIODS; do
		wait_quiet 20 "${QUIET_WAIT:-30}"
		case $mode in
		none)	"$W" 0 "$PASSES" 8192 0 >"$TMP/out" ;;
		*)	"$B/tagprof" record -e "$EVENT" -c "$mode" -o "$TMP/p.pb.gz" -- \
				"$W" 0 "$PASSES" 8192 0 >"$TMP/out" 2>"$TMP/err" ;;
		esac
		n=- lost=- ring=-
		if [ $mode != none ]; then
			read -r n lost < <(sed -n 's/.* \([0-9]*\) samples, \([0-9]*\) lost.*/\1 \2/p' "$TMP/err" | tail -1)
			ring=$(sed -n 's/.* \([0-9][0-9]*\) ring-buffer bytes per sample.*/\1/p' "$TMP/err" | tail -1)
		fi
		echo "$mode $(phases_ms "$TMP/out") ${n:--} ${lost:--} ${ring:--}" >>"$TMP/runs"
	done
done
base=$(awk '$1 == "none" { print $2 }' "$TMP/runs" | median)
cbase=$(awk '$1 == "none" { print $3 }' "$TMP/runs" | median)
printf '%-20s %9s %8s %8s %8s %8s %6s %10s\n' profiler wall_ms slowdown cpu_ms cpu_x \
	samples lost ring_B/smp
for mode in none $PERIODS; do
	ms=$(awk -v m=$mode '$1 == m { print $2 }' "$TMP/runs" | median)
	cpu=$(awk -v m=$mode '$1 == m { print $3 }' "$TMP/runs" | median)
	n=$(awk -v m=$mode '$1 == m && $4 != "-" { print $4 }' "$TMP/runs" | median)
	lost=$(awk -v m=$mode '$1 == m && $5 != "-" { print $5 }' "$TMP/runs" | median)
	ring=$(awk -v m=$mode '$1 == m && $6 != "-" { print $6 }' "$TMP/runs" | median)
	name="$EVENT -c $mode"
	[ "$mode" = none ] && name=none
	printf '%-20s %9s %8s %8s %8s %8s %6s %10s\n' "$name" "$ms" \
		"$(awk -v a="$ms" -v b="$base" 'BEGIN { printf "%.2fx", a / b }')" "$cpu" \
		"$(awk -v a="$cpu" -v b="$cbase" 'BEGIN { printf "%.2fx", a / b }')" "$n" "$lost" "$ring"
done

# 2. report memory over ~1M samples.
echo
if ! "$B/tagprof" report memory --help >/dev/null 2>&1; then
	echo "(tagprof report memory is not in this build: part 2 skipped)"
	exit 0
fi
"$B/tagprof" record -T -e page-faults -c 1 -o "$TMP/big.pb.gz" -- \
	"$W" 0 "$BIG_PASSES" 8192 0 >/dev/null 2>"$TMP/bigerr"
read -r n lost < <(sed -n 's/.* \([0-9]*\) samples, \([0-9]*\) lost.*/\1 \2/p' "$TMP/bigerr" | tail -1)
echo "tagprof report memory --by query_id over record -T's file ($n samples, $lost lost," \
	"$(($(stat -c %s "$TMP/big.pb.gz") / 1024)) KiB; median of $RUNS runs, per 1M samples):"
for r in $(seq "$RUNS"); do
	for out in txt html pb.gz; do
		what=(memory "$TMP/big.pb.gz" --by query_id)
		[ $out = pb.gz ] && what=(pprof "$TMP/big.pb.gz")
		/usr/bin/time -f '%U %S %M' -o "$TMP/time" "$B/tagprof" report "${what[@]}" \
			-o "$TMP/r.$out" 2>"$TMP/reperr" ||
			{ echo "report ${what[0]} -o r.$out failed: $(cat "$TMP/reperr")"; exit 1; }
		read -r u s kb <"$TMP/time"
		echo "$out $u $s $kb $(stat -c %s "$TMP/r.$out")" >>"$TMP/rep"
	done
done
printf '%-20s %10s %15s %12s %9s\n' report cpu_s/1M peak_RSS_MB/1M peak_RSS_MB file_KB
for o in txt html pb.gz; do
	cpu=$(awk -v o=$o -v n="$n" '$1 == o { print ($2 + $3) * 1e6 / n }' "$TMP/rep" | median)
	rss=$(awk -v o=$o -v n="$n" '$1 == o { print $4 / 1024 * 1e6 / n }' "$TMP/rep" | median)
	rawrss=$(awk -v o=$o '$1 == o { print $4 / 1024 }' "$TMP/rep" | median)
	kb=$(awk -v o=$o '$1 == o { print $5 / 1024 }' "$TMP/rep" | median)
	name="memory -o r.$o"; [ $o = pb.gz ] && name="pprof -o r.pb.gz"
	printf '%-20s %10.2f %15.1f %12.1f %9.0f\n' "$name" "$cpu" "$rss" "$rawrss" "$kb"
done
