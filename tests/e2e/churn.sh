#!/usr/bin/env bash
# Process churn under the agent (issue 15): 2,000 short processes and 1,000
# short threads a second for 20 s beside `tagprof agent --window 2`. A
# window file is still written every window, what is lost is counted in
# the profiles' comments, the agent's RSS stays bounded, and a pid reused
# by another program never gives that program the first one's symbols.
# kernel.pid_max is lowered for the run so that pids come round again
# within seconds (restored on exit); churn_a and churn_b, which churn
# execs in turn, have their spin functions at the same address, so symbols
# kept from the pid's previous tenant would name the wrong one.
. "$(dirname "$0")/../lib.sh"
need_bpf churn_rates churn_windows churn_losses_counted churn_rss \
	churn_pid_reused churn_own_symbols

SECS=20
PROCS=2000
THREADS=1000
out=$TMP/out
old_pid_max=$(cat /proc/sys/kernel/pid_max)
restore() { echo "$old_pid_max" >/proc/sys/kernel/pid_max; rm -rf "$TAGPROF_E2E_TMP"; }
trap restore EXIT
# Low enough that ~3,000 pids a second wrap round in about a second (the
# agent sweeps dead processes once a window), high enough for the machine.
echo 4096 >/proc/sys/kernel/pid_max

"$TAGPROF" agent --output-dir "$out" --window 2 -F 499 2>"$TMP/agent.err" &
ag=$!
# The agent's RSS every second, from its start to its end.
( while kill -0 $ag 2>/dev/null; do
	awk '/^VmRSS:/ { print $2 }' /proc/$ag/status 2>/dev/null
	sleep 1
  done ) >"$TMP/rss" &
sampler=$!
sleep 1
# Every 40th process execs churn_a or churn_b, which spin 20 ms: long
# enough for the agent to read some of their maps before they go. The
# churn runs 5 nice levels below the agent, as a production agent would
# be placed: on 2 CPUs it could otherwise starve the agent for seconds.
nice -n 5 "$WORKLOADS/churn" $SECS $PROCS $THREADS "$WORKLOADS" 40 20 >"$TMP/churn.out" 2>&1
sleep 1
kill -TERM $ag; wait $ag; rc=$?
wait $sampler
echo "$old_pid_max" >/proc/sys/kernel/pid_max
cat "$TMP/churn.out" >&2

# 1. The workload got at least a quarter of the rates asked (this 2-CPU
# VM: about 1,900 processes and 1,000 threads a second when idle, 500-900
# processes with other work running; churn_b got churn_a's pid in most of
# their pairs, "reused" in churn's line).
read -r procs threads < <(awk '{ for (i = 1; i <= NF; i++) {
	if ($i == "procs") p = $(i + 1); if ($i == "threads") t = $(i + 1) }
	sub(/\/s/, "", p); sub(/\/s/, "", t); print p + 0, t + 0 }' "$TMP/churn.out")
if [ "${procs:-0}" -ge $((PROCS / 4)) ] && [ "${threads:-0}" -ge $((THREADS / 4)) ]; then
	pass churn_rates
else
	fail churn_rates "got ${procs:-?} processes/s (want >= $((PROCS / 4))), ${threads:-?} threads/s (want >= $((THREADS / 4))): $(cat "$TMP/churn.out")"
fi

# 2. A file every window: the windows' start times among the files.
nwin=$(ls "$out" 2>/dev/null | grep '\.pb\.gz$' | cut -d_ -f1 | sort -u | grep -c .)
echo "churn: agent exit $rc, $(ls "$out" | grep -c '\.pb\.gz$') files in $nwin windows" >&2
if [ $rc -eq 0 ] && [ "$nwin" -ge $((SECS / 2 - 1)) ]; then
	pass churn_windows
else
	fail churn_windows "agent exit $rc, $nwin windows with files in $((SECS + 2)) s (want >= $((SECS / 2 - 1))); log: $(tail -3 "$TMP/agent.err")"
fi

