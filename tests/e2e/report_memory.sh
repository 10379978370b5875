#!/usr/bin/env bash
# tagprof report memory: memory-access profiles written by an independent
# writer (tests/pprof_write.py, from profile.proto's field numbers) as
# record -T -e mem-loads writes them: a sequential scan of 4 MiB, a random
# scatter over a 1 MiB heap with 3 hot buckets, a few unmapped and
# addressless samples, and lost ones. The text's coverage, working sets,
# skew and --by shares are checked against the same numbers computed here
# from the samples written; the page is parsed (the scan a rising
# diagonal of heat cells, the heap a scatter) and drawn by headless
# Chromium; then the cuts, bad buckets, profiles without addresses, and
# kernel and user addresses mixed, in bounded memory.
# Reads and writes files only: no BPF, no root.
. "$(dirname "$0")/../lib.sh"

TESTS=$(cd "$(dirname "$0")/.." && pwd)

# The fixture: mem.pb.gz, and expect.json with the numbers the report
# must give, whole and for each cut below.
py "$TMP" <<'PY' || { echo "FAIL memory_fixture: the writer failed"; exit 0; }
import collections, json, math, random, sys, pprof_write
d = sys.argv[1]
rnd = random.Random(23)
T0, S = 1_700_000_000 * 10**9, 10**9
SCAN, HEAP = 0x7f3a00000000, 0x55d0c0000000
HOT = [0x1000, 0x5000, 0x9000]
rows = []       # (t, addr or None, labels)
for i in range(4096):            # 4 MiB in address order over 2 s
    rows.append((i * 2 * S // 4096, SCAN + i * 1024, {
        "data_object": "scan_buf (memaccess)", "query_id": "q1",
        "operator": "scan", "data_src": "L1 hit"}))
for i in range(3000):            # the heap at random over 2 s to 4 s
    a = HEAP + (rnd.randrange(1 << 20) if i % 2 else rnd.choice(HOT) + rnd.randrange(4096))
    q = "q1" if rnd.random() < 0.7 else "q2"
    rows.append((2 * S + rnd.randrange(2 * S), a, {
        "data_object": "[heap]", "query_id": q, "operator": 3,
        "weight": (40 if q == "q1" else 200, "cycles"), "data_src": "L3 hit"}))
for i in range(5):               # addresses in no mapping
    rows.append((S, 0x10 + 8 * i, {"data_object": "[unmapped]", "query_id": "q2"}))
for i in range(10):              # no address at all
    rows.append((3 * S, None, {"query_id": "q1"}))

w = pprof_write.Writer([("samples", "count"), ("mem-loads", "count"), ("weight", "cycles")],
                       period_type=("mem-loads", "count"), period=1000,
                       time_nanos=T0, duration_nanos=4 * S)
w.comment("memory event: mem-loads, period 1000")
w.comment("ldlat: 30 cycles")
for t, a, lab in sorted(rows, key=lambda r: r[0]):
    lab = dict(lab, t=(t, "nanoseconds"), process="memaccess", pid=4242, tid=4243)
    if a is not None:
        lab["addr"] = a
    wt = lab["weight"][0] if "weight" in lab else 0
    w.sample(["load", "main"], [1, 1000, wt], lab)
# the ring buffer's lost samples: one Sample, no time, no address
w.sample(["[lost: the ring buffer was full]"], [3, 3000, 0], {"process": "[tagprof]"})
w.save(d + "/mem.pb.gz")

def pct(p, w):
    return "%.1f" % (100.0 * p / w if w else 0.0)

