/* The pprof of the current window, as a consumer of resolved samples
 * (capture/sample.h): it interns the loctab's mappings, functions and
 * locations into the pprof's own ids, aggregates the samples with their
 * labels, and at the window's end adds what the window lost and when it
 * was. The pipeline's owner takes each window's pprof (pprofwin__take). */
#ifndef TAGPROF_PPROFWIN_H
#define TAGPROF_PPROFWIN_H

#include <stdbool.h>
#include <stdint.h>

#include "capture/sample.h"

/* The service of the samples a window lost, when samples have one (the
 * agent, which writes a file a service). */
#define DROPPED_SERVICE "tagprof-dropped"

struct pprof;

struct pprofwin_opts {
	const char *sample_type;	/* the event's value column, */
	const char *sample_unit;	/* borrowed for the pprofwin's life */
	int64_t period;			/* the event's period; 0: none */
	bool service_label;		/* label lost samples with "service" */
	bool timeline;			/* one pprof Sample per sample, with
					 * its time (pprof__set_timeline) */
	bool memory;			/* memory-access samples: with
					 * timeline, each has its data address
					 * and weight as numeric labels */
	bool weight;			/* ... and the weight (cycles) is a
					 * third value (mem-loads, mem-stores) */
};

struct pprofwin;

/* NULL on ENOMEM. */
struct pprofwin *pprofwin__new(const struct pprofwin_opts *o);
void pprofwin__free(struct pprofwin *w);	/* accepts NULL */

/* Adds a sample: values (1, its period). A frame the pprof has no room
 * for is left out. */
void pprofwin__sample(struct pprofwin *w, const struct resolved_sample *s);

/* The window ends: adds the samples it lost (dropped, lost in the ring
 * buffer, malformed), each kind as samples of one frame that says why,
 * labelled process "[tagprof]" (and service DROPPED_SERVICE), each
 * standing for an average sample of the window; sets its time and
 * duration. */
void pprofwin__close(struct pprofwin *w, const struct window_end *e);

/* The two above as a struct sample_consumer. */
struct sample_consumer pprofwin__consumer(struct pprofwin *w);

/* The current window's pprof, for what the owner adds (comments). */
struct pprof *pprofwin__pprof(struct pprofwin *w);

/* Makes the next window's pprof now, so that pprofwin__take cannot fail.
 * Returns 0 or -ENOMEM. */
int pprofwin__prepare(struct pprofwin *w);

/* Returns the current window's pprof (the caller owns it) and starts the
 * next with the one pprofwin__prepare made. NULL on ENOMEM (the window is
 * kept). */
struct pprof *pprofwin__take(struct pprofwin *w);

#endif
