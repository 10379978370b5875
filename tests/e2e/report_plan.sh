#!/usr/bin/env bash
# tagprof report plan: profiles written by an independent writer
# (tests/pprof_write.py, from profile.proto's field numbers) with known
# query > operator > pipeline labels; the tree, its numbers and the
# processes' attributed shares checked in the text and in the HTML page
# (parsed with Python's html.parser, and rendered by headless Chromium)
# against a tree computed here from the samples written; the same tree
# from go tool pprof -tagroot; the cuts, the levels' sources, the errors.
# Reads and writes files only: no BPF, no root.
. "$(dirname "$0")/../lib.sh"

TESTS=$(cd "$(dirname "$0")/.." && pwd)

# The fixture. plan.pb.gz: 600 per-sample samples (value 1, t = 10 ms
# apart), gzipped, the levels in its comment, sample types samples then
# cpu. agg.pb: the same merged by labels (values summed), raw, repeated
# fields unpacked, no comment, cpu first. expect.json: the trees and the
# processes of the cases below, computed from the samples written.
py "$TMP" <<'PY' || { echo "FAIL plan_fixture: the writer failed"; exit 0; }
import collections, json, random, sys, pprof_write
d = sys.argv[1]
rnd = random.Random(14)
HOSTILE = '<i>&"op\''
ops = {"q17": ["HashJoin#3", "Scan#1", HOSTILE], "q2": ["Sort#5", "Scan#1"]}
procs = [("engine", 4242), ("engine", 4343), ("postgres", 77)]
samples = []
for i in range(600):
    name, pid = rnd.choice(procs[:2]) if rnd.random() < 0.85 else procs[2]
    lab = {"process": name, "pid": pid, "thread_name": "w"}
    r = rnd.random()
    if name == "engine" and r < 0.8:
        q = rnd.choice(sorted(ops))
        lab["query"] = q
        if rnd.random() < 0.9:
            lab["operator"] = rnd.choice(ops[q])
            if rnd.random() < 0.8:
                lab["pipeline"] = rnd.randint(1, 3)    # a tag field: a number
    elif name == "engine" and r < 0.9:
        lab.update(operator="Scan#1", pipeline=1)      # no query
    samples.append((i * 10**7, lab))

T0 = 1_700_000_000 * 10**9
w = pprof_write.Writer([("samples", "count"), ("cpu", "nanoseconds")],
                       period_type=("cpu", "nanoseconds"), period=10**7,
                       time_nanos=T0, duration_nanos=6 * 10**9)
w.comment("code levels: query > operator > pipeline")
for t, lab in samples:
    w.sample(["f", "main"], [1, 10**7], dict(lab, t=(t, "nanoseconds")))
w.save(d + "/plan.pb.gz")
merged = collections.Counter(tuple(sorted(l.items())) for _, l in samples)
a = pprof_write.Writer([("cpu", "nanoseconds"), ("samples", "count")],
                       period_type=("cpu", "nanoseconds"), period=10**7,
                       time_nanos=T0, packed=False)
for lab, n in sorted(merged.items(), key=str):
    a.sample(["f", "main"], [n * 10**7, n], dict(lab))
a.save(d + "/agg.pb")

def tree(labs, levels):
    """(total, rows in the report's order) of the samples' labels."""
    root = {"kids": {}, "incl": 0}
    for lab in labs:
        path = []
        for k in levels:
            if k not in lab:
                break
            path.append((k, str(lab[k])))
        node = root
        root["incl"] += 1
        for key in path or [(None, "(unattributed)")]:
            node = node["kids"].setdefault(key, {"kids": {}, "incl": 0, "excl": 0})
            node["incl"] += 1
        node["excl"] += 1
    rows = []
    def walk(n, depth):
        for (k, v), c in sorted(n["kids"].items(), key=lambda kv: (
                -kv[1]["incl"], kv[0][0] is None, kv[0][1].encode())):
            rows.append({"depth": depth, "key": k, "value": v,
                         "incl": c["incl"], "excl": c["excl"]})
            walk(c, depth + 1)
    walk(root, 0)
    return {"total": root["incl"], "rows": rows}

