#!/usr/bin/env bash
# The product's core promise: a 4-worker pool runs 1-20 us tasks for three
# queries weighing 50/30/20, attaching a label set per task with libtagprof.
# Recorded 10 s at 999 Hz, each query's share (go tool pprof -tagfocus) must
# be within 3 points, for each way of linking libtagprof.
. "$(dirname "$0")/../lib.sh"
need_bpf labels_pool_shared labels_pool_pie labels_pool_nopie labels_pool_dlopen
LIB=$PWD/${BUILD:-build}/libtagprof.so

for v in shared pie nopie dlopen; do
	name=labels_pool_$v
	out=$TMP/$v.pb.gz
	if ! "$TAGPROF" record -F 999 -o "$out" -- "$WORKLOADS/labelpool_$v" 10 "$LIB" \
		2>"$TMP/$v.err"; then
		fail $name "record: $(tail -3 "$TMP/$v.err")"; continue
	fi
	all=$(total "$out" -tagfocus=process=labelpool)
	lab=$(total "$out" -tagfocus=query_id=.)
	ten=$(total "$out" -tagfocus=tenant=acme)
	why=""
	for q in q1:50 q2:30 q3:20; do
		n=$(total "$out" -tagfocus="query_id=^${q%:*}\$")
		p=$(pct "$n" "$lab")
		within "$p" $((${q#*:} - 3)) $((${q#*:} + 3)) || why="$why ${q%:*}=$p%"
		echo "$name: ${q%:*} $n samples, $p% (want ${q#*:})" >&2
	done
	# Labelled share of the pool's samples: every task is labelled; the
	# dlopen variant runs its first second (plus discovery) without.
	min=90; [ $v = dlopen ] && min=60
	lp=$(pct "$lab" "$all")
	echo "$name: $lab of $all samples labelled ($lp%)" >&2
	within "$lp" $min 100 || why="$why labelled=$lp%<$min%"
	[ "$ten" = "$lab" ] || why="$why tenant on $ten of $lab"
	if [ -z "$why" ]; then pass $name; else fail $name "$why"; fi
done
