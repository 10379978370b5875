/* Fuzz target: a perf jitdump file (jit-PID.dump), parsed as the agent
 * parses it: whole (jitdump__parse), and as a growing file read on from
 * where the last read stopped (jitdump__new, __feed in pieces, __index:
 * proc/jitdumpfile.c's feed_file), with the codes that ended before a time
 * forgotten between two reads, then looked up at addresses and times the
 * input names. The input's last byte picks the piece sizes and how
 * much of the file exists at the first read; the whole input is the file. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"
#include "proc/jitdump.h"

static void lookups(const struct jitdump *d, const uint8_t *data, size_t size)
{
	struct jitdump_hit hit;

	/* The jitdump's own fields (addresses and times of its records) are
	 * at various offsets: try 8-byte words all along, with times from
	 * the word after. */
	for (size_t i = 0; i + 16 <= size && i < 4096; i += 4) {
		uint64_t a = fuzz_word(data + i), t = fuzz_word(data + i + 8);

		if (jitdump__lookup(d, a, t, &hit) && hit.name)
			(void)hit.name[0];
		if (jitdump__lookup(d, a, 0, &hit) && hit.file)
			(void)hit.file[0];
		jitdump__lookup(d, a + 1, t, &hit);
		jitdump__lookup(d, a - 1, t - 1, &hit);
	}
	jitdump__lookup(d, 0, 0, &hit);
	jitdump__lookup(d, UINT64_MAX, UINT64_MAX, &hit);
	(void)jitdump__count(d);
	(void)jitdump__bytes(d);
}

/* Reads the file on from jitdump__next up to end, in pieces of at most
 * piece bytes, as feed_file does; a piece that held no whole record (a
 * short read) is read again, twice as long, as the next read_more would. */
static void feed(struct jitdump *d, const uint8_t *data, uint64_t end,
		 size_t piece, struct jitdump_stats *st)
{
	uint64_t off = jitdump__next(d), next;

	while (off < end) {
		size_t n = end - off < piece ? end - off : piece;

		next = jitdump__feed(d, data + off, n, end, st);
		if (next == off) {
			if (n == end - off || piece >= JITDUMP_RECORD_MAX)
				break;
			piece *= 2;
			continue;
		}
		if (next < off)
			abort();	/* the offset must only move on */
		off = next;
	}
	jitdump__index(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jitdump_stats st;
	struct jitdump *d;
	uint8_t ctl = size ? data[size - 1] : 0;
	size_t piece, first;

	/* Whole, with a small memory bound now and then. */
	d = jitdump__parse(data, size, ctl & 1 ? 4096 : 64u << 20, &st);
	if (d) {
		lookups(d, data, size);
		jitdump__free(d);
	}

	/* Fed: pieces of 1..64 bytes or up to the record bound, the file
	 * first shorter (the JIT still writing), then whole. */
	piece = ctl & 0x80 ? JITDUMP_RECORD_MAX : 1 + (ctl & 0x3f);
	first = size ? (size * ((ctl >> 1) & 7)) / 8 : 0;
	d = jitdump__new(ctl & 1 ? 64u << 20 : 16384);
	if (!d)
		return 0;
	st = (struct jitdump_stats){ 0 };
	feed(d, data, first, piece, &st);
	lookups(d, data, size);
	/* The codes ended before a time the input names are forgotten, as
	 * proc/jitdumpfile.c does between reads, and the read goes on. */
	if (size >= 9 && jitdump__forget(d, fuzz_word(data + size - 9)))
		st.over_budget = false;
	lookups(d, data, size);
	if (!st.bad_header && !st.broken && !st.full && !st.over_budget) {
		feed(d, data, size, piece, &st);
		lookups(d, data, size);
	}
	jitdump__free(d);
	return 0;
}
