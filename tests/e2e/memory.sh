#!/usr/bin/env bash
# Memory-access profiles: record -e page-faults at period 1 (every fault a
# sample) over tests/workloads/libtagprof/memaccess.c, which reads a .bss
# array, scan_buf (A, 8 MiB), page by page in address order under
# query_id=a, then an anonymous mapping (B, 24 MiB) in a random page order
# under query_id=b, 4 passes each, dropping the buffer after every pass so
# every read faults; it prints the truth (buffers, phase times, page reads,
# the faults getrusage counted). Checked against it with the spec reader
# (tests/pprof_read.py): the addresses, their order in time, the working
# set, the 1:3 split, the data_object label; then tagprof report memory's
# text and HTML; -e mem-loads without PEBS or IBS; a profile without -T.
. "$(dirname "$0")/../lib.sh"
need_bpf memory_record memory_every_fault memory_addresses memory_phase_times \
	memory_scan_order memory_random_order memory_working_set memory_split \
	memory_data_object memory_report_text memory_report_html memory_mem_loads \
	memory_aggregated memory_flat_out memory_agent

TESTS=$(cd "$(dirname "$0")/.." && pwd)
PASSES=4

# 1 s per phase, 4 passes: 8192 faults in A, 24576 in B.
"$TAGPROF" record -T -e page-faults -c 1 -o "$TMP/m.pb.gz" -- \
	"$WORKLOADS/memaccess" 1 $PASSES >"$TMP/truth" 2>"$TMP/rec.err"
rc=$?

# The checks' common code: the truth, the workload's labelled samples
# (sorted by time) and helpers, for the checks run by mem (below).
cat >"$TMP/memcheck.py" <<'PY'
import bisect, collections, sys, pprof_read

def truth(path):
    """{"A": {...}, "B": {...}, "a": {...}, "b": {...}, "offset": N}."""
    out = {}
    for line in open(path):
        w = line.split()
        kv = dict(x.split("=", 1) for x in w[1:])
        for k, v in kv.items():
            if k not in ("name", "object", "query_id"):
                kv[k] = int(v, 0)
        if w[0] in ("buf", "phase"):
            out[kv["name"]] = kv
        elif w[0] == "touch":
            out["offset"] = kv["offset"]
    for k in ("A", "B", "a", "b", "offset"):
        if k not in out:
            sys.exit("the workload printed no %s line: %s" % (k, open(path).read()))
    return out

def num(s, key):
    v = s.labels.get(key)
    return v[0] if isinstance(v, tuple) else None

class Run:
    def __init__(self, profile, truth_path):
        self.p = pprof_read.load(profile)
        self.tr = truth(truth_path)
        self.mine = [s for s in self.p.samples if s.labels.get("process") == "memaccess"]
        # per phase: its samples, sorted by time (ties in file order)
        self.ph = {}
        for q in ("a", "b"):
            ss = [s for s in self.mine if s.labels.get("query_id") == q]
            self.ph[q] = sorted(ss, key=lambda s: (self.p.t(s) is None, self.p.t(s) or 0))
        self.buf = {"a": self.tr["A"], "b": self.tr["B"]}

    def inside(self, q, a):
        b = self.buf[q]
        return a is not None and b["addr"] <= a < b["addr"] + b["bytes"]

    def passes(self, q):
        """Phase q's samples in its buffer, split into passes by the
        workload's pass windows (pass k starts pass_ns * k after the phase,
        on the profile's clock: time_nanos + t)."""
        ph = self.tr[q]
        t0 = ph["real_start_ns"] - self.p.time_nanos
        out = [[] for _ in range(ph["passes"])]
        for s in self.ph[q]:
            a, t = num(s, "addr"), self.p.t(s)
            if not self.inside(q, a) or t is None:
                continue
            k = int((t - t0) // ph["pass_ns"]) if ph["pass_ns"] else 0
            if 0 <= k < len(out):
                out[k].append(a)
        return out

def lis(xs):
    """The length of the longest strictly increasing subsequence."""
    tails = []
    for x in xs:
        i = bisect.bisect_left(tails, x)
        if i == len(tails):
            tails.append(x)
        else:
            tails[i] = x
    return len(tails)

def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0] * len(xs)
    for k, i in enumerate(order):
        r[i] = k
    return r

