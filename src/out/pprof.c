/* pprof builder. Every table (strings, mappings, functions, locations,
 * samples) keeps its records in an arena whose bytes never move, so the
 * dedup hash maps can borrow keys straight from the records instead of
 * holding a second copy. Records are flat arrays of 64-bit words, which
 * makes them their own hash keys. */
#include "out/pprof.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/gzip.h"
#include "util/hashmap.h"
#include "util/grow.h"

#define ARENA_BLOCK (64 * 1024)

struct arena_block {
	struct arena_block *next;
	size_t used;
	size_t cap;
	uint64_t data[];        /* uint64_t: keeps every record 8-aligned */
};

struct arena {
	struct arena_block *head;       /* the block being filled */
};

/* One deduplicated table: records in the arena, ids are index + 1. */
struct table {
	const void **recs;
	size_t n;
	size_t cap;
	struct hashmap *ids;    /* record key -> id */
};

/* Record layouts (all 64-bit words). */
struct pp_mapping {
	uint64_t start;
	uint64_t limit;
	uint64_t offset;
	uint64_t filename;      /* string index */
	uint64_t build_id;      /* string index */
};

struct pp_function {
	uint64_t name;
	uint64_t system_name;
	uint64_t filename;
};

/* Location: mapping_id, address, nlines, then nlines (function_id, line)
 * pairs; the key is the first two words. */
#define LOC_KEY_WORDS 2
#define LOC_HDR_WORDS 3

/* Sample: nlocs, location ids, nlabels, then nlabels sorted labels of
 * LABEL_WORDS words each; the whole record is the key. */
struct pp_label {
	int64_t key;
	int64_t str;
	int64_t num;
	int64_t num_unit;
};
#define LABEL_WORDS 4

struct pprof {
	struct arena arena;
	struct table strs;      /* index = id - 1; index 0 is "" */
	struct table mappings;
	struct table functions;
	struct table locations;
	struct table samples;

	size_t ntypes;
	int64_t *type_strs;     /* ntypes (type, unit) string index pairs */
	int64_t period_type[2];
	int64_t period;
	int64_t time_nanos;
	int64_t duration_nanos;

	int64_t *comments;
	size_t ncomments;
	size_t comments_cap;

	int64_t *values;        /* samples.n rows of ntypes values */
	size_t values_cap;      /* in rows */

	uint64_t *scratch;      /* builds location and sample records */
	size_t scratch_cap;
	struct pp_label *labels;        /* sorts one sample's labels */
	size_t labels_cap;

	uint8_t *map_info;      /* MAP_* per mapping id - 1 */
	size_t map_info_cap;

	/* Per-sample ("timeline") profiles: every sample added is kept as
	 * an event too, and the file holds one Sample per event, each with
	 * its time in the numeric label "t". Rows of EVENT_WORDS + ntypes:
	 * the sample's index, its time (PPROF_NO_TIME: none), its values. */
	bool timeline;
	int64_t *events;
	size_t nevents;
	size_t events_cap;      /* in rows */
	int64_t time_origin;    /* what event times are counted from */
	int64_t str_t, str_ns;  /* "t" and "nanoseconds" */
};
#define EVENT_WORDS 2

#define MAP_HAS_FILENAMES       0x1
#define MAP_HAS_LINE_NUMBERS    0x2
#define MAP_HAS_INLINE_FRAMES   0x4
#define MAP_EXE                 0x8     /* a process's executable */

/* ---- growable arrays ---- */

/* Room for need elements in the array at *arrp (grow.h), from 16. */
static int reserve(void *arrp, size_t *cap, size_t need, size_t elsize)
{
	return grow__array(arrp, cap, need, elsize, 16);
}

/* ---- arena ---- */

static struct arena_block *arena_block_new(size_t words)
{
	struct arena_block *b;

	if (words > (SIZE_MAX - sizeof(*b)) / sizeof(uint64_t))
		return NULL;
	b = malloc(sizeof(*b) + words * sizeof(uint64_t));
	if (!b)
		return NULL;
	b->next = NULL;
	b->used = 0;
	b->cap = words;
	return b;
}

/* Returns n bytes, 8-aligned, that stay put until arena_free. */
static void *arena_alloc(struct arena *a, size_t n)
{
	size_t words = n / sizeof(uint64_t) + (n % sizeof(uint64_t) != 0);
	struct arena_block *b = a->head;

	if (!words)
		words = 1;
	if (b && b->cap - b->used >= words)
		goto carve;
	if (words > ARENA_BLOCK / sizeof(uint64_t) / 4) {
		/* Big record: own block, linked behind the current one so
		 * the current block's free space is not abandoned. */
		b = arena_block_new(words);
		if (!b)
			return NULL;
		if (a->head) {
			b->next = a->head->next;
			a->head->next = b;
		} else {
			a->head = b;
		}
		goto carve;
	}
	b = arena_block_new(ARENA_BLOCK / sizeof(uint64_t));
	if (!b)
		return NULL;
	b->next = a->head;
	a->head = b;
carve:
	b->used += words;
	return b->data + b->used - words;
}

static void arena_free(struct arena *a)
{
	struct arena_block *b = a->head, *next;

	for (; b; b = next) {
		next = b->next;
		free(b);
	}
	a->head = NULL;
}

/* ---- tables ---- */

static int table_init(struct table *t)
{
	t->ids = hashmap__new(HASHMAP_BORROW_KEYS);
	return t->ids ? 0 : -ENOMEM;
}

static void table_free(struct table *t)
{
	hashmap__free(t->ids);
	free(t->recs);
}

/* Id of the record whose key is (key, keylen), or 0. */
static uint64_t table_find(const struct table *t, const void *key,
			   size_t keylen)
{
	uint64_t id;

	return hashmap__get(t->ids, key, keylen, &id) ? id : 0;
}

/* Copies a new record into the arena and indexes it by its first keylen
 * bytes. The caller has checked it is absent. Returns its id or 0. */
