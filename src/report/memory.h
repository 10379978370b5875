/* `tagprof report memory`: where memory-access samples went, by data
 * object (record -e page-faults, minor-faults, major-faults, mem-loads,
 * mem-stores, with -T). Each sample carries the data address (numeric
 * label addr), what the address belongs to (string label data_object),
 * and for loads and stores a latency (numeric label weight, cycles).
 *
 * Addresses are grouped into buckets of a power-of-two size, as the PEBS
 * memory-tracing paper does: a sample stands for the bucket it falls in,
 * which makes up for the accesses sampling misses. Per data object (and
 * per value of a label or tag field with --by) the report shows time
 * against address (a heatmap), the samples per bucket, their skew and the
 * hot working set: the bytes accessed at least k times.
 *
 * Memory stays bounded by the samples, never by the address spread: only
 * touched buckets are counted (a hash map, then an array sorted by
 * address), and an object whose buckets lie far apart (several mappings,
 * kernel and user addresses) is drawn as panels split at the gaps. */
#ifndef TAGPROF_MEMORY_H
#define TAGPROF_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/merge.h"
#include "report/pprofin.h"
#include "util/strbuf.h"

#define MEM_NONE		UINT32_MAX
/* A sample's component when it lacks the --by key. */
#define MEM_NOVAL		(UINT32_MAX - 1)
#define MEM_NO_TIME		INT64_MIN

#define MEM_BUCKET_MIN		8ull
#define MEM_BUCKET_MAX		(1ull << 30)
#define MEM_BUCKET_DEFAULT	4096ull

/* Rows of a heatmap panel at most: a panel that spans more buckets puts
 * several in a row. */
#define MEM_PANEL_ROWS		160
/* Panels an object is split into at most, and drawn at most (those with
 * the most samples; the rest are summarised). */
#define MEM_SPLIT_MAX		1024
#define MEM_PANELS_DRAWN	16
#define MEM_TOP_BUCKETS		10
/* k = 1, 2, 4, ... 2^63: the working-set curve's points at most. */
#define MEM_WS_POINTS		64

/* "64", "4K", "4KiB", "2M", "1GiB": bytes, a power of two from
 * MEM_BUCKET_MIN to MEM_BUCKET_MAX (K, M, G are binary; KB, KiB, k all
 * mean 1024). 0; -EINVAL with why in err. */
int mem_bucket__parse(const char *s, uint64_t *size, char *err,
		      size_t errlen);

/* "4 KiB", "1.5 MiB", "12 B": bytes for a person, into buf. */
const char *mem__size_text(uint64_t bytes, char *buf, size_t len);

/* The bytes of buckets first to last, UINT64_MAX if that is 2^64. */
static inline uint64_t mem__span_bytes(uint64_t first, uint64_t last,
				       unsigned shift)
{
	uint64_t span = last - first + 1;

	return span > (UINT64_MAX >> shift) ? UINT64_MAX : span << shift;
}

/* "0x7f0000000000-0x7f0000400000 (4 MiB)": the buckets first to last
 * (indices), the end exclusive, into buf. */
const char *mem__range_text(uint64_t first, uint64_t last, unsigned shift,
			    char *buf, size_t len);

/* One memory-access sample (or n at one address and time). */
struct mem_sample {
	uint64_t addr;
	int64_t t_ns;		/* since the report's start; MEM_NO_TIME */
	uint64_t weight;	/* latency in cycles, if has_weight */
	uint32_t n;		/* the samples it stands for */
	uint32_t obj;		/* index into memrep.objs */
	uint32_t comp;		/* string: the --by value; MEM_NOVAL; MEM_NONE
				 * without --by */
	bool has_weight;
};

struct mem_bucket {
	uint64_t idx;		/* address >> shift */
	uint64_t n;		/* samples */
};

/* s[0..n)'s samples per touched bucket, sorted by address, in *out
 * (malloc'd; NULL when n is 0). 0, or -ENOMEM. */
int mem__buckets(const struct mem_sample *s, size_t n, unsigned shift,
		 struct mem_bucket **out, size_t *nout);

struct mem_ws_point {
	uint64_t k;		/* 1, 2, 4, ... */
	uint64_t buckets;	/* touched at least k times */
};

/* The hot working set: for k = 1, 2, 4, ... up to the largest count, the
 * buckets with at least k samples, into out[MEM_WS_POINTS]; the points. */
size_t mem__working_set(const struct mem_bucket *b, size_t n,
			struct mem_ws_point *out);

struct mem_skew {
	uint64_t total;		/* samples */
	size_t top1_n, top10_n;	/* buckets in the top 1%, 10% (at least 1) */
	uint64_t top1, top10;	/* their samples */
	struct mem_bucket top[MEM_TOP_BUCKETS];	/* by samples */
	size_t ntop;
};

/* How the samples of b[0..n) crowd into few buckets. 0, or -ENOMEM. */
int mem__skew(const struct mem_bucket *b, size_t n, struct mem_skew *out);

struct mem_panel {
	uint64_t first, last;	/* bucket indices, both touched */
	size_t b0, nb;		/* its buckets in the set's array */
	uint64_t samples;
	bool drawn;		/* among the MEM_PANELS_DRAWN with the most */
};

/* b[0..n) (sorted by address) split at its gaps into at most max panels
 * in *out (malloc'd), by address; the drawn ones marked. A panel taller
 * than rows buckets is parted at its widest gaps when they make up half
 * of its span or more and are far wider than one structure sampled at
 * random leaves; its parts are parted in turn. So mappings far apart,
 * and kernel and user addresses, come apart, while one structure
 * accessed at random stays one panel however sparse its samples.
 * 0, or -ENOMEM. */