def spearman(xs):
    """Rank correlation of xs against their order (time)."""
    n = len(xs)
    if n < 3:
        return 0.0
    r = ranks(xs)
    d2 = sum((r[i] - i) ** 2 for i in range(n))
    return 1 - 6 * d2 / (n * (n * n - 1))
PY

# mem: the Python of a check (on stdin) with the run loaded
# as R; its exit message is the FAIL reason.
mem() {
	PYTHONPATH="$TESTS:$TMP" python3 -c "
import sys, memcheck
from memcheck import *
R = memcheck.Run(sys.argv[1], sys.argv[2])
exec(sys.stdin.read())" "$TMP/m.pb.gz" "$TMP/truth"
}

# The recording ran, lost nothing, and each labelled sample of the
# workload has an address and a data_object. Under the sanitizers the
# agent is slower than ASan's start-up burst of faults (18k in a few ms,
# its shadow memory): a loss of up to 10% is let pass there and said; the
# phases' own losses are what memory_every_fault counts.
read -r n lost < <(sed -n 's/.* \([0-9]*\) samples, \([0-9]*\) lost.*/\1 \2/p' "$TMP/rec.err" | tail -1)
record_ok() {
	[ $rc -eq 0 ] || { echo "record exited $rc: $(tail -3 "$TMP/rec.err")"; return 1; }
	if [ -z "${SANITIZE:-}" ] || [ "${lost:-x}" = 0 ] || [ "$((10 * ${lost:-1}))" -gt "${n:-0}" ]; then
		[ "${lost:-x}" = 0 ] ||
			{ echo "record says: $(grep -m1 ' samples, ' "$TMP/rec.err") (want 0 lost at this rate)"; return 1; }
	fi
	mem <<'PY'
bad = collections.Counter()
for q in ("a", "b"):
    if len(R.ph[q]) < 1000:
        sys.exit("%d samples of memaccess under query_id=%s (labels: %s)" % (len(R.ph[q]), q,
                 collections.Counter(tuple(sorted(s.labels)) for s in R.mine).most_common(3)))
    for s in R.ph[q]:
        if num(s, "addr") is None:
            bad["no numeric addr label"] += 1
        if not isinstance(s.labels.get("data_object"), str):
            bad["no string data_object label"] += 1
        if R.p.t(s) is None:
            bad["no t label"] += 1
if bad:
    sys.exit("of %d labelled samples: %s" % (len(R.ph["a"]) + len(R.ph["b"]), dict(bad)))
PY
}
check memory_record record_ok
[ "${lost:-0}" = 0 ] || echo "NOTE: memory_record: $lost of $n samples lost${SANITIZE:+ (under the sanitizers)}"

# Period 1: each fault the workload took in a phase (getrusage) is one
# sample under its query_id, to 1% + 16 (its own check's bound).
every_fault() {
	mem <<'PY'
for q in ("a", "b"):
    want, got = R.tr[q]["minflt"] + R.tr[q]["majflt"], len(R.ph[q])
    if abs(got - want) > want / 100 + 16:
        sys.exit("query_id=%s: %d samples, the workload took %d faults (%d page reads)"
                 % (q, got, want, R.tr[q]["touches"]))
PY
}
check memory_every_fault every_fault

# The address is the byte read, not its page: each phase's samples land in
# its buffer at the workload's offset in the page (all but 1% + 16: the
# phase's other faults, which getrusage counts too).
addresses() {
	mem <<'PY'
off = R.tr["offset"]
for q in ("a", "b"):
    n = len(R.ph[q])
    ok = sum(1 for s in R.ph[q] if R.inside(q, num(s, "addr")) and num(s, "addr") % 4096 == off)
    if n - ok > n / 100 + 16:
        ex = [hex(num(s, "addr") or 0) for s in R.ph[q] if not R.inside(q, num(s, "addr"))][:5]
        sys.exit("query_id=%s: %d of %d samples at offset %#x of a page of its buffer %#x+%d"
                 " (outside, e.g.: %s)" % (q, ok, n, off, R.buf[q]["addr"], R.buf[q]["bytes"], ex))
PY
}
check memory_addresses addresses

