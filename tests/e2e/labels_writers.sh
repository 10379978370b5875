#!/usr/bin/env bash
# Thread context from writers that do not use libtagprof: one written from
# the OTEP 4947/4719 texts alone, and a custom-labels v1 writer. Both must
# come out as pprof labels in the right proportions (3:1), and each sample
# with the labels of its own moment: each record's work runs in its own
# function, whose samples must carry that record's labels.
. "$(dirname "$0")/../lib.sh"
need_bpf labels_otel_writer labels_otel_own_moment labels_otel_trace \
	labels_otel_schema_final labels_otel_schema_other \
	labels_custom_writer labels_custom_own_moment

# stats FILE KEY...: per stack leaf and values of the KEYs, "COUNT LEAF
# VALUES" summed in FILE.stats, VALUES the KEYs' values joined with ","
# ("-" when the sample has none of them). Leaves and labels are read once,
# into FILE.leaves.
stats() {
	local f=$1; shift
	[ -f "$f.leaves" ] || leaf_labels "$f" >"$f.leaves"
	awk -v keys="$*" '{
		nk = split(keys, k, " "); v = ""; any = 0
		for (j = 1; j <= nk; j++) {
			x = ""
			for (i = 3; i <= NF; i++)
				if (index($i, k[j] "=") == 1) { x = substr($i, length(k[j]) + 2); any = 1 }
			v = v (j > 1 ? "," : "") x
		}
		c[$2 " " (any ? v : "-")] += $1
	} END { for (x in c) print c[x], x }' "$f.leaves" >"$f.stats"
}

# count FILE LEAF VALUE: the samples with that leaf ("*": any) and value
# ("*": any, "-": none, "+": any but none).
count() {
	awk -v l="$2" -v v="$3" '(l == "*" || $2 == l) &&
		(v == "*" || $3 == v || (v == "+" && $3 != "-")) { s += $1 }
		END { print s + 0 }' "$1.stats"
}

# share_check NAME FILE BIG SMALL: BIG and SMALL take 75/25 of the samples
# carrying the key. Each 100 us task is BIG's with odds 3 in 4, drawn at
# random (three_in_four), so a sample (0.5 ms, five tasks, apart on a
# thread at 1999 Hz) is an independent draw: binomial, sd = sqrt(.75 *
# .25 / n), 0.7 points at 4000 samples (3 s of one or two threads; fewer
# on a busy machine). Bound: 4 sd, and at least 1000 samples. (A fixed
# 300/100 us alternation aliased with the sample period: 77.2% once.)
share_check() {
	local all big small pb tol
	all=$(count "$2" '*' +)
	big=$(count "$2" '*' "$3")
	small=$(count "$2" '*' "$4")
	pb=$(pct "$big" "$all")
	tol=$(sd4 75 "$all")
	echo "$1: $all samples with the key, $3 $pb%, $4 $(pct "$small" "$all")% (want 75/25 +-$tol)" >&2
	if [ "$all" -ge 1000 ] && [ $((big + small)) = "$all" ] &&
	   near "$pb" 75 "$all"; then
		pass "$1"
	else
		fail "$1" "$3 $big, $4 $small of $all samples ($pb%, want 75 +-$tol; at least 1000)"
	fi
}

