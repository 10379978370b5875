#!/usr/bin/env bash
# Broken thread contexts must not crash the agent or lose samples: each
# sample stays, without labels (or with sanitized ones), and every failure
# is counted in the profile's comments.
. "$(dirname "$0")/../lib.sh"
need_bpf labels_bad_record labels_bad_samples_kept labels_bad_no_labels \
	labels_bad_utf8_replaced labels_bad_counted

out=$TMP/bad.pb.gz
if "$TAGPROF" record -F 999 -o "$out" -- "$WORKLOADS/badctx" 4 2>"$TMP/bad.err"; then
	pass labels_bad_record
else
	fail labels_bad_record "tagprof exited $?: $(tail -3 "$TMP/bad.err")"; exit 0
fi

# Six busy threads share the CPUs alike: none may fall below half of their
# mean (a dropped sample would), and together they have plenty.
kinds="unmapped invalid oversize unknown utf8 torn"
low="" sum=0
for k in $kinds; do
	n=$(total "$out" -tagfocus="thread_name=^bad_$k\$")
	echo "bad_$k: ${n:-0} samples" >&2
	eval "n_$k=${n:-0}"; sum=$((sum + ${n:-0}))
done
for k in $kinds; do
	eval "n=\$n_$k"
	[ $((n * 12)) -ge "$sum" ] || low="$low bad_$k=$n"
done
[ "$sum" -ge 600 ] || low="$low total=$sum"
if [ -z "$low" ]; then pass labels_bad_samples_kept
else fail labels_bad_samples_kept "too few samples:$low"; fi

# No label may come from a broken record (utf8 and torn may carry k0).
leaked=""
for k in unmapped invalid oversize unknown; do
	n=$(pprof "$out" -tags -tagfocus="thread_name=^bad_$k\$" | grep -cE '^ *(k0|k1):')
	[ "$n" -eq 0 ] || leaked="$leaked bad_$k"
done
if [ -z "$leaked" ]; then pass labels_bad_no_labels
else fail labels_bad_no_labels "labels from broken records on:$leaked"; fi

# The non-UTF-8 value arrives with U+FFFD in place of the bad bytes.
if pprof "$out" -tags -tagfocus='thread_name=^bad_utf8$' | grep -q $'ok\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\\.'; then
	pass labels_bad_utf8_replaced
else
	fail labels_bad_utf8_replaced "k0 of bad_utf8: $(pprof "$out" -tags -tagfocus='thread_name=^bad_utf8$' | grep -A2 'k0:' | tr '\n' ' ')"
fi

# Each kind of failure is counted.
c=$(pprof "$out" -raw | grep '^Comment: # thread context:')
echo "$c" >&2
num() { echo "$c" | grep -oE "[0-9]+ $1" | head -1 | cut -d' ' -f1; }
missing=""
for what in "record unreadable" "invalid record" "oversize record" "unknown key" "invalid UTF-8"; do
	[ "$(num "$what")" -gt 0 ] 2>/dev/null || missing="$missing '$what'"
done
if [ -z "$missing" ]; then pass labels_bad_counted
else fail labels_bad_counted "not counted:$missing in: $c"; fi
