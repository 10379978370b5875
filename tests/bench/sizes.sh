#!/usr/bin/env bash
# What tagprof sizes (issue 17) costs, on tests/workloads/libtagprof/sizework.c:
#  1. the overhead per traced call: `sizework bench N ITERS` (N calls of
#     work_1us, about 1 us each, timed by the workload with clock_gettime)
#     alone, under `tagprof sizes --func work_1us`, and the same with
#     --no-session (a uprobe plus a uretprobe instead of a uprobe session);
#     the traced ns per call minus the untraced one, median of RUNS
#     interleaved runs; beside them, where bpftrace is installed, a uprobe
#     and a uretprobe with empty programs: the kernel's own part;
#  2. the slowdown of the whole test workload (`sizework all`, its seven
#     routines and their thousands of calls): alone, under tagprof sizes
#     probing all seven, and under valgrind --tool=callgrind (the
#     instrumenting anchor; aprof itself is not packaged), interleaved in
#     one run; both the workload's own time (its "seconds=", the rounds
#     alone) and the command's wall time (start-up and attach included);
#  3. the BPF map memory of a capture of all seven: bytes_memlock summed
#     over the maps the tagprof process holds (bpftool, while it runs), and
#     whatever tagprof itself says about its maps.
# usage: sudo tests/bench/sizes.sh     (after make tests)
# env:   RUNS (default 3), N (calls in part 1, default 100000), ROUNDS
#        (rounds of `sizework all` in part 2, default 1), BUILD (default
#        build), NO_CALLGRIND=1 to leave callgrind out (it takes ~30 s)
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/bench/lib.sh
B=${BUILD:-build}
RUNS=${RUNS:-3}
N=${N:-100000}
ROUNDS=${ROUNDS:-1}
TAGPROF=$PWD/$B/tagprof
SW=$PWD/$B/workloads/sizework
TMP=$(mktemp -d)
BG=
trap '[ -z "$BG" ] || stop_pid "$BG" INT; rm -rf "$TMP"' EXIT

[ "$(id -u)" -eq 0 ] || { bench_log "needs root (BPF)"; exit 1; }
[ -x "$TAGPROF" ] && [ -x "$SW" ] ||
	{ bench_log "$TAGPROF or $SW not built (make tests)"; exit 1; }
"$TAGPROF" sizes --help >/dev/null 2>&1 || { bench_log "this tagprof has no sizes command"; exit 1; }

ALL_FUNCS=(--size arg2 --func linear_scan --func insertion_sort
	--func merge_sort --size 'arg1->8' --func binary_search
	--func str_tolower --size label:len --func str_tolower_fixed --size label:len
	--func rec_sum)

echo "kernel $(uname -r), $(nproc) CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo '?')"

# ---- 1. per call ----
BPFTRACE=$(command -v bpftrace || true)
ITERS=$("$SW" bench 2000 | sed -n 's/.* iters=\([0-9]*\).*/\1/p')
[ -n "$ITERS" ] || { bench_log "sizework bench printed no iters="; exit 1; }
# ns_per_call OUT: the workload's figure in a run's stdout.
ns_per_call() { sed -n 's/^ns_per_call=\([0-9.]*\) .*/\1/p' "$1" | tail -1; }
for r in $(seq "$RUNS"); do
	"$SW" bench "$N" "$ITERS" >"$TMP/o"
	echo "none $(ns_per_call "$TMP/o")" >>"$TMP/call"
	for mode in session pair; do
		flag=(); [ $mode = pair ] && flag=(--no-session)
		"$TAGPROF" sizes "${flag[@]}" --func work_1us --size arg1 -- "$SW" bench "$N" "$ITERS" \
			>"$TMP/o" 2>"$TMP/e" || { bench_log "tagprof sizes ($mode) failed: $(tail -3 "$TMP/e")"; exit 1; }
		echo "$mode $(ns_per_call "$TMP/o")" >>"$TMP/call"
		[ "$r" -gt 1 ] || cp "$TMP/o" "$TMP/o.$mode"
	done
	# The kernel's part: a uprobe and a uretprobe whose programs do
	# nothing (bpftrace, where installed).
	if [ -n "$BPFTRACE" ]; then
		timeout 300 "$BPFTRACE" -e "uprobe:$SW:work_1us { } uretprobe:$SW:work_1us { }" \
			-c "$SW bench $N $ITERS" >"$TMP/o" 2>/dev/null || true
		echo "empty $(ns_per_call "$TMP/o")" >>"$TMP/call"
	fi
done
med() { awk -v m="$1" '$1 == m { print $2 }' "$TMP/call" | median; }
base=$(med none)
echo
echo "1. overhead per traced call: work_1us ($ITERS spin turns), $N calls a run, median of $RUNS runs"
printf '%-34s %12s %14s\n' probes ns_per_call overhead_ns
printf '%-34s %12.1f %14s\n' "none" "$base" -
for mode in session pair ${BPFTRACE:+empty}; do
	v=$(med $mode)
	[ "$v" != - ] || { printf '%-34s %12s\n' "$mode" "(failed)"; continue; }
	label="tagprof sizes (uprobe session)"
	[ $mode = pair ] && label="tagprof sizes --no-session (pair)"
	[ $mode = empty ] && label="empty uprobe+uretprobe (bpftrace)"
	printf '%-34s %12.1f %14.1f\n' "$label" "$v" "$(awk -v a="$v" -v b="$base" 'BEGIN { print a - b }')"
