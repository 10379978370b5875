#!/usr/bin/env bash
# The two payload forms of the OTEP 4719 process context, from writers
# written from the public texts alone (issue 11, section 2):
#  - otep_resource_writer: a bare opentelemetry.proto.resource.v1.Resource
#    (what the 4719 text said before it wrapped it), service.name and the
#    OTEP 4947 threadlocal.* keys among its attributes; TLS slot local-exec
#    in the executable.
#  - otep_pc_writer: ProcessContext { Resource resource = 1; repeated
#    KeyValue attributes = 2 } (opentelemetry-proto 1.11, 4719 as merged),
#    service.name in the Resource, the threadlocal.* keys in field 2; TLS
#    slot in a shared library, reached through TLSDESC.
# Each spends 3/4 of its CPU time under one label set and 1/4 under the
# other, with key names of its own, so a key map not taken (every key
# "unknown") or taken wrongly shows.
. "$(dirname "$0")/../lib.sh"
need_bpf labels_otep_resource_share labels_otep_resource_ctx \
	labels_otep_pc_share labels_otep_pc_ctx labels_otep_service_name

# sets FILE K1 K2 A1 A2 B1 B2: "ALL A B" from the samples of FILE that
# carry K1 or K2 (the writer's two keys): ALL of them, A with exactly
# K1=A1 K2=A2, B with exactly K1=B1 K2=B2.
sets() {
	leaf_labels "$1" | awk -v k1="$2" -v k2="$3" -v a1="$4" -v a2="$5" \
		-v b1="$6" -v b2="$7" '{
		v1 = v2 = ""; any = 0
		for (i = 3; i <= NF; i++) {
			if (index($i, k1 "=") == 1) { v1 = substr($i, length(k1) + 2); any = 1 }
			if (index($i, k2 "=") == 1) { v2 = substr($i, length(k2) + 2); any = 1 }
		}
		if (!any) next
		all += $1
		if (v1 == a1 && v2 == a2) a += $1
		if (v1 == b1 && v2 == b2) b += $1
	} END { print all + 0, a + 0, b + 0 }'
}

# share_check NAME FILE K1 K2 A1 A2 B1 B2: set A has 75% of the samples
# carrying the writer's keys, set B the rest, and no sample has any other
# combination (a key map read wrongly or in the wrong order gives one).
# Each writer spins 3n iterations under A and n under B, n varied per
# round so that samples (0.5 ms apart per thread at 1999 Hz) do not lock
# onto the round's phase: independent draws, binomial, sd = sqrt(.75 *
# .25 / N), 0.7 points at N = 4000 (3 s of two threads, fewer on a busy
# machine). Bound: the issue's +-5 points, and 4 sd (lib.sh's near), at
# least 1000 samples so that 4 sd stays under 5.5 points.
share_check() {
	local name=$1 f=$2 all a b pa
	read -r all a b < <(sets "$f" "$3" "$4" "$5" "$6" "$7" "$8")
	pa=$(pct "$a" "$all")
	echo "$name: $all samples with $3 or $4; $3=$5,$4=$6 $pa%, $3=$7,$4=$8 $(pct "$b" "$all")% (want 75/25 +-5 and +-$(sd4 75 "$all"))" >&2
	if [ "$all" -ge 1000 ] && [ $((a + b)) = "$all" ] &&
	   within "$pa" 70 80 && near "$pa" 75 "$all"; then
		pass "$name"
	else
		fail "$name" "$a with $3=$5,$4=$6 and $b with $3=$7,$4=$8 of $all samples with $3 or $4 ($pa%, want 75 +-5 and +-$(sd4 75 "$all"); at least 1000, no other combination)"
	fi
}

