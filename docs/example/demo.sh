#!/usr/bin/env bash
# `make demo`: runs the example query engine (query_engine.c, next to this
# file), records the whole machine for 5 s, and prints what tagprof saw:
# the top functions, the CPU share per query and per operator, and the
# pprof commands that look closer.
# usage: demo.sh BUILD_DIR [EXAMPLE]	(as root: tagprof loads BPF)
# DEMO_PROFILE=FILE writes the profile there instead of BUILD_DIR/demo.pb.gz.
set -euo pipefail
BUILD=${1:?usage: demo.sh BUILD_DIR [EXAMPLE]}
EXAMPLE=${2:-$BUILD/example/query_engine}
PROFILE=${DEMO_PROFILE:-$BUILD/demo.pb.gz}
SECONDS_RECORDED=5

command -v go >/dev/null ||
	{ echo "demo: go not found (deploy/debian-deps.sh installs golang-go)" >&2; exit 1; }
for f in "$BUILD/tagprof" "$EXAMPLE"; do
	[ -x "$f" ] || { echo "demo: $f is missing: run make demo" >&2; exit 1; }
done

log=$(mktemp /tmp/tagprof-demo.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -f "$log"
}
trap cleanup EXIT

# The example runs until killed. A moment to start: a library it cannot
# load, or a failed API call, ends it at once.
"$EXAMPLE" 2>"$log" &
pid=$!
sleep 0.3
if ! kill -0 "$pid" 2>/dev/null; then
	echo "demo: $EXAMPLE exited at start:" >&2
	cat "$log" >&2
	pid=
	exit 1
fi
# It says on stderr when it was built without the tag register reserved.
tags=on
grep -q 'no operator tags' "$log" && tags=off

cat <<EOF
== The example: $EXAMPLE (pid $pid), from docs/example/query_engine.c
A toy query engine: 3 worker threads run the tasks of 4 queries, q1-q4, in
the ratio 40/30/20/10 %. Each task attaches its query's labels (query_id,
tenant); its operators scan, join and aggregate (50/33/17 % of the work)
call one shared hash-table insert, ht_insert(), each under its register tag.
EOF
if [ $tags = on ]; then
	echo "Operator tags: on (built by GCC with the tag register reserved)."
else
	echo "Operator tags: OFF. The compiler could not reserve the tag register"
	echo "(clang cannot on x86-64): the example runs with query labels only."
fi

echo
echo "== Recording the whole machine for $SECONDS_RECORDED s"
# 999 Hz rather than the default 99: ~10,000 samples in 5 s on 2 CPUs,
# enough for the shares below to show the design within a point or two.
echo "\$ $BUILD/tagprof record -a -F 999 -d $SECONDS_RECORDED -o $PROFILE"
"$BUILD/tagprof" record -a -F 999 -d "$SECONDS_RECORDED" -o "$PROFILE" 2>&1 | sed 's/^/  /'
kill -0 "$pid" 2>/dev/null ||
	{ echo "demo: the example died meanwhile:" >&2; cat "$log" >&2; pid=; exit 1; }
kill "$pid"
wait "$pid" 2>/dev/null || true

echo
echo "== Top functions, whole machine (go tool pprof -top $PROFILE)"
go tool pprof -top -nodecount=8 "$PROFILE" 2>/dev/null | sed -n '/^ *flat /,$p'

# pprof -tags prints, per label key in name order, "key: Total N" and then
# "COUNT (SHARE%): VALUE" per value, largest first. Restricted to the
# example's pid, the pid key's total is all of its samples; each value's
# share is of that, and samples of other processes are counted apart.
all=$(go tool pprof -sample_index=samples -tags -tagshow='^pid$' "$PROFILE" 2>/dev/null |
	awk '$1 == "pid:" { print $3 + 0; exit }')
go tool pprof -sample_index=samples -tags -tagfocus="pid=$pid" \
	-tagshow='^(pid|query_id|tenant|operator)$' "$PROFILE" 2>/dev/null |
awk -v all="${all:-0}" -v pid="$pid" -v tags=$tags '
	/^ *[a-z_]+: Total / { key = $1; sub(/:$/, "", key); total[key] = $3; next }
	key != "" && /%\): / { nv[key]++; val[key, nv[key]] = $NF; cnt[key, nv[key]] = $1 }
	function share(n) { return sprintf("%.1f%%", 100 * n / proc) }
	END {
		proc = total["pid"] + 0
		printf "\n== CPU share of the example (pid %s: %d samples; %d of other processes left out)\n",
			pid, proc, all - proc
		if (proc == 0) { print "  no samples of the example"; exit 1 }
		n = split("query_id tenant operator", keys, " ")
		for (i = 1; i <= n; i++) {
			k = keys[i]
			if (k == "operator" && tags == "off") {
				printf "  %-9s  (no tags: build the example with GCC)\n", k
				continue
			}
			line = ""; rest = proc
			for (j = 1; j <= nv[k]; j++) {
				line = line sprintf("  %s %s", val[k, j], share(cnt[k, j]))
				rest -= cnt[k, j]
			}
			if (100 * rest / proc >= 0.05) {
				line = line sprintf("  (none) %s", share(rest))
				none = 1
			}
			printf "  %-9s%s\n", k, line
		}
		if (none)
			print "  (none): samples before tagprof had read the labels (it reads them at the first sample of a process)"
	}'

cat <<EOF

== Look closer
  go tool pprof -tagfocus=query_id=q2 -top $PROFILE    # one query's functions
EOF
[ $tags = on ] && cat <<EOF
  go tool pprof -tagfocus=operator=join -top $PROFILE  # one operator's
EOF
cat <<EOF
  go tool pprof -tags $PROFILE                         # every label's values
  go tool pprof -http=:8080 $PROFILE                   # web UI: graph, flame graph
On a machine without a browser (or over ssh), add -no_browser, run
ssh -L 8080:localhost:8080 THIS_HOST on your own machine, and open
http://localhost:8080 there.
EOF