def processes(labs, first):
    n = collections.defaultdict(lambda: [0, 0])
    for lab in labs:
        n[(lab["process"], lab["pid"])][0] += 1
        n[(lab["process"], lab["pid"])][1] += first in lab
    out = sorted(n.items(), key=lambda kv: (-kv[1][1], -kv[1][0], kv[0][0], kv[0][1]))
    return [["%s (pid %d)" % k, v[0], v[1]] for k, v in out]

L3 = ["query", "operator", "pipeline"]
labs = [l for _, l in samples]
e = {
    "all": tree(labs, L3), "procs": processes(labs, "query"),
    "q2": tree([l for l in labs if l.get("query") == "q2"], L3),
    "window": tree([l for t, l in samples if 2 * 10**9 <= t <= 3 * 10**9], L3),
    "ops": tree(labs, ["operator", "pipeline"]),
    "hostile": HOSTILE,
}
json.dump(e, open(d + "/expect.json", "w"))
PY

# rows FILE: the tree's rows of a text report as JSON lines:
# {depth, key, value, incl, excl, incl_pct, excl_pct}.
rows() {
	py "$1" <<'PY'
import json, re, sys
tree = False
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.rstrip("\n")
    if line.startswith(" incl%"):
        tree = True
        continue
    if not tree:
        continue
    m = re.match(r"^ *([\d.]+)%  +([\d.]+)%  +(\d+)  ( *)(.*)$", line)
    if not m:
        sys.exit("not a tree row: %r" % line)
    name = m.group(5)
    key, _, val = name.partition("=") if name != "(unattributed)" else (None, "", name)
    print(json.dumps({"depth": len(m.group(4)) // 2, "key": key, "value": val,
                      "incl": int(m.group(3)), "incl_pct": m.group(1),
                      "excl_pct": m.group(2)}))
PY
}

# same_tree FILE CASE: the text report FILE's tree is expect.json's CASE,
# row by row, in order, with its shares to one decimal.
same_tree() {
	rows "$1" >"$TMP/rows.json" || { cat "$TMP/rows.json"; return 1; }
	py "$TMP/rows.json" "$TMP/expect.json" "$2" <<'PY'
import json, sys
got = [json.loads(l) for l in open(sys.argv[1])]
e = json.load(open(sys.argv[2]))[sys.argv[3]]
pct = lambda v: "%.1f" % (100.0 * v / e["total"])
want = [dict(depth=r["depth"], key=r["key"], value=r["value"], incl=r["incl"],
             incl_pct=pct(r["incl"]), excl_pct=pct(r["excl"])) for r in e["rows"]]
if got != want:
    for i, (g, w) in enumerate(zip(got + [None] * len(want), want + [None] * len(got))):
        if g != w:
            sys.exit("row %d: got %s, want %s (%d rows, want %d)" % (i, g, w, len(got), len(want)))
PY
}

"$TAGPROF" report plan "$TMP/plan.pb.gz" >"$TMP/plan.txt" 2>"$TMP/plan.err"
text_rc=$?

plan_text() {
	[ $text_rc = 0 ] || { echo "exit $text_rc: $(cat "$TMP/plan.err")"; return 1; }
	grep -qx 'levels: query > operator > pipeline (from the profile.s comment)' "$TMP/plan.txt" &&
	grep -qx '600 samples (count) in all; every share is of all of them' "$TMP/plan.txt" ||
		{ echo "header: $(head -3 "$TMP/plan.txt")"; return 1; }
	grep -q '600 of 600 samples kept from 1 file, [0-9]* components; wrote standard output' "$TMP/plan.err" ||
		{ echo "summary: $(cat "$TMP/plan.err")"; return 1; }
	same_tree "$TMP/plan.txt" all
}
check plan_text plan_text

# Each process's samples and attributed ones (those with a query); the
# one without any (postgres) on the line of the others.
plan_processes() {
	py "$TMP/plan.txt" "$TMP/expect.json" <<'PY'
import json, re, sys
lines = open(sys.argv[1]).read().split("\n\n")[1].splitlines()
if not lines[0].startswith("process ") or "attributed (query)" not in lines[0]:
    sys.exit("header: %r" % lines[0])
got = []
for l in lines[1:]:
    m = re.match(r"^(.*?)  +(\d+)  +(\d+) +([\d.]+)%$", l)
    if not m:
        sys.exit("not a process line: %r" % l)
    got.append([m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)])