# own_moment NAME FILE FUNC VALUE FUNC VALUE: the samples of each FUNC
# that carry the key carry its VALUE. The record is current for the whole
# call, so expected 100%, no sampling error; the bound 99% leaves room for
# nothing we know of. Labels from another moment (the thread's previous
# sample, say) give other labels on a third or more of them. Samples
# without the key (before the agent found the context or key names)
# count in neither.
own_moment() {
	local name=$1 f=$2 why="" ok n c
	shift 2
	while [ $# -gt 0 ]; do
		ok=$(count "$f" "$1" "$2")
		n=$(count "$f" "$1" +)
		c=$(pct "$ok" "$n")
		echo "$name: $1: $ok of $n samples with the key carry $2 ($c%), $(count "$f" "$1" -) without" >&2
		if [ "$n" -lt 200 ] || ! within "$c" 99 100; then
			why="$why $1: $ok of $n with $2 ($c%)"
		fi
		shift 2
	done
	if [ -z "$why" ]; then pass "$name"; else fail "$name" "$why"; fi
}

out=$TMP/ow.pb.gz
if "$TAGPROF" record -F 1999 -o "$out" -- "$WORKLOADS/otelwriter" 3 2>"$TMP/ow.err"; then
	stats "$out" query_id
	share_check labels_otel_writer "$out" q1 q10
	own_moment labels_otel_own_moment "$out" spin_q1 q1 spin_q10 q10
	# trace_id/span_id of record q1, in lower-case hex (bytes 00..0f and
	# 10..17, so their order shows), on every sample of spin_q1 that has
	# any context (those before the agent found the TLS location have
	# none, as the labelled-share checks allow: 24 of 4761 seen) and never
	# on spin_q10's; tenant on every sample with a query_id. Samples taken
	# before the agent read the key names carry the ids but no keys: one
	# maps scan per 100 ms while the context is missing, plus a
	# ring-buffer drain, so at most 0.2 s of each of the two workers at
	# 1999 Hz (800 samples; 30-60 seen).
	read -r q1_ids q1_all q10_ids keyless tenant qall < <(awk '
		{ t = s = q = ten = 0
		  for (i = 3; i <= NF; i++) {
			if ($i == "trace_id=000102030405060708090a0b0c0d0e0f") t = 1
			if ($i == "span_id=1011121314151617") s = 1
			if ($i ~ /^query_id=/) q = 1
			if ($i == "tenant=t1") ten = 1
		  }
		  if ($2 == "spin_q1" && (q || t || s)) { a += $1; if (t && s) ai += $1 }
		  if ($2 == "spin_q10" && (t || s)) bi += $1
		  if ((t || s) && !q) kl += $1
		  if (ten) tn += $1
		  if (q) qa += $1 }
		END { print ai + 0, a + 0, bi + 0, kl + 0, tn + 0, qa + 0 }' "$out.leaves")
	echo "labels_otel_trace: spin_q1 $q1_ids of $q1_all with both ids, spin_q10 $q10_ids with one; $keyless with ids but no keys; tenant on $tenant of $qall" >&2
	if [ "$q1_ids" = "$q1_all" ] && [ "$q1_all" -gt 0 ] && [ "$q10_ids" = 0 ] &&
	   [ "$keyless" -le 800 ] && [ "$tenant" = "$qall" ]; then
		pass labels_otel_trace
	else
		fail labels_otel_trace "spin_q1: $q1_ids of $q1_all with trace_id and span_id, spin_q10: $q10_ids with one; $keyless with ids but no keys; tenant on $tenant of $qall"
	fi
else
	for n in writer own_moment trace; do
		fail labels_otel_$n "record: $(tail -3 "$TMP/ow.err")"
	done
fi

# threadlocal.schema_version: OTEP 4947's layout is read under the name its
# text uses now (tlsdesc_v1_dev, the default above) and the one it gives
# the final layout (tls_v1); a process that names another layout (Go's
# go_pprof_labels_v1) is not read as OTEP 4947 records, and is counted.
# schema SCHEMA: records otelwriter publishing SCHEMA for 2 s; prints the
# samples with a query_id, with a trace_id, and the summary's count.
schema() {
	local f=$TMP/schema_$1.pb.gz
	OTELWRITER_SCHEMA=$1 "$TAGPROF" record -F 999 -o "$f" -- \
		"$WORKLOADS/otelwriter" 2 2>"$TMP/schema_$1.err" || { echo "- - -"; return; }
	echo "$(total "$f" -tagfocus=query_id=.) $(total "$f" -tagfocus=trace_id=.)" \
		"$(grep -oE '[0-9]+ unknown schema' "$TMP/schema_$1.err" | cut -d' ' -f1)"
}
# Two workers on 2 s at 999 Hz give ~4000 samples, about 3/4 of them with
# a query_id; at least 1000 of them. The other layout: no key read at all;
# trace ids only from samples taken before the agent read the schema (at
# most 0.2 s of the two workers: 400, as for labels_otel_trace).
read -r q t n < <(schema tls_v1)
echo "labels_otel_schema_final: tls_v1: $q samples with query_id, $t with trace_id, ${n:-?} unknown schema" >&2
if [ "$q" -ge 1000 ] 2>/dev/null && [ "$n" = 0 ]; then
	pass labels_otel_schema_final
else
	fail labels_otel_schema_final "tls_v1: $q samples with a query_id (want >= 1000), ${n:-no} unknown schema (want 0)"
fi
read -r q t n < <(schema go_pprof_labels_v1)
echo "labels_otel_schema_other: go_pprof_labels_v1: $q samples with query_id, $t with trace_id, ${n:-?} unknown schema" >&2
# Sanitized, LeakSanitizer's check at exit clones a tracer process that
# shares the writer's memory, schema included: sampled, it is a second
# process with that schema (as in tags_only.sh).
if [ "$q" = 0 ] && [ "$t" -le 400 ] 2>/dev/null &&
   { [ "$n" = 1 ] || { [ -n "${SANITIZE:-}" ] && [ "$n" = 2 ]; }; }; then
	pass labels_otel_schema_other
else
	fail labels_otel_schema_other "go_pprof_labels_v1: $q samples with a query_id (want 0), $t with a trace_id (want <= 400), ${n:-no} unknown schema (want 1)"
fi

out=$TMP/cl.pb.gz
if "$TAGPROF" record -F 1999 -o "$out" -- "$WORKLOADS/clwriter" 3 2>"$TMP/cl.err"; then
	stats "$out" job
	share_check labels_custom_writer "$out" alpha beta
	# Both labels of a set: job, and via (the other set's job value
	# under another key of the same length).
	stats "$out" job via
	own_moment labels_custom_own_moment "$out" spin_alpha alpha,beta \
		spin_beta beta,alpha
else
	for n in writer own_moment; do
		fail labels_custom_$n "record: $(tail -3 "$TMP/cl.err")"
	done
fi
