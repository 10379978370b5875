#!/usr/bin/env bash
# The agent over a long run of churn (issue 15): two agents, at 19 Hz and
# at 99 Hz, side by side for MINUTES (default 30), beside
#   - label churn: labelchurn, a new label set every ~3 ms (distinct values);
#   - process churn: churn, 500 short processes and 250 short threads a
#     second, every 20th process an exec of churn_a/churn_b;
#   - a JIT workload: jitengine churn, new generated code and code regions
#     every 50-100 ms, described in a jitdump.
# Prints, per minute and per agent: RSS (MiB, the largest seen that
# minute), the heap in use at its last window end (MiB), CPU (% of one CPU over the minute), windows written and samples
# lost (ring buffer full, plus those dropped over --max-memory) so far.
# Then what each agent's heap and caches held at the end of the baseline
# minute and at the end (its -v lines "heap:" and "caches:"), and the verdict on the rule "RSS grows less than 5% after the first 5
# minutes" (of 30; for a shorter run, after the first sixth): the largest
# RSS of the last minute against the largest of that baseline minute.
# Each agent runs from a copy of the binary, so a rebuild meanwhile does
# not change what is measured.
# usage: tests/bench/soak.sh [MINUTES]   (root, after make and make tests)
# env:   BUILD (default build), WINDOW (agent window, s; default 10),
#        SAMPLE (seconds between RSS/CPU readings; default 5)
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/bench/lib.sh
B=${BUILD:-build}
MIN=${1:-30}
WINDOW=${WINDOW:-10}
SAMPLE=${SAMPLE:-5}
for f in tagprof workloads/churn workloads/churn_a workloads/labelchurn workloads/jitengine; do
	[ -x "$B/$f" ] || { bench_log "no $B/$f: build first (make && make tests)"; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { bench_log "needs root"; exit 1; }
[[ "$MIN" =~ ^[0-9]+$ ]] && [ "$MIN" -ge 2 ] || { bench_log "MINUTES: 2 or more"; exit 1; }
TMP=$(mktemp -d /tmp/tagprof-soak.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT
SECS=$((MIN * 60))
HZ=$(getconf CLK_TCK)
cp "$B/tagprof" "$TMP/tagprof"

declare -A AG
for f in 19 99; do
	mkdir -p "$TMP/out$f"
	# Every file is kept: the windows are counted, and their lost samples read, from them.
	"$TMP/tagprof" agent --output-dir "$TMP/out$f" --window "$WINDOW" -F $f -v \
		--retain-files 0 --retain-bytes 100G 2>"$TMP/agent$f.log" &
	AG[$f]=$!; pids+=($!)
done
sleep 2
# The workloads end on their own with the last minute, and say what rates
# they got.
"$B/workloads/labelchurn" $((SECS - 1)) 1 1000 >"$TMP/labelchurn.out" 2>&1 &
wl=($!)
"$B/workloads/churn" $((SECS - 1)) 500 250 "$B/workloads" 20 5 >"$TMP/churn.out" 2>&1 &
wl+=($!)
mkdir -p "$TMP/jit"
"$B/workloads/jitengine" --jitdump-dir "$TMP/jit" --log /dev/null churn $((SECS - 1)) \
	>"$TMP/jit.out" 2>&1 &
wl+=($!)
pids+=("${wl[@]}")
bench_log "agents ${AG[19]} (19 Hz) and ${AG[99]} (99 Hz), $MIN min, windows of $WINDOW s; workdir $TMP"

# cpu_ticks PID: utime + stime, in clock ticks.
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
# lost DIR: samples lost + dropped, summed over its windows (one file of
# each window: all files of a window carry its counters). Remembers the
# windows already read in DIR.lost.
lost() {
	local d=$1 w f n
	touch "$d.lost"
	for w in $(ls "$d" | grep '\.pb\.gz$' | cut -d_ -f1 | sort -u); do
		grep -q "^$w " "$d.lost" && continue
		f=$(ls "$d"/"$w"_*.pb.gz | head -1)
		n=$(zcat "$f" 2>/dev/null | grep -aoE '# samples: [0-9]+ received, [0-9]+ lost|[0-9]+ dropped over the memory limit' |
			awk '/lost/ { s += $5 } /dropped/ { s += $1 } END { print s + 0 }')
		echo "$w $n" >>"$d.lost"
	done
	awk '{ s += $2 } END { print s + 0 }' "$d.lost"
}
# smaps_rss PID: "KiB kind name" per mapping kind: [heap], [stack], other
# anonymous memory, and each file (all its mappings summed), plus the
# totals of /proc/PID/status's RssAnon, RssFile and RssShmem.
smaps_rss() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { n = $6 == "" ? "[anon]" : $6 }
		/^Rss:/ { k[n] += $2 }
		END { for (n in k) print k[n], n }' "/proc/$1/smaps" 2>/dev/null
	awk '/^Rss(Anon|File|Shmem):/ { print $2, $1 }' "/proc/$1/status" 2>/dev/null
}
windows() { grep -c 'window: .* files written' "$1" || true; }

# heap_kb LOG: the heap in use at the agent's last window end (its -v
# "heap:" line), KiB: RSS that grows with it is held memory, RSS that
# grows without it is free heap kept or other mappings.
heap_kb() { grep -o 'heap: [0-9]* KiB in use' "$1" | tail -1 | awk '{ print $2 + 0 }'; }

printf '%4s | %8s %7s %6s %7s %6s | %8s %7s %6s %7s %6s\n' min 'RSS19' 'heap19' 'CPU19%' \
	'windows' 'lost' 'RSS99' 'heap99' 'CPU99%' 'windows' 'lost'
declare -A c0 peak
# The baseline minute of the verdict: 5 of 30, a sixth of the run.
base=$(( (MIN + 5) / 6 ))
for f in 19 99; do c0[$f]=$(cpu_ticks "${AG[$f]}"); done
t0=$(date +%s)
for m in $(seq 1 "$MIN"); do
	for f in 19 99; do peak[$f]=0; done
	while [ $(( $(date +%s) - t0 )) -lt $((m * 60)) ]; do
		for f in 19 99; do
			alive "${AG[$f]}" || { bench_log "the $f Hz agent died: $(tail -3 "$TMP/agent$f.log")"; exit 1; }
			r=$(rss_kb "${AG[$f]}")
			[ "$r" -gt "${peak[$f]}" ] && peak[$f]=$r
		done
		sleep "$SAMPLE"
	done
	line=$(printf '%4d |' "$m")
	for f in 19 99; do
		c=$(cpu_ticks "${AG[$f]}")
		echo "$m ${peak[$f]}" >>"$TMP/rss$f"
		line+=$(printf ' %8.1f %7.1f %6.2f %7d %6d |' "$(awk -v k="${peak[$f]}" 'BEGIN { print k / 1024 }')" \
			"$(awk -v k="$(heap_kb "$TMP/agent$f.log")" 'BEGIN { print k / 1024 }')" \
			"$(awk -v d=$((c - c0[$f])) -v hz="$HZ" 'BEGIN { print 100 * d / hz / 60 }')" \
			"$(windows "$TMP/agent$f.log")" "$(lost "$TMP/out$f")")
		c0[$f]=$c
	done
	echo "${line% |}"
	# Where the RSS is, by mapping: kept for the baseline minute and for
	# the last, and compared at the end.
	if [ "$m" -eq "$base" ] || [ "$m" -eq "$MIN" ]; then
		for f in 19 99; do smaps_rss "${AG[$f]}" >"$TMP/smaps$f.$m"; done
	fi
done

wait "${wl[@]}" 2>/dev/null || true
for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
wait 2>/dev/null || true
pids=()
echo "workloads: $(cat "$TMP/churn.out"); $(cat "$TMP/labelchurn.out"); jitengine: $(grep -c . "$TMP/jit.out" || true) lines of output"

# The heap bound: samples are dropped while the heap is over --max-memory.
for f in 19 99; do
	echo "$f Hz: heap over --max-memory $(grep -c 'is over max-memory' "$TMP/agent$f.log" || true) times; last window: $(grep 'window: ' "$TMP/agent$f.log" | tail -1 | sed 's/^tagprof agent: //')"
done

# The verdict: growth after the baseline minute (base, above).
# Where memory went between the baseline and the end: the heap (in use
# against free) and the bounded caches, as the agents' -v logs say at the
# window ending the baseline minute and at the last window.
for f in 19 99; do
	for what in heap caches; do
		awk -v k=$((base * 60 / WINDOW)) -v f="$f" -v w="$what" -v m="$base" '
			$3 == w":" { n++; sub(/^tagprof agent: /, ""); if (n == k) first = $0; last = $0 }
			END { printf "%s Hz, minute %d: %s\n%s Hz, the end: %s\n", f, m, first, f, last }' \
			"$TMP/agent$f.log"
	done
done
# The mappings whose RSS changed by 64 KiB or more, baseline to end.
for f in 19 99; do
	echo "$f Hz, RSS by mapping, minute $base -> $MIN (KiB; changes of 64 KiB or more, and the totals):"
	awk 'NR == FNR { a[$2] = $1; next } { b[$2] = $1 }
		END {
			for (n in b) if (!(n in a)) a[n] = 0
			for (n in a) {
				d = b[n] - a[n]
				if (n ~ /^Rss/ || d >= 64 || d <= -64)
					printf "  %8d -> %8d  %+7d  %s\n", a[n], b[n], d, n
			}
		}' "$TMP/smaps$f.$base" "$TMP/smaps$f.$MIN" | sort -k4
done
verdict=PASS
for f in 19 99; do
	b=$(awk -v m="$base" '$1 == m { print $2 }' "$TMP/rss$f")
	e=$(awk 'END { print $2 }' "$TMP/rss$f")
	g=$(awk -v b="$b" -v e="$e" 'BEGIN { printf "%.1f", b ? 100 * (e - b) / b : 100 }')
	le "$g" 4.999 || verdict=FAIL
	printf '%d Hz: RSS %.1f MiB in minute %d, %.1f MiB in minute %d: %+.1f%% (rule: < 5%%)\n' \
		"$f" "$(awk -v k="$b" 'BEGIN { print k / 1024 }')" "$base" \
		"$(awk -v k="$e" 'BEGIN { print k / 1024 }')" "$MIN" "$g"
done
echo "$verdict soak: RSS growth after minute $base under 5% for both agents"
[ $verdict = PASS ]
