#!/usr/bin/env bash
# Issue 15, case 2: a stripped binary of an ordinary user whose
# .gnu_debuglink names a path out of the debug directories
# (../../../../../../../etc/shadow: objcopy writes a file name, the name is
# then rewritten inside the ELF). Profiled by `record -a -d 2`, it must be
# refused unopened and counted ("debuglinks naming a path"), on time.
. "$(dirname "$0")/../lib.sh"
need_bpf hostile_debuglink_time hostile_debuglink_counted
[ -x "$WORKLOADS/symspin" ] || { echo "SKIP hostile_debuglink: no workload"; exit 0; }
command -v objcopy >/dev/null || { echo "SKIP hostile_debuglink: no objcopy"; exit 0; }

dir=$(attacker_dir dl)
name=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.debug	# as long as the path
target=../../../../../../../../etc/shadow
objcopy --only-keep-debug "$WORKLOADS/symspin" "$dir/$name"
strip --strip-all -o "$dir/spin_dl" "$WORKLOADS/symspin"
(cd "$dir" && objcopy --add-gnu-debuglink="$name" spin_dl) || { fail hostile_debuglink_counted "objcopy failed"; exit 0; }
py "$dir/spin_dl" "$name" "$target" <<'PY' || { fail hostile_debuglink_counted "rename failed"; exit 0; }
import sys
path, old, new = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
b = bytearray(open(path, "rb").read())
i = b.find(old + b"\0")
assert i > 0 and len(new) <= len(old)
b[i:i + len(old)] = new + b"\0" * (len(old) - len(new))
open(path, "wb").write(b)
PY
readelf -p .gnu_debuglink "$dir/spin_dl" | grep -q 'etc/shadow' || { fail hostile_debuglink_counted "no path in the debuglink"; exit 0; }
chown -R $ATTACKER_UID "$dir"; chmod 755 "$dir/spin_dl"
as_attacker "$dir/spin_dl" 30 >/dev/null 2>&1 &
sleep 0.3
/usr/bin/time -f '%e %M' -o "$TMP/time" timeout -s KILL 30 \
	"$TAGPROF" record -a -d 2 -F 199 -o "$TMP/r.pb.gz" 2>"$TMP/r.err"
rc=$?
read -r secs rss < <(tail -1 "$TMP/time")
kill $(pgrep -u $ATTACKER_UID -x spin_dl) 2>/dev/null; wait
echo "hostile_debuglink: record -d 2: exit $rc in $secs s, peak RSS $rss KiB (load $(cut -d' ' -f1 /proc/loadavg))"
if [ $rc -eq 0 ] && on_time "$secs" 10; then
	pass hostile_debuglink_time
else
	fail hostile_debuglink_time "exit $rc in $secs s: $(tail -2 "$TMP/r.err")"
fi
n=$(pprof "$TMP/r.pb.gz" -raw | grep '^Comment: # debug info' | grep -o '[0-9]* debuglinks naming a path' | cut -d' ' -f1)
if [ "${n:-0}" -ge 1 ]; then
	pass hostile_debuglink_counted
else
	fail hostile_debuglink_counted "${n:-no} debuglinks naming a path counted: $(pprof "$TMP/r.pb.gz" -raw | grep '^Comment: # debug info')"
fi
