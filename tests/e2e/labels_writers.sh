#!/usr/bin/env bash
# Thread context from writers that do not use libtagprof: one written from
# the OTEP 4947/4719 texts alone, and a custom-labels v1 writer. Both must
# come out as pprof labels in the right proportions (3:1).
. "$(dirname "$0")/../lib.sh"
need_bpf labels_otel_writer labels_otel_trace labels_custom_writer

share_check() {   # name file key v_big v_small
	local all big small pb ps
	all=$(total "$2" -tagfocus="thread_name=$6")
	big=$(total "$2" -tagfocus="$3=^$4\$")
	small=$(total "$2" -tagfocus="$3=^$5\$")
	pb=$(pct "${big:-0}" "${all:-0}"); ps=$(pct "${small:-0}" "${all:-0}")
	echo "$1: $all samples, $3=$4 $pb%, $3=$5 $ps%" >&2
	if [ "${all:-0}" -ge 500 ] && within "$pb" 68 82 && within "$ps" 18 32; then
		pass "$1"
	else
		fail "$1" "$3=$4 $pb%, $3=$5 $ps% of ${all:-0} samples (want 75/25 +-7)"
	fi
}

out=$TMP/ow.pb.gz
"$TAGPROF" record -F 999 -o "$out" -- "$WORKLOADS/otelwriter" 3 2>"$TMP/ow.err" ||
	{ fail labels_otel_writer "record: $(tail -3 "$TMP/ow.err")"; exit 0; }
share_check labels_otel_writer "$out" query_id a b otelwriter
# trace_id/span_id of record a, in lower-case hex, on every query a sample
# and never on b's; tenant on every labelled sample. Samples taken before
# the agent read the key names carry the ids but no keys: one maps scan
# per 100 ms while the context is missing, plus a ring-buffer drain, so at
# most 0.2 s of each of the two workers at 999 Hz (400 samples).
tid=$(total "$out" -tagfocus=trace_id=abababababababababababababababab)
sid=$(total "$out" -tagfocus=span_id=cdcdcdcdcdcdcdcd)
ten=$(total "$out" -tagfocus=tenant=t1)
qa=$(total "$out" -tagfocus='query_id=^a$')
qall=$(total "$out" -tagfocus='query_id=.')
a_no_trace=$(total "$out" -tagfocus='query_id=^a$' -tagignore=trace_id=abababababababababababababababab)
b_with=$(pprof "$out" -tags -tagfocus='query_id=^b$' | grep -c 'trace_id:')
if [ "$tid" = "$sid" ] && [ "$a_no_trace" = 0 ] && [ "$b_with" = 0 ] &&
   [ $((tid - qa)) -le 400 ] && [ "$ten" = "$qall" ] && [ "$qa" -gt 0 ]; then
	pass labels_otel_trace
else
	fail labels_otel_trace "trace_id $tid, span_id $sid, query a $qa ($a_no_trace without trace), b with trace: $b_with; tenant $ten of $qall"
fi

out=$TMP/cl.pb.gz
"$TAGPROF" record -F 999 -o "$out" -- "$WORKLOADS/clwriter" 3 2>"$TMP/cl.err" ||
	{ fail labels_custom_writer "record: $(tail -3 "$TMP/cl.err")"; exit 0; }
share_check labels_custom_writer "$out" job alpha beta clwriter
