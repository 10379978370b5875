#!/usr/bin/env bash
# Issue 15, case 1: hostile /tmp/perf-PID.map files. Five JIT processes of
# an ordinary user (jitmap none: JIT code, no map of its own) each get one
# where their map goes: a symbolic link to a root-only file that names
# their code, a link to /dev/zero, a FIFO, a sparse 2 GiB file, and a map
# naming their code that another user owns (perf refuses those too). One
# `record -a -d 2` beside them must end on time (a FIFO opened for reading
# would block it), stay small (/dev/zero or the 2 GiB file read would not),
# name nothing from those files, and count each refusal.
. "$(dirname "$0")/../lib.sh"
need_bpf hostile_perfmap_time hostile_perfmap_rss hostile_perfmap_names \
	hostile_perfmap_counted
[ -x "$WORKLOADS/jitmap" ] || { echo "SKIP hostile_perfmap: no workload"; exit 0; }
[ "$(uname -m)" = x86_64 ] || { echo "SKIP hostile_perfmap: x86-64 JIT"; exit 0; }

OTHER_UID=65533			# another ordinary user
CASES="link_secret link_zero fifo sparse other_user"
dir=$(attacker_dir perfmap)
pids=""
maps=""
for c in $CASES; do
	as_attacker "$WORKLOADS/jitmap" 60 none >"$dir/$c.out" 2>&1 &
done
for c in $CASES; do
	for _ in $(seq 50); do
		grep -q '^jitmap: pid' "$dir/$c.out" && break
		sleep 0.1
	done
	read -r pid start size < <(sed -n 's/^jitmap: pid \([0-9]*\), code \([0-9a-f]*\) \([0-9a-f]*\)/\1 \2 \3/p' "$dir/$c.out")
	[ -n "$pid" ] || { fail hostile_perfmap_time "jitmap $c did not start: $(cat "$dir/$c.out")"; exit 0; }
	pids="$pids $pid"
	m=/tmp/perf-$pid.map
	maps="$maps $m"
	case $c in
	link_secret)	# root-only, names the code: followed, it would show
		printf '%s %s SECRET_root_only_name\n' "$start" "$size" >"$TMP/secret"
		chmod 600 "$TMP/secret"
		as_attacker ln -s "$TMP/secret" "$m" ;;
	link_zero)	as_attacker ln -s /dev/zero "$m" ;;
	fifo)		as_attacker mkfifo "$m" ;;
	sparse)		as_attacker truncate -s 2G "$m" ;;
	other_user)
		printf '%s %s OTHER_users_name\n' "$start" "$size" >"$m"
		chown $OTHER_UID:$OTHER_UID "$m" ;;
	esac
done

bounded_record -v
kill $pids 2>/dev/null; wait
rm -f $maps
grep "start-up" "$TMP/r.err"
check_bounded hostile_perfmap
jit=$(total "$TMP/r.pb.gz" -tagfocus='process=^jitmap$')
leaked=$(pprof "$TMP/r.pb.gz" -raw | grep -c 'SECRET_root_only_name\|OTHER_users_name')
if [ "$jit" -gt 0 ] && [ "$leaked" -eq 0 ]; then
	pass hostile_perfmap_names
else
	fail hostile_perfmap_names "$jit jitmap samples (want > 0), $leaked names from the planted files"
fi
line=$(pprof "$TMP/r.pb.gz" -raw | grep -o 'JIT perf maps:[^;]*' | head -1)
refused=$(echo "$line" | sed -n 's/.* \([0-9]*\) refused (not a regular.*/\1/p')
over=$(echo "$line" | sed -n 's/.* \([0-9]*\) not read over the memory budget.*/\1/p')
echo "hostile_perfmap: $line"
# link_secret, link_zero, fifo, other_user refused; sparse over the budget
if [ "${refused:-0}" -ge 4 ] && [ "${over:-0}" -ge 1 ]; then
	pass hostile_perfmap_counted
else
	fail hostile_perfmap_counted "refused ${refused:-?} (want 4), over the budget ${over:-?} (want 1): $line"
fi