# 3. Losses counted: every churn window says how many samples were lost
# and how many exec/exit events, and the maps it could not read (most of
# the short processes are gone before their maps are read).
nf=0; nc=0; last=""
for f in "$out"/*_churn*.pb.gz; do
	[ -e "$f" ] || continue
	nf=$((nf + 1))
	c=$(pprof "$f" -comments)
	if grep -qE '^# samples: [0-9]+ received, [0-9]+ lost \(ring buffer full\)' <<<"$c" &&
	   grep -qE '[0-9]+ maps unreadable' <<<"$c" &&
	   grep -qE '[0-9]+ exec/exit events lost' <<<"$c"; then
		nc=$((nc + 1)); last=$f
	fi
done
if [ -n "$last" ]; then
	c=$(pprof "$last" -comments)
	echo "churn: last window: $(grep -oE '[0-9]+ received, [0-9]+ lost \(ring buffer full\)' <<<"$c"); since start: $(grep -oE '[0-9]+ seen, [0-9]+ maps unreadable' <<<"$c"), $(grep -oE '[0-9]+ pid reused' <<<"$c"), $(grep -oE '[0-9]+ exec/exit events lost' <<<"$c")" >&2
fi
if [ "$nf" -ge $((SECS / 2 - 1)) ] && [ "$nc" -eq "$nf" ]; then
	pass churn_losses_counted
else
	fail churn_losses_counted "$nf churn files (want >= $((SECS / 2 - 1))), $nc with the lost-sample, exec/exit-lost and unreadable-maps counters"
fi

# 4. RSS bounded: a peak under 128 MiB, and growing ever more slowly. The
# agent's caches fill as the churn begins (the stacks the BPF side sent
# whole are kept by id until their bound, max-memory/8, then rolled; the
# ring buffer's pages are touched; symbol tables) and then level off: the
# growth over the last 8 s of churn must be at most half the growth over
# its first 8 s, or under 4 MiB. A leak per process or per thread grows at
# the same pace all along.
echo "churn: agent RSS (MiB) each second: $(awk '{ printf "%.1f ", $1 / 1024 }' "$TMP/rss")" >&2
# v[1] is taken as the agent starts, v[2] as the churn does, and the last
# one after the churn's end.
# The late growth leaves out its largest one-second step: a cache that
# doubles once (a hash table's resize: +4 MiB in one second, flat before
# and after, seen in CI) is not a leak, which grows every second; a leak
# still shows as the other seven seconds' growth.
read -r n peak early late < <(awk '{ v[NR] = $1; if ($1 > p) p = $1 }
	END { e = NR >= 10 ? v[10] - v[2] : 0; l = 0; m = 0
	      if (NR >= 10) {
		      l = v[NR - 1] - v[NR - 9]
		      for (i = NR - 8; i <= NR - 1; i++)
			      if (v[i] - v[i - 1] > m) m = v[i] - v[i - 1]
		      l -= m
	      }
	      print NR, p + 0, e, l }' "$TMP/rss")
limit=$((early / 2 > 4096 ? early / 2 : 4096))
echo "churn: RSS peak $((peak / 1024)) MiB; growth $((early / 1024)) MiB over the first 8 s of churn, $((late / 1024)) MiB over the last 8 s less its largest step" >&2
if rss_unchecked churn_rss; then
	:
elif [ "$n" -ge $((SECS - 2)) ] && [ "$peak" -lt $((128 * 1024)) ] && [ "$late" -le "$limit" ]; then
	pass churn_rss
else
	fail churn_rss "$n RSS samples, peak $((peak / 1024)) MiB (want < 128), growth $((late / 1024)) MiB over the last 8 s of churn (its largest one-second step left out) against $((early / 1024)) MiB over its first 8 s (want <= half, or 4 MiB)"
fi

# Every sample of the churn programs: "COUNT LEAF thread_name pid", from
# the files of churn, churn_a and churn_b (a sample given the pid's
# previous tenant goes to that one's file: thread_name is the kernel's
# comm, taken by BPF with the sample, whatever the agent thinks the pid is).
for f in "$out"/*_churn*.pb.gz; do
	[ -e "$f" ] || continue
	leaf_labels "$f" -tagfocus='thread_name=^churn_[ab]$' | awk '{
		t = ""; p = ""
		for (i = 3; i <= NF; i++) {
			if ($i ~ /^thread_name=/) t = substr($i, 13)
			if ($i ~ /^pid=/) p = substr($i, 5)
		}
		if (t != "") print $1, $2, t, p }'
done >"$TMP/samples"

# 5. Pids were reused: pids with samples of both programs.
reused=$(awk '{ seen[$4, $3] = 1; pids[$4] = 1 }
	END { for (p in pids) if (seen[p, "churn_a"] && seen[p, "churn_b"]) n++; print n + 0 }' "$TMP/samples")
echo "churn: $reused pids with samples of both churn_a and churn_b" >&2
if [ "$reused" -ge 5 ]; then
	pass churn_pid_reused
else
	fail churn_pid_reused "$reused pids ran both churn_a and churn_b with samples (want >= 5)"
fi

# 6. Never the other tenant's symbols: no churn_a sample in beta_spin and
# no churn_b sample in alpha_spin; and enough named samples of each (and
# of pids that ran both) for that to mean something.
read -r own_a own_b wrong both_named < <(awk '
	$3 == "churn_a" && $2 == "alpha_spin" { a += $1; na[$4] = 1 }
	$3 == "churn_b" && $2 == "beta_spin" { b += $1; nb[$4] = 1 }
	($3 == "churn_a" && $2 == "beta_spin") || ($3 == "churn_b" && $2 == "alpha_spin") { w += $1 }
	END { for (p in na) if (p in nb) n++; print a + 0, b + 0, w + 0, n + 0 }' "$TMP/samples")
echo "churn: $own_a churn_a samples in alpha_spin, $own_b churn_b samples in beta_spin, $wrong in the other's function; $both_named pids named in both" >&2
if [ "$wrong" -eq 0 ] && [ "$own_a" -ge 20 ] && [ "$own_b" -ge 20 ] && [ "$both_named" -ge 1 ]; then
	pass churn_own_symbols
else
	fail churn_own_symbols "$wrong samples named after the other program's function; $own_a churn_a in alpha_spin and $own_b churn_b in beta_spin (want >= 20 each), $both_named pids named in both (want >= 1)"
fi
