#!/usr/bin/env bash
# What system-wide profiling at 999 Hz costs a real server (issue #24):
# redis-server on loopback, driven flat out by redis-benchmark, with no
# profiler and under each of
#   tagprof fp     tagprof record -a -F 999 --unwind fp
#   tagprof auto   tagprof record -a -F 999 --unwind auto
#   perf -g        perf record -a -g -F 999
#   perf dwarf     perf record -a --call-graph dwarf -F 999
# (each with its default event: cpu-clock where there is no PMU), on two
# builds of the same server:
#   debian  Debian's redis-server package: no frame pointers, .eh_frame only
#           (a stripped binary; its dynamic symbols name most functions)
#   fp      the same source package, built here with
#           -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
#
# How the fp server is obtained: `apt-get source redis=VERSION` for the
# version of the installed package, with a private sources list of deb-src
# lines made from the system's Debian deb lines (`apt-get indextargets`) and
# private list and cache directories, so the system's apt state is not
# touched. The tree is unpacked with dpkg-source (Debian's patches applied)
# and built with redis's own Makefile rather than debian/rules, which would
# need the build dependencies and run the test suite: `make redis-server`,
# its bundled jemalloc (built with the same flags, so the allocator keeps
# frame pointers too; Debian links the system's libjemalloc instead), no TLS,
# no systemd. Debian's patch for the system jemalloc tests
# `#if USE_SYSTEM_JEMALLOC == yes`, which is true when neither is defined;
# -DUSE_SYSTEM_JEMALLOC=-1 makes those tests false, leaving upstream's code
# for the bundled jemalloc. libc and the other shared libraries are
# Debian's, without frame pointers. The build takes about 2 minutes on 2
# cores; the binary is cached in $BUILD/bench/ under the package version and
# the flags, so later runs reuse it.
#
# Each server runs as a private instance on a free loopback port (no
# persistence, its own directory), pinned to CPU 0, and redis-benchmark to
# CPU 1 (PIN=0: not pinned). Unpinned, where the scheduler put the two made
# unprofiled runs differ by up to 30% here (2 CPUs); pinned, by a few %.
# Profilers are not pinned: on 2 CPUs, whatever CPU time they take in user
# space is taken from the server or its client. A run starts the profiler (none: nothing),
# waits 1 s for it to attach, runs
#   redis-benchmark -q --csv -c CLIENTS -P PIPELINE -r KEYSPACE -t set,get -n N
# and stops the profiler with SIGINT when the benchmark ends: the profiler
# runs for the whole benchmark. N is calibrated once per server so that an
# unprofiled run takes about SECONDS s. Runs are interleaved: every round
# runs every (server, profiler) pair once, so drift in the machine's speed
# hits all alike. Like record_overhead.sh, a run waits for the CPUs to be
# idle first, and a run during which CPU time that is neither the servers',
# the benchmark's nor the profiler's exceeds FOREIGN_MAX % of all CPUs is
# done again (TRIES times at most).
#
# Printed per server and profiler:
#   req/s       median throughput (requests/s over the SET and GET tests:
#               their harmonic mean, as both have N requests)
#   loss%       1 - req/s / the no-profiler req/s, of the medians (positive:
#               slower)
#   paired%     the median over rounds of the same, each run against the
#               same round's no-profiler run
#   range       the lowest and highest of those paired losses; for the
#               no-profiler rows, how far their runs lie from their median
#               (below..above, %): the noise in which the losses stand
#   B/sample    tagprof: ring-buffer bytes per sample (median of its
#               summary's figure); perf: perf.data bytes per sample
#   start%      tagprof: the server's samples (filtered by its pid) whose user
#               stack reaches _start (clone/clone3 for threads), median
#   entry%      the same, also counting stacks that end in glibc's start code
#               (__libc_start_call_main, __libc_start_main, start_thread):
#               glibc has no frame pointers, so a frame-pointer walk that went
#               through all of the server's own frames stops there
#   samples     median samples per run, whole system; lost: summed over the
#               runs (perf: the chunks it reports lost)
#   bpf ns      tagprof: the sampling program's run time per sample (the
#               kernel's BPF statistics, kernel.bpf_stats_enabled on for the
#               run): spent in the sampled task's interrupt, on the server's
#               CPU when the server was sampled
#   prof us     the profiler process's own CPU (user and system) per sample
# The last two are the profiler's cost counted rather than inferred from
# throughput, which on a noisy VM varies by more than the losses it should
# show: their sum is what a sample costs tagprof. perf's in-kernel sampling
# and stack walk have no such counter, so for perf only its process's CPU
# is printed.
#
# usage: tests/bench/real_server.sh [SECONDS] [ROUNDS]   (root, after make)
# env:   CLIENTS (50), PIPELINE (16), KEYSPACE (100000), FREQ (999),
#        FOREIGN_MAX (10), QUIET_WAIT (60 s), TRIES (3), PIN (1 with 2 CPUs
#        or more), BUILD (build)
# Installs redis-server, redis-tools, golang-go, linux-perf, bpftool and dpkg-dev
# from Debian when missing (on a systemd host, installing redis-server also
# starts Debian's own instance on port 6379: it stays idle here).
# Defaults (8 s, 5 rounds): about 12 minutes, plus the first build.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/tests/bench/lib.sh"
SECS=${1:-8}
ROUNDS=${2:-5}
CLIENTS=${CLIENTS:-50}
PIPELINE=${PIPELINE:-16}
KEYSPACE=${KEYSPACE:-100000}
FREQ=${FREQ:-999}
FOREIGN_MAX=${FOREIGN_MAX:-10}
QUIET_WAIT=${QUIET_WAIT:-60}
TRIES=${TRIES:-3}
PIN=${PIN:-$([ "$(nproc)" -ge 2 ] && echo 1 || echo 0)}
SERVER_ON=() CLIENT_ON=()
if [ "$PIN" = 1 ]; then
	SERVER_ON=(taskset -c 0) CLIENT_ON=(taskset -c 1)
