/* A small open-addressing hash map from byte-string keys to 64-bit values.
 *
 * Keys are (bytes, len). By default the map keeps its own copy of every
 * key; with HASHMAP_BORROW_KEYS it stores the caller's pointer instead, and
 * the caller must keep those bytes alive and unchanged while the entry
 * exists (useful when the key already lives in stable storage, such as an
 * arena). Values are uint64_t; store a pointer as (uint64_t)(uintptr_t)ptr.
 *
 * Linear probing with backward-shift deletion (no tombstones); the table
 * doubles once it is 70% full, so every operation is O(1) amortized.
 * Not thread-safe. */
#ifndef TAGPROF_HASHMAP_H
#define TAGPROF_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HASHMAP_BORROW_KEYS 0x1u

struct hashmap;

/* 64-bit hash of len bytes; the map's own hash, exported for callers that
 * want a good general-purpose hash. */
uint64_t hashmap__hash(const void *key, size_t len);

/* flags: 0 or HASHMAP_BORROW_KEYS. Returns NULL (errno ENOMEM) on failure. */
struct hashmap *hashmap__new(unsigned int flags);
void hashmap__free(struct hashmap *m);          /* accepts NULL */

/* For maps whose values are pointers: calls free_value on each value (as
 * (void *)(uintptr_t)value), then frees the map. Accepts NULL. */
void hashmap__free_values(struct hashmap *m, void (*free_value)(void *));

size_t hashmap__size(const struct hashmap *m);   /* number of entries */

/* Returns true and stores the value in *value (if value != NULL) when key
 * is present; false otherwise. */
bool hashmap__get(const struct hashmap *m, const void *key, size_t len,
		  uint64_t *value);

/* Pointer to the value stored for key, for in-place updates, or NULL when
 * absent. Valid until the next put or del on this map. */
uint64_t *hashmap__lookup(const struct hashmap *m, const void *key,
			  size_t len);

/* Inserts key, or replaces the value of an existing key (keeping its key
 * storage). Returns 0 or -ENOMEM (the map is unchanged on failure). */
int hashmap__put(struct hashmap *m, const void *key, size_t len,
		 uint64_t value);

/* Removes key. Returns true and its old value in *old (if old != NULL)
 * when it was present. A copied key is freed. */
bool hashmap__del(struct hashmap *m, const void *key, size_t len,
		  uint64_t *old);

/* Iterates over all entries in unspecified order: set *iter = 0, then call
 * until it returns false. Any of key/len/value may be NULL. The map must
 * not be modified during an iteration (to delete, collect keys first). */
bool hashmap__next(const struct hashmap *m, size_t *iter, const void **key,
		   size_t *len, uint64_t *value);

#endif
