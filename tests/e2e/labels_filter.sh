#!/usr/bin/env bash
# --label filters in the kernel: a capture with --label query_id=q2 must keep
# >= 95% of the q2 samples that an unfiltered capture of the same moments
# sees, and nothing else.
. "$(dirname "$0")/../lib.sh"
need_bpf labels_filter_keeps labels_filter_only_match labels_filter_default_hz

"$WORKLOADS/labelpool_shared" 12 >/dev/null 2>&1 &
wl=$!
sleep 1
"$TAGPROF" record -p $wl -F 999 -d 8 -o "$TMP/all.pb.gz" 2>"$TMP/all.err" &
a=$!
"$TAGPROF" record -p $wl --label query_id=q2 -d 8 -o "$TMP/q2.pb.gz" 2>"$TMP/q2.err" &
b=$!
wait $a; ra=$?
wait $b; rb=$?
kill $wl 2>/dev/null; wait $wl 2>/dev/null
if [ $ra -ne 0 ] || [ $rb -ne 0 ]; then
	fail labels_filter_keeps "record failed: $(tail -2 "$TMP/all.err" "$TMP/q2.err")"
	exit 0
fi

want=$(total "$TMP/all.pb.gz" -tagfocus='query_id=^q2$')
got=$(total "$TMP/q2.pb.gz" -tagfocus='query_id=^q2$')
kept=$(pct "$got" "$want")
echo "labels_filter: unfiltered q2 $want, filtered q2 $got ($kept%)" >&2
if [ "${want:-0}" -ge 1000 ] && within "$kept" 95 200; then
	pass labels_filter_keeps
else
	fail labels_filter_keeps "kept $got of $want q2 samples ($kept%)"
fi

everything=$(total "$TMP/q2.pb.gz")
if [ "$everything" = "$got" ] && [ "$got" -gt 0 ]; then
	pass labels_filter_only_match
else
	fail labels_filter_only_match "$everything samples in the filtered profile, $got of them q2"
fi

# --label without -F samples at 999 Hz.
if pprof "$TMP/q2.pb.gz" -raw | grep -q '^Period: 1001001$'; then
	pass labels_filter_default_hz
else
	fail labels_filter_default_hz "period: $(pprof "$TMP/q2.pb.gz" -raw | grep '^Period')"
fi