fi
B=${BUILD:-build}
case $B in /*) ;; *) B=$repo/$B ;; esac
T=$B/tagprof
FP_CFLAGS="-O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"
# redis's Makefile, for the fp server (see above); the cache is keyed by them.
FP_MAKE=(redis-server BUILD_TLS=no USE_SYSTEMD=no MALLOC=jemalloc
	CFLAGS="$FP_CFLAGS" REDIS_CFLAGS=-DUSE_SYSTEM_JEMALLOC=-1)

SERVERS=(debian fp)
PROFILERS=(none "tagprof fp" "tagprof auto" "perf -g" "perf dwarf")

TMP=
BUILD_PID=	# setsid make: its own process group
BENCH_PID=
PROF_PID=
declare -A SERVER_PID=() PORT=() BIN=() REQUESTS=()

die() { bench_log "$*"; exit 1; }

cleanup() {
	local rc=$? s
	bpf_stats_restore
	stop_pid "$BENCH_PID" TERM
	stop_pid "$PROF_PID" INT
	for s in "${!SERVER_PID[@]}"; do
		stop_pid "${SERVER_PID[$s]}" TERM
	done
	if alive "$BUILD_PID"; then
		kill -TERM -- -"$BUILD_PID" 2>/dev/null || true
		wait "$BUILD_PID" 2>/dev/null || true
	fi
	[ -n "$TMP" ] || return 0
	rm -f "$TMP"/run/perf.data
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 130 ]; then
		bench_log "failed; files kept in $TMP"
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- preparation ---

# need COMMAND PACKAGE: installs PACKAGE from Debian when COMMAND is missing.
need() {
	command -v "$1" >/dev/null 2>&1 && return 0
	bench_log "installing $2"
	if [ -z "${APT_UPDATED:-}" ]; then
		apt-get update -qq >&2 || die "apt-get update failed"
		APT_UPDATED=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "$2" >&2 || die "could not install $2"
	command -v "$1" >/dev/null 2>&1 || die "$2 installed, but no $1"
}

# fp_server: sets BIN[fp] to the frame-pointer build, building it first
# when the cache has none for the installed version.
fp_server() {
	local ver uver dir src apt opts signed=
	ver=$(dpkg-query -W -f '${source:Version}' redis-server)
	uver=${ver#*:}
	dir=$B/bench/redis-fp-$uver-$(printf '%s\n' "${FP_MAKE[@]}" | md5sum | cut -c1-8)
	BIN[fp]=$dir/redis-server
	if [ -x "${BIN[fp]}" ]; then
		bench_log "fp server: cached $dir"
		return 0
	fi
	bench_log "fp server: building redis $ver from Debian's source with frame pointers (about 2 minutes)"
	apt=$TMP/apt
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts"
	[ -r /usr/share/keyrings/debian-archive-keyring.gpg ] &&
		signed=" [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
	apt-get indextargets --format '$(ORIGIN) $(REPO_URI) $(RELEASE) $(COMPONENT)' \
		'Created-By: Packages' | sort -u |
		awk -v s="$signed" '$1 == "Debian" { print "deb-src" s, $2, $3, $4 }' \
		>"$apt/sources.list"
	[ -s "$apt/sources.list" ] || die "no Debian repository in apt's sources: cannot fetch redis's source"
	opts=(-o Dir::Etc::SourceList="$apt/sources.list"
		-o Dir::Etc::SourceParts="$apt/parts"
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache"
		-o APT::Sandbox::User=root)
	apt-get "${opts[@]}" -qq update >&2 || die "apt-get update (deb-src) failed"
	mkdir -p "$B/bench"
	src=$(mktemp -d "$B/bench/redis-src.XXXXXX")
	(cd "$src" && apt-get "${opts[@]}" -qq source --download-only "redis=$ver" >&2) ||
		die "apt-get source redis=$ver failed"
	dpkg-source -x "$src"/redis_"$uver".dsc "$src/tree" >"$src/unpack.log" 2>&1 ||
		die "dpkg-source -x failed: $(tail -3 "$src/unpack.log")"
	setsid make -C "$src/tree" -j"$(nproc)" "${FP_MAKE[@]}" \
		>"$src/build.log" 2>&1 </dev/null &
	BUILD_PID=$!
	wait "$BUILD_PID" || die "redis build failed, see $src/build.log"
	BUILD_PID=
	mkdir -p "$dir"
	cp "$src/tree/src/redis-server" "$dir/redis-server.tmp"
	mv "$dir/redis-server.tmp" "${BIN[fp]}"
	rm -rf "$src"
}

# has_fp BINARY: true when aeMain, the event loop, sets up a frame pointer.
has_fp() {
	objdump -d --no-show-raw-insn --disassemble=aeMain "$1" 2>/dev/null |
		grep -A4 '<aeMain>:' | grep -q 'mov *%rsp,%rbp'
}

# start_server NAME: a private instance of BIN[NAME] on a free port.
start_server() {
	local name=$1 d=$TMP/redis-$1 i
	mkdir -p "$d"
	PORT[$name]=$(free_port)
	"${SERVER_ON[@]}" "${BIN[$name]}" --port "${PORT[$name]}" --bind 127.0.0.1 --save '' \
		--appendonly no --dir "$d" --logfile "$d/log" --daemonize no \
		>"$d/out" 2>&1 </dev/null &
	SERVER_PID[$name]=$!
	for i in $(seq 100); do
		[ "$(redis-cli -p "${PORT[$name]}" ping 2>/dev/null)" = PONG ] && return 0
		alive "${SERVER_PID[$name]}" || break
		sleep 0.1
	done
	die "redis-server ($name) did not start: $(tail -3 "$d/log" "$d/out" 2>/dev/null)"
}

# bench NAME REQUESTS OUT: one redis-benchmark run against server NAME, csv
# into OUT; not in $(...), so that cleanup() knows BENCH_PID.
bench() {
	"${CLIENT_ON[@]}" redis-benchmark -p "${PORT[$1]}" -q --csv -c "$CLIENTS" -P "$PIPELINE" \
		-r "$KEYSPACE" -t set,get -n "$2" >"$3" 2>"$3.err" </dev/null &
	BENCH_PID=$!
	wait "$BENCH_PID" || die "redis-benchmark failed: $(tail -3 "$3.err")"
	BENCH_PID=
}

# rps CSV: requests/s over all the tests (each has the same request count:
# the harmonic mean of their rates).
rps() {
	awk -F'"' '$2 != "test" && $4 + 0 > 0 { n++; s += 1 / $4 }
		END { if (!n) exit 1; printf "%.0f", n / s }' "$1"
}

# calibrate NAME: REQUESTS[NAME], the request count of a test such that an
# unprofiled run takes about SECS s (two tests). Warms the server up, too.
calibrate() {
	local name=$1 r
	wait_quiet "$FOREIGN_MAX" "$QUIET_WAIT"
	bench "$name" 300000 "$TMP/cal.csv"
	r=$(rps "$TMP/cal.csv") || die "no throughput in redis-benchmark's output"
	REQUESTS[$name]=$(awk -v r="$r" -v s="$SECS" \
		'BEGIN { n = int(r * s / 2 / 10000) * 10000; print n < 10000 ? 10000 : n }')
	bench_log "$name: $r req/s in calibration: ${REQUESTS[$name]} requests a test"
}

# --- one run ---

# share PPROF PID: "start% entry%" of PID's samples in tagprof's profile.
share() {
	go tool pprof -traces -sample_index=samples -tagfocus=pid="$2" "$1" 2>/dev/null | awk '
		function flush() {
			if (!n) return
			all += v; s = e = 0
			for (i = 1; i <= n; i++) {
				if (fr[i] ~ /^(_start|clone|clone3|__clone|__clone3)$/) s = 1
				if (fr[i] ~ /^(__libc_start_call_main|__libc_start_main|__libc_start_main_impl|start_thread)$/) e = 1
			}
			start += s * v; entry += (s || e) * v
			n = 0
		}
		/^-+\+-+$/ { flush(); next }
		n == 0 && /^ +[^ ]+: / { next }
		n == 0 && /^ +[0-9]/ { v = $1; fr[n = 1] = $2; next }
		n > 0 { fr[++n] = $1 }
		END {
			flush()
			if (all) printf "%.1f %.1f\n", 100 * start / all, 100 * entry / all
			else print "nan nan"
		}'
}

# measure SERVER PROFILER: one run. Sets RESULT to
# "req/s B/sample start% entry% samples lost" ("-" where it does not apply)
# and FOREIGN (% of all CPUs' time used by others meanwhile), and COST to
# "bpf_ns prof_us" (per sample; "-" where they do not apply).
RESULT='' FOREIGN='' COST=''
measure() {
	local srv=$1 prof=$2 dir=$TMP/run cmd=() rc=0 r b=- st=- en=- n=- lost=-
	local t0 t1 busy0 busy1 s0 s1 p=0 line size ours bt=0 bc=0 bns=- pus=-
	rm -rf "$dir"
	mkdir -p "$dir"
	case $prof in
	# -d: without it tagprof stops by itself after 10 s; here SIGINT does.
	"tagprof fp") cmd=("$T" record -a -F "$FREQ" --unwind fp -d 86400 -o "$dir/t.pb.gz") ;;
	"tagprof auto") cmd=("$T" record -a -F "$FREQ" --unwind auto -d 86400 -o "$dir/t.pb.gz") ;;
	"perf -g") cmd=(perf record -a -g -F "$FREQ" -o "$dir/perf.data") ;;
	"perf dwarf") cmd=(perf record -a --call-graph dwarf -F "$FREQ" -o "$dir/perf.data") ;;
	esac
	t0=$(date +%s%N) busy0=$(busy_ms)
	s0=$(($(proc_cpu_ms "${SERVER_PID[debian]}") + $(proc_cpu_ms "${SERVER_PID[fp]}")))
	times >"$dir/times.0"
	if [ ${#cmd[@]} -gt 0 ]; then
		"${cmd[@]}" >"$dir/prof.out" 2>"$dir/prof.err" </dev/null &
		PROF_PID=$!
	fi
	sleep 1		# time to attach on every CPU
	if [ -n "$PROF_PID" ] && ! alive "$PROF_PID"; then
		die "$prof exited early: $(tail -3 "$dir/prof.err")"
	fi
	bench "$srv" "${REQUESTS[$srv]}" "$dir/bench.csv"
	if [ -n "$PROF_PID" ]; then
		alive "$PROF_PID" || die "$prof died during the benchmark: $(tail -3 "$dir/prof.err")"
		p=$(proc_cpu_ms "$PROF_PID")
		case $prof in
		tagprof*) read -r bt bc _ < <(bpf_stats "$PROF_PID" || echo "0 0") ;;
		esac
	fi
	times >"$dir/times.1"
	s1=$(($(proc_cpu_ms "${SERVER_PID[debian]}") + $(proc_cpu_ms "${SERVER_PID[fp]}")))
	t1=$(date +%s%N) busy1=$(busy_ms)
	if [ -n "$PROF_PID" ]; then
		kill -INT "$PROF_PID"
		wait "$PROF_PID" || rc=$?
		PROF_PID=
	fi
	r=$(rps "$dir/bench.csv") || die "no throughput in redis-benchmark's output"
	# Ours: the servers, this script's children (the benchmark) and the
	# profiler. Their times include the interrupts and softirqs (loopback
	# networking, sampling) that came while they ran, which /proc/stat
	# counts apart: those are part of busy_ms, not to be added again.
	ours=$(($(children_cpu_ms "$dir/times.1") - $(children_cpu_ms "$dir/times.0") +
		s1 - s0 + p))
	FOREIGN=$(awk -v b="$((busy1 - busy0))" -v o="$ours" \
		-v cap="$(($(nproc) * (t1 - t0) / 1000000))" \
		'BEGIN { printf "%.1f", 100 * (b - o) / cap }')
	case $prof in
	tagprof*)
		[ "$rc" -eq 0 ] || die "$prof exited $rc after SIGINT: $(tail -3 "$dir/prof.err")"
		# "tagprof: 9.1 s, event cpu-clock, 18123 samples, 0 lost, 12 processes"
		line=$(grep -E '^tagprof: .* samples, [0-9]+ lost' "$dir/prof.err" | tail -1) ||
			die "no summary line from tagprof: $(tail -3 "$dir/prof.err")"
		n=$(sed -E 's/.* ([0-9]+) samples, .*/\1/' <<<"$line")
		lost=$(sed -E 's/.* ([0-9]+) lost.*/\1/' <<<"$line")
		b=$(sed -n 's/.* \([0-9]*\) ring-buffer bytes per sample.*/\1/p' "$dir/prof.err" | tail -1)
		[ -n "$b" ] || b=-
		[ -s "$dir/t.pb.gz" ] || die "tagprof wrote no profile"
		read -r st en < <(share "$dir/t.pb.gz" "${SERVER_PID[$srv]}")
		;;
	perf*)
		# perf dies by the SIGINT it re-raises (130), or exits 0.
		[ "$rc" -eq 0 ] || [ "$rc" -eq 130 ] ||
			die "$prof exited $rc: $(tail -3 "$dir/prof.err")"
		# "[ perf record: Captured and wrote 198.611 MB perf.data (24817 samples) ]"
		n=$(sed -nE 's/.*\(([0-9]+) samples\).*/\1/p' "$dir/prof.err" | tail -1)
		[ -n "$n" ] && [ "$n" -gt 0 ] || die "$prof: no sample count: $(tail -3 "$dir/prof.err")"
		size=$(stat -c %s "$dir/perf.data")
		b=$((size / n))
		lost=$(sed -nE 's/.*lost ([0-9]+) chunks.*/\1/p' "$dir/prof.err" |
			awk '{ s += $1 } END { print s + 0 }')
		rm -f "$dir/perf.data"	# up to hundreds of MB with dwarf
		;;
	esac
	if [ "$n" != - ] && [ "$n" -gt 0 ]; then
		pus=$(awk -v p="$p" -v n="$n" 'BEGIN { printf "%.2f", 1000 * p / n }')
		[ "$bc" -gt 0 ] && bns=$((bt / bc))
	fi
	RESULT="$r $b $st $en $n $lost"
	COST="$bns $pus"
}

