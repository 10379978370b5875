/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The sampled thread's user-mode registers, found in one place for all who
 * read them (the register tag, the registers CFI starts from, the user
 * stack pointer): the registers the program was handed when they are the
 * user's (a sample that interrupted user mode; with PEBS, the precise ones
 * the kernel took from the PEBS record), else those saved at kernel entry,
 * when the sample interrupted the kernel working for the thread. */
#ifndef TAGPROF_UREGS_BPF_H
#define TAGPROF_UREGS_BPF_H

#if defined(__TARGET_ARCH_x86) || defined(__TARGET_ARCH_arm64)

/* Where find_user_regs found them. */
struct uregs_at {
	bpf_user_pt_regs_t *regs;	/* the program's: the user's own if no saved */
	struct pt_regs *saved;		/* else the user's, saved at kernel entry */
};

#if defined(__TARGET_ARCH_x86)
/* The ctx allows only whole 8-byte register loads at constant offsets (cs
 * is a 16-bit member of its slot in newer kernels): named members, loaded
 * as they are. */
#define CTX_REG(regs, f)	(*(volatile __u64 *)&(regs)->f)

static __always_inline bool in_user_mode(bpf_user_pt_regs_t *regs)
{
	return CTX_REG(regs, cs) & 3;
}
#else
#define CTX_REG(regs, f)	((regs)->f)

static __always_inline bool in_user_mode(bpf_user_pt_regs_t *regs)
{
	return (regs->pstate & 0xf) == 0;	/* EL0 */
}
#endif

/* regs: the program's registers (a perf_event or probe context starts
 * with them). False when the sample interrupted the kernel and the saved
 * user registers cannot be had. */
static __always_inline bool find_user_regs(bpf_user_pt_regs_t *regs,
					   struct uregs_at *at)
{
	at->regs = regs;
	at->saved = NULL;
	if (in_user_mode(regs))
		return true;
	at->saved = (struct pt_regs *)bpf_task_pt_regs(
		bpf_get_current_task_btf());
	return at->saved != NULL;
}

/* User register f, from where find_user_regs found them. The saved
 * pointer is taken out first: inside BPF_CORE_READ, at->saved would be a
 * relocated access too, and keep at on the stack. */
#define USER_REG(at, f)                                                    \
	({                                                                 \
		struct pt_regs *__saved = (at)->saved;                     \
		__saved ? BPF_CORE_READ(__saved, f) : CTX_REG((at)->regs, f); \
	})

#endif

#endif
