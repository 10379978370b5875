#!/usr/bin/env bash
# tagprof report timeline: a per-sample profile of known phases shown in
# the Firefox Profiler's format and as an HTML page. The format is checked
# by tests/firefox_check.py, written from the profiler's type definitions
# (and made to fail on broken files); the phases and the shares are checked
# in both outputs against what the workload did; the page is opened in
# headless Chromium, which must draw the lanes and fetch nothing.
. "$(dirname "$0")/../lib.sh"
need_bpf views_firefox_valid views_firefox_checker_fails views_firefox_phases \
	views_html_phases views_html_browser views_bad_input

TESTS=$(cd "$(dirname "$0")/.." && pwd)

# tagops phases 1: after a second of warm-up, scan alone (q1), join alone
# (q2), then both, a second each, on their own threads; it prints each
# phase's start (CLOCK_REALTIME ns).
"$TAGPROF" record -T -F 999 -o "$TMP/tl.pb.gz" -- \
	"$WORKLOADS/tagops" phases 1 >"$TMP/phases" 2>"$TMP/rec.err" ||
	echo "record exited $?: $(tail -2 "$TMP/rec.err")" >&2
"$TAGPROF" report timeline "$TMP/tl.pb.gz" -o "$TMP/tl.json.gz" 2>"$TMP/json.err"
json_rc=$?
"$TAGPROF" report timeline "$TMP/tl.pb.gz" --by operator -o "$TMP/tl.html" 2>"$TMP/html.err"
html_rc=$?
cat "$TMP/json.err" "$TMP/html.err" >&2

firefox_valid() {
	[ $json_rc = 0 ] || { echo "report exited $json_rc: $(cat "$TMP/json.err")"; return 1; }
	python3 "$TESTS/firefox_check.py" "$TMP/tl.json.gz" | grep -E '^ok: [0-9]+ threads, [1-9][0-9]{3,} samples, [1-9][0-9]* markers \(version 55\)$' ||
		{ python3 "$TESTS/firefox_check.py" "$TMP/tl.json.gz"; return 1; }
	# the two key order rules of Perfetto's importer: "meta" first, plain JSON
	zcat "$TMP/tl.json.gz" | head -c 8 | grep -q '^{"meta"' ||
		{ echo "the JSON does not start with {\"meta\""; return 1; }
}
check views_firefox_valid firefox_valid

# The checker must fail on broken files: its own self-test corrupts valid
# profiles of every version 48..70 in 19 ways, and here our own file is
# broken three ways, each of which it must report.
checker_fails() {
	python3 "$TESTS/firefox_check.py" --self-test | tail -1 | grep -q ', 0 failed$' ||
		{ python3 "$TESTS/firefox_check.py" --self-test | tail -3; return 1; }
	py "$TMP/tl.json.gz" "$TMP" <<'PY' || return 1
import gzip, json, sys
p = json.load(gzip.open(sys.argv[1]))
t = max(p["threads"], key=lambda t: t["samples"]["length"])
def save(name, f):
    q = json.loads(json.dumps(p)); f(q["threads"][p["threads"].index(t)])
    json.dump(q, open("%s/%s.json" % (sys.argv[2], name), "w"))
save("bad_frame", lambda t: t["stackTable"]["frame"].__setitem__(0, t["frameTable"]["length"]))
save("bad_time", lambda t: t["samples"]["time"].__setitem__(-1, -5.0))
save("bad_length", lambda t: t["funcTable"]["name"].pop())
PY
	for b in bad_frame bad_time bad_length; do
		! python3 "$TESTS/firefox_check.py" "$TMP/$b.json" >"$TMP/$b.out" ||
			{ echo "the checker passed a file with $b"; return 1; }
	done
	head -c 2000 "$TMP/tl.json.gz" >"$TMP/cut.json.gz"
	! python3 "$TESTS/firefox_check.py" "$TMP/cut.json.gz" >/dev/null 2>&1 ||
		{ echo "the checker passed a truncated file"; return 1; }
}
check views_firefox_checker_fails checker_fails

