/* Test helper: a gzipped pprof, as the agent writes it, decoded with the
 * protobuf-c code generated from profile.proto. Static, for the unit tests
 * that check what the encoder wrote. */
#ifndef TAGPROF_TEST_PPROF_DECODE_H
#define TAGPROF_TEST_PPROF_DECODE_H

#include <stdint.h>
#include <zlib.h>

#include "profile.pb-c.h"

/* NULL when the data does not inflate to a profile of at most 1 MiB. */
static inline Perftools__Profiles__Profile *pprof_decode(const uint8_t *gz,
							 size_t len)
{
	static uint8_t raw[1 << 20];
	z_stream zs = { 0 };
	Perftools__Profiles__Profile *pr = NULL;

	if (inflateInit2(&zs, 15 + 32) != Z_OK)
		return NULL;
	zs.next_in = (uint8_t *)gz;
	zs.avail_in = len;
	zs.next_out = raw;
	zs.avail_out = sizeof(raw);
	if (inflate(&zs, Z_FINISH) == Z_STREAM_END)
		pr = perftools__profiles__profile__unpack(NULL, zs.total_out, raw);
	inflateEnd(&zs);
	return pr;
}

#endif
