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
