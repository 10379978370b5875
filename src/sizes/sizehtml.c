// SPDX-License-Identifier: BSD-2-Clause
/* The fits as one HTML page with a log-log plot per function
 * (sizehtml.h). Numbers a script may want are in data- attributes. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/htmlview.h"
#include "sizes/sizehtml.h"
#include "sizes/sizereport.h"

/* One plot, in CSS pixels. */
#define PLOT_W		720
#define PLOT_H		380
#define PAD_L		78
#define PAD_R		20
#define PAD_T		34
#define PAD_B		48
#define CURVE_POINTS	160

/* The timeline's colors (htmlview.c). */
#define C_MEAN		"#4e79a7"
#define C_MAX		"#f28e2b"
#define C_MIN		"#76b7b2"
#define C_FIT		"#e15759"

/* A plot's ranges, in log10 of size and of cost. */
struct axes {
	double x0, x1, y0, y1;
};

static double px(const struct axes *a, double n)
{
	return PAD_L + (log10(n) - a->x0) / (a->x1 - a->x0) *
		       (PLOT_W - PAD_L - PAD_R);
}

static double py(const struct axes *a, double v)
{
	return PLOT_H - PAD_B - (log10(v) - a->y0) / (a->y1 - a->y0) *
				(PLOT_H - PAD_T - PAD_B);
}

static double mean_size(const struct size_tuple *u)
{
	return (double)u->size_sum / (double)u->calls;
}

static double mean_cost(const struct size_tuple *u)
{
	return (double)u->sum / (double)u->calls;
}

/* A log range around [lo, hi], never empty, with a margin. */
static void log_range(double lo, double hi, double *l0, double *l1)
{
	double a = log10(lo), b = log10(hi), m;

	if (b - a < 1e-9) {
		a -= 0.5;
		b += 0.5;
	}
	m = (b - a) * 0.04;
	*l0 = a - m;
	*l1 = b + m;
}

/* The ranges the tuples need; false when none can be drawn (log axes:
 * sizes below 1, costs of 0). */
static bool fit_axes(const struct size_func *f, struct axes *a)
{
	double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;

	for (size_t i = 0; i < f->n; i++) {
		const struct size_tuple *u = &f->t[i];
		double lo = u->min ? (double)u->min : mean_cost(u);

		if (mean_size(u) < 1 || !(mean_cost(u) > 0))
			continue;
		xlo = fmin(xlo, mean_size(u));
		xhi = fmax(xhi, mean_size(u));
		ylo = fmin(ylo, lo);
		yhi = fmax(yhi, (double)u->max);
	}
	if (!(xhi >= xlo))
		return false;
	log_range(xlo, xhi, &a->x0, &a->x1);
	log_range(ylo, fmax(yhi, ylo), &a->y0, &a->y1);
	return true;
}

/* 1, 20, 500, 1k, 2.5M: short tick labels. */
static void num_label(double v, char *buf, size_t len)
{
	static const struct { double at; const char *suffix; } si[] = {
		{ 1e12, "T" }, { 1e9, "G" }, { 1e6, "M" }, { 1e3, "k" },
	};

	for (size_t i = 0; i < sizeof(si) / sizeof(si[0]); i++)
		if (v >= si[i].at) {
			snprintf(buf, len, "%.3g%s", v / si[i].at, si[i].suffix);
			return;
		}
	snprintf(buf, len, "%.3g", v);
}

/* Ticks of a log axis over [lo, hi] (log10): at powers of ten, every
 * htmlview__tick_step decades when the span is wide; at 1, 2 and 5 times
 * them (or every digit) when it is narrow. Returns how many. */
static size_t log_ticks(double lo, double hi, double *out, size_t max)
{
	static const int some[] = { 1, 2, 5 }, all[] = { 1, 2, 3, 4, 5, 6, 7,
							 8, 9 };
	double span = hi - lo, step;
	size_t n = 0;

	if (span >= 2) {
		step = fmax(1, round(htmlview__tick_step(span)));
		for (double k = ceil(lo / step) * step; k <= hi && n < max;
		     k += step)
			out[n++] = pow(10, k);
		return n;
	}
	for (int pass = 0; pass < 2 && n < 3; pass++) {
		const int *m = pass ? all : some;
		size_t nm = pass ? 9 : 3;

		n = 0;
		for (double e = floor(lo); e <= ceil(hi); e++)
			for (size_t i = 0; i < nm && n < max; i++) {
				double v = m[i] * pow(10, e);

				if (log10(v) >= lo && log10(v) <= hi)
					out[n++] = v;
			}
	}
	return n;
}

