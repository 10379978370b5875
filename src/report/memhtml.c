// SPDX-License-Identifier: BSD-2-Clause
/* `tagprof report memory` as one self-contained HTML page (memory.h):
 * inline SVG and CSS, no script, nothing fetched, styled like the
 * timeline's page (htmlview.c). At the top the coverage and the objects;
 * then per data object a heatmap of time against address (memheat.c),
 * the skew, the working-set curve and, with --by, each value's share and
 * its own views (folded); last the working set over every object.
 * Numbers a script may want are in data- attributes. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/memhtml.h"
#include "report/memory.h"

/* The working-set chart's plot, in CSS pixels. */
#define CHART_X		90
#define CHART_Y		10
#define CHART_W		560
#define CHART_H		200

/* Objects with views of their own, --by values with views of their own
 * per object, and curves per chart; the rest are in the tables only. */
#define HTML_OBJECTS	12
#define HTML_COMPS	8
#define CHART_SERIES	8

static const char *const heat[MEM_HEAT_LEVELS] = {
	"#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c",
};

/* The timeline's colors (htmlview.c). */
static const char *const colors[] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
};
#define NCOLORS (sizeof(colors) / sizeof(colors[0]))

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static bool estimates(const struct memrep *m)
{
	return m->ev.period > 0 && !m->ev.periods_differ;
}

/* A --by value: "KEY=VALUE", or "(no KEY)". */
static void html_comp(struct mem_page *pg, uint32_t comp)
{
	if (comp == MEM_NOVAL) {
		strbuf__puts(pg->b, "(no ");
		strbuf__html(pg->b, pg->m->by);
		strbuf__puts(pg->b, ")");
		return;
	}
	strbuf__html(pg->b, pg->m->by);
	strbuf__puts(pg->b, "=");
	strbuf__html(pg->b, memrep__str(pg->m, comp));
}

/* "OBJECT" or "OBJECT, KEY=VALUE". */
static void html_set_name(struct mem_page *pg, const struct mem_set *st)
{
	strbuf__html(pg->b, memrep__str(pg->m, pg->m->objs[st->obj].name));
	if (st->comp == MEM_NONE)
		return;
	strbuf__puts(pg->b, ", ");
	html_comp(pg, st->comp);
}

/* ---- working set ---- */

struct series {
	const struct mem_ws_point *ws;
	size_t n;
	const struct mem_set *st;	/* NULL: every object */
	const char *color;
};

struct chart {
	size_t points;		/* k = 1 .. 2^(points - 1) */
	uint64_t max;		/* buckets, at the top */
};

static double chart_x(const struct chart *c, size_t j)
{
	return CHART_X + (c->points > 1 ? (double)j * CHART_W /
				(double)(c->points - 1) : 0);
}

static double chart_y(const struct chart *c, uint64_t buckets)
{
	return CHART_Y + CHART_H - (double)CHART_H * (double)buckets /
				   (double)c->max;
}

static void chart_axes(struct mem_page *pg, const struct chart *c)
{
	char size[32];

	strbuf__printf(pg->b, "<rect class=\"bg\" x=\"%d\" y=\"%d\" "
		       "width=\"%d\" height=\"%d\"/>\n", CHART_X, CHART_Y,
		       CHART_W, CHART_H);
	for (uint64_t t = 0; t <= 2; t++) {
		uint64_t buckets = c->max * t / 2;

		strbuf__printf(pg->b, "<text class=\"addr\" x=\"%d\" "
			       "y=\"%.1f\">%s</text>\n", CHART_X - 6,
			       chart_y(c, buckets) + 4,
			       mem__size_text(buckets << pg->m->shift, size,
					      sizeof(size)));
	}
	for (size_t j = 0; j < c->points; j++)
		strbuf__printf(pg->b, "<text class=\"ticklabel\" x=\"%.1f\" "
			       "y=\"%d\">%" PRIu64 "</text>\n", chart_x(c, j),
			       CHART_Y + CHART_H + 18, (uint64_t)1 << j);
	strbuf__printf(pg->b, "<text class=\"ticklabel\" x=\"%d\" y=\"%d\">"
		       "bytes accessed at least k times (k in samples)"
		       "</text>\n", CHART_X + CHART_W / 2,
		       CHART_Y + CHART_H + 36);
}

