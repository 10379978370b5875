/* Open-addressing hash map: linear probing, backward-shift deletion. */
#include "util/hashmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HASHMAP_MIN_CAP 16
#define NOT_FOUND SIZE_MAX

/* hash == 0 marks an empty slot; real hashes are never 0 (see key_hash). */
struct hm_entry {
	uint64_t hash;
	const void *key;
	size_t len;
	uint64_t value;
};

struct hashmap {
	struct hm_entry *slots;
	size_t cap;             /* 0 or a power of two */
	size_t size;
	unsigned int flags;
};

static inline uint64_t rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* Final avalanche so that every input bit affects the low bits that pick
 * the slot. */
static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static inline uint64_t absorb(uint64_t h, uint64_t w)
{
	return rotl64(h ^ (w * 0x9e3779b97f4a7c15ULL), 29) *
	       0xc2b2ae3d27d4eb4fULL;
}

/* Word-at-a-time: keys here are often arrays of 64-bit ids. The length is
 * folded in first so zero-padded tails of different lengths differ. */
uint64_t hashmap__hash(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0x243f6a8885a308d3ULL ^ (len * 0xff51afd7ed558ccdULL);
	uint64_t w;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8);
		h = absorb(h, w);
	}
	if (len) {
		w = 0;
		memcpy(&w, p, len);
		h = absorb(h, w);
	}
	return mix64(h);
}

static inline uint64_t key_hash(const void *key, size_t len)
{
	uint64_t h = hashmap__hash(key, len);

	return h ? h : 1;
}

static inline bool entry_matches(const struct hm_entry *e, uint64_t h,
				 const void *key, size_t len)
{
	return e->hash == h && e->len == len &&
	       (len == 0 || memcmp(e->key, key, len) == 0);
}

static size_t find_slot(const struct hashmap *m, const void *key, size_t len,
			uint64_t h)
{
	size_t mask, i;

	if (!m->cap)
		return NOT_FOUND;
	mask = m->cap - 1;
	/* Terminates: the load factor keeps at least one slot empty. */
	for (i = h & mask; m->slots[i].hash; i = (i + 1) & mask) {
		if (entry_matches(&m->slots[i], h, key, len))
			return i;
	}
	return NOT_FOUND;
}

/* Places e in the first free slot of its probe sequence; e is known to be
 * absent and a free slot to exist. */
static void place(struct hm_entry *slots, size_t cap,
		  const struct hm_entry *e)
{
	size_t mask = cap - 1;
	size_t i;

	for (i = e->hash & mask; slots[i].hash; i = (i + 1) & mask)
		;
	slots[i] = *e;
}

static int resize(struct hashmap *m, size_t new_cap)
{
	struct hm_entry *slots;
	size_t i;

	if (new_cap > SIZE_MAX / sizeof(*slots))
		return -ENOMEM;
	slots = calloc(new_cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++) {
		if (m->slots[i].hash)
			place(slots, new_cap, &m->slots[i]);
	}
	free(m->slots);
	m->slots = slots;
	m->cap = new_cap;
	return 0;
}

/* Keeps the load at or below 70% after one more insertion. */
static int reserve_one(struct hashmap *m)
{
	if (m->cap && (m->size + 1) * 10 <= m->cap * 7)
		return 0;
	if (!m->cap)
		return resize(m, HASHMAP_MIN_CAP);
	if (m->cap > SIZE_MAX / 2)
		return -ENOMEM;
	return resize(m, m->cap * 2);
}

struct hashmap *hashmap__new(unsigned int flags)
{
	struct hashmap *m = calloc(1, sizeof(*m));

	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->flags = flags;
	return m;
}

static inline bool owns_keys(const struct hashmap *m)
{
	return !(m->flags & HASHMAP_BORROW_KEYS);
}

void hashmap__free(struct hashmap *m)
{
	size_t i;

	if (!m)
		return;
	if (owns_keys(m)) {
		for (i = 0; i < m->cap; i++) {
			if (m->slots[i].hash)
				free((void *)m->slots[i].key);
		}
	}
	free(m->slots);
	free(m);
}

void hashmap__free_values(struct hashmap *m, void (*free_value)(void *))
{
	size_t it = 0;
	uint64_t v;

	if (!m)
		return;
	while (hashmap__next(m, &it, NULL, NULL, &v))
		free_value((void *)(uintptr_t)v);
	hashmap__free(m);
}

size_t hashmap__size(const struct hashmap *m)
{
	return m->size;
}

uint64_t *hashmap__lookup(const struct hashmap *m, const void *key,
			  size_t len)
{
	size_t i = find_slot(m, key, len, key_hash(key, len));

	return i == NOT_FOUND ? NULL : &m->slots[i].value;
}

bool hashmap__get(const struct hashmap *m, const void *key, size_t len,
		  uint64_t *value)
{
	uint64_t *v = hashmap__lookup(m, key, len);

	if (!v)
		return false;
	if (value)
		*value = *v;
	return true;
}

int hashmap__put(struct hashmap *m, const void *key, size_t len,
		 uint64_t value)
{
	struct hm_entry e = { .key = key, .len = len, .value = value };
	size_t i;
	int err;

	e.hash = key_hash(key, len);
	i = find_slot(m, key, len, e.hash);
	if (i != NOT_FOUND) {
		m->slots[i].value = value;
		return 0;
	}
	err = reserve_one(m);
	if (err)
		return err;
	if (owns_keys(m)) {
		void *copy = malloc(len ? len : 1);

		if (!copy)
			return -ENOMEM;
		if (len)
			memcpy(copy, key, len);
		e.key = copy;
	}
	place(m->slots, m->cap, &e);
	m->size++;
	return 0;
}

/* Whether k lies in the cyclic interval (i, j]. */
static inline bool cyclic_between(size_t i, size_t k, size_t j)
{
	if (i <= j)
		return i < k && k <= j;
	return k > i || k <= j;
}

/* Closes the hole at slot i by pulling back later entries of the same
 * cluster that may legally move there; keeps lookups tombstone-free. */
static void close_hole(struct hashmap *m, size_t i)
{
	size_t mask = m->cap - 1;
	size_t j = i;

	for (;;) {
		j = (j + 1) & mask;
		if (!m->slots[j].hash)
			break;
		if (cyclic_between(i, m->slots[j].hash & mask, j))
			continue;
		m->slots[i] = m->slots[j];
		i = j;
	}
	memset(&m->slots[i], 0, sizeof(m->slots[i]));
}

bool hashmap__del(struct hashmap *m, const void *key, size_t len,
		  uint64_t *old)
{
	size_t i = find_slot(m, key, len, key_hash(key, len));

	if (i == NOT_FOUND)
		return false;
	if (old)
		*old = m->slots[i].value;
	if (owns_keys(m))
		free((void *)m->slots[i].key);
	close_hole(m, i);
	m->size--;
	return true;
}

bool hashmap__next(const struct hashmap *m, size_t *iter, const void **key,
		   size_t *len, uint64_t *value)
{
	size_t i;

	for (i = *iter; i < m->cap; i++) {
		const struct hm_entry *e = &m->slots[i];

		if (!e->hash)
			continue;
		if (key)
			*key = e->key;
		if (len)
			*len = e->len;
		if (value)
			*value = e->value;
		*iter = i + 1;
		return true;
	}
	*iter = m->cap;
	return false;
}