static void draw_axes(struct strbuf *b, const struct axes *a,
		      const char *unit)
{
	double t[24];
	char lab[32];
	size_t n;
	int x0 = PAD_L, x1 = PLOT_W - PAD_R, y0 = PAD_T, y1 = PLOT_H - PAD_B;

	strbuf__printf(b, "<rect class=\"bg\" x=\"%d\" y=\"%d\" width=\"%d\" "
		       "height=\"%d\"/>\n", x0, y0, x1 - x0, y1 - y0);
	n = log_ticks(a->x0, a->x1, t, 24);
	for (size_t i = 0; i < n; i++) {
		double x = px(a, t[i]);

		num_label(t[i], lab, sizeof(lab));
		strbuf__printf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" "
			       "x2=\"%.1f\" y2=\"%d\"/><text class=\"ticklabel\" "
			       "x=\"%.1f\" y=\"%d\">%s</text>\n", x, y0, x, y1,
			       x, y1 + 16, lab);
	}
	n = log_ticks(a->y0, a->y1, t, 24);
	for (size_t i = 0; i < n; i++) {
		double y = py(a, t[i]);

		num_label(t[i], lab, sizeof(lab));
		strbuf__printf(b, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" "
			       "x2=\"%d\" y2=\"%.1f\"/><text class=\"ylabel\" "
			       "x=\"%d\" y=\"%.1f\">%s</text>\n", x0, y, x1, y,
			       x0 - 6, y + 4, lab);
	}
	strbuf__printf(b, "<text class=\"ticklabel\" x=\"%d\" y=\"%d\">input "
		       "size (log)</text>\n<text class=\"ticklabel\" "
		       "transform=\"translate(16 %d) rotate(-90)\">cost per "
		       "call, ", (x0 + x1) / 2, PLOT_H - 8, (y0 + y1) / 2);
	strbuf__html(b, unit);
	strbuf__puts(b, " (log)</text>\n");
}

/* Per tuple: a bar from min to max, and the three points. */
static void draw_tuples(struct strbuf *b, const struct axes *a,
			const struct size_func *f, const char *unit)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct size_tuple *u = &f->t[i];
		double n = mean_size(u), avg = mean_cost(u), x = px(a, n);

		if (n < 1 || !(avg > 0))
			continue;
		strbuf__printf(b, "<g class=\"tuple\" data-size=\"%.17g\" "
			       "data-calls=\"%" PRIu64 "\" data-mean=\"%.17g\">"
			       "<title>size %.0f: %" PRIu64 " calls, min %"
			       PRIu64 ", mean %.1f, max %" PRIu64 " ", n,
			       u->calls, avg, n, u->calls, u->min, avg, u->max);
		strbuf__html(b, unit);
		strbuf__puts(b, "</title>");
		if (u->min)
			strbuf__printf(b, "<line class=\"span\" x1=\"%.1f\" "
				       "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
				       "<circle class=\"min\" cx=\"%.1f\" "
				       "cy=\"%.1f\" r=\"2\"/>", x,
				       py(a, (double)u->min), x,
				       py(a, (double)u->max), x,
				       py(a, (double)u->min));
		strbuf__printf(b, "<circle class=\"max\" cx=\"%.1f\" cy=\"%.1f\" "
			       "r=\"2\"/><circle class=\"mean\" cx=\"%.1f\" "
			       "cy=\"%.1f\" r=\"3.5\"/></g>\n", x,
			       py(a, (double)u->max), x, py(a, avg));
	}
}

/* The chosen model over the plot's width, clipped to it; pieces where
 * it is not positive are left out. */
