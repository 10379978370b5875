/* The parts of report memory's page (memhtml.c) drawn apart: the
 * heatmaps (memheat.c). */
#ifndef TAGPROF_MEMHTML_H
#define TAGPROF_MEMHTML_H

#include <stddef.h>

#include "report/memory.h"
#include "util/strbuf.h"

/* Shades of a heatmap's cells, few samples to many: CSS classes h0..h5
 * (memhtml.c's style). */
#define MEM_HEAT_LEVELS		6

struct mem_page {
	const struct memrep *m;
	struct strbuf *b;
	size_t rects;		/* heat cells written so far */
	int err;		/* 0, or the first -ENOMEM */
};

/* The heatmap of view st, its panels drawn (memory.h), and what is left
 * out said; only a note when no sample has a time, or when the page has
 * its most cells already. */
void mem_page__heatmap(struct mem_page *pg, const struct mem_set *st);

#endif
