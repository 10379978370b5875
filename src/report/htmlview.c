// SPDX-License-Identifier: BSD-2-Clause
/* The timeline as one HTML file with SVG lanes (htmlview.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/htmlview.h"
#include "util/sort.h"

/* Geometry, in CSS pixels. */
#define LABEL_W		170	/* lane names */
#define PLOT_W		900
#define LANE_H		38
#define LANE_GAP	6
#define AXIS_H		34
#define NBINS		450	/* 2 px each */

static const char *const colors[] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
};
#define NCOLORS (sizeof(colors) / sizeof(colors[0]))

struct lane {
	uint32_t val;		/* string; TL_NONE: samples without the key */
	bool rest;		/* the values past the lanes drawn */
	uint64_t samples;
	int64_t first, last;	/* ns */
	uint32_t bins[NBINS];
};

struct view {
	const struct timeline *tl;
	const char *by;
	uint32_t key;		/* a label's; TL_NONE for a thread field */
	enum { BY_LABEL, BY_PROCESS, BY_THREAD } kind;
	struct lane *lanes;	/* every value, then sorted; drawn: nlanes */
	size_t nvals, nlanes;
	uint32_t *lane_of;	/* value string -> index into lanes */
	uint64_t total;
	int64_t t0, t1;		/* the samples' span, ns */
};

/* Sample s of thread t's value of the --by key (a string). */
static uint32_t value_of(const struct view *v, const struct tl_thread *t,
			 const struct tl_sample *s)
{
	switch (v->kind) {
	case BY_PROCESS:
		return t->process;
	case BY_THREAD:
		return t->name;
	default:
		return timeline__value(v->tl, s, v->key);
	}
}

static int by_samples(const void *a, const void *b)
{
	const struct lane *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->val < y->val ? -1 : x->val > y->val;
}

/* One lane per value, and one for samples without the key. */
static int count_values(struct view *v)
{
	const struct timeline *tl = v->tl;
	size_t cap = tl->nstr + 1;

	v->lanes = calloc(cap, sizeof(*v->lanes));
	v->lane_of = malloc(cap * sizeof(*v->lane_of));
	if (!v->lanes || !v->lane_of)
		return -ENOMEM;
	memset(v->lane_of, 0xff, cap * sizeof(*v->lane_of));
	v->t0 = INT64_MAX;
	v->t1 = INT64_MIN;
	for (size_t i = 0; i < tl->nthreads; i++)
		for (size_t j = 0; j < tl->threads[i].n; j++) {
			const struct tl_sample *s = &tl->threads[i].s[j];
			uint32_t val = value_of(v, &tl->threads[i], s);
			size_t slot = val == TL_NONE ? tl->nstr : val;

			if (v->lane_of[slot] == TL_NONE) {
				v->lane_of[slot] = (uint32_t)v->nvals;
				v->lanes[v->nvals++] = (struct lane){
					.val = val, .first = s->t_ns };
			}
			v->lanes[v->lane_of[slot]].samples++;
			v->lanes[v->lane_of[slot]].last = s->t_ns;
			if (s->t_ns < v->lanes[v->lane_of[slot]].first)
				v->lanes[v->lane_of[slot]].first = s->t_ns;
			v->total++;
			v->t0 = s->t_ns < v->t0 ? s->t_ns : v->t0;
			v->t1 = s->t_ns > v->t1 ? s->t_ns : v->t1;
		}
	if (v->t1 <= v->t0)
		v->t1 = v->t0 + 1;
	return 0;
}

/* Values by samples, the lanes drawn first; the samples of values past
 * HTMLVIEW_MAX_LANES - 1 go to one lane of the rest. */
static void choose_lanes(struct view *v)
{
	sort__array(v->lanes, v->nvals, sizeof(*v->lanes), by_samples);
	v->nlanes = v->nvals;
	if (v->nvals > HTMLVIEW_MAX_LANES)
		v->nlanes = HTMLVIEW_MAX_LANES;
	for (size_t i = 0; i < v->nvals; i++)
		v->lane_of[v->lanes[i].val == TL_NONE ? v->tl->nstr :
						       v->lanes[i].val] =
			(uint32_t)(i < v->nlanes - 1 || v->nvals == v->nlanes ?
				   i : v->nlanes - 1);
	if (v->nvals > v->nlanes)
		v->lanes[v->nlanes - 1].rest = true;
}

static size_t bin_of(const struct view *v, int64_t t)
{
	size_t b = (size_t)((double)(t - v->t0) / (double)(v->t1 - v->t0) *
			    NBINS);

	return b < NBINS ? b : NBINS - 1;
}

