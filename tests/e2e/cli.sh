#!/usr/bin/env bash
# The record command's contract: help, version, bad input (clear error,
# non-zero exit, no file), privileges, Ctrl-C, command exit status, and the
# tables of the pprof it writes.
. "$(dirname "$0")/../lib.sh"
need_bpf cli_help cli_bad_event cli_bad_pid cli_bad_output cli_bad_numbers \
	cli_no_privilege cli_hw_event cli_sigint_writes cli_command_status \
	cli_command_missing cli_profile_tables cli_pid_filter cli_until_exit \
	cli_follows_children cli_process_label cli_thread_ids cli_cpu_values \
	cli_idle_excluded cli_idle_included cli_cgroup_filter

# expect_error NAME PATTERN ARGS...: record must fail, say PATTERN, write nothing.
expect_error() {
	local name=$1 pattern=$2; shift 2
	local out=$TMP/$name.pb.gz rc
	"$TAGPROF" record -d 1 -o "$out" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "expected failure, got exit 0"; return 1
	fi
	if ! grep -qiE -- "$pattern" "$TMP/$name.err"; then
		echo "stderr lacks /$pattern/: $(head -2 "$TMP/$name.err")"; return 1
	fi
	if ls "$TMP" | grep -q "^\.\?$name\.pb\.gz"; then
		echo "left a file behind"; return 1
	fi
	return 0
}

# tag_values FILE KEY ARGS...: one line "VALUE PERCENT" per value of label
# KEY, from pprof -tags (whose shares read "( 0.67%):" or "(57.03%):").
tag_values() {
	local f=$1 key=$2; shift 2
	pprof "$f" -tags "$@" | awk -v k="$key:" '
		$1 == k { f = 1; next } f && NF == 0 { f = 0 }
		f && match($0, /\( *[0-9.]+%\)/) {
			p = substr($0, RSTART + 1, RLENGTH - 3); print $NF, p + 0 }'
}

# process_names FILE: the process labels of FILE, sorted, each followed by a space.
process_names() { tag_values "$1" process | awk '{ print $1 }' | sort -u | tr '\n' ' '; }

help_ok() {
	"$TAGPROF" --help | grep -q "record" &&
	"$TAGPROF" --version | grep -qE '^tagprof [0-9]+\.[0-9]+' &&
	"$TAGPROF" record --help >"$TMP/help" &&
	# every option the usage line names is described
	for o in -a -p -e -F -c -d -o -v --cgroup --idle; do
		grep -q -- "  $o\|, $o" "$TMP/help" || { echo "help lacks $o"; return 1; }
	done &&
	! "$TAGPROF" nosuchcommand 2>/dev/null
}
check cli_help help_ok

check cli_bad_event expect_error bad_event 'unknown event.*valid forms' -e nosuchevent
bad_pid() {
	expect_error bad_pid1 'no such process' -p 999999999 &&
	expect_error bad_pid2 'invalid pid' -p 12abc &&
	expect_error bad_pid3 'invalid pid' -p ,
}
check cli_bad_pid bad_pid
bad_output() {
	expect_error bad_out1 'cannot write.*No such file' -o "$TMP/nodir/x.pb.gz" &&
	mkdir -p "$TMP/isdir.pb.gz" &&
	expect_error bad_out2 'cannot write.*directory' -o "$TMP/isdir.pb.gz"
}
# expect_error passes its own -o first; the later -o wins in getopt.
check cli_bad_output bad_output
bad_numbers() {
	expect_error bad_n1 '-F wants' -F 0 &&
	expect_error bad_n2 '-F wants' -F abc &&
	expect_error bad_n3 '-d wants' -d -1 &&
	expect_error bad_n4 '-c wants' -c 0 &&
	expect_error bad_n5 'exclude each other' -F 99 -c 1000
}
check cli_bad_numbers bad_numbers

# Without CAP_BPF/CAP_PERFMON the error must say what is missing.
no_priv() {
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$TAGPROF" record -d 1 -o /tmp/never.pb.gz >/dev/null 2>"$TMP/np.err"
	local rc=$?
	[ $rc -ne 0 ] && grep -q 'CAP_BPF' "$TMP/np.err" && [ ! -e /tmp/never.pb.gz ] ||
		{ echo "rc=$rc: $(cat "$TMP/np.err")"; return 1; }
}
if command -v setpriv >/dev/null; then check cli_no_privilege no_priv
else skip cli_no_privilege "setpriv (util-linux) not installed"; fi

