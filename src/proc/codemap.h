/* A process's tagging dictionary of generated code, as the agent follows
 * it: the code-region table the process publishes (include/code_table.h),
 * read incrementally from its memory, and the regions it names, each valid
 * over an interval of time. A sample is attributed to the region of the
 * innermost frame of its stack that lies in a region valid when the sample
 * was taken; the region's levels become its labels (capture/labels.h).
 *
 * Everything read comes from the profiled process: records are bounded
 * and checked, and what is refused is counted (struct codemap_stats). */
#ifndef TAGPROF_CODEMAP_H
#define TAGPROF_CODEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "code_table.h"
#include "util/counter.h"

#define CODEMAP_REGIONS_MAX	(1u << 20)	/* regions kept, per process */
#define CODEMAP_STRS_MAX	(16u << 20)	/* bytes of strings, per process */
/* How long a region is kept after it ended: samples are resolved within
 * about a second of being taken, so one taken while it was live still
 * finds it. */
#define CODEMAP_KEEP_NS		(10ull * 1000 * 1000 * 1000)

/* X(field, text) (util/counter.h). */
#define CODEMAP_COUNTERS(X)						\
	X(tables, "tables followed")	/* processes with a table */	\
	X(added, "regions added")					\
	X(dropped, "dropped")						\
	/* live regions ended by a newer one over the same code */	\
	X(overlapped, "ended by an overlapping one")			\
	/* records that failed their checks (a bad size stops the	\
	 * table until the process publishes a new one) */		\
	X(bad_records, "bad records")					\
	/* reads that saw the table switch under them, retried */	\
	X(torn_reads, "torn reads retried")				\
	X(unreadable, "table reads failed")				\
	/* regions or strings not kept: per-process bounds */		\
	X(over_budget, "not kept over the bounds")			\
	/* samples in a region live at the last read of its table, taken	\
	 * after it, when no read could follow (the process was gone):	\
	 * the region may have ended since, so they are not attributed */	\
	X(unverified, "not attributed: newer than the last read of a "	\
	  "table gone")							\
	X(samples, "samples of those processes")			\
	X(attributed, "attributed to a region")

struct codemap_stats {
	CODEMAP_COUNTERS(COUNTER_FIELD)
};

/* A region's levels, split at '=' and interned: equal sets are one. */
struct code_levels {
	uint32_t n;
	const char *key[TP_CODE_LEVELS_MAX];
	const char *val[TP_CODE_LEVELS_MAX];
};

struct code_region {
	uint64_t start, end;		/* [start, end) */
	uint64_t from_ns, to_ns;	/* valid then; to_ns UINT64_MAX: live */
	uint64_t id;
	const char *name;		/* NULL: none */
	const struct code_levels *levels;
};

struct codemap;

/* A map following the table whose anchor is at anchor in pid's memory. */
struct codemap *codemap__new(uint32_t pid, uint64_t anchor);
void codemap__free(struct codemap *m);		/* accepts NULL */

/* Applies the records in buf (len bytes read from the table at the map's
 * current offset), which hold whole records only. Returns the bytes
 * consumed; fewer than len when a record's size is bad (the rest of the
 * table is refused, counted once). The pure part of reading: fuzzable. */
size_t codemap__apply(struct codemap *m, const uint8_t *buf, size_t len,
		      struct codemap_stats *st);

/* The current table changed (a compaction, made at base_ns): the next
 * records are read from its start, and a region the map holds live that
 * the new table does not add again ended by base_ns (codemap__apply
 * counts re-adds by id; call codemap__switch_done after its records). */
void codemap__switch(struct codemap *m, uint64_t base_ns);
void codemap__switch_done(struct codemap *m);

/* Reads what the process appended since the last read (one 64-byte read
 * when nothing is new), now being CLOCK_MONOTONIC. 0, or -errno when the
 * table could not be read (counted). */
int codemap__refresh(struct codemap *m, uint64_t now_ns,
		     struct codemap_stats *st);

/* The region holding addr at time t, the newest if several do; NULL when
 * none, or when it is live but t is past the last complete read of the
 * table (it may have ended since). */
const struct code_region *codemap__find(struct codemap *m, uint64_t addr,
					uint64_t t);

/* The region of the innermost of the nu user frames (leaf first) that lies
 * in one at time t: reads the table first when the sample is newer than
 * the last read. *leaf tells whether it is the leaf frame's. Counts the
 * sample and its attribution in st and in the map. */
const struct code_region *codemap__attribute(struct codemap *m,
					     const uint64_t *user, size_t nu,
					     uint64_t t, bool *leaf,
					     struct codemap_stats *st);

/* Reads the table again when a sample was attributed against it within
 * the last second and the last read is over `every` ns old: so what a
 * process dropped before it exits is known, and the samples resolved
 * after its exit are attributed. */
void codemap__tick(struct codemap *m, uint64_t now_ns, uint64_t every,
		   struct codemap_stats *st);

/* Forgets regions that ended over CODEMAP_KEEP_NS before now. */
void codemap__prune(struct codemap *m, uint64_t now_ns);

/* The levels' keys, outermost first, "query > operator > pipeline", of
 * the region with the most levels seen; "" when none. */
const char *codemap__level_order(const struct codemap *m);

/* Samples of the process seen and attributed, since the map began and
 * since the last codemap__window_reset. */
void codemap__counts(const struct codemap *m, uint64_t *samples,
		     uint64_t *attributed, uint64_t *win_samples,
		     uint64_t *win_attributed);
void codemap__window_reset(struct codemap *m);

size_t codemap__count(const struct codemap *m);	/* regions held */
uint64_t codemap__anchor(const struct codemap *m);	/* as given */
size_t codemap__bytes(const struct codemap *m);	/* memory held */

#endif
