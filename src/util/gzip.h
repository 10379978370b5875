/* gzip in memory, for the files tagprof writes (pprof, the Firefox
 * Profiler's JSON): in one call, or as a stream fed in pieces, so that
 * the uncompressed bytes never need to be held whole. */
#ifndef TAGPROF_GZIP_H
#define TAGPROF_GZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

struct gzip_stream {
	z_stream zs;
	uint8_t *out;		/* the gzip bytes so far */
	size_t len, cap;
	int err;		/* the first failure: later calls do nothing */
	bool open;
};

/* Starts a stream of about total bytes (it sizes deflate's window and the
 * first output buffer, at zlib's fastest level). 0, -ENOMEM or -EIO; on
 * failure gzip__finish still cleans up. */
int gzip__begin(struct gzip_stream *g, size_t total);
void gzip__feed(struct gzip_stream *g, const void *in, size_t n);
/* Ends the stream: its bytes in *out (malloc'd, *len of them), or the
 * first failure (-ENOMEM, -EIO) with nothing to free. */
int gzip__finish(struct gzip_stream *g, uint8_t **out, size_t *len);

/* in[0..inlen) gzipped into *out (malloc'd, *len bytes). 0, -ENOMEM, or
 * -EIO. */
int gzip__compress(const uint8_t *in, size_t inlen, uint8_t **out,
		   size_t *len);

#endif
