/* `tagprof report pprof`: profiles read with pprofin merged into one
 * aggregated pprof, cut to a time window and to label or tag values. The
 * samples of every input are re-interned into one builder (out/pprof.h),
 * which merges equal stacks with equal labels; the time label t is left
 * out, so a per-sample profile merges back into an ordinary one. */
#ifndef TAGPROF_MERGE_H
#define TAGPROF_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/pprofin.h"

struct pprof;

struct merge_cut {
	bool window;			/* keep [from_ns, to_ns] only */
	int64_t from_ns, to_ns;		/* wall clock (time_nanos + t) */
	const char *label_key, *label_val;	/* NULL: any */
	const char *tag_key, *tag_val;		/* NULL: any */
};

/* Whether cut c keeps sample s of in; a sample without a time that a
 * window leaves out is counted in *untimed. */
bool merge_cut__keeps(const struct merge_cut *c, const struct pprofin *in,
		      const Perftools__Profiles__Sample *s, uint64_t *untimed);

struct merge_counts {
	uint64_t samples;		/* read */
	uint64_t kept;
	uint64_t untimed;		/* left out of a window: no t */
};

struct merge;

struct merge *merge__new(const struct merge_cut *cut);
void merge__free(struct merge *m);	/* accepts NULL */

/* Adds in's samples that the cut keeps. The first input sets the sample
 * types; another with different ones is refused (-EINVAL, why in err). */
int merge__add(struct merge *m, const struct pprofin *in, char *err,
	       size_t errlen);

/* What was merged so far; the pprof stays m's. */
const struct merge_counts *merge__counts(const struct merge *m);
struct pprof *merge__pprof(struct merge *m);

#endif
