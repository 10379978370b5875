/* The --unwind and --stack-bytes options (record's flags and the agent's
 * configuration): the modes' names, and the stack copy's size. */
#ifndef TAGPROF_UNWIND_MODE_H
#define TAGPROF_UNWIND_MODE_H

#include <stdint.h>

/* "fp", "dwarf", "auto" -> enum tp_unwind_mode; -1 if none of those. */
int unwind_mode__parse(const char *s);
const char *unwind_mode__name(int mode);
/* --stack-bytes: rounded up to a multiple of 8, at most TP_STACK_MAX;
 * 0 stays 0 (invalid). */
uint32_t unwind_mode__stack_bytes(uint64_t v);

#endif
