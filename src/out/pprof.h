/* pprof builder: interns strings, deduplicates mappings, functions and
 * locations, aggregates identical samples, and encodes a gzipped
 * profile.proto. Ids handed out are the pprof ids (1-based, 0 = none). */
#ifndef TAGPROF_PPROF_H
#define TAGPROF_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pprof;

struct pprof_vt {             /* a pprof ValueType */
	const char *type;
	const char *unit;
};

struct pprof_label {          /* str != NULL: string label; else numeric */
	const char *key;
	const char *str;
	int64_t num;
	const char *num_unit;   /* optional, numeric labels only */
};

/* ntypes value columns per sample; period_type/period describe the event. */
struct pprof *pprof__new(const struct pprof_vt *types, size_t ntypes,
			 struct pprof_vt period_type, int64_t period);
void pprof__free(struct pprof *p);            /* accepts NULL */

int64_t pprof__str(struct pprof *p, const char *s);   /* intern; -1 on ENOMEM */

/* Deduplicated on all arguments; returns the mapping id, 0 on ENOMEM.
 * build_id may be NULL. has_functions is set on a mapping when every
 * location in it has lines (is named), at encode. */
uint64_t pprof__mapping(struct pprof *p, uint64_t start, uint64_t limit,
			uint64_t file_offset, const char *filename,
			const char *build_id);

/* What the symbolic information of a mapping's locations holds, as the
 * Mapping's has_filenames, has_line_numbers and has_inline_frames say
 * (has_functions is computed at encode). Flags only accumulate: a flag passed
 * false leaves an earlier true. Returns 0, -ENOENT for an unknown id, or
 * -ENOMEM. */
int pprof__mapping_set_info(struct pprof *p, uint64_t mapping_id,
			    bool has_filenames, bool has_line_numbers,
			    bool has_inline_frames);

/* Marks a mapping as the executable of a process that maps it. The
 * encoding writes first the one of those the most samples pass through,
 * as pprof takes the first mapping for the program; ids do not change.
 * Returns 0, -ENOENT for an unknown id, or -ENOMEM. */
int pprof__mapping_set_exe(struct pprof *p, uint64_t mapping_id);

/* Deduplicated on (name, system_name, filename); either of the last two
 * may be NULL. Returns the function id, 0 on ENOMEM. */
uint64_t pprof__function(struct pprof *p, const char *name,
			 const char *system_name, const char *filename);

/* Look up an existing location by (mapping_id, address): 0 if absent.
 * Lets callers symbolize an address only the first time they see it. */
uint64_t pprof__find_location(const struct pprof *p, uint64_t mapping_id,
			      uint64_t address);

/* Add a location with nlines Line entries (innermost first); lines[] may
 * be NULL (line numbers 0). nlines 0: an address nothing names. Deduplicated on (mapping_id, address): a second
 * call returns the first id. Returns 0 on ENOMEM. */
uint64_t pprof__location(struct pprof *p, uint64_t mapping_id,
			 uint64_t address, const uint64_t *function_ids,
			 const int64_t *lines, size_t nlines);

/* Gives location id, added with no lines, its nlines (> 0) lines: its
 * address was named later. The id, and the samples using it, stay.
 * 0, -EEXIST (it has lines), -EINVAL or -ENOMEM. */
int pprof__location_name(struct pprof *p, uint64_t id,
			 const uint64_t *function_ids, const int64_t *lines,
			 size_t nlines);

/* Adds values[ntypes] to the sample with these locations (leaf first) and
 * this label set, creating it if needed. Label order does not matter for
 * aggregation. Returns 0 or -ENOMEM. */
int pprof__add_sample(struct pprof *p, const uint64_t *location_ids,
		      size_t nlocs, const int64_t *values,
		      const struct pprof_label *labels, size_t nlabels);

/* A per-sample profile: from here on, every sample added is kept on its
 * own too (an event), and the file holds one Sample per event, in the
 * order added, each with its own values and, when it has a time, the
 * numeric label t: its time less the origin, unit nanoseconds. The
 * aggregate stays (pprof__encode_where selects events by it). 0 or
 * -ENOMEM. */
int pprof__set_timeline(struct pprof *p);

/* A sample's time is not known (lost samples): its event has no t. */
#define PPROF_NO_TIME INT64_MIN

/* pprof__add_sample with the sample's time (ns, any clock; PPROF_NO_TIME:
 * none), which a timeline keeps. */
int pprof__add_sample_at(struct pprof *p, const uint64_t *location_ids,
			 size_t nlocs, const int64_t *values,
			 const struct pprof_label *labels, size_t nlabels,
			 int64_t time_ns);

/* What t counts from: the time, on the samples' clock, of the profile's
 * time_nanos. */
void pprof__set_time_origin(struct pprof *p, int64_t origin_ns);

size_t pprof__event_count(const struct pprof *p);	/* 0 unless timeline */

void pprof__set_time(struct pprof *p, int64_t time_nanos,
		     int64_t duration_nanos);
int pprof__add_comment(struct pprof *p, const char *comment);
/* The i-th comment added, NULL past the last. */
const char *pprof__comment(const struct pprof *p, size_t i);

size_t pprof__sample_count(const struct pprof *p);   /* distinct samples */
/* Whether value column i is (type, unit). */
bool pprof__type_is(const struct pprof *p, size_t i, const char *type,
		    const char *unit);
int64_t pprof__time_nanos(const struct pprof *p);    /* as set */

/* Encodes and gzips. *out is malloc'd; caller frees. Returns 0 or -errno. */
int pprof__encode(const struct pprof *p, uint8_t **out, size_t *len);

/* The same, for only the samples that carry the string label key=value,
 * with the locations, functions and mappings they use (ids unchanged). */
int pprof__encode_where(const struct pprof *p, const char *key,
			const char *value, uint8_t **out, size_t *len);

/* The distinct values of string label key, at most max, into out (owned by
 * p). Returns how many. */
size_t pprof__label_values(const struct pprof *p, const char *key,
			   const char **out, size_t max);

#endif