static void draw_curve(struct strbuf *b, const struct axes *a,
		       const struct fit_result *r, size_t idx)
{
	bool open = false;

	strbuf__printf(b, "<g clip-path=\"url(#clip%zu)\">", idx);
	for (int k = 0; k <= CURVE_POINTS; k++) {
		double lx = a->x0 + (a->x1 - a->x0) * k / CURVE_POINTS;
		double v = fit__eval(r, r->best, pow(10, lx));

		if (!(v > 0) || !isfinite(v)) {
			if (open)
				strbuf__puts(b, "\"/>");
			open = false;
			continue;
		}
		if (!open)
			strbuf__puts(b, "<polyline class=\"fit\" points=\"");
		open = true;
		strbuf__printf(b, "%.1f,%.1f ", px(a, pow(10, lx)), py(a, v));
	}
	strbuf__puts(b, open ? "\"/></g>\n" : "</g>\n");
}

/* What the plot's corner says: the formula, or why there is none. */
static void plot_caption(struct strbuf *b, const struct fit_result *r,
			 const char *unit)
{
	char fit[64], cls[32];

	strbuf__printf(b, "<text class=\"formula\" x=\"%d\" y=\"%d\">",
		       PAD_L, PAD_T - 12);
	if (r->classified) {
		strbuf__puts(b, "fit: ");
		strbuf__html(b, fit__formula(r, r->best, fit, sizeof(fit)));
		strbuf__puts(b, " ");
		strbuf__html(b, unit);
		strbuf__puts(b, " (");
		strbuf__html(b, fit__class_text(r, r->best, cls, sizeof(cls)));
		strbuf__puts(b, ")");
	} else {
		strbuf__puts(b, "not classified: ");
		strbuf__html(b, r->why);
	}
	strbuf__puts(b, "</text>\n");
}

static void plot(struct strbuf *b, const struct sizefits *s, size_t i)
{
	const struct size_func *f = &s->t->funcs[i];
	const struct fit_result *r = &s->r[i];
	const char *unit = s->t->cost_unit ? s->t->cost_unit : "ns";
	struct axes a;

	strbuf__printf(b, "<svg class=\"sizeplot\" xmlns=\"http://www.w3.org/"
		       "2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d "
		       "%d\" data-function=\"", PLOT_W, PLOT_H, PLOT_W, PLOT_H);
	strbuf__html(b, f->name);
	strbuf__puts(b, "\">\n");
	if (!fit_axes(f, &a)) {
		strbuf__printf(b, "<text class=\"formula\" x=\"%d\" y=\"%d\">"
			       "no tuple to draw (no calls, or only size 0 or "
			       "cost 0)</text>\n</svg>\n", PAD_L, PLOT_H / 2);
		return;
	}
	strbuf__printf(b, "<defs><clipPath id=\"clip%zu\"><rect x=\"%d\" "
		       "y=\"%d\" width=\"%d\" height=\"%d\"/></clipPath></defs>"
		       "\n", i, PAD_L, PAD_T, PLOT_W - PAD_L - PAD_R,
		       PLOT_H - PAD_T - PAD_B);
	draw_axes(b, &a, unit);
	draw_tuples(b, &a, f, unit);
	if (r->classified)
		draw_curve(b, &a, r, i);
	plot_caption(b, r, unit);
	strbuf__puts(b, "</svg>\n");
}

static void tuple_table(struct strbuf *b, const struct size_func *f)
{
	strbuf__printf(b, "<details><summary>%zu tuples", f->n);
	if (f->n > SIZEHTML_MAX_ROWS)
		strbuf__printf(b, " (the first %d listed)", SIZEHTML_MAX_ROWS);
	strbuf__puts(b, "</summary><table><thead><tr><th>size</th><th>mean "
		     "size</th><th>calls</th><th>min</th><th>mean</th><th>max"
		     "</th><th>sd</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < f->n && i < SIZEHTML_MAX_ROWS; i++) {
		const struct size_tuple *u = &f->t[i];
		double avg = mean_cost(u);
		double var = u->sumsq / (double)u->calls - avg * avg;

		strbuf__printf(b, "<tr><td>%" PRIu64 "</td><td>%.1f</td><td>%"
			       PRIu64 "</td><td>%" PRIu64 "</td><td>%.1f</td>"
			       "<td>%" PRIu64 "</td><td>%.1f</td></tr>\n",
			       u->size, mean_size(u), u->calls, u->min, avg,
			       u->max, var > 0 ? sqrt(var) : 0.0);
	}
	strbuf__puts(b, "</tbody></table></details>\n");
}

