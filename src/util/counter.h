/* Stats structs declared by X-macro lists.
 *
 * A module's counters are one list, NAME_COUNTERS(X), of X(field, text)
 * entries: the struct is generated from it (COUNTER_FIELD), and the
 * profile's comments and the end-of-run summary print each counter as
 * "NUMBER TEXT" from the same list (capture/counters.h), so a counter's
 * name and what it means are written once. A list with sizes in bytes
 * takes a second macro, NAME_COUNTERS(X, K): K(field, text) entries are
 * printed as "NUMBER KiB TEXT". */
#ifndef TAGPROF_COUNTER_H
#define TAGPROF_COUNTER_H

#include <stdint.h>

#define COUNTER_FIELD(field, text)	uint64_t field;

/* A number macro as a string, for a text that names a limit. */
#define COUNTER_STR(x)	COUNTER_STR_(x)
#define COUNTER_STR_(x)	#x

#endif