def views(rows):
    """The report's numbers for these (t, addr, labels) rows."""
    objs = collections.defaultdict(list)
    for t, a, lab in rows:
        if a is not None:
            objs[lab["data_object"]].append((t, a, lab))
    addr = sum(len(v) for v in objs.values())
    out = {"addr": addr, "objects": {}, "ws_all": collections.Counter()}
    for name, rs in objs.items():
        b = collections.Counter(a >> 12 for _, a, _ in rs)
        counts = sorted(b.values(), reverse=True)
        n, tot = len(counts), len(rs)
        k, ws = 1, []
        while k <= counts[0]:
            m = sum(1 for c in counts if c >= k)
            ws.append([k, m, m * 4096])
            out["ws_all"][k] += m
            k *= 2
        t1, t10 = -(-n // 100), -(-n // 10)
        by = collections.defaultdict(lambda: [0, 0])
        for _, _, lab in rs:
            by[lab["query_id"]][0] += 1
            by[lab["query_id"]][1] += lab.get("weight", (0,))[0]
        wsum = sum(v[1] for v in by.values())
        out["objects"][name] = {
            "samples": tot, "share": pct(tot, addr), "touched": n, "ws": ws,
            "skew": [t1, pct(sum(counts[:t1]), tot), t10, pct(sum(counts[:t10]), tot)],
            "skew2": ["%.2f" % (100.0 * sum(counts[:t1]) / tot), "%.2f" % (100.0 * sum(counts[:t10]) / tot)],
            "top": [hex(max(b, key=lambda x: (b[x], -x)) << 12), counts[0]],
            "by": {q: [v[0], pct(v[0], tot), v[1] if wsum else None,
                       pct(v[1], wsum) if wsum else None, "%.2f" % (100.0 * v[0] / tot)]
                   for q, v in by.items()},
        }
    out["ws_all"] = sorted(out["ws_all"].items())
    return out

e = {"all": views(rows), "read": len(rows) + 3, "lost": 3, "kept": len(rows),
     "resolved": sum(1 for _, a, l in rows if a is not None and l["data_object"] != "[unmapped]")}
window = [r for r in rows if S // 2 <= r[0] <= S]
e["window"] = dict(views(window), kept=len(window))
q2 = [r for r in rows if r[2]["query_id"] == "q2"]
e["q2"] = dict(views(q2), kept=len(q2))
op3 = [r for r in rows if r[2].get("operator") == 3]
e["op3"] = dict(views(op3), kept=len(op3))
e["tmax"] = max(t for t, a, _ in rows if a is not None)
json.dump(e, open(d + "/expect.json", "w"))
PY

# report ARGS...: the text report of mem.pb.gz with ARGS into $TMP/r.txt
# (its stderr $TMP/r.err); says why when it fails.
report() {
	"$TAGPROF" report memory "$TMP/mem.pb.gz" "$@" -o "$TMP/r.txt" 2>"$TMP/r.err" ||
		{ echo "report memory $*: exit $?: $(cat "$TMP/r.err")"; return 1; }
}

# same_views CASE: the text report in $TMP/r.txt has expect.json's CASE:
# per object its samples and share, buckets touched, skew, hottest bucket,
# every point of its working set (bytes, and the estimate at k x 1000),
# and, with --by query_id, each value's samples and latency shares.
same_views() {
	py "$TMP/r.txt" "$TMP/expect.json" "$1" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
e = json.load(open(sys.argv[2]))[sys.argv[3]]
secs = re.split(r"^== ", text, flags=re.M)
def section(title, prefix=False):
    for s in secs:
        head = s.split("\n", 1)[0]
        if head == title or (prefix and head.startswith(title)):
            return s
    sys.exit("no section '== %s'" % title)
def ws_rows(s):
    body = s.split("working set:\n", 1)[1].split("\n")[1:]
    out = []
    for line in body:
        m = re.match(r"^ +(\d+) +(\d+|n/a) +(\d+) +(\d+) +\S+ \S+ +[\d.]+%$", line)
        if not m:
            break
        out.append([int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4))])
    return out
m = re.search(r"^  with an address +(\d+) ", text, re.M)
if not m or int(m.group(1)) != e["addr"]:
    sys.exit("with an address: %s, want %d" % (m and m.group(1), e["addr"]))
for name, o in e["objects"].items():
    s = section("object " + name)
    want = "samples: %d (%s%% of those with an address)" % (o["samples"], o["share"])
    if want not in s:
        sys.exit("%s: no '%s' in:\n%s" % (name, want, s[:300]))
    if "\ntouched: %d buckets" % o["touched"] not in s:
        sys.exit("%s: not %d buckets touched" % (name, o["touched"]))
    k = o["skew"]
    want = "skew: top 1%% of buckets (%d) hold %s%% of samples; top 10%% (%d) hold %s%%" % tuple(k)
    if want not in s:
        sys.exit("%s: no '%s' in %s" % (name, want, re.findall("skew:.*", s)))
    top = re.search(r"top buckets:\n +0x0*([0-9a-f]+) +(\d+) ", s)
    if not top or (int(top.group(1), 16), int(top.group(2))) != (int(o["top"][0], 16), o["top"][1]):
        sys.exit("%s: top bucket %s, want %s" % (name, top and top.groups(), o["top"]))
    want = [[k, str(k * 1000), n, b] for k, n, b in o["ws"]]
    if ws_rows(s) != want:
        sys.exit("%s: working set %s, want %s" % (name, ws_rows(s), want))
    if "\nby query_id " in s:
        for q, (n, share, lat, lshare, _) in o["by"].items():
            row = "\n  query_id=%s  %d %s%%  %s\n" % (q, n, share,
                  "%d %s%%" % (lat, lshare) if lat is not None else "n/a")
            if row not in s:
                sys.exit("%s: no row %r in %s" % (name, row, re.findall("\n  query_id=.*", s)))
all_ws = ws_rows(section("all objects: ", True))
if [[k, n] for k, _, n, _ in all_ws] != e["ws_all"]:
    sys.exit("all objects' working set %s, want %s" % (all_ws, e["ws_all"]))
PY
}

