/* Minimal unit-test support. Each case prints one line that tests/run.sh
 * counts: "PASS name", "FAIL name: why" or "SKIP name: why". */
#ifndef TAGPROF_CHECK_H
#define TAGPROF_CHECK_H

#include <stdio.h>

static int check_failed_total;
static int check_case_failed;

/* Fails the current case with the condition and location, and returns. */
#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "  %s:%d: CHECK(%s) failed\n",     \
				__FILE__, __LINE__, #cond);                \
			check_case_failed = 1;                             \
			return;                                            \
		}                                                          \
	} while (0)

#define RUN(fn)                                                            \
	do {                                                               \
		check_case_failed = 0;                                     \
		fn();                                                      \
		if (check_case_failed) {                                   \
			printf("FAIL %s: see stderr\n", #fn);              \
			check_failed_total++;                              \
		} else {                                                   \
			printf("PASS %s\n", #fn);                          \
		}                                                          \
		fflush(stdout);                                            \
	} while (0)

#define SKIP(fn, why) printf("SKIP %s: %s\n", #fn, why)

#define CHECK_EXIT() return check_failed_total ? 1 : 0

#endif