static uint64_t table_add(struct pprof *p, struct table *t, const void *rec,
			  size_t reclen, size_t keylen)
{
	void *copy;

	if (reserve(&t->recs, &t->cap, t->n + 1, sizeof(*t->recs)))
		return 0;
	copy = arena_alloc(&p->arena, reclen);
	if (!copy)
		return 0;
	memcpy(copy, rec, reclen);
	/* On failure the arena copy is just unused space until free. */
	if (hashmap__put(t->ids, copy, keylen, t->n + 1))
		return 0;
	t->recs[t->n++] = copy;
	return t->n;
}

/* find-or-add for records that are their own key. */
static uint64_t table_intern(struct pprof *p, struct table *t,
			     const void *rec, size_t len)
{
	uint64_t id = table_find(t, rec, len);

	return id ? id : table_add(p, t, rec, len, len);
}

/* Makes sure the scratch buffer holds at least words 64-bit words. */
static int scratch_reserve(struct pprof *p, size_t words)
{
	return reserve(&p->scratch, &p->scratch_cap, words,
		       sizeof(*p->scratch));
}

/* ---- public API ---- */

int64_t pprof__str(struct pprof *p, const char *s)
{
	uint64_t id;
	size_t len;

	if (!s)
		return 0;
	len = strlen(s);
	id = table_find(&p->strs, s, len);
	if (!id)
		id = table_add(p, &p->strs, s, len + 1, len);
	if (!id) {
		errno = ENOMEM;
		return -1;
	}
	return (int64_t)(id - 1);
}

static int set_types(struct pprof *p, const struct pprof_vt *types,
		     size_t ntypes, struct pprof_vt period_type)
{
	size_t i;

	if (ntypes > SIZE_MAX / (2 * sizeof(*p->type_strs)))
		return -ENOMEM;
	p->type_strs = malloc((ntypes ? ntypes : 1) * 2 *
			      sizeof(*p->type_strs));
	if (!p->type_strs)
		return -ENOMEM;
	p->ntypes = ntypes;
	for (i = 0; i < ntypes; i++) {
		p->type_strs[2 * i] = pprof__str(p, types[i].type);
		p->type_strs[2 * i + 1] = pprof__str(p, types[i].unit);
		if (p->type_strs[2 * i] < 0 || p->type_strs[2 * i + 1] < 0)
			return -ENOMEM;
	}
	p->period_type[0] = pprof__str(p, period_type.type);
	p->period_type[1] = pprof__str(p, period_type.unit);
	if (p->period_type[0] < 0 || p->period_type[1] < 0)
		return -ENOMEM;
	return 0;
}

struct pprof *pprof__new(const struct pprof_vt *types, size_t ntypes,
			 struct pprof_vt period_type, int64_t period)
{
	struct pprof *p = NULL;
	int err = -EINVAL;

	if (ntypes && !types)
		goto cleanup;
	err = -ENOMEM;
	p = calloc(1, sizeof(*p));
	if (!p)
		goto cleanup;
	if (table_init(&p->strs) || table_init(&p->mappings) ||
	    table_init(&p->functions) || table_init(&p->locations) ||
	    table_init(&p->samples))
		goto cleanup;
	/* The format requires string_table[0] == "". */
	if (pprof__str(p, "") != 0)
		goto cleanup;
	err = set_types(p, types, ntypes, period_type);
	if (err)
		goto cleanup;
	p->period = period;
	return p;
cleanup:
	pprof__free(p);         /* copes with a partly built p */
	errno = -err;
	return NULL;
}

void pprof__free(struct pprof *p)
{
	if (!p)
		return;
	table_free(&p->strs);
	table_free(&p->mappings);
	table_free(&p->functions);
	table_free(&p->locations);
	table_free(&p->samples);
	arena_free(&p->arena);
	free(p->type_strs);
	free(p->comments);
	free(p->values);
	free(p->scratch);
	free(p->labels);
	free(p->map_info);
	free(p->events);
	free(p);
}

/* Interns s as a uint64_t record field; false on ENOMEM. */
static bool str_field(struct pprof *p, const char *s, uint64_t *field)
{
	int64_t idx = pprof__str(p, s);

	*field = (uint64_t)idx;
	return idx >= 0;
}

uint64_t pprof__mapping(struct pprof *p, uint64_t start, uint64_t limit,
			uint64_t file_offset, const char *filename,
			const char *build_id)
{
	struct pp_mapping m = {
		.start = start, .limit = limit, .offset = file_offset,
	};
	uint64_t id = 0;

	if (!str_field(p, filename, &m.filename) ||
	    !str_field(p, build_id, &m.build_id))
		goto cleanup;
	id = table_intern(p, &p->mappings, &m, sizeof(m));
cleanup:
	if (!id)
		errno = ENOMEM;
	return id;
}

/* Adds flags to a mapping's MAP_* bits. Returns 0, -ENOENT or -ENOMEM. */
static int map_info_add(struct pprof *p, uint64_t mapping_id, uint8_t flags)
{
	size_t old = p->map_info_cap;

	if (!mapping_id || mapping_id > p->mappings.n)
		return -ENOENT;
	if (reserve(&p->map_info, &p->map_info_cap, p->mappings.n,
		    sizeof(*p->map_info)))
		return -ENOMEM;
	if (p->map_info_cap > old)
		memset(p->map_info + old, 0, p->map_info_cap - old);
	p->map_info[mapping_id - 1] |= flags;
	return 0;
}

int pprof__mapping_set_info(struct pprof *p, uint64_t mapping_id,
			    bool has_filenames, bool has_line_numbers,
			    bool has_inline_frames)
{
	return map_info_add(p, mapping_id,
			    (has_filenames ? MAP_HAS_FILENAMES : 0) |
			    (has_line_numbers ? MAP_HAS_LINE_NUMBERS : 0) |
			    (has_inline_frames ? MAP_HAS_INLINE_FRAMES : 0));
}

