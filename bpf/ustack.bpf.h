/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the agent needs to unwind a user stack without frame pointers: the
 * user registers CFI starts from (the interrupted ones when the sample hit
 * user mode, else the ones saved at kernel entry), the 16 bytes at the user
 * stack pointer (a frameless leaf's return address, sent with every
 * sample), and, when asked for, a copy of the top of the user stack. */
#ifndef TAGPROF_USTACK_BPF_H
#define TAGPROF_USTACK_BPF_H

#include "uregs.bpf.h"
#include "stackid.bpf.h"

/* `auto` copies the stacks of processes the agent marked, plus one sample
 * in TP_PROBE_EVERY of the others (one in probe_every_young for processes
 * started less than TP_YOUNG_NS ago, so that a short program is classified
 * within its first samples): the agent compares CFI with the frame
 * pointers on those and marks a process when CFI finds frames they miss.
 * The constants are in sample_event.h: the agent sets probe_every_young
 * by the sampling rate. */

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

/* The user frames, walked by frame pointers as the kernel's own walk for
 * bpf_get_stack does it on x86-64 (perf_callchain_user: the ip, then the
 * return address of each {next frame, return address} pair from bp on,
 * until a pair cannot be read or the depth is reached), but reading the
 * stack a page at a time into a per-CPU window (struct fp_window,
 * maps.bpf.h) instead of two user reads per frame: a 127-frame stack costs
 * a few page copies, not 254 faultable reads. Pages are read from sp's page
 * up, each when the walk first needs it; a pair outside them (past a big
 * frame, or past FP_PAGES) is read alone. One difference remains: the
 * kernel stops at kernel.perf_event_max_stack frames, this walk at
 * TP_MAX_FRAMES (the same unless that setting was lowered). */
#define USER64_CS	0x33	/* __USER_CS: a 64-bit user task */

/* No uretprobe is pending: the stack holds the real return addresses,
 * not the kernel's trampoline, which it puts back in bpf_get_stack's. */
static __always_inline bool no_uretprobe(struct task_struct *task)
{
	return !bpf_core_field_exists(task->utask) ||
	       !BPF_CORE_READ(task, utask, return_instances);
}

/* Whether walk_user_fp gives what bpf_get_stack would: the sample
 * interrupted a 64-bit task in user mode (else the kernel walks the saved
 * registers, or the 32-bit way), and no uretprobe is pending (the kernel
 * puts the real return addresses back in place of its trampoline's). */
static __always_inline bool fp_walk_ok(bpf_user_pt_regs_t *regs,
				       struct task_struct *task)
{
	return CTX_REG(regs, cs) == USER64_CS && no_uretprobe(task);
}

/* bpf_loop's callback context for one walk. */
struct fp_walk {
	__u64 *frames;		/* TP_MAX_FRAMES of room */
	struct fp_window *w;
};

/* The walk's state while a step runs, in registers or on the stack; the
 * window holds it between steps. */
struct fp_state {
	__u64 fp;
	__u64 hash;
	/* 64-bit, so the compiler does not narrow a copy whose bounds
	 * the verifier then no longer links to the one checked */
	__u64 n;
	__u64 loaded;
	__u64 ended;
};

/* Frames per bpf_loop step at most: the step's fixed cost (the call,
 * reading the state back from the window and storing it) spread over
 * several frames. */
#define FP_FRAMES_PER_STEP	4

/* How a frame step left the walk. */
enum fp_next {
	FP_MORE,	/* the frame was taken: go on */
	FP_OUTSIDE,	/* its pair lies beyond the pages read: fp_read_frame */
	FP_END,		/* the depth is reached, or the pair cannot be read */
};

/* Takes the frame whose pair {next frame, return address} was read. */
static __always_inline void fp_take(__u64 *frames, struct fp_state *st,
				    __u64 next, __u64 ret)
{
	frames[st->n] = ret;
	st->hash = mix64(st->hash, ret);
	st->n++;
	st->fp = next;
}

/* One frame from the pages already in the window. No helper call and one
 * way through: the verifier checks the FP_FRAMES_PER_STEP copies of it in
 * a step without a branch per frame to multiply its states. */
static __always_inline enum fp_next fp_window_frame(__u64 *frames,
						    struct fp_window *w,
						    struct fp_state *st)
{
	__u64 d = st->fp - w->base;	/* below base: huge */

