// SPDX-License-Identifier: BSD-2-Clause
/* gzip in memory (gzip.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/gzip.h"

/* zlib counts in uInt; feed it slices so any size_t length works. */
#define ZCHUNK ((size_t)1 << 30)

/* deflate's window and hash table sized to the input (windowBits 9 to 15,
 * memLevel 2 to 8): the agent's profile of one service in one window is a
 * few KiB, and deflate's full state is 256 KiB, allocated and its hash
 * table cleared for every file. No match reaches back further than the
 * input: the files come out the same size. */
static void deflate_fit(size_t inlen, int *wbits, int *mem_level)
{
	int wb = 9;

	while (wb < 15 && ((size_t)1 << wb) < inlen)
		wb++;
	*wbits = wb;
	*mem_level = wb - 7;
}

int gzip__begin(struct gzip_stream *g, size_t total)
{
	int zret, wbits, mem_level;

	memset(g, 0, sizeof(*g));
	deflate_fit(total, &wbits, &mem_level);
	/* windowBits + 16: gzip wrapper, which is what pprof and gunzip
	 * expect. The fastest level, as Go's runtime/pprof writes its
	 * profiles: level 6 cost the agent a third more deflate time for
	 * files about 5% smaller. */
	zret = deflateInit2(&g->zs, Z_BEST_SPEED, Z_DEFLATED, wbits + 16,
			    mem_level, Z_DEFAULT_STRATEGY);
	if (zret != Z_OK)
		return g->err = zret == Z_MEM_ERROR ? -ENOMEM : -EIO;
	g->open = true;
	/* most of what tagprof writes shrinks to a tenth or less */
	g->err = grow__array(&g->out, &g->cap, total / 8 + 64, 1, 4096);
	return g->err;
}

/* Runs deflate over what is in g->zs until it has taken all of it (and,
 * with finish, ended the stream), growing the output as it fills. */
static void run(struct gzip_stream *g, int flush)
{
	int ret;

	do {
		if (g->len == g->cap) {
			g->err = grow__array(&g->out, &g->cap, g->len + 1, 1,
					     4096);
			if (g->err)
				return;
		}
		g->zs.next_out = g->out + g->len;
		g->zs.avail_out = g->cap - g->len < ZCHUNK ?
					  (uInt)(g->cap - g->len) : (uInt)ZCHUNK;
		ret = deflate(&g->zs, flush);
		g->len = (size_t)(g->zs.next_out - g->out);
		if (ret == Z_STREAM_ERROR) {
			g->err = -EIO;
			return;
		}
	} while (g->zs.avail_in || (flush == Z_FINISH && ret != Z_STREAM_END));
}

void gzip__feed(struct gzip_stream *g, const void *in, size_t n)
{
	const uint8_t *p = in;

	while (!g->err && n) {
		uInt a = n < ZCHUNK ? (uInt)n : (uInt)ZCHUNK;

		g->zs.next_in = (Bytef *)p;
		g->zs.avail_in = a;
		run(g, Z_NO_FLUSH);
		p += a;
		n -= a;
	}
}

int gzip__finish(struct gzip_stream *g, uint8_t **out, size_t *len)
{
	int err;

	if (!g->err && g->open) {
		g->zs.next_in = NULL;
		g->zs.avail_in = 0;
		run(g, Z_FINISH);
	}
	if (g->open)
		deflateEnd(&g->zs);
	err = g->err;
	if (err) {
		free(g->out);
	} else {
		*out = g->out;
		*len = g->len;
	}
	memset(g, 0, sizeof(*g));
	return err;
}

int gzip__compress(const uint8_t *in, size_t inlen, uint8_t **out,
		   size_t *len)
{
	struct gzip_stream g;

	gzip__begin(&g, inlen);
	gzip__feed(&g, in, inlen);
	return gzip__finish(&g, out, len);
}
