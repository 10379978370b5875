#!/usr/bin/env bash
# The continuous agent's own cost, next to `perf record -a -g` at the same
# rate, in the same run, under the same load.
#
# usage: tests/bench/agent_overhead.sh [SECONDS]      (root, after make)
#
# Three phases, each measured in steady state only (the first 15 s, start-up
# with kallsyms and BPF load, are skipped), the agent and the perf peer
# running side by side:
#   idle   19 Hz, no load, SECONDS/2 s: wake-ups per second
#   19 Hz  one shell spinner per CPU, SECONDS s
#   99 Hz  the same, SECONDS s
# SECONDS defaults to 120 (two of the agent's default 60 s windows): a run
# takes about 6 minutes.
#
# What it prints, per phase, for the agent and for perf:
#   cpu%     CPU time (sum of /proc/PID/task/*/schedstat) over the phase,
#            in % of one core
#   wake/s   context switches per second, voluntary and not, summed over
#            every thread (/proc/PID/task/*/status)
# and for the agent: samples per second (from its -v window lines), CPU per
# window (the agent's own "window work" -v lines; for an agent without
# them, the CPU in the second after a window end beyond the rate outside
# those seconds, which noise on the host blurs), CPU per sample (the rest,
# over the samples), peak RSS, bytes per window, windows that lost samples (the
# tagprof-dropped service's files), and how late the window files were; then
# the agent's own account of its reader's CPU per window, by part (its -v
# "window cpu" lines).
#
# The peer is `perf record -a -g -F HZ -B -N -o TMP/perf.data`: like the
# agent, it writes what it collects to a file in the same temporary
# directory (/dev/null would spare it the writes the agent makes); -B -N
# skip the build-id pass at exit, which is outside the steady state anyway
# and would only make the run longer.
#
# Targets (PASS/MISS lines): at most 1 wake-up per second idle; agent CPU at
# 19 Hz at most 1.5x perf's; no samples lost at 19 and 99 Hz; windows
# written within 1 s of their end; peak RSS at 19 Hz <= 32 MB.
#
# Environment: TAGPROF (default build/tagprof), WINDOW (window length in
# seconds, default 60, the agent's own default; shorter windows cost more
# per second, and WINDOW=10 shows the encoding's share better).
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${1:-120}
WINDOW=${WINDOW:-60}
SKIP=15
T=${TAGPROF:-${BUILD:-build}/tagprof}
TMP=$(mktemp -d)
spinners=()
procs=()
cleanup() {
	for p in "${spinners[@]}" "${procs[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 1; }
# A fifo nobody writes: `read -t` on it is a sleep that starts no process.
mkfifo "$TMP/tick"
exec {tick}<>"$TMP/tick"

# CPU ns and context switches, summed over a process's threads.
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d", s }'; }
ctxsw() {
	cat /proc/"$1"/task/*/status 2>/dev/null |
		awk '/^(non)?voluntary_ctxt_switches:/ { s += $2 } END { printf "%d", s }'
}
kb() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/status"; }
now() { date +%s.%N; }

spin() {
	for _ in $(seq "$(nproc)"); do
		( while :; do :; done ) &
		spinners+=($!)
	done
}
unspin() {
	for p in "${spinners[@]}"; do kill "$p" 2>/dev/null || true; done
	spinners=()
}

# phase NAME HZ SECONDS: prints one line for the agent, one for perf, and
# keeps the figures in $TMP/NAME.
phase() {
	local name=$1 hz=$2 secs=$3 dir=$TMP/out-$1 apid ppid
	local a0 a1 p0 p1 w0 w1 q0 q1 t0 t1 hwm
	# Each -v line with the time it was written, so that the windows
	# inside the measurement are known (a reader started now, not a
	# process per line).
	"$T" agent -v --output-dir "$dir" --window "$WINDOW" -F "$hz" \
		2> >(while IFS= read -r l; do
			printf '%s %s\n' "$EPOCHREALTIME" "$l"
		done >"$TMP/agent-$name.err") &
	apid=$!
	perf record -a -g -F "$hz" -B -N -q -o "$TMP/perf-$name.data" \
		2>"$TMP/perf-$name.err" &
	ppid=$!
	procs=("$apid" "$ppid")
	sleep "$SKIP"
	t0=$(now); a0=$(cpu_ns $apid); p0=$(cpu_ns $ppid)
	w0=$(ctxsw $apid); q0=$(ctxsw $ppid)
	# The agent's CPU every half second: what a window end costs. Bash
	# builtins only: a process started here would be one more for the
	# agent to discover.
	local end=$(( ${EPOCHREALTIME%.*} + secs )) f c s
	while (( ${EPOCHREALTIME%.*} < end )); do
		s=0
		for f in /proc/$apid/task/*/schedstat; do
			read -r c _ <"$f" && s=$((s + c))
		done
		echo "$EPOCHREALTIME $s"
		read -r -t 0.5 -u "$tick" || true
	done >"$TMP/series-$name"
	t1=$(now); a1=$(cpu_ns $apid); p1=$(cpu_ns $ppid)
	w1=$(ctxsw $apid); q1=$(ctxsw $ppid)
	hwm=$(kb $apid VmHWM)
	kill -TERM $apid $ppid
	wait $apid || echo "agent exited with $?" >&2
	wait $ppid || true
	procs=()
	# The files of the windows that ended inside the measurement: end
	# (windows end on multiples of WINDOW; the first starts when the
	# agent did), lateness of the file (mtime - end), size, service.
	local f st e wins samples late lostw bytes
	for f in "$dir"/*.pb.gz; do
		st=$(basename "$f" | sed 's/_.*//')
		e=$(date -u -d "$(echo "$st" | sed 's/\(....\)\(..\)\(..\)T\(..\)\(..\)\(..\)Z/\1-\2-\3 \4:\5:\6/')" +%s)
		echo "$(( (e / WINDOW + 1) * WINDOW )) $(stat -c '%.3Y %s' "$f") $(basename "$f")"
	done | awk -v t0="$t0" -v t1="$t1" '$1 > t0 && $1 <= t1' >"$TMP/files-$name"
	# Window ends inside the measurement, by the -v lines' times.
	wins=$(awk -v t0="$t0" -v t1="$t1" \
		'/ window: [0-9]+ samples/ && $1 > t0 && $1 <= t1 { n++ } END { print n + 0 }' \
		"$TMP/agent-$name.err")
	late=$(awk '{ printf "%.3f\n", $2 - $1 }' "$TMP/files-$name" | sort -g | tail -1)
	lostw=$(grep -c '_tagprof-dropped\.pb\.gz$' "$TMP/files-$name" || true)
	bytes=$(awk '{ s += $3 } END { print s + 0 }' "$TMP/files-$name")
	# Samples per second, from the -v lines of the windows wholly inside
	# the measurement (the one before ended after t0): "full" such
	# windows of WINDOW s.
	local full
	read -r samples full < <(awk -v t0="$t0" -v t1="$t1" '
		/ window: [0-9]+ samples/ {
			if (prev >= t0 && $1 <= t1) { s += $5; n++ }
			prev = $1
		}
		END { print s + 0, n + 0 }' "$TMP/agent-$name.err")
	# The agent's own account of the work of each window that ended in
	# the measurement (-v, "window work: X ms CPU": capture__take to
	# malloc_trim), when it gives one.
	local wwork
	wwork=$(awk -v t0="$t0" -v t1="$t1" '
		/ window work: [0-9.]+ ms/ && $1 > t0 && $1 <= t1 { s += $6; n++ }
		END { if (n) printf "%.3f", s; else print "none" }' "$TMP/agent-$name.err")
	# ... and of its reader between window ends, by part ("window cpu":
	# resolving samples, context discoveries, the waits themselves), over
	# the windows wholly inside the measurement, as the samples above.
	awk -v t0="$t0" -v t1="$t1" -v name="$name" '
		/ window cpu: / { inside = prev >= t0 && $1 <= t1; prev = $1 }
		/ window cpu: / && inside {
			for (i = 2; i <= NF; i++) {
				if ($i == "reading") { r += $(i - 2); s += $(i + 1) }
				if ($i == "discovering,") t += $(i - 2)
				if ($i == "waits" || $i == "waits;") { w += $(i - 4); k += $(i - 1) }
				if ($i == "all") a += $(i - 3)
			}
			n++
		}
		END {
			if (n) printf "%-6s agent per window: %.2f ms reading %d samples (%.1f us each), %.2f ms discovering, %.2f ms in %d waits (%.1f us each); %.2f ms in all with the window work\n",
				name, r / n, s / n, (s ? r * 1e3 / s : 0), t / n, w / n, k / n, (k ? w * 1e3 / k : 0), a / n
		}' "$TMP/agent-$name.err"
	awk -v name="$name" -v hz="$hz" -v t0="$t0" -v t1="$t1" -v a="$((a1 - a0))" \
	    -v p="$((p1 - p0))" -v w="$((w1 - w0))" -v q="$((q1 - q0))" \
	    -v wins="$wins" -v samples="$samples" -v full="$full" -v W="$WINDOW" -v hwm="$hwm" \
	    -v late="${late:-none}" -v lostw="$lostw" -v bytes="$bytes" \
	    -v series="$TMP/series-$name" -v res="$TMP/results" -v wwork="$wwork" '
	BEGIN {
		d = t1 - t0
		# CPU per 0.5 s step; a step that starts in the second after a
		# window end carries that window.
		n = 0
		while ((getline line < series) > 0) {
			split(line, f, " "); ts[n] = f[1]; cpu[n] = f[2]; n++
		}
		for (i = 1; i < n; i++) {
			dt = ts[i] - ts[i - 1]; dc = cpu[i] - cpu[i - 1]
			we = int(ts[i - 1] / W) * W	# last window end before the step
			if (ts[i - 1] - we < 1.0 || ts[i] - we < 1.0) {
				wcpu += dc; wt += dt
			} else {
				bcpu += dc; bt += dt
			}
		}
		rate = bt > 0 ? bcpu / bt : a / d		# ns per s, no window
		sps = full > 0 ? samples / (full * W) : 0	# samples per s
		perwin = wins > 0 ? (wcpu - rate * wt) / wins : 0
		if (wwork != "none" && wins > 0) {	# the agent says
			perwin = wwork * 1e6 / wins
			rate = (a - wwork * 1e6) / d
		}
		printf "%-6s agent %8.4f%% %7.2f wake/s  %6.1f samples/s  %7.1f us/sample  %7.2f ms/window  peak %5.1f MB  %6d bytes/window  lost in %d windows  latest file +%s s\n",
			name, 100 * a / 1e9 / d, w / d, sps,
			(sps > 0 ? rate / sps / 1e3 : 0), perwin / 1e6, hwm / 1024,
			(wins > 0 ? bytes / wins : 0), lostw, late
		printf "%-6s perf  %8.4f%% %7.2f wake/s\n", name, 100 * p / 1e9 / d, q / d
		printf "%s %.6f %.6f %.3f %.3f %d %s %.1f %.3f %.3f\n", name,
			100 * a / 1e9 / d, 100 * p / 1e9 / d, w / d, q / d, lostw, late,
			hwm / 1024, (sps > 0 ? rate / sps / 1e3 : 0), perwin / 1e6 >> res
	}'
}

echo "tagprof agent ($T) vs perf record -a -g; ${WINDOW} s windows; $(nproc) CPUs;" \
	"steady state after ${SKIP} s"
phase idle 19 "$((SECS / 2 > 10 ? SECS / 2 : 10))"
spin
phase 19Hz 19 "$SECS"
phase 99Hz 99 "$SECS"
unspin

field() { awk -v n="$1" -v k="$2" '$1 == n { print $k }' "$TMP/results"; }
verdict() { awk "BEGIN { exit !($1) }" && echo PASS || echo MISS; }
w=$(field idle 4)
echo "target idle wake-ups <= 1/s (all threads): $(verdict "$w <= 1") ($w/s; perf $(field idle 5)/s)"
a=$(field 19Hz 2); p=$(field 19Hz 3)
echo "target 19 Hz cpu <= 1.5x perf: $(verdict "$a <= 1.5 * $p") (agent $a%, perf $p%," \
	"ratio $(awk -v a="$a" -v p="$p" 'BEGIN { printf "%.2f", (p > 0 ? a / p : 0) }'))"
l19=$(field 19Hz 6); l99=$(field 99Hz 6)
echo "target no samples lost at 19 and 99 Hz: $(verdict "$l19 + $l99 == 0")" \
	"(windows with losses: $l19 at 19 Hz, $l99 at 99 Hz)"
late=$(for n in idle 19Hz 99Hz; do field $n 7; done | grep -v none | sort -g | tail -1)
echo "target windows written within 1 s of their end: $(verdict "${late:-99} <= 1")" \
	"(latest +${late:-?} s)"
r=$(field 19Hz 8)
echo "target 19 Hz peak rss <= 32 MB: $(verdict "$r <= 32") ($r MB)"