want = []
rest = 0
for name, n, attr in json.load(open(sys.argv[2]))["procs"]:
    if attr:
        want.append([name, n, attr, "%.1f" % (100.0 * attr / n)])
    else:
        rest += n
want.append(["1 other process", rest, 0, "0.0"])
if got != want:
    sys.exit("got %s, want %s" % (got, want))
PY
}
check plan_processes plan_processes

# The aggregated, raw, unpacked file with cpu first and no comment: the
# same tree, by the samples column, with --levels.
plan_aggregated() {
	"$TAGPROF" report plan "$TMP/agg.pb" --levels query,operator,pipeline \
		-o "$TMP/agg.txt" 2>"$TMP/agg.err" ||
		{ echo "exit $?: $(cat "$TMP/agg.err")"; return 1; }
	grep -q '(from --levels)' "$TMP/agg.txt" || { echo "$(head -2 "$TMP/agg.txt")"; return 1; }
	[ "$(stat -c %a "$TMP/agg.txt")" = 640 ] || { echo "mode $(stat -c %a "$TMP/agg.txt")"; return 1; }
	[ -z "$(find "$TMP" -name '.*' -newer "$TMP/agg.pb")" ] ||
		{ echo "left behind: $(find "$TMP" -name '.*' -newer "$TMP/agg.pb")"; return 1; }
	same_tree "$TMP/agg.txt" all &&
	diff <(sed 1,2d "$TMP/plan.txt") <(sed 1,2d "$TMP/agg.txt")
}
check plan_aggregated plan_aggregated

# go tool pprof -tagroot puts the same labels at the stacks' roots: its
# traces, cut at the first missing level (<unknown>), give the same tree.
plan_pprof_tagroot() {
	command -v go >/dev/null || { echo "no go tool"; return 1; }
	traces "$TMP/agg.pb" -tagroot=query,operator,pipeline >"$TMP/traces" ||
		{ echo "pprof: $(cat "$TMP/pprof.err")"; return 1; }
	rows "$TMP/agg.txt" >"$TMP/agg_rows.json" || return 1
	py "$TMP/traces" "$TMP/agg_rows.json" <<'PY'
import json, sys
theirs = {}
for line in open(sys.argv[1]):
    n, stack = line.rstrip("\n").split(" ", 1)
    path = []
    for f in stack.split(";")[-3:][::-1]:      # root first: query, operator, pipeline
        if f == "<unknown>":
            break
        path.append(f)
    path = path or ["(unattributed)"]
    for i in range(len(path)):
        theirs[tuple(path[:i + 1])] = theirs.get(tuple(path[:i + 1]), 0) + int(n)
ours, path = {}, []
for line in open(sys.argv[2]):
    r = json.loads(line)
    del path[r["depth"]:]
    path.append(r["value"])
    ours[tuple(path)] = r["incl"]
if ours != theirs:
    sys.exit("ours vs pprof's: %s" % {k: (ours.get(k), theirs.get(k))
             for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k)})
PY
}
check plan_pprof_tagroot plan_pprof_tagroot

# The page: parsed, every node a row with its numbers and a box with its
# path and share on hover, the hostile value escaped (parsed back whole),
# nothing that runs or fetches.
"$TAGPROF" report plan "$TMP/plan.pb.gz" -o "$TMP/plan.html" 2>"$TMP/html.err"
html_rc=$?

