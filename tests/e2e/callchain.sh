#!/usr/bin/env bash
# A noinline chain main -> work -> {leaf_a, leaf_b} with 3:1 work: pprof must
# show both leaves under work with 75/25 +- 5 points of the workload's samples.
. "$(dirname "$0")/../lib.sh"
need_bpf callchain_record callchain_pprof_clean callchain_shares callchain_under_work

out=$TMP/cc.pb.gz
if "$TAGPROF" record -F 999 -o "$out" -- "$WORKLOADS/callchain" 4 2>"$TMP/rec.err"; then
	pass callchain_record
else
	fail callchain_record "tagprof exited $?: $(tail -3 "$TMP/rec.err")"
	exit 0
fi

pprof "$out" -top >/dev/null
if pprof_warned; then
	fail callchain_pprof_clean "go tool pprof said: $(head -3 "$TMP/pprof.err")"
else
	pass callchain_pprof_clean
fi

all=$(total "$out" -tagfocus=process=callchain)
a=$(flat "$out" leaf_a -tagfocus=process=callchain)
b=$(flat "$out" leaf_b -tagfocus=process=callchain)
pa=$(pct "$a" "$all"); pb=$(pct "$b" "$all")
echo "callchain: $all samples, leaf_a $a ($pa%), leaf_b $b ($pb%)" >&2
if [ "${all:-0}" -ge 1000 ] && within "$pa" 70 80 && within "$pb" 20 30; then
	pass callchain_shares
else
	fail callchain_shares "leaf_a $pa%, leaf_b $pb% of $all samples (want 75/25 +-5)"
fi

# Every leaf sample must have work and main above it.
wa=$(flat "$out" leaf_a -focus='^work$' -tagfocus=process=callchain)
wb=$(flat "$out" leaf_b -focus='^work$' -tagfocus=process=callchain)
ma=$(cum "$out" main -tagfocus=process=callchain)
if [ "$wa" = "$a" ] && [ "$wb" = "$b" ] && [ "$ma" -ge $((a + b)) ]; then
	pass callchain_under_work
else
	fail callchain_under_work "under work: leaf_a $wa/$a, leaf_b $wb/$b; main cum $ma"
fi