static void chart_legend(struct mem_page *pg, const struct series *s,
			 size_t n)
{
	strbuf__puts(pg->b, "<p class=\"legend\">");
	for (size_t i = 0; i < n; i++) {
		strbuf__printf(pg->b, "<span class=\"sw\" style=\"background:"
			       "%s\"></span>", s[i].color);
		if (s[i].st)
			html_set_name(pg, s[i].st);
		else
			strbuf__puts(pg->b, "all objects");
		strbuf__puts(pg->b, " &nbsp; ");
	}
	strbuf__puts(pg->b, "</p>\n");
}

/* The curves: x the power of two k, y the bytes with k samples or more. */
static void ws_chart(struct mem_page *pg, const struct series *s, size_t n)
{
	struct chart c = { .points = 1, .max = 1 };
	int w = CHART_X + CHART_W + 20, h = CHART_Y + CHART_H + 40;

	for (size_t i = 0; i < n; i++) {
		c.points = s[i].n > c.points ? s[i].n : c.points;
		if (s[i].n && s[i].ws[0].buckets > c.max)
			c.max = s[i].ws[0].buckets;	/* k = 1: the most */
	}
	strbuf__printf(pg->b, "<svg class=\"wschart\" xmlns=\"http://www.w3"
		       ".org/2000/svg\" width=\"%d\" height=\"%d\" viewBox="
		       "\"0 0 %d %d\">\n", w, h, w, h);
	chart_axes(pg, &c);
	for (size_t i = 0; i < n; i++) {
		strbuf__printf(pg->b, "<polyline class=\"ws\" stroke=\"%s\" "
			       "points=\"", s[i].color);
		for (size_t j = 0; j < s[i].n; j++)
			strbuf__printf(pg->b, "%.1f,%.1f ", chart_x(&c, j),
				       chart_y(&c, s[i].ws[j].buckets));
		strbuf__puts(pg->b, "\"/>\n");
	}
	strbuf__puts(pg->b, "</svg>\n");
	chart_legend(pg, s, n);
}

static void ws_table(struct mem_page *pg, const struct mem_ws_point *ws,
		     size_t n, uint64_t touched)
{
	const struct memrep *m = pg->m;
	char size[32];

	strbuf__puts(pg->b, "<table class=\"ws\"><thead><tr><th>samples &ge; k"
		     "</th><th>est. accesses &ge;</th><th>buckets</th><th>"
		     "bytes</th><th>share of touched</th></tr></thead>"
		     "<tbody>\n");
	for (size_t i = 0; i < n; i++) {
		uint64_t bytes = ws[i].buckets << m->shift;

		strbuf__printf(pg->b, "<tr class=\"ws\" data-k=\"%" PRIu64 "\" "
			       "data-buckets=\"%" PRIu64 "\" data-bytes=\"%"
			       PRIu64 "\"><td>%" PRIu64 "</td>", ws[i].k,
			       ws[i].buckets, bytes, ws[i].k);
		if (estimates(m))
			strbuf__printf(pg->b, "<td>%" PRIu64 "</td>", ws[i].k *
				       (uint64_t)m->ev.period);
		else
			strbuf__puts(pg->b, "<td>n/a</td>");
		strbuf__printf(pg->b, "<td>%" PRIu64 "</td><td>%s</td><td>"
			       "%.1f%%</td></tr>\n", ws[i].buckets,
			       mem__size_text(bytes, size, sizeof(size)),
			       pct(ws[i].buckets, touched));
	}
	strbuf__puts(pg->b, "</tbody></table>\n");
}

/* What the estimate assumes, said plainly. */
static void estimate_note(struct mem_page *pg)
{
	const struct memrep *m = pg->m;
	char size[32];

	if (!estimates(m)) {
		strbuf__puts(pg->b, "<p class=\"note\">No estimate of the "
			     "unsampled accesses: the sampling period is not "
			     "known, or differs between the inputs.</p>\n");
		return;
	}
	strbuf__printf(pg->b, "<p class=\"note\">Estimate: each sample stands "
		       "for the %" PRId64 " events of its period, so a bucket "
		       "with c samples had about c &times; %" PRId64 " "
		       "accesses (faults, for a fault event). This assumes the "
		       "events between samples went where the samples did. A "
		       "touched bucket counts whole (%s), and buckets no "
		       "sample hit are missed.</p>\n", m->ev.period,
		       m->ev.period, mem__size_text(m->bucket, size,
						    sizeof(size)));
}

