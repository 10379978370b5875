/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the agent needs to unwind a user stack without frame pointers: the
 * user registers CFI starts from (the interrupted ones when the sample hit
 * user mode, else the ones saved at kernel entry), the 8 bytes at the user
 * stack pointer (a frameless leaf's return address, sent with every
 * sample), and, when asked for, a copy of the top of the user stack. */
#ifndef TAGPROF_USTACK_BPF_H
#define TAGPROF_USTACK_BPF_H

#include "uregs.bpf.h"

/* `auto` copies the stacks of processes the agent marked, plus one sample
 * in PROBE_EVERY of the others (one in PROBE_EVERY_YOUNG for processes
 * started less than YOUNG_NS ago, so that a short program is classified
 * within its first samples): the agent compares CFI with the frame
 * pointers on those and marks a process when CFI finds frames they miss. */
#define PROBE_EVERY		64
#define PROBE_EVERY_YOUNG	8
#define YOUNG_NS		(2ull * 1000 * 1000 * 1000)

#if defined(__TARGET_ARCH_x86)
#define HAVE_USTACK 1

/* Fills r with the user registers CFI starts from. False if those cannot
 * be read. */
static __always_inline bool read_uregs(bpf_user_pt_regs_t *regs,
				       struct tp_uregs *r)
{
	struct uregs_at at;

	if (!find_user_regs(regs, &at))
		return false;
	r->ip = USER_REG(&at, ip);
	r->sp = USER_REG(&at, sp);
	r->bp = USER_REG(&at, bp);
	r->bx = USER_REG(&at, bx);
	r->r12 = USER_REG(&at, r12);
	r->r13 = USER_REG(&at, r13);
	r->r14 = USER_REG(&at, r14);
	r->r15 = USER_REG(&at, r15);
	/* Saved registers without a stack pointer are no user's. */
	return !at.saved || r->sp != 0;
}

/* Just the user stack pointer, for the samples that copy nothing. */
static __always_inline __u64 read_usp(bpf_user_pt_regs_t *regs)
{
	struct uregs_at at;

	return find_user_regs(regs, &at) ? USER_REG(&at, sp) : 0;
}

/* Copies up to want (<= TP_STACK_MAX, a multiple of 8) bytes of user stack
 * from sp into dst. Near the top of a stack fewer bytes are mapped, and a
 * read fails whole: then the first unmapped page above sp is found with
 * one-byte probes (at most TP_STACK_MAX / page size of them) and what lies
 * below it is read. (Looking the mapping's end up first with bpf_find_vma
 * costs more: about 0.7 us a sample here, against 0.4 us for a failed read
 * and the probes, paid only near the top of a stack.) Returns the bytes
 * copied (a multiple of 8), 0 if none; *is_short tells that the stack
 * ended first. */
static __always_inline __u32 read_ustack(__u64 sp, __u8 *dst, __u32 want,
					 bool *is_short)
{
	__u64 end;
	__u32 have;
	__u8 b;

	*is_short = false;
	if (want > TP_STACK_MAX)
		want = TP_STACK_MAX;
	want &= ~7u;
	if (!want)
		return 0;
	if (!bpf_probe_read_user(dst, want, (void *)sp))
		return want;
	*is_short = true;
	end = (sp | (TP_PAGE_SIZE - 1)) + 1;	/* end of sp's page */
	for (int i = 0; i < TP_STACK_MAX / TP_PAGE_SIZE; i++) {
		if (end - sp >= want)
			break;
		if (bpf_probe_read_user(&b, 1, (void *)end))
			break;
		end += TP_PAGE_SIZE;
	}
	have = end - sp >= want ? want : (__u32)(end - sp);
	have &= ~7u;
	if (have > TP_STACK_MAX)	/* cannot happen; bounds it */
		return 0;
	if (!have || bpf_probe_read_user(dst, have, (void *)sp))
		return 0;
	return have;
}

#else
#define HAVE_USTACK 0
#endif

#endif