# A hardware event: where the CPU cannot sample it, a clear error naming the
# fallback and no file; where it can, a profile typed with the event.
hw_event() {
	local ev=cycles:ppp out=$TMP/hw.pb.gz
	if "$TAGPROF" record -e $ev -d 1 -o "$out" 2>"$TMP/hw.err"; then
		pprof "$out" -raw | grep -q '^samples/count cycles/count' ||
			{ echo "profile not typed cycles/count"; return 1; }
		echo "note: this CPU samples $ev" >&2
	else
		grep -q 'cpu-clock' "$TMP/hw.err" && [ ! -e "$out" ] ||
			{ echo "$(cat "$TMP/hw.err")"; return 1; }
		echo "note: no precise cycles here: $(cat "$TMP/hw.err")" >&2
	fi
}
check cli_hw_event hw_event

# Ctrl-C (SIGINT) ends a long capture early and still writes the file.
sigint() {
	local out=$TMP/int.pb.gz pid rc
	"$TAGPROF" record -d 60 -o "$out" 2>"$TMP/int.err" &
	pid=$!
	sleep 2
	kill -INT $pid
	wait $pid; rc=$?
	[ $rc -eq 0 ] && [ -s "$out" ] && pprof "$out" -top >/dev/null ||
		{ echo "rc=$rc: $(tail -2 "$TMP/int.err")"; return 1; }
}
check cli_sigint_writes sigint

# With -- COMMAND, tagprof returns the command's exit status.
command_status() {
	"$TAGPROF" record -o "$TMP/st.pb.gz" -- sh -c 'exit 7' 2>/dev/null
	local rc=$?
	[ $rc -eq 7 ] && [ -s "$TMP/st.pb.gz" ] || { echo "rc=$rc"; return 1; }
}
check cli_command_status command_status
command_missing() {
	"$TAGPROF" record -o "$TMP/miss.pb.gz" -- /nonexistent/prog 2>"$TMP/miss.err"
	local rc=$?
	[ $rc -eq 127 ] && grep -q 'cannot run /nonexistent/prog' "$TMP/miss.err" &&
		[ ! -e "$TMP/miss.pb.gz" ] || { echo "rc=$rc: $(cat "$TMP/miss.err")"; return 1; }
}
check cli_command_missing command_missing

# The pprof tables a user relies on.
tables() {
	local out=$TMP/tab.pb.gz raw
	"$TAGPROF" record -F 499 -o "$out" -- "$WORKLOADS/callchain" 1 2>/dev/null || return 1
	raw=$(pprof "$out" -raw) || return 1
	pprof_warned && { echo "pprof warned: $(cat "$TMP/pprof.err")"; return 1; }
	echo "$raw" | grep -q '^samples/count cpu/nanoseconds' || { echo "sample types"; return 1; }
	echo "$raw" | grep -q '^PeriodType: cpu nanoseconds' || { echo "period type"; return 1; }
	echo "$raw" | grep -q '^Period: 2004008' || { echo "period"; return 1; }
	echo "$raw" | grep -qE '^Duration: (0\.9|1\.)' || { echo "duration"; return 1; }
	echo "$raw" | grep -q 'process:\[callchain\] thread_name:\[callchain\]' || { echo "string labels"; return 1; }
	echo "$raw" | grep -qE 'cpu:\[[0-9]+ cpu\] pid:\[[0-9]+\] tid:\[[0-9]+\]' || { echo "numeric labels"; return 1; }
	# mapping with file name and the build ID readelf reports
	local bid
	bid=$(readelf -n "$WORKLOADS/callchain" | sed -n 's/.*Build ID: //p')
	echo "$raw" | grep -q "$WORKLOADS/callchain $bid" || { echo "mapping/build id $bid"; return 1; }
	echo "$raw" | grep -qE 'leaf_a' || { echo "function names"; return 1; }
	echo "$raw" | grep -q '^Comment: # samples:' || { echo "comments"; return 1; }
}
check cli_profile_tables tables

# -p keeps only that process, all its threads.
pid_filter() {
	local out=$TMP/pf.pb.gz wl other
	"$WORKLOADS/callchain" 3 & wl=$!
	"$WORKLOADS/syscalls" 3 & other=$!
	sleep 0.2
	"$TAGPROF" record -p $wl -d 2 -F 499 -o "$out" 2>/dev/null
	wait $wl $other
	local procs
	# the values listed under "process:" in pprof -tags, up to the blank line
	procs=$(process_names "$out")
	[ "$(total "$out")" -ge 100 ] && [ "$procs" = "callchain " ] ||
		{ echo "processes in profile: '$procs', samples $(total "$out")"; return 1; }
}
check cli_pid_filter pid_filter

