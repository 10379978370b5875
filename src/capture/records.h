/* The records the BPF side writes into the ring buffer
 * (include/sample_event.h), checked: every length a record states is
 * checked against the record's size before anything is read, and a sample
 * record is cut into its parts. */
#ifndef TAGPROF_RECORDS_H
#define TAGPROF_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample_event.h"

/* A sample record's parts, each within the record. */
struct raw_sample {
	const struct tp_sample *s;
	const uint8_t *ctx;		/* s->ctx_size bytes of context */
	const uint64_t *frames;		/* s->user_depth user frames, then
					 * s->kern_depth kernel frames; NULL
					 * where the record names them by id,
					 * until the stack table joins them
					 * (capture/stacktab.h) */
	/* Where it does (s->stack_kind is not TP_STACK_FRAMES), the parts
	 * as sent: */
	const uint64_t *uframes;	/* NULL: TP_STACK_SEEN */
	const uint64_t *kframes;	/* NULL: TP_STACK_SEEN, or none */
	uint64_t kstack_id;		/* unless s->kstack_kind is FRAMES */
	const struct tp_uregs *regs;	/* NULL: no stack copy */
	const uint8_t *stack;		/* s->stack_size bytes after regs */
	bool has_mem;			/* s->mem: a memory-access sample */
	struct tp_mem mem;		/* ... its address, source, weight */
};

enum record_kind {
	RECORD_MALFORMED,
	RECORD_SAMPLE,			/* *rs is filled */
	/* data is a whole struct tp_task_event: */
	RECORD_EXEC,
	RECORD_EXIT,
};

/* What the size bytes at data hold. */
enum record_kind records__parse(const void *data, size_t size,
				struct raw_sample *rs);

#endif
