#!/usr/bin/env bash
# Per-sample (record -T) pprofs against merged ones: CPU and bytes per sample.
#  1. the pprof builder alone (tests/bench/timeline_cost.c): the same
#     synthetic minute (999 Hz, 2 CPUs, 24-frame stacks, labels) added and
#     encoded both ways, median of RUNS;
#  2. record -a at 999 Hz for SECONDS over two copies of fixedwork, with
#     and without -T, interleaved RUNS times: the file's bytes per sample and
#     the whole run's CPU (task-clock) per sample, medians;
#  3. tagprof report pprof and report timeline (.json.gz, .html) over the
#     per-sample file: CPU and peak RSS per 100k samples, the outputs' sizes.
# usage: tests/bench/timeline_cost.sh [SECONDS]   (root for part 2, after make)
# env:   RUNS (default 3), BUILD (default build)
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
RUNS=${RUNS:-3}
SECS=${1:-10}
TMP=$(mktemp -d)
trap 'pkill -f "$B/workloads/fixedwork" 2>/dev/null || true; rm -rf "$TMP"' EXIT
. tests/bench/lib.sh
[ -x "$B/tagprof" ] || { echo "timeline_cost: $B/tagprof not built (make)" >&2; exit 1; }

mkdir -p "$B/bench"
# The builder and the utilities it uses, as make built them.
cc -D_GNU_SOURCE -O2 -g -Iinclude -Isrc -I"$B" -o "$B/bench/timeline_cost" \
	tests/bench/timeline_cost.c "$B/obj/out/pprof.o" "$B"/obj/util/*.o -lz

echo "pprof builder, one synthetic minute (median of $RUNS runs):"
for r in $(seq "$RUNS"); do "$B/bench/timeline_cost" | tail -2; done >"$TMP/synth"
printf '%-9s %8s %9s %10s %11s %9s %8s\n' mode samples in_file add_ns/s encode_ns/s bytes/s heap_MB
for m in merged timeline; do
	row=$m
	for col in 2 3 4 5 6 7; do
		row="$row $(awk -v m=$m -v c=$col '$1 == m { print $c }' "$TMP/synth" | median)"
	done
	# shellcheck disable=SC2086
	printf '%-9s %8s %9s %10s %11s %9s %8s\n' $row
done

[ "$(id -u)" -eq 0 ] || { echo "(part 2 needs root)"; exit 0; }
command -v perf >/dev/null || { echo "(part 2 needs perf: apt-get install linux-perf)"; exit 0; }
echo
echo "record -a -F 999 for $SECS s over 2 x fixedwork (median of $RUNS interleaved runs):"
for r in $(seq "$RUNS"); do
	for mode in merged timeline; do
		flag=(); [ $mode = timeline ] && flag=(-T)
		for i in 1 2; do "$B/workloads/fixedwork" 100000 130 >/dev/null & done
		sleep 0.3
		perf stat -x, -e task-clock -o "$TMP/stat" -- "$B/tagprof" record -a -F 999 \
			-d "$SECS" "${flag[@]}" -o "$TMP/$mode.pb.gz" 2>"$TMP/err" >/dev/null
		pkill -f "$B/workloads/fixedwork" || true; wait 2>/dev/null || true
		n=$(sed -n 's/.* \([0-9]*\) samples, .*/\1/p' "$TMP/err" | tail -1)
		ms=$(awk -F, '/task-clock/ { print $1 }' "$TMP/stat")
		bytes=$(stat -c %s "$TMP/$mode.pb.gz")
		echo "$mode $n $bytes $ms" >>"$TMP/rec"
	done
done
printf '%-9s %8s %10s %9s %14s\n' mode samples file_KB bytes/s cpu_us/sample
for m in merged timeline; do
	n=$(awk -v m=$m '$1 == m { print $2 }' "$TMP/rec" | median)
	kb=$(awk -v m=$m '$1 == m { print $3 / 1024 }' "$TMP/rec" | median)
	bps=$(awk -v m=$m '$1 == m && $2 { print $3 / $2 }' "$TMP/rec" | median)
	us=$(awk -v m=$m '$1 == m && $2 { print 1000 * $4 / $2 }' "$TMP/rec" | median)
	printf '%-9s %8s %10.0f %9.1f %14.1f\n' "$m" "$n" "$kb" "$bps" "$us"
done

# 3. tagprof report on the last per-sample file of part 2: CPU and peak RSS
#    per 100k samples read (GNU time), and the size of each output.
echo
n=$(awk '$1 == "timeline" { print $2 }' "$TMP/rec" | tail -1)
echo "tagprof report over record -T's file ($n samples; median of $RUNS runs, per 100k samples):"
for r in $(seq "$RUNS"); do
	for out in pprof:w.pb.gz timeline:t.json.gz timeline:t.html; do
		cmd=${out%%:*} file=$TMP/${out#*:}
		by=(); [ "${file##*.}" = html ] && by=(--by process)
		/usr/bin/time -f '%U %S %M' -o "$TMP/time" "$B/tagprof" report "$cmd" \
			"$TMP/timeline.pb.gz" "${by[@]}" -o "$file" 2>/dev/null
		read -r u s kb <"$TMP/time"
		echo "$cmd:${out#*:} $u $s $kb $(stat -c %s "$file")" >>"$TMP/rep"
	done
done
printf '%-22s %14s %14s %10s\n' output cpu_ms/100k peak_RSS_MB file_KB
for o in pprof:w.pb.gz timeline:t.json.gz timeline:t.html; do
	cpu=$(awk -v o="$o" -v n="$n" '$1 == o { print ($2 + $3) * 1000 * 100000 / n }' "$TMP/rep" | median)
	rss=$(awk -v o="$o" '$1 == o { print $4 / 1024 }' "$TMP/rep" | median)
	kb=$(awk -v o="$o" '$1 == o { print $5 / 1024 }' "$TMP/rep" | median)
	printf '%-22s %14.0f %14.1f %10.0f\n' "report ${o%%:*} ${o#*:}" "$cpu" "$rss" "$kb"
done
