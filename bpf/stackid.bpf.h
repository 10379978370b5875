/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Stack ids: a sample whose frames this CPU has sent before sends an id in
 * their place. A 127-frame record shrinks from about 1.1 KB to its header
 * and context: a quarter of the ring-buffer bytes, and about 0.4 us less
 * output per sample here (tests/bench/bpf_stages.sh), most of the output's
 * cost being fixed per record. The agent keeps every stack it was sent
 * under its id (src/capture/stacktab.c). */
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
	const __u64 *frames;	/* 2 * TP_MAX_FRAMES of room */
	__u32 from, to;
	__u64 h;
};

static int fold_step(__u64 i, void *arg)
{
	struct frame_fold *c = arg;
	__u64 at = c->from + i;

	if (at >= c->to || at >= 2 * TP_MAX_FRAMES)
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
		bpf_loop(2 * TP_MAX_FRAMES, fold_step, &c, 0);
	return c.h;
}

/* The id of a stack whose nu user and nk kernel frames folded to h, for
 * pid in this generation; never 0, which marks an empty slot. */
static __always_inline __u64 stack_id_of(__u64 h, __u32 nu, __u32 nk,
					 __u32 pid, __u32 gen)
{
	__u64 id = mix64(stack_seed, ((__u64)pid << 32) | (nu << 16) | nk);

	id = mix64(id, gen);
	return mix64(id, h) | 1;
}

/* This CPU's slot for stack id. */
static __always_inline __u64 *sent_slot(__u64 id)
{
	__u32 zero = 0;
	struct sent_stacks *sent = bpf_map_lookup_elem(&sent_map, &zero);

	return sent ? &sent->id[id & (STACK_SLOTS - 1)] : NULL;
}

/* Names the record's frames, folded to h, by id, and returns the kind
 * (enum tp_stack_kind) it set: SEEN, the frames to be left out of the
 * record, when this CPU sent them under that id before and nothing follows
 * them in the record (a stack copy does); else NEW. */
static __always_inline __u32 name_stack(struct scratch *s, __u64 h, __u32 nu,
					__u32 nk)
{
	__u32 gen = stack_gen;
	__u64 id = stack_id_of(h, nu, nk, s->hdr.pid, gen), *slot;

	s->hdr.stack_id = id;
	s->hdr.stack_gen = gen;
	slot = sent_slot(id);
	s->hdr.stack_kind = slot && *slot == id &&
			    !(s->hdr.ustack_flags & TP_USTACK_REGS) ?
				    TP_STACK_SEEN : TP_STACK_NEW;
	return s->hdr.stack_kind;
}

/* Remembers that this CPU sent stack id whole: only once its record is in
 * the ring buffer, since a record the ring buffer refused never reached
 * the agent. */
static __always_inline void mark_sent(__u64 id)
{
	__u64 *slot = sent_slot(id);

	if (slot)
		*slot = id;
}

#endif
