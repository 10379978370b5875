/* Lookups by address in arrays sorted by start address: mappings, symbol
 * tables, compile-unit and function ranges. The question is always "which
 * element has the greatest start <= addr"; whether addr also lies below
 * that element's end is the caller's, since each array bounds its ranges
 * in its own way (an end, a size, or the next start).
 *
 * Inline: it runs for every frame of every sample, and with the element
 * size and offset known at the call it compiles to the loop written out. */
#ifndef TAGPROF_SORTEDRANGE_H
#define TAGPROF_SORTEDRANGE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* In the n elements of elem_size bytes at base, sorted by the uint64_t at
 * start_off in each: how many start at or below addr. So the element with
 * the greatest start <= addr is the one before the index returned (the
 * last of equal starts), and 0 means addr is below them all. */
static inline size_t sortedrange__upper(const void *base, size_t n,
					size_t elem_size, size_t start_off,
					uint64_t addr)
{
	const char *p;
	size_t lo = 0, hi = n;
	uint64_t start;

	/* base may be NULL when n is 0: no arithmetic on it then. */
	if (!n)
		return 0;
	p = (const char *)base + start_off;
	memcpy(&start, p, sizeof(start));
	if (start > addr)
		return 0;
	/* Invariant: element lo starts at or below addr, hi (or the end)
	 * above it. Both sides assign mid, which compilers turn into
	 * conditional moves: no branch to mispredict per step. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		memcpy(&start, p + mid * elem_size, sizeof(start));
		if (start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return lo + 1;
}

/* The element with the greatest start <= addr, NULL when there is none. */
static inline const void *sortedrange__floor(const void *base, size_t n,
					     size_t elem_size, size_t start_off,
					     uint64_t addr)
{
	size_t i = sortedrange__upper(base, n, elem_size, start_off, addr);

	return i ? (const char *)base + (i - 1) * elem_size : NULL;
}

/* The same on a typed array arr of n elements sorted by their uint64_t
 * member field; FLOOR gives a pointer of arr's type. */
#define SORTEDRANGE_CHECK(arr, field)					\
	_Static_assert(sizeof((arr)[0].field) == sizeof(uint64_t),	\
		       "sorted by a 64-bit start")
#define SORTEDRANGE_UPPER(arr, n, field, addr)				\
	({								\
		SORTEDRANGE_CHECK(arr, field);				\
		sortedrange__upper((arr), (n), sizeof((arr)[0]),	\
				   offsetof(__typeof__((arr)[0]), field),	\
				   (addr));				\
	})
#define SORTEDRANGE_FLOOR(arr, n, field, addr)				\
	({								\
		SORTEDRANGE_CHECK(arr, field);				\
		(__typeof__(&(arr)[0]))sortedrange__floor(		\
			(arr), (n), sizeof((arr)[0]),			\
			offsetof(__typeof__((arr)[0]), field), (addr));	\
	})

#endif
