/* A shell command for the unit tests that build helper programs (cc, nm,
 * objcopy...): formatted, run with system(3). */
#ifndef TAGPROF_TEST_SHELL_H
#define TAGPROF_TEST_SHELL_H

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* Whether the command fmt formats ran and exited 0. */
static inline __attribute__((format(printf, 1, 2))) bool
sh(const char *fmt, ...)
{
	char cmd[8 * PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd) == 0;
}

#endif