# --until-exit PID ends the capture when that process exits, well before -d.
until_exit() {
	local wl start took
	"$WORKLOADS/callchain" 1.5 & wl=$!
	start=$(date +%s%N)
	"$TAGPROF" record --until-exit $wl -d 30 -F 999 -o "$TMP/ue.pb.gz" 2>"$TMP/ue.err" || return 1
	took=$(( ($(date +%s%N) - start) / 1000000 ))
	wait $wl
	# Sanitized (tests/run.sh exports SANITIZE), the writing after the
	# capture takes tens of seconds on a loaded host: the capture's own
	# length, from the agent's summary line, is what must be short then.
	if [ -n "${SANITIZE:-}" ]; then
		took=$(sed -n 's/^tagprof: \([0-9.]*\) s, event.*/\1/p' "$TMP/ue.err" |
			awk '{ printf "%d", $1 * 1000 }')
		took=${took:-99999}
	fi
	[ "$took" -lt 5000 ] && [ "$(total "$TMP/ue.pb.gz" -tagfocus=process=callchain)" -gt 50 ] ||
		{ echo "took ${took} ms"; return 1; }
	expect_error ue_missing 'no such process' --until-exit 999999999
}
check cli_until_exit until_exit

# -- COMMAND follows the processes the command forks: sh forks
# labelpool_shared (its name is longer than the 15 characters of a comm),
# whose 4 workers spin for 2 s and whose main thread only waits.
"$TAGPROF" record -F 999 -o "$TMP/fork.pb.gz" -- sh -c \
	"$WORKLOADS/labelpool_shared 2 $PWD/${BUILD:-build}/libtagprof.so; true" \
	>/dev/null 2>"$TMP/fork.err"
fork_all=$(total "$TMP/fork.pb.gz")
fork_lp=$(total "$TMP/fork.pb.gz" -tagfocus='process=^labelpool_shared$')
# 2 s of 2 busy CPUs at 999 Hz is ~4000 samples; 1000 leaves room for a
# loaded machine and none for a child left unprofiled (0).
if [ "$fork_lp" -ge 1000 ]; then
	pass cli_follows_children
else
	fail cli_follows_children "$fork_lp samples of the forked labelpool_shared ($fork_all in all): $(tail -2 "$TMP/fork.err")"
fi
# The process label is the executable's name, not the thread's cut comm:
# every sample of the workers (comm labelpool_share) has it.
fork_comm=$(total "$TMP/fork.pb.gz" -tagfocus='thread_name=^labelpool_share$')
fork_other=$(total "$TMP/fork.pb.gz" -tagfocus='thread_name=^labelpool_share$' \
	-tagignore='process=^labelpool_shared$')
if [ -n "${SANITIZE:-}" ] && [ "$fork_other" != 0 ]; then
	# Sanitized, LeakSanitizer's check at exit clones a tracer process that
	# reads /proc/PID/task: the workload's comm, another pid, gone before
	# its executable can be read (so named by its comm). Only samples of
	# the workload's own pid count then.
	lp_pid=$(tag_values "$TMP/fork.pb.gz" pid -tagfocus='process=^labelpool_shared$' |
		awk '{ print $1; exit }')
	fork_other=$(tag_values "$TMP/fork.pb.gz" pid -tagfocus='thread_name=^labelpool_share$' \
		-tagignore='process=^labelpool_shared$' | awk -v p="$lp_pid" '$1 == p' | wc -l)
fi
if [ "$fork_comm" -ge 1000 ] && [ "$fork_other" = 0 ]; then
	pass cli_process_label
else
	fail cli_process_label "$fork_other of $fork_comm samples of thread labelpool_share lack process=labelpool_shared"
fi

