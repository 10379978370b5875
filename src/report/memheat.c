// SPDX-License-Identifier: BSD-2-Clause
/* report memory's heatmaps (memhtml.h): time (x) against address (y,
 * rising), one SVG per view, its panels (memory.h) stacked with the
 * highest addresses on top, and right of each row the samples of its
 * buckets as a histogram. A cell's shade is its samples on a log scale;
 * runs of one shade in a row are one rect, so a page stays small. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/htmlview.h"
#include "report/memhtml.h"
#include "report/memory.h"

/* Geometry, in CSS pixels. */
#define LABEL_W		170	/* address labels */
#define HEAT_COLS	240
#define HEAT_W		720	/* 3 px a column */
#define HIST_GAP	12
#define HIST_W		160
#define SVG_W		(LABEL_W + HEAT_W + HIST_GAP + HIST_W + 20)
#define TITLE_H		18
#define PANEL_GAP	12
#define AXIS_H		34

/* Heat cells (rects) in the page at most: past it, heatmaps are left out
 * and said to be, so the page stays openable. */
#define MAX_RECTS	120000

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* One drawn panel of a set: its cells by (row, column), row 0 the lowest
 * addresses, and its samples per row (timed or not). */
struct grid {
	const struct mem_panel *p;
	uint64_t per_row, rows;
	uint32_t *cell;
	uint64_t *rowsum;
	double y, h;		/* px */
};

struct heatmap {
	struct grid g[MEM_PANELS_DRAWN];
	size_t n;
	uint32_t max_cell;
	uint64_t max_row;
	size_t runs;		/* rects the cells take */
	double height;
};

static void heatmap_free(struct heatmap *hm)
{
	for (size_t i = 0; i < hm->n; i++) {
		free(hm->g[i].cell);
		free(hm->g[i].rowsum);
	}
}

