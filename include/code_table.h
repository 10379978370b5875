/* The code-region table: how libtagprof publishes the tagging dictionary
 * of generated code (tagprof_code_regions) and how the agent follows it.
 *
 * A process that registers code regions publishes, once, the address of an
 * anchor in its process context (extra attribute tagprof.code.table, an
 * int). The anchor names the current table, an append-only log of
 * records in the process's memory. The writer appends a record, then
 * stores the anchor's `used` with release order; a reader reads the anchor,
 * the bytes [its offset, used) of the table, then the anchor's `gen` again,
 * and keeps what it read only when `gen` did not change. So the agent
 * follows the log incrementally: one 64-byte read when nothing is new.
 *
 * The records: strings (STR), sets of a name and levels that use them
 * (SET), regions that each name a set (ADD: the regions of one
 * registration, 16 bytes each), and ends of regions (DROP). A string or a
 * set is defined once in a table, before a record uses it.
 *
 * When a table is full the writer builds a new one holding the live
 * regions (their ADD records with their first times) and the sets and
 * strings they use, then publishes it: gen odd, table/size/used/base_ns
 * stored, gen even again. A reader that sees gen change reads the new
 * table from its start.
 *
 * Times are CLOCK_MONOTONIC nanoseconds, the clock of the samples: a region
 * names the samples taken in [its ADD's time, the time of its DROP or of a
 * later ADD that overlaps it). So code memory reused for new code is never
 * attributed to the old code, whatever order the agent reads things in.
 *
 * Everything here comes from the profiled process: the agent bounds every
 * size and index and counts what it refuses. Native byte order. */
#ifndef TAGPROF_CODE_TABLE_H
#define TAGPROF_CODE_TABLE_H

#include <stdint.h>

#define TP_CODE_ATTR		"tagprof.code.table"	/* anchor address */
#define TP_CODE_MAGIC		"TPCODE1"		/* 8 bytes with the NUL */
#define TP_CODE_VERSION		1

#define TP_CODE_LEVELS_MAX	8	/* levels of one region */
#define TP_CODE_STR_MAX		511	/* bytes of a name or "key=value" */
#define TP_CODE_KEY_MAX		63	/* bytes of a level's key */
#define TP_CODE_TABLE_MAX	(64u << 20)	/* bytes of one table */

struct tp_code_anchor {
	char magic[8];		/* TP_CODE_MAGIC */
	uint32_t version;	/* TP_CODE_VERSION */
	uint32_t anchor_size;	/* sizeof(struct tp_code_anchor) */
	uint64_t gen;		/* even: stable; odd: a table switch is under way */
	uint64_t table;		/* address of the current table */
	uint64_t size;		/* its capacity in bytes */
	uint64_t used;		/* bytes of complete records in it */
	uint64_t base_ns;	/* when it was made: a region the reader knew
				 * live and that the new table lacks was
				 * dropped before this */
	uint64_t reserved;
};

enum tp_code_rec_kind {
	TP_CODE_REC_STR = 1,	/* defines string `id` (the bytes follow) */
	TP_CODE_REC_SET = 2,	/* defines set `id`: a name and levels */
	TP_CODE_REC_ADD = 3,	/* regions id, id+1...: tp_code_add, spans */
	TP_CODE_REC_DROP = 4,	/* region `id` ended at time_ns */
};

/* Every record starts so; size is the whole record, a multiple of 8. */
struct tp_code_rec {
	uint32_t size;
	uint16_t kind;
	uint16_t count;		/* STR: bytes of the string (no NUL stored);
				 * SET: levels; ADD: spans; DROP: 0 */
	uint64_t id;		/* STR: string id; SET: set id (both from 1,
				 * defined before use, per table); ADD: the
				 * first region's id; DROP: the region's.
				 * Region ids count from 1 and are never
				 * reused in a process. */
};

/* A region's name and its levels, shared by the regions that have the
 * same ones: a compiled query's regions name a few sets. */
struct tp_code_set {
	struct tp_code_rec h;
	uint32_t name;		/* string id of the name; 0: none */
	uint32_t reserved;	/* 0 */
	uint32_t levels[];	/* h.count string ids ("key=value"), lowest
				 * level first, at offset 24 */
};

struct tp_code_span {
	uint64_t start;
	uint32_t len;		/* bytes of code; at most 4 GiB - 1 */
	uint32_t set;		/* its set id */
};

/* The regions of one registration (tagprof_code_regions), registered at
 * time_ns: h.count spans, the i-th region's id h.id + i. */
struct tp_code_add {
	struct tp_code_rec h;
	uint64_t time_ns;
	struct tp_code_span spans[];
};

struct tp_code_drop {
	struct tp_code_rec h;
	uint64_t time_ns;
};

#define TP_CODE_SPANS_MAX	4096	/* spans in one ADD record */

_Static_assert(sizeof(struct tp_code_set) == 24, "levels at offset 24");
_Static_assert(sizeof(struct tp_code_span) == 16, "a span is 16 bytes");
_Static_assert(sizeof(struct tp_code_add) == 24, "spans at offset 24");
_Static_assert(sizeof(struct tp_code_drop) == 24, "a drop is 24 bytes");

#endif
