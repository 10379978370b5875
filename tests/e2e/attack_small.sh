#!/usr/bin/env bash
# Issue 10, case 5: the smaller holes. An output directory others could
# write (their files must not make retention delete ours), a --config or
# --push-auth-file that is another user's symlink to a root-only secret,
# and signals that would end `record` or `agent` and lose the profile.
. "$(dirname "$0")/../lib.sh"
need_bpf attack_outdir_shared attack_outdir_planted attack_config_symlink \
	attack_auth_symlink attack_config_no_echo attack_signals_agent \
	attack_signals_agent_stop attack_signals_record \
	attack_signals_record_stop attack_signals_child

files() { ls "$1" 2>/dev/null | grep -c '\.pb\.gz$'; }
# newest DIR SERVICE: the newest profile name of SERVICE in DIR.
newest() { ls "$1" 2>/dev/null | grep "_$2\.pb\.gz\$" | sort | tail -1; }
# wait_file DIR SERVICE: until SERVICE has a profile in DIR (at most 15 s).
wait_file() {
	for _ in $(seq 150); do [ -n "$(newest "$1" "$2")" ] && return 0; sleep 0.1; done
	return 1
}
# own DIR: profiles in DIR owned by root (the agent).
own() { find "$1" -maxdepth 1 -type f -user 0 -name '*.pb.gz' 2>/dev/null | wc -l; }
atime() { stat -c %X "$1"; }

# 1. An output directory others may write, sticky or not, or one the
# attacker owns, is refused at start, before anything is profiled.
adir=$(attacker_dir out_theirs)
mkdir -p "$TMP/out_1777" "$TMP/out_0770"
chmod 1777 "$TMP/out_1777"; chmod 0770 "$TMP/out_0770"
why=""
for d in "$TMP/out_1777" "$TMP/out_0770" "$adir"; do
	timeout 10 "$TAGPROF" agent --output-dir "$d" --window 1 2>"$TMP/shared.err"
	rc=$?
	[ $rc -eq 1 ] && grep -q 'refusing output-dir' "$TMP/shared.err" ||
		why="$why $(basename "$d"):rc=$rc($(head -c 200 "$TMP/shared.err"))"
	[ "$(files "$d")" -eq 0 ] || why="$why $(basename "$d"):wrote"
done
if [ -z "$why" ]; then pass attack_outdir_shared; else fail attack_outdir_shared "$why"; fi

# 2. Files the attacker planted while the directory was writable: profile
# names dated in the future (they sort last, so on the old code retention
# deleted the agent's newest profiles for them), a symlink with such a
# name, and a temporary file's name. None is counted or deleted; the
# agent's own newest profiles survive.
out=$TMP/planted
chmod 711 "$TMP"	# the attacker may pass through, not list
mkdir -p "$out"; chmod 0777 "$out"
as_attacker sh -c "cd '$out' &&
	echo x >99991231T235959Z_evil.pb.gz &&
	echo x >99991231T235958Z_evil.pb.gz &&
	echo x >30000101T000000Z_callchain.pb.gz &&
	echo x >.99991231T235959Z_evil.pb.gz.AbC123 &&
	ln -s /etc/passwd 99991231T235957Z_link.pb.gz"
planted=$(ls -A "$out" | wc -l)
chmod 0755 "$out"
"$WORKLOADS/callchain" 7 >/dev/null &
wl=$!
"$TAGPROF" agent --output-dir "$out" --window 1 -F 99 --retain-files 3 2>"$TMP/planted.err" &
ag=$!
sleep 5
kill -TERM $ag; wait $ag; rc=$?
kill $wl 2>/dev/null; wait $wl 2>/dev/null
left=$(find "$out" -maxdepth 1 -user $ATTACKER_UID | wc -l)
mine=$(own "$out")
newest=$(find "$out" -maxdepth 1 -type f -user 0 -name '*.pb.gz' | sort | tail -1)
why=""
[ $rc -eq 0 ] || why="$why rc=$rc"
[ "$planted" -eq 5 ] && [ "$left" -eq 5 ] || why="$why planted=$planted left=$left"
# Retention runs after each window's files: at most 3 of ours, and some.
[ "$mine" -ge 1 ] && [ "$mine" -le 5 ] || why="$why own=$mine"
if [ -n "$newest" ] && pprof "$newest" -raw >/dev/null; then :; else why="$why unreadable:$newest"; fi
# The newest own file is from the last window, not an older one (its
# start is a second or two before SIGTERM; 5 s leaves room for a slow stop).
last=$(basename "$newest" | cut -c1-15)
[ -n "$last" ] && [ $(( $(date -u +%s) - $(date -u -d "${last:0:8} ${last:9:2}:${last:11:2}:${last:13:2}" +%s) )) -le 5 ] ||
	why="$why newest=$(basename "$newest")"
