// SPDX-License-Identifier: BSD-2-Clause
/* The pprof window. Loctab ids map to pprof ids through caches indexed by
 * loctab id: a sample's frames cost an array lookup each, and an entry is
 * interned into the pprof once per window, when a sample first uses it.
 * Mappings are the exception: every mapping of the loctab goes into the
 * pprof, in the loctab's order, so the profile lists the mappings the
 * symbolizer made this window, with the ids they always had (the kernel's
 * first, with or without kernel frames). */
#include "out/pprofwin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "out/pprof.h"
#include "sym/loctab.h"

/* Value columns at most: samples, the event's, the weight. */
#define PPROFWIN_VALUES		3
/* Labels of a sample at most: the resolver's and two of memory. */
#define PPROFWIN_MAX_LABELS	80

struct pprofwin {
	struct pprofwin_opts o;
	struct pprof *pp;		/* the current window */
	struct pprof *next;		/* made by pprofwin__prepare */
	/* pprof ids by loctab id, for this window */
	struct loctab_cache maps, fns, locs;
	size_t nmaps;			/* loctab mappings interned */
	size_t nnamed;			/* loctab__named_late ids applied */
};

static struct pprof *new_pprof(const struct pprofwin_opts *o)
{
	struct pprof_vt types[PPROFWIN_VALUES] = {
		{ "samples", "count" },
		{ o->sample_type, o->sample_unit },
		{ "weight", "cycles" },
	};

	struct pprof *pp = pprof__new(types, o->weight ? 3 : 2, types[1],
				      o->period);

	if (pp && o->timeline && pprof__set_timeline(pp)) {
		pprof__free(pp);
		return NULL;
	}
	return pp;
}

/* Drops the pprof ids of the last window. */
static void forget_ids(struct pprofwin *w)
{
	loctab__cache_clear(&w->maps);
	loctab__cache_clear(&w->fns);
	loctab__cache_clear(&w->locs);
	w->nmaps = 0;
	w->nnamed = 0;
}

struct pprofwin *pprofwin__new(const struct pprofwin_opts *o)
{
	struct pprofwin *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->o = *o;
	w->pp = new_pprof(o);
	if (!w->pp) {
		free(w);
		return NULL;
	}
	return w;
}

void pprofwin__free(struct pprofwin *w)
{
	if (!w)
		return;
	forget_ids(w);
	pprof__free(w->pp);
	pprof__free(w->next);
	free(w);
}

/* Interns the loctab's mappings not interned yet, in order. */
static void add_mappings(struct pprofwin *w, const struct loctab *lt)
{
	const struct loctab_mapping *m;
	uint64_t id;

	for (; w->nmaps < loctab__nmappings(lt); w->nmaps++) {
		m = loctab__mapping_at(lt, w->nmaps + 1);
		id = pprof__mapping(w->pp, m->start, m->limit, m->offset,
				    m->file, m->build_id);
		if (loctab__cache_set(&w->maps, w->nmaps + 1, id))
			return;
		if (m->exe)
			pprof__mapping_set_exe(w->pp, id);
	}
}

static uint64_t function(struct pprofwin *w, const struct loctab *lt,
			 uint32_t fn)
{
	const struct loctab_function *f;
	uint64_t id = loctab__cache_get(&w->fns, fn);

	if (id)
		return id;
	f = loctab__function_at(lt, fn);
	id = pprof__function(w->pp, f->name, f->system_name, f->file);
	return loctab__cache_set(&w->fns, fn, id) ? 0 : id;
}

/* What the mapping's locations hold, as far as the loctab knows now. */
static void mapping_info(struct pprofwin *w, const struct loctab *lt,
			 uint32_t mapping, uint64_t id)
{
	const struct loctab_mapping *m = loctab__mapping_at(lt, mapping);

	if (m->has_filenames || m->has_line_numbers || m->has_inline_frames)
		pprof__mapping_set_info(w->pp, id, m->has_filenames,
					m->has_line_numbers,
					m->has_inline_frames);
	/* Another process that runs it may have mapped it since. */
	if (m->exe)
		pprof__mapping_set_exe(w->pp, id);
}