int pprof__mapping_set_exe(struct pprof *p, uint64_t mapping_id)
{
	return map_info_add(p, mapping_id, MAP_EXE);
}

uint64_t pprof__function(struct pprof *p, const char *name,
			 const char *system_name, const char *filename)
{
	struct pp_function f;
	uint64_t id = 0;

	if (!str_field(p, name, &f.name) ||
	    !str_field(p, system_name, &f.system_name) ||
	    !str_field(p, filename, &f.filename))
		goto cleanup;
	id = table_intern(p, &p->functions, &f, sizeof(f));
cleanup:
	if (!id)
		errno = ENOMEM;
	return id;
}

uint64_t pprof__find_location(const struct pprof *p, uint64_t mapping_id,
			      uint64_t address)
{
	const uint64_t key[LOC_KEY_WORDS] = { mapping_id, address };

	return table_find(&p->locations, key, sizeof(key));
}

/* A location record of nlines lines in the scratch buffer; NULL on
 * ENOMEM. */
static uint64_t *location_record(struct pprof *p, uint64_t mapping_id,
				 uint64_t address,
				 const uint64_t *function_ids,
				 const int64_t *lines, size_t nlines)
{
	uint64_t *rec;

	if (nlines > (SIZE_MAX / sizeof(*rec) - LOC_HDR_WORDS) / 2 ||
	    scratch_reserve(p, LOC_HDR_WORDS + 2 * nlines))
		return NULL;
	rec = p->scratch;
	rec[0] = mapping_id;
	rec[1] = address;
	rec[2] = nlines;
	for (size_t i = 0; i < nlines; i++) {
		rec[LOC_HDR_WORDS + 2 * i] = function_ids[i];
		rec[LOC_HDR_WORDS + 2 * i + 1] = lines ? (uint64_t)lines[i] : 0;
	}
	return rec;
}

int pprof__location_name(struct pprof *p, uint64_t id,
			 const uint64_t *function_ids, const int64_t *lines,
			 size_t nlines)
{
	const uint64_t *old;
	uint64_t *rec;
	void *copy;

	if (!id || id > p->locations.n || !nlines || !function_ids)
		return -EINVAL;
	old = p->locations.recs[id - 1];
	if (old[2])
		return -EEXIST;
	rec = location_record(p, old[0], old[1], function_ids, lines, nlines);
	copy = rec ? arena_alloc(&p->arena,
				 (LOC_HDR_WORDS + 2 * nlines) * sizeof(*rec)) :
		     NULL;
	if (!copy)
		return -ENOMEM;
	memcpy(copy, rec, (LOC_HDR_WORDS + 2 * nlines) * sizeof(*rec));
	/* The index keeps borrowing the old record's key, which is the
	 * same and stays in the arena. */
	p->locations.recs[id - 1] = copy;
	return 0;
}

uint64_t pprof__location(struct pprof *p, uint64_t mapping_id,
			 uint64_t address, const uint64_t *function_ids,
			 const int64_t *lines, size_t nlines)
{
	uint64_t id = pprof__find_location(p, mapping_id, address);
	uint64_t *rec;

	if (id)
		return id;
	if (nlines && !function_ids) {
		errno = EINVAL;
		return 0;
	}
	rec = location_record(p, mapping_id, address, function_ids, lines,
			      nlines);
	if (!rec)
		goto cleanup;
	id = table_add(p, &p->locations, rec,
		       (LOC_HDR_WORDS + 2 * nlines) * sizeof(*rec),
		       LOC_KEY_WORDS * sizeof(*rec));
cleanup:
	if (!id)
		errno = ENOMEM;
	return id;
}

static int label_cmp(const void *a, const void *b)
{
	const struct pp_label *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->str != y->str)
		return x->str < y->str ? -1 : 1;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	if (x->num_unit != y->num_unit)
		return x->num_unit < y->num_unit ? -1 : 1;
	return 0;
}

/* Interns and sorts the labels into p->labels, in a canonical form: string
 * labels carry no num/num_unit, so equal label sets compare equal. */
static int canon_labels(struct pprof *p, const struct pprof_label *labels,
			size_t nlabels)
{
	size_t i;

	if (reserve(&p->labels, &p->labels_cap, nlabels, sizeof(*p->labels)))
		return -ENOMEM;
	for (i = 0; i < nlabels; i++) {
		const struct pprof_label *l = &labels[i];
		struct pp_label *c = &p->labels[i];

		memset(c, 0, sizeof(*c));
		c->key = pprof__str(p, l->key);
		if (l->str) {
			c->str = pprof__str(p, l->str);
		} else {
			c->num = l->num;
			c->num_unit = pprof__str(p, l->num_unit);
		}
		if (c->key < 0 || c->str < 0 || c->num_unit < 0)
			return -ENOMEM;
	}
	if (nlabels > 1)
		qsort(p->labels, nlabels, sizeof(*p->labels), label_cmp);
	return 0;
}

/* Builds the sample record (its own dedup key) in p->scratch; returns its
 * length in words, 0 on ENOMEM. */
static size_t build_sample_key(struct pprof *p, const uint64_t *location_ids,
			       size_t nlocs, size_t nlabels)
{
	size_t words, i;
	uint64_t *w;

	if (nlocs > SIZE_MAX / sizeof(*w) / 2 ||
	    nlabels > SIZE_MAX / sizeof(*w) / 2 / LABEL_WORDS)
		return 0;
	words = 2 + nlocs + nlabels * LABEL_WORDS;
	if (scratch_reserve(p, words))
		return 0;
	w = p->scratch;
	*w++ = nlocs;
	if (nlocs)
		memcpy(w, location_ids, nlocs * sizeof(*w));
	w += nlocs;
	*w++ = nlabels;
	for (i = 0; i < nlabels; i++) {
		*w++ = (uint64_t)p->labels[i].key;
		*w++ = (uint64_t)p->labels[i].str;
		*w++ = (uint64_t)p->labels[i].num;
		*w++ = (uint64_t)p->labels[i].num_unit;
	}
	return words;
}

