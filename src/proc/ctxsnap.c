// SPDX-License-Identifier: BSD-2-Clause
/* A snapshot of a process's context, as label decoding reads it. */
#include <string.h>

#include "proc/ctxsnap.h"
#include "proc/codemap.h"

/* The record layouts OTEP 4947 has named (tls_v1 is the name its text
 * gives the layout once final). A context without the attribute is read as
 * that layout too: early writers did not publish it. */
bool ctxsnap__schema_known(const struct ctxsnap *s)
{
	const char *v = s->ctx.schema_version;

	return !v || !strcmp(v, "tlsdesc_v1_dev") || !strcmp(v, "tls_v1");
}

const char *ctxsnap__key(const struct ctxsnap *s, unsigned idx)
{
	return idx < s->ctx.nkeys ? s->ctx.keys[idx] : NULL;
}

void ctxsnap__clear(struct ctxsnap *s)
{
	procctx__clear(&s->ctx);
	tagdecl__clear(&s->tags);
	codemap__free(s->code);
	s->code = NULL;
	s->read_ns = 0;
}
