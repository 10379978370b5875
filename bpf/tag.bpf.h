/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Register tags: the value a process keeps in its declared register, read
 * from the sampled registers when the sample interrupted user mode (with
 * PEBS, the precise registers the kernel took from the PEBS record), or
 * from the user registers saved at kernel entry when it interrupted the
 * kernel working for the thread. */
#ifndef TAGPROF_TAG_BPF_H
#define TAGPROF_TAG_BPF_H

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

static __always_inline bool read_tag(struct bpf_perf_event_data *ctx,
				     __u32 reg, __u64 *tag)
{
	struct pt_regs *user;
	/* The ctx allows only whole 8-byte register loads; cs is a 16-bit
	 * member of that slot in newer kernels. */
	__u64 cs = *(volatile __u64 *)&ctx->regs.cs;

#define CTX_REG(f) (*(volatile __u64 *)&ctx->regs.f)	/* kept as is */
	if (cs & 3)			/* interrupted user mode */
		return pick_tag(reg, CTX_REG(bx), CTX_REG(r12), CTX_REG(r13),
				CTX_REG(r14), CTX_REG(r15), tag);
#undef CTX_REG
	user = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!user)
		return false;
	return pick_tag(reg, BPF_CORE_READ(user, bx), BPF_CORE_READ(user, r12),
			BPF_CORE_READ(user, r13), BPF_CORE_READ(user, r14),
			BPF_CORE_READ(user, r15), tag);
}

#elif defined(__TARGET_ARCH_arm64)

static __always_inline bool read_tag(struct bpf_perf_event_data *ctx,
				     __u32 reg, __u64 *tag)
{
	struct pt_regs *user;
	__u32 i = reg - TP_TAG_X19 + 19;

	if (reg < TP_TAG_X19 || reg > TP_TAG_X28 || i > 28)
		return false;
	if ((ctx->regs.pstate & 0xf) == 0) {	/* EL0: user mode */
		*tag = ctx->regs.regs[i];
		return true;
	}
	user = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!user)
		return false;
	*tag = BPF_CORE_READ(user, regs[i]);
	return true;
}

#else
static __always_inline bool read_tag(struct bpf_perf_event_data *ctx,
				     __u32 reg, __u64 *tag)
{
	return false;
}
#endif

#endif
