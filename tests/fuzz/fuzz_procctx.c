/* Fuzz target: an OTEP 4719 process-context payload, in either published
 * form (a ProcessContext or a bare Resource), decoded as the agent decodes
 * the bytes it read from the process (procctx__read: the size bound of
 * the header, then procctx__decode, which runs pbcheck__form and
 * pbcheck__payload before protobuf-c), then the register tag declaration
 * and dictionary loaded from the result as ctxwatch does (tagdecl__load),
 * and the names a label decode asks for looked up. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "proc/ctxsnap.h"
#include "proc/procctx.h"
#include "proc/tagdecl.h"

static volatile uintptr_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctxsnap snap;
	uint64_t mask, value;
	uintptr_t x = 0;

	/* read_once refuses these sizes before reading the payload. */
	if (size == 0 || size > PROCCTX_MAX_PAYLOAD)
		return 0;
	memset(&snap, 0, sizeof(snap));
	if (procctx__decode(data, size, &snap.ctx)) {
		procctx__clear(&snap.ctx);
		return 0;
	}
	x += ctxsnap__schema_known(&snap);
	for (unsigned i = 0; i <= snap.ctx.nkeys + 1 && i < 300; i++)
		x += (uintptr_t)ctxsnap__key(&snap, i);
	x += (uintptr_t)procctx__attr(&snap.ctx, "tagprof.tag.register");
	x += (uintptr_t)procctx__attr(&snap.ctx, "tagprof.code.table");
	if (snap.ctx.service_name)
		x += strlen(snap.ctx.service_name);
	if (!tagdecl__load(&snap.tags, &snap.ctx)) {
		for (size_t f = 0; f < snap.tags.nfields; f++) {
			uint64_t v = tagdecl__field_value(&snap.tags, f,
							  0x0123456789abcdefull);

			x += (uintptr_t)tagdecl__name(&snap.tags, f, v);
			for (uint64_t w = 0; w < 4; w++)
				x += (uintptr_t)tagdecl__name(&snap.tags, f, w);
			x += tagdecl__filter(&snap.tags, snap.tags.fields[f].name,
					     "1", &mask, &value);
		}
	}
	sink = x;
	ctxsnap__clear(&snap);
	return 0;
}
