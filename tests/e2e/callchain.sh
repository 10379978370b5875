#!/usr/bin/env bash
# A noinline chain main -> work -> {leaf_a, leaf_b} with 3:1 work: pprof must
# show both leaves under work with 75/25 of the workload's samples, within
# 4 sd of the sampling error.
. "$(dirname "$0")/../lib.sh"
need_bpf callchain_record callchain_pprof_clean callchain_shares callchain_under_work \
	callchain_stack_ids callchain_deep_walks_agree

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
# The bound is 4 binomial sd of a 75% share at this run's sample count
# (1.4 points at ~4000 samples, 2.7 at the floor of 1000): the work split
# is exact, so sampling is the only noise (seen 74.4-75.9%).
bound=$(sd4 75 "${all:-0}")
if [ "${all:-0}" -ge 1000 ] && near "$pa" 75 "$all" && near "$pb" 25 "$all"; then
	pass callchain_shares
else
	fail callchain_shares "leaf_a $pa%, leaf_b $pb% of $all samples (want 75/25 +-$bound)"
fi

# Every leaf sample must have main above it, and work between them. One
# leaf sample in 3001 once came without work (main still above it; not
# seen again in 16000): a sample at an instruction whose frame the
# frame-pointer walk and the word at the stack pointer both miss. That
# rare miss is allowed up to 1 in 1000 leaf samples; a chain that loses
# work for real loses it in most samples.
wa=$(flat "$out" leaf_a -focus='^work$' -tagfocus=process=callchain)
wb=$(flat "$out" leaf_b -focus='^work$' -tagfocus=process=callchain)
ma=$(cum "$out" main -tagfocus=process=callchain)
miss=$((a - wa + b - wb))
if [ $((a + b)) -gt 0 ] && [ $((miss * 1000)) -le $((a + b)) ] &&
   [ "$ma" -ge $((a + b)) ]; then
	pass callchain_under_work
else
	fail callchain_under_work "under work: leaf_a $wa/$a, leaf_b $wb/$b; main cum $ma"
fi

# The shares and chains above were read from a profile whose repeated
# stacks came as ids (TP_STACK_SEEN): the ids must be how most came, and
# none may have named a stack the agent was not sent.
line=$(pprof "$out" -comments | grep '^# samples:' || true)
got=$(sed -n 's/.*; \([0-9]*\) sent by BPF (\([0-9]*\) stacks sent as an id, [0-9]* kernel stacks sent as an id).*/\1 \2/p' <<<"$line")
unknown=$(sed -n 's/.* \([0-9]*\) with a stack id not received.*/\1/p' <<<"$line")
read -r sent ids <<<"${got:-0 0}"
if [ "${sent:-0}" -gt 0 ] && [ $((ids * 2)) -gt "$sent" ] && [ "${unknown:-x}" = 0 ]; then
	pass callchain_stack_ids
else
	fail callchain_stack_ids "want most of the samples sent as ids and none unknown: $line"
fi

# The user walk in BPF (page copies of the stack, several frames a step)
# gives what the kernel's own walk gives (TAGPROF_BPF_WALK=0): fixedwork's
# chain 120 deep (121 descend frames), whose stacks span pages and end below main in libc's
# __libc_start_call_main (124 frames, under the 127-frame cap; libc's
# frames below keep no frame pointer). Nearly every spin sample must have
# that one whole stack, the same both ways; a sample taken inside a call
# or return may miss a frame (the kernel's walk once gave 44 of 2,056
# other stacks, on a loaded machine: 97% is the bar, where a broken walk
# misses in most samples). --unwind fp: frame pointers alone (auto may
# mark the process for CFI, which goes on to _start).
deep_shape() {
	traces "$1" -tagfocus=process=fixedwork | awk '
		$2 ~ /^spin;/ { all += $1; n[$2] += $1 }
		END { for (s in n) if (n[s] > best) { best = n[s]; top = s }
		      printf "%d %d %s\n", best, all, top }'
}
shapes="" shape1=""
for walk in 1 0; do
	TAGPROF_BPF_WALK=$walk "$TAGPROF" record --unwind fp -F 999 -o "$TMP/deep$walk.pb.gz" \
		-- "$WORKLOADS/fixedwork" 1500 120 >/dev/null 2>"$TMP/deep$walk.err" ||
		shapes="$shapes walk=$walk-failed"
	read -r good all shape <<<"$(deep_shape "$TMP/deep$walk.pb.gz")"
	depth=$(awk -F';' '{ print NF }' <<<"$shape")
	echo "deep stacks, BPF walk $walk: $good of $all spin samples have the top stack, $depth frames: ${shape:0:40}...${shape: -40}" >&2
	[ "${all:-0}" -ge 500 ] && [ $((good * 100)) -ge $((all * 97)) ] &&
		[[ $shape == spin\;descend\;*\;descend\;main\;__libc_start_call_main ]] &&
		[ "$(grep -o "descend" <<<"$shape" | wc -l)" -eq 121 ] || {
		shapes="$shapes walk=$walk:$good/$all:$depth-frames"
		# the other stacks' shapes, for the log: samples, depth, ends
		traces "$TMP/deep$walk.pb.gz" -tagfocus=process=fixedwork |
			awk -v top="$shape" '$2 ~ /^spin;/ && $2 != top {
				n = split($2, f, ";")
				print "  other stack: " $1 " samples, " n " frames, " f[1] ";" f[2] "..." f[n - 1] ";" f[n]
			}' | sort -t' ' -k5 -rn | head -5 >&2
	}
	[ -z "$shape1" ] && shape1=$shape
	[ "$shape" = "$shape1" ] || shapes="$shapes walks-differ"
done
if [ -z "$shapes" ]; then
	pass callchain_deep_walks_agree
else
	fail callchain_deep_walks_agree "want >= 97% of >= 500 spin samples with spin, 121 descend, main, __libc_start_call_main both ways:$shapes"
fi
