// SPDX-License-Identifier: BSD-2-Clause
/* Merging pprof files into one, cut to a window and to values (merge.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "out/pprof.h"
#include "report/merge.h"
#include "util/errbuf.h"
#include "util/hashmap.h"

/* A location without an address names its code by lines only (writers
 * other than tagprof: interpreters, JITs); the builder merges locations
 * by (mapping, address), so each such location gets an address of its
 * own from here up, one per distinct set of lines. */
#define NO_ADDRESS_BASE	(1ull << 63)

struct merge {
	struct merge_cut cut;
	struct merge_counts counts;
	struct pprof *pp;		/* NULL until the first input */
	size_t ntypes;
	struct hashmap *no_address;	/* lines -> the address they got */
	struct hashmap *loc_out;	/* this input's location id -> ours */
	int64_t start_ns, end_ns;	/* the inputs' span */
	uint64_t *ids;			/* scratch: a sample's location ids */
	size_t ids_cap;
	struct pprof_label *labels;	/* scratch: a sample's labels */
	size_t labels_cap;
};

struct merge *merge__new(const struct merge_cut *cut)
{
	struct merge *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->cut = *cut;
	m->start_ns = INT64_MAX;
	m->end_ns = INT64_MIN;
	m->no_address = hashmap__new(0);
	if (!m->no_address) {
		free(m);
		return NULL;
	}
	return m;
}

void merge__free(struct merge *m)
{
	if (!m)
		return;
	pprof__free(m->pp);
	hashmap__free(m->no_address);
	hashmap__free(m->loc_out);
	free(m->ids);
	free(m->labels);
	free(m);
}

const struct merge_counts *merge__counts(const struct merge *m)
{
	return &m->counts;
}

/* The profile's time: the inputs' span, within the window if cut. */
struct pprof *merge__pprof(struct merge *m)
{
	int64_t from = m->start_ns, to = m->end_ns;

	if (m->cut.window) {
		from = m->cut.from_ns > from ? m->cut.from_ns : from;
		to = m->cut.to_ns < to ? m->cut.to_ns : to;
	}
	if (m->pp && from <= to)
		pprof__set_time(m->pp, from, to - from);
	return m->pp;
}

/* The builder, typed like the first input. */
static int start(struct merge *m, const struct pprofin *in)
{
	const Perftools__Profiles__Profile *pr = in->pr;
	struct pprof_vt types[16], period = { "", "" };

	m->ntypes = pr->n_sample_type;
	if (m->ntypes > 16)
		return -E2BIG;
	for (size_t i = 0; i < m->ntypes; i++)
		types[i] = (struct pprof_vt){
			pprofin__str(in, pr->sample_type[i]->type),
			pprofin__str(in, pr->sample_type[i]->unit) };
	if (pr->period_type)
		period = (struct pprof_vt){
			pprofin__str(in, pr->period_type->type),
			pprofin__str(in, pr->period_type->unit) };
	m->pp = pprof__new(types, m->ntypes, period, pr->period);
	return m->pp ? 0 : -ENOMEM;
}

/* Whether s carries label key=val: a string label, or a numeric one whose
 * number is val (a tag field without a name is a number). */
static bool has_value(const struct pprofin *in,
		      const Perftools__Profiles__Sample *s, const char *key,
		      const char *val)
{
	char *end;
	long long num = strtoll(val, &end, 0);
	bool numeric = *val && !*end;

	for (size_t i = 0; i < s->n_label; i++) {
		const Perftools__Profiles__Label *l = s->label[i];

		if (strcmp(pprofin__str(in, l->key), key))
			continue;
		if (l->str ? !strcmp(pprofin__str(in, l->str), val) :
			     numeric && l->num == num)
			return true;
	}
	return false;
}

bool merge_cut__keeps(const struct merge_cut *c, const struct pprofin *in,
		      const Perftools__Profiles__Sample *s, uint64_t *untimed)
{
	int64_t t, at;

	if (c->label_key && !has_value(in, s, c->label_key, c->label_val))
		return false;
	if (c->tag_key && !has_value(in, s, c->tag_key, c->tag_val))
		return false;
	if (!c->window)
		return true;
	if (pprofin__sample_time(in, s, &t)) {
		(*untimed)++;
		return false;
	}
	at = in->pr->time_nanos + t;
	return at >= c->from_ns && at <= c->to_ns;
}

/* The output's address for a location without one: one per distinct
 * (mapping, lines). 0 on ENOMEM. */
static uint64_t no_address(struct merge *m, uint64_t map,
			   const uint64_t *fns, const int64_t *lines, size_t n)
{
	uint64_t key[1 + 2 * 64], addr;
	size_t len = 1;

	key[0] = map;
	for (size_t i = 0; i < n && i < 64; i++) {
		key[len++] = fns[i];
		key[len++] = (uint64_t)lines[i];
	}
	if (hashmap__get(m->no_address, key, len * sizeof(*key), &addr))
		return addr;
	addr = NO_ADDRESS_BASE + hashmap__size(m->no_address);
	return hashmap__put(m->no_address, key, len * sizeof(*key), addr) ?
		       0 : addr;
}

static uint64_t out_mapping(struct merge *m, const struct pprofin *in,
			    uint64_t id)
{
	const Perftools__Profiles__Mapping *mp = pprofin__mapping(in, id);
	uint64_t out;

	if (!mp)
		return 0;
	out = pprof__mapping(m->pp, mp->memory_start, mp->memory_limit,
			     mp->file_offset, pprofin__str(in, mp->filename),
			     mp->build_id ? pprofin__str(in, mp->build_id) : NULL);
	if (out)
		pprof__mapping_set_info(m->pp, out, mp->has_filenames,
					mp->has_line_numbers,
					mp->has_inline_frames);
	return out;
}