/* The pprof function ids and lines of location l into fns and lines;
 * false on ENOMEM. */
static bool location_lines(struct pprofwin *w, const struct loctab *lt,
			   const struct loctab_location *l, uint64_t *fns,
			   int64_t *lines)
{
	const struct loctab_line *ln = loctab__lines(lt, l);

	for (uint32_t i = 0; i < l->nlines; i++) {
		fns[i] = function(w, lt, ln[i].function);
		if (!fns[i])
			return false;
		lines[i] = ln[i].line;
	}
	return true;
}

static uint64_t new_location(struct pprofwin *w, const struct loctab *lt,
			     const struct loctab_location *l)
{
	uint64_t mapping = 0, fns[LOCTAB_MAX_LINES];
	int64_t lines[LOCTAB_MAX_LINES];

	if (l->mapping) {
		mapping = loctab__cache_get(&w->maps, l->mapping);
		if (!mapping)
			return 0;
		mapping_info(w, lt, l->mapping, mapping);
	}
	if (!location_lines(w, lt, l, fns, lines))
		return 0;
	return pprof__location(w->pp, mapping, l->address, fns, lines,
			       l->nlines);
}

/* Names the window's locations the loctab named late, when their debug
 * file came: samples already hold their ids. */
static void name_late(struct pprofwin *w, const struct loctab *lt)
{
	uint64_t id, fns[LOCTAB_MAX_LINES];
	int64_t lines[LOCTAB_MAX_LINES];
	const struct loctab_location *l;
	const uint32_t *named;
	size_t n;

	/* No sample of this loctab came: nothing of it is interned. */
	if (!lt || w->locs.gen != loctab__generation(lt))
		return;
	named = loctab__named_late(lt, &n);
	for (; w->nnamed < n; w->nnamed++) {
		id = loctab__cache_get(&w->locs, named[w->nnamed]);
		if (!id)
			continue;	/* interned, if ever, with its lines */
		l = loctab__location_at(lt, named[w->nnamed]);
		if (l->mapping)
			mapping_info(w, lt, l->mapping,
				     loctab__cache_get(&w->maps, l->mapping));
		if (location_lines(w, lt, l, fns, lines))
			pprof__location_name(w->pp, id, fns, lines, l->nlines);
	}
}

/* Out of line: the loop over a sample's frames, which rarely gets here,
 * stays small. */
static __attribute__((noinline)) uint64_t
intern_location(struct pprofwin *w, const struct loctab *lt, uint32_t loc)
{
	uint64_t id = new_location(w, lt, loctab__location_at(lt, loc));

	return loctab__cache_set(&w->locs, loc, id) ? 0 : id;
}

/* A memory sample's labels in a per-sample profile: its own, then the
 * data address and the weight, which would keep an aggregated profile
 * from aggregating. Returns how many there are in out. */
static size_t memory_labels(const struct pprofwin *w,
			    const struct resolved_sample *s,
			    struct pprof_label *out, size_t room)
{
	size_t n = s->nlabels < room - 2 ? s->nlabels : room - 2;

	memcpy(out, s->labels, n * sizeof(*out));
	out[n++] = (struct pprof_label){ .key = "addr",
					 .num = (int64_t)s->mem->addr };
	if (w->o.weight && (s->mem->flags & TP_MEM_WEIGHT))
		out[n++] = (struct pprof_label){ .key = "weight",
						 .num = s->mem->weight,
						 .num_unit = "cycles" };
	return n;
}