# The samples' times (time_nanos + t) lie in their phase's window as the
# workload saw it on CLOCK_REALTIME (all but 1%, within 20 ms).
phase_times() {
	mem <<'PY'
for q in ("a", "b"):
    lo, hi = R.tr[q]["real_start_ns"] - 2e7, R.tr[q]["real_end_ns"] + 2e7
    out = [R.p.time_nanos + R.p.t(s) for s in R.ph[q]
           if not lo <= R.p.time_nanos + R.p.t(s) <= hi]
    if len(out) > len(R.ph[q]) / 100:
        sys.exit("query_id=%s: %d of %d samples outside the phase's %.3f..%.3f s (e.g. at %.3f s)"
                 % (q, len(out), len(R.ph[q]), (lo + 2e7 - R.p.time_nanos) / 1e9,
                    (hi - 2e7 - R.p.time_nanos) / 1e9, (out[0] - R.p.time_nanos) / 1e9))
PY
}
check memory_phase_times phase_times

# Phase a reads A in address order: within each pass (the workload's pass
# windows), the addresses in time order rise, but for at most 4 samples
# per pass off the longest rising sequence; and each pass has at least
# 95% of A's pages.
scan_order() {
	mem <<'PY'
pages = R.tr["A"]["pages"]
for k, xs in enumerate(R.passes("a")):
    out = len(xs) - lis(xs)
    if len(xs) < 0.95 * pages or out > 4:
        sys.exit("pass %d of phase a: %d samples in A (%d pages), %d of them off the rising"
                 " sequence (at most 4); rank correlation with time %.3f"
                 % (k, len(xs), pages, out, spearman(xs)))
PY
}
check memory_scan_order scan_order

# Phase b reads B in a random order: within each pass, the rank
# correlation of address and time is near 0 (|rho| < 0.1; its sd for 6144
# samples is 0.013) and about half of the steps from one sample to the
# next go up (40..60%; a sequential pass gives 100%).
random_order() {
	mem <<'PY'
pages = R.tr["B"]["pages"]
for k, xs in enumerate(R.passes("b")):
    rho = spearman(xs)
    up = sum(1 for i in range(1, len(xs)) if xs[i] > xs[i - 1]) / max(1, len(xs) - 1)
    if len(xs) < 0.95 * pages or abs(rho) > 0.1 or not 0.4 <= up <= 0.6:
        sys.exit("pass %d of phase b: %d samples in B (%d pages), rank correlation with time"
                 " %.3f, %.0f%% steps up" % (k, len(xs), pages, rho, 100 * up))
PY
}
check memory_random_order random_order

# Working set: distinct 4 KiB pages of each phase's samples of its object
# (scan_buf for a, [anon] for b), x 4096, is its buffer's size +-5%.
working_set() {
	mem <<'PY'
for q, obj in (("a", "scan_buf (memaccess)"), ("b", "[anon]")):
    pages = {num(s, "addr") >> 12 for s in R.ph[q] if s.labels.get("data_object") == obj}
    want = R.buf[q]["bytes"]
    if abs(len(pages) * 4096 - want) > 0.05 * want:
        sys.exit("query_id=%s, data_object %s: working set %d bytes (%d pages), the buffer is %d"
                 % (q, obj, len(pages) * 4096, len(pages), want))
PY
}
check memory_working_set working_set

# 1 fault in A for 3 in B: query_id=a has 25% of the two's samples, +-3
# points.
split() {
	mem <<'PY'
a, b = len(R.ph["a"]), len(R.ph["b"])
share = 100 * a / max(1, a + b)
if abs(share - 25) > 3:
    sys.exit("query_id=a %d samples, b %d: a is %.1f%% (want 25 +-3)" % (a, b, share))
PY
}
check memory_split split

# data_object names the symbol for A's addresses, the mapping for B's:
# every sample whose address is in a buffer.
data_object() {
	mem <<'PY'
want = {"a": "scan_buf (memaccess)", "b": "[anon]"}
for q in ("a", "b"):
    c = collections.Counter(s.labels.get("data_object") for s in R.mine
                            if R.inside(q, num(s, "addr")))
    if set(c) != {want[q]}:
        sys.exit("addresses in buffer %s: data_object %s (want only %r)"
                 % (R.buf[q]["name"], dict(c.most_common(5)), want[q]))
PY
}
check memory_data_object data_object

