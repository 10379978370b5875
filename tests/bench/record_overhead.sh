#!/usr/bin/env bash
# Overhead of system-wide profiling at 999 Hz: tagprof record against perf
# record and bpftrace, on a machine kept busy by a fixed amount of work done
# under 127+-frame stacks (build/workloads/fixedwork, one copy per CPU).
#
# For every profiler it reports, as medians over RUNS runs:
#   slowdown           the workload's wall time against the unprofiled median
#   cpu_ms/1k_samples  the profiler process's own user+sys CPU, start-up and
#                      exit work included, per 1,000 samples it got
#   peak_rss_MB        the profiler process's peak RSS (GNU time %M), MiB
#   bpf_ns/sample      run_time_ns / run_cnt of its perf_event BPF program
#                      (kernel.bpf_stats_enabled), read just before stopping
#   samples            samples the profiler received
# and checks tagprof against the issue's targets. Runs are interleaved
# round-robin (none, tagprof, perf, bpftrace, none, ...) so that drift in the
# machine's speed hits every row alike. A run during which something else
# used the CPUs (see FOREIGN_MAX) is thrown away and done again.
#
# usage: sudo tests/bench/record_overhead.sh
# env:   RUNS (default 5); ITER and DEPTH, fixedwork's arguments (defaults
#        5400 and 130, its own: about 5 s here); FREQ (default 999);
#        QUIET_WAIT (default 300 s, see below)
# exit:  0 when everything was measured (targets may still be MISS), 1 when
#        something could not be measured or a profiler failed.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/tests/bench/lib.sh"
BUILD=${BUILD:-build}
RUNS=${RUNS:-5}
ITER=${ITER:-5400}
DEPTH=${DEPTH:-130}
FREQ=${FREQ:-999}
TAGPROF=$repo/$BUILD/tagprof
WORKLOAD=$repo/$BUILD/workloads/fixedwork
GNU_TIME=/usr/bin/time

# Other load on the machine (other users' jobs, a hypervisor's steal) slows
# the workload as much as a profiler does. Each run waits (QUIET_WAIT s at
# most) for the CPUs to be idle, and a run in which CPU time not ours
# exceeds FOREIGN_MAX % of all CPUs' time is redone, at most TRIES times.
FOREIGN_MAX=5
QUIET_WAIT=${QUIET_WAIT:-300}
TRIES=4

# Issue targets for tagprof. BPF time is compared with bpftrace's
# (`@[ustack,kstack] = count()`: two stack walks and a map update) measured
# in the same invocation, as absolute figures vary from machine to machine.
TARGET_BPF_RATIO=0.8
TARGET_CPU_RATIO=0.5
TARGET_RSS_MB=32

TMP=
PROF_SH_PID=	# subshell that runs GNU time and then reads its CPU
PROF_PID=	# the profiler itself, GNU time's child
WORK_PIDS=()

die() { bench_log "$*"; exit 1; }

# Temp files go, except after a failure: then the failed run's output
# (profiler stderr, GNU time's report) is kept for a look.
cleanup() {
	local rc=$? p
	for p in "${WORK_PIDS[@]}"; do
		stop_pid "$p" TERM
	done
	stop_pid "$PROF_PID" INT
	stop_pid "$PROF_SH_PID" TERM
	bpf_stats_restore
	if [ -n "$TMP" ] && [ "$rc" -ne 0 ] && [ "$rc" -ne 130 ]; then
		echo "record_overhead: failed; files kept in $TMP" >&2
	elif [ -n "$TMP" ]; then
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- small numeric helpers (awk: bash has no floating point) ---

# calc EXPR: evaluates an awk expression, printed with %.6g.
calc() { awk "BEGIN { printf \"%.6g\", $1 }"; }

now_ns() { date +%s%N; }

# --- preparation ---

check_prereqs() {
	[ "$(id -u)" -eq 0 ] || die "needs root (BPF, perf -a, kernel.bpf_stats_enabled)"
	[ -x "$GNU_TIME" ] ||
		die "$GNU_TIME (GNU time) is missing: apt-get install -y time"
	command -v bpftool >/dev/null ||
		die "bpftool is missing: it reads the BPF programs' run-time stats"
	command -v pgrep >/dev/null || die "pgrep (procps) is missing"
	case $RUNS in '' | *[!0-9]* | 0) die "RUNS must be a positive integer" ;; esac
}