# Both outputs against the workload. Truth: the workload's phase starts,
# and each value's share of the profile's samples by the spec reader
# (tests/pprof_read.py). Phases: 1 scan/q1 alone, 2 join/q2 alone, 3 both
# half and half; each judged 100 ms in from its ends, as timeline.sh does
# for the pprof itself.
firefox_phases() {
	[ $json_rc = 0 ] || { echo "no JSON"; return 1; }
	py "$TMP/tl.json.gz" "$TMP/tl.pb.gz" "$TMP/phases" <<'PY'
import collections, gzip, json, sys, pprof_read
p = json.load(gzip.open(sys.argv[1])); pr = pprof_read.load(sys.argv[2])
t0 = p["meta"]["startTime"]            # ms since the epoch
starts = [int(l.split()[2]) / 1e6 - t0 for l in open(sys.argv[3])]
if len(starts) != 3:
    sys.exit("the workload printed %d phases" % len(starts))
marks = []                              # (key, value, start, end, samples)
times = []                              # per tagops thread: (sample times, its markers)
for t in p["threads"]:
    if t["processName"] != "tagops":
        continue
    m, s, own = t["markers"], t["stringArray"], []
    for i in range(m["length"]):
        k, v = s[m["name"][i]].split("=", 1)
        own.append((k, v, m["startTime"][i], m["endTime"][i], m["data"][i]["samples"]))
    marks += own
    times.append((t["samples"]["time"], own))
# Each phase, 100 ms in from either end: the share of the tagops samples
# there that lie under a marker of each value on their own thread (a
# thread the machine did not run for a while has no samples, and no
# marker, there: shares of samples, not of time).
want = [{"scan": 1, "join": 0, "q1": 1, "q2": 0}, {"scan": 0, "join": 1, "q1": 0, "q2": 1},
        {"scan": .5, "join": .5, "q1": .5, "q2": .5}]
for k, s in enumerate(starts):
    a, b = s + 100, s + 900
    c, n = collections.Counter(), 0
    for ts, own in times:
        for x in ts:
            if a <= x <= b:
                n += 1
                for kk, vv, ms, me, _ in own:
                    if ms <= x <= me:
                        c[vv] += 1
    for v, share in want[k].items():
        if n < 400 or abs(c[v] / n - share) > 0.03 + (0.07 if 0 < share < 1 else 0):
            sys.exit("phase %d: %d of %d tagops samples under %s markers (want %.0f%%)"
                     % (k + 1, c[v], n, v, 100 * share))
for v, k in (("scan", 0), ("join", 1)):
    first = min(s for kk, vv, s, e, n in marks if vv == v)
    if abs(first - starts[k]) > 100:
        sys.exit("the first %s marker starts at %.0f ms, phase %d at %.0f ms" % (v, first, k + 1, starts[k]))
# shares: the markers' sample counts against the profile's operator
# labels (tagops samples), and scan against join (2 s of CPU each)
truth = collections.Counter(s.labels.get("operator") for s in pr.samples
                            if s.labels.get("process") == "tagops")
got = collections.Counter(vv for kk, vv, s, e, n in marks if kk == "operator" for _ in range(n))
total = sum(truth.values())
for v in ("scan", "join"):
    a, b = 100 * got[v] / total, 100 * truth[v] / total
    if abs(a - b) > 3:
        sys.exit("%s: %.1f%% of tagops samples in the markers, %.1f%% in the profile" % (v, a, b))
if abs(100 * got["scan"] / (got["scan"] + got["join"]) - 50) > 3:
    sys.exit("scan %d and join %d samples: not half and half" % (got["scan"], got["join"]))
PY
}
check views_firefox_phases firefox_phases

# The page: lanes by operator, each bar a time bin (data-from, seconds since
# the profile's start; data-n, samples), and the table's shares.
html_phases() {
	[ $html_rc = 0 ] || { echo "report exited $html_rc: $(cat "$TMP/html.err")"; return 1; }
	py "$TMP/tl.html" "$TMP/tl.pb.gz" "$TMP/phases" <<'PY'
import collections, html.parser, sys, pprof_read
pr = pprof_read.load(sys.argv[2])
starts = [(int(l.split()[2]) - pr.time_nanos) / 1e9 for l in open(sys.argv[3])]
class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.lane = None; self.bins = collections.defaultdict(list)
        self.share = {}; self.row = None; self.cells = []
    def handle_starttag(self, tag, a):
        a = dict(a)
        if tag == "g" and "data-lane" in a: self.lane = a["data-value"]
        if tag == "rect" and "data-n" in a: self.bins[self.lane].append((float(a["data-from"]), int(a["data-n"])))
        if tag == "tr": self.cells = []
        if tag == "td" and "data-share" in a: self.share[self.cells[0]] = float(a["data-share"])
    def handle_data(self, d):
        if self.lasttag == "td" and d.strip() and not self.cells: self.cells.append(d.strip())
pg = Page(); pg.feed(open(sys.argv[1]).read())
if not {"scan", "join"} <= set(pg.bins):
    sys.exit("lanes: %s" % sorted(pg.bins))
want = [{"scan": 1.0}, {"join": 1.0}, {"scan": 0.5, "join": 0.5}]
for k, s in enumerate(starts):
    c = collections.Counter()
    for v, bins in pg.bins.items():
        c[v] += sum(n for f, n in bins if s + 0.1 <= f <= s + 0.9)
    n = c["scan"] + c["join"]
    for v, share in want[k].items():
        if n < 400 or abs(c[v] / n - share) > 0.03 + (0.07 if share < 1 else 0):
            sys.exit("phase %d: %s %d of %d samples (want %.0f%%)" % (k + 1, v, c[v], n, 100 * share))
for v, k in (("scan", 0), ("join", 1)):
    first = min(f for f, n in pg.bins[v])
    if abs(first - starts[k]) > 0.1:
        sys.exit("the %s lane starts at %.3f s, phase %d at %.3f s" % (v, first, k + 1, starts[k]))
truth = collections.Counter(s.labels.get("operator") for s in pr.samples)
for v in ("scan", "join"):
    t = 100 * truth[v] / len(pr.samples)
    if abs(pg.share.get(v, -100) - t) > 3:
        sys.exit("table: %s %.1f%%, the profile %.1f%%" % (v, pg.share.get(v, -1), t))
if abs(100 * pg.share["scan"] / (pg.share["scan"] + pg.share["join"]) - 50) > 3:
    sys.exit("table: scan %.1f%% and join %.1f%%: not half and half" % (pg.share["scan"], pg.share["join"]))
PY
}
check views_html_phases html_phases

