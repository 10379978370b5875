/* A memory sample's data source (union perf_mem_data_src, from PEBS or
 * IBS) in words: where the access was served and what the TLB and the
 * other caches said, e.g. "L1 hit", "L3 miss, TLB miss", "local DRAM",
 * "remote DRAM, HITM", "peer cache". */
#ifndef TAGPROF_DATASRC_H
#define TAGPROF_DATASRC_H

#include <stddef.h>
#include <stdint.h>

/* Writes the description of src into buf (always terminated). Returns
 * buf; "unknown" when src says nothing. */
const char *datasrc__describe(uint64_t src, char *buf, size_t len);

#endif