plan_html() {
	[ $html_rc = 0 ] || { echo "exit $html_rc: $(cat "$TMP/html.err")"; return 1; }
	[ "$(stat -c %a "$TMP/plan.html")" = 640 ] || { echo "mode $(stat -c %a "$TMP/plan.html")"; return 1; }
	py "$TMP/plan.html" "$TMP/expect.json" <<'PY'
import html.parser, json, sys

class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables, self.rows, self.boxes = [], [], {}
        self.csp, self.bad, self.box, self.title = None, [], None, None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.tables.append(a.get("id"))
        if tag == "tr" and self.tables[-1:] == ["tree"] and "data-node" in a:
            self.rows.append(a)
        if tag == "svg" and a.get("class") == "box":
            self.box = a["data-node"]
        if tag == "title" and self.box:
            self.title = ""
        if tag == "meta" and a.get("http-equiv") == "Content-Security-Policy":
            self.csp = a["content"]
        if tag in ("script", "iframe", "object", "embed", "link", "img"):
            self.bad.append(tag)
        self.bad += [k for k in a if k in ("src", "href") or k.startswith("on")]
    def handle_endtag(self, tag):
        if tag == "title" and self.title is not None:
            self.boxes[self.box] = self.title
            self.title = None
    def handle_data(self, data):
        if self.title is not None:
            self.title += data

p = Page()
p.feed(open(sys.argv[1], encoding="utf-8").read())
e = json.load(open(sys.argv[2]))
if p.bad or not p.csp or "default-src 'none'" not in p.csp:
    sys.exit("active or fetching content: %s, CSP %r" % (p.bad, p.csp))
want, tot = e["all"]["rows"], e["all"]["total"]
if len(p.rows) != len(want):
    sys.exit("%d rows, want %d" % (len(p.rows), len(want)))
path = []
for r, w in zip(p.rows, want):
    got = (int(r["data-depth"]), r["data-level"] or None, r["data-value"],
           int(r["data-samples"]), r["data-incl"], r["data-excl"])
    exp = (w["depth"], w["key"], w["value"], w["incl"],
           "%.2f" % (100.0 * w["incl"] / tot), "%.2f" % (100.0 * w["excl"] / tot))
    if got != exp:
        sys.exit("row %s, want %s" % (got, exp))
    del path[w["depth"]:]
    path.append(w["key"] + "=" + w["value"] if w["key"] else w["value"])
    title = p.boxes.get(r["data-node"])
    head = " > ".join(path) + ": %.1f%% inclusive, %.1f%% exclusive, %d samples" % (
        100.0 * w["incl"] / tot, 100.0 * w["excl"] / tot, w["incl"])
    if title != head:
        sys.exit("box %s: title %r, want %r" % (r["data-node"], title, head))
if not any(r["data-value"] == e["hostile"] for r in p.rows):
    sys.exit("the hostile value did not come back whole")
PY
}
check plan_html plan_html

# Chromium draws the page: the icicle's boxes in the levels' colors, and
# no request leaves it.
plan_browser() {
	command -v chromium >/dev/null || { echo "no chromium"; return 1; }
	out=$(python3 "$TESTS/browser_check.py" "$TMP/plan.html" "$TMP/plan.png" \
		'#a0cbe8' '#ffbe7d' '#8cd17d') || { echo "$out"; return 1; }
	nodes=$(grep -c '<svg class="box"' "$TMP/plan.html")
	echo "$out" | awk -v n="$nodes" '/^pixels/ && $3 < 500 { bad = 1 }
		/^rects/ && $2 < n { bad = 1 } /^svg no/ || /^request/ { bad = 1 }
		END { exit bad }' ||
		{ echo "rendered ($nodes boxes): $(echo "$out" | tr '\n' ' ')"; return 1; }
}
if command -v chromium >/dev/null; then
	check plan_browser plan_browser
else
	skip plan_browser "no chromium (Debian package chromium)"
fi

# The cuts of the other reports: --label, and a window of the per-sample
# file (--from 2s --to 3s: 101 samples, both ends kept); the shares are
# of the samples kept.
plan_cuts() {
	"$TAGPROF" report plan "$TMP/plan.pb.gz" --label query=q2 >"$TMP/q2.txt" 2>/dev/null &&
	same_tree "$TMP/q2.txt" q2 &&
	"$TAGPROF" report plan "$TMP/plan.pb.gz" --from 2s --to 3s >"$TMP/w.txt" 2>/dev/null &&
	same_tree "$TMP/w.txt" window || return 1
	grep -qx '101 samples (count) in all; every share is of all of them' "$TMP/w.txt" ||
		{ echo "window: $(sed -n 3p "$TMP/w.txt")"; return 1; }
}
check plan_cuts plan_cuts