# In a real browser: the lanes' colours on screen (the two busiest lanes,
# scan and join, a second or more each at full height: thousands of
# pixels), the SVG in the DOM, and no request from the page. The control
# page that loads an image must show its request, or the check is blind.
# The screenshot is the README's (docs/timeline.png).
html_browser() {
	local out
	command -v chromium >/dev/null || { echo "chromium is not installed (deploy/debian-deps.sh)"; return 1; }
	out=$(python3 "$TESTS/browser_check.py" "$TMP/tl.html" "$TMP/shot.png" '#4e79a7' '#f28e2b') ||
		{ echo "$out"; return 1; }
	echo "$out" | awk '/^pixels/ && $3 < 2000 { bad = 1 } /^rects/ && $2 < 100 { bad = 1 }
		/^svg no/ || /^request/ { bad = 1 } END { exit bad }' ||
		{ echo "rendered: $(echo "$out" | tr '\n' ' ')"; return 1; }
	printf '<html><body><img src="http://127.0.0.1:9/x.png"></body></html>' >"$TMP/ctl.html"
	python3 "$TESTS/browser_check.py" "$TMP/ctl.html" "$TMP/ctl.png" | grep -q '^request http://127.0.0.1:9/x.png' ||
		{ echo "the control page's request was not seen: the network check is blind"; return 1; }
	mkdir -p "${BUILD:-build}" && cp "$TMP/shot.png" "${BUILD:-build}/timeline.png"
}
check views_html_browser html_browser

# expect RC PATTERN ARGS...: report timeline exits RC and says PATTERN.
expect() { says "$1" "$2" "$TAGPROF" report timeline "${@:3}"; }

bad_input() {
	"$TAGPROF" report pprof "$TMP/tl.pb.gz" -o "$TMP/agg.pb.gz" 2>/dev/null
	"$TAGPROF" report pprof "$TMP/tl.pb.gz" --from 1h -o "$TMP/none.pb.gz" 2>/dev/null
	head -c 3000 "$TMP/tl.pb.gz" >"$TMP/cut.pb.gz"
	expect 2 'no sample times.*record -T' "$TMP/agg.pb.gz" -o "$TMP/x.json.gz" &&
	expect 2 'corrupt or truncated' "$TMP/cut.pb.gz" -o "$TMP/x.json.gz" &&
	expect 2 'needs --by' "$TMP/tl.pb.gz" -o "$TMP/x.html" &&
	expect 2 'tag fields: .*operator' "$TMP/tl.pb.gz" --by nosuch -o "$TMP/x.html" &&
	expect 2 'name the output' "$TMP/tl.pb.gz" -o "$TMP/x.txt" &&
	[ ! -e "$TMP/x.json.gz" ] && [ ! -e "$TMP/x.html" ] ||
		{ echo "a refused report left a file"; return 1; }
	# an empty profile, and a window past the end: valid empty files, exit 1
	expect 1 'no sample was kept' "$TMP/none.pb.gz" -o "$TMP/e1.json.gz" &&
	expect 1 'no sample was kept' "$TMP/tl.pb.gz" --from 1h -o "$TMP/e2.json.gz" &&
	python3 "$TESTS/firefox_check.py" "$TMP/e1.json.gz" | grep -q '^ok: 0 threads' &&
	python3 "$TESTS/firefox_check.py" "$TMP/e2.json.gz" | grep -q '^ok: 0 threads' ||
		{ echo "an empty timeline is not a valid empty profile"; return 1; }
}
check views_bad_input bad_input