/* The sentence under a function's heading. */
static void func_summary(struct strbuf *b, const struct sizefits *s, size_t i)
{
	const struct size_func *f = &s->t->funcs[i];
	const struct fit_result *r = &s->r[i];
	char cls[32], fit[64];

	strbuf__puts(b, "<p class=\"sum\">");
	if (r->classified) {
		strbuf__printf(b, "grows as <b class=\"order\">%s</b>; the model "
			       "chosen is ", fit__class_name(r->order));
		strbuf__html(b, fit__class_text(r, r->best, cls, sizeof(cls)));
		strbuf__puts(b, ", <code>");
		strbuf__html(b, fit__formula(r, r->best, fit, sizeof(fit)));
		strbuf__puts(b, "</code>");
		if (r->runner_up != FIT_NONE) {
			strbuf__puts(b, r->daic >= 0 ? ", ahead of the best "
				     "other growth, " : "; another growth, ");
			strbuf__html(b, fit__class_text(r, r->runner_up, cls,
							sizeof(cls)));
			if (r->daic >= 0)
				strbuf__printf(b, ", by %.1f AIC", r->daic);
			else
				strbuf__printf(b, ", fits better by %.1f AIC, "
					       "less than the %.0f a faster "
					       "growth must win by", -r->daic,
					       FIT_AIC_MARGIN);
		}
		strbuf__printf(b, "; confidence %.2f (the share of %d "
			       "bootstrap resamples of the tuples that give "
			       "this order). ", r->confidence, FIT_RESAMPLES);
	} else {
		strbuf__puts(b, "<b>not classified</b>: ");
		strbuf__html(b, r->why);
		strbuf__puts(b, ". ");
	}
	strbuf__puts(b, "Size ");
	strbuf__html(b, f->size_spec);
	strbuf__puts(b, " of ");
	strbuf__html(b, f->binary);
	strbuf__printf(b, "; %zu tuples", f->n);
	if (f->calls_skipped)
		strbuf__printf(b, ", %" PRIu64 " calls skipped (nested too "
			       "deep)", f->calls_skipped);
	if (f->size_faults)
		strbuf__printf(b, ", %" PRIu64 " size faults", f->size_faults);
	strbuf__puts(b, ".</p>\n");
}

static void legend(struct strbuf *b)
{
	strbuf__puts(b, "<p class=\"legend\"><span class=\"sw\" style=\""
		     "background:" C_MEAN "\"></span>mean &nbsp; <span "
		     "class=\"sw\" style=\"background:" C_MIN "\"></span>min "
		     "&nbsp; <span class=\"sw\" style=\"background:" C_MAX
		     "\"></span>max &nbsp; <span class=\"sw\" style=\""
		     "background:" C_FIT "\"></span>fitted model</p>\n");
}

static void summary_table(struct strbuf *b, const struct sizefits *s)
{
	strbuf__puts(b, "<table id=\"summary\"><thead><tr><th>function</th>"
		     "<th>order</th><th>class</th><th>fit</th><th>dAIC</th>"
		     "<th>runner-up</th><th>confidence</th><th>sizes</th>"
		     "<th>calls</th></tr></thead><tbody>\n");
	for (size_t j = 0; j < s->t->nfuncs; j++) {
		size_t i = s->rank[j];
		const struct size_func *f = &s->t->funcs[i];
		const struct fit_result *r = &s->r[i];
		uint64_t calls = 0;
		char cls[32], fit[64];

		for (size_t k = 0; k < f->n; k++)
			calls += f->t[k].calls;
		strbuf__printf(b, "<tr><td><a href=\"#f%zu\">", i);
		strbuf__html(b, f->name);
		strbuf__puts(b, "</a></td>");
		if (r->classified) {
			strbuf__printf(b, "<td>%s</td><td>",
				       fit__class_name(r->order));
			strbuf__html(b, fit__class_text(r, r->best, cls,
							sizeof(cls)));
			strbuf__puts(b, "</td><td><code>");
			strbuf__html(b, fit__formula(r, r->best, fit,
						     sizeof(fit)));
			strbuf__puts(b, "</code></td>");
			if (r->runner_up != FIT_NONE) {
				strbuf__printf(b, "<td>%.1f</td><td>", r->daic);
				strbuf__html(b, fit__class_text(r, r->runner_up,
								cls,
								sizeof(cls)));
				strbuf__puts(b, "</td>");
			} else {
				strbuf__puts(b, "<td>-</td><td>-</td>");
			}
			strbuf__printf(b, "<td>%.2f</td>", r->confidence);
		} else {
			strbuf__puts(b, "<td colspan=\"6\">not classified: ");
			strbuf__html(b, r->why);
			strbuf__puts(b, "</td>");
		}
		strbuf__printf(b, "<td>%zu</td><td>%" PRIu64 "</td></tr>\n",
			       f->n, calls);
	}
	strbuf__puts(b, "</tbody></table>\n");
}