if [ -z "$why" ]; then pass attack_outdir_planted; else fail attack_outdir_planted "$why; $(ls -lA "$out" | head -12 | tr '\n' ' ')"; fi

# 3. --config and --push-auth-file as the attacker's symlinks to a file
# only root can read: refused, the secret not in any message, and never
# read (its access time stays at 2000, which relatime would move on any
# read as it is older than a day).
secret=$TMP/secret
printf 'root:S3CRET-hash-x:19000:0:99999:7:::\n' >"$secret"
chmod 0600 "$secret"
touch -a -d '2000-01-01 00:00:00' "$secret"
t0=$(atime "$secret")
sdir=$(attacker_dir links)
as_attacker ln -s "$secret" "$sdir/agent.conf"
as_attacker ln -s "$secret" "$sdir/auth"
# refused NAME RC PATTERN TAGPROF-ARGS...: the agent exits RC saying PATTERN,
# without the secret in its output and without reading it.
refused() {
	local name=$1 want=$2 pat=$3 rc why=""
	shift 3
	timeout 10 "$TAGPROF" agent "$@" >"$TMP/$name.out" 2>&1
	rc=$?
	[ $rc -eq "$want" ] || why="$why rc=$rc"
	grep -q "$pat" "$TMP/$name.out" || why="$why msg"
	grep -q 'S3CRET' "$TMP/$name.out" && why="$why secret-shown"
	[ "$(atime "$secret")" = "$t0" ] || why="$why secret-read"
	if [ -z "$why" ]; then pass "$name"; else fail "$name" "$why: $(head -c 300 "$TMP/$name.out")"; fi
}
refused attack_config_symlink 2 'symlink owned by uid 65534' \
	--config "$sdir/agent.conf" --check-config
refused attack_auth_symlink 1 'push auth file.*symlink owned by uid 65534' \
	--output-dir "$TMP/auth_out" --window 1 --push-url http://127.0.0.1:9 \
	--push-auth-file "$sdir/auth"

# A file root owns and can read but that is no config (root's own symlink,
# or its name typed by mistake): the error gives the line number and what
# was expected, never the line.
timeout 10 "$TAGPROF" agent --config "$secret" --check-config >"$TMP/ce.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "$secret:1: missing '=' after the key" "$TMP/ce.out" &&
	! grep -q 'S3CRET\|root' "$TMP/ce.out"; then
	pass attack_config_no_echo
else
	fail attack_config_no_echo "rc=$rc: $(head -c 300 "$TMP/ce.out")"
fi

# 4. Signals that would end the process by default, sent to a running agent
# (as root: no other user may signal it): ignored, windows go on, and
# SIGTERM afterwards still writes the last window and exits 0. SIGXCPU
# (the soft CPU limit, before the hard limit's SIGKILL) ends it like
# SIGTERM.
IGNORED="USR1 USR2 PIPE ALRM VTALRM PROF IO STKFLT PWR XFSZ"
for i in $(seq 0 $(( $(kill -l RTMAX) - $(kill -l RTMIN) ))); do
	IGNORED="$IGNORED RTMIN+$i"
done
send_all() { for s in $IGNORED; do kill -s "$s" "$1" 2>/dev/null || return 1; done; }