build() {
	bench_log "building: make -C $repo tests"
	make -s -C "$repo" BUILD="$BUILD" tests >&2 || die "build failed"
	[ -x "$TAGPROF" ] || die "$TAGPROF was not built"
	[ -x "$WORKLOAD" ] || die "$WORKLOAD was not built"
}

# Rows to run: always none and tagprof; perf and bpftrace when installed.
PROFILERS=(none tagprof)
declare -A SKIPPED=()
find_profilers() {
	if command -v perf >/dev/null && perf --version >/dev/null 2>&1; then
		PROFILERS+=(perf)
	else
		SKIPPED[perf]="perf is not installed (apt-get install linux-perf)"
	fi
	if command -v bpftrace >/dev/null; then
		PROFILERS+=(bpftrace)
	else
		SKIPPED[bpftrace]="bpftrace is not installed (apt-get install bpftrace)"
	fi
}

# --- one run ---

# Runs one copy of fixedwork per CPU: the machine is fully busy, as a
# system-wide profiler would find it. Sets WALL (s) to the time until the
# last one ends, and FOREIGN to the share (%) of all CPUs' time meanwhile
# used by neither the workload nor the profiler (PROF_PID, if any). Not run
# in $(...), so cleanup() sees WORK_PIDS.
WALL='' FOREIGN=''
run_workload() {
	local ncpu t0 t1 b0 p0 i work_ms busy_ms prof_ms
	ncpu=$(nproc)
	times >"$TMP/times.0"
	p0=$(proc_cpu_ms "$PROF_PID")
	b0=$(busy_ms)
	t0=$(now_ns)
	WORK_PIDS=()
	for ((i = 0; i < ncpu; i++)); do
		"$WORKLOAD" "$ITER" "$DEPTH" &
		WORK_PIDS+=($!)
	done
	for i in "${WORK_PIDS[@]}"; do
		wait "$i" || die "fixedwork failed"
	done
	t1=$(now_ns)
	busy_ms=$(($(busy_ms) - b0))
	prof_ms=$(($(proc_cpu_ms "$PROF_PID") - p0))
	times >"$TMP/times.1"
	WORK_PIDS=()
	work_ms=$(($(children_cpu_ms "$TMP/times.1") - $(children_cpu_ms "$TMP/times.0")))
	WALL=$(calc "$((t1 - t0)) / 1e9")
	FOREIGN=$(awk -v b="$busy_ms" -v w="$work_ms" -v p="$prof_ms" \
		-v cap="$((ncpu * (t1 - t0) / 1000000))" \
		'BEGIN { printf "%.1f", 100 * (b - w - p) / cap }')
}

# child_of PID: the first child of PID, waiting up to 5 s for it to appear.
child_of() {
	local i c
	for i in $(seq 100); do
		c=$(pgrep -P "$1" | head -1) || true
		[ -n "$c" ] && { echo "$c"; return 0; }
		alive "$1" || return 1
		sleep 0.05
	done
	return 1
}

# start_profiler NAME DIR: starts the profiler (its stdout and stderr into
# DIR) and waits until it should be attached. A subshell runs it under GNU
# time, for the peak RSS, then writes `times` (its CPU, in ms) and its exit
# status into DIR.
start_profiler() {
	local name=$1 dir=$2 i time_pid cmd=()
	case $name in
	# -d: without it tagprof stops by itself after 10 s; here SIGINT does.
	tagprof) cmd=("$TAGPROF" record -a -F "$FREQ" -d 86400 -o "$dir/t.pb.gz") ;;
	perf) cmd=(perf record -a -g -F "$FREQ" -o "$dir/perf.data") ;;
	bpftrace) cmd=(bpftrace -e "profile:hz:$FREQ { @[ustack,kstack] = count(); }") ;;
	esac
	(
		rc=0
		"$GNU_TIME" -f '%M' -o "$dir/time" "${cmd[@]}" \
			>"$dir/stdout" 2>"$dir/stderr" || rc=$?
		times >"$dir/times"
		echo "$rc" >"$dir/rc"
	) &
	PROF_SH_PID=$!
	# GNU time ignores SIGINT while it waits, so the signal must go to its
	# child, the profiler itself.
	if ! time_pid=$(child_of "$PROF_SH_PID") ||
		! PROF_PID=$(child_of "$time_pid"); then
		die "$name did not start: $(tail -3 "$dir/stderr")"
	fi
	if [ "$name" = bpftrace ]; then
		# bpftrace compiles with LLVM first; "Attaching N probes..." on
		# stdout says it is done and about to attach.
		for i in $(seq 600); do
			grep -q Attaching "$dir/stdout" 2>/dev/null && break
			alive "$PROF_PID" || break
			sleep 0.05
		done
		grep -q Attaching "$dir/stdout" ||
			die "bpftrace never attached: $(tail -3 "$dir/stderr")"
	fi
	sleep 1		# time to open its events and attach on every CPU
	alive "$PROF_PID" || die "$name exited early: $(tail -3 "$dir/stderr")"
}

