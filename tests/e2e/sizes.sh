#!/usr/bin/env bash
# Input-sensitive profiles (issue 17): tagprof sizes over
# tests/workloads/libtagprof/sizework.c, whose routines have known
# complexities and each run with 24 log-spaced sizes over two decades or
# more, after one call of size 0 (the workload prints, on stderr,
# "sizework: truth FUNC calls=N sizes=K min=0 min1=A max=B spec=SPEC
# class=C" for each):
#	linear_scan n, insertion_sort n^2 (reversed input), merge_sort
#	n log n (size the field arg1->8), binary_search log n,
#	str_tolower n^2 (strlen in the loop) and str_tolower_fixed n (size
#	the thread label len), rec_sum n (recursive: its halves are calls
#	of their own, sizes down to 65).
# Checked: one capture of all seven gives each its class (n^2 never
# n log n), ranked worst first, the tuples of the three size forms against the workload's
# truth (sizes, calls), the recursion's tuples, the CSV's invariants, the
# HTML (an <svg> per function), report sizes on the CSV and the JSON giving
# the capture's classes, --assert, the rate guard, --no-session, the
# refusal to classify too few sizes, -p with -d, and bad input: a symbol
# that is not there, a stripped binary, a function inlined everywhere, a
# field offset that faults, a process that exits in the middle.
. "$(dirname "$0")/../lib.sh"
CHECKS="sizes_capture sizes_order_linear_scan sizes_order_insertion_sort
	sizes_order_merge_sort sizes_order_binary_search sizes_order_str_tolower
	sizes_order_str_tolower_fixed sizes_order_rec_sum sizes_ranked sizes_summary_header
	sizes_csv_format sizes_calls sizes_form_arg sizes_form_field sizes_form_label
	sizes_recursive sizes_html sizes_html_renders sizes_report_csv sizes_report_json
	sizes_assert_pass sizes_assert_fail sizes_report_assert sizes_no_session
	sizes_rate_guard sizes_refuses sizes_pid sizes_unknown_symbol sizes_stripped
	sizes_inlined sizes_field_fault sizes_exit_mid"
# shellcheck disable=SC2086
need_bpf $CHECKS

SW=$WORKLOADS/sizework
FUNCS="linear_scan insertion_sort merge_sort binary_search str_tolower str_tolower_fixed rec_sum"
declare -A WANT=([linear_scan]=n [insertion_sort]=n^2 [merge_sort]=n_log_n
	[binary_search]=log_n [str_tolower]=n^2 [str_tolower_fixed]=n [rec_sum]=n)

if ! "$TAGPROF" sizes --help >/dev/null 2>&1; then
	for n in $CHECKS; do skip "$n" "tagprof sizes does not exist in this build"; done
	exit 0
fi

# sizes ARGS...: tagprof sizes, killed after 60 s (a hang fails, it does
# not stop the script).
sizes() { timeout -s KILL 60 "$TAGPROF" sizes "$@"; }

# summary FILE: "FUNC ORDER" for each function line of a summary (the
# lines after the header "function order class ...", up to a blank line
# or the end).
summary() {
	awk '$1 == "function" && $2 == "order" { on = 1; next }
		on && /^$/ { on = 0 }
		on && /^[^ \t]/ && NF >= 2 { print $1, $2 }' "$1"
}
# order FILE FUNC: FUNC's order in the summary FILE ("" if none).
order() { summary "$1" | awk -v f="$2" '$1 == f { print $2; exit }'; }
# truth FILE FUNC KEY: KEY=value of FUNC's truth line in the workload's
# stderr FILE.
truth() {
	awk -v f="$2" -v k="$3" '$1 == "sizework:" && $2 == "truth" && $3 == f {
		for (i = 4; i <= NF; i++) if (index($i, k "=") == 1) print substr($i, length(k) + 2) }' "$1"
}
# tuples CSV FUNC: "size calls size_sum min max sum" rows of FUNC.
tuples() {
	awk -F, -v f="$2" '/^#/ { next } $1 == "function" { h = 1; next }
		h && $1 == f { print $2, $3, $4, $5, $6, $7 }' "$1"
}

