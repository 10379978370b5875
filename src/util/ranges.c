// SPDX-License-Identifier: BSD-2-Clause
/* Free ranges of an array (ranges.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/ranges.h"

void ranges__init(struct ranges *r, uint32_t limit)
{
	memset(r, 0, sizeof(*r));
	r->limit = limit;
}

void ranges__free(struct ranges *r)
{
	free(r->free);
	ranges__init(r, r->limit);
}

int ranges__take(struct ranges *r, uint32_t len, bool grow,
		 uint32_t *start)
{
	for (size_t i = 0; i < r->n; i++) {
		struct ranges_span *f = &r->free[i];

		if (f->len < len)
			continue;
		*start = f->start;
		f->start += len;
		f->len -= len;
		if (!f->len) {
			memmove(f, f + 1, (r->n - i - 1) * sizeof(*f));
			r->n--;
		}
		return 0;
	}
	if (!grow || len > r->limit - r->top)
		return -ENOSPC;
	*start = r->top;
	r->top += len;
	return 0;
}

int ranges__give(struct ranges *r, uint32_t start, uint32_t len)
{
	size_t i = 0;
	struct ranges_span *f;

	while (i < r->n && r->free[i].start < start)
		i++;
	/* Joined to the range before, the one after, or both. */
	if (i > 0 && r->free[i - 1].start + r->free[i - 1].len == start) {
		f = &r->free[i - 1];
		f->len += len;
		if (i < r->n && f->start + f->len == r->free[i].start) {
			f->len += r->free[i].len;
			memmove(&r->free[i], &r->free[i + 1],
				(r->n - i - 1) * sizeof(*f));
			r->n--;
		}
	} else if (i < r->n && start + len == r->free[i].start) {
		r->free[i].start = start;
		r->free[i].len += len;
	} else {
		if (grow__array(&r->free, &r->cap, r->n + 1, sizeof(*r->free),
				16))
			return -ENOMEM;
		memmove(&r->free[i + 1], &r->free[i],
			(r->n - i) * sizeof(*r->free));
		r->free[i] = (struct ranges_span){ start, len };
		r->n++;
	}
	/* The last free range ends at the top: it is the top's again. */
	f = &r->free[r->n - 1];
	if (f->start + f->len == r->top) {
		r->top = f->start;
		r->n--;
	}
	return 0;
}

uint64_t ranges__free_below_top(const struct ranges *r)
{
	uint64_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += r->free[i].len;
	return n;
}
