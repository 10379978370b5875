/* A timeline (report/timeline.h) in the Firefox Profiler's processed
 * profile format, which profiler.firefox.com and ui.perfetto.dev open:
 * one thread track per thread, its samples with their times and stacks,
 * and an interval marker "KEY=VALUE" for every run of consecutive samples
 * of the thread that carry that label value. */
#ifndef TAGPROF_FIREFOX_H
#define TAGPROF_FIREFOX_H

#include <stddef.h>
#include <stdint.h>

#include "report/timeline.h"
#include "util/strbuf.h"

/* The format's version written (meta.preprocessedProfileVersion). */
#define FIREFOX_PROCESSED_VERSION	55

struct firefox_counts {
	size_t threads, samples, markers;
};

/* tl (sorted) as JSON into out. 0, or -ENOMEM. */
int firefox__write(const struct timeline *tl, struct strbuf *out,
		   struct firefox_counts *counts);

#endif