# ---- the capture of every routine: the default size spec (arg2) for the
# routines before their own --size, the field for merge_sort, the label for
# the two str_tolower.
capture_all() {
	sizes --size arg2 --func linear_scan --func insertion_sort \
		--func merge_sort --size 'arg1->8' --func binary_search \
		--func str_tolower --size label:len --func str_tolower_fixed --size label:len \
		--func rec_sum -o "$TMP/all.csv" --html "$TMP/all.html" -- "$SW" all \
		>"$TMP/all.out" 2>"$TMP/all.err"
}
capture_all
rc=$?
captured() {
	local n
	[ $rc -eq 0 ] || { echo "exit $rc: $(tail -5 "$TMP/all.err")"; return 1; }
	grep -q '^sizework: done' "$TMP/all.err" ||
		{ echo "the workload did not finish: $(tail -3 "$TMP/all.err")"; return 1; }
	n=$(summary "$TMP/all.out" | wc -l)
	[ "$n" -eq 7 ] || { echo "$n function lines in the summary, want 7: $(cat "$TMP/all.out")"; return 1; }
	[ -s "$TMP/all.csv" ] || { echo "no CSV written"; return 1; }
}
check sizes_capture captured

# Each routine's class; n^2 must never be taken for n log n. On a miss,
# the function's summary line and any "not classified" line.
for f in $FUNCS; do
	got=$(order "$TMP/all.out" "$f")
	if [ "$got" = "${WANT[$f]}" ]; then
		pass "sizes_order_$f"
	else
		fail "sizes_order_$f" "order '${got}', want ${WANT[$f]}: $(grep -E "^$f |^ +$f:" "$TMP/all.out" | tr -s ' ' | tr '\n' '|')"
	fi
done

# The summary ranks the functions by their growth, the worst first
# (unclassified ones, "-", anywhere).
ranked() {
	summary "$TMP/all.out" | awk '
		BEGIN { r["1"] = 0; r["log_n"] = 1; r["n"] = 2; r["n_log_n"] = 3; r["n^2"] = 4; r["n^3"] = 5 }
		{ s = s " " $1 "=" $2 }
		$2 in r { if (seen && r[$2] > last) bad = 1; last = r[$2]; seen = 1 }
		END { if (bad) { print "not worst first:" s; exit 1 } }'
}
check sizes_ranked ranked

# The line before the header names the cost unit, the probe mode and the
# rate guard.
header() {
	local h
	h=$(awk '$1 == "function" && $2 == "order" { print prev; exit } { prev = $0 }' "$TMP/all.out")
	echo "$h" | grep -qiE 'ns|nanosec|instructions' &&
		echo "$h" | grep -qiE 'session|uretprobe' &&
		echo "$h" | grep -qiE 'rate|sampl|every call|calls/s|guard' ||
		{ echo "the line before the header: '$h'"; return 1; }
}
check sizes_summary_header header

# The CSV: "# key: value" comments, then the header, then rows whose
# numbers hold together: calls > 0, min <= max, calls x min <= sum <=
# calls x max, the mean size size_sum/calls in the tuple's bucket (exact up
# to 1024: equal to size), sumsq >= sum^2/calls (Cauchy-Schwarz).
csv_format() {
	py "$TMP/all.csv" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
i = 0
while i < len(lines) and lines[i].startswith("#"):
    if not lines[i].startswith("# ") or ": " not in lines[i]:
        sys.exit("comment line %r is not '# key: value'" % lines[i])
    i += 1
if i == 0:
    sys.exit("no '# key: value' lines before the header")
if i >= len(lines) or lines[i] != "function,size,calls,size_sum,min,max,sum,sumsq":
    sys.exit("header %r" % (lines[i] if i < len(lines) else None))
rows = 0
for l in lines[i + 1:]:
    w = l.split(",")
    if len(w) != 8:
        sys.exit("row %r: %d fields" % (l, len(w)))
    size, calls, ssum, mn, mx, s = (int(x) for x in w[1:7])
    sq = float(w[7])
    mean = ssum / calls if calls else -1
    bad = []
    if calls <= 0: bad.append("calls <= 0")
    if mn > mx: bad.append("min > max")
    if not calls * mn <= s <= calls * mx: bad.append("sum outside calls x [min, max]")
    # exact sizes below 1024; from 1024 on, buckets of 1/16 of a power of two
    if size < 1024 and ssum != size * calls: bad.append("size_sum != size x calls (exact size)")
    if size >= 1024 and not size <= mean < size * (1 + 1 / 16) + 1: bad.append("mean size outside the bucket")
    if sq < s * s / calls * (1 - 1e-9): bad.append("sumsq < sum^2/calls")
    if bad:
        sys.exit("row %r: %s" % (l, ", ".join(bad)))
    rows += 1
if rows < 7 * 20:
    sys.exit("%d rows" % rows)
PY
}
check sizes_csv_format csv_format