# measure_quiet ROUND SERVER PROFILER: measure, redone while other load
# disturbed it; appends "round server profiler(with _) RESULT foreign tries"
# to $TMP/results.
measure_quiet() {
	local round=$1 srv=$2 prof=$3 try
	for ((try = 1; ; try++)); do
		wait_quiet "$FOREIGN_MAX" "$QUIET_WAIT"
		measure "$srv" "$prof"
		bench_log "round $round/$ROUNDS $srv $(printf '%-12s' "$prof") req/s," \
			"B/sample, start%, entry%, samples, lost: $RESULT; bpf ns, prof us: $COST;" \
			"other load $FOREIGN%"
		le "$FOREIGN" "$FOREIGN_MAX" && break
		if [ "$try" -ge "$TRIES" ]; then
			bench_log "warning: keeping it anyway after $TRIES tries"
			break
		fi
		bench_log "other load above $FOREIGN_MAX% of the CPUs: run again"
	done
	echo "$round $srv ${prof// /_} $RESULT $FOREIGN $try $COST" >>"$TMP/results"
}

# --- report ---

# col SERVER PROFILER FIELD: the median of a results column over the rounds.
col() {
	awk -v s="$1" -v p="${2// /_}" -v f="$3" '$2 == s && $3 == p && $f != "-" { print $f }' \
		"$TMP/results" | median
}

