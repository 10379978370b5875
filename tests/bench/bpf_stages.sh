#!/usr/bin/env bash
# Where the sampler's BPF time goes, stage by stage (bpf/stages.bpf.h): a
# build with -DTP_STAGE_TIMES in build-stages/, `record -a` at 999 Hz over
# two copies of fixedwork (127-frame stacks), with stack ids on and off
# (TAGPROF_STACK_IDS=0) in interleaved rounds; prints the median ns per
# sample of each stage. The clock reads add some ns to every stage.
# usage: tests/bench/bpf_stages.sh [SECONDS] [ROUNDS]   (root)
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/bench/lib.sh
SECS=${1:-6}
ROUNDS=${2:-3}
SB=build-stages
make -s BUILD=$SB BPF_DEFS=-DTP_STAGE_TIMES $SB/tagprof $SB/workloads/fixedwork
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; kill $(jobs -p) 2>/dev/null || true' EXIT
STAGES=(filter ids ustack kstack extras stackid output)

# one_run ENV...: per-sample ns of each stage, on one line.
one_run() {
	local w1 w2 r id
	$SB/workloads/fixedwork 100000 130 >/dev/null 2>&1 & w1=$!
	$SB/workloads/fixedwork 100000 130 >/dev/null 2>&1 & w2=$!
	env "$@" $SB/tagprof record -a -F 999 -d $((SECS + 4)) -o "$TMP/o.pb.gz" \
		2>"$TMP/rec.err" & r=$!
	sleep "$SECS"
	id=
	for m in $(grep -h '^map_id:' /proc/$r/fdinfo/* 2>/dev/null |
			awk '{ print $2 }' | sort -un); do
		# Not `| grep -q`: with pipefail, bpftool's SIGPIPE fails the test.
		if [[ $(bpftool map show id "$m" 2>/dev/null) == *"name stage_ns"* ]]; then
			id=$m
			break
		fi
	done
	[ -n "$id" ] || { echo "no stage_ns map: not a -DTP_STAGE_TIMES build?" >&2; cat "$TMP/rec.err" >&2; exit 1; }
	bpftool map dump id "$id" -j | python3 -c '
import json, sys
v = {e["formatted"]["key"]: sum(c["value"] for c in e["formatted"]["values"])
     for e in json.load(sys.stdin)}
n = v.get(7, 0) or 1
print(" ".join("%.0f" % (v.get(i, 0) / n) for i in range(7)), n)'
	kill -INT $r 2>/dev/null || true; wait $r 2>/dev/null || true
	kill $w1 $w2 2>/dev/null || true; wait $w1 $w2 2>/dev/null || true
}

for r in $(seq "$ROUNDS"); do
	one_run X=1 >> "$TMP/on"
	one_run TAGPROF_STACK_IDS=0 >> "$TMP/off"
done
echo "BPF ns per sample by stage, median of $ROUNDS rounds, $SECS s at 999 Hz, 2x fixedwork (127-frame stacks)"
printf "%-14s" "stack ids"; printf "%8s" "${STAGES[@]}" total; echo
for f in on off; do
	printf "%-14s" "$f"
	for i in $(seq 1 7); do
		printf "%8s" "$(awk -v c=$i '{ print $c }' "$TMP/$f" | median)"
	done
	printf "%8s\n" "$(awk '{ s = 0; for (i = 1; i <= 7; i++) s += $i; print s }' "$TMP/$f" | median)"
done
