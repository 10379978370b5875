#!/usr/bin/env bash
# Per-sample profiles (record -T): every sample its own pprof Sample with
# its time in the numeric label t, read back by a reader written from
# profile.proto (tests/pprof_read.py) and by go tool pprof, whose
# -tagfocus=t=A:B must select exactly the samples of that window; known
# phases of a workload land at their times; without -T samples merge; the
# agent's config key. Then `tagprof report pprof`: its window agrees with
# -tagfocus, its label and tag cuts with the spec reader's counts, it
# merges several files, and refuses bad input clearly.
. "$(dirname "$0")/../lib.sh"
need_bpf timeline_every_sample timeline_phases timeline_tagfocus_window \
	timeline_default_merged timeline_agent_key timeline_agent_windows \
	report_window_agrees report_values_cut report_inputs_merge \
	report_timeline_windows report_bad_input

# tagops phases 1: scan alone (query q1), join alone (q2), then both, a
# second each, after a second of warm-up; it prints each phase's start.
"$TAGPROF" record -T -F 999 -o "$TMP/tl.pb.gz" -- \
	"$WORKLOADS/tagops" phases 1 >"$TMP/phases" 2>"$TMP/tl.err"
rc=$?


every_sample() {
	[ $rc -eq 0 ] || { echo "record exited $rc: $(tail -2 "$TMP/tl.err")"; return 1; }
	# "N samples, L lost": each sample taken is a Sample with its time;
	# the lost ones, whose time nobody knows, are one Sample without it
	# (a sanitized agent at 999 Hz can lose a few).
	read -r n lost < <(sed -n 's/.* \([0-9]*\) samples, \([0-9]*\) lost.*/\1 \2/p' "$TMP/tl.err" | tail -1)
	py "$TMP/tl.pb.gz" "$n" "$lost" <<'PY'
import sys, pprof_read
p = pprof_read.load(sys.argv[1]); want, lost = int(sys.argv[2]), int(sys.argv[3])
timed = [s for s in p.samples if p.t(s) is not None]
untimed = [s for s in p.samples if p.t(s) is None]
if len(timed) != want:
    sys.exit("%d Samples with a t label in nanoseconds, %d samples taken" % (len(timed), want))
if want < 2000:
    sys.exit("only %d samples" % want)
if sum(s.values[0] for s in untimed) != lost or len(untimed) > 1:
    sys.exit("%d Samples without t, values %d, for %d lost"
             % (len(untimed), sum(s.values[0] for s in untimed), lost))
if any(s.values[0] != 1 for s in timed):
    sys.exit("a Sample counts more than one sample")
ts = [p.t(s) for s in timed]
if min(ts) < 0 or max(ts) > p.duration_nanos:
    sys.exit("t outside [0, duration]: %d..%d of %d" % (min(ts), max(ts), p.duration_nanos))
PY
}
check timeline_every_sample every_sample

# Each phase, 100 ms in from either end: what ran there, by the tagops
# samples' operator tag and query label. The timeline must place them
# where the workload says they were (the profile's time_nanos plus t).
phases() {
	py "$TMP/tl.pb.gz" "$TMP/phases" <<'PY'
import sys, collections, pprof_read
p = pprof_read.load(sys.argv[1])
starts = [int(l.split()[2]) - p.time_nanos for l in open(sys.argv[2])]
if len(starts) != 3:
    sys.exit("the workload printed %d phases" % len(starts))
want = [{("scan", "q1"): 1.0}, {("join", "q2"): 1.0},
        {("scan", "q1"): 0.5, ("join", "q2"): 0.5}]
for k, t0 in enumerate(starts):
    c = collections.Counter()
    for s in p.samples:
        t = p.t(s)
        if s.labels.get("process") == "tagops" and t0 + 1e8 <= t <= t0 + 9e8:
            c[(s.labels.get("operator"), s.labels.get("query_id"))] += 1
    n = sum(c.values())
    if n < 500:
        sys.exit("phase %d: %d samples (want >= 500): %s" % (k + 1, n, dict(c)))
    for key, share in want[k].items():
        got = c[key] / n
        if abs(got - share) > 0.03 + (0.07 if share < 1 else 0):
            sys.exit("phase %d: %s %.1f%% (want %.0f%%): %s"
                     % (k + 1, key, 100 * got, 100 * share, dict(c)))
# the boundaries: join starts with phase 2 and not before, within 100 ms
first_join = min(p.t(s) for s in p.samples if s.labels.get("operator") == "join")
if abs(first_join - starts[1]) > 1e8:
    sys.exit("first join sample at %.3f s, phase 2 starts at %.3f s"
             % (first_join / 1e9, starts[1] / 1e9))
PY
}
check timeline_phases phases