# Every call was measured or counted (no rate guard asked for, the command
# run under tagprof from its start): the CSV's calls per function are the
# workload's, but for the label-sized functions, whose calls before
# tagprof knew the process's label keys are lost as tagprof says ("N calls
# not measured: the thread had no numeric label"; the workload's size-0
# warm-up calls, made as soon as the keys are published, are such).
calls() {
	local f want got bad="" lost said
	for f in $FUNCS; do
		want=$(truth "$TMP/all.err" "$f" calls)
		got=$(tuples "$TMP/all.csv" "$f" | awk '{ n += $2 } END { print n + 0 }')
		case $f in
		str_tolower*) lost=$((${lost:-0} + ${want:-0} - got)) ;;
		*) [ "$got" = "$want" ] || bad="$bad $f: $got calls in the CSV, the workload made ${want:-?};" ;;
		esac
	done
	said=$(sed -n 's/.* \([0-9]*\) calls not measured: the thread had no numeric label.*/\1/p' "$TMP/all.err" | head -1)
	[ "$lost" = "${said:-0}" ] ||
		bad="$bad the label-sized functions lost $lost calls, tagprof counts ${said:-none};"
	[ -z "$bad" ] || { echo "$bad"; return 1; }
}
check sizes_calls calls

# The three size forms: each tuple's sizes are the workload's. Log-spaced
# sizes fall each in a bucket of its own, so the tuples of sizes > 0 (the
# size-0 warm-up call may have been lost, see calls) are as many as the
# workload's, the first is the smallest size and the last one's mean size
# is the largest.
form() {
	local f=$1 n lo hi wn wlo whi
	read -r n lo hi < <(tuples "$TMP/all.csv" "$f" |
		awk '$1 > 0 { if (!n++) lo = $1; hi = $3 / $2 } END { printf "%d %d %.0f\n", n, lo, hi }')
	wn=$(truth "$TMP/all.err" "$f" sizes) wlo=$(truth "$TMP/all.err" "$f" min1)
	whi=$(truth "$TMP/all.err" "$f" max)
	[ "$(truth "$TMP/all.err" "$f" min)" = 0 ] && wn=$((wn - 1))
	[ "$n" = "$wn" ] && [ "$lo" = "$wlo" ] && [ "$hi" = "$whi" ] && [ "$n" -ge 20 ] ||
		{ echo "$f ($(truth "$TMP/all.err" "$f" spec)): $n tuples of sizes > 0, $lo..$hi; the workload: $wn sizes, $wlo..$whi"; return 1; }
}
check sizes_form_arg form linear_scan
check sizes_form_field form merge_sort
check sizes_form_label form str_tolower

# rec_sum: each call of its recursion is a tuple of its own size, so the
# 48 top-level calls (24 sizes, 200..10000) come with many more tuples,
# sizes below the smallest top-level one down to the leaves (65..128), and
# many more calls.
recursive() {
	local n below calls top=$((24 * 2))
	read -r n below calls < <(tuples "$TMP/all.csv" rec_sum |
		awk '{ n++; c += $2 } $1 > 0 && $1 < 200 { b++ } END { print n + 0, b + 0, c + 0 }')
	[ "$n" -ge 48 ] && [ "$below" -ge 10 ] && [ "$calls" -ge $((4 * top)) ] ||
		{ echo "rec_sum: $n tuples, $below of sizes 1..199, $calls calls for $top top-level calls (want >= 48 tuples, >= 10 below 200, >= $((4 * top)) calls)"; return 1; }
}
check sizes_recursive recursive

