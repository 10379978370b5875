#!/usr/bin/env bash
# Generated code end to end (issue 14) with tests/workloads/jitengine, a toy
# compiling query engine: x86-64 code generated at run time per operator
# (Scan#1, Filter#2, HashJoin#3 of query q1, pipeline 1), each function
# registered as a code region with levels pipeline, operator and query,
# the probe calling a shared, precompiled ht_insert() with the tag register
# set to its operator, and a jitdump naming every function with debug info
# into an IR text file. jitengine measures its operators' CPU time and keeps
# them at 50/30/20 %.
#
#  a) the operator labels give that ratio
#  b) the workers' samples are attributed to a region (>= 98%)
#  c) ht_insert is split by its caller's region and by the register tag,
#     and the two agree
#  d) JIT frames are named from the jitdump and carry the IR's file:line;
#     a jitdump from a second, independent writer (tests/jitdump_write.py)
#     names the code it describes
#  e) churn: queries compiled one after another into the same memory; no
#     sample is labelled with a query outside the time its code was live,
#     also when the agent reads the samples after the process is gone;
#     the jitdump names each sample's code as its labels do
#  f) bad inputs (a truncated jitdump, absurd sizes, a code-region table
#     scribbled over while it is read): the agent keeps running, exits 0
#     and counts what it refused
. "$(dirname "$0")/../lib.sh"
CHECKS="codegen_shares codegen_attributed codegen_shared_split codegen_jit_names
	codegen_jit_lines codegen_jitdump_second_writer codegen_churn_intervals
	codegen_churn_late codegen_churn_attributed codegen_churn_jit_names
	codegen_bad_truncated codegen_bad_sizes codegen_hostile"
# shellcheck disable=SC2086
need_bpf $CHECKS
if [ "$(uname -m)" != x86_64 ]; then
	for n in $CHECKS; do skip "$n" "the workload generates x86-64 code"; done
	exit 0
fi
JE=$WORKLOADS/jitengine
JD=$TMP/jitdump
mkdir -p "$JD"
HERE=$(cd "$(dirname "$0")/.." && pwd)
# What each check measured goes to the script's stderr (fd 3), also from
# inside check(), which takes a failing check's own output as its reason.
exec 3>&2
info() { echo "$*" >&3; }

# comment_count FILE PATTERN: the number before PATTERN in the profile's
# comments (the counters' lines), 0 when absent.
comment_count() {
	pprof "$1" -comments | grep -oE "[0-9]+ $2" | head -1 | grep -oE '^[0-9]+' || echo 0
}

# ---- the steady run: q1 on two workers for 6 s, at 999 Hz ----
"$TAGPROF" record -F 999 -o "$TMP/run.pb.gz" -- \
	"$JE" --jitdump-dir "$JD" --ir "$TMP/q1.ir" run 6 2>"$TMP/run.err"
run_rc=$?
R=$TMP/run.pb.gz
run_ok() {
	[ $run_rc = 0 ] && [ -s "$R" ] ||
		{ echo "record -- jitengine run exited $run_rc: $(tail -3 "$TMP/run.err")"; return 1; }
}

# a) Shares by the operator label, among the labelled samples: the
# workload keeps its operators' CPU times at 50/30/20 (its stderr says what
# it measured); +-3 points, the issue's bound. The counts are no binomial
# draw: each operator runs in stretches of milliseconds whose CPU time the
# workload controls, and a stretch gets its length in samples to one
# sample, so the error is small at any count (0.1-0.3 points seen, at 2500
# samples on a busy machine and at 10000 on an idle one).
shares() {
	run_ok || return 1
	local scan filter join sum ps pf pj
	scan=$(total "$R" -tagfocus='operator=^Scan#1$')
	filter=$(total "$R" -tagfocus='operator=^Filter#2$')
	join=$(total "$R" -tagfocus='operator=^HashJoin#3$')
	sum=$((scan + filter + join))
	ps=$(pct "$scan" "$sum"); pf=$(pct "$filter" "$sum"); pj=$(pct "$join" "$sum")
	info "codegen_shares: Scan#1 $ps%, Filter#2 $pf%, HashJoin#3 $pj% of $sum labelled samples; workload: $(grep -o 'worker 0.*' "$TMP/run.err")"
	[ "$sum" -ge 1000 ] && within "$ps" 47 53 && within "$pf" 27 33 &&
		within "$pj" 17 23 ||
		{ echo "Scan#1 $ps%, Filter#2 $pf%, HashJoin#3 $pj% of $sum labelled samples (want 50/30/20 +-3, >= 1000 samples)"; return 1; }
}
check codegen_shares shares