int mem__panels(const struct mem_bucket *b, size_t n, uint64_t rows,
		size_t max, struct mem_panel **out, size_t *nout);

/* How a panel's buckets go into at most max_rows rows: *per_row
 * buckets in each of *rows rows. */
static inline void mem_panel__rows(const struct mem_panel *p,
				   uint64_t max_rows, uint64_t *per_row,
				   uint64_t *rows)
{
	uint64_t span = p->last - p->first + 1;

	*per_row = span / max_rows + (span % max_rows != 0);
	*rows = span / *per_row + (span % *per_row != 0);
}

/* ---- the report ---- */

/* The samples of one data object, all of them or those with one --by
 * value: a view of the report. */
struct mem_set {
	uint32_t obj;
	uint32_t comp;		/* MEM_NONE: the object's every sample */
	size_t first, n;	/* its samples in memrep.s */
	uint64_t samples, untimed;	/* untimed: not in the heatmap */
	uint64_t weighted, weight;	/* samples with a weight; its sum */
	struct mem_bucket *b;	/* touched, by address */
	size_t nb;
	struct mem_panel *p;
	size_t np;
	struct mem_skew skew;
	struct mem_ws_point *ws;	/* the working-set curve */
	size_t nws;
};

struct mem_obj {
	uint32_t name;		/* string */
	bool resolved;		/* a data_object, not [unmapped]/[unknown] */
	uint64_t pid;		/* of its first sample */
	bool pids;		/* its samples come from several processes */
	uint64_t samples;
	size_t set;		/* its whole set in memrep.sets */
	size_t comp0, ncomps;	/* its --by sets, by samples */
};

struct mem_coverage {
	uint64_t read;		/* samples in the inputs */
	uint64_t lost;		/* no time and no address: left out */
	uint64_t kept;		/* by the cut, the lost ones aside */
	uint64_t addr;		/* kept, with an address */
	uint64_t resolved;	/* with an address and a resolved object */
	uint64_t untimed;	/* with an address, no time */
	uint64_t with_by;	/* with an address and the --by key */
	int files, files_addr;	/* inputs; those with an address at all */
};

/* What the profiles say about their event; the first input's. */
struct mem_event {
	char name[64];		/* "" if not known */
	bool from_comment;
	int64_t period;		/* 0: not known */
	bool periods_differ;	/* inputs with other periods */
	int64_t ldlat;		/* cycles; 0: not said */
};

/* Samples of a data object without an address: all that an aggregated
 * profile (record without -T) can tell. */
struct mem_count {
	uint32_t name;		/* string: the data object */
	uint64_t n;
};

struct memrep_opts {
	uint64_t bucket;	/* bytes, a power of two */
	const char *by;		/* a label or tag field; NULL: none */
};

struct memrep {
	uint64_t bucket;
	unsigned shift;
	const char *by;
	char **str;
	size_t nstr, capstr;
	struct mem_sample *s;	/* by object, then component */
	size_t ns, caps;
	struct mem_obj *objs;	/* by samples after memrep__finish */
	size_t nobjs, capobjs;
	struct mem_set *sets;
	size_t nsets;
	struct hashmap *str_ix, *obj_ix;
	int64_t t0, t1;		/* the timed samples' span */
	uint64_t buckets_all;	/* touched, over every object */
	uint64_t weight;	/* latency over every object */
	struct mem_ws_point ws[MEM_WS_POINTS];	/* over every object */
	size_t nws;
	size_t ncomps;		/* --by values seen */
	struct mem_event ev;
	struct mem_coverage cov;
	struct mem_count *noaddr;	/* kept without an address */
	size_t nnoaddr, capnoaddr;
	struct hashmap *noaddr_ix;
	struct merge_counts counts;	/* for report's summary line */
};

struct memrep *memrep__new(const struct memrep_opts *o);
void memrep__free(struct memrep *m);	/* accepts NULL */

static inline const char *memrep__str(const struct memrep *m, uint32_t i)
{
	return i < m->nstr ? m->str[i] : "";
}

/* The string's index, added if new; MEM_NONE on ENOMEM. */
uint32_t memrep__intern(struct memrep *m, const char *s);

/* The object named name (a string), added if new; MEM_NONE on ENOMEM. */
uint32_t memrep__object(struct memrep *m, uint32_t name, uint64_t pid);

/* Adds one sample (obj from memrep__object). 0, or -ENOMEM. */
int memrep__add_sample(struct memrep *m, const struct mem_sample *s);

/* Adds in's samples that cut keeps (memload.c): its lost samples are
 * counted apart, whatever the cut. base: the report's time origin (the
 * earliest input's time_nanos). *has_addr: whether in has any sample with
 * an address. 0, or -errno with why in err. */
int memrep__add(struct memrep *m, const struct pprofin *in,
		const struct merge_cut *cut, int64_t base, bool *has_addr,
		char *err, size_t errlen);

/* The views, after the last sample: objects by samples, their sets, the
 * buckets, panels, skew and working sets. 0, or -ENOMEM. */
int memrep__finish(struct memrep *m);

struct memrep_out {
	const char *title;	/* what was read */
	const char *cut;	/* the cut, said; NULL: none */
};

/* The report as text for a terminal (memtext.c), or as one
 * self-contained HTML page with inline SVG (memhtml.c), into b. 0, or
 * -ENOMEM. */
int memrep__write_text(const struct memrep *m, const struct memrep_out *o,
		       struct strbuf *b);
int memrep__write_html(const struct memrep *m, const struct memrep_out *o,
		       struct strbuf *b);

/* The kept samples without an address per data object, the most first,
 * as indented lines for a terminal (at most max, then the rest summed).
 * 0, or -ENOMEM. */
int memrep__write_noaddr(const struct memrep *m, size_t max,
			 struct strbuf *b);

#endif