# --levels wins over the comment; inputs whose comments disagree are said,
# and the first one's levels used.
plan_levels() {
	"$TAGPROF" report plan "$TMP/plan.pb.gz" --levels operator,pipeline >"$TMP/ops.txt" 2>/dev/null &&
	same_tree "$TMP/ops.txt" ops || return 1
	py "$TMP" <<'PY' || return 1
import sys, pprof_write
w = pprof_write.Writer([("samples", "count")])
w.comment("code levels: operator > pipeline")
w.sample(["f"], [7], {"operator": "Sort#5", "pipeline": 1, "query": "q9"})
w.save(sys.argv[1] + "/other.pb")
PY
	says 0 'plan.pb.gz names the levels query > operator > pipeline, .*other.pb names operator > pipeline: using the first' \
		"$TAGPROF" report plan "$TMP/plan.pb.gz" "$TMP/other.pb" &&
	"$TAGPROF" report plan "$TMP/plan.pb.gz" "$TMP/other.pb" 2>/dev/null | grep -q '^ *[0-9.]*% .*  query=q9$' ||
		{ echo "the second input's sample is not under query=q9"; return 1; }
}
check plan_levels plan_levels

# expect RC PATTERN ARGS...: report plan exits RC and says PATTERN.
expect() { says "$1" "$2" "$TAGPROF" report plan "${@:3}"; }

plan_errors() {
	py "$TMP" <<'PY' || return 1
import sys, pprof_write
w = pprof_write.Writer([("samples", "count")])
w.sample(["f"], [2], {"query": "a\x1b[2Jb\nc"})
w.save(sys.argv[1] + "/nolevels.pb")
PY
	head -c 600 "$TMP/plan.pb.gz" >"$TMP/cut.pb.gz"
	expect 2 'nosuch.pb.gz: No such file' "$TMP/nosuch.pb.gz" &&
	expect 2 'no levels: .*pass --levels' "$TMP/nolevels.pb" &&
	expect 2 "unrecognized option '--bogus'" "$TMP/plan.pb.gz" --bogus &&
	expect 2 'no input profile' --levels query &&
	expect 2 'name the output .txt or .html' "$TMP/plan.pb.gz" -o "$TMP/x.json" &&
	expect 2 'the level query twice' "$TMP/plan.pb.gz" --levels query,query &&
	expect 2 'corrupt or truncated' "$TMP/cut.pb.gz" &&
	expect 2 '--by is for report timeline' "$TMP/plan.pb.gz" --by query &&
	expect 2 '--from/--to need a per-sample profile' "$TMP/agg.pb" --levels query --from 1s &&
	says 2 '--levels is for report plan' "$TAGPROF" report pprof "$TMP/plan.pb.gz" --levels query -o "$TMP/x.pb.gz" &&
	expect 1 'no sample was kept' "$TMP/plan.pb.gz" --label query=nosuch -o "$TMP/empty.txt" || return 1
	[ ! -e "$TMP/x.json" ] || { echo "a refused report left a file"; return 1; }
	# a label value that would drive the terminal stays on its line, escaped
	"$TAGPROF" report plan "$TMP/nolevels.pb" --levels query 2>/dev/null >"$TMP/esc.txt" &&
	grep -qxF '100.0%  100.0%           2  query=a\x1b[2Jb\x0ac' "$TMP/esc.txt" &&
	! grep -q $'\x1b' "$TMP/esc.txt" || { echo "not escaped: $(cat -A "$TMP/esc.txt")"; return 1; }
}
check plan_errors plan_errors

plan_help() {
	"$TAGPROF" report --help | grep -q 'tagprof report plan IN.pb.gz... \[CUT\] \[--levels K1,K2,...\]' &&
	"$TAGPROF" report --help | grep -q -- '--levels K1,K2,...    plan: the levels, outermost first' ||
		{ echo "report --help does not describe plan"; return 1; }
}
check plan_help plan_help