# The whole file: the coverage honest at the top, and every view.
text_whole() {
	report --by query_id || return 1
	py "$TMP/r.txt" "$TMP/expect.json" <<'PY' || return 1
import json, sys
t = open(sys.argv[1]).read().split("\n")
e = json.load(open(sys.argv[2]))
want = [
    "coverage:",
    "  samples read            %d (1 file)" % e["read"],
    "  lost                    3 (untimed: no time, address or labels; left out)",
    "  kept                    %d" % e["kept"],
    "  with an address         %d (%.1f%% of kept)" % (e["all"]["addr"], 100.0 * e["all"]["addr"] / e["kept"]),
    "  with a resolved object  %d (%.1f%% of kept; not: no data_object, [unmapped], [unknown])" % (e["resolved"], 100.0 * e["resolved"] / e["kept"]),
    "  event                   mem-loads (from the profile's comment)",
    "  period                  1000 (each sample stands for 1000 events)",
    "  ldlat                   30 cycles",
    "  bucket                  4 KiB",
    "  time                    0.000 s to %.3f s" % (e["tmax"] / 1e9),
]
if t[1:1 + len(want)] != want:
    sys.exit("coverage:\n%s\nwant:\n%s" % ("\n".join(t[1:1 + len(want)]), "\n".join(want)))
PY
	same_views all || return 1
	# the scan's 4 MiB: all of it at k = 1, 2, 4, none at 8
	grep -A5 '^== object scan_buf (memaccess)$' "$TMP/r.txt" | grep -qx 'touched: 1024 buckets (4 MiB)' &&
	awk '/^== object scan_buf \(memaccess\)$/ { s = 1 } s && /^working set:/ { w = 1; getline; next }
		w && /^ +1 +1000 +1024 +4194304 +4 MiB +100.0%$/ { ok = 1 } w && !/^ +[0-9]/ { exit }
		END { exit !ok }' "$TMP/r.txt" || { echo "scan_buf: not 4 MiB at k=1"; return 1; }
	grep -q 'each sample stands for the 1000 events of its period' "$TMP/r.txt" &&
	grep -q '^latency: n/a (no sample has a weight)$' "$TMP/r.txt" ||
		{ echo "no estimate note or no n/a latency"; return 1; }
	grep -qx 'tagprof report memory: 7111 of 7114 samples kept from 1 file, 7101 with an address, 3 data objects; wrote '"$TMP"'/r.txt' "$TMP/r.err" &&
	grep -qx 'tagprof report memory: 3 lost samples (untimed) left out' "$TMP/r.err" ||
		{ echo "summary: $(cat "$TMP/r.err")"; return 1; }
	[ "$(stat -c %a "$TMP/r.txt")" = 640 ] || { echo "mode $(stat -c %a "$TMP/r.txt")"; return 1; }
}
check memory_text text_whole