	if (st->n >= TP_MAX_FRAMES)
		return FP_END;
	if (d >= FP_WIN - 16 || d + 16 > st->loaded * TP_PAGE_SIZE)
		return FP_OUTSIDE;
	fp_take(frames, st, *(__u64 *)(w->b + d), *(__u64 *)(w->b + d + 8));
	return FP_MORE;
}

/* One frame whose pair lies beyond the pages read: reads the page it
 * needs when that is the next one, else the pair from the user stack on
 * its own. Once per step at most. */
static __always_inline enum fp_next fp_read_frame(__u64 *frames,
						  struct fp_window *w,
						  struct fp_state *st)
{
	__u64 d = st->fp - w->base, pair[2];	/* below base: huge */
	__u64 n = st->n, loaded = st->loaded;

	/* Not the product fp_window_frame computed: that one is not known
	 * to be bounded by the checks here. */
	barrier_var(loaded);
	if (n >= TP_MAX_FRAMES || loaded > FP_PAGES)
		return FP_END;
	if (d < FP_WIN - 16 && !st->ended && loaded < FP_PAGES &&
	    (d + 15) / TP_PAGE_SIZE == loaded) {
		if (bpf_probe_read_user(w->b + loaded * TP_PAGE_SIZE,
					TP_PAGE_SIZE,
					(void *)(w->base + loaded * TP_PAGE_SIZE)))
			st->ended = 1;
		else
			st->loaded = ++loaded;
	}
	if (d < FP_WIN - 16 && d + 16 <= loaded * TP_PAGE_SIZE) {
		pair[0] = *(__u64 *)(w->b + d);
		pair[1] = *(__u64 *)(w->b + d + 8);
	} else if (bpf_probe_read_user(pair, sizeof(pair), (void *)st->fp)) {
		return FP_END;
	}
	fp_take(frames, st, pair[0], pair[1]);
	return FP_MORE;
}

/* Up to FP_FRAMES_PER_STEP frames from the window, and where the next
 * one lies beyond it, that one read; stops the loop when the walk ends. */
static int fp_step(__u64 i, void *arg)
{
	struct fp_walk *c = arg;
	struct fp_window *w = c->w;
	struct fp_state st = { .fp = w->fp, .hash = w->hash, .n = w->n,
			       .loaded = w->loaded, .ended = w->ended };
	enum fp_next next = FP_MORE;

#pragma unroll
	for (int k = 0; k < FP_FRAMES_PER_STEP; k++)
		if (next == FP_MORE)
			next = fp_window_frame(c->frames, w, &st);
	if (next == FP_OUTSIDE)
		next = fp_read_frame(c->frames, w, &st);
	w->fp = st.fp;
	w->hash = st.hash;
	w->n = st.n;
	w->loaded = st.loaded;
	w->ended = st.ended;
	return next == FP_END ? 1 : 0;
}

/* Fills frames (TP_MAX_FRAMES of room) with the walk; returns the frames
 * found, which w->hash holds folded. */
static __always_inline __u32 walk_user_fp(bpf_user_pt_regs_t *regs,
					  __u64 *frames, struct fp_window *w)
{
	struct fp_walk c = { .frames = frames, .w = w };
	__u32 n;

	frames[0] = CTX_REG(regs, ip);
	w->base = CTX_REG(regs, sp) & ~(__u64)(TP_PAGE_SIZE - 1);
	w->fp = CTX_REG(regs, bp);
	w->n = 1;
	w->loaded = 0;
	w->ended = 0;
	w->hash = mix64(0, frames[0]);
	/* A step takes at least one frame until the walk ends. */
	bpf_loop(TP_MAX_FRAMES, fp_step, &c, 0);
	n = w->n;
	return n > TP_MAX_FRAMES ? TP_MAX_FRAMES : n;
}

/* The 16 bytes at sp into words, when the walk read the page they are on
 * (it reads sp's page first, unless the first frame lies beyond it). */
static __always_inline bool sp_in_window(const struct fp_window *w, __u64 sp,
					 __u64 words[2])
{
	__u64 d = sp - w->base;		/* below base: huge */

	if (d > TP_PAGE_SIZE - 2 * sizeof(__u64) || !w->loaded)
		return false;
	words[0] = *(const __u64 *)(w->b + d);
	words[1] = *(const __u64 *)(w->b + d + sizeof(__u64));
	return true;
}

#else
#define HAVE_USTACK 0
#endif

#endif
