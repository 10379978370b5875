/* An open-addressing index over an array the caller keeps: slots hold
 * entry index + 1 (0: empty), linear probing, backward-shift deletion (no
 * tombstones), load at most 1/2. The caller gives the hash of an entry
 * and the equality of an entry with a key, so the index stores nothing
 * but slots. Used for the code-region tables (coderegion.c). */
#include "internal.h"

#include <stdlib.h>

bool tagprof__index_rehash(struct tagprof__index *x, size_t cap,
			   tagprof__index_hash hash_of)
{
	uint32_t *old = x->slot;
	size_t ocap = x->cap;

	x->slot = calloc(cap, sizeof(*x->slot));
	if (!x->slot) {
		x->slot = old;
		return false;
	}
	x->cap = cap;
	for (size_t i = 0; i < ocap; i++) {
		size_t j;

		if (!old[i])
			continue;
		for (j = hash_of(old[i] - 1) & (cap - 1); x->slot[j]; j = (j + 1) & (cap - 1))
			;
		x->slot[j] = old[i];
	}
	free(old);
	return true;
}

size_t tagprof__index_probe(const struct tagprof__index *x, uint64_t h,
			    const void *key, tagprof__index_eq eq)
{
	size_t j = h & (x->cap - 1);

	while (x->slot[j] && !eq(x->slot[j] - 1, key))
		j = (j + 1) & (x->cap - 1);
	return j;
}

bool tagprof__index_reserve(struct tagprof__index *x, tagprof__index_hash hash_of)
{
	if ((x->n + 1) * 2 <= x->cap)
		return true;
	return tagprof__index_rehash(x, x->cap ? x->cap * 2 : 256, hash_of);
}

void tagprof__index_put(struct tagprof__index *x, size_t j, size_t i)
{
	x->slot[j] = (uint32_t)(i + 1);
	x->n++;
}

void tagprof__index_delete(struct tagprof__index *x, size_t j,
			   tagprof__index_hash hash_of)
{
	size_t mask = x->cap - 1, k = j;

	x->slot[j] = 0;
	x->n--;
	for (;;) {
		size_t home;

		k = (k + 1) & mask;
		if (!x->slot[k])
			return;
		home = hash_of(x->slot[k] - 1) & mask;
		/* Leave it where it is if its home lies cyclically in (j, k]. */
		if (j <= k ? (home > j && home <= k) : (home > j || home <= k))
			continue;
		x->slot[j] = x->slot[k];
		x->slot[k] = 0;
		j = k;
	}
}
