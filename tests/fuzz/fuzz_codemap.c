/* Fuzz target: a code-region table (include/code_table.h) as the agent
 * follows it (proc/codemap.c's read_records): codemap__switch to a new
 * table, codemap__apply over it in chunks, each starting where the last
 * one's whole records ended, then codemap__find at addresses and times
 * the input names, and the rest of the map's queries. The input's last
 * byte picks the chunk sizes; the whole input is the table. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"
#include "proc/codemap.h"

static void finds(struct codemap *m, const uint8_t *data, size_t size)
{
	const struct code_region *r;

	/* Spans' starts and ADD/DROP times lie at multiples of 8. */
	for (size_t i = 0; i + 16 <= size && i < 8192; i += 8) {
		uint64_t a = fuzz_word(data + i), t = fuzz_word(data + i + 8);

		r = codemap__find(m, a, t);
		if (r) {
			if (r->start > a || a >= r->end)
				abort();	/* found a region not holding a */
			if (r->name)
				(void)r->name[0];
			for (uint32_t k = 0; k < r->levels->n; k++)
				(void)(r->levels->key[k][0] + r->levels->val[k][0]);
		}
		codemap__find(m, a, 0);
		codemap__find(m, a - 1, UINT64_MAX);
		codemap__find(m, a + 15, t + 1);
	}
	(void)codemap__level_order(m);
	(void)codemap__count(m);
	(void)codemap__bytes(m);
}

/* The agent's loop over one table, [0, size), in chunks of at most chunk
 * bytes; a chunk with no whole record in it is read again twice as long,
 * up to the agent's chunk (256 KiB, more than a good record), where the
 * agent refuses the table. */
static void apply_all(struct codemap *m, const uint8_t *data, size_t size,
		      size_t chunk, struct codemap_stats *st)
{
	size_t off = 0, len, done;

	while (off < size) {
		len = size - off < chunk ? size - off : chunk;
		done = codemap__apply(m, data + off, len, st);
		if (done > len)
			abort();
		if (!done) {
			if (len == size - off || chunk >= (256u << 10))
				break;	/* a bad size, a record cut or huge */
			chunk *= 2;
			continue;
		}
		off += done;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct codemap_stats st = { 0 };
	struct codemap *m = codemap__new(1, 0);
	uint8_t ctl = size ? data[size - 1] : 0;
	size_t chunk = ctl & 0x80 ? (256u << 10) : 8 * (1 + (ctl & 0x1f));

	if (!m)
		return 0;
	codemap__switch(m, 0);
	apply_all(m, data, size, chunk, &st);
	codemap__switch_done(m);
	finds(m, data, size);
	/* A compaction: the same table again as the new one, made later;
	 * the live regions it adds again stay, the others end. */
	if (ctl & 0x40) {
		codemap__switch(m, ctl);
		apply_all(m, data, size / 2, chunk, &st);
		codemap__switch_done(m);
		finds(m, data, size);
	}
	codemap__prune(m, UINT64_MAX);
	codemap__window_reset(m);
	codemap__free(m);
	return 0;
}
