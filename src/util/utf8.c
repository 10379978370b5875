// SPDX-License-Identifier: BSD-2-Clause
/* UTF-8 validation for label text read from other processes: pprof and
 * its users expect valid UTF-8, and raw bytes must never pass through. */
#include <string.h>

#include "util/utf8.h"

static const char REPLACEMENT[] = "\xef\xbf\xbd";

/* Length of the valid UTF-8 sequence at in (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), or 0 if it is not one. */
static size_t valid_seq(const uint8_t *in, size_t n)
{
	uint8_t c = in[0];
	size_t len;
	uint8_t lo = 0x80, hi = 0xbf;

	if (c >= 0x01 && c <= 0x7f)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;	/* NUL, continuation bytes, 0xc0/0xc1, >0xf4 */
	if (len > n)
		return 0;
	/* The second byte's range rules out overlongs and surrogates. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (in[1] < lo || in[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (in[i] < 0x80 || in[i] > 0xbf)
			return 0;
	return len;
}

size_t utf8__sanitize(const uint8_t *in, size_t n, char *out, size_t outlen)
{
	size_t i = 0, o = 0, bad = 0, len;

	if (!outlen)
		return 0;
	while (i < n) {
		len = valid_seq(in + i, n - i);
		if (len) {
			if (o + len >= outlen)
				break;
			memcpy(out + o, in + i, len);
			i += len;
		} else {
			if (o + 3 >= outlen)
				break;
			memcpy(out + o, REPLACEMENT, 3);
			i++;
			bad++;
		}
		o += len ? len : 3;
	}
	out[o] = '\0';
	return bad;
}
