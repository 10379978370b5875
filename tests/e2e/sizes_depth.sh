#!/usr/bin/env bash
# tagprof sizes' shadow stack and cost counter, over
# tests/workloads/deepcalls.c: a recursion 100 deep (the 36 innermost
# levels are past the 64 frames a thread keeps, as past the kernel's own
# limit on nested return probes: not measured, counted), a longjmp out of
# 8 nested calls (their frames are dropped when the outer call returns,
# which is still measured), in a uprobe session and with --no-session; and
# --cost with a software counter (cpu-clock, the path a hardware counter
# such as instructions takes), and instructions where there is no PMU.
. "$(dirname "$0")/../lib.sh"
CHECKS="sizes_depth_session sizes_depth_pair sizes_longjmp_session
	sizes_longjmp_pair sizes_cost_counter sizes_cost_no_pmu"
# shellcheck disable=SC2086
need_bpf $CHECKS
DC=$WORKLOADS/deepcalls

sizes() { timeout -s KILL 60 "$TAGPROF" sizes "$@"; }
# rows CSV FUNC: "size calls" of FUNC's tuples.
rows() { awk -F, -v f="$2" '!/^#/ && $1 == f { print $2, $3 }' "$1"; }

# depth NAME MODE...: nest(100) 5 times: levels 100..37 measured (sizes
# 37..100, 5 calls each), 5 x 36 skipped and said so.
depth() {
	local name=$1; shift
	sizes "$@" --func nest -o "$TMP/$name.csv" -- "$DC" depth 100 5 \
		>"$TMP/$name.out" 2>"$TMP/$name.err"
	local rc=$? n lo hi bad skipped
	n=$(rows "$TMP/$name.csv" nest | wc -l)
	lo=$(rows "$TMP/$name.csv" nest | sort -n | head -1 | cut -d' ' -f1)
	hi=$(rows "$TMP/$name.csv" nest | sort -n | tail -1 | cut -d' ' -f1)
	bad=$(rows "$TMP/$name.csv" nest | awk '$2 != 5' | wc -l)
	skipped=$(sed -n 's/.*nest: \([0-9]*\) calls not measured: nested deeper than 64.*/\1/p' "$TMP/$name.err")
	if [ $rc -eq 0 ] && [ "$n" = 64 ] && [ "$lo" = 37 ] && [ "$hi" = 100 ] &&
		[ "$bad" = 0 ] && [ "$skipped" = 180 ] &&
		grep -q "180 calls skipped" "$TMP/$name.out"; then
		pass "$name"
	else
		fail "$name" "rc $rc, $n tuples ($lo..$hi, $bad without 5 calls), skipped '$skipped' (want 64, 37..100, 0, 180): $(head -c 600 "$TMP/$name.err")"
	fi
}
depth sizes_depth_session
depth sizes_depth_pair --no-session

# longjmp NAME MODE...: 20 jump_top(8), each longjmp'ing out of 8
# jump_down: jump_top measured 20 times, jump_down never, 160 frames said
# dropped.
longjmp() {
	local name=$1; shift
	sizes "$@" --func jump_top --func jump_down -o "$TMP/$name.csv" -- \
		"$DC" jump 20 >"$TMP/$name.out" 2>"$TMP/$name.err"
	local rc=$? top down
	top=$(rows "$TMP/$name.csv" jump_top | awk '{ n += $2 } END { print n + 0 }')
	down=$(rows "$TMP/$name.csv" jump_down | wc -l)
	if [ $rc -eq 0 ] && [ "$top" = 20 ] && [ "$down" = 0 ] &&
		grep -q "160 entries without a return" "$TMP/$name.err"; then
		pass "$name"
	else
		fail "$name" "rc $rc, jump_top $top calls, jump_down $down tuples (want 20, 0, 160 entries without a return): $(head -c 600 "$TMP/$name.err")"
	fi
}
longjmp sizes_longjmp_session
longjmp sizes_longjmp_pair --no-session

# A counter as the cost: cpu-clock counts ns of CPU time, so a level's
# cost grows with its size as it does in ns, and the header names it.
sizes --cost cpu-clock --func nest -o "$TMP/c.csv" -- "$DC" depth 60 5 \
	>"$TMP/c.out" 2>"$TMP/c.err"
rc=$?
# The least cost of a size (a level's first call pays for cold caches).
small=$(awk -F, '!/^#/ && $1 == "nest" && $2 == 2 { print $5 }' "$TMP/c.csv")
big=$(awk -F, '!/^#/ && $1 == "nest" && $2 == 60 { print $5 }' "$TMP/c.csv")
if [ $rc -eq 0 ] && grep -q "cost in cpu-clock" "$TMP/c.out" &&
	grep -q "^# cost_unit: cpu-clock" "$TMP/c.csv" &&
	awk -v s="${small:-0}" -v b="${big:-0}" 'BEGIN { exit !(s > 0 && b > 10 * s) }'; then
	pass sizes_cost_counter
else
	fail sizes_cost_counter "rc $rc, least cost at size 2: '$small', at 60: '$big' (want > 10x): $(head -c 400 "$TMP/c.err") $(head -3 "$TMP/c.out")"
fi

# instructions: a hardware counter. Without a PMU, a clear refusal.
if ls /sys/bus/event_source/devices | grep -qx 'cpu\|cpu_core'; then
	skip sizes_cost_no_pmu "this machine has a hardware PMU (cpu): the refusal is not reachable"
else
	sizes --cost instructions --func nest -- "$DC" depth 10 1 >"$TMP/i.out" 2>"$TMP/i.err"
	rc=$?
	if [ $rc -ne 0 ] && grep -q "cost instructions: the counter cannot be opened" "$TMP/i.err" &&
		[ "$(wc -l <"$TMP/i.err")" -le 2 ]; then
		pass sizes_cost_no_pmu
	else
		fail sizes_cost_no_pmu "rc $rc: $(cat "$TMP/i.err")"
	fi
fi
