/* The process key map: key_idx -> key name, published in the process
 * context as threadlocal.attribute_key_map. Append-only, so lookups of
 * known keys (every add) take no lock; only registration does. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *keys[TAGPROF_MAX_KEYS];
static uint8_t key_lens[TAGPROF_MAX_KEYS];
static unsigned int nkeys;	/* visible count: release-stored, acquire-loaded */

static int find(const char *key, size_t len, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		if (key_lens[i] == len && !memcmp(keys[i], key, len))
			return (int)i;
	}
	return -ENOENT;
}

int tagprof__key_lookup(const char *key, size_t len)
{
	return find(key, len, __atomic_load_n(&nkeys, __ATOMIC_ACQUIRE));
}

/* Appends the key and publishes the context naming it; only then is the
 * count raised, so no thread can put an index into a record before the
 * profiler can resolve it. On failure the slot is given back. */
static int append_locked(const char *key, size_t len)
{
	unsigned int n = nkeys;
	char *copy;
	int err;

	if (n == TAGPROF_MAX_KEYS)
		return -ENOSPC;
	copy = strndup(key, len);
	if (!copy)
		return -ENOMEM;
	keys[n] = copy;
	key_lens[n] = (uint8_t)len;
	err = tagprof__ctx_publish_locked(n + 1);
	if (err) {
		keys[n] = NULL;
		free(copy);
		return err;
	}
	__atomic_store_n(&nkeys, n + 1, __ATOMIC_RELEASE);
	return (int)n;
}

int tagprof__key_intern(const char *key, size_t len)
{
	int idx;

	tagprof__lock();
	/* Another thread may have registered it since our lookup. */
	idx = find(key, len, nkeys);
	if (idx == -ENOENT)
		idx = append_locked(key, len);
	tagprof__unlock();
	return idx;
}

const char *const *tagprof__keys(void)
{
	return keys;
}

unsigned int tagprof__nkeys_locked(void)
{
	return nkeys;
}
