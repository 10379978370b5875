#!/usr/bin/env bash
# `make demo` (docs/example/demo.sh) against the test build: it runs the
# example query engine (docs/example/query_engine.c), records the whole
# machine for 5 s and prints the top functions, the CPU share per query_id
# and operator, and pprof commands. Checked here:
# - the printed shares match the example's design: queries q1-q4 get tasks
#   of one size in the ratio 4:3:2:1, and each task runs the operators
#   scan, join and aggregate in the ratio 3:2:1;
# - the printed -tagfocus commands work and keep one query (one operator);
# - the printed web UI command serves the profile;
# - built by clang, which cannot reserve r15, the example runs without tags,
#   the demo says so, and still prints the per-query shares.
. "$(dirname "$0")/../lib.sh"
need_bpf demo_runs demo_query_shares demo_operator_shares demo_tagfocus_query \
	demo_tagfocus_operator demo_web_ui demo_no_tags_build demo_no_tags
BUILD=${BUILD:-build}

# share_line OUT KEY: the demo's share line of KEY as "VALUE PERCENT" lines
# ("  query_id   q1 40.1%  q2 29.8% ... (none) 0.6%").
share_line() {
	awk -v k="$2" '$1 == k && $2 !~ /^\(/ {
		for (i = 2; i < NF; i += 2) { p = $(i + 1); sub(/%$/, "", p); print $i, p }
		exit }' "$1"
}
# proc_samples OUT: the example's sample count the demo printed.
proc_samples() { sed -n 's/^== CPU share of the example (pid [0-9]*: \([0-9]*\) samples.*/\1/p' "$1"; }

