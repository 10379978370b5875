#!/usr/bin/env bash
# Debug files fetched by build ID from debuginfod servers (issue 23). A
# stripped callchain (main -> work -> leaf_a 3 : leaf_b 1), whose split
# debug file only a real debuginfod (Debian's, started here on loopback)
# serves: named through DEBUGINFOD_URLS or --debuginfod, with its 75/25
# shares. Then servers that fail: nothing listening, a listener that never
# answers, the debug file of another build, a file over the size limit
# (tests/debuginfod_server.py): each counted, nothing named wrongly, and
# sampling never waits on the network. Without any server, the stripped
# program's frames stay unnamed in the pprof itself (-raw): no invented
# function, and its mapping not marked as having functions.
. "$(dirname "$0")/../lib.sh"
CHECKS="debuginfod_named debuginfod_named_all debuginfod_flag debuginfod_flag_off
debuginfod_down debuginfod_slow debuginfod_slow_library_bound debuginfod_slow_no_wait debuginfod_wrong_file
debuginfod_oversized debuginfod_raw_honest"

REPO=$PWD
FAKE_SERVER=$REPO/tests/debuginfod_server.py
# The Makefile's workload flags: frame pointers everywhere, no tail calls.
WFLAGS="-D_GNU_SOURCE -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls"
: "${CLANG:=clang}"
# Only the servers a check names are asked.
unset DEBUGINFOD_URLS DEBUGINFOD_MAXTIME TAGPROF_DEBUGINFOD_MAXTIME DEBUGINFOD_MAXSIZE DEBUGINFOD_TIMEOUT \
	TAGPROF_DEBUGINFOD_MAX_MB
# Nothing local names the program, built here; glibc's debug files
# (libc6-dbg) are found there, so only the program is asked for and each
# counter below counts its one fetch. An empty directory instead would
# have libc and ld.so asked for too.
export TAGPROF_DEBUG_DIRS=/usr/lib/debug

# Servers are stopped on exit, before lib.sh's own exit trap runs.
SERVERS=""
eval "set -- $(trap -p EXIT)"
LIB_EXIT=${3:-}
on_exit() {
	local p
	for p in $SERVERS; do kill "$p" 2>/dev/null; done
	for p in $SERVERS; do wait "$p" 2>/dev/null; done
	eval "$LIB_EXIT"
}
trap on_exit EXIT

# fail_all WHY: fails every check (the setup they share did not work).
fail_all() {
	local n
	for n in $CHECKS; do fail "$n" "$1"; done
	exit 0
}

# build_id_of FILE: its GNU build ID.
build_id_of() {
	readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -1
}

# --- the programs: chain (stripped) and its debug file; another build ---
# Linked into the program: at exit, its own wall and CPU seconds ("WALL
# USER SYS") go to the file $CHAIN_TIMES names. No wrapper process: a
# stripped one (GNU time, a shell) would be one more binary to fetch for.
cat >"$TMP/times.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static struct timespec t0;

__attribute__((constructor)) static void times_start(void)
{
	clock_gettime(CLOCK_MONOTONIC, &t0);
}

