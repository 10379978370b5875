/* A sample's labels from its thread context and register tag: OTEP 4947
 * records and custom-labels v1 sets, and tag fields named from the
 * process's dictionary. Decoding reads nothing but its arguments and a
 * snapshot of the process context (proc/ctxsnap.h); a name the snapshot
 * lacks is reported as a miss, and labels__resolve has the snapshot read
 * again and decodes once more. */
#ifndef TAGPROF_LABELS_H
#define TAGPROF_LABELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proc/ctxsnap.h"
#include "util/counter.h"

struct code_levels;
struct ctxwatch;
struct pprof_label;

/* X(field, text) (util/counter.h). */
#define LABELS_COUNTERS(X)						\
	/* attributes whose key index is not in the map */		\
	X(unknown_key, "unknown key")					\
	/* labels with invalid UTF-8 replaced */			\
	X(bad_utf8, "invalid UTF-8 replaced")				\
	/* blobs that ended inside an attribute */			\
	X(truncated, "truncated")					\
	X(tag_unnamed, "field values without a name")			\
	/* samples whose register tag gives a level another value than	\
	 * the code region of their stack */				\
	X(code_tag_mismatch, "samples whose register tag and code "	\
	  "region disagree")

struct labels_stats {
	LABELS_COUNTERS(COUNTER_FIELD)
};

/* What a sample carries for its thread. */
struct labels_sample {
	uint32_t pid;
	uint64_t time_ns;	/* when it was taken, CLOCK_MONOTONIC */
	unsigned kind;		/* enum tp_ctx_kind */
	const uint8_t *blob;
	size_t size;
	bool tag_valid;
	uint64_t tag;
	/* The levels of the code region of its stack (proc/codemap.h), or
	 * NULL; code_leaf: the region's code itself was running. */
	const struct code_levels *code;
	bool code_leaf;
};

/* Where labels go: at most max of them, their strings in strs. */
struct labels_buf {
	struct pprof_label *labels;
	size_t max;
	char *strs;
	size_t len;
};

/* Writes the labels of s into out, its names from snap (NULL: nothing is
 * known of the process, so only custom labels, which carry their keys).
 * Returns the number written. Names: tagprof's own labels win; an
 * application key equal to one is reported as "label:<key>", and a tag
 * field equal to either as "tag:<field>". A code region's levels are
 * labels named after their keys, "code:<key>" when tagprof or the thread
 * labels use the key. A tag field and a level with the same key name one
 * level twice: one label when they agree; when they do not (counted), the
 * region's value where its own code ran, the tag's where the code it
 * called did (shared code), the other one as "code:<key>" or
 * "tag:<key>". What it met is added to *st;
 * *miss tells the first kind of name snap lacked, a key before a tag
 * value (CTXSNAP_MISS_NONE: none). */
size_t labels__decode(const struct ctxsnap *snap, const struct labels_sample *s,
		      const struct labels_buf *out, struct labels_stats *st,
		      enum ctxsnap_miss *miss);

/* labels__decode against the snapshot w keeps of s->pid; on a miss, asks
 * w to read the process context again (ctxwatch__refresh) and, if that
 * gave a new snapshot, decodes again. *st counts the decode kept. */
size_t labels__resolve(struct ctxwatch *w, const struct labels_sample *s,
		       const struct labels_buf *out, struct labels_stats *st);

#endif
