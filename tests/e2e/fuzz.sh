#!/usr/bin/env bash
# Every fuzz target of tests/fuzz (issue 15) for FUZZ_CHECK_SECONDS (10)
# from its committed corpus, seed fixed: the corpus's inputs, known crashes
# among them, and what 10 s of mutation finds. `make fuzz` runs them longer.
. "$(dirname "$0")/../lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
names=()
for f in "$HERE"/tests/fuzz/fuzz_*.c; do
	n=${f##*/fuzz_}
	names+=("fuzz_${n%.c}")
done
# The targets are ASan and UBSan builds already (make fuzz-build), with
# their own clang objects: the sanitized make check would only run them again.
if [ -n "${SANITIZE:-}" ]; then
	for n in "${names[@]}"; do skip "$n" "SANITIZE build: the fuzz targets are sanitized builds already, run by the plain make check"; done
	exit 0
fi
if ! printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' |
	clang -fsanitize=fuzzer -x c - -o "$TMP/probe" 2>/dev/null; then
	for n in "${names[@]}"; do skip "$n" "clang cannot link libFuzzer (libclang-rt-14-dev missing)"; done
	exit 0
fi
if ! make -s -C "$HERE" BUILD="$BUILD" fuzz-build >"$TMP/build.log" 2>&1; then
	for n in "${names[@]}"; do fail "$n" "make fuzz-build failed: $(tail -3 "$TMP/build.log")"; done
	exit 0
fi
cd "$HERE" && FUZZ_SECONDS=${FUZZ_CHECK_SECONDS:-10} FUZZ_SEED=1 BUILD=$BUILD \
	bash tests/fuzz/run.sh | grep -E '^(PASS|FAIL) '
