// SPDX-License-Identifier: BSD-2-Clause
#include <stdarg.h>
#include <stdio.h>

#include "util/errbuf.h"

void errbuf__set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
