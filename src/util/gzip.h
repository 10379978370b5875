/* gzip in memory, for the files tagprof writes (pprof, the Firefox
 * Profiler's JSON): one call, any size. */
#ifndef TAGPROF_GZIP_H
#define TAGPROF_GZIP_H

#include <stddef.h>
#include <stdint.h>

/* in[0..inlen) gzipped into *out (malloc'd, *len bytes), at zlib's fastest
 * level. 0, -ENOMEM, or -EIO. */
int gzip__compress(const uint8_t *in, size_t inlen, uint8_t **out,
		   size_t *len);

#endif
