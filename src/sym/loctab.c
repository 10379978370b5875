// SPDX-License-Identifier: BSD-2-Clause
/* Location table. Entries sit in arrays indexed by id - 1. Each array has
 * an index that deduplicates: open addressing over ids, the keys compared
 * in the entries themselves (a key is the start of its entry). A slot is
 * 4 bytes where a hashmap entry would take 32 and a copy of the key: the
 * table holds every location a window resolved, beside the pprof that
 * holds them again. Keys of functions and mappings hold interned string
 * pointers: equal strings are equal pointers. A reset table holds no
 * memory. */
#include "sym/loctab.h"
#include "util/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"

/* Ids of one array's entries by key. */
struct index {
	uint32_t *slots;		/* 0: empty */
	size_t cap;			/* 0 or a power of two */
};

/* One array of entries, and what of each is its key. */
struct entries {
	void *recs;
	size_t n, cap;
	size_t size, keylen;
	struct index index;
};

struct loctab {
	uint64_t gen;
	struct hashmap *strs;		/* string -> its copy (the key) */
	struct entries maps, fns, locs;
	struct loctab_line *lines;
	size_t nlines, lines_cap;
	uint32_t *named_late;		/* loctab__name_location's ids */
	size_t nnamed_late, named_late_cap;
};

#define MAPPING_KEY offsetof(struct loctab_mapping, has_filenames)
#define FUNCTION_KEY sizeof(struct loctab_function)
#define LOCATION_KEY offsetof(struct loctab_location, nlines)

/* Room for need elements in the array at *arrp (util/grow.h), the new
 * ones zeroed: 0 marks an empty index slot and an uncached id. */
static int grow(void *arrp, size_t *cap, size_t need, size_t elsize)
{
	size_t old = *cap;
	char *arr;

	if (grow__array(arrp, cap, need, elsize, 64))
		return -ENOMEM;
	/* Nothing new: the array may still be NULL (need 0 of an empty
	 * table), and memset of NULL is undefined even for 0 bytes. */
	if (*cap == old)
		return 0;
	memcpy(&arr, arrp, sizeof(arr));
	memset(arr + old * elsize, 0, (*cap - old) * elsize);
	return 0;
}

static const void *entry(const struct entries *e, uint32_t id)
{
	return (const char *)e->recs + (size_t)(id - 1) * e->size;
}

/* The id of the entry whose key is key, or 0. */
static uint32_t find(const struct entries *e, const void *key)
{
	size_t mask = e->index.cap - 1, i;
	uint32_t id;

	if (!e->index.cap)
		return 0;
	for (i = hashmap__hash(key, e->keylen) & mask;; i = (i + 1) & mask) {
		id = e->index.slots[i];
		if (!id || !memcmp(entry(e, id), key, e->keylen))
			return id;
	}
}

static void place(struct index *x, uint64_t hash, uint32_t id)
{
	size_t mask = x->cap - 1, i = hash & mask;

	while (x->slots[i])
		i = (i + 1) & mask;
	x->slots[i] = id;
}

/* Indexes entry id, the newest, growing the index to keep it at most
 * three quarters full. */
static int index_entry(struct entries *e, uint32_t id)
{
	struct index grown = { 0 };

	if ((size_t)id * 4 > e->index.cap * 3) {
		grown.cap = e->index.cap ? e->index.cap * 2 : 64;
		grown.slots = calloc(grown.cap, sizeof(*grown.slots));
		if (!grown.slots)
			return -ENOMEM;
		for (uint32_t old = 1; old < id; old++)
			place(&grown, hashmap__hash(entry(e, old), e->keylen),
			      old);
		free(e->index.slots);
		e->index = grown;
	}
	place(&e->index, hashmap__hash(entry(e, id), e->keylen), id);
	return 0;
}

