/* Growing an array by doubling, so that appending stays O(1) amortized.
 * One implementation, with the overflow checks, for every growable array
 * of the agent. */
#ifndef TAGPROF_GROW_H
#define TAGPROF_GROW_H

#include <stddef.h>
#include <stdint.h>

/* Makes room for need elements of elem_size bytes in the array whose
 * pointer is at arrp (a pointer to any pointer), *cap of them now. The
 * capacity doubles, from first_cap when the array has none yet, until need
 * fits, and stops at max: callers with a memory bound pass what is left of
 * it. On failure the array and *cap stay as they were. 0; -E2BIG when need
 * is over max; -ENOMEM when the size overflows or realloc fails. */
int grow__array_max(void *arrp, size_t *cap, size_t need, size_t elem_size,
		    size_t first_cap, size_t max);

/* The same without a bound. */
static inline int grow__array(void *arrp, size_t *cap, size_t need,
			      size_t elem_size, size_t first_cap)
{
	return grow__array_max(arrp, cap, need, elem_size, first_cap,
			       SIZE_MAX);
}

#endif
