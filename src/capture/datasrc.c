// SPDX-License-Identifier: BSD-2-Clause
/* union perf_mem_data_src, decoded from the uapi's field layout
 * (linux/perf_event.h): the older mem_lvl bits and, where the kernel
 * fills it, the newer mem_lvl_num with mem_remote and mem_snoopx, which
 * name levels the bits cannot (L4, CXL, peer caches). */
#include "capture/datasrc.h"

#include <stdbool.h>
#include <stdio.h>
#include <linux/perf_event.h>

/* The fields, as the uapi's little-endian bitfield lays them out. */
#define FIELD(src, shift, bits)	(((src) >> (shift)) & ((1ull << (bits)) - 1))
#define SRC_LVL(s)	FIELD(s, PERF_MEM_LVL_SHIFT, 14)
#define SRC_SNOOP(s)	FIELD(s, PERF_MEM_SNOOP_SHIFT, 5)
#define SRC_LOCK(s)	FIELD(s, PERF_MEM_LOCK_SHIFT, 2)
#define SRC_TLB(s)	FIELD(s, PERF_MEM_TLB_SHIFT, 7)
#define SRC_LVLNUM(s)	FIELD(s, PERF_MEM_LVLNUM_SHIFT, 4)
#define SRC_REMOTE(s)	FIELD(s, PERF_MEM_REMOTE_SHIFT, 1)
#define SRC_SNOOPX(s)	FIELD(s, PERF_MEM_SNOOPX_SHIFT, 2)

/* The level by mem_lvl_num, or NULL where it says nothing. */
static const char *level_num(uint64_t src)
{
	bool remote = SRC_REMOTE(src);

	switch (SRC_LVLNUM(src)) {
	case PERF_MEM_LVLNUM_L1:
		return "L1";
	case PERF_MEM_LVLNUM_L2:
		return remote ? "remote L2" : "L2";
	case PERF_MEM_LVLNUM_L3:
		return remote ? "remote L3" : "L3";
	case PERF_MEM_LVLNUM_L4:
		return remote ? "remote L4" : "L4";
	case PERF_MEM_LVLNUM_CXL:
		return "CXL";
	case PERF_MEM_LVLNUM_IO:
		return "I/O";
	case PERF_MEM_LVLNUM_ANY_CACHE:
		return remote ? "remote cache" : "cache";
	case PERF_MEM_LVLNUM_LFB:
		return "LFB";
	case PERF_MEM_LVLNUM_RAM:
		return remote ? "remote DRAM" : "local DRAM";
	case PERF_MEM_LVLNUM_PMEM:
		return remote ? "remote PMEM" : "PMEM";
	}
	return NULL;
}

/* The level by the older mem_lvl bits: the first one set, nearest first. */
static const char *level_bits(uint64_t lvl)
{
	static const struct { uint64_t bit; const char *name; } levels[] = {
		{ PERF_MEM_LVL_L1, "L1" },
		{ PERF_MEM_LVL_LFB, "LFB" },
		{ PERF_MEM_LVL_L2, "L2" },
		{ PERF_MEM_LVL_L3, "L3" },
		{ PERF_MEM_LVL_LOC_RAM, "local DRAM" },
		{ PERF_MEM_LVL_REM_RAM1, "remote DRAM" },
		{ PERF_MEM_LVL_REM_RAM2, "remote DRAM" },
		{ PERF_MEM_LVL_REM_CCE1, "remote cache" },
		{ PERF_MEM_LVL_REM_CCE2, "remote cache" },
		{ PERF_MEM_LVL_IO, "I/O" },
		{ PERF_MEM_LVL_UNC, "uncached" },
	};

	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (lvl & levels[i].bit)
			return levels[i].name;
	return NULL;
}

const char *datasrc__describe(uint64_t src, char *buf, size_t len)
{
	uint64_t lvl = SRC_LVL(src), tlb = SRC_TLB(src);
	const char *level = level_num(src);
	const char *sep = "";
	int n = 0;

#define ADD(...)							\
	do {								\
		if (n >= 0 && (size_t)n < len)				\
			n += snprintf(buf + n, len - n, __VA_ARGS__);	\
	} while (0)

	if (!len)
		return buf;
	buf[0] = '\0';
	if (SRC_SNOOPX(src) & PERF_MEM_SNOOPX_PEER)
		level = "peer cache";
	if (!level)
		level = level_bits(lvl);
	if (level) {
		ADD("%s%s", level, lvl & PERF_MEM_LVL_MISS ? " miss" :
				   lvl & PERF_MEM_LVL_HIT ? " hit" : "");
		sep = ", ";
	}
	if (tlb & PERF_MEM_TLB_MISS) {
		ADD("%sTLB miss", sep);
		sep = ", ";
	} else if (tlb & PERF_MEM_TLB_HIT) {
		ADD("%sTLB hit", sep);
		sep = ", ";
	}
	if (SRC_SNOOP(src) & PERF_MEM_SNOOP_HITM) {
		ADD("%sHITM", sep);
		sep = ", ";
	}
	if (SRC_LOCK(src) & PERF_MEM_LOCK_LOCKED)
		ADD("%slocked", sep);
#undef ADD
	if (!buf[0])
		snprintf(buf, len, "unknown");
	return buf;
}
