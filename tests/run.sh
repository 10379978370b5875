#!/usr/bin/env bash
# Runs every test: unit binaries, then end-to-end scripts. Each test prints
# "PASS name", "FAIL name: why" or "SKIP name: why"; this counts them and
# ends with the summary line "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
export BUILD=${BUILD:-build}
export TAGPROF=$PWD/$BUILD/tagprof
export WORKLOADS=$PWD/$BUILD/workloads
LOG=$(mktemp -d /tmp/tagprof-tests.XXXXXX)
pass=0 fail=0 skip=0 failed=()

# A sanitized build (make check SANITIZE=address,undefined): the sanitizer
# runtimes write their reports to files, one per process, under $SAN_LOG
# named by the test that ran it (sanitize_options); any such file is a
# FAIL of that test (san_reports), named again in the summary. Reports go
# to files, not stderr, as tests read the agent's stderr and kill processes
# whose stderr nobody reads. SANITIZE is exported: a test whose timing
# cannot hold under ASan's slowdown (2-3x) widens it and says so.
export SANITIZE=${SANITIZE:-}
SAN_LOG=$LOG/sanitizer
san_files=()
sanitize_options() {	# the runtime options for test $1
	[ -n "$SANITIZE" ] || return 0
	mkdir -p "$SAN_LOG"
	# halt_on_error: the first finding ends the process (UBSan's checks
	# are built -fno-sanitize-recover, so they abort anyway); leaks are
	# checked at exit, our own allocations included; the suppressions
	# file names only libraries we do not own. allocator_may_return_null:
	# an impossible malloc returns NULL, as without ASan; the agent counts
	# that failure (test_util asks for one on purpose).
	export ASAN_OPTIONS="log_path=$SAN_LOG/$1.asan:halt_on_error=1:detect_leaks=1:allocator_may_return_null=1:print_summary=1"
	export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
	# No log_path here: GCC's libubsan beside libasan ignores it and
	# libasan would open the same file, truncating the report's start
	# (tests/sanitize/ubsan_log.c sets libubsan's path). clang's UBSan
	# (the workloads) writes to the ASan file.
	export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:print_summary=1"
	export TAGPROF_UBSAN_LOG=$SAN_LOG/$1.ubsan
}
san_reports() {	# FAIL lines for test $1's report files, if any
	local f n=0
	[ -n "$SANITIZE" ] || return 0
	for f in "$SAN_LOG/$1".asan.* "$SAN_LOG/$1".ubsan.*; do
		[ -f "$f" ] || continue
		# A warning alone (ASan's "failed to allocate" when a test
		# asks for an impossible size) is no finding: shown, not
		# counted.
		if ! grep -qE 'ERROR: |runtime error: |SUMMARY: ' "$f"; then
			echo "    sanitizer note $f: $(head -c 300 "$f" | tr '\n' ' ')"
			continue
		fi
		echo "FAIL $1: sanitizer report $f: $(grep -m1 -E 'ERROR: |runtime error: |SUMMARY: ' "$f")"
		sed 's/^/    /' "$f" | head -30
		san_files+=("$f"); n=$((n + 1))
	done
	if [ "$n" -gt 0 ]; then
		fail=$((fail + n))
		[[ " ${failed[*]} " == *" $1 "* ]] || failed+=("$1")
	fi
}

count() {   # count the PASS/FAIL/SKIP lines of one test's output
	local out=$1 name=$2 rc=$3
	local p f s
	p=$(grep -c '^PASS ' "$out"); f=$(grep -c '^FAIL ' "$out"); s=$(grep -c '^SKIP ' "$out")
	grep -E '^(PASS|FAIL|SKIP) ' "$out"
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL $name: exited $rc without a FAIL line"; f=$((f + 1))
	fi
	if [ $((p + f + s)) -eq 0 ]; then
		echo "FAIL $name: reported no result"; f=1
	fi
	[ "$f" -gt 0 ] && failed+=("$name")
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
}

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	echo "== $name"
	sanitize_options "$name"
	"$t" >"$LOG/$name.out" 2>"$LOG/$name.err"; rc=$?
	count "$LOG/$name.out" "$name" $rc
	[ $rc -ne 0 ] && sed 's/^/    /' "$LOG/$name.err" | tail -30
	san_reports "$name"
done

# E2E="NAME ..." runs only those end-to-end scripts (tests/e2e/NAME.sh);
# the unit tests always run. .ci/run's sanitized subset uses it.
for t in tests/e2e/*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	if [ -n "${E2E:-}" ] && [[ " $E2E " != *" $name "* ]]; then
		continue
	fi
	echo "== $name"
	sanitize_options "$name"
	timeout 600 bash "$t" >"$LOG/$name.out" 2>"$LOG/$name.err"; rc=$?
	count "$LOG/$name.out" "$name" $rc
	if [ $rc -ne 0 ] || grep -q '^FAIL ' "$LOG/$name.out"; then
		sed 's/^/    /' "$LOG/$name.err" | tail -40
	fi
	san_reports "$name"
done

echo
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
[ ${#san_files[@]} -gt 0 ] && printf 'sanitizer report: %s\n' "${san_files[@]}"
echo "logs: $LOG"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
