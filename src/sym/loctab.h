/* Location table: the frames the symbolizer resolved, with their mappings,
 * functions and source lines, for every consumer of samples (the pprof
 * window, per-sample writers). Resolution writes here once per address;
 * consumers read by id.
 *
 * Ids are dense and 1-based (0: none), so a consumer can keep what it
 * derives from an entry in an array indexed by id. Strings are interned:
 * equal strings are the same pointer. Everything, ids and strings, is
 * valid until loctab__reset, which starts a new generation. */
#ifndef TAGPROF_LOCTAB_H
#define TAGPROF_LOCTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOCTAB_MAX_LINES 32		/* in one location */

struct loctab_mapping {
	uint64_t start, limit, offset;
	const char *file;
	const char *build_id;		/* NULL: none known */
	/* What its locations' lines hold, as far as the symbolizer knows. */
	bool has_filenames, has_line_numbers, has_inline_frames;
	bool exe;			/* the executable of a process that
					 * maps it (loctab__mapping_set_exe) */
};

struct loctab_function {
	const char *name;
	const char *system_name;	/* the symbol; NULL: not a symbol */
	const char *file;		/* NULL: none known */
};

struct loctab_line {
	uint32_t function;		/* loctab function id */
	int32_t line;			/* 0: none known */
};

struct loctab_location {
	uint64_t address;
	uint32_t mapping;		/* 0: in no mapping */
	uint32_t nlines;
	uint32_t first_line;		/* see loctab__lines */
};

struct loctab;

struct loctab *loctab__new(void);
void loctab__free(struct loctab *t);		/* accepts NULL */

/* Forgets every entry and gives back their memory: what was resolved in
 * one window is not kept into the next. Ids start again from 1. */
void loctab__reset(struct loctab *t);

/* Changes with every reset, never 0, and no two tables share one: ids
 * cached with another generation are stale. */
uint64_t loctab__generation(const struct loctab *t);

/* Deduplicated on all arguments; build_id may be NULL. Returns the id, 0
 * on ENOMEM. */
uint32_t loctab__mapping(struct loctab *t, uint64_t start, uint64_t limit,
			 uint64_t offset, const char *file,
			 const char *build_id);

/* Sets a mapping's has_* flags; a flag passed false leaves an earlier
 * true. */
void loctab__mapping_set_info(struct loctab *t, uint32_t mapping,
			      bool has_filenames, bool has_line_numbers,
			      bool has_inline_frames);

/* Marks a mapping as the executable of a process it was seen in: the
 * candidates for the profile's main mapping. */
void loctab__mapping_set_exe(struct loctab *t, uint32_t mapping);

/* Deduplicated on (name, system_name, file); either of the last two may
 * be NULL. Returns the id, 0 on ENOMEM. */
uint32_t loctab__function(struct loctab *t, const char *name,
			  const char *system_name, const char *file);

/* The location of (mapping, address), or 0: lets the symbolizer name an
 * address only the first time it sees it. */
uint32_t loctab__find_location(const struct loctab *t, uint32_t mapping,
			       uint64_t address);

/* Adds a location with n lines, at most LOCTAB_MAX_LINES (function ids,
 * innermost first; lines may be NULL: line numbers 0). n 0 (functions
 * may be NULL): an address no symbol names. Deduplicated on
 * (mapping, address): a second call returns the first id. Returns 0 on
 * ENOMEM or when n is over the bound. */
uint32_t loctab__location(struct loctab *t, uint32_t mapping,
			  uint64_t address, const uint32_t *functions,
			  const int32_t *lines, size_t n);

/* Gives location id, which has no lines (nothing named it when it was
 * added), its n lines, 1 to LOCTAB_MAX_LINES: its binary's debug file
 * came later. Its id stays; consumers that copied the location find it
 * in loctab__named_late. 0, -EEXIST (it has lines), -EINVAL or -ENOMEM. */
int loctab__name_location(struct loctab *t, uint32_t id,
			  const uint32_t *functions, const int32_t *lines,
			  size_t n);

/* The ids loctab__name_location named in this generation, in order, n of
 * them: a consumer remembers how many it has seen. */
const uint32_t *loctab__named_late(const struct loctab *t, size_t *n);

/* Entries by id, which must be valid (1..count). Pointers are valid until
 * the next call that adds to the table. */
const struct loctab_mapping *loctab__mapping_at(const struct loctab *t,
						uint32_t id);
const struct loctab_function *loctab__function_at(const struct loctab *t,
						  uint32_t id);
const struct loctab_location *loctab__location_at(const struct loctab *t,
						  uint32_t id);
/* A location's nlines lines, innermost first. */
const struct loctab_line *loctab__lines(const struct loctab *t,
					const struct loctab_location *l);

size_t loctab__nmappings(const struct loctab *t);
size_t loctab__nfunctions(const struct loctab *t);
size_t loctab__nlocations(const struct loctab *t);

/* What a consumer made of one kind of entry (its own ids, say), in an
 * array indexed by loctab id: 0 until set. Zero-initialize. */
struct loctab_cache {
	uint64_t gen;			/* of the table the values are for */
	uint64_t *vals;
	size_t cap;
};

/* Call before using c with t: drops c's values when t was reset since
 * they were set, and then returns true. */
bool loctab__cache_sync(struct loctab_cache *c, const struct loctab *t);

/* The value of id, 0 if none. */
static inline uint64_t loctab__cache_get(const struct loctab_cache *c,
					 uint32_t id)
{
	return id < c->cap ? c->vals[id] : 0;
}

/* Sets the value of id. Returns 0 or -ENOMEM. */
int loctab__cache_set(struct loctab_cache *c, uint32_t id, uint64_t v);

/* Drops every value and the memory they take. */
void loctab__cache_clear(struct loctab_cache *c);

#endif
