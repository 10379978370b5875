// SPDX-License-Identifier: BSD-2-Clause
/* gzip in memory (gzip.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/gzip.h"

/* zlib counts in uInt; feed it slices so any size_t length works. */
#define ZCHUNK ((size_t)1 << 30)

static int deflate_all(z_stream *zs, const uint8_t *in, size_t inlen,
		       uint8_t *out, size_t outcap, size_t *outlen)
{
	size_t in_left = inlen, out_left = outcap;
	int ret;

	zs->next_in = (Bytef *)in;
	zs->next_out = out;
	do {
		uInt ai = in_left < ZCHUNK ? (uInt)in_left : (uInt)ZCHUNK;
		uInt ao = out_left < ZCHUNK ? (uInt)out_left : (uInt)ZCHUNK;

		zs->avail_in = ai;
		zs->avail_out = ao;
		ret = deflate(zs, ai == in_left ? Z_FINISH : Z_NO_FLUSH);
		in_left -= ai - zs->avail_in;
		out_left -= ao - zs->avail_out;
		if (ret == Z_STREAM_ERROR ||
		    (ret != Z_STREAM_END && !out_left))
			return -EIO;
	} while (ret != Z_STREAM_END);
	*outlen = outcap - out_left;
	return 0;
}

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

int gzip__compress(const uint8_t *in, size_t inlen, uint8_t **out,
		   size_t *len)
{
	z_stream zs;
	uint8_t *buf = NULL, *shrunk;
	size_t cap;
	int err, zret, wbits, mem_level;

	memset(&zs, 0, sizeof(zs));
	deflate_fit(inlen, &wbits, &mem_level);
	/* windowBits + 16: gzip wrapper, which is what pprof and gunzip expect. The
	 * fastest level, as Go's runtime/pprof writes its profiles: level 6
	 * cost the agent a third more deflate time for files about 5%
	 * smaller. */
	zret = deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, wbits + 16,
			    mem_level, Z_DEFAULT_STRATEGY);
	if (zret != Z_OK)
		return zret == Z_MEM_ERROR ? -ENOMEM : -EIO;
	err = -ENOMEM;
	cap = deflateBound(&zs, inlen);
	buf = malloc(cap);
	if (!buf)
		goto cleanup;
	err = deflate_all(&zs, in, inlen, buf, cap, len);
	if (err)
		goto cleanup;
	shrunk = realloc(buf, *len ? *len : 1);
	*out = shrunk ? shrunk : buf;
	buf = NULL;
cleanup:
	deflateEnd(&zs);
	free(buf);
	return err;
}
