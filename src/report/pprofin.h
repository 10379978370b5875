/* Reading a pprof file for `tagprof report`: any writer's, not only ours.
 * The file is gzipped or raw profile.proto; it is decoded with protobuf-c
 * and then checked, so that what follows can index without checking:
 * every string index in range, every id a sample, location or line names
 * present, ids unique. A file that fails gets an error that says what is
 * wrong and where. */
#ifndef TAGPROF_PPROFIN_H
#define TAGPROF_PPROFIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.pb-c.h"

/* At most this much profile, gzipped or not, and unpacked. */
#define PPROFIN_MAX_BYTES	(1024ull << 20)
/* What decoding the profiles loaded at once may allocate in all, unless
 * TAGPROF_REPORT_MAX_MB (MiB) says otherwise: over it, pprofin__load
 * fails with -E2BIG. */
#define PPROFIN_DECODE_MAX_DEFAULT	(2048ull << 20)

struct hashmap;

struct pprofin {
	Perftools__Profiles__Profile *pr;
	/* id -> index + 1 into pr's arrays */
	struct hashmap *loc_ix, *fn_ix, *map_ix;
	int64_t t_key;		/* the string "t", or -1: no sample has t */
	int64_t ns_unit;	/* the string "nanoseconds", or -1 */
};

/* The decode budget in bytes: TAGPROF_REPORT_MAX_MB, or the default. */
size_t pprofin__max_decode_bytes(void);

/* Loads and checks path, a regular file. 0, or -errno / -EINVAL with
 * "PATH: why" in err; -E2BIG when decoding it would take the decode budget
 * over (refused before decoding where its bytes already say so). */
int pprofin__load(struct pprofin *in, const char *path, char *err,
		  size_t errlen);
void pprofin__free(struct pprofin *in);	/* accepts a zeroed one */

/* Sample s's time in ns from the profile's time_nanos (its label t, unit
 * nanoseconds), in *t; 0 if it has one, -1 if not. */
int pprofin__sample_time(const struct pprofin *in,
			 const Perftools__Profiles__Sample *s, int64_t *t);

/* Whether any sample of in has a time: a per-sample profile. */
bool pprofin__has_times(const struct pprofin *in);

/* The location, function or mapping with this id; NULL if none (id 0). */
const Perftools__Profiles__Location *
pprofin__location(const struct pprofin *in, uint64_t id);
const Perftools__Profiles__Function *
pprofin__function(const struct pprofin *in, uint64_t id);
const Perftools__Profiles__Mapping *
pprofin__mapping(const struct pprofin *in, uint64_t id);

/* String i of the table ("" out of range, which the check prevents). */
const char *pprofin__str(const struct pprofin *in, int64_t i);

#endif