# --by query_id: the heap's q1 and q2 shares of its samples and latency
# (weights 40 and 200 cycles), and each value's own views.
text_by() {
	report --by query_id || return 1
	grep -qx '== object \[heap\], query_id=q2' "$TMP/r.txt" &&
	grep -qx 'by query_id (value, samples and share, latency in cycles and share):' "$TMP/r.txt" ||
		{ echo "no per-value sections"; return 1; }
	py "$TMP/r.txt" "$TMP/expect.json" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
h = json.load(open(sys.argv[2]))["all"]["objects"]["[heap]"]
for q, (n, share, lat, lshare, _) in h["by"].items():
    s = text.split("\n== object [heap], query_id=%s\n" % q, 1)[1].split("\n== ", 1)[0]
    want = "samples: %d (%s%% of the object's)\nlatency: %d cycles (%s%% of the object's)" % (n, share, lat, lshare)
    if not s.startswith(want):
        sys.exit("query_id=%s: %r, want %r" % (q, s[:120], want))
PY
}
check memory_by_shares text_by

# The page: parsed; nothing runs or is fetched; each object's numbers in
# its data- attributes; the scan's heat cells on a rising diagonal
# (address against time: correlation over 0.95), the heap's a scatter
# (under 0.2 either way).
"$TAGPROF" report memory "$TMP/mem.pb.gz" --by query_id -o "$TMP/mem.html" 2>"$TMP/html.err"
html_rc=$?