# ctx_check NAME FILE: the profile's comments show the process context
# decoded (0 payloads refused, 0 malformed or "decoded as neither" form)
# and the key names known: "unknown key" counts attribute entries whose
# key index the agent could not name. A sample that names a key the agent
# lacks makes it read the process context again, unless its last read
# came after the sample; a read that must scan the maps (the context's
# place not yet known) waits 10 ms after the last one. So only samples
# decoded within 10 ms of such a scan that came just before the keys were
# published can have them: 40 samples of two workers at 1999 Hz, with 2
# entries each, 80 (0 measured); bound 160. A map not taken makes every
# entry unknown (2 per sample, thousands).
ctx_check() {
	local name=$1 f=$2 pc tc refused bad unknown
	pc=$(pprof "$f" -raw | grep '^Comment: # process context')
	tc=$(pprof "$f" -raw | grep '^Comment: # thread context')
	refused=$(grep -oE '[0-9]+ payloads refused' <<<"$pc" | cut -d' ' -f1)
	bad=$(grep -oE '[0-9]+ (malformed|decoded as neither)' <<<"$pc" | cut -d' ' -f1)
	unknown=$(grep -oE '[0-9]+ unknown key' <<<"$tc" | cut -d' ' -f1)
	echo "$name: ${pc#Comment: # }; ${unknown:-?} unknown key" >&2
	if [ "$refused" = 0 ] && [ "$bad" = 0 ] && [ -n "$unknown" ] &&
	   [ "$unknown" -le 160 ]; then
		pass "$name"
	else
		fail "$name" "refused ${refused:-?}, malformed/neither ${bad:-?}, unknown key ${unknown:-?} (want 0, 0, <= 160); ${pc#Comment: # }"
	fi
}

out=$TMP/res.pb.gz
if "$TAGPROF" record -F 1999 -o "$out" -- "$WORKLOADS/otep_resource_writer" 3 2>"$TMP/res.err"; then
	share_check labels_otep_resource_share "$out" stage region parse eu-west plan us-east
	ctx_check labels_otep_resource_ctx "$out"
else
	fail labels_otep_resource_share "record: $(tail -3 "$TMP/res.err")"
	fail labels_otep_resource_ctx "record: $(tail -3 "$TMP/res.err")"
fi

out=$TMP/pc.pb.gz
if "$TAGPROF" record -F 1999 -o "$out" -- "$WORKLOADS/otep_pc_writer" 3 2>"$TMP/pc.err"; then
	share_check labels_otep_pc_share "$out" shard phase s07 scan s11 merge
	ctx_check labels_otep_pc_ctx "$out"
else
	fail labels_otep_pc_share "record: $(tail -3 "$TMP/pc.err")"
	fail labels_otep_pc_ctx "record: $(tail -3 "$TMP/pc.err")"
fi

# service.name, from either form: the agent names each window's file after
# the process context's service.name (else the executable's name, which
# here has '_' where service.name has '-'). Both writers run beside a
# short agent, whose SIGTERM writes the partial window.
d=$TMP/agent
"$WORKLOADS/otep_resource_writer" 3 & w1=$!
"$WORKLOADS/otep_pc_writer" 3 & w2=$!
"$TAGPROF" agent --output-dir "$d" --window 60 -F 99 2>"$TMP/agent.err" & ag=$!
wait $w1 $w2
kill -TERM $ag; wait $ag; rc=$?
have=$(ls "$d" 2>/dev/null | grep -oE '_otep[-_a-z]*\.pb\.gz$' | sort | tr '\n' ' ')
echo "labels_otep_service_name: agent exit $rc, files: $have" >&2
if [ $rc = 0 ] && ls "$d"/*_otep-resource-writer.pb.gz >/dev/null 2>&1 &&
   ls "$d"/*_otep-pc-writer.pb.gz >/dev/null 2>&1; then
	pass labels_otep_service_name
else
	fail labels_otep_service_name "agent exit $rc; want files *_otep-resource-writer.pb.gz and *_otep-pc-writer.pb.gz, have: $have; log: $(tail -2 "$TMP/agent.err")"
fi