/* The grid that holds bucket idx; NULL if no drawn panel does. */
static struct grid *grid_of(struct heatmap *hm, uint64_t idx)
{
	size_t lo = 0, hi = hm->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (hm->g[mid].p->last < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < hm->n && hm->g[lo].p->first <= idx ? &hm->g[lo] : NULL;
}

/* The time span of the heatmaps, in ns; in double, as the times may be
 * far apart. */
static double time_span(const struct memrep *m)
{
	return (double)m->t1 - (double)m->t0 + 1;
}

static size_t col_of(const struct memrep *m, int64_t t)
{
	size_t c = (size_t)(((double)t - (double)m->t0) / time_span(m) *
			    HEAT_COLS);

	return c < HEAT_COLS ? c : HEAT_COLS - 1;
}

static int alloc_grids(const struct mem_set *st, struct heatmap *hm)
{
	memset(hm, 0, sizeof(*hm));
	for (size_t i = 0; i < st->np; i++) {
		struct grid *g;

		if (!st->p[i].drawn)
			continue;
		g = &hm->g[hm->n++];
		g->p = &st->p[i];
		mem_panel__rows(g->p, MEM_PANEL_ROWS, &g->per_row, &g->rows);
		g->cell = calloc(g->rows * HEAT_COLS, sizeof(*g->cell));
		g->rowsum = calloc(g->rows, sizeof(*g->rowsum));
		if (!g->cell || !g->rowsum)
			return -ENOMEM;
	}
	return 0;
}

static void fill_grids(const struct memrep *m, const struct mem_set *st,
		       struct heatmap *hm)
{
	for (size_t i = st->first; i < st->first + st->n; i++) {
		const struct mem_sample *s = &m->s[i];
		uint64_t idx = s->addr >> m->shift, row;
		struct grid *g = grid_of(hm, idx);
		uint32_t *c;

		if (!g)
			continue;
		row = (idx - g->p->first) / g->per_row;
		g->rowsum[row] += s->n;
		hm->max_row = g->rowsum[row] > hm->max_row ? g->rowsum[row] :
							     hm->max_row;
		if (s->t_ns == MEM_NO_TIME)
			continue;
		c = &g->cell[row * HEAT_COLS + col_of(m, s->t_ns)];
		*c = *c > UINT32_MAX - s->n ? UINT32_MAX : *c + s->n;
		hm->max_cell = *c > hm->max_cell ? *c : hm->max_cell;
	}
}

/* The shade of a cell of c samples: log scale up to the fullest cell. */
static int level_of(const struct heatmap *hm, uint32_t c)
{
	double f;
	int l;

	if (!c)
		return -1;
	if (hm->max_cell <= 1)
		return MEM_HEAT_LEVELS - 1;
	f = log((double)c + 1) / log((double)hm->max_cell + 1);
	l = (int)ceil(f * MEM_HEAT_LEVELS) - 1;
	return l < 0 ? 0 : l >= MEM_HEAT_LEVELS ? MEM_HEAT_LEVELS - 1 : l;
}

/* The rects grid g's row r takes: runs of one shade. */
static size_t row_runs(const struct heatmap *hm, const struct grid *g,
		       uint64_t r)
{
	size_t n = 0;
	int prev = -1;

	for (size_t c = 0; c < HEAT_COLS; c++) {
		int l = level_of(hm, g->cell[r * HEAT_COLS + c]);

		n += l >= 0 && l != prev;
		prev = l;
	}
	return n;
}

/* Each panel's place: the highest addresses on top, a panel's height by
 * its rows (3 px a row, 36 to 240 px). */
static void lay_out(struct heatmap *hm)
{
	double y = 0;

	for (size_t i = hm->n; i-- > 0;) {
		struct grid *g = &hm->g[i];
		double h = (double)g->rows * 3;

		g->h = h < 36 ? 36 : h > 240 ? 240 : h;
		g->y = y + TITLE_H;
		y = g->y + g->h + PANEL_GAP;
		for (uint64_t r = 0; r < g->rows; r++)
			hm->runs += row_runs(hm, g, r);
	}
	hm->height = y + AXIS_H;
}

/* The top of row r of grid g, in px: row 0 at the bottom. */
static double row_y(const struct grid *g, uint64_t r)
{
	return g->y + g->h - (double)(r + 1) * (g->h / (double)g->rows);
}

/* The address range of row r of grid g, for a title. */
static const char *row_range(const struct memrep *m, const struct grid *g,
			     uint64_t r, char *buf, size_t len)
{
	uint64_t from = g->p->first + r * g->per_row;
	uint64_t to = r + 1 == g->rows ? g->p->last : from + g->per_row - 1;

	return mem__range_text(from, to, m->shift, buf, len);
}

static void heat_run(struct mem_page *pg, const struct grid *g, uint64_t r,
		     size_t c0, size_t c1, int level, uint64_t n)
{
	const struct memrep *m = pg->m;
	double rh = g->h / (double)g->rows, cw = (double)HEAT_W / HEAT_COLS;
	double col_ns = time_span(m) / HEAT_COLS;
	char range[96];

	strbuf__printf(pg->b, "<rect class=\"h%d\" x=\"%.1f\" y=\"%.2f\" "
		       "width=\"%.1f\" height=\"%.2f\"><title>%s, %.3f-%.3f "
		       "s: %" PRIu64 " samples</title></rect>\n", level,
		       LABEL_W + (double)c0 * cw, row_y(g, r),
		       (double)(c1 - c0) * cw, rh,
		       row_range(m, g, r, range, sizeof(range)),
		       (m->t0 + (double)c0 * col_ns) / 1e9,
		       (m->t0 + (double)c1 * col_ns) / 1e9, n);
	pg->rects++;
}

/* Row r of grid g: one rect per run of cells of one shade. */
static void heat_row(struct mem_page *pg, const struct heatmap *hm,
		     const struct grid *g, uint64_t r)
{
	const uint32_t *cells = g->cell + r * HEAT_COLS;
	size_t c = 0, c0;

	while (c < HEAT_COLS) {
		int l = level_of(hm, cells[c]);
		uint64_t n = 0;

		if (l < 0) {
			c++;
			continue;
		}
		for (c0 = c; c < HEAT_COLS && level_of(hm, cells[c]) == l; c++)
			n += cells[c];
		heat_run(pg, g, r, c0, c, l, n);
	}
}

/* The samples of each row as a bar right of the panel. */
static void hist_rows(struct mem_page *pg, const struct heatmap *hm,
		      const struct grid *g)
{
	double rh = g->h / (double)g->rows;
	char range[96];

	for (uint64_t r = 0; r < g->rows; r++) {
		if (!g->rowsum[r])
			continue;
		strbuf__printf(pg->b, "<rect class=\"hist\" x=\"%d\" "
			       "y=\"%.2f\" width=\"%.1f\" height=\"%.2f\">"
			       "<title>%s: %" PRIu64 " samples</title>"
			       "</rect>\n",
			       LABEL_W + HEAT_W + HIST_GAP, row_y(g, r),
			       (double)HIST_W * (double)g->rowsum[r] /
			       (double)hm->max_row, rh > 1 ? rh - 0.2 : rh,
			       row_range(pg->m, g, r, range, sizeof(range)),
			       g->rowsum[r]);
	}
}

/* The panel's frame, its addresses at its left and its title. */
static void panel_frame(struct mem_page *pg, const struct grid *g)
{
	const struct memrep *m = pg->m;
	char range[96], size[32];
	uint64_t end = (g->p->last + 1) << m->shift;

	strbuf__printf(pg->b, "<g class=\"panel\" data-first=\"0x%" PRIx64
		       "\" data-samples=\"%" PRIu64 "\" data-rows=\"%" PRIu64
		       "\">\n<text class=\"ptitle\" x=\"%d\" y=\"%.1f\">%s, "
		       "%zu buckets touched, %" PRIu64 " samples%s</text>\n",
		       g->p->first << m->shift, g->p->samples, g->rows,
		       LABEL_W, g->y - 5,
		       mem__range_text(g->p->first, g->p->last, m->shift,
				       range, sizeof(range)),
		       g->p->nb, g->p->samples, g->per_row > 1 ?
		       "; a row is several buckets" : "");
	strbuf__printf(pg->b, "<rect class=\"bg\" x=\"%d\" y=\"%.1f\" "
		       "width=\"%d\" height=\"%.1f\"/>\n", LABEL_W, g->y,
		       HEAT_W, g->h);
	/* the end is 2^64 (0 here) for the address space's last bucket */
	if (end)
		strbuf__printf(pg->b, "<text class=\"addr\" x=\"%d\" "
			       "y=\"%.1f\">0x%" PRIx64 "</text>\n", LABEL_W - 6,
			       g->y + 10, end);
	mem__size_text(mem__span_bytes(g->p->first, g->p->last, m->shift),
		       size, sizeof(size));
	strbuf__printf(pg->b, "<text class=\"addr\" x=\"%d\" y=\"%.1f\">0x%"
		       PRIx64 "</text>\n<text class=\"addr size\" x=\"%d\" "
		       "y=\"%.1f\">%s</text>\n", LABEL_W - 6, g->y + g->h - 2,
		       g->p->first << m->shift, LABEL_W - 6,
		       g->y + g->h / 2 + 4, size);
}

static void time_axis(struct mem_page *pg, double y)
{
	const struct memrep *m = pg->m;
	double s0 = m->t0 / 1e9, s1 = ((double)m->t1 + 1) / 1e9;
	double step = htmlview__tick_step(s1 - s0);

	strbuf__printf(pg->b, "<line class=\"axis\" x1=\"%d\" y1=\"%.1f\" "
		       "x2=\"%d\" y2=\"%.1f\"/>\n", LABEL_W, y,
		       LABEL_W + HEAT_W, y);
	for (double t = ceil(s0 / step) * step; t <= s1 + step / 1e6;
	     t += step) {
		double x = LABEL_W + (t - s0) / (s1 - s0) * HEAT_W;

		strbuf__printf(pg->b, "<line class=\"tick\" x1=\"%.1f\" "
			       "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/><text "
			       "class=\"ticklabel\" x=\"%.1f\" y=\"%.1f\">%g s"
			       "</text>\n", x, y, x, y + 5, x, y + 18,
			       round(t / step) * step);
	}
	strbuf__printf(pg->b, "<text class=\"ticklabel\" x=\"%d\" y=\"%.1f\">"
		       "samples per row</text>\n", LABEL_W + HEAT_W + HIST_GAP +
		       HIST_W / 2, y + 18);
}

static void write_heatmap(struct mem_page *pg, const struct mem_set *st,
			  const struct heatmap *hm)
{
	strbuf__printf(pg->b, "<svg class=\"heat\" xmlns=\"http://www.w3.org/"
		       "2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 "
		       "%d %.0f\" data-panels=\"%zu\" data-max-cell=\"%" PRIu32
		       "\">\n", SVG_W, hm->height, SVG_W, hm->height, hm->n,
		       hm->max_cell);
	for (size_t i = 0; i < hm->n; i++) {
		const struct grid *g = &hm->g[i];

		panel_frame(pg, g);
		for (uint64_t r = 0; r < g->rows; r++)
			heat_row(pg, hm, g, r);
		hist_rows(pg, hm, g);
		strbuf__puts(pg->b, "</g>\n");
	}
	time_axis(pg, hm->height - AXIS_H + 4);
	strbuf__puts(pg->b, "</svg>\n");
	if (st->untimed)
		strbuf__printf(pg->b, "<p class=\"note\">%" PRIu64 " samples "
			       "without a time are in the histogram, not in "
			       "the heatmap.</p>\n", st->untimed);
}

/* Panels not drawn, summed. */
static void panels_left(struct mem_page *pg, const struct mem_set *st)
{
	uint64_t n = 0, samples = 0;

	for (size_t i = 0; i < st->np; i++)
		if (!st->p[i].drawn) {
			n++;
			samples += st->p[i].samples;
		}
	if (n)
		strbuf__printf(pg->b, "<p class=\"note panels-left\">%" PRIu64
			       " more address ranges, %" PRIu64 " samples "
			       "(%.1f%%), are not drawn: the %d with the most "
			       "samples are.</p>\n", n, samples,
			       pct(samples, st->samples), MEM_PANELS_DRAWN);
}

void mem_page__heatmap(struct mem_page *pg, const struct mem_set *st)
{
	struct heatmap hm;

	if (pg->m->t0 > pg->m->t1) {
		strbuf__puts(pg->b, "<p class=\"note\">No heatmap: no sample "
			     "has a time (record with -T).</p>\n");
		return;
	}
	if (alloc_grids(st, &hm)) {
		heatmap_free(&hm);
		pg->err = -ENOMEM;
		return;
	}
	fill_grids(pg->m, st, &hm);
	lay_out(&hm);
	if (pg->rects + hm.runs > MAX_RECTS)
		strbuf__printf(pg->b, "<p class=\"note\">Heatmap left out: "
			       "the page has %d cells already (its size "
			       "bound); the numbers below are whole.</p>\n",
			       MAX_RECTS);
	else
		write_heatmap(pg, st, &hm);
	panels_left(pg, st);
	heatmap_free(&hm);
}
