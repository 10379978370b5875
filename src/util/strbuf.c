// SPDX-License-Identifier: BSD-2-Clause
/* A growing text buffer (strbuf.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/strbuf.h"
#include "util/utf8.h"

void strbuf__add(struct strbuf *b, const char *s, size_t n)
{
	int err;

	if (b->err)
		return;
	if (n > SIZE_MAX - b->len - 1) {
		b->err = -E2BIG;
		return;
	}
	err = grow__array(&b->p, &b->cap, b->len + n + 1, 1, 4096);
	if (err) {
		b->err = err;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void strbuf__puts(struct strbuf *b, const char *s)
{
	strbuf__add(b, s, strlen(s));
}

void strbuf__printf(struct strbuf *b, const char *fmt, ...)
{
	char small[256], *big;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->err = b->err ? b->err : -EINVAL;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		strbuf__add(b, small, (size_t)n);
		return;
	}
	big = malloc((size_t)n + 1);
	if (!big) {
		b->err = b->err ? b->err : -ENOMEM;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	strbuf__add(b, big, (size_t)n);
	free(big);
}

/* s made valid UTF-8 (each bad byte U+FFFD, 3 bytes: 3n + 1 is room for
 * any input), in small when it fits; NULL when out of memory. *heap: the
 * caller frees it. */
static char *valid_utf8(const char *s, char *small, size_t smallcap,
			char **heap)
{
	size_t n = strlen(s), cap = 3 * n + 1;

	*heap = NULL;
	if (cap > smallcap) {
		*heap = malloc(cap);
		if (!*heap)
			return NULL;
		small = *heap;
		smallcap = cap;
	}
	utf8__sanitize((const uint8_t *)s, n, small, smallcap);
	return small;
}

/* Appends s with the characters in bad replaced by what esc gives. */
static void add_escaped(struct strbuf *b, const char *s,
			const char *(*esc)(unsigned char c, char tmp[8]))
{
	char small[512], *heap, tmp[8];
	const char *v = valid_utf8(s, small, sizeof(small), &heap), *run, *e;

	if (!v) {
		b->err = b->err ? b->err : -ENOMEM;
		return;
	}
	for (run = v; *v; v++) {
		e = esc((unsigned char)*v, tmp);
		if (!e)
			continue;
		strbuf__add(b, run, (size_t)(v - run));
		strbuf__puts(b, e);
		run = v + 1;
	}
	strbuf__add(b, run, (size_t)(v - run));
	free(heap);
}

static const char *json_escape(unsigned char c, char tmp[8])
{
	switch (c) {
	case '"': return "\\\"";
	case '\\': return "\\\\";
	case '\n': return "\\n";
	case '\t': return "\\t";
	case '\r': return "\\r";
	}
	if (c >= 0x20 && c != 0x7f)
		return NULL;
	snprintf(tmp, 8, "\\u%04x", c);
	return tmp;
}

static const char *html_escape(unsigned char c, char tmp[8])
{
	(void)tmp;
	switch (c) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return "&quot;";
	case '\'': return "&#39;";
	}
	return NULL;
}

void strbuf__json_str(struct strbuf *b, const char *s)
{
	strbuf__add(b, "\"", 1);
	add_escaped(b, s, json_escape);
	strbuf__add(b, "\"", 1);
}

void strbuf__html(struct strbuf *b, const char *s)
{
	add_escaped(b, s, html_escape);
}

void strbuf__json_num(struct strbuf *b, double v)
{
	if (!isfinite(v))
		v = 0;
	/* Integers whole; others to the nanosecond in milliseconds. */
	if (v == (double)(int64_t)v && fabs(v) < 9e15)
		strbuf__printf(b, "%lld", (long long)v);
	else
		strbuf__printf(b, "%.6f", v);
}

void strbuf__free(struct strbuf *b)
{
	free(b->p);
	*b = (struct strbuf){ 0 };
}
