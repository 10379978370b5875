#!/usr/bin/env bash
# Issue 10, case 4: an ordinary user's perf maps must not blind the agent.
# Four processes of uid 65534 run JIT code and rewrite their 64 MiB,
# 1M-entry /tmp/perf-PID.map every half second. Beside them a victim (root)
# burns CPU. The agent at its default --max-memory 64M keeps the victim's
# samples in every window, stays within its memory, and counts the maps it
# refused; `record -a` ends on time with the victim's samples and the same
# count. (The old agent read every map whole: its heap went to 182 MiB and
# from then on it dropped every sample of every process.)
. "$(dirname "$0")/../lib.sh"
need_bpf attack_perfmap_agent_windows attack_perfmap_agent_memory \
	attack_perfmap_agent_refused attack_perfmap_record
[ -x "$WORKLOADS/perfmapbomb" ] || { echo "SKIP attack_perfmap: no workload"; exit 0; }

ENTRIES=${PERFMAPBOMB_ENTRIES:-1048576}
MAXMEM_KB=65536

# rss_peak PID FILE: the highest VmRSS (KiB) of PID, into FILE, sampled
# every 0.2 s until PID is gone.
rss_peak() {
	local pid=$1 out=$2 peak=0 v
	while [ -d /proc/$pid ]; do
		v=$(awk '/^VmRSS:/ { print $2 }' /proc/$pid/status 2>/dev/null)
		[ -n "$v" ] && [ "$v" -gt "$peak" ] && peak=$v
		echo $peak >"$out"
		sleep 0.2
	done
}

# refused FILE: the perf maps the profile says were not read for the budget.
refused() {
	pprof "$1" -raw | sed -n 's/.*JIT perf maps:.* \([0-9]*\) not read over the memory budget.*/\1/p' |
		head -1 | grep . || echo 0
}

# The attack, started first so the maps exist when the agent starts.
cd "$(attacker_dir bomb)" || exit 1
as_attacker "$WORKLOADS/perfmapbomb" 60 4 "$ENTRIES" &
bomb=$!
cd - >/dev/null || exit 1
for _ in $(seq 50); do	# the 4 maps written once (up to 5 s)
	[ "$(find /tmp -maxdepth 1 -name 'perf-*.map' -user $ATTACKER_UID -size +1M | wc -l)" -ge 4 ] && break
	sleep 0.1
done

# 1. The agent: 2 s windows, the victim spinning throughout. SIGTERM comes
# a second into the third window, so that the partial window it writes is
# long enough for the victim to have samples in it (~30 at 99 Hz with a
# third of a CPU); a fixed `sleep 7` once cut it to a few milliseconds.
out=$TMP/agent
"$WORKLOADS/symspin" 20 >/dev/null &
victim=$!
"$TAGPROF" agent --output-dir "$out" --window 2 -F 99 -v 2>"$TMP/agent.err" &
ag=$!
rss_peak $ag "$TMP/rss" &
for _ in $(seq 100); do		# two windows written (up to 10 s)
	[ "$(grep -c 'window: ' "$TMP/agent.err")" -ge 2 ] && break
	sleep 0.1
done
sleep 1
kill -TERM $ag; wait $ag; rc=$?
kill $victim; wait $victim 2>/dev/null
sleep 0.3
peak=$(cat "$TMP/rss" 2>/dev/null || echo 0)

# Every window has the victim's samples: a symspin file with samples for
# each window's timestamp, the first window excepted (windows are aligned
# to the wall clock, so the first can be a few milliseconds long).
windows=$(grep -c 'window: ' "$TMP/agent.err")
vfiles=0; missing=""
stamps=$(ls "$out" | sed -n 's/^\([0-9]*T[0-9]*Z\)_.*/\1/p' | sort -u | tail -n +2)
for st in $stamps; do
	f=$out/${st}_symspin.pb.gz
	if [ -e "$f" ] && [ "$(flat "$f" spin_inner)" -gt 0 ]; then
		vfiles=$((vfiles + 1))
	else
		missing="$missing $st"
	fi
done
if [ $rc -eq 0 ] && [ "$windows" -ge 3 ] && [ "$vfiles" -ge $((windows - 1)) ] &&
   [ -z "$missing" ] && ! grep -q 'over max-memory' "$TMP/agent.err"; then
	pass attack_perfmap_agent_windows
else
	fail attack_perfmap_agent_windows "rc=$rc, $windows windows, $vfiles with the victim's samples (without:$missing); files: $(ls "$out" | tr '\n' ' '); log: $(grep -m2 -i 'warn\|memory' "$TMP/agent.err")"
fi

if rss_unchecked attack_perfmap_agent_memory; then
	:
elif [ "$peak" -gt 0 ] && [ "$peak" -le $MAXMEM_KB ]; then
	pass attack_perfmap_agent_memory
else
	fail attack_perfmap_agent_memory "VmRSS peak $peak KiB, max-memory $MAXMEM_KB KiB"
fi

nref=0
for f in "$out"/*.pb.gz; do
	[ -e "$f" ] || continue
	n=$(refused "$f"); [ "$n" -gt "$nref" ] && nref=$n
done
if [ "$nref" -ge 1 ] && grep -q 'perf maps' "$TMP/agent.err"; then
	pass attack_perfmap_agent_refused
else
	fail attack_perfmap_agent_refused "refused $nref; log: $(grep -m2 'perf map' "$TMP/agent.err")"
fi

# 2. record -a for 3 s: on time, exit 0, the victim's samples, the count.
"$WORKLOADS/symspin" 4 >/dev/null &
victim=$!
t0=$(date +%s.%N)
timeout 20 "$TAGPROF" record -a -d 3 -F 99 -o "$TMP/r.pb.gz" 2>"$TMP/r.err"; rc=$?
t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
wait $victim
vs=$(flat "$TMP/r.pb.gz" spin_inner)
nref=$(refused "$TMP/r.pb.gz")
if [ $rc -eq 0 ] && within "$t" 0 5 && [ "$vs" -gt 0 ] && [ "$nref" -ge 1 ]; then
	pass attack_perfmap_record
else
	fail attack_perfmap_record "rc=$rc in $t s, victim $vs samples, $nref maps refused; $(tail -2 "$TMP/r.err")"
fi

# The attack ends on SIGTERM (its children too, removing their maps): to
# the workload, which is $bomb or its child.
kill -TERM $(pgrep -P $bomb -x perfmapbomb) $bomb 2>/dev/null
wait $bomb 2>/dev/null
rm -f /tmp/perf-*.map.tmp 2>/dev/null
exit 0
