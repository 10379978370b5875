/* What the pipeline hands its consumers: samples with their process,
 * frames and labels resolved, and the end of each window. The pprof
 * window (out/pprofwin.h) is one consumer; others plug in the same way
 * (capture__add_consumer). */
#ifndef TAGPROF_SAMPLE_H
#define TAGPROF_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "sample_event.h"

/* Frames in a resolved sample, at most: the kernel's and the user's. */
#define SAMPLE_MAX_LOCS (2 * TP_MAX_FRAMES)

struct loctab;
struct pprof_label;

/* One sample, resolved. Everything it points to is valid during the
 * consumer's sample callback only: copy what you keep (loctab ids hold
 * until the window closes). */
struct resolved_sample {
	uint32_t pid, tid, cpu;
	uint64_t time_ns;		/* when it was taken, CLOCK_MONOTONIC */
	uint64_t period;		/* what it stands for: event count, ns
					 * of CPU for the clock events */
	const uint32_t *locs;		/* loctab location ids: kernel frames
					 * then user frames, each leaf first */
	size_t nlocs;
	const struct pprof_label *labels;	/* process, thread, pid, tid,
						 * cpu, [service], context */
	size_t nlabels;
	const struct loctab *lt;	/* where the ids are */
	/* A memory-access sample's data address, source and weight; NULL
	 * for other events. Its data_object and data_src are labels. */
	const struct tp_mem *mem;
};

/* A window that ends: when it was and what it could not resolve. */
struct window_end {
	int64_t start_real_ns;		/* wall clock at its start */
	uint64_t start_mono_ns;		/* CLOCK_MONOTONIC then */
	uint64_t duration_ns;
	uint64_t samples;		/* resolved and handed on */
	uint64_t value;			/* the sum of their periods */
	uint64_t dropped;		/* over the agent's memory limit */
	uint64_t lost;			/* the ring buffer was full */
	uint64_t malformed;		/* records that failed their checks */
	uint64_t unknown_stack;		/* named a stack id not received */
	const struct loctab *lt;	/* the window's frames */
};

/* A consumer: both callbacks are set, and get ctx. At window_close the
 * loctab still holds the window's entries; it is reset right after. */
struct sample_consumer {
	void (*sample)(void *ctx, const struct resolved_sample *s);
	void (*window_close)(void *ctx, const struct window_end *w);
	void *ctx;
};

#endif