# b) The workers run generated code and ht_insert, which it calls, and
# little else (their loop, its clock reads: 0.1-0.3% seen): >= 98% of their
# samples carry the levels of a region (query=q1 comes only from the
# regions; the register tag has only the operator field).
attributed() {
	run_ok || return 1
	py "$R" <<'PY'
import sys, pprof_read
p = pprof_read.load(sys.argv[1])
n = att = 0
for s in p.samples:
    if s.labels.get("thread_name") != "jitworker":
        continue
    n += s.values[0]
    if s.labels.get("query") == "q1" and s.labels.get("pipeline") == "1" and "operator" in s.labels:
        att += s.values[0]
print("codegen_attributed: %d of %d worker samples attributed (%.2f%%)"
      % (att, n, 100.0 * att / max(n, 1)), file=open(3, "w"))
if n < 1000 or att < 0.98 * n:
    sys.exit("%d of %d worker samples carry a region's levels (want >= 98%% of >= 1000)" % (att, n))
PY
}
check codegen_attributed attributed

# c) ht_insert is only called by the probe, with the tag register set to
# HashJoin#3 (3). Its samples get the operator twice: from the region of
# the generated frame that called it (with pipeline=1 and query=q1, which
# only the region gives) and from the register (the numeric label tag=3).
# The register must be there on >= 98% of them (all but the few read
# before the declaration: the workload warms up a second first), the stack
# on >= 95%: GCC schedules an instruction of ht_insert's body between its
# push of rbp and the mov that makes rbp its frame's, and a sample there
# walks by the caller's rbp past the probe's frame (the return address is
# one word above the stack pointer; the unwinder's repair of frameless
# leaves reads the word at it only). 2.3% and 3.7% of ht_insert's samples
# fell there in two runs: the register tag names them all, which is what
# register tagging is for. And they must agree: one operator=HashJoin#3
# label, never a code:operator or tag:operator beside it, and the agent's
# disagreement counter at 0.
shared_split() {
	run_ok || return 1
	local mismatch
	mismatch=$(comment_count "$R" "samples whose register tag and code region disagree")
	py "$R" "$mismatch" <<'PY'
import sys, pprof_read
p = pprof_read.load(sys.argv[1]); mismatch = int(sys.argv[2])
n = stack = tag = both = other = 0
for s in p.samples:
    st = p.stack(s)
    if not st or st[0] != "ht_insert" or s.labels.get("thread_name") != "jitworker":
        continue
    v, l = s.values[0], s.labels
    n += v
    by_stack = l.get("query") == "q1" and l.get("pipeline") == "1"
    by_tag = l.get("tag") == (3, "")
    stack += v * by_stack
    tag += v * by_tag
    if by_stack and by_tag and l.get("operator") == "HashJoin#3":
        both += v
    if "code:operator" in l or "tag:operator" in l or l.get("operator", "HashJoin#3") != "HashJoin#3":
        other += v
print("codegen_shared_split: ht_insert %d samples: %d by the caller's region, %d by the tag, "
      "%d both as operator=HashJoin#3, %d disagreeing; the agent counted %d disagreeing"
      % (n, stack, tag, both, other, mismatch), file=open(3, "w"))
bad = []
if n < 150:
    bad.append("only %d ht_insert samples (want >= 150)" % n)
if stack < 0.95 * n:
    bad.append("%d of %d attributed through the call stack (want >= 95%%)" % (stack, n))
if tag < 0.98 * n:
    bad.append("%d of %d with the register tag 3 (want >= 98%%)" % (tag, n))
if both < 0.95 * n:
    bad.append("%d of %d labelled operator=HashJoin#3 by both (want >= 95%%)" % (both, n))
if other or mismatch:
    bad.append("%d ht_insert samples with another or a second operator label; "
               "the agent counted %d disagreeing samples (want 0 and 0)" % (other, mismatch))
if bad:
    sys.exit("; ".join(bad))
PY
}
check codegen_shared_split shared_split

