/* What a window's profile says of how it was made (its comments), what
 * record says at its end (the summary), and the lines the agent logs: the
 * counters of every stage, rendered from their lists (capture/counters.h),
 * and the few values that are not counters. */
#ifndef TAGPROF_COMMENTS_H
#define TAGPROF_COMMENTS_H

#include <stdint.h>
#include <stdio.h>

#include "capture/counters.h"

struct proccfg_filters;
struct tp_stats;

struct comments_in {
	/* Every group's counters. tp_stats and capture_stats: the window's
	 * for the comments, since the start for the summary. */
	struct counter_values v;
	const char *event;		/* the event's name */
	uint64_t freq, period;		/* its rate (capture_opts) */
	int unwind;			/* enum tp_unwind_mode */
	const char *ksym_source;	/* where kernel names come from */
	const struct tp_stats *per_cpu;	/* the window's, ncpus of them */
	int ncpus;
	uint64_t duration_ns;		/* the window's, or the run's */
	/* the summary's */
	uint64_t ring_bytes;		/* ring-buffer space of the records */
	const struct proccfg_filters *filters;
	/* Processes with code regions: their attributed shares (the
	 * window's or the run's, ctxwatch__code_shares), and the levels'
	 * nesting ("query > operator > pipeline"); "" or NULL: none. */
	const char *code_shares;
	const char *code_levels;
	bool memory;			/* a memory-access event */
	uint32_t ldlat;			/* its load-latency threshold, or 0 */
};

#define COMMENTS_SHARES_LEN	1024	/* room for code_shares */

/* What starts the window's comments that are every counter: pprof leaves
 * the comments that start with '#' out of its reports' headers. */
#define COMMENTS_FULL "# "

/* The window's comments, a line at a time to emit: what was recorded
 * ("tagprof VERSION: EVENT at N Hz, D s"), the problems that are not
 * zero if any ("problems: ..."), then every counter in lines that start
 * with COMMENTS_FULL. */
void comments__window(const struct comments_in *in,
		      void (*emit)(void *ctx, const char *line), void *ctx);

/* record's end-of-run summary, on f. */
void comments__summary(const struct comments_in *in, FILE *f);

/* JIT perf maps left unread (over the memory budget, or refused), said
 * into buf; returns how many. */
uint64_t comments__perfmaps_unread(const struct counter_values *v, char *buf,
				   size_t len);

/* Process-context payloads refused (hostile nesting) or not decoded,
 * said into buf; returns how many. */
uint64_t comments__ctx_refusals(const struct counter_values *v, char *buf,
				size_t len);

#endif
