#!/usr/bin/env bash
# A syscall-heavy workload shows kernel frames, joined to its user stack.
. "$(dirname "$0")/../lib.sh"
need_bpf kernel_frames_named kernel_frames_joined

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
