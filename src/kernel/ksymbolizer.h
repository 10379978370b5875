/* Kernel symbol names: looked up by the kernel through a BPF program, or
 * from /proc/kallsyms where that program cannot load. */
#ifndef TAGPROF_KSYMBOLIZER_H
#define TAGPROF_KSYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/counter.h"

#define KSYMBOLIZER_BATCH	64	/* addresses per ksymbolizer__lookup */
#define KSYMBOLIZER_NAME_LEN	256	/* longer names are cut */

/* X(field, text) (util/counter.h). */
#define KSYMBOLIZER_COUNTERS(X)						\
	X(lookups, "addresses asked")					\
	X(unnamed, "unnamed")		/* of them: no symbol covers it */ \
	/* batches the kernel answered */				\
	X(bpf_batches, "BPF batches answered")				\
	/* the program failed to load or to run */			\
	X(bpf_failed, "BPF lookup failures")

struct ksymbolizer_stats {
	KSYMBOLIZER_COUNTERS(COUNTER_FIELD)
};

struct ksymbolizer;

/* use_bpf: names from the kernel itself through a BPF program, loaded at
 * the first lookup; false: /proc/kallsyms only. NULL only when out of
 * memory. */
struct ksymbolizer *ksymbolizer__new(bool use_bpf);
void ksymbolizer__free(struct ksymbolizer *k);	/* accepts NULL */

/* Names the first min(n, KSYMBOLIZER_BATCH) addresses: names[i] is NULL where
 * no kernel symbol covers addrs[i]. Names stay valid until the next
 * call. */
void ksymbolizer__lookup(struct ksymbolizer *k, const uint64_t *addrs, size_t n,
		   const char **names);

/* Where names come from now, for reports. */
const char *ksymbolizer__source(const struct ksymbolizer *k);
const struct ksymbolizer_stats *ksymbolizer__stats(const struct ksymbolizer *k);

/* Loads the BPF program now rather than at the first lookup, or reads
 * /proc/kallsyms if it does not load: before privileges are dropped. */
void ksymbolizer__prepare(struct ksymbolizer *k);
/* True if a lookup through the program runs with this thread's present
 * capabilities (or the file is used). */
bool ksymbolizer__works(struct ksymbolizer *k);

#endif
