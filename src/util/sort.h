/* qsort and qsort_r for arrays that may be empty. glibc declares their
 * base nonnull, even for no elements, and an empty array here is often a
 * NULL pointer (nothing allocated yet): passing it is undefined behaviour,
 * which UBSan reports (make check SANITIZE=address,undefined). */
#ifndef TAGPROF_SORT_H
#define TAGPROF_SORT_H

#include <stdlib.h>

static inline void sort__array(void *base, size_t n, size_t size,
			       int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static inline void sort__array_r(void *base, size_t n, size_t size,
				 int (*cmp)(const void *, const void *, void *),
				 void *arg)
{
	if (n > 1)
		qsort_r(base, n, size, cmp, arg);
}

#endif
