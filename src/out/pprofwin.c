// SPDX-License-Identifier: BSD-2-Clause
/* The pprof window. Loctab ids map to pprof ids through arrays indexed by
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

struct pprofwin {
	struct pprofwin_opts o;
	struct pprof *pp;		/* the current window */
	struct pprof *next;		/* made by pprofwin__prepare */
	/* pprof ids by loctab id (0: not yet interned), for loctab_gen */
	uint64_t loctab_gen;
	uint64_t *map_ids, *fn_ids, *loc_ids;
	size_t map_cap, fn_cap, loc_cap;
	size_t nmaps;			/* loctab mappings interned */
	/* one sample's location ids; one location's lines */
	uint64_t *ids, *line_fns;
	int64_t *line_nums;
	size_t ids_cap, fns_cap, nums_cap;
};

static struct pprof *new_pprof(const struct pprofwin_opts *o)
{
	struct pprof_vt types[2] = {
		{ "samples", "count" },
		{ o->sample_type, o->sample_unit },
	};

	return pprof__new(types, 2, types[1], o->period);
}

/* Room for need elements in *arrp, new ones zeroed. */
static int grow(void *arrp, size_t *cap, size_t need, size_t elsize)
{
	size_t ncap = *cap ? *cap : 64;
	char *arr;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	memcpy(&arr, arrp, sizeof(arr));
	arr = reallocarray(arr, ncap, elsize);
	if (!arr)
		return -ENOMEM;
	memset(arr + *cap * elsize, 0, (ncap - *cap) * elsize);
	memcpy(arrp, &arr, sizeof(arr));
	*cap = ncap;
	return 0;
}

/* The cache slot of loctab id in *arrp, NULL on ENOMEM. */
static uint64_t *slot(uint64_t **arrp, size_t *cap, uint32_t id)
{
	return grow(arrp, cap, (size_t)id + 1, sizeof(**arrp)) ? NULL :
	       *arrp + id;
}

/* Drops the pprof ids of the last window or loctab generation. */
static void forget_ids(struct pprofwin *w)
{
	free(w->map_ids);
	free(w->fn_ids);
	free(w->loc_ids);
	w->map_ids = w->fn_ids = w->loc_ids = NULL;
	w->map_cap = w->fn_cap = w->loc_cap = 0;
	w->nmaps = 0;
	w->loctab_gen = 0;
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
	free(w->ids);
	free(w->line_fns);
	free(w->line_nums);
	free(w);
}

/* Interns the loctab's mappings not interned yet, in order. */
static void add_mappings(struct pprofwin *w, const struct loctab *lt)
{
	const struct loctab_mapping *m;
	uint64_t *id;

	for (; w->nmaps < loctab__nmappings(lt); w->nmaps++) {
		id = slot(&w->map_ids, &w->map_cap, w->nmaps + 1);
		if (!id)
			return;
		m = loctab__mapping_at(lt, w->nmaps + 1);
		*id = pprof__mapping(w->pp, m->start, m->limit, m->offset,
				     m->file, m->build_id);
	}
}

static uint64_t function(struct pprofwin *w, const struct loctab *lt,
			 uint32_t fn)
{
	const struct loctab_function *f;
	uint64_t *id = slot(&w->fn_ids, &w->fn_cap, fn);

	if (!id || *id)
		return id ? *id : 0;
	f = loctab__function_at(lt, fn);
	*id = pprof__function(w->pp, f->name, f->system_name, f->file);
	return *id;
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
}

static uint64_t new_location(struct pprofwin *w, const struct loctab *lt,
			     const struct loctab_location *l)
{
	const struct loctab_line *ln = loctab__lines(lt, l);
	uint64_t mapping = 0;

	if (l->mapping) {
		mapping = l->mapping < w->map_cap ? w->map_ids[l->mapping] : 0;
		if (!mapping)
			return 0;
		mapping_info(w, lt, l->mapping, mapping);
	}
	if (grow(&w->line_fns, &w->fns_cap, l->nlines, sizeof(*w->line_fns)) ||
	    grow(&w->line_nums, &w->nums_cap, l->nlines,
		 sizeof(*w->line_nums)))
		return 0;
	for (uint32_t i = 0; i < l->nlines; i++) {
		w->line_fns[i] = function(w, lt, ln[i].function);
		if (!w->line_fns[i])
			return 0;
		w->line_nums[i] = ln[i].line;
	}
	return pprof__location(w->pp, mapping, l->address, w->line_fns,
			       w->line_nums, l->nlines);
}

static uint64_t location(struct pprofwin *w, const struct loctab *lt,
			 uint32_t loc)
{
	uint64_t *id;

	if (loc < w->loc_cap && w->loc_ids[loc])	/* the usual case */
		return w->loc_ids[loc];
	id = slot(&w->loc_ids, &w->loc_cap, loc);
	if (!id)
		return 0;
	*id = new_location(w, lt, loctab__location_at(lt, loc));
	return *id;
}

void pprofwin__sample(struct pprofwin *w, const struct resolved_sample *s)
{
	int64_t values[2];
	size_t n = 0;

	if (w->loctab_gen != loctab__generation(s->lt)) {
		forget_ids(w);
		w->loctab_gen = loctab__generation(s->lt);
	}
	add_mappings(w, s->lt);
	if (grow(&w->ids, &w->ids_cap, s->nlocs, sizeof(*w->ids)))
		return;
	for (size_t i = 0; i < s->nlocs; i++) {
		w->ids[n] = location(w, s->lt, s->locs[i]);
		if (w->ids[n])
			n++;
	}
	values[0] = 1;
	values[1] = (int64_t)s->period;
	pprof__add_sample(w->pp, w->ids, n, values, s->labels, s->nlabels);
}

/* Adds n samples of one frame named why, each worth period. */
static void add_lost(struct pprofwin *w, uint64_t n, uint64_t period,
		     uint64_t address, const char *why)
{
	struct pprof_label labels[2];
	uint64_t fn, loc;
	int64_t values[2];
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

	add_lost(w, e->dropped, period, ~0ull - 2,
		 "[dropped: the profiler was over its memory limit]");
	add_lost(w, e->lost, period, ~0ull - 1,
		 "[lost: the ring buffer was full]");
	add_lost(w, e->malformed, period, ~0ull, "[lost: malformed records]");
	pprof__set_time(w->pp, e->start_real_ns, e->duration_ns);
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