# The tid label names the thread: each of the 4 workers has about a quarter
# of the samples (>= 15% each: 4 sd below 25% at 1000 samples is 19%, and a
# loaded machine can favour one worker); the main thread, whose tid is the
# pid, only waits (< 5%).
thread_ids() {
	local pid shares
	pid=$(tag_values "$TMP/fork.pb.gz" pid -tagfocus='process=^labelpool_shared$' |
		awk '{ print $1; exit }')
	shares=$(tag_values "$TMP/fork.pb.gz" tid -tagfocus='process=^labelpool_shared$')
	echo "$shares" | awk -v pid="$pid" '
		$1 == pid { main = $2 } $1 != pid && $2 >= 15 { workers++ }
		END { exit !(pid != "" && workers == 4 && main + 0 < 5) }' ||
		{ echo "pid $pid; tid shares: $(echo "$shares" | tr '\n' ' ')"; return 1; }
}
check cli_thread_ids thread_ids

# Each sample's cpu value is its period: at 999 Hz cpu-clock, 1001001 ns.
cpu_values() {
	pprof "$TMP/fork.pb.gz" -raw | awk '
		/^samples\/count cpu\/nanoseconds/ { f = 1; next } /^Locations/ { f = 0 }
		f && $2 ~ /^[0-9]+:$/ { n += $1; v += $2 + 0 }
		END { if (n == 0 || v != n * 1001001) { print n " samples, " v " ns"; exit 1 } }'
}
check cli_cpu_values cpu_values

# The idle task (pid 0, named swapper/N) only with --idle. An idle CPU
# gets cpu-clock samples only while its tick runs: on this kind of VM that
# was CPU 0 alone (1 s of swapper/0 samples, none of swapper/1). So
# callchain is pinned to the last CPU, which gives the capture without
# --idle samples to judge, and leaves CPU 0 idle (5 of 5 runs: ~1 s of
# swapper/0 with --idle, none without).
if [ "$(nproc)" -lt 2 ]; then
	skip cli_idle_excluded "one CPU: no CPU is left idle next to the workload"
	skip cli_idle_included "one CPU: no CPU is left idle next to the workload"
else
	taskset -c $(($(nproc) - 1)) "$WORKLOADS/callchain" 2.5 >/dev/null & wl=$!
	sleep 0.2
	"$TAGPROF" record -a -F 199 -d 1 -o "$TMP/noidle.pb.gz" 2>/dev/null
	"$TAGPROF" record -a -F 199 -d 1 --idle -o "$TMP/idle.pb.gz" 2>/dev/null
	wait $wl
	n_noidle=$(total "$TMP/noidle.pb.gz" -tagfocus='process=^swapper/')
	n_idle=$(total "$TMP/idle.pb.gz" -tagfocus='process=^swapper/')
	if [ "$n_noidle" = 0 ] && [ "$(total "$TMP/noidle.pb.gz")" -gt 0 ]; then
		pass cli_idle_excluded
	else
		fail cli_idle_excluded "$n_noidle idle samples without --idle, of $(total "$TMP/noidle.pb.gz")"
	fi
	# 199 Hz on an idle CPU 0 for 1 s: ~199 samples; 20 leaves room for
	# a CPU 0 that other processes keep busy.
	if [ "$n_idle" -ge 20 ]; then
		pass cli_idle_included
	else
		fail cli_idle_included "$n_idle idle samples with --idle, of $(total "$TMP/idle.pb.gz")"
	fi
fi

# --cgroup keeps the tasks of that cgroup v2 directory only: callchain moved
# into a fresh one, syscalls left outside.
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -z "$cg2" ]; then
	skip cli_cgroup_filter "no cgroup v2 hierarchy mounted"
elif ! mkdir "$cg2/tagprof-test.$$" 2>"$TMP/cg.err"; then
	skip cli_cgroup_filter "cannot create a cgroup under $cg2: $(cat "$TMP/cg.err")"
else
	cg=$cg2/tagprof-test.$$
	"$WORKLOADS/callchain" 3 & wl=$!
	"$WORKLOADS/syscalls" 3 & other=$!
	echo $wl >"$cg/cgroup.procs"
	sleep 0.2
	"$TAGPROF" record --cgroup "$cg" -d 2 -F 499 -o "$TMP/cg.pb.gz" 2>"$TMP/cg.err"
	wait $wl $other
	rmdir "$cg"
	procs=$(process_names "$TMP/cg.pb.gz")
	# 2 s at 499 Hz of one busy thread: ~1000 samples; 100 on a loaded machine.
	if [ "$(total "$TMP/cg.pb.gz")" -ge 100 ] && [ "$procs" = "callchain " ]; then
		pass cli_cgroup_filter
	else
		fail cli_cgroup_filter "processes in the profile: '$procs', $(total "$TMP/cg.pb.gz") samples: $(tail -2 "$TMP/cg.err")"
	fi
fi
