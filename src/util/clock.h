/* Clock readings as one 64-bit count of nanoseconds: intervals, deadlines
 * and window stamps all use this form. */
#ifndef TAGPROF_CLOCK_H
#define TAGPROF_CLOCK_H

#include <stdint.h>
#include <time.h>

/* The time on clock id, in ns; 0 when the clock cannot be read (callers
 * that convert between clocks take 0 for "unknown"). */
uint64_t clock__ns(clockid_t id);

/* CLOCK_MONOTONIC: what every interval and retry deadline is measured on,
 * since it neither jumps with the wall clock nor counts suspend. */
uint64_t clock__mono_ns(void);

/* The same in milliseconds, for the push queue's timers. */
uint64_t clock__mono_ms(void);

#endif
