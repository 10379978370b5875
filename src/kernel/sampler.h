/* The BPF side: loads the sampler, opens one perf event per online CPU,
 * attaches, and hands ring-buffer records to a callback. */
#ifndef TAGPROF_SAMPLER_H
#define TAGPROF_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/events.h"
#include "sample_event.h"

struct tp_stats;

struct sampler_opts {
	struct tp_event event;
	bool use_period;	/* -c: fixed period; else frequency */
	uint64_t freq;		/* samples per second per CPU */
	uint64_t period;
	const uint32_t *pids;	/* -p or the command's pid; NULL = all */
	size_t npids;
	bool follow_children;
	const char *cgroup;	/* cgroup v2 directory, or NULL */
	bool include_idle;
	bool filter_label;	/* --label: drop samples whose context doesn't match */
	bool filter_tag;	/* --tag: drop samples whose tag doesn't match */
	uint32_t unwind_mode;	/* enum tp_unwind_mode */
	uint32_t stack_bytes;	/* user stack copied per sample; 0 = default */
	uint32_t ring_seconds;	/* records the ring buffer holds, in seconds
				 * at the expected rate; 0 = 1 */
	uint32_t settled_wait_ms;	/* how long records of settled processes
					 * (TP_SETTLED_NS old) and exits may wait
					 * to wake the reader; 0: a second, like
					 * every record */
	bool stack_ids;		/* send a stack's frames once per CPU, then
				 * its id (tp_stack_kind), where the kernel
				 * can hash them (bpf_loop) */
	bool fp_walk;		/* walk user frame pointers in BPF (over
				 * page copies, bpf_loop) where the kernel
				 * can; else bpf_get_stack walks them */
	int verbose;		/* >0: libbpf messages, verifier log */
};

/* Called for each record; return non-zero to stop the current poll. */
typedef int (*sampler_record_fn)(void *ctx, const void *data, size_t size);

struct sampler;

/* Loads and attaches everything. On failure returns NULL and writes a
 * one-line reason into err. */
struct sampler *sampler__start(const struct sampler_opts *o,
			       sampler_record_fn fn, void *ctx, char *err,
			       size_t errlen);

/* Waits up to timeout_ms for the BPF side to wake the reader (see
 * wakeup_flag in bpf/collect.bpf.h), or for wake_fd (-1: none) to be
 * readable, then hands over every record waiting. Returns records handled
 * or -errno (-EINTR when a signal arrived). */
int sampler__poll(struct sampler *s, int timeout_ms, int wake_fd);

/* sampler__poll's two halves: the wait (events ready, or -errno), and
 * taking every record waiting (records handled). */
int sampler__wait(struct sampler *s, int timeout_ms, int wake_fd);
int sampler__consume(struct sampler *s);
/* Consumes what waits, up to budgets consume budgets (100 ms each) when a
 * backlog goes on: a window closed on a backlog would give its samples to
 * the next one. */
void sampler__drain(struct sampler *s, int budgets);

/* Stops sampling (closes the perf events), then hands over every record
 * still in the ring buffer. */
void sampler__stop(struct sampler *s);

/* Sums the per-CPU counters into *total; per_cpu (may be NULL) receives
 * sampler__ncpus() entries. */
void sampler__stats(struct sampler *s, struct tp_stats *total,
		    struct tp_stats *per_cpu);
int sampler__ncpus(const struct sampler *s);

/* Whether the BPF side sends stack ids (sampler_opts.stack_ids and the
 * kernel allows). */
bool sampler__stack_ids(const struct sampler *s);

/* Starts stack generation gen: from now on every CPU sends each stack
 * whole once more, with ids of that generation. */
void sampler__set_stack_gen(struct sampler *s, uint32_t gen);

struct tp_proc_cfg;
/* pid's entry in the proc_cfg map: written whole (0 or -errno), or
 * deleted. Only capture/proccfg.c calls these: it owns the values. */
int sampler__write_proc_cfg(struct sampler *s, uint32_t pid,
			    const struct tp_proc_cfg *cfg);
void sampler__delete_proc_cfg(struct sampler *s, uint32_t pid);

/* The kernel's CFI tables (sample_event.h), mapped into the agent on
 * first use: the arrays the BPF programs search, written in place. */
struct sampler_cfi {
	struct tp_cfi_row *rows;
	uint64_t *pages;		/* row indexes, 8 bytes apart */
	struct tp_cfi_bin *bins;
	uint32_t max_rows, max_pages, max_bins;
};
/* 0, or -errno (ENOTSUP: this mode walks no stack by CFI). The arrays
 * are mapped as far as sampler__cfi_fit made room. */
int sampler__cfi_tables(struct sampler *s, struct sampler_cfi *out);
/* Maps the first rows, pages and bins of the arrays writable, and not
 * much more (what lies above may be unmapped): 0 or -errno. */
int sampler__cfi_fit(struct sampler *s, uint32_t rows, uint32_t pages,
		     uint32_t bins);
/* The bytes of the arrays mapped now. */
size_t sampler__cfi_mapped(const struct sampler *s);
/* A process's mappings for the CFI walk: 0 or -errno. */
int sampler__write_cfi_proc(struct sampler *s, uint32_t pid,
			    const struct tp_cfi_proc *p);
void sampler__delete_cfi_proc(struct sampler *s, uint32_t pid);

void sampler__free(struct sampler *s);		/* accepts NULL */

/* True if the agent can still read and write the BPF maps with this
 * thread's present capabilities (before Linux 6.5 with
 * unprivileged_bpf_disabled set, that takes CAP_BPF even on an open map). */
bool sampler__maps_work(struct sampler *s);

#endif
