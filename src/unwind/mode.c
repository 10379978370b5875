// SPDX-License-Identifier: BSD-2-Clause
/* The --unwind and --stack-bytes options (mode.h). */
#include <string.h>

#include "sample_event.h"
#include "unwind/mode.h"

int unwind_mode__parse(const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "auto"))
		return TP_UNWIND_AUTO;
	if (!strcmp(s, "fp"))
		return TP_UNWIND_FP;
	if (!strcmp(s, "dwarf"))
		return TP_UNWIND_DWARF;
	return -1;
}

const char *unwind_mode__name(int mode)
{
	switch (mode) {
	case TP_UNWIND_FP: return "fp";
	case TP_UNWIND_DWARF: return "dwarf";
	default: return "auto";
	}
}

uint32_t unwind_mode__stack_bytes(uint64_t v)
{
	if (v == 0)
		return 0;
	if (v > TP_STACK_MAX)
		return TP_STACK_MAX;
	return (uint32_t)((v + 7) & ~7ull);
}