/* Keeps sample id's event: its time and values. 0 or -ENOMEM. */
static int add_event(struct pprof *p, uint64_t id, const int64_t *values,
		     int64_t time_ns)
{
	size_t stride = EVENT_WORDS + p->ntypes;
	int64_t *row;

	if (reserve(&p->events, &p->events_cap, p->nevents + 1,
		    stride * sizeof(*p->events)))
		return -ENOMEM;
	row = p->events + p->nevents++ * stride;
	row[0] = (int64_t)(id - 1);
	row[1] = time_ns;
	for (size_t k = 0; k < p->ntypes; k++)
		row[EVENT_WORDS + k] = values ? values[k] : 0;
	return 0;
}

int pprof__set_timeline(struct pprof *p)
{
	p->str_t = pprof__str(p, "t");
	p->str_ns = pprof__str(p, "nanoseconds");
	if (p->str_t < 0 || p->str_ns < 0)
		return -ENOMEM;
	p->timeline = true;
	return 0;
}

void pprof__set_time_origin(struct pprof *p, int64_t origin_ns)
{
	p->time_origin = origin_ns;
}

bool pprof__type_is(const struct pprof *p, size_t i, const char *type,
		    const char *unit)
{
	return i < p->ntypes &&
	       !strcmp(p->strs.recs[p->type_strs[2 * i]], type) &&
	       !strcmp(p->strs.recs[p->type_strs[2 * i + 1]], unit);
}

size_t pprof__event_count(const struct pprof *p)
{
	return p->nevents;
}

int pprof__add_sample(struct pprof *p, const uint64_t *location_ids,
		      size_t nlocs, const int64_t *values,
		      const struct pprof_label *labels, size_t nlabels)
{
	return pprof__add_sample_at(p, location_ids, nlocs, values, labels,
				    nlabels, PPROF_NO_TIME);
}

int pprof__add_sample_at(struct pprof *p, const uint64_t *location_ids,
			 size_t nlocs, const int64_t *values,
			 const struct pprof_label *labels, size_t nlabels,
			 int64_t time_ns)
{
	size_t words, bytes, k;
	uint64_t id;
	int64_t *row;
	int err = -EINVAL;

	if ((nlocs && !location_ids) || (nlabels && !labels))
		goto cleanup;
	err = canon_labels(p, labels, nlabels);
	if (err)
		goto cleanup;
	err = -ENOMEM;
	words = build_sample_key(p, location_ids, nlocs, nlabels);
	if (!words)
		goto cleanup;
	bytes = words * sizeof(*p->scratch);
	id = table_find(&p->samples, p->scratch, bytes);
	if (!id) {
		/* Room for the values row first, so a failure cannot leave
		 * a sample without one. */
		if (reserve(&p->values, &p->values_cap, p->samples.n + 1,
			    (p->ntypes ? p->ntypes : 1) * sizeof(*p->values)))
			goto cleanup;
		id = table_add(p, &p->samples, p->scratch, bytes, bytes);
		if (!id)
			goto cleanup;
		memset(p->values + (id - 1) * p->ntypes, 0,
		       p->ntypes * sizeof(*p->values));
	}
	/* The event first: a failure leaves the aggregate as it was. */
	if (p->timeline && add_event(p, id, values, time_ns))
		goto cleanup;
	row = p->values + (id - 1) * p->ntypes;
	for (k = 0; values && k < p->ntypes; k++)
		row[k] += values[k];
	return 0;
cleanup:
	errno = -err;
	return err;
}

void pprof__set_time(struct pprof *p, int64_t time_nanos,
		     int64_t duration_nanos)
{
	p->time_nanos = time_nanos;
	p->duration_nanos = duration_nanos;
}

int pprof__add_comment(struct pprof *p, const char *comment)
{
	int64_t idx;

	if (reserve(&p->comments, &p->comments_cap, p->ncomments + 1,
		    sizeof(*p->comments)))
		goto cleanup;
	idx = pprof__str(p, comment);
	if (idx < 0)
		goto cleanup;
	p->comments[p->ncomments++] = idx;
	return 0;
cleanup:
	errno = ENOMEM;
	return -ENOMEM;
}

const char *pprof__comment(const struct pprof *p, size_t i)
{
	return i < p->ncomments ? p->strs.recs[p->comments[i]] : NULL;
}

int64_t pprof__time_nanos(const struct pprof *p)
{
	return p->time_nanos;
}

size_t pprof__sample_count(const struct pprof *p)
{
	return p->samples.n;
}

/* ---- encoding ---- */

/* Which entries an encoding writes: NULL arrays mean all. Ids stay those
 * of the builder, so a subset needs no renumbering. */
struct sel {
	uint8_t *sample, *loc, *fn, *map;
};

static bool keep(const uint8_t *set, size_t i)
{
	return !set || set[i];
}

/* Which mappings hold a kept location without lines (one no symbol
 * names): a calloc'd flag per mapping id - 1, NULL on ENOMEM. */
static uint8_t *unnamed_mappings(const struct pprof *p, const struct sel *sel)
{
	uint8_t *unnamed = calloc(p->mappings.n + 1, 1);
	const uint64_t *r;

	if (!unnamed)
		return NULL;
	for (size_t i = 0; i < p->locations.n; i++) {
		r = p->locations.recs[i];
		if (keep(sel->loc, i) && !r[2] && r[0] && r[0] <= p->mappings.n)
			unnamed[r[0] - 1] = 1;
	}
	return unnamed;
}

static size_t sample_nlabels(const uint64_t *r)
{
	return r[1 + r[0]];
}

static void sel_free(struct sel *sel)
{
	free(sel->sample);
	free(sel->loc);
	free(sel->fn);
	free(sel->map);
}