done
# What tagprof said it used (a kernel without sessions falls back to the pair).
for mode in session pair; do
	echo "   $mode run's header: $(awk '$1 == "function" && $2 == "order" { print prev; exit } { prev = $0 }' "$TMP/o.$mode")"
done

# ---- 2. the whole workload ----
# secs ERR: the workload's own "seconds=" (its rounds alone).
secs() { sed -n 's/^sizework: done rounds=[0-9]* seconds=\([0-9.]*\).*/\1/p' "$1" | tail -1; }
# timed NAME CMD...: runs CMD, appends "NAME workload_s wall_s" (stderr of
# CMD, which holds the workload's truth lines, to $TMP/e).
timed() {
	local name=$1 t0 t1; shift
	t0=$(date +%s.%N)
	"$@" >"$TMP/o" 2>"$TMP/e" || { bench_log "$name failed: $(tail -3 "$TMP/e")"; exit 1; }
	t1=$(date +%s.%N)
	echo "$name $(secs "$TMP/e") $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" >>"$TMP/all"
}
MODES="native tagprof"
[ -n "${NO_CALLGRIND:-}" ] || command -v valgrind >/dev/null || { bench_log "no valgrind: callgrind left out"; NO_CALLGRIND=1; }
[ -n "${NO_CALLGRIND:-}" ] || MODES="$MODES callgrind"
for r in $(seq "$RUNS"); do
	timed native "$SW" all "$ROUNDS"
	timed tagprof "$TAGPROF" sizes "${ALL_FUNCS[@]}" -o "$TMP/all.csv" -- "$SW" all "$ROUNDS"
	[ "$r" -gt 1 ] || { cp "$TMP/o" "$TMP/all.summary"; cp "$TMP/e" "$TMP/all.truth"; }
	[ -n "${NO_CALLGRIND:-}" ] ||
		timed callgrind valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" "$SW" all "$ROUNDS"
done
calls=$(awk '/^sizework: truth/ { for (i = 4; i <= NF; i++) if ($i ~ /^calls=/) { sub("calls=", "", $i); n += $i } } END { print n + 0 }' "$TMP/all.truth")
echo
echo "2. sizework all $ROUNDS ($calls calls of the seven routines), median of $RUNS interleaved runs"
printf '%-28s %11s %9s %10s %9s\n' run workload_s slowdown wall_s slowdown
nw=$(awk '$1 == "native" { print $2 }' "$TMP/all" | median)
nt=$(awk '$1 == "native" { print $3 }' "$TMP/all" | median)
for m in $MODES; do
	w=$(awk -v m="$m" '$1 == m { print $2 }' "$TMP/all" | median)
	t=$(awk -v m="$m" '$1 == m { print $3 }' "$TMP/all" | median)
	label=$m
	[ $m = tagprof ] && label="tagprof sizes (7 functions)"
	[ $m = callgrind ] && label="valgrind --tool=callgrind"
	printf '%-28s %11.3f %8.1fx %10.3f %8.1fx\n' "$label" "$w" \
		"$(awk -v a="$w" -v b="$nw" 'BEGIN { print b ? a / b : 0 }')" "$t" \
		"$(awk -v a="$t" -v b="$nt" 'BEGIN { print b ? a / b : 0 }')"
done
echo "   tagprof's summary of the first run:"
sed 's/^/   | /' "$TMP/all.summary"

# ---- 3. map memory ----
# map_bytes PID: "bytes count names" over the BPF maps PID holds (its fds).
map_bytes() {
	local id ids=()
	mapfile -t ids < <(grep -h '^map_id:' /proc/"$1"/fdinfo/* 2>/dev/null |
		awk '{ print $2 }' | sort -un)
	[ ${#ids[@]} -gt 0 ] || return 1
	for id in "${ids[@]}"; do
		bpftool map show id "$id" -j 2>/dev/null || true
		echo
	done | awk '
		/"bytes_memlock"/ {
			n = match($0, /"bytes_memlock":[0-9]+/)
			b = substr($0, RSTART + 16, RLENGTH - 16)
			name = "?"
			if (match($0, /"name":"[^"]*"/)) name = substr($0, RSTART + 8, RLENGTH - 9)
			sum += b; cnt++; names = names " " name "=" int(b / 1024) "K"
		}
		END { if (!cnt) exit 1; print sum, cnt, names }'
}
"$TAGPROF" sizes "${ALL_FUNCS[@]}" -o "$TMP/mem.csv" -- "$SW" loop 4 >"$TMP/mem.out" 2>"$TMP/mem.err" &
BG=$!
sleep 2.5
# tagprof may have forked the command: the maps are the profiler's, the
# process whose fds hold them (BG itself, or one of its threads).
read -r bytes cnt names < <(map_bytes "$BG" || echo "0 0 -")
wait "$BG" || bench_log "the memory run exited $?: $(tail -2 "$TMP/mem.err")"
BG=
echo
echo "3. BPF maps of tagprof sizes, 7 functions: $cnt maps, $(awk -v b="$bytes" 'BEGIN { printf "%.1f MiB", b / 1048576 }') (bytes_memlock, bpftool)"
echo "   per map:$names"
said=$(grep -hiE 'map|memory|MiB|KiB' "$TMP/mem.out" "$TMP/mem.err" | grep -v '^sizework:' | head -3 || true)
echo "   tagprof says: ${said:-nothing about its maps}"
echo "   CSV lines (tuples + header): $(grep -vc '^#' "$TMP/mem.csv" 2>/dev/null || true)"