# The page: one <svg> per function, each function named.
html() {
	local n f
	[ -s "$TMP/all.html" ] || { echo "no HTML written"; return 1; }
	n=$(grep -o '<svg' "$TMP/all.html" | wc -l)
	[ "$n" -eq 7 ] || { echo "$n <svg> elements for 7 functions"; return 1; }
	for f in $FUNCS; do
		grep -q "$f" "$TMP/all.html" || { echo "the page does not name $f"; return 1; }
	done
}
check sizes_html html

# The page in headless Chromium: it renders its SVGs, starts no network
# request, and the fitted curves (#e15759) and mean points (#4e79a7) are
# drawn, not only present in the source.
html_renders() {
	local out
	out=$(python3 "$(dirname "$0")/../browser_check.py" "$TMP/all.html" "$TMP/all.png" \
		'#e15759' '#4e79a7') || { echo "$out"; return 1; }
	echo "$out" | awk '/^svg no/ || /^request/ { bad = 1 }
		/^pixels/ && $3 < 50 { bad = 1 } END { exit bad }' ||
		{ echo "rendered: $(echo "$out" | tr '\n' ' ')"; return 1; }
}
check sizes_html_renders html_renders

# report sizes on a file gives the capture's classes.
# same_orders CAPTURE_OUT REPORT_OUT
same_orders() {
	local a b
	a=$(summary "$1" | sort) b=$(summary "$2" | sort)
	[ -n "$a" ] && [ "$a" = "$b" ] ||
		{ echo "capture: $(echo "$a" | tr '\n' ' '); report: $(echo "$b" | tr '\n' ' ')"; return 1; }
}
report_csv() {
	timeout 60 "$TAGPROF" report sizes "$TMP/all.csv" >"$TMP/rep.out" 2>"$TMP/rep.err" ||
		{ echo "report sizes exited $?: $(cat "$TMP/rep.err")"; return 1; }
	same_orders "$TMP/all.out" "$TMP/rep.out"
}
check sizes_report_csv report_csv

# ---- --assert: merge_sort is within n log n (exit 0, JSON written for
# report sizes), insertion_sort is not (exit 1); the second run without
# uprobe sessions (a uprobe and a uretprobe), which the header says.
sizes --func merge_sort --size 'arg1->8' --func insertion_sort --size arg2 \
	--assert 'merge_sort<=n log n' -o "$TMP/a.json" -- "$SW" all \
	>"$TMP/a.out" 2>"$TMP/a.err"
arc=$?
assert_pass() {
	[ $arc -eq 0 ] && [ "$(order "$TMP/a.out" merge_sort)" = n_log_n ] ||
		{ echo "exit $arc, merge_sort '$(order "$TMP/a.out" merge_sort)': $(tail -3 "$TMP/a.err")"; return 1; }
}
check sizes_assert_pass assert_pass
report_json() {
	[ -s "$TMP/a.json" ] || { echo "no JSON written"; return 1; }
	head -c 1 "$TMP/a.json" | grep -q '[{[]' || { echo "a.json does not start as JSON"; return 1; }
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$TMP/a.json" ||
		{ echo "a.json does not parse"; return 1; }
	timeout 60 "$TAGPROF" report sizes "$TMP/a.json" >"$TMP/repj.out" 2>"$TMP/repj.err" ||
		{ echo "report sizes exited $?: $(cat "$TMP/repj.err")"; return 1; }
	same_orders "$TMP/a.out" "$TMP/repj.out"
}
check sizes_report_json report_json

sizes --no-session --func insertion_sort --size arg2 \
	--assert 'insertion_sort<=n log n' -o "$TMP/b.csv" -- "$SW" all \
	>"$TMP/b.out" 2>"$TMP/b.err"