/* Adds the entry rec, absent from e. Returns its id, 0 on ENOMEM. */
static uint32_t add(struct entries *e, const void *rec)
{
	if (grow(&e->recs, &e->cap, e->n + 1, e->size))
		return 0;
	memcpy((char *)e->recs + e->n * e->size, rec, e->size);
	if (index_entry(e, e->n + 1))
		return 0;
	return ++e->n;
}

static void entries_free(struct entries *e)
{
	free(e->recs);
	free(e->index.slots);
}

/* The table's copy of s, NULL on ENOMEM (or when s is NULL). */
static const char *intern(struct loctab *t, const char *s)
{
	size_t len;
	uint64_t v;
	char *copy;

	if (!s)
		return NULL;
	len = strlen(s);
	if (t->strs && hashmap__get(t->strs, s, len, &v))
		return (const char *)(uintptr_t)v;
	if (!t->strs && !(t->strs = hashmap__new(HASHMAP_BORROW_KEYS)))
		return NULL;
	copy = strdup(s);
	if (!copy)
		return NULL;
	if (hashmap__put(t->strs, copy, len, (uintptr_t)copy)) {
		free(copy);
		return NULL;
	}
	return copy;
}

/* Generations are unique across tables, so that a cache kept for one
 * table is not taken as valid for another. */
static uint64_t new_generation(void)
{
	static uint64_t last;

	return __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}

/* Empty, with the entries' layouts set. */
static void init(struct loctab *t)
{
	memset(t, 0, sizeof(*t));
	t->maps.size = sizeof(struct loctab_mapping);
	t->maps.keylen = MAPPING_KEY;
	t->fns.size = sizeof(struct loctab_function);
	t->fns.keylen = FUNCTION_KEY;
	t->locs.size = sizeof(struct loctab_location);
	t->locs.keylen = LOCATION_KEY;
}

struct loctab *loctab__new(void)
{
	struct loctab *t = malloc(sizeof(*t));

	if (!t)
		return NULL;
	init(t);
	t->gen = new_generation();
	return t;
}

static void free_entries(struct loctab *t)
{
	hashmap__free_values(t->strs, free);
	entries_free(&t->maps);
	entries_free(&t->fns);
	entries_free(&t->locs);
	free(t->lines);
	free(t->named_late);
}

void loctab__free(struct loctab *t)
{
	if (!t)
		return;
	free_entries(t);
	free(t);
}

void loctab__reset(struct loctab *t)
{
	free_entries(t);
	init(t);
	t->gen = new_generation();
}

uint64_t loctab__generation(const struct loctab *t)
{
	return t->gen;
}

uint32_t loctab__mapping(struct loctab *t, uint64_t start, uint64_t limit,
			 uint64_t offset, const char *file,
			 const char *build_id)
{
	struct loctab_mapping m = {
		.start = start, .limit = limit, .offset = offset,
		.file = intern(t, file), .build_id = intern(t, build_id) };
	uint32_t id;

	if ((file && !m.file) || (build_id && !m.build_id))
		return 0;
	id = find(&t->maps, &m);
	return id ? id : add(&t->maps, &m);
}

void loctab__mapping_set_info(struct loctab *t, uint32_t mapping,
			      bool has_filenames, bool has_line_numbers,
			      bool has_inline_frames)
{
	struct loctab_mapping *m;

	if (!mapping || mapping > t->maps.n)
		return;
	m = (struct loctab_mapping *)t->maps.recs + mapping - 1;
	m->has_filenames |= has_filenames;
	m->has_line_numbers |= has_line_numbers;
	m->has_inline_frames |= has_inline_frames;
}

void loctab__mapping_set_exe(struct loctab *t, uint32_t mapping)
{
	if (mapping && mapping <= t->maps.n)
		((struct loctab_mapping *)t->maps.recs)[mapping - 1].exe = true;
}

