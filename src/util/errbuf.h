/* Error messages written into a caller's buffer, for functions that report
 * failures as text (event parsing, push set-up). */
#ifndef TAGPROF_ERRBUF_H
#define TAGPROF_ERRBUF_H

#include <stddef.h>

/* Formats into err (errlen bytes, always terminated); nothing when err is
 * NULL or errlen is 0. */
void errbuf__set(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
