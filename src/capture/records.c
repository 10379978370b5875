// SPDX-License-Identifier: BSD-2-Clause
/* Ring-buffer records: never trust a record's own lengths blindly. */
#include "capture/records.h"

#include <stdbool.h>
#include <string.h>

/* A sample record, its lengths checked before anything is read. A record
 * that names its stacks by id leaves rs->frames NULL for the stack table
 * to fill (capture/stacktab.h), and points at the parts it carries. */
static enum record_kind parse_sample(const struct tp_sample *s, size_t size,
				     struct raw_sample *rs)
{
	bool ids, regs;
	size_t pad, n, kat, end;
	const uint64_t *p;

	if (size < sizeof(*s) || s->user_depth > TP_MAX_FRAMES ||
	    s->kern_depth > TP_MAX_FRAMES || s->ctx_size > TP_CTX_SPACE ||
	    s->stack_kind > TP_STACK_SEEN || s->kstack_kind > TP_STACK_SEEN)
		return RECORD_MALFORMED;
	regs = s->ustack_flags & TP_USTACK_REGS;	/* within the record now */
	/* The kernel frames have an id exactly when stack ids are on and
	 * there are some; frames are left out only when nothing follows. */
	ids = s->stack_kind != TP_STACK_FRAMES;
	if ((s->kstack_kind != TP_STACK_FRAMES) != (ids && s->kern_depth) ||
	    (regs && (s->stack_kind == TP_STACK_SEEN ||
		      s->kstack_kind == TP_STACK_SEEN)))
		return RECORD_MALFORMED;
	pad = (s->ctx_size + 7u) & ~7u;
	kat = s->stack_kind == TP_STACK_SEEN ? 0 : s->user_depth;
	n = kat + (s->kstack_kind != TP_STACK_FRAMES) +
	    (s->kstack_kind == TP_STACK_SEEN ? 0 : s->kern_depth);
	end = sizeof(*s) + pad + n * sizeof(uint64_t);
	if (size < end)
		return RECORD_MALFORMED;
	p = (const uint64_t *)((const uint8_t *)(s + 1) + pad);
	*rs = (struct raw_sample){ .s = s, .ctx = (const uint8_t *)(s + 1) };
	if (!ids) {
		rs->frames = p;
	} else {
		rs->uframes = s->stack_kind == TP_STACK_NEW ? p : NULL;
		if (s->kstack_kind != TP_STACK_FRAMES) {
			rs->kstack_id = p[kat];
			if (s->kstack_kind == TP_STACK_NEW)
				rs->kframes = p + kat + 1;
		}
	}
	if (regs) {
		if (s->stack_size > TP_STACK_MAX ||
		    size < end + sizeof(struct tp_uregs) + s->stack_size)
			return RECORD_MALFORMED;
		rs->regs = (const struct tp_uregs *)((const uint8_t *)s + end);
		rs->stack = (const uint8_t *)(rs->regs + 1);
		end += sizeof(struct tp_uregs) + s->stack_size;
	}
	if (s->mem) {
		/* right after the rest, at any alignment: copied out */
		if (s->mem != 1 || size < end + sizeof(rs->mem))
			return RECORD_MALFORMED;
		memcpy(&rs->mem, (const uint8_t *)s + end, sizeof(rs->mem));
		if (!rs->mem.addr)
			return RECORD_MALFORMED;
		rs->has_mem = true;
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