uint32_t loctab__function(struct loctab *t, const char *name,
			  const char *system_name, const char *file)
{
	struct loctab_function f = { intern(t, name), intern(t, system_name),
				     intern(t, file) };
	uint32_t id;

	if ((name && !f.name) || (system_name && !f.system_name) ||
	    (file && !f.file))
		return 0;
	id = find(&t->fns, &f);
	return id ? id : add(&t->fns, &f);
}

/* Appends n lines to the table's; their index in *first. */
static int add_lines(struct loctab *t, const uint32_t *functions,
		     const int32_t *lines, size_t n, uint32_t *first)
{
	if (n > LOCTAB_MAX_LINES ||
	    grow(&t->lines, &t->lines_cap, t->nlines + n, sizeof(*t->lines)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		t->lines[t->nlines + i] = (struct loctab_line){
			functions[i], lines ? lines[i] : 0 };
	*first = t->nlines;
	return 0;
}

uint32_t loctab__find_location(const struct loctab *t, uint32_t mapping,
			       uint64_t address)
{
	const struct loctab_location key = { address, mapping };

	return find(&t->locs, &key);
}

uint32_t loctab__location(struct loctab *t, uint32_t mapping,
			  uint64_t address, const uint32_t *functions,
			  const int32_t *lines, size_t n)
{
	struct loctab_location l = { address, mapping, n, t->nlines };
	uint32_t id = find(&t->locs, &l);

	if (id)
		return id;
	if (add_lines(t, functions, lines, n, &l.first_line))
		return 0;
	id = add(&t->locs, &l);
	if (id)
		t->nlines += n;
	return id;
}

int loctab__name_location(struct loctab *t, uint32_t id,
			  const uint32_t *functions, const int32_t *lines,
			  size_t n)
{
	struct loctab_location *l;
	uint32_t first;

	if (!id || id > t->locs.n || !n)
		return -EINVAL;
	l = (struct loctab_location *)t->locs.recs + id - 1;
	if (l->nlines)
		return -EEXIST;
	if (grow(&t->named_late, &t->named_late_cap, t->nnamed_late + 1,
		 sizeof(*t->named_late)) ||
	    add_lines(t, functions, lines, n, &first))
		return -ENOMEM;
	t->nlines += n;
	l->first_line = first;
	l->nlines = n;
	t->named_late[t->nnamed_late++] = id;
	return 0;
}

const uint32_t *loctab__named_late(const struct loctab *t, size_t *n)
{
	*n = t->nnamed_late;
	return t->named_late;
}

const struct loctab_mapping *loctab__mapping_at(const struct loctab *t,
						uint32_t id)
{
	return entry(&t->maps, id);
}

const struct loctab_function *loctab__function_at(const struct loctab *t,
						  uint32_t id)
{
	return entry(&t->fns, id);
}

const struct loctab_location *loctab__location_at(const struct loctab *t,
						  uint32_t id)
{
	return entry(&t->locs, id);
}

const struct loctab_line *loctab__lines(const struct loctab *t,
					const struct loctab_location *l)
{
	return t->lines + l->first_line;
}

size_t loctab__nmappings(const struct loctab *t)
{
	return t->maps.n;
}

size_t loctab__nfunctions(const struct loctab *t)
{
	return t->fns.n;
}

size_t loctab__nlocations(const struct loctab *t)
{
	return t->locs.n;
}

bool loctab__cache_sync(struct loctab_cache *c, const struct loctab *t)
{
	if (c->gen == t->gen)
		return false;
	loctab__cache_clear(c);
	c->gen = t->gen;
	return true;
}

int loctab__cache_set(struct loctab_cache *c, uint32_t id, uint64_t v)
{
	if (grow(&c->vals, &c->cap, (size_t)id + 1, sizeof(*c->vals)))
		return -ENOMEM;
	c->vals[id] = v;
	return 0;
}

void loctab__cache_clear(struct loctab_cache *c)
{
	free(c->vals);
	*c = (struct loctab_cache){ 0 };
}