static uint64_t out_function(struct merge *m, const struct pprofin *in,
			     uint64_t id)
{
	const Perftools__Profiles__Function *f = pprofin__function(in, id);

	return pprof__function(m->pp, pprofin__str(in, f->name),
			       f->system_name ? pprofin__str(in, f->system_name) : NULL,
			       f->filename ? pprofin__str(in, f->filename) : NULL);
}

/* The output's id of in's location id; 0 on ENOMEM. At most 64 lines
 * (inlined calls) of a location are kept. */
static uint64_t new_location(struct merge *m, const struct pprofin *in,
			     uint64_t id)
{
	const Perftools__Profiles__Location *l = pprofin__location(in, id);
	uint64_t fns[64], map = 0, addr = l->address;
	int64_t lines[64];
	size_t n = l->n_line < 64 ? l->n_line : 64;

	if (l->mapping_id && !(map = out_mapping(m, in, l->mapping_id)))
		return 0;
	for (size_t i = 0; i < n; i++) {
		fns[i] = out_function(m, in, l->line[i]->function_id);
		lines[i] = l->line[i]->line;
		if (!fns[i])
			return 0;
	}
	if (!addr && !(addr = no_address(m, map, fns, lines, n)))
		return 0;
	return pprof__location(m->pp, map, addr, fns, lines, n);
}

/* new_location, once per location of an input. */
static uint64_t out_location(struct merge *m, const struct pprofin *in,
			     uint64_t id)
{
	uint64_t out;

	if (hashmap__get(m->loc_out, &id, sizeof(id), &out))
		return out;
	out = new_location(m, in, id);
	if (out && hashmap__put(m->loc_out, &id, sizeof(id), out))
		return 0;
	return out;
}

static int add_sample(struct merge *m, const struct pprofin *in,
		      const Perftools__Profiles__Sample *s)
{
	size_t nl = 0;

	if (s->n_location_id > m->ids_cap) {
		free(m->ids);
		m->ids = malloc(s->n_location_id * sizeof(*m->ids));
		if (!m->ids)
			return -ENOMEM;
		m->ids_cap = s->n_location_id;
	}
	if (s->n_label > m->labels_cap) {
		free(m->labels);
		m->labels = malloc(s->n_label * sizeof(*m->labels));
		if (!m->labels)
			return -ENOMEM;
		m->labels_cap = s->n_label;
	}
	for (size_t i = 0; i < s->n_location_id; i++)
		if (!(m->ids[i] = out_location(m, in, s->location_id[i])))
			return -ENOMEM;
	for (size_t i = 0; i < s->n_label; i++) {
		const Perftools__Profiles__Label *l = s->label[i];

		if (l->key == in->t_key && !l->str)
			continue;	/* the time merges away */
		m->labels[nl++] = l->str ?
			(struct pprof_label){ .key = pprofin__str(in, l->key),
					      .str = pprofin__str(in, l->str) } :
			(struct pprof_label){ .key = pprofin__str(in, l->key),
					      .num = l->num,
					      .num_unit = l->num_unit ?
						pprofin__str(in, l->num_unit) : NULL };
	}
	return pprof__add_sample(m->pp, m->ids, s->n_location_id, s->value,
				 m->labels, nl);
}

int merge__add(struct merge *m, const struct pprofin *in, char *err,
	       size_t errlen)
{
	const Perftools__Profiles__Profile *pr = in->pr;
	int ret;

	if (!m->pp && (ret = start(m, in))) {
		errbuf__set(err, errlen, "%s", ret == -E2BIG ?
			    "more than 16 sample types" : strerror(-ret));
		return ret;
	}
	if (pr->n_sample_type != m->ntypes) {
		errbuf__set(err, errlen, "%zu sample types where the first "
			    "profile has %zu: not the same kind of profile",
			    pr->n_sample_type, m->ntypes);
		return -EINVAL;
	}
	for (size_t i = 0; i < m->ntypes; i++) {
		const char *t = pprofin__str(in, pr->sample_type[i]->type);
		const char *u = pprofin__str(in, pr->sample_type[i]->unit);

		if (!pprof__type_is(m->pp, i, t, u)) {
			errbuf__set(err, errlen, "sample type %s/%s where the "
				    "first profile has another: not the same "
				    "kind of profile", t, u);
			return -EINVAL;
		}
	}
	/* ids are the input's own: a cache per input */
	hashmap__free(m->loc_out);
	m->loc_out = hashmap__new(0);
	if (!m->loc_out) {
		errbuf__set(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	if (pr->time_nanos < m->start_ns)
		m->start_ns = pr->time_nanos;
	if (pr->time_nanos + pr->duration_nanos > m->end_ns)
		m->end_ns = pr->time_nanos + pr->duration_nanos;
	for (size_t i = 0; i < pr->n_sample; i++) {
		m->counts.samples++;
		if (!merge_cut__keeps(&m->cut, in, pr->sample[i],
				      &m->counts.untimed))
			continue;
		ret = add_sample(m, in, pr->sample[i]);
		if (ret) {
			errbuf__set(err, errlen, "%s", strerror(-ret));
			return ret;
		}
		m->counts.kept++;
	}
	return 0;
}