/* sizereport__measured's sentence, escaped. */
static void measured(struct strbuf *b, const struct sizetab *t)
{
	struct strbuf m = { 0 };

	sizereport__measured(t, &m);
	strbuf__html(b, m.p ? m.p : "");
	if (m.err && !b->err)
		b->err = m.err;
	strbuf__free(&m);
}

static const char style[] =
	"body{font:14px sans-serif;margin:16px;color:#222;background:#fff}"
	"h1{font-size:18px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 4px;"
	"border-top:1px solid #ccc;padding-top:12px}"
	"p.sum{color:#555;margin:0 0 12px;max-width:1000px}"
	"svg .bg{fill:#f4f4f4}svg .grid{stroke:#ddd}"
	"svg .ticklabel{text-anchor:middle;font-size:12px;fill:#444}"
	"svg .ylabel{text-anchor:end;font-size:12px;fill:#444}"
	"svg .formula{font-size:13px;fill:#222}"
	"svg .span{stroke:#bbb}svg .mean{fill:" C_MEAN "}"
	"svg .min{fill:" C_MIN "}svg .max{fill:" C_MAX "}"
	"svg .fit{fill:none;stroke:" C_FIT ";stroke-width:2}"
	"svg g.tuple:hover circle{stroke:#000}"
	"table{border-collapse:collapse;margin-top:8px}"
	"th,td{padding:3px 10px;border-bottom:1px solid #ddd;text-align:right}"
	"th:first-child,td:first-child{text-align:left}"
	".sw{display:inline-block;width:10px;height:10px;margin-right:4px}"
	"details{margin:8px 0}summary{cursor:pointer}";

int sizehtml__write(const struct sizefits *s, const char *title,
		    struct strbuf *b)
{
	strbuf__puts(b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
		     "<meta http-equiv=\"Content-Security-Policy\" "
		     "content=\"default-src 'none'; style-src 'unsafe-inline'\">"
		     "<title>tagprof sizes");
	if (title) {
		strbuf__puts(b, ": ");
		strbuf__html(b, title);
	}
	strbuf__printf(b, "</title><style>%s</style></head><body>\n<h1>Cost "
		       "against input size</h1>\n<p class=\"sum\">", style);
	if (title) {
		strbuf__html(b, title);
		strbuf__puts(b, ": ");
	}
	measured(b, s->t);
	strbuf__printf(b, ". %zu function%s, the fastest-growing first.</p>\n",
		       s->t->nfuncs, s->t->nfuncs == 1 ? "" : "s");
	summary_table(b, s);
	legend(b);
	for (size_t j = 0; j < s->t->nfuncs; j++) {
		size_t i = s->rank[j];

		strbuf__printf(b, "<section id=\"f%zu\"><h2>", i);
		strbuf__html(b, s->t->funcs[i].name);
		strbuf__puts(b, "</h2>\n");
		func_summary(b, s, i);
		plot(b, s, i);
		tuple_table(b, &s->t->funcs[i]);
		strbuf__puts(b, "</section>\n");
	}
	strbuf__puts(b, "</body></html>\n");
	return b->err;
}