# stop_profiler NAME DIR: SIGINT, then wait until it has written its output.
stop_profiler() {
	local name=$1 dir=$2 rc
	kill -INT "$PROF_PID"
	wait "$PROF_SH_PID" || true
	PROF_PID=
	PROF_SH_PID=
	rc=$(cat "$dir/rc" 2>/dev/null) || die "$name: its exit status is unknown"
	# perf re-raises SIGINT to die by it; the others should exit 0.
	if [ "$name" != perf ] && [ "$rc" -ne 0 ]; then
		die "$name exited $rc after SIGINT: $(tail -3 "$dir/stderr")"
	fi
	[ -s "$dir/time" ] || die "GNU time wrote nothing for $name"
}

# count_samples NAME DIR: sets SAMPLES and LOST for one finished run.
SAMPLES='' LOST=''
count_samples() {
	local name=$1 dir=$2 line n lost summary
	case $name in
	tagprof)
		# "tagprof: 3.0 s, event cpu-clock, 2993 samples, 0 lost, 5 processes"
		line=$(grep -E '^tagprof: .* samples, [0-9]+ lost' "$dir/stderr" | tail -1) ||
			die "no summary line from tagprof: $(tail -3 "$dir/stderr")"
		n=$(sed -E 's/.* ([0-9]+) samples, .*/\1/' <<<"$line")
		lost=$(sed -E 's/.* ([0-9]+) lost.*/\1/' <<<"$line")
		[ -s "$dir/t.pb.gz" ] || die "tagprof wrote no profile"
		;;
	perf)
		# Exact and cheap: --stats only counts records. Reading perf.data
		# is post-processing, outside the profiler's measured CPU.
		perf report -i "$dir/perf.data" --stats >"$dir/stats" 2>/dev/null ||
			die "perf report --stats failed"
		n=$(awk '/SAMPLE events:/ { print $3; exit }' "$dir/stats")
		lost=$(awk '/LOST_SAMPLES events:|^ *LOST events:/ { s += $3 }
			END { print s + 0 }' "$dir/stats")
		# Cross-check with record's own "(N samples)" summary.
		summary=$(sed -nE 's/.*\(([0-9]+) samples\).*/\1/p' "$dir/stderr")
		if [ -n "$summary" ] && [ "$summary" != "$n" ]; then
			bench_log "warning: perf report counts $n samples, perf record said $summary"
		fi
		rm -f "$dir/perf.data"	# can be tens of MB a run
		;;
	bpftrace)
		# The map printed at exit: "@[...stacks...]: COUNT" ends in "]: N".
		n=$(awk '/\]: [0-9]+$/ { s += $NF } END { print s + 0 }' "$dir/stdout")
		lost=0
		;;
	esac
	if [ -z "$n" ] || [ "$n" -le 0 ]; then
		die "$name: no samples counted"
	fi
	SAMPLES=$n
	LOST=$lost
}

