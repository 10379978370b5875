#!/usr/bin/env bash
# What each --unwind mode costs, on a workload built without frame pointers
# (build/workloads/nofp_chain: main -> f1 -> ... -> f5), against
# `perf record --call-graph dwarf` on the same workload in the same run; and
# fp/auto on a frame-pointer workload (build/workloads/callchain), where
# auto only probes. Every profiler follows one process (-p) at 999 Hz of
# cpu-clock, 8192 stack bytes for the DWARF ones; the workloads run without
# address randomization (setarch -R), so every run copies as much stack
# (a main thread's: its top is near). Per case, medians of ROUNDS
# interleaved rounds:
#   bpf_ns/sample  run_time_ns of tagprof's on_sample program (kernel BPF
#                  statistics) over a steady window / samples recorded in it
#                  (the program also runs, briefly, for the other CPUs'
#                  samples it filters out; that is included)
#   ring_B/sample  ring-buffer bytes per sample (tagprof's summary); for
#                  perf, perf.data bytes per sample
#   cpu_us/sample  the profiler's own CPU time (all its threads, from
#                  /proc/PID/task/*/schedstat) over the steady window /
#                  samples in it;
#                  start-up and the final write are left out
#   report_us      perf only: `perf report`'s CPU per sample, which is where
#                  perf unwinds (tagprof unwinds while recording)
#   full%          samples whose stack goes from the leaf through the chain
#                  to main, none skipped (nofp_chain only)
# usage: tests/bench/unwind_cost.sh [SECONDS] [ROUNDS]  (root; after `make tests`)
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/bench/lib.sh
SECS=${1:-8}
ROUNDS=${2:-3}
WARM=2
B=${BUILD:-build}
T=$B/tagprof
W=$B/workloads
TMP=$(mktemp -d)
trap 'bpf_stats_restore; rm -rf "$TMP"' EXIT
bpf_stats_enable

[ -x "$W/nofp_chain" ] && [ -x "$W/callchain" ] || { echo "run make tests first" >&2; exit 1; }
have_perf=1
# Without address randomization the stack's top lies as far above the
# workload's frames in every run: the bytes copied stay comparable.
NORAND="setarch $(uname -m) -R"
perf version >/dev/null 2>&1 || have_perf=0

# cpu_ns PID: CPU time of all the process's threads, in ns (schedstat).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ t += $1 } END { print t + 0 }'; }

# bpf_ns PID: run_time_ns of the sampling program that process holds.
bpf_ns() { bpf_stats "$1" | awk '{ print $1 }' || echo nan; }

# full_pprof FILE PROCESS: percentage of PROCESS's samples with the whole chain.
full_pprof() {
	go tool pprof -traces -sample_index=samples -tagfocus=process="$2" "$1" 2>/dev/null | awk '
		function flush() {
			if (!n) return
			all += v; m = 0
			for (i = 1; i <= n; i++) if (fr[i] == "main") { m = i; break }
			if (m) {
				k = 0
				while (m - k - 1 >= 1 && fr[m - k - 1] == "f" (k + 1)) k++
				ok = 1
				for (i = 1; i < m - k; i++) if (fr[i] ~ /^f[1-5]$/) ok = 0
				if (ok) full += v
			}
			n = 0
		}
		/^-+\+-+$/ { flush(); next }
		n == 0 && /^ +[^ ]+: / { next }
		n == 0 && /^ +[0-9]/ { v = $1; fr[n = 1] = $2; next }
		n > 0 { fr[++n] = $1 }
		END { flush(); printf "%.1f", all ? 100 * full / all : 0 }'
}

# full_perf FILE: the same for perf script's callchains.
full_perf() {
	perf script -i "$1" -F ip,sym 2>/dev/null | awk '
		function flush() {
			if (!n) return
			all++; m = 0
			for (i = 1; i <= n; i++) if (fr[i] == "main") { m = i; break }
			if (m) {
				k = 0
				while (m - k - 1 >= 1 && fr[m - k - 1] == "f" (k + 1)) k++
				ok = 1
				for (i = 1; i < m - k; i++) if (fr[i] ~ /^f[1-5]$/) ok = 0
				if (ok) full++
			}
			n = 0
		}
		/^$/ { flush(); next }
		{ fr[++n] = $2 }
		END { flush(); printf "%.1f", all ? 100 * full / all : 0 }'
}

