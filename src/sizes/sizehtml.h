/* The fits of a table (fit.h) as one self-contained HTML page: inline
 * SVG and CSS, no script, nothing fetched, styled like report's pages
 * (report/htmlview.c). The ranked summary as a table, then per function
 * one plot: min, mean and max cost per call against size on log-log
 * axes, with the fitted curve and its formula. */
#ifndef TAGPROF_SIZEHTML_H
#define TAGPROF_SIZEHTML_H

#include "sizes/fit.h"
#include "util/strbuf.h"

/* Tuples listed per function under its plot, at most. */
#define SIZEHTML_MAX_ROWS	500

/* s as a page into out; title (what was read, escaped) may be NULL. 0 or
 * -ENOMEM. */
int sizehtml__write(const struct sizefits *s, const char *title,
		    struct strbuf *out);

#endif