/* Whether sample record r has the string label (key, str), by index. */
static bool has_label(const uint64_t *r, uint64_t key, uint64_t str)
{
	const uint64_t *lw = r + 2 + r[0];

	for (size_t j = 0; j < sample_nlabels(r); j++, lw += LABEL_WORDS)
		if (lw[0] == key && lw[1] == str)
			return true;
	return false;
}

/* Marks the samples with the label and everything they reference. */
static int select_label(const struct pprof *p, const char *key,
			const char *value, struct sel *sel)
{
	uint64_t k = table_find(&p->strs, key, strlen(key));
	uint64_t v = table_find(&p->strs, value, strlen(value));

	sel->sample = calloc(p->samples.n + 1, 1);
	sel->loc = calloc(p->locations.n + 1, 1);
	sel->fn = calloc(p->functions.n + 1, 1);
	sel->map = calloc(p->mappings.n + 1, 1);
	if (!sel->sample || !sel->loc || !sel->fn || !sel->map)
		return -ENOMEM;
	if (!k || !v)
		return 0;	/* no sample can carry a string never interned */
	for (size_t i = 0; i < p->samples.n; i++) {
		const uint64_t *r = p->samples.recs[i];

		if (!has_label(r, k - 1, v - 1))
			continue;
		sel->sample[i] = 1;
		for (size_t j = 0; j < r[0]; j++) {
			const uint64_t *loc = p->locations.recs[r[1 + j] - 1];

			sel->loc[r[1 + j] - 1] = 1;
			if (loc[0])
				sel->map[loc[0] - 1] = 1;
			for (size_t l = 0; l < loc[2]; l++)
				sel->fn[loc[LOC_HDR_WORDS + 2 * l] - 1] = 1;
		}
	}
	return 0;
}

/* ---- the main mapping ---- */

static bool map_is_exe(const struct pprof *p, uint64_t mapping_id)
{
	return mapping_id && mapping_id - 1 < p->map_info_cap &&
	       (p->map_info[mapping_id - 1] & MAP_EXE);
}

/* The executable mapping the most of the written samples pass through
 * (value column 0, or 1 each without columns; a sample counts once per
 * mapping), into *best; 0 when no written mapping is an executable.
 * Returns 0 or -ENOMEM. */
static int busiest_exe(const struct pprof *p, const struct sel *sel,
		       uint64_t *best)
{
	size_t n = p->mappings.n;
	int64_t *count = NULL;
	size_t *last = NULL;	/* the last sample counted, + 1, per mapping */
	bool any = false;

	*best = 0;
	for (size_t i = 0; i < n && !any; i++)
		any = keep(sel->map, i) && map_is_exe(p, i + 1);
	if (!any)
		return 0;
	count = calloc(n + 1, sizeof(*count));
	last = calloc(n + 1, sizeof(*last));
	if (!count || !last) {
		free(count);
		free(last);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->samples.n; i++) {
		const uint64_t *r = p->samples.recs[i];
		int64_t v = p->ntypes ? p->values[i * p->ntypes] : 1;

		if (!keep(sel->sample, i))
			continue;
		for (size_t j = 0; j < r[0]; j++) {
			uint64_t m = ((const uint64_t *)
				      p->locations.recs[r[1 + j] - 1])[0];

			if (!map_is_exe(p, m) || last[m] == i + 1)
				continue;
			last[m] = i + 1;
			count[m] += v;
		}
	}
	for (uint64_t m = 1; m <= n; m++)
		if (keep(sel->map, m - 1) && map_is_exe(p, m) &&
		    (!*best || count[m] > count[*best]))
			*best = m;
	free(count);
	free(last);
	return 0;
}

/* ---- the wire format, written directly ----
 *
 * Building protobuf-c's structs first cost a window more than the
 * profile itself: a struct and a pointer per label of every sample,
 * cleared and then packed, in arrays big enough to be fresh pages from
 * mmap every window (a third of a 19 Hz agent's page faults). The
 * records are written as they are instead, in one counting pass that
 * sizes the buffer and one writing pass, in field order with proto3's
 * rules (a zero scalar is left out, repeated numbers are packed), as
 * protobuf-c wrote them. */

enum { WT_VARINT = 0, WT_LEN = 2 };

/* Where the bytes go; buf NULL: only counts them (and the biggest item
 * written at the top level, in max). With z, the bytes are gzipped as
 * they come: buf holds only the last stretch, fed to z at drain points
 * between top-level items, so a big profile is never whole in memory. */
struct pbw {
	uint8_t *buf;
	size_t n;
	size_t max;
	struct gzip_stream *z;
};

/* Bytes buf holds before a drain point feeds them to z. */
#define DRAIN_AT	(64u << 10)

static void note_item(struct pbw *w, size_t len)
{
	if (len + 16 > w->max)
		w->max = len + 16;	/* with its tag and length */
}

/* A point between top-level items: what buf holds goes to z. */
static void drain(struct pbw *w)
{
	if (w->z && w->buf && w->n >= DRAIN_AT) {
		gzip__feed(w->z, w->buf, w->n);
		w->n = 0;
	}
}

static size_t varint_size(uint64_t v)
{
	return (size_t)(64 - __builtin_clzll(v | 1) + 6) / 7;
}

static inline __attribute__((always_inline)) void put_varint(struct pbw *w,
							   uint64_t v)
{
	uint8_t *b;

	if (!w->buf) {
		w->n += varint_size(v);
		return;
	}
	b = w->buf + w->n;
	for (; v >= 0x80; v >>= 7)
		*b++ = (uint8_t)(v | 0x80);
	*b++ = (uint8_t)v;
	w->n = (size_t)(b - w->buf);
}

static void put_tag(struct pbw *w, unsigned int field, unsigned int wt)
{
	put_varint(w, field << 3 | wt);
}

/* An int64, uint64 or bool field; int64s are varints of their two's
 * complement, as the format has them. */
