/* Command-line values shared by the commands (record, sizes). */
#ifndef TAGPROF_ARGS_H
#define TAGPROF_ARGS_H

#include <stdbool.h>
#include <stdint.h>

/* Parses a positive decimal into *v (at most max); false if not one. */
bool args__parse_u64(const char *s, uint64_t max, uint64_t *v);

#endif