static void fill_bins(struct view *v)
{
	const struct timeline *tl = v->tl;

	for (size_t i = 0; i < tl->nthreads; i++)
		for (size_t j = 0; j < tl->threads[i].n; j++) {
			const struct tl_sample *s = &tl->threads[i].s[j];
			uint32_t val = value_of(v, &tl->threads[i], s);
			uint32_t lane = v->lane_of[val == TL_NONE ? tl->nstr :
							    val];

			v->lanes[lane].bins[bin_of(v, s->t_ns)]++;
		}
}

static void lane_name(struct strbuf *b, const struct view *v,
		      const struct lane *l)
{
	if (l->rest) {
		strbuf__printf(b, "(%zu other values)",
			       v->nvals - v->nlanes + 1);
	} else if (l->val == TL_NONE) {
		strbuf__puts(b, "(no ");
		strbuf__html(b, v->by);
		strbuf__puts(b, ")");
	} else {
		strbuf__html(b, timeline__str(v->tl, l->val));
	}
}

double htmlview__tick_step(double span_s)
{
	static const double mult[] = { 0.1, 0.2, 0.5, 1 };
	double p = pow(10, floor(log10(span_s > 0 ? span_s : 1e-9)));

	for (size_t i = 0; i < sizeof(mult) / sizeof(mult[0]); i++)
		if (span_s / (mult[i] * p) <= 12)
			return mult[i] * p;
	return p;
}

static void write_axis(struct strbuf *b, const struct view *v, int y)
{
	double s0 = v->t0 / 1e9, s1 = v->t1 / 1e9, step = htmlview__tick_step(s1 - s0);

	strbuf__printf(b, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" "
		       "y2=\"%d\"/>\n", LABEL_W, y, LABEL_W + PLOT_W, y);
	for (double t = ceil(s0 / step) * step; t <= s1 + step / 1e6;
	     t += step) {
		double x = LABEL_W + (t - s0) / (s1 - s0) * PLOT_W;

		strbuf__printf(b, "<line class=\"tick\" x1=\"%.1f\" y1=\"%d\" "
			       "x2=\"%.1f\" y2=\"%d\"/><text class=\"ticklabel\" "
			       "x=\"%.1f\" y=\"%d\">%g s</text>\n", x, y, x,
			       y + 5, x, y + 18, round(t / step) * step);
	}
}

static void write_lane(struct strbuf *b, const struct view *v, size_t i,
		       uint32_t max, int y)
{
	const struct lane *l = &v->lanes[i];
	double bin_ns = (double)(v->t1 - v->t0) / NBINS;
	double scale = (double)(LANE_H - 4) / (max ? max : 1);

	strbuf__printf(b, "<g class=\"lane\" data-lane=\"%zu\" data-value=\"",
		       i);
	lane_name(b, v, l);
	strbuf__printf(b, "\"><rect class=\"bg\" x=\"%d\" y=\"%d\" width=\"%d\" "
		       "height=\"%d\"/><text class=\"name\" x=\"%d\" y=\"%d\">",
		       LABEL_W, y, PLOT_W, LANE_H, LABEL_W - 8,
		       y + LANE_H / 2 + 4);
	lane_name(b, v, l);
	strbuf__puts(b, "</text>\n");
	for (size_t k = 0; k < NBINS; k++) {
		double h = l->bins[k] * scale, from = (v->t0 + k * bin_ns) / 1e9;

		if (!l->bins[k])
			continue;
		strbuf__printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			       "height=\"%.1f\" fill=\"%s\" data-from=\"%.4f\" "
			       "data-n=\"%" PRIu32 "\"><title>",
			       LABEL_W + k * (double)PLOT_W / NBINS,
			       y + LANE_H - 2 - h, (double)PLOT_W / NBINS, h,
			       colors[i % NCOLORS], from, l->bins[k]);
		lane_name(b, v, l);
		strbuf__printf(b, ", %.3f to %.3f s: %" PRIu32 " samples",
			       from, from + bin_ns / 1e9, l->bins[k]);
		if (v->tl->period_ns)
			strbuf__printf(b, " (%.2f CPUs)", l->bins[k] *
				       (double)v->tl->period_ns / bin_ns);
		strbuf__puts(b, "</title></rect>\n");
	}
	strbuf__puts(b, "</g>\n");
}

static void write_svg(struct strbuf *b, const struct view *v)
{
	int h = (int)v->nlanes * (LANE_H + LANE_GAP) + AXIS_H;
	uint32_t max = 0;

	for (size_t i = 0; i < v->nlanes; i++)
		for (size_t k = 0; k < NBINS; k++)
			max = v->lanes[i].bins[k] > max ? v->lanes[i].bins[k] :
							  max;
	strbuf__printf(b, "<svg id=\"lanes\" xmlns=\"http://www.w3.org/2000/svg\" "
		       "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
		       LABEL_W + PLOT_W + 20, h, LABEL_W + PLOT_W + 20, h);
	for (size_t i = 0; i < v->nlanes; i++)
		write_lane(b, v, i, max, (int)i * (LANE_H + LANE_GAP));
	write_axis(b, v, (int)v->nlanes * (LANE_H + LANE_GAP));
	strbuf__puts(b, "</svg>\n");
}