static void put_num(struct pbw *w, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	put_tag(w, field, WT_VARINT);
	put_varint(w, v);
}

static void put_len(struct pbw *w, unsigned int field, size_t len)
{
	put_tag(w, field, WT_LEN);
	put_varint(w, len);
}

static void put_bytes(struct pbw *w, unsigned int field, const void *data,
		      size_t len)
{
	put_len(w, field, len);
	if (w->buf)
		memcpy(w->buf + w->n, data, len);
	else
		note_item(w, len);
	w->n += len;
}

static void put_packed(struct pbw *w, unsigned int field, const void *v,
		       size_t n)
{
	const uint64_t *u = v;
	size_t len = 0;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		len += varint_size(u[i]);
	if (!w->buf)
		note_item(w, len);
	put_len(w, field, len);
	for (size_t i = 0; i < n; i++)
		put_varint(w, u[i]);
}

/* What a file holds: the selection, and the string indices it uses. */
struct wctx {
	const struct pprof *p;
	const struct sel *sel;
	int64_t *remap;		/* index -> new index + 1; NULL: all, as they are */
	const char **strs;	/* the strings, in the file's order */
	size_t nstrs;
	uint8_t *unnamed;	/* per mapping: holds a location without lines */
	/* The mapping written first (0: none; the others keep their order,
	 * every id stays). pprof names the program after the profile's
	 * first mapping (the File: and Build ID: of its reports), so this is
	 * the executable most samples pass through: record -- CMD starts a
	 * shell or a launcher as often as the program itself, and -a sees
	 * every process. */
	uint64_t first_map;
	const int64_t *comments;	/* as the file numbers them */
	int64_t *own_comments;	/* their renumbered copy, when compacting */
	uint32_t *sample_sizes;	/* each sample's (or event's) length */
};

/* A string index as the file numbers it. */
static uint64_t str_ix(const struct wctx *c, int64_t i)
{
	if (!c->remap)
		return (uint64_t)i;
	if (i <= 0 || (uint64_t)i >= c->p->strs.n)
		return 0;
	return (uint64_t)(c->remap[i] - 1);
}

typedef void (*msg_fn)(struct pbw *w, const struct wctx *c, const void *rec,
		       size_t i);

/* A nested message, its length first. size, when not NULL, holds the
 * length: the counting pass sets it, the writing pass uses it; without it,
 * the writing pass counts the message again first. */
static void put_msg(struct pbw *w, unsigned int field, msg_fn fn,
		    const struct wctx *c, const void *rec, size_t i,
		    uint32_t *size)
{
	struct pbw count = { NULL, 0 };

	if (w->buf && size) {
		count.n = *size;
	} else {
		fn(&count, c, rec, i);
		if (size)
			*size = (uint32_t)count.n;
	}
	put_len(w, field, count.n);
	if (!w->buf) {
		w->n += count.n;
		note_item(w, count.n);
		return;
	}
	fn(w, c, rec, i);
}

/* A message that never reaches 128 bytes, whose length is one byte: a
 * label, a line or a value type (at most four varints of at most ten
 * bytes, each after a one-byte tag). It is written first and its length
 * after, not counted twice. */
static void put_small_msg(struct pbw *w, unsigned int field, msg_fn fn,
			  const struct wctx *c, const void *rec)
{
	size_t at;

	put_tag(w, field, WT_LEN);
	at = w->n++;
	fn(w, c, rec, 0);
	if (w->buf)
		w->buf[at] = (uint8_t)(w->n - at - 1);
}

/* rec: the (type, unit) string indices. */
static void w_value_type(struct pbw *w, const struct wctx *c, const void *rec,
			 size_t i)
{
	const int64_t *s = rec;

	(void)i;
	put_num(w, 1, str_ix(c, s[0]));
	put_num(w, 2, str_ix(c, s[1]));
}

static void w_label(struct pbw *w, const struct wctx *c, const void *rec,
		    size_t i)
{
	const uint64_t *lw = rec;

	(void)i;
	put_num(w, 1, str_ix(c, (int64_t)lw[0]));
	put_num(w, 2, str_ix(c, (int64_t)lw[1]));
	put_num(w, 3, lw[2]);
	put_num(w, 4, str_ix(c, (int64_t)lw[3]));
}

static void w_sample(struct pbw *w, const struct wctx *c, const void *rec,
		     size_t i)
{
	const uint64_t *r = rec, *lw = r + 2 + r[0];
	const struct pprof *p = c->p;

	put_packed(w, 1, r + 1, r[0]);
	put_packed(w, 2, p->values + i * p->ntypes, p->ntypes);
	for (size_t j = 0; j < sample_nlabels(r); j++, lw += LABEL_WORDS)
		put_small_msg(w, 3, w_label, c, lw);
}

/* rec: an event row (struct pprof's events): its sample's locations and
 * labels, its own values, and its time as the label t. */
static void w_event(struct pbw *w, const struct wctx *c, const void *rec,
		    size_t i)
{
	const int64_t *e = rec;
	const struct pprof *p = c->p;
	const uint64_t *r = p->samples.recs[e[0]], *lw = r + 2 + r[0];
	/* The difference in unsigned arithmetic: e[1] may be PPROF_NO_TIME
	 * (INT64_MIN, not written below), whose signed difference
	 * overflows. Two's complement gives the same bits otherwise. */
	uint64_t t[LABEL_WORDS] = { (uint64_t)p->str_t, 0,
				    (uint64_t)e[1] - (uint64_t)p->time_origin,
				    (uint64_t)p->str_ns };

	(void)i;
	put_packed(w, 1, r + 1, r[0]);
	put_packed(w, 2, (const uint64_t *)e + EVENT_WORDS, p->ntypes);
	for (size_t j = 0; j < sample_nlabels(r); j++, lw += LABEL_WORDS)
		put_small_msg(w, 3, w_label, c, lw);
	if (e[1] != PPROF_NO_TIME)
		put_small_msg(w, 3, w_label, c, t);
}

