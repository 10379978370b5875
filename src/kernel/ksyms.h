/* Kernel symbol names: looked up by the kernel through a BPF program, or
 * from /proc/kallsyms where that program cannot load. */
#ifndef TAGPROF_KSYMS_H
#define TAGPROF_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KSYMS_BATCH	64	/* addresses per ksyms__lookup */
#define KSYMS_NAME_LEN	256	/* longer names are cut */

struct ksyms_stats {
	uint64_t lookups;	/* addresses asked */
	uint64_t unnamed;	/* of them, no symbol covers it */
	uint64_t bpf_batches;	/* batches the kernel answered */
	uint64_t bpf_failed;	/* program failed to load or to run */
};

struct ksyms;

/* use_bpf false: /proc/kallsyms only. NULL only when out of memory. */
struct ksyms *ksyms__new(bool use_bpf);
void ksyms__free(struct ksyms *k);	/* accepts NULL */

/* Names the first min(n, KSYMS_BATCH) addresses: names[i] is NULL where
 * no kernel symbol covers addrs[i]. Names stay valid until the next
 * call. */
void ksyms__lookup(struct ksyms *k, const uint64_t *addrs, size_t n,
		   const char **names);

/* Where names come from now, for reports. */
const char *ksyms__source(const struct ksyms *k);
const struct ksyms_stats *ksyms__stats(const struct ksyms *k);

#endif
