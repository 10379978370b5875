// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

int grow__array_max(void *arrp, size_t *cap, size_t need, size_t elem_size,
		    size_t first_cap, size_t max)
{
	void *arr, *grown;
	size_t ncap;

	if (need <= *cap)
		return 0;
	if (need > max)
		return -E2BIG;
	ncap = *cap ? *cap : first_cap ? first_cap : 1;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > max)
		ncap = max;
	if (!elem_size || ncap > SIZE_MAX / elem_size)
		return -ENOMEM;
	/* arrp may point at any object pointer: copied, not cast, to it. */
	memcpy(&arr, arrp, sizeof(arr));
	grown = realloc(arr, ncap * elem_size);
	if (!grown)
		return -ENOMEM;
	memcpy(arrp, &grown, sizeof(grown));
	*cap = ncap;
	return 0;
}
