// SPDX-License-Identifier: BSD-2-Clause
/* Location table. Entries sit in arrays indexed by id - 1; hash maps from
 * each entry's key to its id deduplicate. Keys of functions and mappings
 * hold interned string pointers: equal strings are equal pointers. The
 * maps are made on first use, so a reset table holds no memory. */
#include "sym/loctab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"

struct loctab {
	uint64_t gen;
	struct hashmap *strs;		/* string -> its copy (the key) */
	struct loctab_mapping *maps;
	struct loctab_function *fns;
	struct loctab_location *locs;
	struct loctab_line *lines;
	size_t nmaps, nfns, nlocs, nlines;
	size_t maps_cap, fns_cap, locs_cap, lines_cap;
	struct hashmap *map_ids, *fn_ids, *loc_ids;	/* key -> id */
};

struct mapping_key {
	uint64_t start, limit, offset;
	const char *file, *build_id;
};

struct function_key {
	const char *name, *system_name, *file;
};

struct location_key {
	uint64_t address;
	uint64_t mapping;
};

/* Room for need elements in the array at *arrp, doubling; new elements
 * are zeroed. */
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

static uint32_t find(const struct hashmap *m, const void *key, size_t len)
{
	uint64_t id;

	return m && hashmap__get(m, key, len, &id) ? (uint32_t)id : 0;
}

/* Indexes a new entry's key; the caller has checked it is absent. */
static int index_key(struct hashmap **m, const void *key, size_t len,
		     uint32_t id)
{
	if (!*m && !(*m = hashmap__new(0)))
		return -ENOMEM;
	return hashmap__put(*m, key, len, id);
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

struct loctab *loctab__new(void)
{
	struct loctab *t = calloc(1, sizeof(*t));

	if (t)
		t->gen = new_generation();
	return t;
}

static void free_entries(struct loctab *t)
{
	hashmap__free_values(t->strs, free);
	hashmap__free(t->map_ids);
	hashmap__free(t->fn_ids);
	hashmap__free(t->loc_ids);
	free(t->maps);
	free(t->fns);
	free(t->locs);
	free(t->lines);
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
	memset(t, 0, sizeof(*t));
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
	struct mapping_key k = { start, limit, offset, intern(t, file),
				 intern(t, build_id) };
	uint32_t id;

	if ((file && !k.file) || (build_id && !k.build_id))
		return 0;
	id = find(t->map_ids, &k, sizeof(k));
	if (id)
		return id;
	if (grow(&t->maps, &t->maps_cap, t->nmaps + 1, sizeof(*t->maps)) ||
	    index_key(&t->map_ids, &k, sizeof(k), t->nmaps + 1))
		return 0;
	t->maps[t->nmaps] = (struct loctab_mapping){
		.start = start, .limit = limit, .offset = offset,
		.file = k.file, .build_id = k.build_id };
	return ++t->nmaps;
}

void loctab__mapping_set_info(struct loctab *t, uint32_t mapping,
			      bool has_filenames, bool has_line_numbers,
			      bool has_inline_frames)
{
	struct loctab_mapping *m;

	if (!mapping || mapping > t->nmaps)
		return;
	m = &t->maps[mapping - 1];
	m->has_filenames |= has_filenames;
	m->has_line_numbers |= has_line_numbers;
	m->has_inline_frames |= has_inline_frames;
}

uint32_t loctab__function(struct loctab *t, const char *name,
			  const char *system_name, const char *file)
{
	struct function_key k = { intern(t, name), intern(t, system_name),
				  intern(t, file) };
	uint32_t id;

	if ((name && !k.name) || (system_name && !k.system_name) ||
	    (file && !k.file))
		return 0;
	id = find(t->fn_ids, &k, sizeof(k));
	if (id)
		return id;
	if (grow(&t->fns, &t->fns_cap, t->nfns + 1, sizeof(*t->fns)) ||
	    index_key(&t->fn_ids, &k, sizeof(k), t->nfns + 1))
		return 0;
	t->fns[t->nfns] = (struct loctab_function){ k.name, k.system_name,
						    k.file };
	return ++t->nfns;
}

uint32_t loctab__find_location(const struct loctab *t, uint32_t mapping,
			       uint64_t address)
{
	const struct location_key k = { address, mapping };

	return find(t->loc_ids, &k, sizeof(k));
}

uint32_t loctab__location(struct loctab *t, uint32_t mapping,
			  uint64_t address, const uint32_t *functions,
			  const int32_t *lines, size_t n)
{
	const struct location_key k = { address, mapping };
	uint32_t id = find(t->loc_ids, &k, sizeof(k));

	if (id)
		return id;
	if (n > LOCTAB_MAX_LINES ||
	    grow(&t->lines, &t->lines_cap, t->nlines + n, sizeof(*t->lines)) ||
	    grow(&t->locs, &t->locs_cap, t->nlocs + 1, sizeof(*t->locs)) ||
	    index_key(&t->loc_ids, &k, sizeof(k), t->nlocs + 1))
		return 0;
	for (size_t i = 0; i < n; i++)
		t->lines[t->nlines + i] = (struct loctab_line){
			functions[i], lines ? lines[i] : 0 };
	t->locs[t->nlocs] = (struct loctab_location){
		.address = address, .mapping = mapping, .nlines = n,
		.first_line = t->nlines };
	t->nlines += n;
	return ++t->nlocs;
}

const struct loctab_mapping *loctab__mapping_at(const struct loctab *t,
						uint32_t id)
{
	return &t->maps[id - 1];
}

const struct loctab_function *loctab__function_at(const struct loctab *t,
						  uint32_t id)
{
	return &t->fns[id - 1];
}

const struct loctab_location *loctab__location_at(const struct loctab *t,
						  uint32_t id)
{
	return &t->locs[id - 1];
}

const struct loctab_line *loctab__lines(const struct loctab *t,
					const struct loctab_location *l)
{
	return t->lines + l->first_line;
}

size_t loctab__nmappings(const struct loctab *t)
{
	return t->nmaps;
}

size_t loctab__nfunctions(const struct loctab *t)
{
	return t->nfns;
}

size_t loctab__nlocations(const struct loctab *t)
{
	return t->nlocs;
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