void pprofwin__sample(struct pprofwin *w, const struct resolved_sample *s)
{
	uint64_t ids[SAMPLE_MAX_LOCS];
	size_t n = 0, nlocs = s->nlocs, nlabels = s->nlabels;
	struct pprof_label labels[PPROFWIN_MAX_LABELS];
	const struct pprof_label *lp = s->labels;
	int64_t values[PPROFWIN_VALUES];

	/* A reset loctab: ids of the same window name other entries now.
	 * The caches are cleared together: one keeps the generation. */
	if (loctab__cache_sync(&w->locs, s->lt)) {
		forget_ids(w);
		loctab__cache_sync(&w->locs, s->lt);
	}
	add_mappings(w, s->lt);
	if (nlocs > SAMPLE_MAX_LOCS)
		nlocs = SAMPLE_MAX_LOCS;
	for (size_t i = 0; i < nlocs; i++) {
		ids[n] = loctab__cache_get(&w->locs, s->locs[i]);
		if (!ids[n])
			ids[n] = intern_location(w, s->lt, s->locs[i]);
		if (ids[n])
			n++;
	}
	values[0] = 1;
	values[1] = (int64_t)s->period;
	values[2] = s->mem && (s->mem->flags & TP_MEM_WEIGHT) ?
		    s->mem->weight : 0;
	if (s->mem && w->o.timeline) {
		nlabels = memory_labels(w, s, labels, PPROFWIN_MAX_LABELS);
		lp = labels;
	}
	pprof__add_sample_at(w->pp, ids, n, values, lp, nlabels,
			     (int64_t)s->time_ns);
}

/* Adds n samples of one frame named why, each worth period. */
static void add_lost(struct pprofwin *w, uint64_t n, uint64_t period,
		     uint64_t address, const char *why)
{
	struct pprof_label labels[2];
	uint64_t fn, loc;
	int64_t values[PPROFWIN_VALUES] = { 0 };
	size_t nl = 0;

	if (!n)
		return;
	fn = pprof__function(w->pp, why, NULL, NULL);
	/* No user address is this high: it is no other location's. */
	loc = fn ? pprof__location(w->pp, 0, address, &fn, NULL, 1) : 0;
	if (!loc)
		return;
	labels[nl++] = (struct pprof_label){ .key = "process",
					     .str = "[tagprof]" };
	if (w->o.service_label)
		labels[nl++] = (struct pprof_label){ .key = "service",
						     .str = DROPPED_SERVICE };
	values[0] = (int64_t)n;
	values[1] = (int64_t)(n * period);
	pprof__add_sample(w->pp, &loc, 1, values, labels, nl);
}

void pprofwin__close(struct pprofwin *w, const struct window_end *e)
{
	/* Each lost sample counts what an average sample of the window
	 * did. */
	uint64_t period = e->samples ? e->value / e->samples :
			  (uint64_t)w->o.period;

	name_late(w, e->lt);
	add_lost(w, e->dropped, period, ~0ull - 2,
		 "[dropped: the profiler was over its memory limit]");
	add_lost(w, e->lost, period, ~0ull - 1,
		 "[lost: the ring buffer was full]");
	add_lost(w, e->malformed, period, ~0ull, "[lost: malformed records]");
	add_lost(w, e->unknown_stack, period, ~0ull - 3,
		 "[lost: stack id not received]");
	pprof__set_time(w->pp, e->start_real_ns, e->duration_ns);
	pprof__set_time_origin(w->pp, (int64_t)e->start_mono_ns);
}

static void consumer_sample(void *ctx, const struct resolved_sample *s)
{
	pprofwin__sample(ctx, s);
}

static void consumer_close(void *ctx, const struct window_end *e)
{
	pprofwin__close(ctx, e);
}

struct sample_consumer pprofwin__consumer(struct pprofwin *w)
{
	return (struct sample_consumer){ consumer_sample, consumer_close, w };
}

struct pprof *pprofwin__pprof(struct pprofwin *w)
{
	return w->pp;
}

int pprofwin__prepare(struct pprofwin *w)
{
	if (!w->next)
		w->next = new_pprof(&w->o);
	return w->next ? 0 : -ENOMEM;
}

struct pprof *pprofwin__take(struct pprofwin *w)
{
	struct pprof *pp = w->pp;

	if (pprofwin__prepare(w))
		return NULL;
	w->pp = w->next;
	w->next = NULL;
	forget_ids(w);
	return pp;
}