static void w_mapping(struct pbw *w, const struct wctx *c, const void *rec,
		      size_t i)
{
	const struct pp_mapping *r = rec;
	uint8_t info = i < c->p->map_info_cap ? c->p->map_info[i] : 0;

	put_num(w, 1, i + 1);
	put_num(w, 2, r->start);
	put_num(w, 3, r->limit);
	put_num(w, 4, r->offset);
	put_num(w, 5, str_ix(c, (int64_t)r->filename));
	put_num(w, 6, str_ix(c, (int64_t)r->build_id));
	/* Named frames need no symbolizing again; a mapping with an
	 * unnamed one says so, so that pprof, or a server that has the
	 * binary, can name it by its address. */
	put_num(w, 7, !c->unnamed[i]);
	put_num(w, 8, !!(info & MAP_HAS_FILENAMES));
	put_num(w, 9, !!(info & MAP_HAS_LINE_NUMBERS));
	put_num(w, 10, !!(info & MAP_HAS_INLINE_FRAMES));
}

/* rec: a location's (function id, line) pair. */
static void w_line(struct pbw *w, const struct wctx *c, const void *rec,
		   size_t i)
{
	const uint64_t *ln = rec;

	(void)c;
	(void)i;
	put_num(w, 1, ln[0]);
	put_num(w, 2, ln[1]);
}

static void w_location(struct pbw *w, const struct wctx *c, const void *rec,
		       size_t i)
{
	const uint64_t *r = rec;

	put_num(w, 1, i + 1);
	put_num(w, 2, r[0]);
	put_num(w, 3, r[1]);
	for (size_t j = 0; j < r[2]; j++)
		put_small_msg(w, 4, w_line, c, r + LOC_HDR_WORDS + 2 * j);
}

static void w_function(struct pbw *w, const struct wctx *c, const void *rec,
		       size_t i)
{
	const struct pp_function *r = rec;

	put_num(w, 1, i + 1);
	put_num(w, 2, str_ix(c, (int64_t)r->name));
	put_num(w, 3, str_ix(c, (int64_t)r->system_name));
	put_num(w, 4, str_ix(c, (int64_t)r->filename));
}

/* The mappings in the file's order, for k from 0 to mappings.n: slot 0
 * holds the first mapping, slot k > 0 mapping k - 1 unless it is not
 * kept or is the first. Returns the mapping's index, or -1 for none. */
static ptrdiff_t mapping_in_file(const struct wctx *c, size_t k)
{
	if (!k)
		return c->first_map ? (ptrdiff_t)c->first_map - 1 : -1;
	if (!keep(c->sel->map, k - 1) || k == c->first_map)
		return -1;
	return (ptrdiff_t)k - 1;
}

/* Every kept record of table t, as field field; sizes: NULL, or room for
 * a length per record (put_msg). */
static void put_table(struct pbw *w, unsigned int field, msg_fn fn,
		      const struct wctx *c, const struct table *t,
		      const uint8_t *set, uint32_t *sizes)
{
	for (size_t i = 0; i < t->n; i++)
		if (keep(set, i)) {
			put_msg(w, field, fn, c, t->recs[i], i,
				sizes ? sizes + i : NULL);
			drain(w);
		}
}

/* A timeline's samples: one per event, in the order they came. */
static void put_events(struct pbw *w, const struct wctx *c)
{
	const struct pprof *p = c->p;
	size_t stride = EVENT_WORDS + p->ntypes;

	for (size_t i = 0; i < p->nevents; i++) {
		const int64_t *e = p->events + i * stride;

		if (keep(c->sel->sample, (size_t)e[0])) {
			put_msg(w, 2, w_event, c, e, i, c->sample_sizes + i);
			drain(w);
		}
	}
}

static void put_profile(struct pbw *w, const struct wctx *c)
{
	const struct pprof *p = c->p;
	const struct sel *sel = c->sel;
	size_t nmap = p->mappings.n;

	for (size_t i = 0; i < p->ntypes; i++)
		put_small_msg(w, 1, w_value_type, c, p->type_strs + 2 * i);
	if (p->timeline)
		put_events(w, c);
	else
		put_table(w, 2, w_sample, c, &p->samples, sel->sample,
			  c->sample_sizes);
	for (size_t k = 0; k <= nmap; k++) {
		ptrdiff_t i = mapping_in_file(c, k);

		if (i >= 0) {
			put_msg(w, 3, w_mapping, c, p->mappings.recs[i],
				(size_t)i, NULL);
			drain(w);
		}
	}
	put_table(w, 4, w_location, c, &p->locations, sel->loc, NULL);
	put_table(w, 5, w_function, c, &p->functions, sel->fn, NULL);
	for (size_t i = 0; i < c->nstrs; i++) {
		put_bytes(w, 6, c->strs[i], strlen(c->strs[i]));
		drain(w);
	}
	put_num(w, 9, (uint64_t)p->time_nanos);
	put_num(w, 10, (uint64_t)p->duration_nanos);
	put_small_msg(w, 11, w_value_type, c, p->period_type);
	put_num(w, 12, (uint64_t)p->period);
	put_packed(w, 13, c->comments, p->ncomments);
}

/* The index of string i in the file, given one at its first use. */
static void use_str(struct wctx *c, int64_t i)
{
	if (i <= 0 || (uint64_t)i >= c->p->strs.n || c->remap[i])
		return;
	c->strs[c->nstrs] = c->p->strs.recs[i];
	c->remap[i] = (int64_t)++c->nstrs;
}

/* A selection's file holds the strings its own records name, not the
 * whole window's: one service's file carries no other service's function
 * or file names, and encoding a window costs the size of each service's
 * part, not the window's size times the services. They are numbered in
 * the order of their first use in the file. */
