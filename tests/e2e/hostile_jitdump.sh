#!/usr/bin/env bash
# Issue 15, case 1: hostile jitdumps (found through the process's mapping of
# jit-PID.dump, so no link or FIFO can stand there: the kernel mapped a
# regular file). Two JIT processes of an ordinary user (jitdump_map):
#   sparse: a valid dump naming its code (sparse_jit_name) extended to
#           2 GiB by a hole: read up to the size limit, counted
#   other:  a dump naming its code (OTHER_users_jit_name) that another user
#           wrote and owns, mapped as it is: refused, counted, its name
#           never shown
# One `record -a -d 2` beside them ends on time, with a bounded RSS.
. "$(dirname "$0")/../lib.sh"
need_bpf hostile_jitdump_time hostile_jitdump_rss hostile_jitdump_sparse \
	hostile_jitdump_other
[ -x "$WORKLOADS/jitdump_map" ] || { echo "SKIP hostile_jitdump: no workload"; exit 0; }
[ "$(uname -m)" = x86_64 ] || { echo "SKIP hostile_jitdump: x86-64 JIT"; exit 0; }
JW=$(dirname "$0")/../jitdump_write.py
OTHER_UID=65533

dir=$(attacker_dir jit)
python3 "$JW" "$TMP/sparse.dump" --name sparse_jit_name --src "$TMP/x.ir" ||
	{ fail hostile_jitdump_time "jitdump_write.py failed"; exit 0; }
chmod 644 "$TMP/sparse.dump"
as_attacker "$WORKLOADS/jitdump_map" --dir "$dir" --sparse 2147483648 \
	"$TMP/sparse.dump" 60 >"$TMP/sparse.out" 2>&1 &
as_attacker "$WORKLOADS/jitdump_map" --dir "$dir" --existing - 60 \
	>"$TMP/other.out" 2>&1 &
for _ in $(seq 50); do
	pid=$(sed -n 's/^jitdump_map: pid \([0-9]*\)/\1/p' "$TMP/other.out")
	[ -n "$pid" ] && break
	sleep 0.1
done
[ -n "$pid" ] || { fail hostile_jitdump_time "jitdump_map --existing: $(cat "$TMP/other.out")"; exit 0; }
python3 "$JW" "$dir/tmp.dump" --name OTHER_users_jit_name --src "$TMP/x.ir" --pid "$pid"
chown $OTHER_UID:$OTHER_UID "$dir/tmp.dump"; chmod 644 "$dir/tmp.dump"
mv "$dir/tmp.dump" "$dir/jit-$pid.dump"
for _ in $(seq 50); do	# both mapped
	[ "$(grep -l 'jit-[0-9]*\.dump' /proc/$pid/maps $(pgrep -u $ATTACKER_UID -x jitdump_map | sed 's|.*|/proc/&/maps|') 2>/dev/null | wc -l)" -ge 2 ] && break
	sleep 0.1
done

bounded_record
kill $(pgrep -u $ATTACKER_UID -x jitdump_map) 2>/dev/null; wait
check_bounded hostile_jitdump
line=$(pprof "$TMP/r.pb.gz" -raw | grep -o 'jitdumps: [^;]*' | head -1)
echo "hostile_jitdump: $line"
trunc=$(echo "$line" | sed -n 's/.* \([0-9]*\) over the size or count limits.*/\1/p')
refused=$(echo "$line" | sed -n 's/.* \([0-9]*\) refused (not a regular.*/\1/p')
named=$(flat "$TMP/r.pb.gz" sparse_jit_name)
if [ "${trunc:-0}" -ge 1 ] && [ "$named" -gt 0 ]; then
	pass hostile_jitdump_sparse
else
	fail hostile_jitdump_sparse "${trunc:-?} over the size limit (want 1), $named samples named sparse_jit_name (want > 0): $line"
fi
leaked=$(pprof "$TMP/r.pb.gz" -raw | grep -c OTHER_users_jit_name)
other=$(py "$TMP/r.pb.gz" "$pid" <<'PY'
import sys, pprof_read
p = pprof_read.load(sys.argv[1])
pid = int(sys.argv[2])
print(sum(1 for s in p.samples
          if s.labels.get("pid") in (pid, str(pid)) or
          (isinstance(s.labels.get("pid"), tuple) and s.labels["pid"][0] == pid)))
PY
)
if [ "${refused:-0}" -ge 1 ] && [ "$leaked" -eq 0 ] && [ "$other" -gt 0 ]; then
	pass hostile_jitdump_other
else
	fail hostile_jitdump_other "${refused:-?} refused (want 1), $leaked names from the other user's dump (want 0), $other samples of pid $pid (want > 0): $line"
fi
rm -f "$dir"/jit-*.dump
