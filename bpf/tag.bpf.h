/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Register tags: the value a process keeps in its declared register, read
 * from the thread's user registers (uregs.bpf.h): the sampled ones when the
 * sample interrupted user mode, the ones saved at kernel entry when it
 * interrupted the kernel working for the thread. */
#ifndef TAGPROF_TAG_BPF_H
#define TAGPROF_TAG_BPF_H

#include "uregs.bpf.h"

#if defined(__TARGET_ARCH_x86)

/* Picks the register among values loaded at constant offsets: the
 * verifier refuses ctx accesses at computed offsets, which a switch over
 * addresses would compile to. */
static __always_inline bool pick_tag(__u32 reg, __u64 bx, __u64 r12, __u64 r13,
				     __u64 r14, __u64 r15, __u64 *tag)
{
	switch (reg) {
	case TP_TAG_RBX: *tag = bx; return true;
	case TP_TAG_R12: *tag = r12; return true;
	case TP_TAG_R13: *tag = r13; return true;
	case TP_TAG_R14: *tag = r14; return true;
	case TP_TAG_R15: *tag = r15; return true;
	}
	return false;
}

static __always_inline bool read_tag(bpf_user_pt_regs_t *regs, __u32 reg,
				     __u64 *tag)
{
	struct uregs_at at;

	if (!find_user_regs(regs, &at))
		return false;
	return pick_tag(reg, USER_REG(&at, bx), USER_REG(&at, r12),
			USER_REG(&at, r13), USER_REG(&at, r14),
			USER_REG(&at, r15), tag);
}

#elif defined(__TARGET_ARCH_arm64)

static __always_inline bool read_tag(bpf_user_pt_regs_t *regs, __u32 reg,
				     __u64 *tag)
{
	struct uregs_at at;
	__u32 i = reg - TP_TAG_X19 + 19;

	if (reg < TP_TAG_X19 || reg > TP_TAG_X28 || i > 28)
		return false;
	if (!find_user_regs(regs, &at))
		return false;
	*tag = USER_REG(&at, regs[i]);
	return true;
}

#else
static __always_inline bool read_tag(bpf_user_pt_regs_t *regs, __u32 reg,
				     __u64 *tag)
{
	return false;
}
#endif

#endif
