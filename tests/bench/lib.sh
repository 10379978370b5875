# Helpers shared by the benchmark scripts (sourced).

# median [EMPTY]: the median of the numbers on stdin (the mean of the two
# middle ones for an even count); EMPTY ("-" by default) when there are none.
median() {
	sort -g | awk -v empty="${1:--}" '{ v[NR] = $1 }
		END {
			if (!NR) { print empty; exit }
			if (NR % 2) print v[(NR + 1) / 2]
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2
		}'
}

# bpf_stats_enable / bpf_stats_restore: the kernel's per-program run time
# accounting, on for the benchmark and back as it was afterwards.
bpf_stats_enable() {
	BPF_STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -q -w kernel.bpf_stats_enabled=1
}
bpf_stats_restore() {
	[ -z "${BPF_STATS_OLD:-}" ] ||
		sysctl -q -w kernel.bpf_stats_enabled="$BPF_STATS_OLD" || true
}

# bpf_stats PID: "run_time_ns run_cnt names" summed over the perf_event BPF
# programs PID holds open (both tagprof and bpftrace keep their program fds).
# The owner comes from /proc/PID/fdinfo, not the name, because other
# profilers (another tagprof, say) may be running on this machine too.
bpf_stats() {
	local pid=$1 id ids=() json
	# Link fds name their program too: hence the sort -u. Fds the profiler
	# closes meanwhile make grep complain: ignored.
	mapfile -t ids < <(grep -h '^prog_id:' /proc/"$pid"/fdinfo/* 2>/dev/null |
		awk '{ print $2 }' | sort -un)
	[ ${#ids[@]} -gt 0 ] || return 1
	for id in "${ids[@]}"; do
		json=$(bpftool prog show id "$id" -j 2>/dev/null) || continue
		echo "$json"
	done | awk '
		# Only the sampling program: the exec/exit/fork programs of
		# tagprof are of type "tracing" and do not run per sample.
		/"type":"perf_event"/ {
			n = match($0, /"run_time_ns":[0-9]+/)
			t = n ? substr($0, RSTART + 14, RLENGTH - 14) : 0
			n = match($0, /"run_cnt":[0-9]+/)
			c = n ? substr($0, RSTART + 10, RLENGTH - 10) : 0
			rt += t; rc += c; found = 1
			if (!match($0, /"name":"[^"]*"/)) next
			names = names " " substr($0, RSTART + 8, RLENGTH - 9)
		}
		END { if (!found) exit 1; print rt, rc, names }'
}

# bench_log MESSAGE: MESSAGE on stderr, after the script's name.
bench_log() { echo "$(basename "$0" .sh): $*" >&2; }

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

# le A B: whether the number A is at most B (decimals, as awk reads them).
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }

# stop_pid PID SIGNAL: stops a leftover process, then SIGKILL if it does not
# go. Profilers get SIGINT so they detach their BPF programs and perf events;
# the rest get SIGTERM, as background jobs of a script ignore SIGINT.
stop_pid() {
	local pid=$1 sig=$2 i
	alive "$pid" || return 0
	kill -"$sig" "$pid" 2>/dev/null || true
	for i in $(seq 50); do
		alive "$pid" || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
}

# busy_ms: CPU time all CPUs spent not idle so far (/proc/stat: user, nice,
# system, irq, softirq, steal), in ms.
busy_ms() {
	awk -v hz="$(getconf CLK_TCK)" '/^cpu / {
		printf "%.0f", 1000 * ($2 + $3 + $4 + $7 + $8 + $9) / hz
	}' /proc/stat
}

# proc_cpu_ms PID: user+sys ms of PID's threads so far (/proc/PID/stat, in
# clock ticks: coarse, but fine for telling other load apart); 0 if none.
proc_cpu_ms() {
	local stat
	stat=$(cat /proc/"${1:-none}"/stat 2>/dev/null) || { echo 0; return; }
	# Fields after the ")" that ends the command name: utime is the 12th.
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.0f", 1000 * ($12 + $13) / hz }' \
		<<<"${stat##*) }"
}

# wait_quiet PCT SECS: waits until the CPUs were busy less than PCT % of
# the time for a second (or SECS s passed), so a run does not start in
# someone else's job.
wait_quiet() {
	local pct=$1 secs=$2 waited b0 cap
	cap=$((10 * pct * $(nproc)))	# PCT % of 1 s, in ms
	for ((waited = 0; waited < secs; waited += 2)); do
		b0=$(busy_ms)
		sleep 1
		if [ $(($(busy_ms) - b0)) -le "$cap" ]; then
			return 0
		fi
		[ "$waited" -eq 0 ] && bench_log "CPUs busy with other work: waiting"
		sleep 1
	done
	bench_log "warning: still busy after ${secs}s: measuring anyway"
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on just now.
free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# children_cpu_ms FILE: user+sys ms of the reaped children of the shell that
# ran `times >FILE` (its second line, as "0m1.234s 0m0.056s"). `times` has
# ms resolution where GNU time prints only centiseconds; it must not run in
# a pipe or $(...), whose fork would start the children's count at zero.
children_cpu_ms() {
	awk 'NR == 2 {
		for (i = 1; i <= 2; i++) {
			split($i, a, /[ms]/)
			ms += 1000 * (60 * a[1] + a[2])
		}
		printf "%.0f", ms
	}' "$1"
}