static void compact_strings(struct wctx *c)
{
	const struct pprof *p = c->p;
	const struct sel *sel = c->sel;

	c->strs[0] = "";
	c->nstrs = 1;
	for (size_t i = 0; i < 2 * p->ntypes; i++)
		use_str(c, p->type_strs[i]);
	use_str(c, p->period_type[0]);
	use_str(c, p->period_type[1]);
	if (p->timeline) {
		use_str(c, p->str_t);
		use_str(c, p->str_ns);
	}
	for (size_t i = 0; i < p->samples.n; i++) {
		const uint64_t *r = p->samples.recs[i], *lw = r + 2 + r[0];

		if (!keep(sel->sample, i))
			continue;
		for (size_t j = 0; j < sample_nlabels(r); j++, lw += LABEL_WORDS) {
			use_str(c, (int64_t)lw[0]);
			use_str(c, (int64_t)lw[1]);
			use_str(c, (int64_t)lw[3]);
		}
	}
	for (size_t k = 0; k <= p->mappings.n; k++) {
		ptrdiff_t i = mapping_in_file(c, k);
		const struct pp_mapping *m;

		if (i < 0)
			continue;
		m = p->mappings.recs[i];
		use_str(c, (int64_t)m->filename);
		use_str(c, (int64_t)m->build_id);
	}
	for (size_t i = 0; i < p->functions.n; i++) {
		const struct pp_function *f = p->functions.recs[i];

		if (!keep(sel->fn, i))
			continue;
		use_str(c, (int64_t)f->name);
		use_str(c, (int64_t)f->system_name);
		use_str(c, (int64_t)f->filename);
	}
	for (size_t i = 0; i < p->ncomments; i++) {
		use_str(c, p->comments[i]);
		c->own_comments[i] = (int64_t)str_ix(c, p->comments[i]);
	}
}

/* The file's strings: all of them, or a selection's (compact_strings). */
static int choose_strings(struct wctx *c, bool compact)
{
	const struct pprof *p = c->p;

	c->strs = calloc(p->strs.n ? p->strs.n : 1, sizeof(*c->strs));
	if (!c->strs)
		return -ENOMEM;
	if (!compact) {
		for (size_t i = 0; i < p->strs.n; i++)
			c->strs[i] = p->strs.recs[i];
		c->nstrs = p->strs.n;
		c->comments = p->comments;
		return 0;
	}
	c->remap = calloc(p->strs.n ? p->strs.n : 1, sizeof(*c->remap));
	c->own_comments = calloc(p->ncomments ? p->ncomments : 1,
				 sizeof(*c->own_comments));
	if (!c->remap || !c->own_comments)
		return -ENOMEM;
	c->comments = c->own_comments;
	compact_strings(c);
	return 0;
}

/* The profile, selection sel of it, gzipped into *out (malloc'd): counted
 * first, then written through a buffer of DRAIN_AT and one item that is
 * fed to gzip as it fills. */
static int encode(const struct pprof *p, const struct sel *sel, bool compact,
		  uint8_t **out, size_t *len)
{
	struct wctx c = { .p = p, .sel = sel };
	struct gzip_stream gz;
	struct pbw w = { NULL, 0, 0, NULL };
	size_t nsizes = p->timeline ? p->nevents : p->samples.n, cap;
	int err = -ENOMEM, ferr;

	c.unnamed = unnamed_mappings(p, sel);
	c.sample_sizes = malloc((nsizes ? nsizes : 1) * sizeof(*c.sample_sizes));
	if (!c.unnamed || !c.sample_sizes)
		goto cleanup;
	err = busiest_exe(p, sel, &c.first_map);
	if (!err)
		err = choose_strings(&c, compact);
	if (err)
		goto cleanup;
	put_profile(&w, &c);
	/* what is written between two drain points: less than DRAIN_AT,
	 * one item, and the profile's few small top-level fields */
	cap = DRAIN_AT + w.max + 256;
	if (cap > w.n)
		cap = w.n ? w.n : 1;
	err = gzip__begin(&gz, w.n);
	w = (struct pbw){ malloc(cap), 0, 0, &gz };
	if (!err && !w.buf)
		err = -ENOMEM;
	if (!err) {
		put_profile(&w, &c);
		gzip__feed(&gz, w.buf, w.n);
	}
	free(w.buf);
	ferr = gzip__finish(&gz, out, len);
	if (!err)
		err = ferr;
	else if (!ferr)
		free(*out);
cleanup:
	free(c.unnamed);
	free(c.strs);
	free(c.remap);
	free(c.own_comments);
	free(c.sample_sizes);
	if (err)
		errno = -err;
	return err;
}

int pprof__encode(const struct pprof *p, uint8_t **out, size_t *len)
{
	const struct sel all = { 0 };

	return encode(p, &all, false, out, len);
}

int pprof__encode_where(const struct pprof *p, const char *key,
			const char *value, uint8_t **out, size_t *len)
{
	struct sel sel = { 0 };
	int err = select_label(p, key, value, &sel);

	if (!err)
		err = encode(p, &sel, true, out, len);
	sel_free(&sel);
	if (err)
		errno = -err;
	return err;
}

size_t pprof__label_values(const struct pprof *p, const char *key,
			   const char **out, size_t max)
{
	uint64_t k = table_find(&p->strs, key, strlen(key));
	size_t n = 0;

	if (!k)
		return 0;
	for (size_t i = 0; i < p->samples.n; i++) {
		const uint64_t *r = p->samples.recs[i];
		const uint64_t *lw = r + 2 + r[0];

		for (size_t j = 0; j < sample_nlabels(r); j++, lw += LABEL_WORDS) {
			const char *v = p->strs.recs[lw[1]];
			bool seen = false;

			if (lw[0] != k - 1 || !lw[1])
				continue;
			for (size_t m = 0; m < n && !seen; m++)
				seen = out[m] == v;
			if (!seen && n < max)
				out[n++] = v;
		}
	}
	return n;
}
