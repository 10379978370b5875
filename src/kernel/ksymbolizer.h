/* Kernel symbol names: looked up by the kernel through a BPF program, or
 * from /proc/kallsyms where that program cannot load. */
#ifndef TAGPROF_KSYMBOLIZER_H
#define TAGPROF_KSYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KSYMBOLIZER_BATCH	64	/* addresses per ksymbolizer__lookup */
#define KSYMBOLIZER_NAME_LEN	256	/* longer names are cut */

struct ksymbolizer_stats {
	uint64_t lookups;	/* addresses asked */
	uint64_t unnamed;	/* of them, no symbol covers it */
	uint64_t bpf_batches;	/* batches the kernel answered */
	uint64_t bpf_failed;	/* program failed to load or to run */
};

struct ksymbolizer;

/* use_bpf false: /proc/kallsyms only. NULL only when out of memory. */
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

#endif