static void write_table(struct strbuf *b, const struct view *v)
{
	strbuf__puts(b, "<table id=\"shares\"><thead><tr><th>");
	strbuf__html(b, v->by);
	strbuf__puts(b, "</th><th>samples</th><th>share of CPU</th>");
	if (v->tl->period_ns)
		strbuf__puts(b, "<th>CPU seconds</th>");
	strbuf__puts(b, "<th>first (s)</th><th>last (s)</th></tr></thead>"
		     "<tbody>\n");
	for (size_t i = 0; i < v->nvals; i++) {
		const struct lane *l = &v->lanes[i];
		double share = 100.0 * l->samples / (v->total ? v->total : 1);

		strbuf__puts(b, "<tr><td>");
		lane_name(b, v, &(struct lane){ .val = l->val });
		strbuf__printf(b, "</td><td>%" PRIu64 "</td><td class=\"share\" "
			       "data-share=\"%.2f\"><span class=\"bar\" "
			       "style=\"width:%.0fpx\"></span>%.1f%%</td>",
			       l->samples, share, share, share);
		if (v->tl->period_ns)
			strbuf__printf(b, "<td>%.3f</td>", l->samples *
				       (double)v->tl->period_ns / 1e9);
		strbuf__printf(b, "<td>%.3f</td><td>%.3f</td></tr>\n",
			       l->first / 1e9, l->last / 1e9);
	}
	strbuf__puts(b, "</tbody></table>\n");
}

static const char style[] =
	"body{font:14px sans-serif;margin:16px;color:#222;background:#fff}"
	"h1{font-size:18px;margin:0 0 4px}p.sum{color:#555;margin:0 0 12px}"
	"svg .bg{fill:#f4f4f4}svg .name{text-anchor:end;font-size:13px}"
	"svg .axis,svg .tick{stroke:#888}svg .ticklabel{text-anchor:middle;"
	"font-size:12px;fill:#444}svg g.lane rect:not(.bg):hover{"
	"fill-opacity:.6;stroke:#000}"
	"table{border-collapse:collapse;margin-top:16px}"
	"th,td{padding:3px 10px;border-bottom:1px solid #ddd;text-align:right}"
	"th:first-child,td:first-child{text-align:left}"
	".bar{display:inline-block;height:10px;background:#4e79a7;"
	"margin-right:6px;vertical-align:middle}";

static void write_page(struct strbuf *b, const struct view *v,
		       const struct htmlview_opts *o)
{
	strbuf__puts(b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
		     "<meta http-equiv=\"Content-Security-Policy\" "
		     "content=\"default-src 'none'; style-src 'unsafe-inline'\">"
		     "<title>tagprof timeline: ");
	strbuf__html(b, o->title);
	strbuf__printf(b, "</title><style>%s</style></head><body>\n<h1>"
		       "CPU over time by ", style);
	strbuf__html(b, o->by);
	strbuf__puts(b, "</h1>\n<p class=\"sum\">");
	strbuf__html(b, o->title);
	strbuf__printf(b, ": %" PRIu64 " samples of %zu threads from %.3f s "
		       "to %.3f s; a bar's height is the samples in its %.1f "
		       "ms (hover for numbers)</p>\n", v->total,
		       v->tl->nthreads, v->t0 / 1e9, v->t1 / 1e9,
		       (double)(v->t1 - v->t0) / NBINS / 1e6);
	write_svg(b, v);
	write_table(b, v);
	strbuf__puts(b, "</body></html>\n");
}

int htmlview__write(const struct timeline *tl, const struct htmlview_opts *o,
		    struct strbuf *out, size_t *lanes)
{
	struct view v = { .tl = tl, .by = o->by,
			  .key = timeline__find_str(tl, o->by) };
	int err;

	*lanes = 0;
	/* the thread's own fields are not labels of the timeline's samples */
	if (!strcmp(o->by, "process"))
		v.kind = BY_PROCESS;
	else if (!strcmp(o->by, "thread_name"))
		v.kind = BY_THREAD;
	else if (v.key == TL_NONE)
		return -ENOENT;
	err = count_values(&v);
	if (!err && (v.nvals == 0 ||
		     (v.nvals == 1 && v.lanes[0].val == TL_NONE)))
		err = -ENOENT;	/* the string is there, not as a label */
	if (!err) {
		choose_lanes(&v);
		fill_bins(&v);
		write_page(out, &v, o);
		*lanes = v.nlanes;
		err = out->err;
	}
	free(v.lanes);
	free(v.lane_of);
	return err;
}
