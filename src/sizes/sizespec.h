/* --size: how tagprof sizes reads a function's input size at its entry
 * (struct tp_sz_func, include/sizes_event.h). */
#ifndef TAGPROF_SIZESPEC_H
#define TAGPROF_SIZESPEC_H

#include <stddef.h>

#include "sizes_event.h"

#define SIZESPEC_KEY_MAX 32	/* a label key's bytes (TP_CL_KEY_MAX) */

struct sizespec {
	struct tp_sz_func fn;
	char label[SIZESPEC_KEY_MAX + 1];	/* TP_SZ_LABEL: the key */
};

/* Parses one of
 *	argN			N = 1..6, the integer argument register
 *	argN->OFF		the u64 at argN + OFF (decimal or 0x hex)
 *	*(uW *)(argN+OFF)	W = 8, 16, 32, 64; "+OFF" optional
 *	*(uW *)argN
 *	label:KEY		the thread's label KEY, a decimal number
 * Returns 0, or -EINVAL with why in err. */
int sizespec__parse(const char *s, struct sizespec *out, char *err,
		    size_t errlen);

#endif