# num FORMAT VALUE: VALUE in FORMAT, or as it is when not a number ("-").
num() {
	awk -v f="$1" -v v="$2" 'BEGIN {
		if (v ~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) printf f, v; else printf "%s", v }'
}

report() {
	local srv prof base loss paired range lost
	echo
	echo "real_server: redis $(dpkg-query -W -f '${Version}' redis-server);" \
		"redis-benchmark -c $CLIENTS -P $PIPELINE -r $KEYSPACE -t set,get" \
		"(debian: -n ${REQUESTS[debian]}, fp: -n ${REQUESTS[fp]}, about ${SECS} s" \
		"unprofiled); -F $FREQ; median of $ROUNDS interleaved rounds;" \
		"$([ "$PIN" = 1 ] && echo "server on CPU 0, client on CPU 1;" || echo "not pinned;")" \
		"$(nproc) CPUs, $(uname -r)"
	echo "(loss%: of the medians; paired%: median of each round's loss" \
		"against its own no-profiler run; range: of those, or for none the" \
		"spread of its runs around their median; B/sample: tagprof's" \
		"ring-buffer bytes, perf's perf.data bytes; start%/entry%: the" \
		"server's samples whose user stack reaches _start or clone / also" \
		"glibc's start code; lost: perf counts chunks)"
	awk '$11 > 1 { r += $11 - 1 } $10 > max { k++ }
		END { printf "(runs redone for other load above %s%% of the CPUs: %d; kept anyway: %d)\n", max, r, k }' \
		max="$FOREIGN_MAX" "$TMP/results"
	# Per round: the loss against the same round's no-profiler run.
	awk '$3 == "none" { base[$1 " " $2] = $4 }
		{ print $0, (base[$1 " " $2] ? 100 * (1 - $4 / base[$1 " " $2]) : "-") }' \
		"$TMP/results" >"$TMP/results.loss"
	echo
	printf '%-7s %-13s %9s %6s %8s %-13s %9s %7s %7s %8s %6s %7s %8s\n' server profiler \
		req/s loss% paired% range B/sample start% entry% samples lost "bpf ns" "prof us"
	for srv in "${SERVERS[@]}"; do
		base=$(col "$srv" none 4)
		for prof in "${PROFILERS[@]}"; do
			loss=$(awk -v r="$(col "$srv" "$prof" 4)" -v b="$base" \
				'BEGIN { if (r + 0 > 0 && b + 0 > 0) printf "%.1f", 100 * (1 - r / b); else print "-" }')
			paired=$(awk -v s="$srv" -v p="${prof// /_}" '$2 == s && $3 == p && $14 != "-" { print $14 }' \
				"$TMP/results.loss" | median)
			range=$(awk -v s="$srv" -v p="${prof// /_}" '$2 == s && $3 == p {
					if ($14 == "-") next
					if (!c++) lo = hi = $14
					if ($14 < lo) lo = $14; if ($14 > hi) hi = $14 }
				END { if (c) printf "%.1f..%.1f", lo, hi; else print "-" }' "$TMP/results.loss")
			lost=$(awk -v s="$srv" -v p="${prof// /_}" '$2 == s && $3 == p && $9 != "-" { t += $9; c++ }
				END { print c ? t : "-" }' "$TMP/results")
			if [ "$prof" = none ]; then
				loss=- paired=- lost=-
				range=$(awk -v s="$srv" -v b="$base" '$2 == s && $3 == "none" {
						d = 100 * ($4 / b - 1)
						if (!c++) lo = hi = d
						if (d < lo) lo = d; if (d > hi) hi = d }
					END { if (c) printf "%+.1f..%+.1f", lo, hi; else print "-" }' "$TMP/results")
			fi
			printf '%-7s %-13s %9s %6s %8s %-13s %9s %7s %7s %8s %6s %7s %8s\n' "$srv" "$prof" \
				"$(num %.0f "$(col "$srv" "$prof" 4)")" "$loss" "$(num %.1f "$paired")" "$range" \
				"$(num %.0f "$(col "$srv" "$prof" 5)")" "$(num %.1f "$(col "$srv" "$prof" 6)")" \
				"$(num %.1f "$(col "$srv" "$prof" 7)")" "$(num %.0f "$(col "$srv" "$prof" 8)")" "$lost" \
				"$(num %.0f "$(col "$srv" "$prof" 12)")" "$(num %.1f "$(col "$srv" "$prof" 13)")"
		done
	done
}

main() {
	local t_start round srv prof
	t_start=$(date +%s)
	[ "$(id -u)" -eq 0 ] || die "needs root (BPF, perf -a, apt-get)"
	case $SECS$ROUNDS in *[!0-9]*) die "usage: $0 [SECONDS] [ROUNDS]" ;; esac
	[ "$SECS" -gt 0 ] && [ "$ROUNDS" -gt 0 ] || die "SECONDS and ROUNDS must be positive"
	[ -x "$T" ] || die "$T is missing: run make first"
	need redis-server redis-server
	need redis-benchmark redis-tools
	need go golang-go
	need perf linux-perf
	need dpkg-source dpkg-dev
	need objdump binutils
	need bpftool bpftool
	need make make
	perf version >/dev/null 2>&1 || die "perf does not run (linux-perf for another kernel?)"
	TMP=$(mktemp -d /tmp/tagprof-real-server.XXXXXX)
	: >"$TMP/results"
	bpf_stats_enable

	# Not resolved: Debian's redis-server links to redis-check-rdb, which acts
	# by the name it is started under.
	BIN[debian]=$(command -v redis-server)
	fp_server
	has_fp "${BIN[fp]}" || die "${BIN[fp]}: aeMain sets up no frame pointer"
	has_fp "${BIN[debian]}" &&
		bench_log "warning: Debian's redis-server keeps frame pointers here"
	for srv in "${SERVERS[@]}"; do
		start_server "$srv"
		calibrate "$srv"
	done
	for ((round = 1; round <= ROUNDS; round++)); do
		for srv in "${SERVERS[@]}"; do
			for prof in "${PROFILERS[@]}"; do
				measure_quiet "$round" "$srv" "$prof"
			done
		done
	done
	bench_log "done in $(($(date +%s) - t_start)) s"
	report
}

main "$@"