__attribute__((destructor)) static void times_write(void)
{
	const char *path = getenv("CHAIN_TIMES");
	struct timespec t;
	struct rusage ru;
	FILE *f;

	if (!path || !(f = fopen(path, "w")))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t);
	getrusage(RUSAGE_SELF, &ru);
	fprintf(f, "%.3f %ld.%06ld %ld.%06ld\n",
		(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9,
		(long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec,
		(long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
	fclose(f);
}
C
BIN=$TMP/bin
PROG=$BIN/chain
mkdir -p "$BIN" "$TMP/serve"
"$CLANG" $WFLAGS -o "$PROG" "$REPO/tests/workloads/callchain.c" "$TMP/times.c" &&
	objcopy --only-keep-debug "$PROG" "$TMP/serve/chain.debug" &&
	strip --strip-all "$PROG" ||
	fail_all "could not build and split the program"
ID=$(build_id_of "$PROG")
[ -n "$ID" ] && [ "$(build_id_of "$TMP/serve/chain.debug")" = "$ID" ] ||
	fail_all "no build ID in the program, or its debug file has another"
if nm "$PROG" 2>/dev/null | grep -q leaf_a || readelf -S "$PROG" | grep -q '\.gnu_debuglink'; then
	fail_all "the program keeps symbols or a debuglink after strip"
fi
# The same program with one more variable: its functions at the same
# addresses, another build ID. Its debug file would name the program's
# frames, and plausibly: only the build ID tells it is not the program's.
{ cat "$REPO/tests/workloads/callchain.c"; echo 'int tagprof_other_build = 1;'; } >"$TMP/other.c"
"$CLANG" $WFLAGS -o "$TMP/other" "$TMP/other.c" "$TMP/times.c" &&
	objcopy --only-keep-debug "$TMP/other" "$TMP/other.debug" ||
	fail_all "could not build the other program"
OTHER_ID=$(build_id_of "$TMP/other.debug")
[ -n "$OTHER_ID" ] && [ "$OTHER_ID" != "$ID" ] ||
	fail_all "the other build has the same build ID ($OTHER_ID)"
# The right debug file, padded with zeros to 8 MiB: still a good ELF file
# with the right build ID, refused only for its size.
cp "$TMP/serve/chain.debug" "$TMP/big.debug" && truncate -s 8M "$TMP/big.debug" &&
	[ "$(build_id_of "$TMP/big.debug")" = "$ID" ] ||
	fail_all "could not pad the debug file"
echo "debuginfod: program build ID $ID, other build $OTHER_ID" >&2

# --- the real debuginfod, serving only the debug file ---
# free_port: a TCP port nothing on 127.0.0.1 holds right now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# fetch_ok URL: debuginfod-find fetches the program's debug file from URL,
# with a fresh cache (libdebuginfod caches a miss, and would not ask again).
fetch_ok() {
	local got
	rm -rf "$TMP/findcache"
	got=$(DEBUGINFOD_URLS=$1 DEBUGINFOD_CACHE_PATH=$TMP/findcache DEBUGINFOD_TIMEOUT=5 \
		debuginfod-find debuginfo "$ID" 2>>"$TMP/find.err") &&
		[ "$(build_id_of "$got")" = "$ID" ]
}

# start_debuginfod: starts it and sets URL; false with the reason in WHY.
URL="" WHY=""
start_debuginfod() {
	local port pid i
	if ! command -v debuginfod >/dev/null || ! command -v debuginfod-find >/dev/null; then
		WHY="debuginfod or debuginfod-find not installed (deploy/debian-deps.sh)"
		return 1
	fi
	# The port is free when picked, but another program may take it before
	# debuginfod binds it: then debuginfod exits, and another port is tried.
	# (Debian 12's 0.188 has no option to listen on loopback only: it
	# listens on every address, serving only this test's debug file.)
	for _ in 1 2 3 4 5; do
		port=$(free_port) || { WHY="no free port"; return 1; }
		rm -f "$TMP/db.sqlite"*
		debuginfod -F -p "$port" -d "$TMP/db.sqlite" -t 0 -g 0 -c 1 "$TMP/serve" \
			>"$TMP/debuginfod.log" 2>&1 &
		pid=$!
		SERVERS="$SERVERS $pid"
		# It listens first, then scans the directory: ask until it answers.
		for i in $(seq 60); do
			kill -0 "$pid" 2>/dev/null || break
			if fetch_ok "http://127.0.0.1:$port"; then
				URL=http://127.0.0.1:$port
				echo "debuginfod: port $port (pid $pid) served the debug file to debuginfod-find after $i tries" >&2
				return 0
			fi
			sleep 0.5
		done
		if kill -0 "$pid" 2>/dev/null; then
			WHY="debuginfod on port $port never served the debug file to debuginfod-find in 30 s ($(tail -1 "$TMP/find.err")); its log: $(tail -2 "$TMP/debuginfod.log" | tr '\n' ' ')"
			return 1
		fi
		wait "$pid" 2>/dev/null
		if ! grep -q 'cannot start http server' "$TMP/debuginfod.log"; then
			WHY="debuginfod exited: $(tail -2 "$TMP/debuginfod.log" | tr '\n' ' ')"
			return 1
		fi
	done
	WHY="debuginfod could not bind a port in 5 tries"
	return 1
}
start_debuginfod || echo "debuginfod: $WHY" >&2

# start_fake MODE [FILE]: a tests/debuginfod_server.py, FILE served as the
# program's debug file; sets FAKE (its pid), FAKE_URL and FAKE_LOG (one
# line a request).
start_fake() {
	local i
	FAKE_LOG=$TMP/fake.$1.log
	rm -f "$TMP/fake.port"
	python3 "$FAKE_SERVER" --mode "$1" --port-file "$TMP/fake.port" --log "$FAKE_LOG" \
		${2:+--file "$2" --build-id "$ID"} &
	FAKE=$!
	SERVERS="$SERVERS $FAKE"
	for i in $(seq 50); do [ -s "$TMP/fake.port" ] && break; sleep 0.1; done
	FAKE_URL=http://127.0.0.1:$(cat "$TMP/fake.port" 2>/dev/null)
	[ -s "$TMP/fake.port" ] || { echo "debuginfod: the $1 test server did not start" >&2; return 1; }
}
stop_fake() { kill "$FAKE" 2>/dev/null; wait "$FAKE" 2>/dev/null; }
# asked: how many times the test server was asked for the program's file.
asked() { cat "$FAKE_LOG" 2>/dev/null | grep -c "/buildid/$ID/debuginfo"; }

need_bpf $CHECKS

# rec NAME SECS [RECORD ARGS...]: records the program for SECS seconds,
# with a cache of its own (the environment of the call passes on).
# $TMP/NAME.pb.gz, NAME.err (record's stderr), NAME.times (the program's
# wall and CPU seconds); sets WALL (record's seconds) and RUN (the
# program's). False, with the reason in RECWHY, when record fails.
rec() {
	local name=$1 secs=$2 t0 t1 rc; shift 2
	t0=$(date +%s.%N)
	CHAIN_TIMES=$TMP/$name.times DEBUGINFOD_CACHE_PATH=$TMP/cache.$name \
		"$TAGPROF" record -F 999 -o "$TMP/$name.pb.gz" "$@" -- "$PROG" "$secs" \
		2>"$TMP/$name.err"
	rc=$?
	t1=$(date +%s.%N)
	WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	RUN=$(awk '{ print $1 }' "$TMP/$name.times" 2>/dev/null)
	if [ $rc -ne 0 ] || [ ! -s "$TMP/$name.pb.gz" ] || [ -z "$RUN" ]; then
		RECWHY="tagprof record exited $rc: $(head -2 "$TMP/$name.err" | tr '\n' ' ')"
		echo "debuginfod $name: $RECWHY" >&2
		return 1
	fi
}

# line NAME: the debuginfod part of record's stderr summary.
line() { sed -n 's/^tagprof: debuginfod: //p' "$TMP/$1.err" | tail -1; }
# comment NAME: the debuginfod part of the profile's comments, if any.
comment() {
	go tool pprof -comments "$TMP/$1.pb.gz" 2>/dev/null |
		sed -n 's/^# debuginfod since start: //p' | tail -1
}
# num TEXT WORD: the number before WORD in TEXT, empty when WORD is absent.
num() { grep -o "[0-9][0-9]* $2" <<<"$1" | head -1 | awk '{ print $1 }'; }
# counted NAME WORD N: record's summary counts N WORD, and the profile's
# comments, when they carry that counter, say the same.
counted() {
	local s c
	s=$(num "$(line "$1")" "$2"); c=$(num "$(comment "$1")" "$2")
	[ "$s" = "$3" ] && { [ -z "$c" ] || [ "$c" = "$3" ]; }
}
# figures NAME: what the check saw, for its messages.
figures() {
	echo "summary '$(line "$1")', comments '$(comment "$1")'"
}

# samples NAME: the program's samples; want NAME: 80% of what its CPU time
# gives at 999 Hz (CPU, not wall time: on a busy machine the program may
# wait for a CPU, and those waits are not samples lost).
samples() { total "$TMP/$1.pb.gz" -tagfocus=process=chain -symbolize=none; }
want() { awk '{ printf "%d", 0.8 * 999 * ($2 + $3) }' "$TMP/$1.times"; }

# names NAME: how many of leaf_a and leaf_b -top shows for the program.
names() {
	pprof "$TMP/$1.pb.gz" -top -nodecount=1000000 -nodefraction=0 -symbolize=none \
		-tagfocus=process=chain | grep -cE ' (leaf_a|leaf_b)$'
}

# mapping NAME: "FN LOCS LINES REAL SEEN" for the program's mapping(s) in
# -raw: FN 1 when one is marked [FN] (has functions), its locations, those
# with any line (a function, even an invented "[chain]", or "??"), those
# whose function has a real name (not in brackets), and the first names.
mapping() {
	pprof "$TMP/$1.pb.gz" -raw -symbolize=none | awk -v prog="$PROG" '
		/^Locations/ { sec = "loc"; next }
		/^Mappings/ { sec = "map"; next }
		sec == "map" && $3 == prog { ids[$1] = 1; if (/\[FN\]/) fn = 1 }
		sec == "loc" && /^ *[0-9]+: 0x/ {
			m = $3; sub(/^M=/, "", m); lm[++n] = m
			s = $0; sub(/^ *[0-9]+: 0x[0-9a-f]+ M=[0-9]+ (\[F\] )?/, "", s)
			if (s != "") { split(s, w, " "); fun(w[1]) }
			next }
		sec == "loc" && /^ +[^ ]/ && n { fun($1) }
		function fun(name) {
			lines[n] = 1
			if (name != "??" && name !~ /^\[.*\]$/) real[n] = 1
			if (!(n in nm)) nm[n] = name
		}
		END {
			for (i = 1; i <= n; i++) if ((lm[i] ":") in ids) {
				locs++
				if (lines[i]) { k++; if (k <= 3) seen = seen " " nm[i] }
				if (real[i]) r++
			}
			printf "%d %d %d %d%s\n", fn, locs, k, r, seen }'
}

# --- named through the real debuginfod: DEBUGINFOD_URLS ---
if [ -z "$URL" ]; then
	for n in debuginfod_named debuginfod_named_all; do fail "$n" "no debuginfod server: $WHY"; done
elif DEBUGINFOD_URLS=$URL rec named 4; then
	w=$(cum "$TMP/named.pb.gz" work -tagfocus=process=chain -symbolize=none)
	a=$(flat "$TMP/named.pb.gz" leaf_a -tagfocus=process=chain -symbolize=none)
	b=$(flat "$TMP/named.pb.gz" leaf_b -tagfocus=process=chain -symbolize=none)
	pa=$(pct "$a" "$w"); pb=$(pct "$b" "$w")
	n=$(samples named); m=$(mapping named)
	echo "debuginfod named: $n samples, work $w: leaf_a $a ($pa%), leaf_b $b ($pb%); mapping (FN locs lines real): $m; $(figures named)" >&2
	# The work split is exact: sampling is the only noise (4 sd).
	if [ "$w" -ge 1000 ] && near "$pa" 75 "$w" && near "$pb" 25 "$w" && counted named fetched 1; then
		pass debuginfod_named
	else
		fail debuginfod_named "leaf_a $pa%, leaf_b $pb% of work's $w samples (want 75/25 +-$(sd4 75 "$w"), at least 1000); $(figures named)"
	fi
	# Every location of the program is named, the first ones too (seen
	# before the file arrived); one may be a PLT stub, which no symbol names.
	read -r fn locs k real seen <<<"$m"
	if [ "$locs" -ge 5 ] && [ "$real" -ge $((locs - 1)) ]; then
		pass debuginfod_named_all
	else
		fail debuginfod_named_all "$real of the program's $locs locations named by a function (want all, or all but one); seen:$seen"
	fi
else
	for n in debuginfod_named debuginfod_named_all; do fail "$n" "$RECWHY"; done
fi

# --- --debuginfod URL overrides DEBUGINFOD_URLS, and '' turns it off ---
# The environment names a test server that would serve the right file
# too: its log shows whether it was asked.
if start_fake file "$TMP/serve/chain.debug"; then
	if [ -z "$URL" ]; then
		fail debuginfod_flag "no debuginfod server: $WHY"
	elif DEBUGINFOD_URLS=$FAKE_URL rec flag 2 --debuginfod "$URL"; then
		k=$(names flag); q=$(asked)
		echo "debuginfod flag: $k of leaf_a, leaf_b named; the environment's server asked $q times; $(figures flag)" >&2
		if [ "$k" -eq 2 ] && [ "$q" -eq 0 ] && counted flag fetched 1; then
			pass debuginfod_flag
		else
			fail debuginfod_flag "$k of leaf_a, leaf_b named (want 2), the server DEBUGINFOD_URLS names asked $q times (want 0); $(figures flag)"
		fi
	else
		fail debuginfod_flag "$RECWHY"
	fi
	if DEBUGINFOD_URLS=$FAKE_URL rec off 1 --debuginfod ''; then
		k=$(names off); q=$(asked)
		echo "debuginfod off: $k of leaf_a, leaf_b named; server asked $q times; summary '$(line off)'" >&2
		if [ "$k" -eq 0 ] && [ "$q" -eq 0 ] && [ -z "$(line off)" ]; then
			pass debuginfod_flag_off
		else
			fail debuginfod_flag_off "--debuginfod '': $k of leaf_a, leaf_b named, the server asked $q times, summary '$(line off)' (want none)"
		fi
	else
		fail debuginfod_flag_off "$RECWHY"
	fi
	stop_fake
else
	fail debuginfod_flag "the test server did not start"
	fail debuginfod_flag_off "the test server did not start"
fi

# stalled NAME: why the program's samples fall short (empty when they do
# not), with the figures on stderr.
stalled() {
	local n w
	n=$(samples "$1"); w=$(want "$1")
	echo "debuginfod $1: $n samples, want >= $w (80% of CPU $(awk '{ printf "%.2f", $2 + $3 }' "$TMP/$1.times") s at 999 Hz); run $RUN s, record $WALL s; $(figures "$1")" >&2
	[ "$n" -ge "$w" ] || echo "$n samples, want >= $w (sampling stalled?)"
}

# --- nothing listens: counted failed, not named, sampling goes on ---
if start_fake closed; then
	if DEBUGINFOD_URLS=$FAKE_URL rec down 2; then
		st=$(stalled down); k=$(names down)
		if [ -z "$st" ] && [ "$k" -eq 0 ] && counted down failed 1; then
			pass debuginfod_down
		else
			fail debuginfod_down "${st:-samples ok}; $k of leaf_a, leaf_b named (want 0); $(figures down) (want 1 failed)"
		fi
	else
		fail debuginfod_down "$RECWHY"
	fi
	stop_fake
else
	fail debuginfod_down "the test server did not start"
fi

# slow_check CHECK VAR RUN: with VAR=2 (seconds), the fetch from the silent
# server times out, counted, and sampling goes on. RUN names the files (and
# the library's cache, which remembers a fetch that failed as a miss).
slow_check() {
	local check=$1 r=$3 st k q ok
	: >"$FAKE_LOG"
	export "$2=2"
	DEBUGINFOD_URLS=$FAKE_URL rec "$r" 5; ok=$?
	unset "$2"
	if [ $ok -eq 0 ]; then
		st=$(stalled "$r"); k=$(names "$r"); q=$(asked)
		if [ -z "$st" ] && [ "$k" -eq 0 ] && [ "$q" -ge 1 ] && counted "$r" "timed out" 1; then
			pass "$check"
		else
			fail "$check" "$2=2: ${st:-samples ok}; $k of leaf_a, leaf_b named; server asked $q times; $(figures "$r") (want 1 timed out)"
		fi
	else
		fail "$check" "$RECWHY"
	fi
}

# --- a listener that never answers ---
if start_fake silent; then
	# Bounded by tagprof's own time bound, and by the library's
	# (DEBUGINFOD_MAXTIME): timed out well before the program ends.
	slow_check debuginfod_slow TAGPROF_DEBUGINFOD_MAXTIME slow
	slow_check debuginfod_slow_library_bound DEBUGINFOD_MAXTIME slowlib
	# Unbounded (libdebuginfod would wait 90 s): record ends with the
	# program all the same, the fetch abandoned.
	: >"$FAKE_LOG"
	if DEBUGINFOD_URLS=$FAKE_URL rec nowait 2; then
		st=$(stalled nowait); q=$(asked)
		late=$(awk -v w="$WALL" -v r="$RUN" 'BEGIN { printf "%.2f", w - r }')
		echo "debuginfod nowait: record ended $late s after the program's $RUN s" >&2
		# The fetch under way at the end is counted as asked, and as
		# nothing else.
		if [ -z "$st" ] && [ "$q" -ge 1 ] && within "$late" -1 2 &&
			counted nowait asked 1 && counted nowait timed 0 &&
			counted nowait failed 0; then
			pass debuginfod_slow_no_wait
		else
			fail debuginfod_slow_no_wait "record took $WALL s for a program of $RUN s (want at most 2 s more); ${st:-samples ok}; server asked $q times; $(figures nowait)"
		fi
	else
		fail debuginfod_slow_no_wait "$RECWHY"
	fi
	stop_fake
else
	fail debuginfod_slow "the test server did not start"
	fail debuginfod_slow_library_bound "the test server did not start"
	fail debuginfod_slow_no_wait "the test server did not start"
fi

# unnamed NAME: why the program's mapping is named (empty when it is not).
unnamed() {
	local fn locs k real seen
	read -r fn locs k real seen <<<"$(mapping "$1")"
	echo "debuginfod $1: mapping (FN locs lines real): $fn $locs $k $real $seen" >&2
	if [ "${locs:-0}" -lt 5 ]; then
		echo "only ${locs:-0} locations in the program's mapping"
	elif [ "$k" -gt 0 ] || [ "$fn" -eq 1 ]; then
		echo "$k of $locs locations named ($seen), mapping [FN] $fn"
	fi
}

# refused CHECK NAME FILE [MAX_MB]: a test server hands out FILE as the
# program's debug file (with TAGPROF_DEBUGINFOD_MAX_MB=MAX_MB): it must be
# counted refused, and name nothing.
refused() {
	local check=$1 name=$2 un k q
	[ -n "${4:-}" ] && local -x TAGPROF_DEBUGINFOD_MAX_MB=$4
	if ! start_fake file "$3"; then
		fail "$check" "the test server did not start"
		return
	fi
	if DEBUGINFOD_URLS=$FAKE_URL rec "$name" 2; then
		un=$(unnamed "$name"); k=$(names "$name"); q=$(asked)
		if [ -z "$un" ] && [ "$k" -eq 0 ] && [ "$q" -ge 1 ] && counted "$name" refused 1; then
			pass "$check"
		else
			fail "$check" "${un:-no names}; $k of leaf_a, leaf_b named; server asked $q times; $(figures "$name") (want 1 refused)"
		fi
	else
		fail "$check" "$RECWHY"
	fi
	stop_fake
}

# --- the debug file of another build: refused, nothing named from it ---
refused debuginfod_wrong_file wrong "$TMP/other.debug"
# --- the right file, but 8 MiB over a limit of 1 ---
refused debuginfod_oversized big "$TMP/big.debug" 1

# --- no server: unnamed frames stay honest in the pprof itself ---
# -symbolize=none throughout: pprof's own local symbolization is not
# what is checked (and Debian 12's fails on gcc-12 build IDs).
if rec raw 1; then
	un=$(unnamed raw)
	if [ -z "$un" ]; then
		pass debuginfod_raw_honest
	else
		fail debuginfod_raw_honest "$un (want no function, no [FN])"
	fi
else
	fail debuginfod_raw_honest "$RECWHY"
fi