brc=$?
assert_fail() {
	[ $brc -eq 1 ] && [ "$(order "$TMP/b.out" insertion_sort)" = n^2 ] &&
		grep -q insertion_sort "$TMP/b.err" "$TMP/b.out" ||
		{ echo "exit $brc (want 1), insertion_sort '$(order "$TMP/b.out" insertion_sort)': $(tail -3 "$TMP/b.err")"; return 1; }
}
check sizes_assert_fail assert_fail
no_session() {
	grep -qi 'uretprobe' "$TMP/b.out" "$TMP/b.err" ||
		{ echo "nothing says uprobe+uretprobe: $(head -3 "$TMP/b.out")"; return 1; }
	[ "$(tuples "$TMP/b.csv" insertion_sort | awk '{ n += $2 } END { print n + 0 }')" = \
		"$(truth "$TMP/b.err" insertion_sort calls)" ] ||
		{ echo "the CSV's calls are not the workload's $(truth "$TMP/b.err" insertion_sort calls)"; return 1; }
}
check sizes_no_session no_session

# Offline, on the first capture's CSV: both asserts at once fail (exit 1),
# each alone as on the capture.
report_assert() {
	local r1 r2 r3
	timeout 60 "$TAGPROF" report sizes "$TMP/all.csv" --assert 'merge_sort<=n log n' >/dev/null 2>&1
	r1=$?
	timeout 60 "$TAGPROF" report sizes "$TMP/all.csv" --assert 'insertion_sort<=n log n' >/dev/null 2>&1
	r2=$?
	timeout 60 "$TAGPROF" report sizes "$TMP/all.csv" --assert 'merge_sort<=n log n' \
		--assert 'str_tolower<=n' >/dev/null 2>&1
	r3=$?
	[ $r1 = 0 ] && [ $r2 = 1 ] && [ $r3 = 1 ] ||
		{ echo "exits merge_sort<=n log n $r1 (want 0), insertion_sort<=n log n $r2 (want 1), both with str_tolower<=n $r3 (want 1)"; return 1; }
}
check sizes_report_assert report_assert

# ---- the rate guard: rec_sum makes thousands of calls a second; at most
# 200 a second measured, the output says it sampled ("1 call in N
# measured"), and tuples still come out, fewer calls than were made.
sizes --max-calls-per-sec 200 --func rec_sum --size arg2 -o "$TMP/rg.csv" -- "$SW" all \
	>"$TMP/rg.out" 2>"$TMP/rg.err"
rgrc=$?
rate_guard() {
	local got want
	[ $rgrc -eq 0 ] || { echo "exit $rgrc: $(tail -3 "$TMP/rg.err")"; return 1; }
	grep -qiE 'sampl|1 (call )?in [0-9]+' "$TMP/rg.out" "$TMP/rg.err" ||
		{ echo "nothing says it sampled: $(cat "$TMP/rg.out")"; return 1; }
	got=$(tuples "$TMP/rg.csv" rec_sum | awk '{ n += $2 } END { print n + 0 }')
	want=$(truth "$TMP/rg.err" rec_sum calls)
	[ "$got" -gt 0 ] && [ "$got" -lt "${want:-0}" ] ||
		{ echo "$got calls measured of ${want:-?} made"; return 1; }
}
check sizes_rate_guard rate_guard

# ---- too few sizes: work_1us is called with one size only; it is not
# classified ("-"), and a line says why.
refuses() {
	sizes --func work_1us --size arg1 -- "$SW" bench 2000 100 >"$TMP/one.out" 2>"$TMP/one.err" ||
		{ echo "exit $?: $(tail -3 "$TMP/one.err")"; return 1; }
	[ "$(order "$TMP/one.out" work_1us)" = - ] &&
		grep -qE '^ +work_1us: not classified: .+' "$TMP/one.out" ||
		{ echo "summary: $(tr '\n' '|' <"$TMP/one.out")"; return 1; }
}
check sizes_refuses refuses

# ---- -p with -d: a running process, for 1.5 s; tagprof ends on time,
# the process goes on, and what was measured is written.
pid_duration() {
	local pid t0 t1
	"$SW" loop 8 2>"$TMP/loop.err" &
	pid=$!
	sleep 0.5
	t0=$(date +%s.%N)
	sizes -p $pid -d 1.5 --func linear_scan --size arg2 -o "$TMP/p.csv" \
		>"$TMP/p.out" 2>"$TMP/p.err"
	local prc=$?
	t1=$(date +%s.%N)
	local alive=0
	kill -0 $pid 2>/dev/null && alive=1
	kill $pid 2>/dev/null; wait $pid 2>/dev/null
	[ $prc -eq 0 ] || { echo "exit $prc: $(tail -3 "$TMP/p.err")"; return 1; }
	[ $alive = 1 ] || { echo "the process did not outlive tagprof"; return 1; }
	on_time "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" 10 ||
		{ echo "-d 1.5 took $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') s"; return 1; }
	[ "$(tuples "$TMP/p.csv" linear_scan | wc -l)" -ge 20 ] ||
		{ echo "$(tuples "$TMP/p.csv" linear_scan | wc -l) linear_scan tuples"; return 1; }
}
check sizes_pid pid_duration

