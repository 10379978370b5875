// SPDX-License-Identifier: BSD-2-Clause
/* Ring-buffer records: never trust a record's own lengths blindly. */
#include "capture/records.h"

/* A sample record, its lengths checked before anything is read. A record
 * that names its stack by an id alone carries no frames: rs->frames stays
 * NULL for the stack table to fill (capture/stacktab.h). */
static enum record_kind parse_sample(const struct tp_sample *s, size_t size,
				     struct raw_sample *rs)
{
	size_t pad, nframes, end;

	if (size < sizeof(*s) || s->user_depth > TP_MAX_FRAMES ||
	    s->kern_depth > TP_MAX_FRAMES || s->ctx_size > TP_CTX_SPACE ||
	    s->stack_kind > TP_STACK_SEEN)
		return RECORD_MALFORMED;
	pad = (s->ctx_size + 7u) & ~7u;
	nframes = s->stack_kind == TP_STACK_SEEN ? 0 :
		  (size_t)s->user_depth + s->kern_depth;
	/* Frames are named by an id alone only when nothing follows them. */
	if (s->stack_kind == TP_STACK_SEEN &&
	    (s->ustack_flags & TP_USTACK_REGS))
		return RECORD_MALFORMED;
	end = sizeof(*s) + pad + nframes * sizeof(uint64_t);
	if (size < end)
		return RECORD_MALFORMED;
	*rs = (struct raw_sample){
		.s = s, .ctx = (const uint8_t *)(s + 1),
		.frames = s->stack_kind == TP_STACK_SEEN ? NULL :
			  (const uint64_t *)((const uint8_t *)(s + 1) + pad) };
	if (s->ustack_flags & TP_USTACK_REGS) {
		if (s->stack_size > TP_STACK_MAX ||
		    size < end + sizeof(struct tp_uregs) + s->stack_size)
			return RECORD_MALFORMED;
		rs->regs = (const struct tp_uregs *)((const uint8_t *)s + end);
		rs->stack = (const uint8_t *)(rs->regs + 1);
	}
	return RECORD_SAMPLE;
}

enum record_kind records__parse(const void *data, size_t size,
				struct raw_sample *rs)
{
	const struct tp_task_event *t = data;

	if (size < sizeof(__u32))
		return RECORD_MALFORMED;
	switch (t->type) {
	case TP_REC_SAMPLE:
		return parse_sample(data, size, rs);
	case TP_REC_EXEC:
	case TP_REC_EXIT:
		if (size < sizeof(*t))
			return RECORD_MALFORMED;
		return t->type == TP_REC_EXEC ? RECORD_EXEC : RECORD_EXIT;
	default:
		return RECORD_MALFORMED;
	}
}