# measure NAME: one run of the workload under profiler NAME. Sets RESULT to
# "wall cpu_s rss_kib samples lost bpf_ns" ("-" where it does not apply),
# and FOREIGN (see run_workload).
RESULT=''
measure() {
	local name=$1 dir=$TMP/run cpu_ms cpu="-" rss="-" n="-" lost="-"
	local bpf="-" st="" rt rc names
	rm -rf "$dir"
	mkdir -p "$dir"
	if [ "$name" = none ]; then
		sleep 1		# the same pause the profiled runs have
		run_workload
	else
		start_profiler "$name" "$dir"
		run_workload
		if ! alive "$PROF_PID"; then
			wait "$PROF_SH_PID" || true
			die "$name died during the workload: $(tail -5 "$dir/stderr")"
		fi
		if [ "$name" != perf ]; then
			st=$(bpf_stats "$PROF_PID") ||
				die "$name: no perf_event BPF program with stats found"
		fi
		stop_profiler "$name" "$dir"
		cpu_ms=$(children_cpu_ms "$dir/times")
		cpu=$(calc "$cpu_ms / 1000")
		# GNU time may put "Command terminated by signal 2" first.
		rss=$(tail -1 "$dir/time")
		count_samples "$name" "$dir"
		n=$SAMPLES lost=$LOST
		if [ -n "$st" ]; then
			read -r rt rc names <<<"$st"
			[ "$rc" -gt 0 ] || die "$name: BPF program ran 0 times (stats off?)"
			bpf=$(calc "$rt / $rc")
			if [ "$name" = tagprof ] && [ "$names" != on_sample ]; then
				bench_log "warning: tagprof's perf_event program is '$names', not on_sample"
			fi
		fi
	fi
	RESULT="$WALL $cpu $rss $n $lost $bpf"
}

# measure_quiet NAME RUN: measure, redone while other load disturbed it;
# appends "name run wall cpu_s rss_kib samples lost bpf_ns foreign% tries"
# to $TMP/results.
measure_quiet() {
	local name=$1 run=$2 try
	for ((try = 1; ; try++)); do
		wait_quiet "$FOREIGN_MAX" "$QUIET_WAIT"
		measure "$name"
		bench_log "run $run/$RUNS $(printf '%-8s' "$name") wall, cpu_s, rss_KiB," \
			"samples, lost, bpf_ns: $RESULT; other load $FOREIGN%"
		if le "$FOREIGN" "$FOREIGN_MAX"; then
			break
		fi
		if [ "$try" -ge "$TRIES" ]; then
			bench_log "warning: keeping it anyway after $TRIES tries"
			break
		fi
		bench_log "other load above $FOREIGN_MAX% of the CPUs: run again"
	done
	echo "$name $run $RESULT $FOREIGN $try" >>"$TMP/results"
}

# --- report ---

# col NAME FIELD: the median of FIELD (results column) over NAME's runs.
col() {
	awk -v n="$1" -v f="$2" '$1 == n && $f != "-" { print $f }' \
		"$TMP/results" | median
}

