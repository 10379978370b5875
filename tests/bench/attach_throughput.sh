#!/usr/bin/env bash
# Throughput of a 2-worker pool running ~1 us micro-tasks, with and without
# a label set attached around every task (attach before, restore after).
# RUNS runs of each, interleaved (plain, attach, plain, ...), each its own
# process; prints every run, the medians and attach/plain (target >= 0.99).
# Builds the libraries if needed; not part of `make check`.
#
#	tests/bench/attach_throughput.sh [RUNS] [MS per run] [so|a]
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RUNS=${1:-5}
MS=${2:-1000}
LINK=${3:-so}
CC=${CC:-gcc}
CFLAGS=${CFLAGS:--O2 -g}
OUT=$BUILD/bench
BIN=$OUT/attach_throughput_$LINK
mkdir -p "$OUT"
make -s "$BUILD/libtagprof.so" "$BUILD/libtagprof.a"

if [ "$LINK" = so ]; then
	$CC $CFLAGS -Iinclude -o "$BIN" tests/bench/attach_throughput.c \
		-L"$BUILD" -ltagprof -Wl,-rpath,"$PWD/$BUILD" -pthread
else
	$CC $CFLAGS -Iinclude -o "$BIN" tests/bench/attach_throughput.c \
		"$BUILD/libtagprof.a" -Wl,--export-dynamic-symbol=otel_thread_ctx_v1 -pthread
fi

per_us=$("$BIN" calibrate)
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "libtagprof.$LINK, 2 workers, 1 us tasks ($per_us spin iterations), $RUNS x ${MS} ms each, $(nproc) CPUs"
echo "tasks/s: wall clock, and per worker CPU-second x 2 (steadier where workers get preempted)"
: >"$OUT/throughput.plain"
: >"$OUT/throughput.attach"
for i in $(seq "$RUNS"); do
	read -r pw pc < <("$BIN" plain "$per_us" "$MS")
	read -r aw ac < <("$BIN" attach "$per_us" "$MS")
	echo "$pw $pc" >>"$OUT/throughput.plain"
	echo "$aw $ac" >>"$OUT/throughput.attach"
	echo "run $i: plain $pw (cpu $pc), attach $aw (cpu $ac)"
done
col() { awk -v c="$1" '{ print $c }' "$2" | median; }
for c in 1 2; do
	[ "$c" = 1 ] && what=wall || what=cpu
	mp=$(col "$c" "$OUT/throughput.plain")
	ma=$(col "$c" "$OUT/throughput.attach")
	awk -v w="$what" -v a="$ma" -v p="$mp" 'BEGIN {
		printf "median (%s): plain %d tasks/s, attach %d tasks/s, attach/plain %.4f (target >= 0.99)\n", w, p, a, a / p }'
done
