#!/usr/bin/env bash
# The agent's resident size while it keeps every sample (timeline = true)
# at 999 Hz with both CPUs busy: two copies of fixedwork (130-frame stacks)
# through one window of SECONDS (default 60) and the writing of its files. Prints the peak RSS (VmHWM) with and without
# --timeline, and where the RSS is at the end of the timeline run (heap,
# other anonymous memory, BPF map mappings, files). The goal: under 32 MB
# with --timeline.
#
# The agent reads the symbols of every process that runs, so other work
# on the host adds to the heap: run it on a quiet host.
# usage: tests/bench/agent_rss.sh [SECONDS]   (root, after make and make tests)
# env:   BUILD (default build)
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
SECS=${1:-60}
TMP=$(mktemp -d)
trap 'pkill -f "$B/workloads/fixedwork" 2>/dev/null || true; rm -rf "$TMP"' EXIT
[ -x "$B/tagprof" ] && [ -x "$B/workloads/fixedwork" ] ||
	{ echo "agent_rss: build first (make && make tests)" >&2; exit 1; }

# run NAME ARGS...: one agent over the workload; prints its peak RSS (kB)
# and leaves its final smaps in $TMP/NAME.smaps.
run() {
	local name=$1 ag; shift
	# ~1 ms per iteration: enough for the whole run and its start
	for _ in 1 2; do "$B/workloads/fixedwork" $(( (SECS + 15) * 1000 )) >/dev/null & done
	"$B/tagprof" agent --output-dir "$TMP/$name" --window "$SECS" -F 999 "$@" \
		2>"$TMP/$name.err" &
	ag=$!
	# past the window's end: its files are written (the peak) by then
	sleep $((SECS + 5))
	cp "/proc/$ag/smaps" "$TMP/$name.smaps"
	awk '/^VmHWM/ { print $2 }' "/proc/$ag/status" >"$TMP/$name.hwm"
	kill -TERM "$ag"; wait "$ag" || true
	pkill -f "$B/workloads/fixedwork" || true
	wait 2>/dev/null || true
}

run timeline --timeline
run merged

# kB of the mappings whose smaps header line holds the text $2
rss_of() {
	awk -v text="$2" '/^[0-9a-f]+-[0-9a-f]+ / { m = index($0, text) > 0 }
		/^Rss:/ && m { s += $2 } END { print s + 0 }' "$1"
}
sm=$TMP/timeline.smaps
heap=$(rss_of "$sm" '[heap]')
bpf=$(rss_of "$sm" 'anon_inode:bpf-map')
files=$(rss_of "$sm" ' /')
all=$(rss_of "$sm" ' ')
printf 'agent at 999 Hz, 2 CPUs busy, %d s (peak RSS, MB):\n' "$SECS"
printf '  --timeline  %6.1f   (goal < 32)\n' "$(awk '{ print $1 / 1024 }' "$TMP/timeline.hwm")"
printf '  merged      %6.1f\n' "$(awk '{ print $1 / 1024 }' "$TMP/merged.hwm")"
printf 'at the end of the --timeline run (MB): heap %.1f, other anonymous %.1f, BPF maps %.1f, files %.1f\n' \
	"$(awk -v k="$heap" 'BEGIN { print k / 1024 }')" \
	"$(awk -v a="$all" -v h="$heap" -v b="$bpf" -v f="$files" 'BEGIN { print (a - h - b - f) / 1024 }')" \
	"$(awk -v k="$bpf" 'BEGIN { print k / 1024 }')" \
	"$(awk -v k="$files" 'BEGIN { print k / 1024 }')"
