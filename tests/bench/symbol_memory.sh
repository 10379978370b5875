#!/usr/bin/env bash
# Symbolizer memory with many distinct binaries: builds N variants of a small
# program (distinct build IDs, so nothing is shared by the build-ID cache),
# runs them all while `tagprof record` samples the system, and prints the
# recorder's peak RSS next to a run with one binary.
# usage: tests/bench/symbol_memory.sh [N]   (root; after `make`)
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-50}
T=${BUILD:-build}/tagprof
TMP=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$TMP"' EXIT

cat > "$TMP/v.c" <<'C'
#include <stdlib.h>
#include <time.h>
#define CAT(a, b) a##b
#define NAME(a, b) CAT(a, b)
static volatile unsigned long sink;
__attribute__((noinline)) void NAME(spin_variant_, V)(double s)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			sink = sink * 6364136223846793005ul + V;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < s);
}
int main(int c, char **v) { NAME(spin_variant_, V)(c > 1 ? atof(v[1]) : 5); return 0; }
C
for i in $(seq "$N"); do
	cc -O2 -g -fno-omit-frame-pointer -DV="$i" -o "$TMP/v$i" "$TMP/v.c"
done

peak() {   # LABEL BINARIES...: record 6 s while they run, print peak RSS
	local label=$1; shift
	for b in "$@"; do "$b" 8 & done
	sleep 0.5
	/usr/bin/time -f "%M" -o "$TMP/rss" "$T" record -a -F 99 -d 6 \
		-o "$TMP/p.pb.gz" 2>"$TMP/rec.err"
	wait
	printf "%-22s peak RSS %6.1f MB, %s\n" "$label" "$(awk '{ print $1 / 1024 }' "$TMP/rss")" \
		"$(grep -o '[0-9]* processes' "$TMP/rec.err" | head -1)"
}

echo "tagprof record memory, $N distinct binaries vs 1 ($(nproc) CPUs)"
peak "1 binary" "$TMP/v1"
peak "$N distinct binaries" $(for i in $(seq "$N"); do echo "$TMP/v$i"; done)
names=$(go tool pprof -top -nodecount=1000 "$TMP/p.pb.gz" 2>/dev/null | grep -c 'spin_variant_' || true)
echo "distinct spin_variant_ functions named in the profile: $names of $N"
