#!/usr/bin/env bash
# Issue 10, case 1: an ordinary user publishes an OTEL_CTX whose payload
# nests AnyValues ~8,900 deep (array_value), ~5,900 deep (kvlist_value), or
# holds ~32,000 elements. A recursive protobuf decoder overflows its stack
# on the first two. record -a and the agent must refuse all three unread,
# count them, and go on: record ends on time with a readable profile, the
# agent keeps writing windows and exits cleanly on SIGTERM.
. "$(dirname "$0")/../lib.sh"
need_bpf otelctx_record otelctx_record_counted otelctx_agent \
	otelctx_agent_counted

# attack: the three hostile processes, as the attacker, in the background;
# their pids (as they print them) in $attackers once each has published.
# end_attack kills them.
attack() {
	attackers=""
	rm -f "$TMP"/*.out
	for mode in array kvlist count; do
		# (stderr apart: the subshell reports the kill at the end)
		as_attacker "$WORKLOADS/deepctx" $mode 60 >"$TMP/$mode.out" \
			2>"$TMP/$mode.err" &
	done
	for i in $(seq 50); do
		[ "$(cat "$TMP"/*.out 2>/dev/null | grep -c levels)" -eq 3 ] && break
		sleep 0.1
	done
	attackers=$(sed -n 's/^deepctx: pid \([0-9]*\),.*/\1/p' "$TMP"/*.out)
}
end_attack() { kill $attackers 2>/dev/null; wait; }

# refused TEXT: N from "N payloads refused unread" in TEXT, or 0.
refused() { echo "$1" | grep -oE '[0-9]+ payloads refused unread' | tail -1 | cut -d' ' -f1 | grep . || echo 0; }

# 1. record -a -d 3: on time (3 s + 2), exit 0, a readable profile whose
# comments count the three refusals, and the attackers' samples kept.
attack
out=$TMP/rec.pb.gz
t0=$(date +%s%N)
timeout -s KILL 20 "$TAGPROF" record -a -d 3 -F 199 -o "$out" 2>"$TMP/rec.err"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
if [ $rc -eq 0 ] && [ $ms -le 5000 ] && pprof "$out" -raw >/dev/null; then
	pass otelctx_record
else
	fail otelctx_record "rc=$rc after $ms ms, profile: $(ls -la "$out" 2>&1); $(tail -2 "$TMP/rec.err")"
fi
c=$(pprof "$out" -raw 2>/dev/null | grep '^Comment: # process context')
n=$(refused "$c")
kept=$(total "$out" -tagfocus='process=^deepctx$')
if [ "$n" -ge 3 ] && [ "$kept" -gt 0 ] && grep -q 'payloads refused' "$TMP/rec.err"; then
	pass otelctx_record_counted
else
	fail otelctx_record_counted "refused $n (want 3), $kept deepctx samples; comment: $c"
fi
end_attack

# 2. The agent, 1 s windows for ~5 s beside the attackers, then SIGTERM:
# windows all along, exit 0, and the refusals in its log and comments.
attack
dir=$TMP/agent
# (--max-memory: the heap peaks above the default 64M while DWARF is read
# at start, and dropped samples would leave windows without files.)
"$TAGPROF" agent --output-dir "$dir" --window 1 -F 99 --max-memory 1G \
	2>"$TMP/agent.err" &
ag=$!
sleep 5
kill -TERM $ag 2>/dev/null
wait $ag; rc=$?
end_attack
windows=$(ls "$dir" 2>/dev/null | grep '\.pb\.gz$' | cut -d_ -f1 | sort -u | wc -l)
bad=""
for f in "$dir"/*.pb.gz; do
	[ -e "$f" ] || continue
	pprof "$f" -raw >/dev/null || bad="$bad $(basename "$f")"
done
if [ $rc -eq 0 ] && [ "$windows" -ge 3 ] && [ -z "$bad" ]; then
	pass otelctx_agent
else
	fail otelctx_agent "rc=$rc, $windows windows, unreadable:$bad; log: $(tail -2 "$TMP/agent.err")"
fi
last=$(ls "$dir"/*.pb.gz 2>/dev/null | tail -1)
n=$(refused "$(grep 'process context' "$TMP/agent.err")")
m=$(refused "$(pprof "$last" -raw 2>/dev/null | grep '^Comment: # process context')")
if [ "$n" -ge 3 ] && [ "$m" -ge 3 ]; then
	pass otelctx_agent_counted
else
	fail otelctx_agent_counted "log says $n refused, last profile $m; log: $(grep 'process context' "$TMP/agent.err" | tail -1)"
fi
