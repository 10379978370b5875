#!/usr/bin/env bash
# A syscall-heavy workload shows kernel frames, joined to its user stack,
# in the right order.
. "$(dirname "$0")/../lib.sh"
need_bpf kernel_frames_named kernel_frames_joined kernel_frames_order kernel_frames_ids

out=$TMP/k.pb.gz
"$TAGPROF" record -F 999 -o "$out" -- "$WORKLOADS/syscalls" 3 2>"$TMP/rec.err" ||
	{ fail kernel_frames_named "record failed: $(tail -3 "$TMP/rec.err")"; exit 0; }

all=$(total "$out")
sys=$(cum "$out" do_syscall_64)
pw=$(pct "$sys" "$all")
echo "kernel_frames: $all samples, do_syscall_64 cum $sys ($pw%)" >&2
top=$(pprof "$out" -top -nodecount=30)
if within "$pw" 30 100 && echo "$top" | grep -qE 'ksys_write|vfs_write|__x64_sys_write|write_null|__x64_sys_getppid'; then
	pass kernel_frames_named
else
	fail kernel_frames_named "do_syscall_64 in $pw% of samples; top: $(echo "$top" | tail -8 | tr '\n' '|')"
fi

# Samples in the kernel must still lead back to the user function.
joined=$(cum "$out" syscall_loop -focus='^do_syscall_64$')
if [ "$joined" -ge $((sys * 9 / 10)) ] && [ "$sys" -gt 0 ]; then
	pass kernel_frames_joined
else
	fail kernel_frames_joined "only $joined of $sys syscall samples reach syscall_loop"
fi

# Order, stack by stack (-traces, leaf first): in a syscall's stack the
# kernel's entry (entry_SYSCALL_64*) is the outermost kernel frame, right
# above the user frame that issued the syscall (raw_syscall3, inlined in
# syscall_loop), and never the leaf. Kernel frames written in reverse put
# the entry at the leaf and the kernel leaf (vfs_write...) next to user
# code, while every count above stays the same. Structural, not
# statistical: the sampler stops only where interrupts are on, which the
# entry code is not, so no exception is allowed; 100 syscall samples (a
# twentieth of an idle machine's) are plenty, as reversal moves every one.
read -r ksamp entry_ok entry_leaf bad < <(traces "$out" | awk '
	{
		st = substr($0, index($0, " ") + 1)	# frames may hold spaces
		n = split(st, fr, ";"); u = 0
		for (i = 1; i <= n; i++)
			if (fr[i] ~ /^(raw_syscall3|syscall_loop)/) { u = i; break }
		# not the loop (a sanitized build exits through LSan, which
		# makes syscalls of its own), or no kernel frames
		if (u < 2) next
		k = 0
		for (i = 1; i < u; i++) if (fr[i] ~ /^(entry_SYSCALL_64|do_syscall_64$)/) k = 1
		if (!k) next			# an interrupt or a fault, not a syscall
		ks += $1
		if (fr[u - 1] ~ /^entry_SYSCALL_64/ && fr[u] ~ /^raw_syscall3|^syscall_loop$/)
			ok += $1
		else if (!bad) bad = st
		if (fr[1] ~ /^entry_SYSCALL_64/) leaf += $1
	}
	END { print ks + 0, ok + 0, leaf + 0, (bad ? bad : "-") }')
echo "kernel_frames: $ksamp syscall samples, entry next to the user caller in $entry_ok, entry at the leaf in $entry_leaf" >&2
if [ "$ksamp" -ge 100 ] && [ "$entry_ok" -eq "$ksamp" ] && [ "$entry_leaf" -eq 0 ]; then
	pass kernel_frames_order
else
	fail kernel_frames_order "of $ksamp syscall samples (want >= 100), $entry_ok have entry_SYSCALL_64 right above raw_syscall3/syscall_loop (want all), $entry_leaf have it at the leaf (want 0); first bad stack: $bad"
fi

# The stacks above came with their kernel frames named by an id of their
# own (bpf/stackid.bpf.h): a few syscall paths under one user stack, so
# after the first of each, nearly every kernel stack goes as an id, and
# none names a stack the agent was not sent. Counted from the profile's
# comment on samples; a kernel stack that went whole every time (its id
# never remembered) leaves this count at 0.
line=$(pprof "$out" -comments | grep '^# samples:' || true)
kids=$(sed -n 's/.*stacks sent as an id, \([0-9]*\) kernel stacks sent as an id.*/\1/p' <<<"$line")
unknown=$(sed -n 's/.* \([0-9]*\) with a stack id not received.*/\1/p' <<<"$line")
echo "kernel_frames: ${kids:-?} kernel stacks sent as an id, of $sys syscall samples" >&2
if [ "$sys" -gt 0 ] && [ "${kids:-0}" -ge $((sys / 2)) ] && [ "${unknown:-x}" = 0 ]; then
	pass kernel_frames_ids
else
	fail kernel_frames_ids "want at least half of $sys syscall samples' kernel stacks sent as ids and none unknown: $line"
fi
