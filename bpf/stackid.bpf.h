/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Stack ids: a sample whose frames were sent before sends an id in their
 * place. A 127-frame record shrinks from about 1.1 KB to its header and
 * context: a quarter of the ring-buffer bytes, and about 0.4 us less
 * output per sample here (tests/bench/bpf_stages.sh), most of the output's
 * cost being fixed per record. The agent keeps every stack it was sent
 * under its id (src/capture/stacktab.c).
 *
 * The user stack and the kernel stack have an id each. A server spends
 * much of its time in system calls, and the same user stack meets many
 * kernel stacks (an interrupt, a different wait); one id for the pair
 * would send the user frames again with every new pair. The kernel
 * stack's id has no pid in it, so every process shares it. */
#ifndef TAGPROF_STACKID_BPF_H
#define TAGPROF_STACKID_BPF_H

#include "maps.bpf.h"

/* One round of a multiply-xorshift mix: every bit of v reaches every bit
 * of the result within two rounds. */
static __always_inline __u64 mix64(__u64 h, __u64 v)
{
	h = (h ^ v) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

/* bpf_loop's callback context for folding frames into a hash. */
struct frame_fold {
	const __u64 *frames;	/* FRAME_SLOTS of room */
	__u32 from, to;
	__u64 h;
};

static int fold_step(__u64 i, void *arg)
{
	struct frame_fold *c = arg;
	__u64 at = c->from + i;

	if (at >= c->to || at >= FRAME_SLOTS)
		return 1;
	c->h = mix64(c->h, c->frames[at]);
	return 0;
}

/* h with frames [from, to) folded in, leaf first: the same as the
 * frame-pointer walk folds them as it goes (fp_frame, ustack.bpf.h). */
static __always_inline __u64 fold_frames(__u64 h, const __u64 *frames,
					 __u32 from, __u32 to)
{
	struct frame_fold c = { .frames = frames, .from = from, .to = to,
				.h = h };

	if (from < to)
		bpf_loop(FRAME_SLOTS, fold_step, &c, 0);
	return c.h;
}

/* The id of a stack whose nu user and nk kernel frames folded to h, for
 * pid in this generation; never 0, which marks an empty slot. A user
 * stack's id has nk 0, a kernel stack's nu 0 and pid 0. */
static __always_inline __u64 stack_id_of(__u64 h, __u32 nu, __u32 nk,
					 __u32 pid, __u32 gen)
{
	__u64 id = mix64(stack_seed, ((__u64)pid << 32) | (nu << 16) | nk);

	id = mix64(id, gen);
	return mix64(id, h) | 1;
}

/* The slot for stack id. */
static __always_inline __u64 *sent_slot(__u64 id)
{
	__u32 key = id & (STACK_SLOTS - 1);

	return bpf_map_lookup_elem(&sent_map, &key);
}

/* Whether stack id was sent whole before. */
static __always_inline bool was_sent(__u64 id)
{
	__u64 *slot = sent_slot(id);

	return slot && *slot == id;
}

/* bpf_loop's callback context for moving frames down the array. */
struct frame_move {
	__u64 *frames;		/* FRAME_SLOTS of room */
	__u32 from, n;
};

static int move_step(__u64 i, void *arg)
{
	struct frame_move *c = arg;
	__u64 at = c->from + i;

	if (i >= c->n || i >= FRAME_SLOTS || at >= FRAME_SLOTS)
		return 1;
	c->frames[i] = c->frames[at];
	return 0;
}

/* Names the record's user frames (nu, folded to hu) and kernel frames (nk,
 * after the slot at frames[nu]) by id, sets the kind of each (enum
 * tp_stack_kind: SEEN, to be left out of the record, when sent before and
 * nothing follows them, a stack copy does), and returns the bytes of
 * frames to send: the user frames unless SEEN, then, when there are kernel
 * frames, their id and, unless SEEN, the frames. Where only the kernel's
 * go, they are moved to the start. With a stack copy behind them, that is
 * every frame, where the copy already lies after them. */
static __always_inline __u32 name_stacks(struct scratch *s, __u64 *frames,
					 __u64 hu, __u32 nu, __u32 nk)
{
	__u32 gen = stack_gen, n = 0;
	bool may_omit = !(s->hdr.ustack_flags & TP_USTACK_REGS);
	struct frame_move m = { .frames = frames, .from = nu };
	__u64 kid;

	s->hdr.stack_id = stack_id_of(hu, nu, 0, s->hdr.pid, gen);
	s->hdr.stack_gen = gen;
	s->hdr.stack_kind = may_omit && was_sent(s->hdr.stack_id) ?
				    TP_STACK_SEEN : TP_STACK_NEW;
	if (s->hdr.stack_kind == TP_STACK_NEW)
		n = nu;
	s->hdr.kstack_kind = TP_STACK_FRAMES;
	if (!nk)
		return n * sizeof(__u64);
	kid = stack_id_of(fold_frames(0, frames, nu + 1, nu + 1 + nk), 0, nk,
			  0, gen);
	s->kstack_id = kid;
	s->hdr.kstack_kind = may_omit && was_sent(kid) ? TP_STACK_SEEN :
						    TP_STACK_NEW;
	m.n = s->hdr.kstack_kind == TP_STACK_NEW ? 1 + nk : 1;
	if (nu < FRAME_SLOTS)	/* always; tells the verifier */
		frames[nu] = kid;
	if (!n && nu)
		bpf_loop(FRAME_SLOTS, move_step, &m, 0);
	return (n + m.n) * sizeof(__u64);
}

/* Remembers that stack id was sent whole: only once its record is in the
 * ring buffer, since a record the ring buffer refused never reached the
 * agent. */
static __always_inline void mark_sent(__u64 id)
{
	__u64 *slot = sent_slot(id);

	if (slot)
		*slot = id;
}

#endif
