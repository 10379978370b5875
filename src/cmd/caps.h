#ifndef TAGPROF_CAPS_H
#define TAGPROF_CAPS_H

#include <stdbool.h>
#include <stddef.h>

/* True when this process may load BPF programs and open system-wide perf
 * events (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN). Otherwise writes a
 * one-line explanation into why. */
bool caps__can_profile(char *why, size_t len);

#endif
