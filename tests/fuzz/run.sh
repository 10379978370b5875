#!/usr/bin/env bash
# Runs every fuzz target (make fuzz-build) for FUZZ_SECONDS on its corpus,
# tests/fuzz/corpus/NAME, adding what it finds to $BUILD/fuzz/NAME.new (not
# to the committed corpus: a finding worth keeping is copied there by hand,
# with a unit test). Prints a line per target and a summary; exits 1 when a
# target crashed (its input is in $BUILD/fuzz/crash-NAME-*).
#
#	FUZZ_SECONDS=60 [FUZZ_SEED=N] tests/fuzz/run.sh [NAME...]
#
# FUZZ_SEED fixes libFuzzer's seed (make check's short runs use one).
# FUZZ_RUNS=N ends a target after N executions instead, FUZZ_SECONDS then
# being only the limit (the long offline runs: FUZZ_RUNS=10000000).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SECS=${FUZZ_SECONDS:-60}
SEED=${FUZZ_SEED:+-seed=$FUZZ_SEED}
RUNS=${FUZZ_RUNS:+-runs=$FUZZ_RUNS}
names=("$@")
if [ ${#names[@]} = 0 ]; then
	for f in tests/fuzz/fuzz_*.c; do
		n=${f##*/fuzz_}
		names+=("${n%.c}")
	done
fi
passed=0 failed=0
for n in "${names[@]}"; do
	bin=$BUILD/fuzz/fuzz_$n
	new=$BUILD/fuzz/$n.new
	log=$BUILD/fuzz/$n.log
	mkdir -p "$new" "tests/fuzz/corpus/$n"
	# shellcheck disable=SC2086
	if "$bin" -max_total_time="$SECS" -malloc_limit_mb=512 -print_final_stats=1 $SEED $RUNS \
		-artifact_prefix="$BUILD/fuzz/crash-$n-" "$new" "tests/fuzz/corpus/$n" \
		>"$log" 2>&1; then
		execs=$(awk '/stat::number_of_executed_units:/ { print $2 }' "$log")
		cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
		took=$(awk '/stat::number_of_executed_units:/ { n = $2 } /stat::average_exec_per_sec:/ { r = $2 }
			END { if (r) printf "%d", n / r }' "$log")
		echo "PASS fuzz_$n: ${execs:-?} execs in ${took:-$SECS} s (${cov:-cov: ?})"
		passed=$((passed + 1))
	else
		echo "FAIL fuzz_$n: see $log and $BUILD/fuzz/crash-$n-*"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