# check_shares NAME OUT KEY VALUE=PERCENT...: the demo's shares of KEY
# against the design. The demo gives shares of all the example's samples,
# "(none)" being those taken before tagprof had read its labels (its first
# sample triggers that: 0-0.1% here; the demo leaves "(none)" out when it
# is 0). The design is about
# the labelled ones: the shares are renormalized to them. Each is judged
# within 4 sd of a binomial at the labelled count (lib.sh's near): the
# scheduler draws every task's query at random by weight and the tasks are
# of one size, so a sample's query is an independent draw with the
# designed odds (a fixed rotation of tasks of different sizes gave both
# tagprof and perf a steady 41.5/28.4/21.6/8.5 for 40/30/20/10 here, as
# the threads' timing picked each one's mix). ~9500 samples in 5 s at 999
# Hz on 2 busy CPUs: +-2.0 points at 40%, +-1.2 at 10%. At least 300
# samples (other tests may take CPU time); "(none)" at most 5% (0.25 s of
# 5 s).
check_shares() {
	local name=$1 out=$2 key=$3; shift 3
	local n lines
	n=$(proc_samples "$out")
	lines=$(share_line "$out" "$key")
	if [ -z "$n" ] || [ -z "$lines" ]; then
		fail "$name" "no $key shares in the demo's output"
		return
	fi
	local none lab nlab bad='' got='' want
	# No "(none)" entry: every sample was labelled.
	none=$(echo "$lines" | awk '$1 == "(none)" { v = $2 } END { print v + 0 }')
	lab=$(echo "$lines" | awk '$1 != "(none)" { s += $2 } END { print s + 0 }')
	nlab=$(awk -v n="$n" -v l="$lab" 'BEGIN { printf "%d", n * l / 100 }')
	for want in "$@"; do
		local v=${want%=*} p=${want#*=} s
		s=$(echo "$lines" | awk -v v="$v" -v l="$lab" '$1 == v { printf "%.1f", 100 * $2 / l; f = 1 }
			END { if (!f) print "none" }')
		got="$got $v $s%"
		if [ "$s" = none ] || ! near "$s" "$p" "$nlab"; then
			bad="$bad $v: $s% (want $p +-$(sd4 "$p" "$nlab"))"
		fi
	done
	echo "$name: $n samples, $nlab labelled ($none% none):$got" >&2
	if [ "$n" -lt 300 ]; then
		fail "$name" "only $n samples of the example (want >= 300)"
	elif ! within "$none" 0 5; then
		fail "$name" "$none% of the example's samples without $key (want <= 5%)"
	elif [ -n "$bad" ]; then
		fail "$name" "of $nlab labelled samples:$bad (4 sd)"
	else
		pass "$name"
	fi
}

# printed OUT PATTERN: the pprof command line of the demo's output that
# matches PATTERN, without its comment.
printed() { grep -- "$2" "$1" | head -1 | sed 's/#.*//; s/^ *//; s/ *$//'; }

# check_tagfocus NAME OUT KEY VALUE: runs the printed "-tagfocus=KEY=VALUE
# -top" command: it must succeed and show a table led by the shared
# ht_insert; the same command with -tags instead of -top must show VALUE
# as the only value of KEY, with all of its samples in the profile.
check_tagfocus() {
	local name=$1 out=$2 key=$3 value=$4 cmd whole kept top
	cmd=$(printed "$out" "-tagfocus=$key=$value -top")
	if [ -z "$cmd" ]; then
		fail "$name" "the demo printed no -tagfocus=$key=$value command"
		return
	fi
	if ! top=$(bash -c "$cmd" 2>"$TMP/focus.err"); then
		fail "$name" "'$cmd' failed: $(tail -1 "$TMP/focus.err")"
		return
	fi
	whole=$(pprof "$PROFILE" -tags -sample_index=samples | awk -v k="$key:" -v v="$value" '
		$1 == k { f = 1; next } f && NF == 0 { f = 0 } f && $NF == v { print $1 + 0 }')
	kept=$(bash -c "${cmd/ -top / -tags -sample_index=samples }" 2>/dev/null | awk -v k="$key:" '
		$1 == k { f = 1; next } f && NF == 0 { f = 0 } f && /%\): / { printf "%s=%d ", $NF, $1 }')
	echo "$name: '$cmd': $(echo "$top" | awk '/flat%/ { getline; print $NF }') first; kept $kept of $value=$whole" >&2
	if ! echo "$top" | awk '/flat%/ { getline; ok = $NF == "ht_insert" } END { exit !ok }'; then
		fail "$name" "'$cmd' shows no table led by ht_insert: $(echo "$top" | tail -3 | tr '\n' '|')"
	elif [ "$kept" != "$value=$whole " ]; then
		fail "$name" "'$cmd' kept $key values '$kept', want only $value=$whole (all of its samples)"
	else
		pass "$name"
	fi
}

# 1. The demo with the test build's example (GCC, tags on).
PROFILE=$TMP/demo.pb.gz
if DEMO_PROFILE=$PROFILE bash docs/example/demo.sh "$BUILD" >"$TMP/demo.out" 2>"$TMP/demo.err"; then
	cat "$TMP/demo.out" >&2
	if grep -q '^Operator tags: on' "$TMP/demo.out" &&
	   grep -q '^== Top functions' "$TMP/demo.out" &&
	   grep -q ' ht_insert$' "$TMP/demo.out" && grep -q 'http=:8080' "$TMP/demo.out"; then
		pass demo_runs
	else
		fail demo_runs "the output lacks the tags line, the top functions with ht_insert or the web UI command: $(head -c 300 "$TMP/demo.out" | tr '\n' '|')"
	fi
	check_shares demo_query_shares "$TMP/demo.out" query_id q1=40 q2=30 q3=20 q4=10
	check_shares demo_operator_shares "$TMP/demo.out" operator scan=50 join=33.3 aggregate=16.7
	check_tagfocus demo_tagfocus_query "$TMP/demo.out" query_id q2
	check_tagfocus demo_tagfocus_operator "$TMP/demo.out" operator join
else
	fail demo_runs "demo.sh exited $?: $(tail -3 "$TMP/demo.err" | tr '\n' '|')"
	for n in demo_query_shares demo_operator_shares demo_tagfocus_query demo_tagfocus_operator; do
		fail $n "no demo output"
	done
fi

# 2. The printed web UI command, on a free port, without a browser: pprof
# serves its UI (a page naming the profile's sample types) within 10 s.
web_ui() {
	local cmd port pid page
	cmd=$(printed "$TMP/demo.out" "-http=:8080")
	[ -n "$cmd" ] || { echo "no -http command printed"; return 1; }
	[ -s "$PROFILE" ] || { echo "no profile"; return 1; }
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cmd=${cmd/-http=:8080/-http=127.0.0.1:$port -no_browser}
	bash -c "exec $cmd" >"$TMP/web.out" 2>&1 &
	pid=$!
	for _ in $(seq 50); do
		page=$(curl -sf "http://127.0.0.1:$port/ui/top" 2>/dev/null) && break
		sleep 0.2
	done
	kill $pid 2>/dev/null; wait $pid 2>/dev/null
	echo "$page" | grep -q 'ht_insert' ||
		{ echo "'$cmd' served no top page naming ht_insert: $(tail -2 "$TMP/web.out")"; return 1; }
}
if why=$(web_ui); then pass demo_web_ui; else fail demo_web_ui "$why"; fi

# 3. clang cannot reserve r15: the Makefile's test compile sees it and
# builds the example without tags, and the demo says so and still shows
# the query shares (labels need no reserved register).
CLANG_EX=$TMP/query_engine_clang
if make -s BUILD="$BUILD" CC=clang TAG_CC=clang DEMO_EXAMPLE="$CLANG_EX" "$CLANG_EX" \
	>"$TMP/make.out" 2>&1 && grep -q 'cannot reserve' "$TMP/make.out" &&
   readelf -p .comment "$CLANG_EX" 2>/dev/null | grep -q clang; then
	pass demo_no_tags_build
else
	fail demo_no_tags_build "make with clang: $(tail -3 "$TMP/make.out" | tr '\n' '|') (want a clang-built example and 'cannot reserve')"
fi
PROFILE=$TMP/clang.pb.gz
if [ -n "${SANITIZE:-}" ]; then
	skip demo_no_tags "SANITIZE build: the clang-built example cannot load libtagprof, whose ASan runtime is GCC's; the plain build runs it"
elif [ -x "$CLANG_EX" ] && DEMO_PROFILE=$PROFILE bash docs/example/demo.sh "$BUILD" "$CLANG_EX" \
	>"$TMP/clang.out" 2>"$TMP/clang.err"; then
	cat "$TMP/clang.out" >&2
	ops=$(pprof "$PROFILE" -tags | grep -c '^ *operator:')
	if grep -q '^Operator tags: OFF' "$TMP/clang.out" &&
	   grep -q '^  operator  *(no tags' "$TMP/clang.out" &&
	   ! grep -q 'tagfocus=operator' "$TMP/clang.out" && [ "$ops" -eq 0 ]; then
		check_shares demo_no_tags "$TMP/clang.out" query_id q1=40 q2=30 q3=20 q4=10
	else
		fail demo_no_tags "the demo did not say the example runs without tags, or printed an operator command, or the profile has operator labels ($ops)"
	fi
else
	fail demo_no_tags "demo.sh with the clang example failed: $(tail -3 "$TMP/clang.err" | tr '\n' '|')"
fi
