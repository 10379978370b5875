# Shared helpers for tests/e2e/*.sh (sourced). Each check prints one line:
# "PASS name", "FAIL name: why" or "SKIP name: why"; tests/run.sh counts them.
set -u
: "${TAGPROF:=$PWD/build/tagprof}"
: "${WORKLOADS:=$PWD/build/workloads}"
# The exit trap removes a read-only copy of the path: a script (or a shell
# that sourced this file) that sets TMP to something else must not make it
# remove that instead.
readonly TAGPROF_E2E_TMP=$(mktemp -d /tmp/tagprof-e2e.XXXXXX)
TMP=$TAGPROF_E2E_TMP
trap 'rm -rf "$TAGPROF_E2E_TMP"' EXIT

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
skip() { echo "SKIP $1: $2"; }
# rss_unchecked NAME: under the sanitizers (tests/run.sh exports SANITIZE),
# says that the RSS bound NAME is not checked, and is true: RSS is then
# mostly ASan's shadow memory and its quarantine of freed blocks, not the
# program's. The plain make check checks it.
rss_unchecked() {
	[ -n "${SANITIZE:-}" ] || return 1
	skip "$1" "RSS under ASan is mostly its shadow memory and quarantine; the plain build checks this bound"
}

# Skips every check of the script when BPF cannot be used here.
need_bpf() {
	if [ "$(id -u)" -ne 0 ]; then
		for n in "$@"; do skip "$n" "needs root for BPF"; done
		exit 0
	fi
}

# pprof FILE ARGS...: go tool pprof, with stderr kept apart in $TMP/pprof.err.
pprof() {
	local f=$1; shift
	go tool pprof "$@" "$f" 2>"$TMP/pprof.err"
}

# flat FILE FUNC ARGS...: the flat sample count of FUNC in -top, inlined
# callees counted in the function they are inlined into.
flat() {
	local f=$1 fn=$2; shift 2
	pprof "$f" -top -noinlines -nodecount=1000000 -nodefraction=0 -sample_index=samples "$@" |
		awk -v fn="$fn" '$6 == fn { print $1; found=1 } END { if (!found) print 0 }'
}

# cum FILE FUNC ARGS...: the cumulative sample count of FUNC in -top.
cum() {
	local f=$1 fn=$2; shift 2
	pprof "$f" -top -noinlines -nodecount=1000000 -nodefraction=0 -sample_index=samples "$@" |
		awk -v fn="$fn" '$6 == fn { print $4; found=1 } END { if (!found) print 0 }'
}

# total FILE ARGS...: samples left after the filters in ARGS (-tagfocus,
# -focus...): what "Showing nodes accounting for N" says with every node
# shown ("Total samples" and "of N total" ignore tag filters). 0 when the
# filters match nothing.
total() {
	local f=$1; shift
	pprof "$f" -top -nodecount=1000000 -nodefraction=0 -edgefraction=0 \
		-sample_index=samples "$@" |
		sed -n 's/^Showing nodes accounting for \([0-9]*\),.*/\1/p' |
		grep . || echo 0
}

# traces FILE ARGS...: one line per stack, "COUNT frame;frame;..." leaf
# first, from pprof -traces (labels dropped).
traces() {
	local f=$1; shift
	pprof "$f" -traces -sample_index=samples "$@" | awk '
		/^-+\+-+$/ { if (n) print v, s; n = 0; s = ""; next }
		n == 0 && /^ +[^ ]+: / { next }	# a label line
		n == 0 && /^ +[0-9]/ { v = $1; $1 = ""; sub(/^ +/, ""); s = $0; n = 1; next }
		n > 0 { sub(/^ +/, ""); s = s ";" $0; n++ }
		END { if (n) print v, s }'
}

# leaf_labels FILE ARGS...: one line per stack, "COUNT LEAF key=value ...":
# its leaf function (inlined callees counted in their caller) and its
# labels as pprof -traces prints them.
leaf_labels() {
	local f=$1; shift
	pprof "$f" -traces -noinlines -sample_index=samples "$@" | awk '
		/^-+\+-+$/ { if (n) print v, leaf, l; n = 0; l = ""; next }
		n == 0 && /^ *[^ 0-9][^ ]*: / { k = $1; sub(/:$/, "", k); $1 = "";
			sub(/^ +/, ""); gsub(/ /, "_"); l = l " " k "=" $0; next }
		n == 0 && /^ +[0-9]/ { v = $1; leaf = $2; n = 1; next }
		END { if (n) print v, leaf, l }'
}

# pct PART WHOLE: percentage with one decimal.
pct() { awk -v p="$1" -v w="$2" 'BEGIN { printf "%.1f", w ? 100 * p / w : 0 }'; }

# within X LO HI: true when LO <= X <= HI.
within() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }

