/* Fuzz target: a ring-buffer record (include/sample_event.h), checked and
 * cut as the agent's ring-buffer callback does (records__parse, called by
 * capture.c's on_record on the bytes the ring buffer hands it), then every
 * part it points at read whole, as the stack table, the unwinder and the
 * label decoder read them: a part that reaches past the record is an
 * AddressSanitizer report. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "capture/records.h"

static volatile uint64_t sink;

static uint64_t sum(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t x = 0;

	for (size_t i = 0; i < n; i++)
		x = x * 31 + b[i];
	return x;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct raw_sample rs;
	const struct tp_sample *s;
	uint64_t x = 0;

	/* libFuzzer's copy of the input is heap memory of exactly size
	 * bytes, 8-aligned as a ring-buffer record is. */
	switch (records__parse(data, size, &rs)) {
	case RECORD_SAMPLE:
		s = rs.s;
		x += sum(s, sizeof(*s));
		x += sum(rs.ctx, s->ctx_size);
		if (rs.frames)
			x += sum(rs.frames, ((size_t)s->user_depth +
					     s->kern_depth) * 8);
		if (rs.uframes)
			x += sum(rs.uframes, (size_t)s->user_depth * 8);
		if (rs.kframes)
			x += sum(rs.kframes, (size_t)s->kern_depth * 8);
		x += rs.kstack_id;
		if (rs.regs) {
			x += sum(rs.regs, sizeof(*rs.regs));
			x += sum(rs.stack, s->stack_size);
		}
		break;
	case RECORD_EXEC:
	case RECORD_EXIT:
		x += sum(data, sizeof(struct tp_task_event));
		break;
	case RECORD_MALFORMED:
		break;
	}
	sink = x;
	return 0;
}
