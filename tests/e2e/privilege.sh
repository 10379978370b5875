#!/usr/bin/env bash
# Privileges (README, "Privileges"): after start-up the agent and record
# keep only what reading processes needs; a helper thread keeps nothing;
# the agent still names a process started after the drop; without the
# capabilities to start, one clear line and a non-zero exit.
. "$(dirname "$0")/../lib.sh"
need_bpf privilege_agent_sets privilege_agent_threads privilege_agent_names_new \
	privilege_record_sets privilege_unprivileged privilege_no_bpf

# Capability bits (linux/capability.h).
CAP_DAC_OVERRIDE=1 CAP_DAC_READ_SEARCH=2 CAP_SYS_PTRACE=19 CAP_BPF=39
CAP_CHECKPOINT_RESTORE=40
bit() { printf '%016x' $((1 << $1)); }
or() { local v=0; for b in "$@"; do v=$((v | (1 << b))); done; printf '%016x' $v; }

# What stays: reading other processes (CAP_SYS_PTRACE), their files
# (CAP_DAC_READ_SEARCH), /proc/PID/map_files (CAP_CHECKPOINT_RESTORE); and
# CAP_BPF before Linux 6.5 when unprivileged BPF is disabled, where every
# bpf() call on an open map needs it. Worked out here from the kernel
# version, independently of the agent's own probe.
want_bits="$CAP_DAC_READ_SEARCH $CAP_SYS_PTRACE $CAP_CHECKPOINT_RESTORE"
kv=$(uname -r | awk -F'[.-]' '{ printf "%d", $1 * 1000 + $2 }')
if [ "$kv" -lt 6005 ] && [ "$(cat /proc/sys/kernel/unprivileged_bpf_disabled)" != 0 ]; then
	want_bits="$want_bits $CAP_BPF"
fi
want=$(or $want_bits)

# field PID NAME: a field of /proc/PID/status.
field() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
# sets PID: "eff prm bnd inh amb nnp" of the process.
sets() {
	echo "$(field "$1" CapEff) $(field "$1" CapPrm) $(field "$1" CapBnd)" \
	     "$(field "$1" CapInh) $(field "$1" CapAmb) $(field "$1" NoNewPrivs)"
}
# wait_log FILE PATTERN: up to 20 s for PATTERN in FILE.
wait_log() {
	for _ in $(seq 200); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# 1. The agent's sets, once it said it dropped. DEBUGINFOD_URLS starts the
# debuginfod worker (nothing listens there: it never fetches), a thread
# started before the drop: it must hold nothing.
out=$TMP/a
DEBUGINFOD_URLS=http://127.0.0.1:9 "$TAGPROF" agent --output-dir "$out" --window 2 -F 99 \
	2>"$TMP/a.err" &
ag=$!
got="" threads="" ok=""
if wait_log "$TMP/a.err" 'capabilities kept after start-up'; then
	got=$(sets $ag)
	for t in /proc/$ag/task/*; do
		tid=${t##*/}
		[ "$tid" = "$ag" ] && continue
		threads="$threads $(awk '$1 == "Name:" { n = $2 } $1 == "CapEff:" { e = $2 } $1 == "CapPrm:" { p = $2 } END { print n "=" e "/" p }' "$t/status")"
	done
else
	ok="no drop logged"
fi
expect="$want $want $want 0000000000000000 0000000000000000 1"
echo "privilege_agent_sets: eff prm bnd inh amb nnp = $got; want $expect" >&2
if [ -z "$ok" ] && [ "$got" = "$expect" ]; then
	pass privilege_agent_sets
else
	fail privilege_agent_sets "${ok:-got $got, want $expect}; log: $(tail -2 "$TMP/a.err" | tr '\n' ' ')"
fi
# Every other thread: none at all (the worker parses what a server sends);
# a thread started after the drop would inherit the kept set, no more.
bad="" nthreads=0
for t in $threads; do
	nthreads=$((nthreads + 1))
	caps=${t#*=}
	case $t in
	debuginfod*) [ "$caps" = "0000000000000000/0000000000000000" ] || bad="$bad $t" ;;
	*) [ "$caps" = "$want/$want" ] || [ "$caps" = "0000000000000000/0000000000000000" ] ||
		bad="$bad $t" ;;
	esac
done
echo "privilege_agent_threads: other threads:$threads" >&2
if [ -z "$ok" ] && grep -q debuginfod <<<"$threads" && [ -z "$bad" ]; then
	pass privilege_agent_threads
else
	fail privilege_agent_threads "${ok:-threads (name=eff/prm):$threads; over their due:$bad}"
fi

# 2. A process started after the drop, as root with every capability: its
# maps and memory take CAP_SYS_PTRACE (a tracer must hold every
# capability the process holds, or that one), its binary one of the
# others. The agent still names its functions.
# Two more of another user (nobody), each needing one of the other two:
# a binary in a 0700 directory, deleted once it runs, is reachable only
# through /proc/PID/map_files (CAP_CHECKPOINT_RESTORE); a JIT's perf map
# of mode 0600 (umask 077) only past file permissions
# (CAP_DAC_READ_SEARCH).
chmod 711 "$TMP"
home=$TMP/home
mkdir -m 700 "$home" && cp "$WORKLOADS/callchain" "$home/privchain" &&
	chown -R nobody:nogroup "$home"
asnobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all "$@"; }
# They run on past the agent's stop: it reads a process's maps when it
# resolves its samples, and on a machine this loaded that may be seconds
# after they were taken; a process gone by then goes unnamed whatever the
# agent may read.
"$WORKLOADS/callchain" 10 >/dev/null &
wl=$!
asnobody "$home/privchain" 10 >/dev/null &
wl2=$!
(umask 077; exec setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
	"$WORKLOADS/jitmap" 10 >/dev/null 2>&1) &
wl3=$!
sleep 0.5
rm -f "$home/privchain"
pm=$(stat -c '%a %U' "/tmp/perf-$wl3.map" 2>/dev/null)
sleep 3.5
kill -TERM $ag 2>/dev/null; wait $ag; rc=$?
kill $wl $wl2 $wl3 2>/dev/null	# setpriv execs: these are the workloads
wait $wl $wl2 $wl3 2>/dev/null
rm -f "/tmp/perf-$wl3.map"	# killed, jitmap leaves it
# named SERVICE FUNC...: "N T": samples of the FUNCs (flat) and all
# samples in the agent's files of SERVICE.
named() {
	local n=0 t=0 f svc=$1
	shift
	for f in "$out"/*_"$svc".pb.gz; do
		[ -e "$f" ] || continue
		n=$((n + $(pprof "$f" -top -noinlines -nodecount=1000000 -nodefraction=0 \
			-sample_index=samples | awk -v fns="$(printf '%s\n' "$@")" '
			BEGIN { split(fns, a, "\n"); for (i in a) want[a[i]] = 1 }
			{ s = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", s) }
			s in want { n += $1 } END { print n + 0 }')))
		t=$((t + $(total "$f")))
	done
	echo "$n $t"
}
# most N T: T >= 3 samples, and N at least half of them. Unnamed, N is 0;
# a machine this busy may give a process few samples, hence the fraction.
most() { [ "$2" -ge 3 ] && [ $((2 * $1)) -ge "$2" ]; }
root_n=$(named callchain leaf_a leaf_b)
deleted_n=$(named privchain leaf_a leaf_b)
jit_n=$(named jitmap 'jit spin loop [tagprof test]')
echo "privilege_agent_names_new: named/all samples of processes started after the drop: $root_n (root callchain), $deleted_n (nobody, deleted binary in a 0700 directory), $jit_n (nobody JIT, 0600 perf map; modes: $pm)" >&2
if [ $rc -eq 0 ] && most $root_n && most $deleted_n && most $jit_n; then
	pass privilege_agent_names_new
else
	fail privilege_agent_names_new "rc=$rc, named/all: root $root_n, nobody deleted $deleted_n, JIT $jit_n (want >= 3 samples, half named); log: $(tail -3 "$TMP/a.err" | tr '\n' ' ')"
fi

# 3. record: the same set (its output directory, owned by root, needs no
# CAP_DAC_OVERRIDE), read while its command runs.
"$TAGPROF" record -v -o "$TMP/r.pb.gz" -- sleep 3 2>"$TMP/r.err" &
rec=$!
got="" ok=""
wait_log "$TMP/r.err" 'capabilities kept after start-up' && got=$(sets $rec) || ok="no drop logged"
wait $rec; rc=$?
echo "privilege_record_sets: eff prm bnd inh amb nnp = $got; want $expect" >&2
if [ -z "$ok" ] && [ $rc -eq 0 ] && [ "$got" = "$expect" ] && [ -s "$TMP/r.pb.gz" ]; then
	pass privilege_record_sets
else
	fail privilege_record_sets "${ok:-got $got, want $expect}, rc=$rc; log: $(grep -v '^tagprof: debug' "$TMP/r.err" | tail -2 | tr '\n' ' ')"
fi

# 4. No capabilities at all (a non-root user): one line that says what is
# missing and how to grant it, and a non-zero exit; for both commands.
mkdir -p "$TMP/np" && chmod 777 "$TMP/np"
ok=""
for cmd in "record -o $TMP/np/r.pb.gz -- true" "agent --output-dir $TMP/np/out"; do
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
		"$TAGPROF" $cmd >"$TMP/np.out" 2>"$TMP/np.err"
	rc=$?
	lines=$(grep -c . "$TMP/np.err")
	echo "privilege_unprivileged: ${cmd%% *}: exit $rc, $lines line(s): $(cat "$TMP/np.err")" >&2
	if [ $rc -eq 0 ] || [ "$lines" -ne 1 ] || [ -s "$TMP/np.out" ] ||
	   ! grep -q 'CAP_BPF' "$TMP/np.err"; then
		ok="$ok ${cmd%% *}: exit $rc, $lines lines: $(head -3 "$TMP/np.err" | tr '\n' ' ');"
	fi
done
if [ -z "$ok" ]; then pass privilege_unprivileged; else fail privilege_unprivileged "$ok"; fi

# Root without CAP_BPF (and CAP_SYS_ADMIN, which stands for it): the line
# names just that capability.
setpriv --bounding-set=-bpf,-sys_admin "$TAGPROF" record -o "$TMP/nb.pb.gz" -- true 2>"$TMP/nb.err"
rc=$?
if [ $rc -ne 0 ] && [ "$(grep -c . "$TMP/nb.err")" -eq 1 ] &&
   grep -q 'missing CAP_BPF:' "$TMP/nb.err"; then
	pass privilege_no_bpf
else
	fail privilege_no_bpf "exit $rc: $(head -3 "$TMP/nb.err" | tr '\n' ' ')"
fi
