/* A process's context as the agent last read it: its process context (key
 * map, schema, service.name) and the register tag declaration and
 * dictionary that come with it. Label decoding (capture/labels.h) reads
 * names from a snapshot only; proc/ctxwatch.h keeps one per process and
 * reads it again when a decode misses a name. */
#ifndef TAGPROF_CTXSNAP_H
#define TAGPROF_CTXSNAP_H

#include <stdbool.h>
#include <stdint.h>

#include "proc/procctx.h"
#include "proc/tagdecl.h"

struct codemap;

struct ctxsnap {
	struct procctx ctx;
	struct tagdecl tags;
	struct codemap *code;	/* its code-region table, followed; NULL
				   until the context names one */
	uint64_t read_ns;	/* when the read that gave it began
				   (CLOCK_MONOTONIC); 0: never read */
};

/* What decoding a sample against a snapshot found missing: a name that a
 * newer read of the process context may have. */
enum ctxsnap_miss {
	CTXSNAP_MISS_NONE = 0,
	CTXSNAP_MISS_KEY,	/* a key index past the key map */
	CTXSNAP_MISS_TAG,	/* a tag field value without a name */
	CTXSNAP_MISS_CODE,	/* a frame in anonymous code, and no
				 * code-region table known */
};

/* Whether the process's threadlocal.schema_version names the record
 * layout of OTEP 4947. */
bool ctxsnap__schema_known(const struct ctxsnap *s);

/* The key name of index idx, or NULL when the key map has none. */
const char *ctxsnap__key(const struct ctxsnap *s, unsigned idx);

/* Frees what s holds and zeroes it. */
void ctxsnap__clear(struct ctxsnap *s);

#endif
