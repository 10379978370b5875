#!/usr/bin/env bash
# Issue 15, case 4: a thread context rewritten millions of times a second.
# ctxstorm (as an ordinary user) rewrites one OTEP 4947 record in place
# with a=b=D*200, D changing each time: by its own thread between spins
# (self), and by a second thread while the sampled one spins (other).
# Under `record -a`: no sample carries a torn set (a != b, or not one digit
# eight times), the reads that saw the record change are counted ("torn
# record"), the agent's CPU and peak RSS stay bounded, the run ends on time.
. "$(dirname "$0")/../lib.sh"
need_bpf ctxstorm_self ctxstorm_other ctxstorm_rate ctxstorm_bounded \
	ctxstorm_torn_counted
[ -x "$WORKLOADS/ctxstorm" ] || { echo "SKIP ctxstorm: no workload"; exit 0; }

# run MODE: ctxstorm MODE under record -a -d 3 at 999 Hz, ended once
# record ends; sets rate, secs, cpu (agent CPU seconds), rss (peak KiB),
# rc, the file $TMP/MODE.pb.gz, and why (load and involuntary context
# switches: a record that takes longer than its CPU time on a loaded
# machine waited for a CPU).
run() {
	local mode=$1 st="" ics
	# (other: 50 spins between rewrites, ~4M/s, the pace at which a
	# record torn between two valid=1 showed up most before the fix)
	as_attacker "$WORKLOADS/ctxstorm" 60 "$mode" 50 >"$TMP/$mode.out" &
	for _ in $(seq 50); do	# its pid, once it has published
		st=$(sed -n 's/^ctxstorm: pid \([0-9]*\),.*/\1/p' "$TMP/$mode.out")
		[ -n "$st" ] && break
		sleep 0.1
	done
	/usr/bin/time -f '%e %U %S %M %c' -o "$TMP/$mode.time" \
		timeout -s KILL 20 "$TAGPROF" record -a -d 3 -F 999 \
		-o "$TMP/$mode.pb.gz" 2>"$TMP/$mode.err"
	rc=$?
	kill -TERM $st; wait
	rate=$(sed -n 's/^ctxstorm: \([0-9]*\) rewrites.*/\1/p' "$TMP/$mode.out")
	read -r secs u s rss ics <"$TMP/$mode.time"
	cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
	why="$ics involuntary context switches, load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "ctxstorm $mode: ${rate:-?} rewrites/s; record ${secs} s, CPU ${cpu} s, peak RSS ${rss} KiB, rc $rc ($why)"
}

# bad FILE: "N M": ctxstorm's samples with both labels, and those of them
# with a torn set.
bad() {
	py "$1" <<'EOF'
import re, sys, pprof_read
p = pprof_read.load(sys.argv[1])
n = torn = 0
for s in p.samples:
    a, b = s.labels.get("a"), s.labels.get("b")
    if a is None and b is None:
        continue
    n += 1
    if a != b or not isinstance(a, str) or not re.fullmatch(r"(\d)\1*", a):
        torn += 1
print(n, torn)
EOF
}

# torn_count FILE: the "torn record" count of the thread-context comment.
torn_count() {
	pprof "$1" -raw 2>/dev/null | grep '^Comment: # thread context' |
		grep -o '[0-9][0-9]* torn record' | head -1 |
		cut -d' ' -f1 | grep . || echo 0
}

bounded=""; slow=""
for mode in self other; do
	run $mode
	[ "${rate:-0}" -ge 1000000 ] || slow="$slow $mode: rate ${rate:-?}/s < 1M;"
	# (RSS: not under ASan, where it is mostly shadow memory; rss_unchecked)
	if [ $rc -ne 0 ] || ! on_time "$secs" 10 || ! within "$cpu" 0 3 ||
	   { [ -z "${SANITIZE:-}" ] && [ "$rss" -gt 204800 ]; }; then
		bounded="$bounded $mode: rc $rc, $secs s, CPU $cpu s, RSS $rss KiB ($why);"
	fi
	read -r n t < <(bad "$TMP/$mode.pb.gz")
	torn=$(torn_count "$TMP/$mode.pb.gz")
	echo "ctxstorm $mode: $n labelled samples, $t torn; $torn torn reads counted"
	# (a few dozen: the worker is pinned to CPU 0, beside other jobs)
	if [ "${n:-0}" -ge 10 ] && [ "$t" -eq 0 ]; then
		pass ctxstorm_$mode
	else
		fail ctxstorm_$mode "$n samples with labels (want >= 10), $t with a torn set"
	fi
	[ $mode = other ] && other_torn=$torn
done
if [ -z "$slow" ]; then pass ctxstorm_rate; else fail ctxstorm_rate "$slow"; fi
if [ -z "$bounded" ]; then pass ctxstorm_bounded; else fail ctxstorm_bounded "$bounded"; fi
if [ "${other_torn:-0}" -ge 1 ]; then
	pass ctxstorm_torn_counted
else
	fail ctxstorm_torn_counted "no torn read counted with a second thread rewriting"
fi