# d) Names: the generated functions' samples are named from the jitdump,
# and the name and the region agree: >= 98% of the samples labelled with an
# operator (ht_insert's aside) are in the function generated for it.
jit_names() {
	run_ok || return 1
	local bad="" fn op n in_fn
	for pair in q1_p1_scan:Scan#1 q1_p1_filter:Filter#2 q1_p1_probe:HashJoin#3; do
		fn=${pair%%:*}; op=${pair#*:}
		n=$(total "$R" -tagfocus="operator=^$op\$" -ignore='^ht_insert$')
		in_fn=$(flat "$R" "$fn" -tagfocus="operator=^$op\$")
		info "codegen_jit_names: $fn: $in_fn of the $n $op samples outside ht_insert"
		[ "$n" -ge 50 ] && [ $((in_fn * 100)) -ge $((n * 98)) ] ||
			bad="$bad $fn: $in_fn of $n $op samples;"
	done
	[ -z "$bad" ] ||
		{ echo "the generated functions' names (want >= 98% of >= 50 each):${bad%;}"; return 1; }
}
check codegen_jit_names jit_names

# d) Lines: the jitdump maps every instruction to a line of the IR file.
# go tool pprof -lines names q1_p1_scan's samples by lines of that file
# inside q1_p1_scan's own definition, >= 90% of them in its loop (between
# "loop:" and "exit:"; where in the loop depends on the CPU's skid), and
# -list shows the IR text with samples on loop lines.
jit_lines() {
	run_ok || return 1
	local first loop exit last lines bad in_loop all hot
	first=$(grep -n '^define i64 @q1_p1_scan(' "$TMP/q1.ir" | cut -d: -f1)
	loop=$(awk -v f="$first" 'NR > f && /^loop:/ { print NR; exit }' "$TMP/q1.ir")
	exit=$(awk -v f="$first" 'NR > f && /^exit:/ { print NR; exit }' "$TMP/q1.ir")
	last=$(awk -v f="$first" 'NR > f && /^}/ { print NR; exit }' "$TMP/q1.ir")
	[ -n "$first" ] && [ -n "$loop" ] && [ -n "$exit" ] && [ -n "$last" ] ||
		{ echo "no q1_p1_scan in the IR file $TMP/q1.ir"; return 1; }
	lines=$(pprof "$R" -lines -top -nodecount=1000000 -nodefraction=0 \
		-sample_index=samples -focus='^q1_p1_scan$' | awk '$6 == "q1_p1_scan" { print $1, $7 }')
	info "codegen_jit_lines: q1_p1_scan lines (IR lines $first-$last, loop $loop-$exit):" $lines
	bad=$(echo "$lines" | awk -v ir="$TMP/q1.ir" -v f="$first" -v l="$last" '
		{ n = split($2, a, ":"); line = a[n]; file = substr($2, 1, length($2) - length(line) - 1)
		  if (file != ir || line < f || line > l) print $2 }')
	[ -n "$lines" ] && [ -z "$bad" ] ||
		{ echo "q1_p1_scan's samples at ${bad:-no line}, want $TMP/q1.ir:$first-$last"; return 1; }
	all=$(echo "$lines" | awk '{ n += $1 } END { print n + 0 }')
	in_loop=$(echo "$lines" | awk -v a="$loop" -v b="$exit" '
		{ n = split($2, x, ":"); if (x[n] > a && x[n] < b) s += $1 } END { print s + 0 }')
	[ $((in_loop * 100)) -ge $((all * 90)) ] ||
		{ echo "$in_loop of q1_p1_scan's $all samples on its loop's lines $loop-$exit (want >= 90%)"; return 1; }
	# -list reads the IR file: loop lines with their text and samples
	hot=$(pprof "$R" -list='^q1_p1_scan$' -sample_index=samples | awk -v a="$loop" -v b="$exit" '
		match($0, /^ *[^ ]+ +[^ ]+ +[0-9]+:  %/) { split(substr($0, 1, RLENGTH), x, " ")
			l = x[3] + 0; if (x[1] != "." && l > a && l < b) n++ }
		END { print n + 0 }')
	[ "$hot" -ge 1 ] ||
		{ echo "-list q1_p1_scan shows no loop line with its IR text and samples: $(pprof "$R" -list='^q1_p1_scan$' | head -25 | tr '\n' '|')"; return 1; }
}
check codegen_jit_lines jit_lines

# d) A second writer: tests/jitdump_write.py, from the specification alone,
# describes the spin loop jitdump_map runs; its samples get that name and
# the file:line of its debug entries.
second_writer() {
	python3 "$HERE/jitdump_write.py" "$TMP/good.dump" --name py_spin_loop \
		--src "$TMP/py.ir" --lines 4 || return 1
	printf 'push frame\ndec counter\nloop\nreturn\n' >"$TMP/py.ir"
	"$TAGPROF" record -F 999 -o "$TMP/good.pb.gz" -- \
		"$WORKLOADS/jitdump_map" --dir "$JD" "$TMP/good.dump" 3 2>"$TMP/good.err" ||
		{ echo "record -- jitdump_map exited $?: $(tail -3 "$TMP/good.err")"; return 1; }
	local all named lines
	all=$(total "$TMP/good.pb.gz" -tagfocus=process=jitdump_map)
	named=$(flat "$TMP/good.pb.gz" py_spin_loop)
	lines=$(pprof "$TMP/good.pb.gz" -lines -top -sample_index=samples | grep -c "py_spin_loop $TMP/py.ir:[1-4]\$")
	info "codegen_jitdump_second_writer: $named of $all samples in py_spin_loop, $lines lines of it named"
	[ "$all" -ge 1000 ] && [ $((named * 100)) -ge $((all * 95)) ] && [ "$lines" -ge 1 ] ||
		{ echo "$named of $all jitdump_map samples named py_spin_loop (want >= 95% of >= 1000), $lines of its lines at $TMP/py.ir:1-4"; return 1; }
}
check codegen_jitdump_second_writer second_writer

# ---- churn: q1, q2... each live 50-100 ms in the same code memory ----
"$TAGPROF" record -T -F 999 -o "$TMP/churn.pb.gz" -- \
	"$JE" --jitdump-dir "$JD" --ir "$TMP/churn.ir" --log "$TMP/churn.log" \
	churn 6 2>"$TMP/churn.err"
churn_rc=$?
C=$TMP/churn.pb.gz
churn_ok() {
	[ $churn_rc = 0 ] && [ -s "$C" ] && [ -s "$TMP/churn.log" ] ||
		{ echo "record -T -- jitengine churn exited $churn_rc: $(tail -3 "$TMP/churn.err")"; return 1; }
}

# e) Every sample labelled query=qN was taken while qN's code was live:
# inside [START, END] of the log, whose times are CLOCK_MONOTONIC like the
# samples'. A sample's time is the profile's time_nanos (wall clock at the
# capture's start) plus its t; the log's first line reads both clocks at
# one moment, which places it on CLOCK_MONOTONIC within a microsecond or
# so: 0.5 ms of slack, against queries 50-100 ms long and 20-30 us apart.
# intervals CHECK PROFILE LOG MIN_QUERIES MIN_SAMPLES
intervals() {
	py "$@" <<'PY'
import sys, collections, pprof_read
name, prof, log, minq, mins = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
p = pprof_read.load(prof)
live, off = {}, None
for line in open(log):
    f = line.split()
    if f[0] == "clock":
        off = int(f[2]) - int(f[1])     # real - monotonic
    else:
        live[f[0]] = (int(f[1]), int(f[2]))
if off is None or len(live) < minq:
    sys.exit("the log has %d queries (want >= %d)%s"
             % (len(live), minq, "" if off is not None else ", no clock line"))
slack, n, bad, per_q = 500000, 0, [], collections.Counter()
for s in p.samples:
    q = s.labels.get("query")
    if q is None or s.labels.get("process") != "jitengine":
        continue
    n += 1
    mono = p.time_nanos + p.t(s) - off
    if q not in live:
        bad.append("%s at %.6f s: not in the log" % (q, mono / 1e9))
        continue
    a, b = live[q]
    per_q[q] += 1
    if not a - slack <= mono <= b + slack:
        bad.append("%s at %.6f s, live %.6f-%.6f s" % (q, mono / 1e9, a / 1e9, b / 1e9))
print("%s: %d queries, %d labelled samples in %d of them, %d outside"
      % (name, len(live), n, len(per_q), len(bad)), file=open(3, "w"))
if bad:
    sys.exit("%d of %d samples labelled outside their query's interval: %s"
             % (len(bad), n, "; ".join(bad[:5])))
if len(per_q) < 0.8 * len(live) or n < mins:
    sys.exit("%d labelled samples in %d of %d queries (want >= %d, in >= 80%% of them)"
             % (n, len(per_q), len(live), mins))
PY
}
churn_intervals() {
	churn_ok || return 1
	intervals codegen_churn_intervals "$C" "$TMP/churn.log" 30 1000
}
check codegen_churn_intervals churn_intervals

# e) The same when the agent lags behind: it is stopped (SIGSTOP) for the
# last half second of a 3 s churn and a second past the workload's exit,
# so it reads the samples of the last queries when the process, and its
# table, are gone (its ring buffer holds them: 1.5 s at 999 Hz is about
# 250 KB). Samples it can no longer tell the region of must not be given
# the levels of the last table it read (those queries were dropped since).
churn_late() {
	local rec
	"$TAGPROF" record -T -F 999 -o "$TMP/late.pb.gz" -- \
		"$JE" --jitdump-dir "$JD" --ir "$TMP/late.ir" --log "$TMP/late.log" \
		churn 3 2>"$TMP/late.err" &
	rec=$!
	# the log's clock line is written at the workload's start
	for i in $(seq 100); do [ -s "$TMP/late.log" ] && break; sleep 0.1; done
	sleep 3.5	# 1 s of warm-up, then 3 s of queries
	kill -STOP $rec
	sleep 1.5
	kill -CONT $rec
	wait $rec ||
		{ echo "record -T -- jitengine churn exited $?: $(tail -3 "$TMP/late.err")"; return 1; }
	intervals codegen_churn_late "$TMP/late.pb.gz" "$TMP/late.log" 15 300
}
check codegen_churn_late churn_late

# e) Most of the worker's samples are attributed although its regions
# change every 50-100 ms: >= 95% (the 20-30 us of each compilation, and
# its loop, are not in a region).
churn_attributed() {
	churn_ok || return 1
	py "$C" <<'PY'
import sys, pprof_read
p = pprof_read.load(sys.argv[1])
w = [s for s in p.samples if s.labels.get("thread_name") == "jitworker"]
att = sum(1 for s in w if "query" in s.labels)
print("codegen_churn_attributed: %d of %d worker samples" % (att, len(w)), file=open(3, "w"))
if len(w) < 1000 or att < 0.95 * len(w):
    sys.exit("%d of %d worker samples attributed (want >= 95%% of >= 1000)" % (att, len(w)))
PY
}
check codegen_churn_attributed churn_attributed

# e) The jitdump names code reused by query after query: a sample's JIT
# function is the one of its own query and operator (qN_p1_scan for
# query=qN operator=Scan#1): the jitdump's name and the region's levels at
# the sample's time, not the newest at that address, and they agree.
churn_jit_names() {
	churn_ok || return 1
	py "$C" <<'PY'
import sys, re, pprof_read
p = pprof_read.load(sys.argv[1])
n, bad = 0, []
for s in p.samples:
    q = s.labels.get("query")
    st = p.stack(s)
    m = re.match(r"^(q\d+)_p1_(scan|filter|probe)$", st[0]) if st and q else None
    if not m:
        continue
    n += 1
    op = {"scan": "Scan#1", "filter": "Filter#2", "probe": "HashJoin#3"}[m.group(2)]
    if m.group(1) != q or s.labels.get("operator") != op:
        bad.append("query=%s operator=%s in %s" % (q, s.labels.get("operator"), st[0]))
print("codegen_churn_jit_names: %d samples in named JIT code, %d under another query's or operator's name"
      % (n, len(bad)), file=open(3, "w"))
if n < 800 or bad:
    sys.exit("%d samples in JIT functions named qN_p1_*, %d of them named for another query "
             "or operator than their labels (want >= 800, none): %s" % (n, len(bad), "; ".join(bad[:5])))
PY
}
check codegen_churn_jit_names churn_jit_names

# ---- f) bad inputs ----

# jitdump_case NAME WRITER-ARGS...: writes a jitdump with jitdump_write.py,
# runs jitdump_map on it for 3 s under record; $TMP/NAME.pb.gz,
# $TMP/NAME.err. Fails unless both exit 0 and the spin loop was sampled.
jitdump_case() {
	local name=$1 all; shift
	python3 "$HERE/jitdump_write.py" "$TMP/$name.dump" "$@" || return 1
	"$TAGPROF" record -F 999 -o "$TMP/$name.pb.gz" -- \
		"$WORKLOADS/jitdump_map" --dir "$JD" "$TMP/$name.dump" 3 2>"$TMP/$name.err" ||
		{ echo "$name: record -- jitdump_map exited $?: $(tail -3 "$TMP/$name.err")"; return 1; }
	all=$(total "$TMP/$name.pb.gz" -tagfocus=process=jitdump_map)
	[ "$all" -ge 1000 ] ||
		{ echo "$name: $all samples of jitdump_map (want >= 1000)"; return 1; }
}

# refused NAME: the jitdump refusals the profile's comments count (the
# symbols line's "jitdumps: ..." part): bad records, over the limits,
# files refused.
refused() {
	local f=$TMP/$1.pb.gz
	echo $(($(comment_count "$f" "bad records refused") +
		$(comment_count "$f" "over the size or count limits") +
		$(comment_count "$f" "refused \\(not a regular file")))
}

bad_truncated() {
	local why="" n
	# inside the DEBUG_INFO record, and inside the LOAD's code bytes
	for cut in 100 330; do
		jitdump_case "trunc$cut" --truncate $cut || return 1
		n=$(refused "trunc$cut")
		info "codegen_bad_truncated: cut at $cut: $n refused; $(grep -o 'jitdumps: .*' "$TMP/trunc$cut.err")"
		[ "$n" -ge 1 ] || why="$why cut at $cut: no refusal counted;"
	done
	[ -z "$why" ] || { echo "${why%;}"; return 1; }
}
check codegen_bad_truncated bad_truncated

bad_sizes() {
	local why="" n
	for c in total:--total-size=0xffffffff total8:--total-size=8 \
		 code:--huge-code-size nr:--huge-nr-entry; do
		jitdump_case "size_${c%%:*}" "${c#*:}" || return 1
		n=$(refused "size_${c%%:*}")
		info "codegen_bad_sizes: ${c#*:}: $n refused; $(grep -o 'jitdumps: .*' "$TMP/size_${c%%:*}.err")"
		[ "$n" -ge 1 ] || why="$why ${c#*:}: no refusal counted;"
	done
	[ -z "$why" ] || { echo "${why%;}"; return 1; }
}
check codegen_bad_sizes bad_sizes

# The table scribbled over (jitengine hostile: random bytes, absurd sizes,
# counts and ids, repeated records, the anchor's fields, a table switch
# that never ends; each restored after 100 ms) while regions that overlap
# on purpose are registered again and again: the agent exits 0 with a
# profile, and counts what it refused.
hostile() {
	"$TAGPROF" record -F 999 -o "$TMP/hostile.pb.gz" -- \
		"$JE" --jitdump-dir "$JD" --ir "$TMP/hostile.ir" hostile 6 2>"$TMP/hostile.err" ||
		{ echo "record -- jitengine hostile exited $?: $(tail -3 "$TMP/hostile.err")"; return 1; }
	local f=$TMP/hostile.pb.gz all bad torn failed
	all=$(total "$f" -tagfocus=process=jitengine)
	bad=$(comment_count "$f" "bad records")
	torn=$(comment_count "$f" "torn reads retried")
	failed=$(comment_count "$f" "table reads failed")
	info "codegen_hostile: $all samples; refused: $bad bad records, $torn torn reads, $failed failed reads; $(grep -o 'hostile: .*' "$TMP/hostile.err")"
	[ "$all" -ge 1000 ] && [ $((bad + torn + failed)) -ge 1 ] &&
		grep -q '^tagprof: code regions: ' "$TMP/hostile.err" ||
		{ echo "$all samples (want >= 1000); $bad bad records, $torn torn reads, $failed failed reads counted (want some); summary: $(grep 'code regions' "$TMP/hostile.err")"; return 1; }
}
check codegen_hostile hostile