# measure NAME WORKLOAD PROCESS MODE: one tagprof run; appends its figures.
measure() {
	local name=$1 wl=$2 proc=$3 mode=$4 wpid rpid t0 t1 b0 b1 n dur
	$NORAND "$W/$wl" $((WARM + SECS + 4)) >/dev/null 2>&1 &
	wpid=$!
	"$T" record -p $wpid -e cpu-clock -F 999 --unwind "$mode" \
		-d $((WARM + SECS + 1)) -o "$TMP/$name.pb.gz" 2>"$TMP/$name.err" &
	rpid=$!
	sleep $WARM
	t0=$(cpu_ns $rpid); b0=$(bpf_ns $rpid)
	sleep "$SECS"
	t1=$(cpu_ns $rpid); b1=$(bpf_ns $rpid)
	wait $rpid || true
	kill $wpid 2>/dev/null || true
	wait $wpid 2>/dev/null || true
	read -r dur n < <(sed -n 's/^tagprof: \([0-9.]*\) s, event .*, \([0-9]*\) samples,.*/\1 \2/p' "$TMP/$name.err")
	python3 - "$n" "$dur" "$SECS" "$t0" "$t1" "$b0" "$b1" >>"$TMP/$name.cpu" <<'EOF'
import sys
n, dur, secs, t0, t1, b0, b1 = sys.argv[1:]
win = float(n) / float(dur) * float(secs)        # samples in the window
cpu = (float(t1) - float(t0)) / 1e3               # us
bpf = (float(b1) - float(b0)) if b0 != "nan" and b1 != "nan" else float("nan")
print("%.1f %.0f" % (cpu / win, bpf / win))
EOF
	sed -n 's/.* \([0-9]*\) ring-buffer bytes per sample/\1/p' "$TMP/$name.err" >>"$TMP/$name.ring"
	if [ "$wl" = nofp_chain ]; then full_pprof "$TMP/$name.pb.gz" "$proc" >>"$TMP/$name.full"; else echo "-" >>"$TMP/$name.full"; fi
	echo >>"$TMP/$name.full"
}

# measure_perf NAME: perf record --call-graph dwarf on nofp_chain.
measure_perf() {
	local name=$1 wpid rpid t0 t1 n size
	$NORAND "$W/nofp_chain" $((WARM + SECS + 4)) >/dev/null 2>&1 &
	wpid=$!
	perf record -p $wpid -e cpu-clock -F 999 --call-graph dwarf,8192 \
		-o "$TMP/perf.data" >/dev/null 2>"$TMP/$name.err" &
	rpid=$!
	sleep $WARM
	t0=$(cpu_ns $rpid)
	sleep "$SECS"
	t1=$(cpu_ns $rpid)
	sleep 1
	kill -INT $rpid; wait $rpid || true
	kill $wpid 2>/dev/null || true
	wait $wpid 2>/dev/null || true
	n=$(perf report -i "$TMP/perf.data" --stats 2>/dev/null |
		awk '/SAMPLE events:/ { print $3; exit }')
	size=$(stat -c %s "$TMP/perf.data")
	# perf report unwinds every sample's copied stack: that is its CFI cost.
	/usr/bin/time -f "%U %S" -o "$TMP/report.time" \
		perf report -i "$TMP/perf.data" --stdio --no-children -g caller \
		>/dev/null 2>&1 || true
	python3 - "$n" "$WARM" "$SECS" "$t0" "$t1" "$size" "$TMP/report.time" >>"$TMP/$name.cpu" <<'EOF'
import sys
n, warm, secs, t0, t1, size, rt = sys.argv[1:]
# The samples in the window, from the whole run's rate (warm + secs + 1 s).
win = float(n) / (float(warm) + float(secs) + 1) * float(secs)
cpu = (float(t1) - float(t0)) / 1e3
u, s = open(rt).read().split()[-2:]
print("%.1f %.0f %.1f" % (cpu / win, float(size) / float(n),
                          (float(u) + float(s)) * 1e6 / float(n)))
EOF
	full_perf "$TMP/perf.data" >>"$TMP/$name.full"
	echo >>"$TMP/$name.full"
}

col() { awk -v c="$1" '{ print $c }' "$2" | median nan; }

echo "unwind cost: $SECS s windows at 999 Hz (cpu-clock), median of $ROUNDS interleaved rounds, $(nproc) CPUs, $(uname -r)"
cases=("nofp fp" "nofp auto" "nofp dwarf" "fp-built fp" "fp-built auto")
for r in $(seq "$ROUNDS"); do
	measure "nofp fp" nofp_chain nofp_chain fp
	measure "nofp auto" nofp_chain nofp_chain auto
	measure "nofp dwarf" nofp_chain nofp_chain dwarf
	[ $have_perf = 1 ] && measure_perf "nofp perf"
	measure "fp-built fp" callchain callchain fp
	measure "fp-built auto" callchain callchain auto
done
printf "%-28s %14s %14s %14s %10s %8s\n" case bpf_ns/sample ring_B/sample cpu_us/sample report_us full%
for c in "${cases[@]}"; do
	printf "%-28s %14s %14s %14s %10s %8s\n" "tagprof $c" "$(col 2 "$TMP/$c.cpu")" \
		"$(median nan <"$TMP/$c.ring")" "$(col 1 "$TMP/$c.cpu")" "-" \
		"$(grep . "$TMP/$c.full" | median nan)"
done
if [ $have_perf = 1 ]; then
	printf "%-28s %14s %14s %14s %10s %8s\n" "perf record --call-graph dwarf" "-" \
		"$(col 2 "$TMP/nofp perf.cpu")" "$(col 1 "$TMP/nofp perf.cpu")" \
		"$(col 3 "$TMP/nofp perf.cpu")" "$(grep . "$TMP/nofp perf.full" | median nan)"
else
	echo "perf: not installed, not compared"
fi
