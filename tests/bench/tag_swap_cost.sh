#!/usr/bin/env bash
# Instructions per tagprof_tag_swap() pair (tag, then restore), counted by
# callgrind: (Ir(N loops with the pair) - Ir(N loops without)) / N. The
# swaps are inline: no library is linked. Not part of `make check`.
#
#	tests/bench/tag_swap_cost.sh [N] [-v]    (-v: also show the loops' code)
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
N=${1:-1000000}
VERBOSE=${2:-}
TAG_CC=${TAG_CC:-gcc}
CFLAGS=${CFLAGS:--O2 -g}
case $(uname -m) in
aarch64) REG=x28 ;;
*) REG=r15 ;;
esac
TAGFLAGS="-ffixed-$REG -DTAGPROF_TAG_REG_RESERVED"
OUT=$BUILD/bench
mkdir -p "$OUT"
bin=$OUT/tag_swap_cost
# shellcheck disable=SC2086
$TAG_CC $CFLAGS $TAGFLAGS -Wall -Wextra -Iinclude -o "$bin" tests/bench/tag_swap_cost.c

# Total instructions of one run (callgrind's "totals:" line).
ir() {
	local f=$OUT/callgrind.out.$$
	valgrind --tool=callgrind --callgrind-out-file="$f" "$@" >/dev/null 2>&1
	awk '/^totals:/ { print $2 }' "$f"
	rm -f "$f"
}

per_loop() {	# mode base -> instructions per iteration over the base run
	awk -v a="$(ir "$bin" "$N" "$1")" -v b="$2" -v n="$N" 'BEGIN { printf "%.2f", (a - b) / n }'
}

echo "N=$N iterations per run, $TAG_CC $CFLAGS $TAGFLAGS, callgrind (valgrind $(valgrind --version | sed 's/valgrind-//'))"
base=$(ir "$bin" "$N" none)
echo "tag swap+restore pair:                       $(per_loop pair "$base") instructions"
echo "  same, setting one field (get, mask, or):   $(per_loop field "$base")"
echo "tagprof_tag_get() alone:                     $(per_loop get "$base")"
if [ "$VERBOSE" = -v ]; then
	objdump -d --no-show-raw-insn "$bin" | awk '/<loop_(pair|field|get)>:/,/^$/'
fi
