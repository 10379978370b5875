#!/usr/bin/env bash
# Issue 15: a binary of an ordinary user whose .eh_frame names register
# 264,050,040 (DW_CFA_undefined, in the FDE of the function it spins in).
# libdw grew its register array to that number: before the CFI was checked
# (src/unwind/cficheck.c), a 2-second `record --unwind dwarf` of it took
# 16 s and 4 GB. Profiled by `record -a -d 2 --unwind dwarf` (every sample
# copies its stack, which libdw unwinds), the binary's CFI must be refused,
# counted ("binaries with CFI refused"), on time and within 256 MiB.
. "$(dirname "$0")/../lib.sh"
need_bpf hostile_cfi_time hostile_cfi_rss hostile_cfi_counted
command -v gcc >/dev/null || { echo "SKIP hostile_cfi: no gcc"; exit 0; }

dir=$(attacker_dir cfi)
cat >"$dir/spin.s" <<'ASM'
	.text
	.globl spin_bad
	.type spin_bad, @function
spin_bad:
	.cfi_startproc
	.cfi_undefined 264050040
	push %rbx
	.cfi_def_cfa_offset 16
	mov %rdi, %rbx
1:	dec %rbx
	jnz 1b
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size spin_bad, .-spin_bad
	.section .note.GNU-stack,"",@progbits
ASM
cat >"$dir/main.c" <<'C'
#include <stdlib.h>
#include <time.h>
void spin_bad(long n);
int main(int argc, char **argv)
{
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 3);

	while (time(NULL) < end)
		spin_bad(10000000);
	return 0;
}
C
if ! gcc -O2 -fomit-frame-pointer -o "$dir/spin_cfi" "$dir/main.c" "$dir/spin.s" 2>"$TMP/gcc.err"; then
	fail hostile_cfi_counted "gcc: $(tail -2 "$TMP/gcc.err")"
	exit 0
fi
readelf -wf "$dir/spin_cfi" | grep -q 'bad register: r264050040' ||
	{ fail hostile_cfi_counted "the register is not in the binary's CFI"; exit 0; }
chown -R $ATTACKER_UID "$dir"; chmod 755 "$dir/spin_cfi"
as_attacker "$dir/spin_cfi" 30 >/dev/null 2>&1 &
sleep 0.3
bounded_record --unwind dwarf
kill $(pgrep -u $ATTACKER_UID -x spin_cfi) 2>/dev/null; wait
check_bounded hostile_cfi
n=$(pprof "$TMP/r.pb.gz" -raw | grep '^Comment: # target files' | grep -o '[0-9]* binaries with CFI refused' | cut -d' ' -f1)
if [ "${n:-0}" -ge 1 ]; then
	pass hostile_cfi_counted
else
	fail hostile_cfi_counted "${n:-no} binaries with CFI refused counted: $(pprof "$TMP/r.pb.gz" -raw | grep '^Comment: # target files')"
fi