# ---- bad input: a non-zero exit and one line on stderr that says what is
# wrong (PATTERN, any case); the command is not run.
# refused PATTERN ARGS...: tagprof sizes ARGS so.
refused() {
	local pattern=$1 rc; shift
	sizes "$@" >"$TMP/ref.out" 2>"$TMP/ref.err"
	rc=$?
	[ $rc -ne 0 ] && [ "$(wc -l <"$TMP/ref.err")" -eq 1 ] &&
		grep -qiE -- "$pattern" "$TMP/ref.err" && ! grep -q '^sizework:' "$TMP/ref.err" ||
		{ echo "exit $rc, said: $(cat "$TMP/ref.err") (want one line matching /$pattern/, the command not run)"; return 1; }
}
check sizes_unknown_symbol refused 'no function no_such_routine in .*sizework' \
	--func no_such_routine -- "$SW" all
strip -o "$TMP/sizework_stripped" "$SW"
check sizes_stripped refused 'stripped' \
	--func "$TMP/sizework_stripped:linear_scan" --size arg2 -- "$TMP/sizework_stripped" all
check sizes_inlined refused 'spin_inlined.*inlined' \
	--func spin_inlined -- "$SW" all

# A field that faults: arg2 of linear_scan is a count, not a pointer. The
# capture goes on (exit 0); insertion_sort, probed beside it, still gets
# its class; the size faults are counted: a line of the output names the
# faults and their number, every call of linear_scan the workload made.
field_fault() {
	local n
	sizes --func linear_scan --size 'arg2->0' --func insertion_sort --size arg2 \
		-o "$TMP/ff.csv" -- "$SW" all >"$TMP/ff.out" 2>"$TMP/ff.err" ||
		{ echo "exit $?: $(tail -3 "$TMP/ff.err")"; return 1; }
	[ "$(order "$TMP/ff.out" insertion_sort)" = n^2 ] ||
		{ echo "insertion_sort '$(order "$TMP/ff.out" insertion_sort)' beside the faulting field"; return 1; }
	n=$(truth "$TMP/ff.err" linear_scan calls)
	grep -hi 'fault' "$TMP/ff.out" "$TMP/ff.err" | grep -qw "${n:-x}" ||
		{ echo "no line counts ${n:-?} size faults: $(grep -hi fault "$TMP/ff.out" "$TMP/ff.err" | tr '\n' '|')"; return 1; }
}
check sizes_field_fault field_fault

# A process that exits in the middle (of a round, and from inside a probed
# function, exit_inside, whose return never comes): tagprof -p says it
# exited, exits 0 and writes what it measured before.
exit_mid() {
	local pid prc
	"$SW" exit-mid 2 2>"$TMP/mid.werr" &
	pid=$!
	sleep 0.5
	sizes -p $pid --func linear_scan --size arg2 --func exit_inside --size arg1 \
		-o "$TMP/mid.csv" >"$TMP/mid.out" 2>"$TMP/mid.err"
	prc=$?
	wait $pid 2>/dev/null
	[ $prc -eq 0 ] || { echo "exit $prc: $(tail -3 "$TMP/mid.err")"; return 1; }
	grep -qi 'exit' "$TMP/mid.err" "$TMP/mid.out" ||
		{ echo "nothing says the process exited: $(tail -3 "$TMP/mid.err")"; return 1; }
	[ "$(tuples "$TMP/mid.csv" linear_scan | wc -l)" -ge 20 ] ||
		{ echo "$(tuples "$TMP/mid.csv" linear_scan | wc -l) linear_scan tuples written"; return 1; }
}
check sizes_exit_mid exit_mid