# go tool pprof's numeric tag filter against the count of the spec reader.
tagfocus_window() {
	local want got
	want=$(py "$TMP/tl.pb.gz" <<'PY'
import sys, pprof_read
p = pprof_read.load(sys.argv[1])
print(sum(1 for s in p.samples if p.t(s) is not None and 1e9 <= p.t(s) <= 2e9))
PY
) || return 1
	got=$(pprof "$TMP/tl.pb.gz" -tagfocus=t=1s:2s -raw |
		awk '/^Samples:/ { f = 1; next } /^Locations/ { f = 0 }
			f && /^ +[0-9]+ +[0-9]+: / { n++ } END { print n + 0 }')
	[ "$want" -gt 500 ] || { echo "only $want samples in [1 s, 2 s]"; return 1; }
	[ "$got" = "$want" ] || { echo "-tagfocus=t=1s:2s kept $got samples, $want have t in [1 s, 2 s]"; return 1; }
}
check timeline_tagfocus_window tagfocus_window

default_merged() {
	"$TAGPROF" record -F 999 -o "$TMP/agg.pb.gz" -- "$WORKLOADS/tagops" phases 0.5 \
		>/dev/null 2>"$TMP/agg.err" || { echo "record failed: $(tail -2 "$TMP/agg.err")"; return 1; }
	# "N samples, L lost": the lost ones are in the profile too, as one
	# Sample (a sanitized agent, slow at a new program's symbols, lost a
	# few at 999 Hz).
	read -r n lost < <(sed -n 's/.* \([0-9]*\) samples, \([0-9]*\) lost.*/\1 \2/p' "$TMP/agg.err" | tail -1)
	py "$TMP/agg.pb.gz" "$n" "$lost" <<'PY'
import sys, pprof_read
p = pprof_read.load(sys.argv[1]); n, lost = int(sys.argv[2]), int(sys.argv[3])
if any(p.t(s) is not None or "t" in s.labels for s in p.samples):
    sys.exit("a t label without -T")
total = sum(s.values[0] for s in p.samples)
if not len(p.samples) < n / 4 or total != n + lost:
    sys.exit("%d Samples for %d samples and %d lost, values %d: not merged"
             % (len(p.samples), n, lost, total))
PY
}
check timeline_default_merged default_merged

agent_key() {
	: >"$TMP/empty.conf"
	"$TAGPROF" agent --check-config --config "$TMP/empty.conf" | grep -qx 'timeline = false' ||
		{ echo "timeline is not off by default"; return 1; }
	"$TAGPROF" agent --check-config --config "$TMP/empty.conf" --timeline | grep -qx 'timeline = true' ||
		{ echo "--timeline does not turn it on"; return 1; }
	printf 'timeline = true\n' >"$TMP/on.conf"
	"$TAGPROF" agent --check-config --config "$TMP/on.conf" | grep -qx 'timeline = true' ||
		{ echo "the config key does not turn it on"; return 1; }
	printf 'timeline = yes\n' >"$TMP/bad.conf"
	! "$TAGPROF" agent --check-config --config "$TMP/bad.conf" 2>"$TMP/bad.err" &&
		grep -q 'must be true or false' "$TMP/bad.err" ||
		{ echo "a bad value is not refused clearly: $(cat "$TMP/bad.err")"; return 1; }
}
check timeline_agent_key agent_key

# The agent with timeline = true: its windows hold every sample with t
# inside the window, as record -T's file does.
agent_windows() {
	local out=$TMP/agent pid
	mkdir -p "$out"
	printf 'timeline = true\n' >"$TMP/tl.conf"
	"$WORKLOADS/tagops" phases 1 >/dev/null &
	"$TAGPROF" agent --config "$TMP/tl.conf" --output-dir "$out" --window 2 \
		-F 499 2>"$TMP/agent.err" &
	pid=$!
	sleep 5
	kill -TERM $pid; wait $pid; wait
	py "$out" <<'PY'
import sys, os, pprof_read
files = [f for f in os.listdir(sys.argv[1]) if f.endswith(".pb.gz")]
timed = 0
for f in files:
    p = pprof_read.load(os.path.join(sys.argv[1], f))
    for s in p.samples:
        t = p.t(s)
        if t is None:
            continue
        timed += 1
        if s.values[0] != 1 or not -2e8 <= t <= p.duration_nanos + 2e8:
            sys.exit("%s: a sample counting %d, or t %d outside its %d ns window"
                     % (f, s.values[0], t, p.duration_nanos))
if timed < 500:
    sys.exit("%d samples with t in %d files" % (timed, len(files)))
PY
}
check timeline_agent_windows agent_windows

# count FILE PYTHON-CONDITION-ON-s-AND-t: the samples (by their count
# value) of FILE for which the condition holds.
count() {
	py "$1" "$2" <<'PY'
import sys, pprof_read
p = pprof_read.load(sys.argv[1])
def holds(s):
    # lost samples have no time: no condition on t holds for them
    try:
        return eval(sys.argv[2], {}, {"s": s, "t": p.t(s)})
    except TypeError:
        return False
print(sum(s.values[0] for s in p.samples if holds(s)))
PY
}

window_agrees() {
	local spec focus rep
	"$TAGPROF" report pprof "$TMP/tl.pb.gz" --from 1s --to 2s -o "$TMP/w.pb.gz" \
		2>"$TMP/w.err" || { echo "report failed: $(cat "$TMP/w.err")"; return 1; }
	spec=$(count "$TMP/tl.pb.gz" '1e9 <= t <= 2e9') || return 1
	rep=$(count "$TMP/w.pb.gz" 'True') || return 1
	focus=$(pprof "$TMP/tl.pb.gz" -tagfocus=t=1s:2s -raw |
		awk '/^Samples:/ { f = 1; next } /^Locations/ { f = 0 }
			f && /^ +[0-9]+ +[0-9]+: / { n += $1 } END { print n + 0 }')
	[ "$spec" -gt 500 ] && [ "$rep" = "$spec" ] && [ "$focus" = "$spec" ] ||
		{ echo "window 1-2 s: report kept $rep, -tagfocus $focus, the spec reader counts $spec"; return 1; }
	[ "$(count "$TMP/w.pb.gz" 't is not None')" = 0 ] ||
		{ echo "the merged file still has t labels"; return 1; }
	n=$(py "$TMP/w.pb.gz" <<'PY'
import sys, pprof_read
print(len(pprof_read.load(sys.argv[1]).samples))
PY
)
	[ "$n" -lt "$rep" ] || { echo "$n Samples for $rep samples: not merged"; return 1; }
}
check report_window_agrees window_agrees

# cut_agrees WHAT MIN IN OUT ARGS...: report pprof ARGS keeps exactly the
# samples for which IN holds in the input (more than MIN), and every one
# it keeps has OUT (both conditions of count).
cut_agrees() {
	local what=$1 min=$2 in=$3 out=$4 spec rep all; shift 4
	"$TAGPROF" report pprof "$TMP/tl.pb.gz" "$@" -o "$TMP/cut.pb.gz" 2>"$TMP/cut.err" ||
		{ echo "report $what failed: $(cat "$TMP/cut.err")"; return 1; }
	spec=$(count "$TMP/tl.pb.gz" "$in")
	rep=$(count "$TMP/cut.pb.gz" "$out")
	all=$(count "$TMP/cut.pb.gz" 'True')
	[ "$spec" -gt "$min" ] && [ "$rep" = "$spec" ] && [ "$all" = "$spec" ] ||
		{ echo "$what: $all kept ($rep as asked), $spec in the input"; return 1; }
}

values_cut() {
	cut_agrees "--label query_id=q2" 500 's.labels.get("query_id") == "q2"' \
		's.labels.get("query_id") == "q2"' --label query_id=q2 &&
	cut_agrees "--tag operator=scan --from 2s" 300 \
		's.labels.get("operator") == "scan" and t >= 2e9' \
		's.labels.get("operator") == "scan"' --tag operator=scan --from 2s
}
check report_values_cut values_cut

# The agent's windows (timeline_agent_windows) merged back into one.
inputs_merge() {
	local files=("$TMP"/agent/*.pb.gz) sum=0 n
	[ ${#files[@]} -ge 2 ] || { echo "only ${#files[@]} agent windows"; return 1; }
	for f in "${files[@]}"; do sum=$((sum + $(count "$f" 'True'))); done
	"$TAGPROF" report pprof "${files[@]}" -o "$TMP/all.pb.gz" 2>"$TMP/all.err" ||
		{ echo "report failed: $(cat "$TMP/all.err")"; return 1; }
	n=$(count "$TMP/all.pb.gz" 'True')
	[ "$n" = "$sum" ] && [ "$n" -gt 500 ] ||
		{ echo "${#files[@]} windows of $sum samples merged into $n"; return 1; }
}
check report_inputs_merge inputs_merge

# The same windows as one timeline: every timed sample on its thread, in a
# file the Firefox Profiler format's checker passes.
windows_timeline() {
	local files=("$TMP"/agent/*.pb.gz) sum=0 out
	for f in "${files[@]}"; do sum=$((sum + $(count "$f" 't is not None'))); done
	"$TAGPROF" report timeline "${files[@]}" -o "$TMP/all.json.gz" 2>"$TMP/allt.err" ||
		{ echo "report timeline failed: $(cat "$TMP/allt.err")"; return 1; }
	out=$(python3 "$(dirname "$0")/../firefox_check.py" "$TMP/all.json.gz") ||
		{ echo "$out"; return 1; }
	grep -q "threads, $sum samples," <<<"$out" && [ "$sum" -gt 500 ] ||
		{ echo "${#files[@]} windows of $sum timed samples: $out"; return 1; }
}
check report_timeline_windows windows_timeline

# expect_report RC PATTERN ARGS...: report pprof exits RC and says PATTERN.
expect_report() { says "$1" "$2" "$TAGPROF" report pprof "${@:3}"; }

bad_input() {
	head -c 3000 "$TMP/tl.pb.gz" >"$TMP/cut.pb.gz"
	head -c 4000 /dev/urandom >"$TMP/noise.pb.gz"
	expect_report 2 'no sample times.*record -T' "$TMP/agg.pb.gz" --from 1s -o "$TMP/x.pb.gz" &&
	expect_report 2 'corrupt or truncated' "$TMP/cut.pb.gz" -o "$TMP/x.pb.gz" &&
	expect_report 2 'not a pprof|corrupt' "$TMP/noise.pb.gz" -o "$TMP/x.pb.gz" &&
	expect_report 2 'No such file' "$TMP/none.pb.gz" -o "$TMP/x.pb.gz" &&
	expect_report 2 'no output' "$TMP/tl.pb.gz" &&
	expect_report 2 'not a time' "$TMP/tl.pb.gz" --from soon -o "$TMP/x.pb.gz" &&
	expect_report 2 'is after' "$TMP/tl.pb.gz" --from 3s --to 1s -o "$TMP/x.pb.gz" &&
	[ ! -e "$TMP/x.pb.gz" ] || { echo "a refused report left a file"; return 1; }
	# a window past the end: an empty but valid profile, and exit 1
	expect_report 1 'no sample was kept' "$TMP/tl.pb.gz" --from 1h -o "$TMP/empty.pb.gz" &&
	pprof "$TMP/empty.pb.gz" -raw >/dev/null && [ "$(count "$TMP/empty.pb.gz" 'True')" = 0 ] ||
		{ echo "the empty window's file does not read as an empty profile"; return 1; }
}
check report_bad_input bad_input