/* ---- an object ---- */

static void html_latency(struct mem_page *pg, const struct mem_set *st,
			 uint64_t all)
{
	if (!st->weighted) {
		strbuf__puts(pg->b, "latency n/a (no sample has a weight)");
		return;
	}
	strbuf__printf(pg->b, "latency %" PRIu64 " cycles (%.1f%%), %.1f per "
		       "sample with a weight", st->weight, pct(st->weight, all),
		       (double)st->weight / (double)st->weighted);
}

static void html_skew(struct mem_page *pg, const struct mem_set *st)
{
	const struct mem_skew *k = &st->skew;
	double top1 = pct(k->top1, k->total), top10 = pct(k->top10, k->total);

	strbuf__printf(pg->b, "<p class=\"skew\" data-top1=\"%.2f\" "
		       "data-top10=\"%.2f\">Skew: the top 1%% of touched "
		       "buckets (%zu) hold %.1f%% of the samples; the top 10%% "
		       "(%zu) hold %.1f%%.</p>\n", top1, top10, k->top1_n, top1,
		       k->top10_n, top10);
	strbuf__puts(pg->b, "<table class=\"top\"><thead><tr><th>bucket</th>"
		     "<th>samples</th><th>share</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < k->ntop; i++)
		strbuf__printf(pg->b, "<tr><td>0x%" PRIx64 "</td><td>%" PRIu64
			       "</td><td>%.1f%%</td></tr>\n",
			       k->top[i].idx << pg->m->shift, k->top[i].n,
			       pct(k->top[i].n, k->total));
	strbuf__puts(pg->b, "</tbody></table>\n");
}

/* A view's samples (of of_what's), range, touched bytes and latency. */
static void set_summary(struct mem_page *pg, const struct mem_set *st,
			uint64_t of, const char *of_what, uint64_t latency)
{
	const struct memrep *m = pg->m;
	uint64_t touched = (uint64_t)st->nb << m->shift;
	char range[96], size[32];

	strbuf__printf(pg->b, "<p class=\"sum\" data-samples=\"%" PRIu64 "\" "
		       "data-touched-bytes=\"%" PRIu64 "\">%" PRIu64 " samples "
		       "(%.1f%% of %s); %s in %zu panel%s; %zu buckets touched "
		       "(%s); ", st->samples, touched, st->samples,
		       pct(st->samples, of), of_what,
		       mem__range_text(st->b[0].idx, st->b[st->nb - 1].idx,
				       m->shift, range, sizeof(range)),
		       st->np, st->np == 1 ? "" : "s", st->nb,
		       mem__size_text(touched, size, sizeof(size)));
	html_latency(pg, st, latency);
	if (m->objs[st->obj].pids && st->comp == MEM_NONE)
		strbuf__puts(pg->b, "; from several processes, each with its "
			     "own addresses");
	strbuf__puts(pg->b, "</p>\n");
}

static void comp_row(struct mem_page *pg, const struct mem_set *c,
		     const struct mem_set *all)
{
	double share = pct(c->samples, all->samples);

	strbuf__puts(pg->b, "<tr class=\"comp\" data-value=\"");
	if (c->comp != MEM_NOVAL)
		strbuf__html(pg->b, memrep__str(pg->m, c->comp));
	strbuf__printf(pg->b, "\" data-samples=\"%" PRIu64 "\" data-share="
		       "\"%.2f\"><td>", c->samples, share);
	html_comp(pg, c->comp);
	strbuf__printf(pg->b, "</td><td>%" PRIu64 "</td><td><span class="
		       "\"bar\" style=\"width:%.0fpx\"></span>%.1f%%</td>",
		       c->samples, share, share);
	if (all->weighted)
		strbuf__printf(pg->b, "<td>%" PRIu64 "</td><td>%.1f%%</td>"
			       "</tr>\n", c->weight,
			       pct(c->weight, all->weight));
	else
		strbuf__puts(pg->b, "<td>n/a</td><td>n/a</td></tr>\n");
}

/* Each --by value's share of the object's samples and latency. */
static void comp_table(struct mem_page *pg, const struct mem_obj *o)
{
	const struct mem_set *all = &pg->m->sets[o->set];

	strbuf__puts(pg->b, "<h3>By ");
	strbuf__html(pg->b, pg->m->by);
	strbuf__puts(pg->b, "</h3>\n<table class=\"comps\"><thead><tr><th>");
	strbuf__html(pg->b, pg->m->by);
	strbuf__puts(pg->b, "</th><th>samples</th><th>share of accesses</th>"
		     "<th>latency (cycles)</th><th>share of latency</th></tr>"
		     "</thead><tbody>\n");
	for (size_t i = 0; i < o->ncomps; i++)
		comp_row(pg, &pg->m->sets[o->comp0 + i], all);
	strbuf__puts(pg->b, "</tbody></table>\n");
}

/* The views of the values with the most samples, folded. */
static void comp_views(struct mem_page *pg, const struct mem_obj *o)
{
	const struct mem_set *all = &pg->m->sets[o->set];

	for (size_t i = 0; i < o->ncomps && i < HTML_COMPS; i++) {
		const struct mem_set *c = &pg->m->sets[o->comp0 + i];

		strbuf__puts(pg->b, "<details class=\"comp\"><summary>");
		html_set_name(pg, c);
		strbuf__printf(pg->b, ": %" PRIu64 " samples</summary>\n",
			       c->samples);
		set_summary(pg, c, all->samples, "the object's", all->weight);
		mem_page__heatmap(pg, c);
		html_skew(pg, c);
		ws_table(pg, c->ws, c->nws, c->nb);
		strbuf__puts(pg->b, "</details>\n");
	}
	if (o->ncomps <= HTML_COMPS)
		return;
	strbuf__printf(pg->b, "<p class=\"note\">%zu more values of ",
		       o->ncomps - HTML_COMPS);
	strbuf__html(pg->b, pg->m->by);
	strbuf__puts(pg->b, " are in the table only.</p>\n");
}

/* The object's curve, and its values' with --by. */
static void object_curves(struct mem_page *pg, const struct mem_obj *o)
{
	const struct mem_set *all = &pg->m->sets[o->set];
	struct series s[1 + CHART_SERIES];
	size_t n = 0;

	s[n++] = (struct series){ all->ws, all->nws, all, "#222" };
	for (size_t c = 0; c < o->ncomps && n <= CHART_SERIES; c++, n++) {
		const struct mem_set *cs = &pg->m->sets[o->comp0 + c];

		s[n] = (struct series){ cs->ws, cs->nws, cs,
					colors[(n - 1) % NCOLORS] };
	}
	ws_chart(pg, s, n);
}

static void object_section(struct mem_page *pg, size_t i)
{
	const struct memrep *m = pg->m;
	const struct mem_obj *o = &m->objs[i];
	const struct mem_set *all = &m->sets[o->set];

	strbuf__printf(pg->b, "<section class=\"object\" id=\"object-%zu\" "
		       "data-object=\"", i);
	strbuf__html(pg->b, memrep__str(m, o->name));
	strbuf__puts(pg->b, "\">\n<h2>");
	strbuf__html(pg->b, memrep__str(m, o->name));
	strbuf__puts(pg->b, "</h2>\n");
	set_summary(pg, all, m->cov.addr, "those with an address", m->weight);
	mem_page__heatmap(pg, all);
	html_skew(pg, all);
	strbuf__puts(pg->b, "<h3>Hot working set</h3>\n");
	object_curves(pg, o);
	ws_table(pg, all->ws, all->nws, all->nb);
	if (m->by) {
		comp_table(pg, o);
		comp_views(pg, o);
	}
	strbuf__puts(pg->b, "</section>\n");
}

/* ---- the top of the page ---- */

/* Every object, with a link to its section where it has one. */
static void objects_table(struct mem_page *pg)
{
	const struct memrep *m = pg->m;
	char size[32];

	strbuf__puts(pg->b, "<table id=\"objects\"><thead><tr><th>data object"
		     "</th><th>samples</th><th>share</th><th>touched</th>"
		     "<th>latency</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < m->nobjs; i++) {
		const struct mem_set *st = &m->sets[m->objs[i].set];

		strbuf__puts(pg->b, "<tr><td>");
		if (i < HTML_OBJECTS)
			strbuf__printf(pg->b, "<a href=\"#object-%zu\">", i);
		strbuf__html(pg->b, memrep__str(m, m->objs[i].name));
		strbuf__printf(pg->b, "%s</td><td>%" PRIu64 "</td><td>%.1f%%"
			       "</td><td>%s</td>",
			       i < HTML_OBJECTS ? "</a>" : "", st->samples,
			       pct(st->samples, m->cov.addr),
			       mem__size_text((uint64_t)st->nb << m->shift,
					      size, sizeof(size)));
		if (st->weighted)
			strbuf__printf(pg->b, "<td>%" PRIu64 " cycles</td>"
				       "</tr>\n", st->weight);
		else
			strbuf__puts(pg->b, "<td>n/a</td></tr>\n");
	}
	strbuf__puts(pg->b, "</tbody></table>\n");
	if (m->nobjs > HTML_OBJECTS)
		strbuf__printf(pg->b, "<p class=\"note\">The %d objects with "
			       "the most samples have views below; the other "
			       "%zu are in this table only.</p>\n",
			       HTML_OBJECTS, m->nobjs - HTML_OBJECTS);
}

/* A coverage row: n, its share of of (0: none), a note. */
static void cov_row(struct mem_page *pg, const char *what, const char *id,
		    uint64_t n, uint64_t of, const char *note)
{
	strbuf__printf(pg->b, "<tr id=\"cov-%s\" data-n=\"%" PRIu64 "\"><td>"
		       "%s</td><td>%" PRIu64 "</td><td>", id, n, what, n);
	if (of)
		strbuf__printf(pg->b, "%.1f%%", pct(n, of));
	strbuf__printf(pg->b, "</td><td>%s</td></tr>\n", note);
}

static void cov_event(struct mem_page *pg)
{
	const struct mem_event *ev = &pg->m->ev;

	strbuf__puts(pg->b, "<tr id=\"cov-event\"><td>event</td>"
		     "<td colspan=\"3\">");
	strbuf__html(pg->b, *ev->name ? ev->name : "not named");
	if (ev->periods_differ)
		strbuf__puts(pg->b, "; period: differs between the inputs");
	else if (ev->period)
		strbuf__printf(pg->b, "; period %" PRId64, ev->period);
	else
		strbuf__puts(pg->b, "; period not known");
	if (ev->ldlat)
		strbuf__printf(pg->b, "; ldlat %" PRId64 " cycles", ev->ldlat);
	strbuf__puts(pg->b, "</td></tr>\n");
}

static void coverage(struct mem_page *pg, const struct memrep_out *o)
{
	const struct mem_coverage *c = &pg->m->cov;
	char size[32];

	strbuf__puts(pg->b, "<table id=\"coverage\"><tbody>\n");
	cov_row(pg, "samples read", "read", c->read, 0, "");
	cov_row(pg, "lost", "lost", c->lost, 0, "untimed: left out");
	cov_row(pg, "kept", "kept", c->kept, 0, o->cut ? "by the cut" : "");
	cov_row(pg, "with an address", "addr", c->addr, c->kept, "");
	cov_row(pg, "with a resolved object", "resolved", c->resolved,
		c->kept, "not [unmapped], [unknown], none");
	if (c->untimed)
		cov_row(pg, "without a time", "untimed", c->untimed, c->kept,
			"not in a heatmap");
	cov_event(pg);
	strbuf__printf(pg->b, "<tr><td>bucket</td><td colspan=\"3\">%s</td>"
		       "</tr>\n", mem__size_text(pg->m->bucket, size,
						 sizeof(size)));
	if (o->cut) {
		strbuf__puts(pg->b, "<tr><td>cut</td><td colspan=\"3\">");
		strbuf__html(pg->b, o->cut);
		strbuf__puts(pg->b, "</td></tr>\n");
	}
	strbuf__puts(pg->b, "</tbody></table>\n");
}

static void heat_legend(struct mem_page *pg)
{
	strbuf__puts(pg->b, "<p class=\"legend\">Heatmaps: time left to "
		     "right, addresses rising; a cell's shade is its samples, "
		     "log scale, up to the fullest cell of its map: ");
	for (int l = 0; l < MEM_HEAT_LEVELS; l++)
		strbuf__printf(pg->b, "<span class=\"sw\" style=\"background:"
			       "%s\"></span>", heat[l]);
	strbuf__puts(pg->b, " few to many. A sequential scan is a rising "
		     "band, random access a scatter. At the right: the "
		     "samples of each row.</p>\n");
}

/* The title, then the coverage and the objects side by side, so that
 * the first heatmap comes into view. */
static void page_top(struct mem_page *pg, const struct memrep_out *o)
{
	const struct memrep *m = pg->m;

	strbuf__puts(pg->b, "<h1>Memory accesses by data object</h1>\n"
		     "<p class=\"sum\">");
	strbuf__html(pg->b, o->title);
	strbuf__printf(pg->b, ": %" PRIu64 " samples with an address in %zu "
		       "object%s", m->cov.addr, m->nobjs,
		       m->nobjs == 1 ? "" : "s");
	if (m->t0 <= m->t1)
		strbuf__printf(pg->b, ", from %.3f s to %.3f s", m->t0 / 1e9,
			       m->t1 / 1e9);
	strbuf__puts(pg->b, "</p>\n<div class=\"top\"><div>");
	coverage(pg, o);
	strbuf__puts(pg->b, "</div><div>");
	objects_table(pg);
	strbuf__puts(pg->b, "</div></div>\n");
	heat_legend(pg);
}

/* The working set over every object, with the objects' curves. */
static void page_working_set(struct mem_page *pg)
{
	const struct memrep *m = pg->m;
	struct series s[1 + CHART_SERIES];
	size_t n = 0;

	strbuf__puts(pg->b, "<h2>Hot working set, all objects</h2>\n");
	s[n++] = (struct series){ m->ws, m->nws, NULL, "#222" };
	for (size_t i = 0; i < m->nobjs && n <= CHART_SERIES; i++, n++) {
		const struct mem_set *st = &m->sets[m->objs[i].set];

		s[n] = (struct series){ st->ws, st->nws, st,
					colors[i % NCOLORS] };
	}
	ws_chart(pg, s, n);
	ws_table(pg, m->ws, m->nws, m->buckets_all);
	estimate_note(pg);
}

static const char style[] =
	"body{font:14px sans-serif;margin:16px;color:#222;background:#fff}"
	"h1{font-size:18px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 4px;"
	"border-top:1px solid #ccc;padding-top:12px}h3{font-size:14px;"
	"margin:16px 0 4px}p.sum{color:#555;margin:0 0 12px}"
	"p.note{color:#666;font-size:12px;max-width:1000px}"
	"svg .bg{fill:#f4f4f4}svg .addr{text-anchor:end;font-size:11px;"
	"fill:#444}svg .ptitle{font-size:12px;fill:#333}"
	"svg .axis,svg .tick{stroke:#888}svg .ticklabel{text-anchor:middle;"
	"font-size:12px;fill:#444}svg .hist{fill:#4e79a7}"
	"svg rect:hover{stroke:#000}"
	"svg .h0{fill:#c6dbef}svg .h1{fill:#9ecae1}svg .h2{fill:#6baed6}"
	"svg .h3{fill:#4292c6}svg .h4{fill:#2171b5}svg .h5{fill:#08519c}"
	"svg .ws{fill:none;stroke-width:2}"
	"table{border-collapse:collapse;margin-top:8px}"
	"th,td{padding:3px 10px;border-bottom:1px solid #ddd;text-align:right}"
	"th:first-child,td:first-child{text-align:left}"
	"#coverage td:last-child{text-align:left;color:#666;font-size:12px}"
	".bar{display:inline-block;height:10px;background:#4e79a7;"
	"margin-right:6px;vertical-align:middle}"
	".sw{display:inline-block;width:10px;height:10px;margin-right:4px}"
	"details{margin:8px 0 8px 16px}summary{cursor:pointer}"
	"div.top{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}";

int memrep__write_html(const struct memrep *m, const struct memrep_out *o,
		       struct strbuf *b)
{
	struct mem_page pg = { .m = m, .b = b };

	strbuf__puts(b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
		     "<meta http-equiv=\"Content-Security-Policy\" "
		     "content=\"default-src 'none'; "
		     "style-src 'unsafe-inline'\"><title>tagprof memory: ");
	strbuf__html(b, o->title);
	strbuf__printf(b, "</title><style>%s</style></head><body>\n", style);
	page_top(&pg, o);
	for (size_t i = 0; i < m->nobjs && i < HTML_OBJECTS && !pg.err; i++)
		object_section(&pg, i);
	page_working_set(&pg);
	strbuf__puts(b, "</body></html>\n");
	return pg.err ? pg.err : b->err;
}
