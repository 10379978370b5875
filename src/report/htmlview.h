/* A timeline (report/timeline.h) as one self-contained HTML file: inline
 * SVG and CSS, no script, nothing fetched, for hosts without a browser
 * connection. One lane per value of a label or tag field (--by), stacked,
 * showing how much CPU the samples with that value took over time (hover
 * a bar for its numbers); then a table of each value's share. */
#ifndef TAGPROF_HTMLVIEW_H
#define TAGPROF_HTMLVIEW_H

#include <stddef.h>

#include "report/timeline.h"
#include "util/strbuf.h"

/* Lanes drawn at most: the values with the most samples; the rest share
 * one lane. */
#define HTMLVIEW_MAX_LANES	16

struct htmlview_opts {
	const char *by;		/* the label or tag field */
	const char *title;	/* what was read, for the heading */
};

/* tl (sorted) as HTML into out; the number of lanes in *lanes. 0,
 * -ENOENT if no sample has the label opts->by, -ENOMEM. */
int htmlview__write(const struct timeline *tl, const struct htmlview_opts *o,
		    struct strbuf *out, size_t *lanes);

/* The step between a time axis's ticks over span_s seconds: 1, 2 or 5
 * times a power of ten, at most 12 ticks. Shared by the HTML pages. */
double htmlview__tick_step(double span_s);

#endif
