// SPDX-License-Identifier: BSD-2-Clause
#include "util/clock.h"

uint64_t clock__ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t clock__mono_ns(void)
{
	return clock__ns(CLOCK_MONOTONIC);
}

uint64_t clock__mono_ms(void)
{
	return clock__mono_ns() / 1000000;
}