out=$TMP/sig
"$WORKLOADS/callchain" 9 >/dev/null &
wl=$!
"$TAGPROF" agent --output-dir "$out" --window 1 -F 99 2>"$TMP/sig.err" &
ag=$!
wait_file "$out" callchain
send_all $ag; sent=$?
sleep 0.2
before=$(newest "$out" callchain)
send_all $ag || sent=1
sleep 2.5
alive=0; kill -0 $ag 2>/dev/null && alive=1
after=$(newest "$out" callchain)
n1=$(files "$out")
kill -TERM $ag; wait $ag; rc=$?
kill $wl 2>/dev/null; wait $wl 2>/dev/null
n2=$(files "$out")
last=$(newest "$out" callchain)
if [ $sent -eq 0 ] && [ $alive -eq 1 ] && [ $rc -eq 0 ] && [ -n "$before" ] &&
	[ "$after" \> "$before" ] && [ "$n2" -gt "$n1" ] && pprof "$out/$last" -raw >/dev/null; then
	pass attack_signals_agent
else
	fail attack_signals_agent "sent=$sent alive=$alive rc=$rc before=$before after=$after files $n1 -> $n2"
fi

# A busy workload, so that the window SIGXCPU ends has samples to write:
# an idle machine gives a system-wide capture none, and an empty window
# writes no file.
"$WORKLOADS/callchain" 4 >/dev/null & wl=$!
"$TAGPROF" agent --output-dir "$TMP/sigx" --window 60 -F 99 2>/dev/null &
ag=$!
sleep 1.5
start=$(date +%s)
kill -XCPU $ag; wait $ag; rc=$?
took=$(( $(date +%s) - start ))
kill $wl 2>/dev/null; wait $wl 2>/dev/null
if [ $rc -eq 0 ] && [ $took -le 2 ] && [ "$(files "$TMP/sigx")" -ge 1 ]; then
	pass attack_signals_agent_stop
else
	fail attack_signals_agent_stop "rc=$rc took=${took}s files=$(files "$TMP/sigx")"
fi

# 5. The same for `record -a -d 4`: the ignored signals change nothing (it
# ends on time, exit 0, a readable profile); SIGHUP and SIGXCPU stop it
# early with the file written, like SIGTERM.
"$WORKLOADS/callchain" 6 >/dev/null &
wl=$!
start=$(date +%s)
"$TAGPROF" record -a -d 4 -F 99 -o "$TMP/rec.pb.gz" 2>"$TMP/rec.err" &
rec=$!
sleep 1.5
send_all $rec; sent=$?
wait $rec; rc=$?
took=$(( $(date +%s) - start ))
kill $wl 2>/dev/null; wait $wl 2>/dev/null
if [ $sent -eq 0 ] && [ $rc -eq 0 ] && [ $took -ge 4 ] && [ $took -le 6 ] &&
	[ "$(cum "$TMP/rec.pb.gz" main)" -gt 0 ]; then
	pass attack_signals_record
else
	fail attack_signals_record "sent=$sent rc=$rc took=${took}s; $(tail -2 "$TMP/rec.err")"
fi

why=""
for s in HUP XCPU; do
	"$TAGPROF" record -a -d 60 -F 99 -o "$TMP/rec_$s.pb.gz" 2>/dev/null &
	rec=$!
	sleep 1.5
	start=$(date +%s)
	kill -s $s $rec; wait $rec; rc=$?
	took=$(( $(date +%s) - start ))
	[ $rc -eq 0 ] && [ $took -le 2 ] && pprof "$TMP/rec_$s.pb.gz" -raw >/dev/null ||
		why="$why $s:rc=$rc,took=${took}s"
done
if [ -z "$why" ]; then pass attack_signals_record_stop; else fail attack_signals_record_stop "$why"; fi

# 6. `record -- COMMAND`: COMMAND gets the dispositions tagprof was started
# with, not the ones tagprof ignores.
direct=$(grep '^SigIgn' /proc/self/status)
viarec=$("$TAGPROF" record -o "$TMP/child.pb.gz" -- grep '^SigIgn' /proc/self/status 2>/dev/null)
if [ -n "$direct" ] && [ "$direct" = "$viarec" ]; then
	pass attack_signals_child
else
	fail attack_signals_child "direct '$direct', under record '$viarec'"
fi