# ---- tagprof report memory ----
REPORT_OK=1
"$TAGPROF" report memory --help >/dev/null 2>&1 || REPORT_OK=0

# The text report against the spec reader's counts and the truth: per
# object and query_id, its samples (exactly the profile's) and its working
# set ("touched: N buckets" of 4 KiB, the buffer's size +-5%); the split
# 1:3 from its "by query_id" lines (+-3 points); the coverage's samples
# with an address.
report_text() {
	"$TAGPROF" report memory "$TMP/m.pb.gz" --by query_id -o "$TMP/mem.txt" \
		2>"$TMP/memtxt.err" || { echo "report memory exited $?: $(cat "$TMP/memtxt.err")"; return 1; }
	PYTHONPATH="$TESTS:$TMP" python3 - "$TMP/m.pb.gz" "$TMP/truth" "$TMP/mem.txt" <<'PY'
import re, sys, collections, memcheck
from memcheck import num
R = memcheck.Run(sys.argv[1], sys.argv[2])
text = open(sys.argv[3]).read()
sets, split, cur = {}, collections.Counter(), None
for line in text.splitlines():
    m = re.match(r"== object (.*)$", line)
    if m:
        cur = m.group(1)
        sets[cur] = {}
        continue
    m = re.match(r"(samples|touched): (\d+)", line)
    if m and cur is not None:
        sets[cur][m.group(1)] = int(m.group(2))
    m = re.match(r"  query_id=(\S+)  (\d+) ", line)
    if m:
        split[m.group(1)] += int(m.group(2))
m = re.search(r"^  with an address +(\d+)", text, re.M)
want = sum(1 for s in R.p.samples if num(s, "addr") is not None)
if not m or int(m.group(1)) != want:
    sys.exit("coverage: %s samples with an address, the profile has %d"
             % (m and m.group(1), want))
for q, obj in (("a", "scan_buf (memaccess)"), ("b", "[anon]")):
    key = "%s, query_id=%s" % (obj, q)
    got = sets.get(key)
    n = sum(1 for s in R.ph[q] if s.labels.get("data_object") == obj)
    size = R.buf[q]["bytes"]
    if not got or got.get("samples") != n or \
            abs(got.get("touched", 0) * 4096 - size) > 0.05 * size:
        sys.exit("object %s: the report says %s (want %d samples, %d buckets of 4 KiB +-5%%); "
                 "objects: %s" % (key, got, n, size // 4096, list(sets)[:12]))
share = 100 * split["a"] / max(1, split["a"] + split["b"])
if abs(share - 25) > 3:
    sys.exit("by query_id: a %d samples, b %d: a %.1f%% (want 25 +-3)" % (split["a"], split["b"], share))
PY
}
if [ $REPORT_OK = 1 ]; then
	check memory_report_text report_text
else
	skip memory_report_text "tagprof report memory does not exist in this build"
fi

# The page, in headless Chromium: an SVG of at least 100 rects (the
# heatmaps), no network request, and it names the objects and values.
report_html() {
	local out
	"$TAGPROF" report memory "$TMP/m.pb.gz" --by query_id -o "$TMP/mem.html" \
		2>"$TMP/memhtml.err" || { echo "report memory exited $?: $(cat "$TMP/memhtml.err")"; return 1; }
	out=$(python3 "$TESTS/browser_check.py" "$TMP/mem.html" "$TMP/mem.png") ||
		{ echo "$out"; return 1; }
	echo "$out" | awk '/^rects/ && $2 < 100 { bad = 1 } /^svg no/ || /^request/ { bad = 1 }
		END { exit bad }' || { echo "rendered: $(echo "$out" | tr '\n' ' ')"; return 1; }
	grep -q 'scan_buf (memaccess)' "$TMP/mem.html" && grep -q 'query_id=b' "$TMP/mem.html" ||
		{ echo "the page names neither scan_buf (memaccess) nor query_id=b"; return 1; }
}
if [ $REPORT_OK = 0 ]; then
	skip memory_report_html "tagprof report memory does not exist in this build"
elif ! command -v chromium >/dev/null; then
	skip memory_report_html "no chromium to render the page (deploy/debian-deps.sh installs it)"
else
	check memory_report_html report_html
fi

# ---- -e mem-loads: precise data addresses need PEBS (the core PMU, "cpu")
# or IBS (ibs_op). Without either it must fail, saying what to use.
EVDIR=/sys/bus/event_source/devices
mem_loads_refused() {
	local rc
	"$TAGPROF" record -e mem-loads -d 1 -o "$TMP/ml.pb.gz" -a >/dev/null 2>"$TMP/ml.err"
	rc=$?
	[ $rc -ne 0 ] && grep -q 'page-faults' "$TMP/ml.err" && grep -qiE 'PEBS|IBS' "$TMP/ml.err" &&
		[ "$(wc -l <"$TMP/ml.err")" -le 3 ] && [ ! -e "$TMP/ml.pb.gz" ] ||
		{ echo "exit $rc, wrote $(ls "$TMP/ml.pb.gz" 2>/dev/null || echo nothing), said: $(cat "$TMP/ml.err")"; return 1; }
}
# With PEBS or IBS: mem-loads samples of the workload land in its buffers.
mem_loads_addresses() {
	"$TAGPROF" record -T -e mem-loads -o "$TMP/ml.pb.gz" -- \
		"$WORKLOADS/memaccess" 1 $PASSES >"$TMP/mltruth" 2>"$TMP/ml.err" ||
		{ echo "record -e mem-loads exited $?: $(tail -3 "$TMP/ml.err")"; return 1; }
	PYTHONPATH="$TESTS:$TMP" python3 - "$TMP/ml.pb.gz" "$TMP/mltruth" <<'PY'
import sys, collections, memcheck
from memcheck import num
R = memcheck.Run(sys.argv[1], sys.argv[2])
for q in ("a", "b"):
    n = len(R.ph[q])
    ok = sum(1 for s in R.ph[q] if R.inside(q, num(s, "addr")))
    # loads elsewhere (the permutation, the stack) are samples too
    if n < 20 or ok < n / 2:
        sys.exit("query_id=%s: %d of %d mem-loads samples in its buffer" % (q, ok, n))
PY
}
if [ -e "$EVDIR/ibs_op" ] || [ -e "$EVDIR/cpu/events/mem-loads" ] ||
		[ -e "$EVDIR/cpu_core/events/mem-loads" ]; then
	check memory_mem_loads mem_loads_addresses
else
	check memory_mem_loads mem_loads_refused
fi

# ---- without -T: data_object is a label, addresses are not (one per
# sample would keep every sample apart), and samples merge; data_src, where
# the hardware said where a load was served (PEBS, IBS), is not on page
# faults, which have no such source.
aggregated() {
	local n lost
	"$TAGPROF" record -e page-faults -c 1 -o "$TMP/agg.pb.gz" -- \
		"$WORKLOADS/memaccess" 0.5 2 >"$TMP/aggtruth" 2>"$TMP/agg.err" ||
		{ echo "record exited $?: $(tail -3 "$TMP/agg.err")"; return 1; }
	read -r n lost < <(sed -n 's/.* \([0-9]*\) samples, \([0-9]*\) lost.*/\1 \2/p' "$TMP/agg.err" | tail -1)
	PYTHONPATH="$TESTS:$TMP" python3 - "$TMP/agg.pb.gz" "$TMP/aggtruth" "$n" "$lost" <<'PY'
import sys, collections, pprof_read, memcheck
p = pprof_read.load(sys.argv[1]); tr = memcheck.truth(sys.argv[2])
n, lost = int(sys.argv[3]), int(sys.argv[4])
total = sum(s.values[0] for s in p.samples)
if total != n + lost or not len(p.samples) < n / 4:
    sys.exit("%d Samples for %d samples and %d lost, values %d: not merged"
             % (len(p.samples), n, lost, total))
if any("t" in s.labels or "addr" in s.labels for s in p.samples):
    sys.exit("a t or addr label without -T")
c = collections.Counter()
for s in p.samples:
    q = s.labels.get("query_id")
    if s.labels.get("process") != "memaccess" or q not in ("a", "b"):
        continue
    if not isinstance(s.labels.get("data_object"), str) or "data_src" in s.labels:
        sys.exit("want a data_object string label, and no data_src on a fault: %s" % s.labels)
    c[(q, s.labels.get("data_object"))] += s.values[0]
for q, obj in (("a", "scan_buf (memaccess)"), ("b", "[anon]")):
    want = tr[q]["touches"]
    if abs(c[(q, obj)] - want) > want / 100 + 16:
        sys.exit("query_id=%s, data_object %s: %d faults, the workload read %d pages: %s"
                 % (q, obj, c[(q, obj)], want, dict(c)))
PY
}
check memory_aggregated aggregated

# Flat out (no pacing), every fault a sample: some 100,000 a second on a
# CPU. The ring buffer is sized for a fault rate at a fixed period, not
# for the 1 kHz a period leaves unknown: 4 passes (32,768 faults, and the
# process's start) fit in it even if the reader fell behind, so nothing is
# lost, also when the sanitized agent reads slowly.
flat_out() {
	"$TAGPROF" record -e page-faults -c 1 -o "$TMP/flat.pb.gz" -- \
		"$WORKLOADS/memaccess" 0 $PASSES >"$TMP/flattruth" 2>"$TMP/flat.err" ||
		{ echo "record exited $?: $(tail -3 "$TMP/flat.err")"; return 1; }
	read -r n lost < <(sed -n 's/.* \([0-9]*\) samples, \([0-9]*\) lost.*/\1 \2/p' "$TMP/flat.err" | tail -1)
	want=$(awk '/^phase / { for (i = 2; i <= NF; i++) if ($i ~ /^touches=/) { sub("touches=", "", $i); n += $i } } END { print n + 0 }' "$TMP/flattruth")
	[ "$lost" = 0 ] && [ "$n" -ge "$want" ] && [ "$want" -ge $((PASSES * 8192)) ] ||
		{ echo "$n samples, $lost lost, for $want page reads flat out"; return 1; }
}
check memory_flat_out flat_out

# The agent, every fault a sample (count = 1: a fixed period, which a
# frequency cannot give a bursty fault rate), per-sample windows: the
# workload's faults in its buffers are all in the windows, named.
agent() {
	local out=$TMP/agent
	mkdir -p "$out"
	printf 'count = 0\n' >"$TMP/c0.conf"
	"$TAGPROF" agent --check-config --config "$TMP/c0.conf" >/dev/null 2>&1 &&
		{ echo "count = 0 accepted"; return 1; }
	"$TAGPROF" agent --output-dir "$out" --window 2 -e page-faults -c 1 \
		--timeline 2>"$TMP/agent.err" &
	local pid=$!
	sleep 1
	"$WORKLOADS/memaccess" 1 2 >"$TMP/agenttruth"
	sleep 2.5
	kill -TERM $pid; wait $pid
	grep -q 'profiling every 1 events' "$TMP/agent.err" ||
		{ echo "the agent did not sample every event: $(head -3 "$TMP/agent.err")"; return 1; }
	PYTHONPATH="$TESTS:$TMP" python3 - "$out" "$TMP/agenttruth" <<'PY'
import os, sys, collections, pprof_read, memcheck
tr = memcheck.truth(sys.argv[2])
c = collections.Counter()
for f in os.listdir(sys.argv[1]):
    if not f.endswith(".pb.gz"):
        continue
    p = pprof_read.load(os.path.join(sys.argv[1], f))
    for s in p.samples:
        a = memcheck.num(s, "addr")
        if s.labels.get("process") != "memaccess" or a is None:
            continue
        for buf, q, obj in (("A", "a", "scan_buf (memaccess)"), ("B", "b", "[anon]")):
            b, ph = tr[buf], tr[q]
            if not b["addr"] <= a < b["addr"] + b["bytes"]:
                continue
            if s.labels.get("data_object") != obj:
                sys.exit("an address in %s named %s" % (buf, s.labels.get("data_object")))
            # in its phase: a sanitized workload's leak check reads the
            # .bss array again at exit
            t = p.time_nanos + p.t(s)
            if ph["real_start_ns"] - 2e7 <= t <= ph["real_end_ns"] + 2e7:
                c[buf] += s.values[0]
for buf, q in (("A", "a"), ("B", "b")):
    want = tr[q]["touches"]
    if abs(c[buf] - want) > want / 100 + 16:
        sys.exit("%s: %d faults in the windows, the workload read %d pages" % (buf, c[buf], want))
PY
}
check memory_agent agent
