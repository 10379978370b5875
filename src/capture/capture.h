/* The sampling pipeline shared by `record` and `agent`: the BPF sampler,
 * the process table, thread contexts and tags, the symbolizer and its
 * location table, the consumers of resolved samples (capture/sample.h),
 * among them the pprof of the current window, and the window's
 * statistics. */
#ifndef TAGPROF_CAPTURE_H
#define TAGPROF_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/sample.h"
#include "kernel/events.h"
#include "capture/proccfg.h"
#include "util/counter.h"

struct pprof;

/* The samples the agent got, in a window or since the start: X(field,
 * text) (util/counter.h). */
#define CAPTURE_COUNTERS(X)						\
	X(samples, "received")						\
	X(malformed, "malformed")	/* records that fail the checks */ \
	/* named their stack by an id the agent does not have */	\
	X(unknown_stack, "with a stack id not received")		\
	X(dropped, "dropped over the memory limit")			\
	/* memory-access samples: what named their data address */	\
	X(mem_symbol, "data addresses in a variable")			\
	X(mem_mapping, "in a mapping only")				\
	X(mem_unnamed, "unmapped or the kernel's")

struct capture_stats {
	CAPTURE_COUNTERS(COUNTER_FIELD)
};

struct capture_opts {
	struct tp_event event;
	uint64_t freq;			/* samples/s per CPU, or */
	uint64_t period;		/* a fixed period when non-zero */
	const uint32_t *pids;		/* NULL: every process */
	size_t npids;
	bool follow_children;		/* processes the pids start join */
	const char *cgroup;
	bool idle;
	struct proccfg_filters filters;
	bool service_label;		/* label samples with "service" */
	bool timeline;			/* per-sample pprofs (pprofwin.h) */
	int unwind;			/* enum tp_unwind_mode */
	uint32_t stack_bytes;		/* per stack copy; 0: the default */
	uint64_t max_memory;		/* the agent's bound, which the caches'
					 * budgets are shares of; 0: record's */
	const char *debuginfod_urls;	/* servers to fetch debug files from:
					 * NULL: DEBUGINFOD_URLS; "": none */
	uint32_t settled_wait_ms;	/* sampler_opts: 0, records wake the
					 * reader within a second */
	int tick_ms;			/* context discoveries due sooner wait
					 * this long (the agent's wake-ups);
					 * 0: each on time */
	int verbose;
	bool account_cpu;		/* capture__take_cpu's figures */
};

struct capture;

/* Sets everything up and starts sampling. NULL with a message in err. */
struct capture *capture__start(const struct capture_opts *o, char *err,
			       size_t errlen);

/* Waits up to timeout_ms (less when a context discovery is due, but not
 * less than tick_ms), or until wake_fd (-1: none) is readable, then
 * handles the records waiting and the discoveries due. */
void capture__poll(struct capture *c, int timeout_ms, int wake_fd);

/* Stops sampling and handles the records still buffered. */
void capture__stop(struct capture *c);

/* Hands over the records waiting, up to a second's work: the agent calls
 * it before a window's end, so that the records sampled before the end
 * are the window's own (a reader slowed by a new program's symbols, a
 * sanitized agent 283 ms behind, gave them to the next window, with a
 * time before its start). */
void capture__drain(struct capture *c);

/* Closes the current window: sets its time, duration and the comments
 * that count this window's losses and failures, and returns its pprof
 * (the caller owns it); a new window starts. Samples the window lost
 * (dropped over the memory bound, lost in the ring buffer, malformed)
 * are in it too, as samples of one frame that says why, labelled
 * process "[tagprof]" and service DROPPED_SERVICE (out/pprofwin.h): a
 * window that lost everything still has something to write and to show.
 * Every consumer is told the window closed. NULL on ENOMEM (the window
 * is kept). */
struct pprof *capture__take(struct capture *c);

#define CAPTURE_MAX_CONSUMERS 8

/* Free heap kept for the next window rather than given back (malloc_trim,
 * and glibc's own trimming of the heap's top): trimming madvises every
 * free page, each madvise that drops mapped pages interrupts every CPU to
 * flush its TLB, and each page given back is faulted in again when used.
 * Below this, the pages cost less than that would. At 4 MiB, a 12-minute
 * soak kept 1-2 MiB of free heap resident that always trimming gave back
 * (11-12 MiB of RSS in all); at 1 MiB the refaults stay a few hundred
 * pages a window. */
#define HEAP_KEEP_BYTES (1ull << 20)

/* Hands every resolved sample, and the end of every window, to sc as
 * well (the pprof window is the first consumer). Returns 0, or -ENOSPC
 * past CAPTURE_MAX_CONSUMERS. */
int capture__add_consumer(struct capture *c, const struct sample_consumer *sc);

/* While set, samples are counted and dropped instead of aggregated: the
 * agent's memory bound. */
void capture__set_dropping(struct capture *c, bool drop);

/* Frees what is kept for processes that are gone. */
void capture__sweep(struct capture *c);

/* The reader thread's CPU in the current window, by what it did; measured
 * only with account_cpu (each part costs a clock read, a system call). */
struct capture_cpu {
	uint64_t wait_ns;	/* in epoll_wait: going to sleep, waking */
	uint64_t read_ns;	/* taking the records: resolving samples */
	uint64_t tick_ns;	/* context discoveries, late symbol names */
	uint64_t wakeups;	/* waits that ended */
};

/* This window's so far, and starts the next window's from 0. */
struct capture_cpu capture__take_cpu(struct capture *c);

/* Samples aggregated in the current window, and since the start. */
uint64_t capture__window_samples(const struct capture *c);
uint64_t capture__total_samples(const struct capture *c);
uint64_t capture__total_lost(struct capture *c);
size_t capture__processes(const struct capture *c);
/* What the bounded caches hold, for -v: "N processes; symbol files: ..."
 * into buf. A long run that grows shows here which cache grew. */
void capture__describe_caches(struct capture *c, char *buf, size_t len);
/* The process table's counters: perf maps read and refused, and more. */
/* The same for JIT perf maps: "N not read over the memory budget (...), M
 * refused; ..." into buf, and N + M. */
uint64_t capture__perfmaps_unread(const struct capture *c, char *buf,
				  size_t len);

/* Writes what was refused of processes' OTEL_CTX payloads since the start
 * into buf ("N payloads refused unread (...), M malformed") and returns
 * N + M: the profile's comments, record's summary and the agent's log say
 * the same. */
uint64_t capture__ctx_refusals(const struct capture *c, char *buf, size_t len);

/* The end-of-run summary lines, on stderr. */
void capture__print_summary(struct capture *c, uint64_t duration_ns);

void capture__free(struct capture *c);		/* accepts NULL */

/* Before privileges are dropped: what would otherwise need them later
 * is done now (the kernel-symbol program loaded). */
void capture__prepare_drop(struct capture *c);
/* A struct caps_probe test (ctx: the capture): the BPF maps and the
 * kernel-symbol program still work with the present capabilities. */
bool capture__bpf_works(void *ctx);

#endif
