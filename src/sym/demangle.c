// SPDX-License-Identifier: BSD-2-Clause
/* Demangling through libiberty's callback interfaces: they write into our
 * buffer as they go, so a hostile name that demangles to megabytes costs
 * no allocation, only the bounded work the demanglers allow (libiberty
 * limits its own recursion). */
#include <string.h>

#include <libiberty/demangle.h>

#include "sym/demangle.h"

/* Mangled names longer than this are left as they are. */
#define MANGLED_MAX 8192

struct sink {
	char *buf;
	size_t cap, len;
	bool cut;
};

static void put(const char *s, size_t n, void *opaque)
{
	struct sink *k = opaque;

	if (k->cut)
		return;
	if (n > k->cap - 1 - k->len) {
		n = k->cap - 1 - k->len;
		k->cut = true;
	}
	memcpy(k->buf + k->len, s, n);
	k->len += n;
}

/* Cuts at a character boundary and marks the cut. */
static void finish(struct sink *k)
{
	if (k->cut && k->cap > 4) {
		size_t n = k->len < k->cap - 4 ? k->len : k->cap - 4;

		while (n && ((unsigned char)k->buf[n] & 0xc0) == 0x80)
			n--;
		memcpy(k->buf + n, "...", 3);
		k->len = n + 3;
	}
	k->buf[k->len] = '\0';
}

bool demangle__name(const char *raw, char *out, size_t outlen)
{
	const int opts = DMGL_PARAMS | DMGL_ANSI;
	struct sink k = { .buf = out, .cap = outlen };
	bool ok = false;

	if (!raw || !out || outlen < 8 || raw[0] != '_' ||
	    (raw[1] != 'Z' && raw[1] != 'R') || strnlen(raw, MANGLED_MAX) == MANGLED_MAX)
		return false;
	/* Rust legacy names are Itanium-mangled too: Rust first, as
	 * libiberty's auto style does, so its hash suffix is dropped. */
	if (rust_demangle_callback(raw, opts, put, &k) && k.len) {
		ok = true;
	} else if (raw[1] == 'Z') {
		k.len = 0;
		k.cut = false;
		ok = cplus_demangle_v3_callback(raw, opts, put, &k) && k.len;
	}
	if (!ok)
		return false;
	finish(&k);
	return true;
}