html_views() {
	[ $html_rc = 0 ] || { echo "exit $html_rc: $(cat "$TMP/html.err")"; return 1; }
	[ "$(stat -c %a "$TMP/mem.html")" = 640 ] || { echo "mode $(stat -c %a "$TMP/mem.html")"; return 1; }
	py "$TMP/mem.html" "$TMP/expect.json" <<'PY'
import html.parser, json, re, sys

class Page(html.parser.HTMLParser):
    """The page's numbers; every element closed in order (its validity:
    html.parser itself takes anything)."""
    def __init__(self):
        super().__init__()
        self.obj, self.o, self.open = None, {}, []
        self.csp, self.bad = None, []
    def handle_endtag(self, tag):
        if not self.open or self.open.pop() != tag:
            sys.exit("</%s> closes <%s>" % (tag, self.open[-1] if self.open else "nothing"))
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag not in ("meta", "br", "hr", "img", "link", "input"):
            self.open.append(tag)
        if tag == "meta" and a.get("http-equiv") == "Content-Security-Policy":
            self.csp = a["content"]
        if tag in ("script", "iframe", "object", "embed", "link", "img", "image"):
            self.bad.append(tag)
        self.bad += [k for k in a if k == "src" or k.startswith("on") or
                     (k == "href" and not a[k].startswith("#"))]
        if tag == "section":
            self.obj = a["data-object"]
            self.o[self.obj] = {"ws": [], "comps": {}, "cells": [], "details": 0}
        if self.obj is None:
            return
        o = self.o[self.obj]
        if tag == "details":
            o["details"] += 1
        if o["details"]:
            return          # a value's views: the object's own come first
        if tag == "p" and "data-samples" in a and "sum" not in o:
            o["sum"] = (int(a["data-samples"]), int(a["data-touched-bytes"]))
        if tag == "p" and a.get("class") == "skew":
            o["skew"] = [a["data-top1"], a["data-top10"]]
        if tag == "tr" and a.get("class") == "ws" and not o.get("ws_done"):
            o["ws"].append([int(a["data-k"]), int(a["data-buckets"]), int(a["data-bytes"])])
        if tag == "table" and o["ws"]:
            o["ws_done"] = True
        if tag == "tr" and a.get("class") == "comp":
            o["comps"][a["data-value"]] = (int(a["data-samples"]), a["data-share"])
        if tag == "svg" and a.get("class") == "heat":
            o["panels"] = int(a["data-panels"])
        if tag == "rect" and re.match(r"h[0-5]$", a.get("class", "")):
            o["cells"].append((float(a["x"]) + float(a["width"]) / 2,
                               -(float(a["y"]) + float(a["height"]) / 2)))

def corr(pts):
    n = len(pts)
    mx, my = sum(x for x, _ in pts) / n, sum(y for _, y in pts) / n
    sxy = sum((x - mx) * (y - my) for x, y in pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    syy = sum((y - my) ** 2 for _, y in pts)
    return sxy / (sxx * syy) ** 0.5

p = Page()
p.feed(open(sys.argv[1], encoding="utf-8").read())
p.close()
if p.open:
    sys.exit("not closed: %s" % p.open)
e = json.load(open(sys.argv[2]))["all"]
if p.bad or not p.csp or "default-src 'none'" not in p.csp:
    sys.exit("active or fetching content: %s, CSP %r" % (p.bad, p.csp))
order = sorted(e["objects"], key=lambda k: (-e["objects"][k]["samples"], k))
if list(p.o) != order:
    sys.exit("objects %s, want %s" % (list(p.o), order))
for name, w in e["objects"].items():
    o = p.o[name]
    if o.get("sum") != (w["samples"], w["touched"] * 4096):
        sys.exit("%s: samples, touched bytes %s, want %s" % (name, o.get("sum"), (w["samples"], w["touched"] * 4096)))
    if o.get("skew") != w["skew2"]:
        sys.exit("%s: skew %s, want %s" % (name, o.get("skew"), w["skew2"]))
    if o["ws"] != w["ws"]:
        sys.exit("%s: working set %s, want %s" % (name, o["ws"], w["ws"]))
    want = {q: (v[0], v[4]) for q, v in w["by"].items()}
    if o["comps"] != want:
        sys.exit("%s: --by rows %s, want %s" % (name, o["comps"], want))
    if o.get("panels") != 1 or len(o["cells"]) < 1:
        sys.exit("%s: %s panels, %d cells" % (name, o.get("panels"), len(o["cells"])))
scan, heap = corr(p.o["scan_buf (memaccess)"]["cells"]), corr(p.o["[heap]"]["cells"])
if scan < 0.95 or abs(heap) > 0.2:
    sys.exit("address against time: scan r=%.3f (want > 0.95), heap r=%.3f (want |r| < 0.2)" % (scan, heap))
if len(p.o["scan_buf (memaccess)"]["cells"]) < 100:
    sys.exit("the scan's band has %d cells" % len(p.o["scan_buf (memaccess)"]["cells"]))
PY
}
check memory_html html_views

# Chromium draws it: heat cells in their shades, the histogram's bars, no
# request; a control page's request is seen, so the check is not blind.
html_browser() {
	command -v chromium >/dev/null || { echo "no chromium"; return 1; }
	out=$(python3 "$TESTS/browser_check.py" "$TMP/mem.html" "$TMP/mem.png" \
		'#4e79a7' '#c6dbef' '#9ecae1' '#6baed6' '#4292c6' '#2171b5' '#08519c') ||
		{ echo "$out"; return 1; }
	echo "$out" | awk '/^pixels #4e79a7/ && $3 < 5000 { bad = 1 }
		/^pixels/ && $2 != "#4e79a7" { heat += $3 } /^rects/ && $2 < 500 { bad = 1 }
		/^svg no/ || /^request/ { bad = 1 } END { exit bad || heat < 300 }' ||
		{ echo "rendered: $(echo "$out" | tr '\n' ' ')"; return 1; }
	printf '<html><body><img src="http://127.0.0.1:9/x.png"></body></html>' >"$TMP/ctl.html"
	python3 "$TESTS/browser_check.py" "$TMP/ctl.html" "$TMP/ctl.png" | grep -q '^request http://127.0.0.1:9/x.png' ||
		{ echo "the control page's request was not seen: the network check is blind"; return 1; }
}
if command -v chromium >/dev/null; then
	check memory_html_browser html_browser
else
	skip memory_html_browser "no chromium (Debian package chromium)"
fi

# The cuts of the other reports: a window (0.5 s to 1 s, both ends kept),
# a label, a register tag field without a name (a number); the views are
# of the samples kept, and the lost ones are counted whatever the cut.
cuts() {
	local c
	for c in "window --from 0.5s --to 1s" "q2 --label query_id=q2" "op3 --tag operator=3"; do
		set -- $c
		report "${@:2}" --by query_id || return 1
		grep -q "^  kept  *$(py "$TMP/expect.json" "$1" <<<'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]]["kept"])') (cut: ${*:2})$" "$TMP/r.txt" &&
		grep -q '^  lost  *3 ' "$TMP/r.txt" ||
			{ echo "$1: $(grep -E '^  (kept|lost)' "$TMP/r.txt")"; return 1; }
		same_views "$1" || { echo "($1)"; return 1; }
	done
	# the same window on the page
	"$TAGPROF" report memory "$TMP/mem.pb.gz" --from 0.5s --to 1s -o "$TMP/w.html" 2>/dev/null &&
	grep -q "<tr id=\"cov-kept\" data-n=\"$(py "$TMP/expect.json" <<<'import json, sys; print(json.load(open(sys.argv[1]))["window"]["kept"])')\"" "$TMP/w.html" ||
		{ echo "the page's window"; return 1; }
}
check memory_cuts cuts

# expect RC PATTERN ARGS...: report memory exits RC and says PATTERN.
expect() { says "$1" "$2" "$TAGPROF" report memory "${@:3}"; }

# Bad bucket sizes: each one line, exit 2, no file.
bad_bucket() {
	local b
	for b in 3000:'--bucket 3000: 3000 bytes is not a power of two' 4:'--bucket 4: out of range: a bucket is 8 B to 1 GiB' \
		2G:'out of range' 0:'out of range' 4Q:'--bucket 4Q: not a size' -64:'not a size' 0x1000:'not a size' \
		12K:'12288 bytes is not a power of two'; do
		expect 2 "${b#*:}" "$TMP/mem.pb.gz" --bucket "${b%%:*}" -o "$TMP/bad.txt" || return 1
		[ "$(wc -l <"$TMP/says.err")" = 1 ] || { echo "--bucket ${b%%:*}: $(cat "$TMP/says.err")"; return 1; }
	done
	[ ! -e "$TMP/bad.txt" ] || { echo "a refused report left a file"; return 1; }
	# the good spellings, and the bucket in the report
	for b in 64:64 8B:8 4KiB:4096 2M:2097152 1G:1073741824; do
		report --bucket "${b%%:*}" || return 1
		grep -q "^  bucket  *$(py <<<"
n = ${b#*:}
u = max(i for i in range(4) if n >> (10 * i))
print('%d %s' % (n >> (10 * u), ['B', 'KiB', 'MiB', 'GiB'][u]))") *$" "$TMP/r.txt" ||
			{ echo "--bucket ${b%%:*}: $(grep '^  bucket' "$TMP/r.txt")"; return 1; }
	done
	# 64-byte buckets part the scan's 1 KiB steps: 4096 buckets, 256 KiB
	report --bucket 64 && grep -A5 '^== object scan_buf' "$TMP/r.txt" | grep -qx 'touched: 4096 buckets (256 KiB)' ||
		{ echo "--bucket 64: $(grep -A5 '^== object scan_buf' "$TMP/r.txt")"; return 1; }
	says 2 '--bucket is for report memory' "$TAGPROF" report plan "$TMP/mem.pb.gz" --bucket 4K --levels query_id
}
check memory_bad_bucket bad_bucket

# Profiles without addresses: an aggregated memory profile (record
# without -T) and a per-sample CPU one: one line that says what to record,
# then what the profile does give (samples per data object); exit 2.
no_addr() {
	py "$TMP" <<'PY' || return 1
import sys, pprof_write
d = sys.argv[1]
w = pprof_write.Writer([("samples", "count"), ("page-faults", "count")],
                       period_type=("page-faults", "count"), period=1)
w.comment("memory event: page-faults, period 1")
for obj, n in (("scan_buf (memaccess)", 8192), ("[anon]", 24576), ("[heap]", 40)):
    w.sample(["f"], [n, n], {"data_object": obj, "query_id": "a"})
w.save(d + "/agg.pb.gz")
c = pprof_write.Writer([("samples", "count"), ("cpu", "nanoseconds")],
                       period_type=("cpu", "nanoseconds"), period=10**7, time_nanos=1)
for i in range(50):
    c.sample(["f"], [1, 10**7], {"t": (i * 10**7, "nanoseconds")})
c.save(d + "/cpu.pb.gz")
PY
	expect 2 "^tagprof report memory: $TMP/agg.pb.gz has no samples with an addr label: record with -e page-faults \(or mem-loads, mem-stores\) and -T$" \
		"$TMP/agg.pb.gz" -o "$TMP/na.txt" || return 1
	grep -qx '       24576  74.9%  \[anon\]' "$TMP/says.err" &&
	grep -qx '        8192  25.0%  scan_buf (memaccess)' "$TMP/says.err" ||
		{ echo "per-object counts: $(cat "$TMP/says.err")"; return 1; }
	expect 2 "cpu.pb.gz has no samples with an addr label: record with -e page-faults" "$TMP/cpu.pb.gz" &&
	expect 2 '--from/--to need a per-sample profile' "$TMP/agg.pb.gz" --from 1s || return 1
	[ ! -e "$TMP/na.txt" ] || { echo "a refused report left a file"; return 1; }
	# with one that has them: the other counts in the coverage only
	expect 0 'agg.pb.gz has no samples with an addr label: it counts in the coverage only' \
		"$TMP/mem.pb.gz" "$TMP/agg.pb.gz" -o "$TMP/two.txt" &&
	grep -q "^  samples read  *$((7114 + 8192 + 24576 + 40)) (2 files)$" "$TMP/two.txt" ||
		{ echo "two inputs: $(grep 'samples read' "$TMP/two.txt")"; return 1; }
}
check memory_no_addr no_addr

# Other errors and exit statuses.
errors() {
	expect 1 'no sample was kept' "$TMP/mem.pb.gz" --label query_id=nosuch -o "$TMP/empty.txt" &&
	grep -q '^  kept  *0 ' "$TMP/empty.txt" || { echo "the empty report: $(head -5 "$TMP/empty.txt")"; return 1; }
	expect 1 'no sample was kept' "$TMP/mem.pb.gz" --label query_id=nosuch -o "$TMP/empty.html" &&
	grep -q '</html>' "$TMP/empty.html" || { echo "no empty page"; return 1; }
	expect 2 "no sample with an address has the label or tag field 'nosuch'" "$TMP/mem.pb.gz" --by nosuch &&
	expect 2 'name the output .txt or .html' "$TMP/mem.pb.gz" -o "$TMP/x.json" &&
	expect 2 'no input profile' --bucket 4K &&
	expect 2 'nosuch.pb.gz: No such file' "$TMP/nosuch.pb.gz" &&
	expect 2 '--levels is for report plan' "$TMP/mem.pb.gz" --levels a
}
check memory_errors errors

memory_help() {
	"$TAGPROF" report --help | grep -q 'tagprof report memory IN.pb.gz... \[CUT\] \[--bucket SIZE\] \[--by KEY\]' &&
	"$TAGPROF" report --help | grep -q -- '--bucket SIZE         memory: the bucket addresses are grouped by' &&
	"$TAGPROF" report --help | grep -q '^memory: memory-access profiles' ||
		{ echo "report --help does not describe memory"; return 1; }
}
check memory_help memory_help

# Kernel and user addresses mixed in one object ([anon]: the kernel's
# direct map and 20 user mappings 4 GiB apart), and another object with
# addresses all over the 64-bit space ([unmapped]): a bounded report, the
# first split into 21 panels (16 drawn, the rest summed), the second one
# panel (a scatter), in memory that does not grow with the spread: within
# 1.5 x (+16 MiB) of the same samples packed into 1 MiB, at 8-byte
# buckets, the finest.
spread() {
	py "$TMP" <<'PY' || return 1
import random, sys, pprof_write
d, rnd = sys.argv[1], random.Random(5)
for name in ("wide", "packed"):
    w = pprof_write.Writer([("samples", "count"), ("page-faults", "count")],
                           period_type=("page-faults", "count"), period=1, time_nanos=10**18)
    for i in range(60000):
        obj = "[anon]"
        if name == "packed":
            a = 0x7f0000000000 + rnd.randrange(1 << 20)
        elif i % 3 == 0:
            a = 0xffff888000000000 + rnd.randrange(1 << 36)                # kernel
        elif i % 3 == 1:
            a = 0x7f0000000000 + (i % 20 << 32) + rnd.randrange(1 << 16)   # 20 mappings
        else:
            a, obj = rnd.randrange(1 << 64), "[unmapped]"                 # anywhere
        w.sample(["f"], [1, 1], {"addr": a, "data_object": obj, "t": (i * 1000, "nanoseconds")})
    w.save("%s/%s.pb.gz" % (d, name))
PY
	local name
	for name in wide packed; do
		/usr/bin/time -f %M -o "$TMP/$name.rss" "$TAGPROF" report memory "$TMP/$name.pb.gz" \
			--bucket 8 -o "$TMP/$name.html" 2>"$TMP/$name.err" ||
			{ echo "$name: exit $?: $(cat "$TMP/$name.err")"; return 1; }
		"$TAGPROF" report memory "$TMP/$name.pb.gz" --bucket 8 -o "$TMP/$name.txt" 2>/dev/null ||
			{ echo "$name: the text report failed"; return 1; }
	done
	grep -A3 -x '== object \[anon\]' "$TMP/wide.txt" | grep -q '^range: 0x7f00000[0-9a-f]*-0xffff888[0-9a-f]* (16.0 EiB) in 21 panels$' &&
	grep -A3 -x '== object \[unmapped\]' "$TMP/wide.txt" | grep -q '^range: 0x[0-9a-f]*-0x[0-9a-f]* (.*) in 1 panel$' &&
	grep -q '^  (5 more ranges, 5000 samples, 12.5%: apart from those above by gaps)$' "$TMP/wide.txt" ||
		{ echo "text: $(grep -E '^== object|^range|more ranges' "$TMP/wide.txt")"; return 1; }
	[ "$(grep -c '<g class="panel"' "$TMP/wide.html")" = 17 ] && grep -q '5 more address ranges' "$TMP/wide.html" ||
		{ echo "$(grep -c '<g class="panel"' "$TMP/wide.html") panels drawn"; return 1; }
	[ "$(stat -c %s "$TMP/wide.html")" -lt $((32 << 20)) ] || { echo "the page is $(stat -c %s "$TMP/wide.html") bytes"; return 1; }
}
check memory_spread spread

spread_rss() {
	local wide packed
	wide=$(tail -1 "$TMP/wide.rss" 2>/dev/null)
	packed=$(tail -1 "$TMP/packed.rss" 2>/dev/null)
	[ -n "$wide" ] && [ -n "$packed" ] || { echo "no RSS measured (memory_spread failed)"; return 1; }
	[ "$wide" -le $((packed * 3 / 2 + 16384)) ] && [ "$wide" -le 262144 ] ||
		{ echo "peak RSS $wide KiB over the 64-bit space, $packed KiB packed into 1 MiB"; return 1; }
}
rss_unchecked memory_spread_rss || check memory_spread_rss spread_rss