# Statistical checks compare a share of N independent samples with the
# share P (percent) the workload is built to give. The sampling error is
# binomial, sd = sqrt(P(1-P)/N); a bound of 4 sd fails a correct run about
# once in 16000, and no wider bound is needed.
# sd4 P N: 4 sd in points, one decimal.
sd4() { awk -v p="$1" -v n="$2" 'BEGIN { printf "%.1f", n ? 400 * sqrt(p / 100 * (1 - p / 100) / n) : 100 }'; }
# near X P N: true when the share X (percent) is within sd4 P N of P.
near() {
	local t; t=$(sd4 "$2" "$3")
	awk -v x="$1" -v p="$2" -v t="$t" 'BEGIN { exit !(x >= p - t && x <= p + t) }'
}

# check NAME COMMAND...: PASS NAME when COMMAND succeeds, else FAIL with
# its output. (A script with a check of its own defines it after this.)
check() {
	local name=$1 why; shift
	if why=$("$@" 2>&1); then pass "$name"; else fail "$name" "$why"; fi
}

# py ARGS...: python reading its script from stdin, with the tests' spec
# readers (tests/pprof_read.py) importable.
py() { PYTHONPATH="$(dirname "${BASH_SOURCE[0]}")" python3 - "$@"; }

# says RC PATTERN COMMAND...: true when COMMAND exits RC and its stderr
# matches the extended regular expression PATTERN (any case); else says
# what it did instead.
says() {
	local want=$1 pattern=$2 rc; shift 2
	"$@" >/dev/null 2>"$TMP/says.err"
	rc=$?
	[ $rc = "$want" ] && grep -qiE -- "$pattern" "$TMP/says.err" ||
		{ echo "${*#"$TAGPROF "}: exit $rc, said: $(cat "$TMP/says.err") (want $want, /$pattern/)"; return 1; }
}

# no_pprof_warnings NAME: fails NAME when the last pprof run warned.
pprof_warned() { grep -qi 'warn\|error\|fail' "$TMP/pprof.err"; }

# Security tests (issue 10) run each attack as an ordinary user: nobody
# (uid 65534), no supplementary groups, no capabilities.
ATTACKER_UID=65534
# as_attacker CMD...: runs CMD as that user.
as_attacker() {
	setpriv --reuid=$ATTACKER_UID --regid=$ATTACKER_UID --clear-groups \
		--inh-caps=-all "$@"
}
# attacker_dir NAME: a fresh directory the attacker owns, under $TMP (made
# traversable, not listable, for that user). Prints its path.
attacker_dir() {
	chmod 711 "$TMP"
	mkdir -p "$TMP/$1" && chown $ATTACKER_UID:$ATTACKER_UID "$TMP/$1" &&
		echo "$TMP/$1"
}

# bounded_record [ARGS...]: `record -a -d 2 -F 199 ARGS` into $TMP/r.pb.gz
# (its log $TMP/r.err), killed after 30 s, timed: sets rc, secs, rss (peak
# KiB), ics (involuntary context switches), u and s (CPU seconds).
bounded_record() {
	/usr/bin/time -f '%e %M %c %U %S' -o "$TMP/time" timeout -s KILL 30 \
		"$TAGPROF" record -a -d 2 -F 199 "$@" -o "$TMP/r.pb.gz" 2>"$TMP/r.err"
	rc=$?
	read -r secs rss ics u s <"$TMP/time"
}

# check_bounded NAME: says what the bounded_record run took, and checks it:
# NAME_time (rc 0, on time within 10 s) and NAME_rss (peak RSS within
# 256 MiB).
check_bounded() {
	local load
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	echo "$1: record -d 2 took $secs s (CPU $u s user, $s s system), peak RSS $rss KiB, rc $rc ($ics involuntary context switches, load $load)"
	if [ "$rc" -eq 0 ] && on_time "$secs" 10; then
		pass "$1_time"
	else
		fail "$1_time" "rc $rc after $secs s (load $load); $(tail -2 "$TMP/r.err")"
	fi
	if rss_unchecked "$1_rss"; then
		:
	elif [ "${rss:-0}" -gt 0 ] && [ "$rss" -le 262144 ]; then
		pass "$1_rss"
	else
		fail "$1_rss" "peak RSS $rss KiB (bound 256 MiB)"
	fi
}

# on_time SECS BOUND: true when a run of SECS seconds was within BOUND, or
# longer on a machine whose 1-minute load is over twice its CPUs (then the
# run waited for a CPU: at load 20 on 2 CPUs, `record -d 2` took 15 s for
# 0.6 s of CPU, its start-up 2.9 s for 0.13 s). A hang still fails: the
# callers kill the run well past BOUND, and a killed run fails.
on_time() {
	within "$1" 0 "$2" && return 0
	awk -v l="$(cut -d' ' -f1 /proc/loadavg)" -v n="$(nproc)" \
		'BEGIN { exit !(l > 2 * n) }' || return 1
	echo "NOTE: $1 s over the bound of $2 s at load $(cut -d' ' -f1 /proc/loadavg) on $(nproc) CPUs: counted as on time"
}