report() {
	local base name wall range slow cpuk rssmb bpf n lost redone
	local t_bpf="" b_bpf="" t_cpuk="" p_cpuk="" t_rss="" t_rssmax="" unmeasured=0 ratio
	base=$(col none 3)
	echo
	echo "tagprof record overhead: $(nproc) CPUs busy with fixedwork" \
		"(iterations $ITER, depth $DEPTH), -F $FREQ, median of $RUNS" \
		"interleaved runs"
	printf '%-10s %-9s %-7s %-18s %-12s %-14s %-8s %-5s %s\n' profiler \
		slowdown wall_s cpu_ms/1k_samples peak_rss_MB bpf_ns/sample \
		samples lost wall_range
	for name in none tagprof perf bpftrace; do
		if [ -n "${SKIPPED[$name]:-}" ]; then
			printf '%-10s skipped: %s\n' "$name" "${SKIPPED[$name]}"
			continue
		fi
		wall=$(col "$name" 3)
		range=$(awk -v n="$name" '$1 == n { if (!c++ || $3 < lo) lo = $3; if ($3 > hi) hi = $3 }
			END { printf "%.2f-%.2f", lo, hi }' "$TMP/results")
		slow=$(awk -v w="$wall" -v b="$base" 'BEGIN { printf "%.1f%%", 100 * (w / b - 1) }')
		if [ "$name" = none ]; then
			printf '%-10s %-9s %-7.2f %-18s %-12s %-14s %-8s %-5s %s\n' \
				none "$slow" "$wall" - - - - - "$range"
			continue
		fi
		# Per run: CPU ms per 1,000 samples, then the median of those.
		cpuk=$(awk -v n="$name" '$1 == n { print 1e6 * $4 / $6 }' \
			"$TMP/results" | median)
		rssmb=$(awk -v n="$name" '$1 == n { print $5 / 1024 }' \
			"$TMP/results" | median)
		bpf=$(col "$name" 8)
		[ "$bpf" = - ] || bpf=$(printf '%.0f' "$bpf")
		[ "$name" = perf ] && bpf=n/a
		n=$(col "$name" 6)
		lost=$(awk -v n="$name" '$1 == n { s += $7 } END { print s + 0 }' \
			"$TMP/results")
		printf '%-10s %-9s %-7.2f %-18.2f %-12.1f %-14s %-8.0f %-5s %s\n' \
			"$name" "$slow" "$wall" "$cpuk" "$rssmb" "$bpf" "$n" "$lost" \
			"$range"
		case $name in
		tagprof)
			t_bpf=$bpf t_cpuk=$cpuk t_rss=$rssmb
			t_rssmax=$(awk '$1 == "tagprof" { if ($5 > m) m = $5 }
				END { printf "%.1f", m / 1024 }' "$TMP/results")
			;;
		perf) p_cpuk=$cpuk ;;
		bpftrace) b_bpf=$bpf ;;
		esac
	done
	# How often other load got in the way, per profiler.
	redone=$(awk -v max="$FOREIGN_MAX" '
		$10 > 1 { r[$1] += $10 - 1; t += $10 - 1 }
		$9 > max { k++ }
		END {
			for (n in r) s = s (s ? ", " : " (") n " " r[n]
			printf "%d%s; kept anyway: %d", t, s ? s ")" : "", k
		}' "$TMP/results")
	echo "(lost: total over all runs; perf uses no BPF: n/a)"
	echo "(runs redone for other load above $FOREIGN_MAX% of the CPUs: $redone)"
	echo

	if [ -n "$t_bpf" ] && [ "$t_bpf" != - ] && [ -n "$b_bpf" ] &&
		[ "$b_bpf" != - ]; then
		ratio=$(calc "$t_bpf / $b_bpf")
		printf 'target tagprof bpf/sample <= %s x bpftrace'"'"'s: %s (ratio %.2f: %s vs %s ns/sample)\n' \
			"$TARGET_BPF_RATIO" \
			"$(le "$ratio" "$TARGET_BPF_RATIO" && echo PASS || echo MISS)" \
			"$ratio" "$t_bpf" "$b_bpf"
	else
		echo "target tagprof bpf/sample <= $TARGET_BPF_RATIO x bpftrace's: UNMEASURED (${SKIPPED[bpftrace]:-no BPF figure})"
		unmeasured=1
	fi
	if [ -n "$p_cpuk" ]; then
		ratio=$(calc "$t_cpuk / $p_cpuk")
		printf 'target tagprof cpu/sample <= %s x perf'"'"'s: %s (ratio %.2f: %.2f vs %.2f ms/1k samples)\n' \
			"$TARGET_CPU_RATIO" \
			"$(le "$ratio" "$TARGET_CPU_RATIO" && echo PASS || echo MISS)" \
			"$ratio" "$t_cpuk" "$p_cpuk"
	else
		echo "target tagprof cpu/sample <= $TARGET_CPU_RATIO x perf's: UNMEASURED (${SKIPPED[perf]:-no perf runs})"
		unmeasured=1
	fi
	printf 'target tagprof rss <= %d MB: %s (median %.1f MB, max %s MB)\n' \
		"$TARGET_RSS_MB" \
		"$(le "$t_rss" "$TARGET_RSS_MB" && echo PASS || echo MISS)" \
		"$t_rss" "$t_rssmax"
	if [[ " ${PROFILERS[*]} " == *" bpftrace "* ]]; then
		echo "note: bpftrace's CPU includes compiling its script with LLVM at" \
			"start and printing its whole map at exit (SIGINT); its samples" \
			"include the idle task"
	fi
	return "$unmeasured"
}

main() {
	local run name
	check_prereqs
	build
	find_profilers
	for name in perf bpftrace; do
		if [ -n "${SKIPPED[$name]:-}" ]; then
			bench_log "skipping $name: ${SKIPPED[$name]}"
		fi
	done
	TMP=$(mktemp -d /tmp/tagprof-bench.XXXXXX)
	: >"$TMP/results"

	# Per-program run time and count; restored by cleanup().
	bpf_stats_enable

	for ((run = 1; run <= RUNS; run++)); do
		for name in "${PROFILERS[@]}"; do
			measure_quiet "$name" "$run"
		done
	done
	report
}

main "$@"
