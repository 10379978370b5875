#!/usr/bin/env bash
# Instructions per tagprof_attach() pair (attach, then restore), counted by
# callgrind: (Ir(N loops with the pair) - Ir(N loops without)) / N, for an
# application linked against libtagprof.so and one linked against
# libtagprof.a. Builds the libraries if needed; not part of `make check`.
#
#	tests/bench/attach_cost.sh [N] [-v]    (-v: also show the loop's code)
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
N=${1:-1000000}
VERBOSE=${2:-}
CC=${CC:-gcc}
CFLAGS=${CFLAGS:--O2 -g}
OUT=$BUILD/bench
mkdir -p "$OUT"
make -s "$BUILD/libtagprof.so" "$BUILD/libtagprof.a"

# As applications build: the installed header, PIE (Debian's default).
$CC $CFLAGS -Iinclude -o "$OUT/attach_cost_so" tests/bench/attach_cost.c \
	-L"$BUILD" -ltagprof -Wl,-rpath,"$PWD/$BUILD"
$CC $CFLAGS -Iinclude -o "$OUT/attach_cost_a" tests/bench/attach_cost.c \
	"$BUILD/libtagprof.a" -Wl,--export-dynamic-symbol=otel_thread_ctx_v1 -pthread

# Total instructions of one run (callgrind's "totals:" line).
ir() {
	local f=$OUT/callgrind.out.$$
	valgrind --tool=callgrind --callgrind-out-file="$f" "$@" >/dev/null 2>&1
	awk '/^totals:/ { print $2 }' "$f"
	rm -f "$f"
}

per_loop() {	# bin mode base -> instructions per iteration over "none"
	local ir_mode
	ir_mode=$(ir "$1" "$N" "$2")
	awk -v a="$ir_mode" -v b="$3" -v n="$N" 'BEGIN { printf "%.2f", (a - b) / n }'
}

echo "N=$N iterations per run, $CC $CFLAGS, callgrind (valgrind $(valgrind --version | sed 's/valgrind-//'))"
for link in so a; do
	bin=$OUT/attach_cost_$link
	base=$(ir "$bin" "$N" none)
	pair=$(per_loop "$bin" pair "$base")
	nested=$(per_loop "$bin" nested "$base")
	raw=$(per_loop "$bin" raw "$base")
	echo "libtagprof.$link: attach+restore pair: $pair instructions (target <= 6)"
	echo "libtagprof.$link:   same, nested in an outer set (prev != NULL): $nested"
	echo "libtagprof.$link:   bare OTEP store/restore, no seal check (floor): $raw"
	if [ "$VERBOSE" = -v ]; then
		objdump -d --no-show-raw-insn "$bin" | awk '/<loop_pair>:/,/^$/'
	fi
done
