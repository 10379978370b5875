#!/usr/bin/env bash
# The cost of reserving the tag register itself: the same kernels
# (tests/bench/reserved_register.c: SHA-256 compression, a hash-join probe
# with aggregation, CRC-32 by slicing-by-8) built by GCC -O2 with and without -ffixed-r15 (x28 on
# arm64). No tag is written; the compiler just has one register fewer.
#   - wall time of the kernel: RUNS runs of each build, interleaved, the
#     median of each and their ratio (fixed/normal);
#   - instructions of the kernel by callgrind (deterministic), and ratio.
# Not part of `make check`.
#
#	tests/bench/reserved_register.sh [SCALE] [RUNS]   (SCALE 1: ~0.25-0.4 s a kernel run)
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SCALE=${1:-6}
RUNS=${2:-5}
CG_SCALE=${CG_SCALE:-0.05}
TAG_CC=${TAG_CC:-gcc}
CFLAGS=${CFLAGS:--O2}
case $(uname -m) in
aarch64) REG=x28 ;;
*) REG=r15 ;;
esac
OUT=$BUILD/bench
mkdir -p "$OUT"
rm -f "$OUT/rr_ratios"
src=tests/bench/reserved_register.c
# shellcheck disable=SC2086
$TAG_CC $CFLAGS -Wall -Wextra -o "$OUT/rr_normal" $src -lm
# shellcheck disable=SC2086
$TAG_CC $CFLAGS -Wall -Wextra -ffixed-$REG -o "$OUT/rr_fixed" $src -lm

# Both builds on the same CPU (the last one; PIN_CPU= to choose, or none).
PIN_CPU=${PIN_CPU-$(($(nproc) - 1))}
PIN=()
if [ -n "$PIN_CPU" ] && command -v taskset >/dev/null; then
	PIN=(taskset -c "$PIN_CPU")
fi

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# Instructions of the kernel function (and what it calls) in one run.
ir() {	# bin kernel
	local f=$OUT/callgrind.out.$$
	valgrind --tool=callgrind --callgrind-out-file="$f" \
		--toggle-collect="$2_kernel" "$1" "$2" "$CG_SCALE" >/dev/null 2>&1
	awk '/^totals:/ { print $2 }' "$f"
	rm -f "$f"
}

echo "$($TAG_CC --version | head -1), $CFLAGS vs $CFLAGS -ffixed-$REG; $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')"
echo "time: median of $RUNS interleaved runs at SCALE=$SCALE${PIN:+ on CPU $PIN_CPU}; instructions: callgrind at SCALE=$CG_SCALE"
for k in ${KERNELS:-sha256 hashjoin crc32}; do
	: >"$OUT/rr_$k.normal"
	: >"$OUT/rr_$k.fixed"
	for _ in $(seq "$RUNS"); do
		for b in normal fixed; do
			read -r secs sum < <("${PIN[@]}" "$OUT/rr_$b" "$k" "$SCALE")
			echo "$secs" >>"$OUT/rr_$k.$b"
			echo "$sum" >>"$OUT/rr_$k.sums"
		done
	done
	if [ "$(sort -u "$OUT/rr_$k.sums" | wc -l)" -ne 1 ]; then
		echo "$k: the two builds disagree on the result" >&2
		exit 1
	fi
	rm -f "$OUT/rr_$k.sums"
	tn=$(median <"$OUT/rr_$k.normal")
	tf=$(median <"$OUT/rr_$k.fixed")
	ir_n=$(ir "$OUT/rr_normal" "$k")
	ir_f=$(ir "$OUT/rr_fixed" "$k")
	awk -v ratios="$OUT/rr_ratios" -v k="$k" -v tn="$tn" -v tf="$tf" -v in_="$ir_n" -v if_="$ir_f" \
		-v an="$(tr '\n' ' ' <"$OUT/rr_$k.normal")" -v af="$(tr '\n' ' ' <"$OUT/rr_$k.fixed")" 'BEGIN {
		printf "%-8s time: normal %.3f s, fixed %.3f s, ratio %.4f (%+.2f%%)\n", k, tn, tf, tf / tn, (tf / tn - 1) * 100
		printf "%-8s   runs normal: %s\n%-8s   runs fixed:  %s\n", k, an, k, af
		printf "%-8s instructions: normal %d, fixed %d, ratio %.4f (%+.2f%%)\n", k, in_, if_, if_ / in_, (if_ / in_ - 1) * 100
		printf "%s %s\n", tf / tn, if_ / in_ >> ratios
	}'
done
awk '{ t += log($1); i += log($2); n++ } END {
	printf "all     geometric mean ratio: time %.4f (%+.2f%%), instructions %.4f (%+.2f%%)\n",
		exp(t / n), (exp(t / n) - 1) * 100, exp(i / n), (exp(i / n) - 1) * 100 }' "$OUT/rr_ratios"
rm -f "$OUT/rr_ratios"
