#!/usr/bin/env bash
# Issue 10, cases 2 and 3: an ordinary user (uid 65534) deletes the
# executable it runs and puts at its path, and at "PATH (deleted)" (the name
# /proc/PID/maps shows), a FIFO, a symbolic link to a file only root may
# read, or a copy of a large binary that it cuts to 0 bytes 2 s later.
# tagprof must neither hang on the FIFO nor open what the link points at nor
# die of SIGBUS on the cut file: `record -a` ends on time with exit 0 and a
# readable profile, and `tagprof agent` keeps writing windows and stops on
# SIGTERM. As root, binaries are read through /proc/PID/map_files (the
# mapped file itself); as an unprivileged user with the systemd unit's
# capabilities except CAP_CHECKPOINT_RESTORE (ambient CAP_BPF, CAP_PERFMON,
# CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH), map_files is refused and the paths
# are tried: there the profile's comments must count each refusal.
. "$(dirname "$0")/../lib.sh"
CHECKS="attack_files_record attack_files_record_named attack_files_unprivileged
attack_files_refusals_counted attack_files_agent"
need_bpf $CHECKS
DUR=3
AGENT_UID=64000		# no passwd entry needed; owns nothing the attacker does
CAPS=+bpf,+perfmon,+sys_ptrace,+dac_read_search

# The attackers' frames that tagprof could not name stay unnamed, and
# pprof would then look for their binaries at the planted paths itself
# (opening the link's target): what is checked here is what tagprof
# touches, so pprof never symbolizes.
pprof() {
	local f=$1; shift
	go tool pprof -symbolize=none "$@" "$f" 2>"$TMP/pprof.err"
}
# comments FILE: the profile's counter lines ('# ' comments), without '# '.
comments() { pprof "$1" -raw | sed -n 's/^Comment: # //p'; }
# count FILE TEXT: the number before TEXT in the comments (0 if absent).
count() {
	comments "$1" | grep -o "[0-9]* $2" | head -1 | awk '{ print $1 + 0 }' |
		grep . || echo 0
}
now() { date +%s.%N; }
# on_time START LIMIT: true when less than LIMIT seconds passed since START.
on_time() { awk -v s="$1" -v e="$(now)" -v l="$2" 'BEGIN { exit !(e - s < l) }'; }

dir=$(attacker_dir att)
secret=$TMP/secret
echo "root only" >"$secret"
chmod 600 "$secret"
# An access time older than a day: relatime updates it on any read.
touch -a -d 2001-01-01 "$secret"
atime0=$(stat -c %X "$secret")

# start_attacks SECONDS: the three attackers, each from its own copy.
start_attacks() {
	local mode
	pids=()
	for mode in fifo symlink copy; do
		rm -f "$dir/af_$mode" "$dir/af_$mode (deleted)" "$dir/af_$mode.out"
		cp "$WORKLOADS/attack_files" "$dir/af_$mode"
		chown $ATTACKER_UID "$dir/af_$mode"
		case $mode in
		symlink) arg=$secret ;;
		copy) arg=$TAGPROF ;;
		*) arg= ;;
		esac
		as_attacker "$dir/af_$mode" $mode "$1" $arg >"$TMP/af_$mode.out" 2>&1 &
		pids+=($!)
	done
	# Until each has planted its file (it prints "ready").
	for mode in fifo symlink copy; do
		for _ in $(seq 50); do
			grep -q ready "$TMP/af_$mode.out" 2>/dev/null && break
			sleep 0.1
		done
	done
}
stop_attacks() {
	kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
}
# untouched: the FIFO had no reader and the link's target was not read.
untouched() {
	! grep -q "fifo opened" "$TMP/af_fifo.out" &&
		[ "$(stat -c %X "$secret")" = "$atime0" ]
}
why_touched() {
	echo "fifo: $(tr '\n' ' ' <"$TMP/af_fifo.out"), secret atime $(stat -c %X "$secret") (was $atime0)"
}

# 1. record -a as root, while the attacks run (the copy is cut during it).
start_attacks 30
t0=$(now)
timeout -k 2 $((DUR + 20)) "$TAGPROF" record -a -d $DUR -o "$TMP/root.pb.gz" 2>"$TMP/root.err"
rc=$?
if [ $rc -eq 0 ] && on_time "$t0" $((DUR + 2)) && pprof "$TMP/root.pb.gz" -raw >/dev/null &&
   untouched; then
	pass attack_files_record
else
	fail attack_files_record "rc=$rc after $(awk -v s="$t0" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }') s; $(why_touched); $(tail -2 "$TMP/root.err")"
fi
# The deleted binaries are the attackers' own, read through map_files: their
# spin functions are named although nothing at their paths is that file.
named=0
for mode in fifo symlink copy; do
	n=$(pprof "$TMP/root.pb.gz" -top -nodecount=1000000 -tagfocus=process=af_$mode 2>/dev/null |
		grep -c ' spin[0-9]*$')
	[ "$n" -gt 0 ] && named=$((named + 1))
done
if [ "$named" -eq 3 ] && [ "$(count "$TMP/root.pb.gz" "through /proc/PID/map_files")" -gt 0 ]; then
	pass attack_files_record_named
else
	fail attack_files_record_named "$named of 3 attackers' functions named; $(comments "$TMP/root.pb.gz" | grep 'target files')"
fi

# 2. record -a as the unprivileged agent user: no map_files, so the planted
# paths are tried, and each kind of refusal is counted.
out=$(attacker_dir agentout)
chown $AGENT_UID "$out"
t0=$(now)
timeout -k 2 $((DUR + 20)) setpriv --reuid=$AGENT_UID --regid=$AGENT_UID --clear-groups \
	--inh-caps=$CAPS --ambient-caps=$CAPS \
	"$TAGPROF" record -a -d $DUR -o "$out/user.pb.gz" 2>"$TMP/user.err"
rc=$?
if [ $rc -eq 0 ] && on_time "$t0" $((DUR + 2)) && pprof "$out/user.pb.gz" -raw >/dev/null &&
   untouched; then
	pass attack_files_unprivileged
else
	fail attack_files_unprivileged "rc=$rc; $(why_touched); $(tail -2 "$TMP/user.err")"
fi
f=$out/user.pb.gz
if [ "$(count "$f" "times not permitted")" -gt 0 ] &&
   [ "$(count "$f" "symbolic links")" -gt 0 ] &&
   [ "$(count "$f" "not regular files")" -gt 0 ] &&
   [ "$(count "$f" "not the mapped file")" -gt 0 ]; then
	pass attack_files_refusals_counted
else
	fail attack_files_refusals_counted "$(comments "$f" | grep 'target files')"
fi
stop_attacks

# 3. The agent, 2 s windows, through fresh attacks (the copy is cut while
# it runs): windows keep coming, and SIGTERM ends it at once with exit 0.
start_attacks 9
"$TAGPROF" agent --output-dir "$TMP/agent" --window 2 -F 99 2>"$TMP/agent.err" &
ag=$!
sleep 8
t0=$(now)
kill -TERM $ag
wait $ag
rc=$?
stop_attacks
n=$(ls "$TMP/agent" 2>/dev/null | grep -c '\.pb\.gz$')
windows=$(ls "$TMP/agent" 2>/dev/null | sed 's/_.*//' | sort -u | grep -c .)
if [ $rc -eq 0 ] && on_time "$t0" 2 && [ "$windows" -ge 3 ] && untouched; then
	pass attack_files_agent
else
	fail attack_files_agent "rc=$rc, $n files in $windows windows; $(why_touched); $(tail -2 "$TMP/agent.err")"
fi
