#!/usr/bin/env bash
# A process exits and a new one gets the same pid: each must get its own
# binary's symbols and its own process label, not the old process's.
. "$(dirname "$0")/../lib.sh"
need_bpf pid_reuse_happened pid_reuse_first pid_reuse_second \
	pid_reuse_first_process pid_reuse_second_process

out=$TMP/r.pb.gz
"$TAGPROF" record -d 8 -o "$out" -F 499 2>"$TMP/rec.err" &
rec=$!
sleep 1.5
pid=$("$WORKLOADS/pidreuse" "$WORKLOADS" 1.5 2>"$TMP/reuse.err")
rc=$?
kill -INT $rec 2>/dev/null
wait $rec
if [ $rc -ne 0 ] || [ -z "$pid" ]; then
	fail pid_reuse_happened "could not reuse a pid: $(cat "$TMP/reuse.err")"
	exit 0
fi
pass pid_reuse_happened
echo "pid_reuse: pid $pid used by reuse_a then reuse_b" >&2

check() {   # name thread own other
	local own other inpid
	own=$(flat "$out" "$3" -tagfocus="thread_name=^$2\$")
	other=$(flat "$out" "$4" -tagfocus="thread_name=^$2\$")
	inpid=$(flat "$out" "$3" -tagfocus="pid=$pid")
	if [ "$own" -ge 50 ] && [ "$other" -eq 0 ] && [ "$inpid" -eq "$own" ]; then
		pass "$1"
	else
		fail "$1" "$2 (pid $pid): $own samples in $3 ($inpid with that pid), $other in $4"
	fi
}
check pid_reuse_first reuse_a reuse_alpha_spin reuse_beta_spin
check pid_reuse_second reuse_b reuse_beta_spin reuse_alpha_spin

# The process label of each tenant's samples (thread_name is the kernel's
# comm, taken by BPF with the sample): every one of them must name its own
# executable. A process table that kept reuse_a's entry for the pid labels
# reuse_b's samples process=reuse_a, symbols or not. Not statistical: one
# sample under the other name is the bug. The one exception is a sample
# inside execve(): the kernel sets the new comm before the exec tracepoint
# tells the agent, and until then the process is still the one that called
# exec (pidreuse), which is the label such a sample keeps.
check_process() {   # name thread
	local all wrong other
	all=$(total "$out" -tagfocus="thread_name=^$2\$")
	wrong=$(total "$out" -tagfocus="thread_name=^$2\$" -tagignore="process=^$2\$" -ignore='execve')
	other=$(total "$out" -tagfocus="thread_name=^$2\$" -tagignore="process=^($2|pidreuse)\$")
	echo "pid_reuse: $2: $all samples, $wrong of them with another process label outside execve, $other with neither its own nor its caller's" >&2
	if [ "$all" -ge 50 ] && [ "$wrong" -eq 0 ] && [ "$other" -eq 0 ]; then
		pass "$1"
	else
		fail "$1" "$2 (pid $pid): of its $all samples (want >= 50), $wrong carry another process label outside execve and $other neither its own nor pidreuse: $(pprof "$out" -tags -tagfocus="thread_name=^$2\$" | sed -n '/process:/,/^$/p' | tr -s ' \n' ' ')"
	fi
}
check_process pid_reuse_first_process reuse_a
check_process pid_reuse_second_process reuse_b
