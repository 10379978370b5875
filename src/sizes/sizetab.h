/* Input-sensitive profiles (tagprof sizes, issue 17): the measured tuples,
 * one per (function, size), as aprof keeps them, and their files. The
 * capture (src/cmd/sizes.c) fills a sizetab from the BPF maps; the
 * analysis (fit.h) and the views read one, from a capture or a file. */
#ifndef TAGPROF_SIZETAB_H
#define TAGPROF_SIZETAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One (function, size) tuple. Sizes up to 1024 are exact; above, a tuple
 * is a log-linear bucket (16 per power of two), named by its lower bound
 * `size`, and size_sum / calls is the mean size of its calls, which the
 * fits use. Costs are in the table's unit (sizetab.cost_unit). */
struct size_tuple {
	uint64_t size;		/* the exact size, or the bucket's lower bound */
	uint64_t calls;
	uint64_t size_sum;	/* sum of the calls' sizes */
	uint64_t min, max;	/* cost of one call */
	uint64_t sum;		/* cost, all calls */
	double sumsq;		/* sum of the squares of each call's cost */
};

struct size_func {
	char *name;		/* as given: SYMBOL or BINARY:SYMBOL */
	char *binary;		/* the file probed (absolute path) */
	char *size_spec;	/* as given: arg2, arg1->0x10, label:rows, ... */
	uint64_t calls_seen;	/* entries, measured or not */
	uint64_t calls_skipped;	/* deeper than the shadow stack (64) */
	uint64_t size_faults;	/* the size could not be read (call not kept) */
	size_t n;		/* tuples, sorted by size */
	struct size_tuple *t;
};

struct sizetab {
	char *cost_unit;	/* "ns", or a counter's name ("instructions") */
	char *probe_mode;	/* "uprobe session" or "uprobe+uretprobe" */
	uint64_t sample_every;	/* rate guard: 1 call in N measured (1: all) */
	uint64_t tuples_dropped; /* the maps were full: tuples not kept */
	uint64_t duration_ns;
	size_t nfuncs;
	struct size_func *funcs;
};

/* Adds an empty function; returns it, or NULL on ENOMEM. The strings are
 * copied. */
struct size_func *sizetab__add_func(struct sizetab *t, const char *name,
				    const char *binary, const char *size_spec);
/* Adds a tuple to f, or merges it with the one of the same size (calls,
 * sums add, min/max combine): at once when it is the last one added,
 * else in sizetab__sort. Returns 0 or -ENOMEM. Call sizetab__sort after
 * the last. f->t must have been grown by sizefunc__add (or be NULL). */
int sizefunc__add(struct size_func *f, const struct size_tuple *tu);
void sizetab__sort(struct sizetab *t);
void sizetab__free(struct sizetab *t);	/* the members; t itself is the caller's */

/* Files (docs/sizes.md). CSV: comment lines "# key: value" (cost_unit,
 * probe_mode, sample_every, tuples_dropped, duration_ns, tuples (the
 * number of rows, so that a file cut short shows); one
 * "# function: NAME,BINARY,SIZE_SPEC,CALLS_SEEN,CALLS_SKIPPED,SIZE_FAULTS"
 * per function), then the header
 *	function,size,calls,size_sum,min,max,sum,sumsq
 * and one row per tuple. JSON: one object, {"format": "tagprof-sizes",
 * "version": 1, "cost_unit", "probe_mode", "sample_every",
 * "tuples_dropped", "duration_ns", "tuple_fields": [...], "functions":
 * [{"name", "binary", "size_spec", "calls_seen", "calls_skipped",
 * "size_faults", "tuples": [[size, calls, size_sum, min, max, sum,
 * sumsq], ...]}, ...]}. Numbers are whole and exact; sumsq is written
 * with 17 digits, so a table reads back equal. Control characters in
 * strings are written as '?' (no reader takes them). Both are read back
 * by sizetab__read, which tells them apart by their first byte ('{').
 * The writers return 0, -ENOMEM, -errno of the stream, or -EINVAL for a
 * sumsq that is not a finite number >= 0 (nothing could read it back). */
#define SIZETAB_VERSION		1
#define SIZETAB_CSV_HEADER	"function,size,calls,size_sum,min,max,sum,sumsq"
#define SIZETAB_JSON_FORMAT	"tagprof-sizes"
#define SIZETAB_JSON_FIELDS	"\"size\", \"calls\", \"size_sum\", \"min\", " \
				"\"max\", \"sum\", \"sumsq\""
/* What a file may hold: more is refused as not ours. */
#define SIZETAB_MAX_FILE	(256u << 20)
#define SIZETAB_MAX_FUNCS	4096
#define SIZETAB_MAX_TUPLES	(4u << 20)	/* all functions' */
#define SIZETAB_MAX_STR		4096		/* a name, path or spec */

int sizetab__write_csv(const struct sizetab *t, FILE *out);
int sizetab__write_json(const struct sizetab *t, FILE *out);
/* t into path, JSON when the name ends in .json, else CSV; written whole
 * or not at all (atomicfile.h), mode 0640. */
int sizetab__save(const struct sizetab *t, const char *path, char *err,
		  size_t errlen);

/* Reads a file that sizetab__write_* wrote into t (empty, zeroed), its
 * tuples sorted. A file is never trusted: anything that is not one of
 * the two shapes, or whose numbers cannot be (a tuple with no calls, min
 * above max), is refused with -EINVAL and where: "line 12: ..." (CSV),
 * "line 3, byte 1045: ..." (JSON). On failure t is empty. */
int sizetab__read(struct sizetab *t, const char *path, char *err, size_t errlen);
/* The same from len bytes in memory (for tests and fuzzing). */
int sizetab__parse(struct sizetab *t, const char *buf, size_t len, char *err,
		   size_t errlen);

#endif
