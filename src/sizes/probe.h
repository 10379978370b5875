/* tagprof sizes' BPF side: loads bpf/sizes.bpf.c, attaches an entry and
 * a return probe to each function (a uprobe session where the kernel has
 * them, else a uprobe and a uretprobe), and reads the tuples and counters
 * back into a sizetab. */
#ifndef TAGPROF_SIZES_PROBE_H
#define TAGPROF_SIZES_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sizes/funcsym.h"
#include "sizes/sizespec.h"
#include "sizes/sizetab.h"

struct tp_proc_cfg;

struct sizeprobe_func {
	const char *name;		/* as given, for the table */
	const struct funcsym *sym;
	const struct sizespec *spec;
	const char *spec_text;		/* --size as given */
};

struct sizeprobe_opts {
	pid_t pid;			/* the process measured */
	bool no_session;		/* uprobe + uretprobe even if sessions exist */
	const char *cost_event;		/* NULL: ns; else a counter (events.h) */
	size_t nfuncs;
	const struct sizeprobe_func *funcs;
};

struct sizeprobe;

/* Loads and attaches; returns 0 or -errno with why in err. */
int sizeprobe__open(const struct sizeprobe_opts *o, struct sizeprobe **out,
		    char *err, size_t errlen);
void sizeprobe__free(struct sizeprobe *p);	/* accepts NULL */

const char *sizeprobe__mode(const struct sizeprobe *p);
/* The tuple map's capacity and the bytes the maps were sized for. */
uint64_t sizeprobe__capacity(const struct sizeprobe *p);
uint64_t sizeprobe__map_bytes(const struct sizeprobe *p);

/* label: sizes: where the target keeps its thread context, the key's
 * index (OTEP 4947) and name (custom labels) resolved in cfg
 * (filter_key_idx, filter_key). */
int sizeprobe__set_context(struct sizeprobe *p, const struct tp_proc_cfg *cfg);

/* Forgets the shadow stacks of the target's threads that ended (call
 * every second or so). */
void sizeprobe__sweep_threads(struct sizeprobe *p);

/* The rate guard: measure one call in n from now on. */
void sizeprobe__set_sample_every(struct sizeprobe *p, uint32_t n);
/* Entries of the target so far, all functions and CPUs. */
uint64_t sizeprobe__entries(const struct sizeprobe *p);

/* The whole run's run-wide counters, summed over CPUs. */
struct sizeprobe_counts {
	uint64_t no_thread_room, unmatched_returns, lost_frames,
		 counter_failed, no_label, migrated;
	uint64_t ctx_read, ctx_unreadable;	/* label: contexts */
};

/* Reads every tuple and counter into t (functions added in order, t's
 * members set). Returns 0 or -errno. */
int sizeprobe__read(struct sizeprobe *p, struct sizetab *t,
		    struct sizeprobe_counts *c);

#endif
