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
	"$t" >"$LOG/$name.out" 2>"$LOG/$name.err"; rc=$?
	count "$LOG/$name.out" "$name" $rc
	[ $rc -ne 0 ] && sed 's/^/    /' "$LOG/$name.err" | tail -30
done

for t in tests/e2e/*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	echo "== $name"
	timeout 600 bash "$t" >"$LOG/$name.out" 2>"$LOG/$name.err"; rc=$?
	count "$LOG/$name.out" "$name" $rc
	if [ $rc -ne 0 ] || grep -q '^FAIL ' "$LOG/$name.out"; then
		sed 's/^/    /' "$LOG/$name.err" | tail -40
	fi
done

echo
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "logs: $LOG"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
