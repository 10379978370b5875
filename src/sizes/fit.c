// SPDX-License-Identifier: BSD-2-Clause
/* Growth fits of cost against input size (fit.h, docs/sizes.md). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sizes/fit.h"
#include "util/sort.h"

/* The bootstrap's generator starts here for every function, so a fit
 * repeats exactly. */
#define FIT_SEED	0x9e3779b97f4a7c15ull
/* RSS/N is floored here: a noiseless fit would make ln(0). */
#define RSS_FLOOR	1e-20

static const char *const class_names[FIT_NAMED] = {
	"1", "log_n", "n", "n_log_n", "n^2", "n^3",
};

/* The fitted points: mean size x, mean cost y, and their logs. */
struct points {
	size_t n;
	double *x, *y, *lx, *ly;
};

/* f(n) of a named class. */
static double feature(enum fit_class c, double x)
{
	switch (c) {
	case FIT_LOG_N:
		return log(x);
	case FIT_N:
		return x;
	case FIT_N_LOG_N:
		return x * log(x);
	case FIT_N2:
		return x * x;
	case FIT_N3:
		return x * x * x;
	default:
		return 1;
	}
}

static int params(enum fit_class c)
{
	return c == FIT_1 ? 1 : 2;
}

/* Akaike's criterion from the relative residuals' sum of squares; every
 * model is scored on the same scale, so the numbers compare. */
static double aic(double rss, double n, int k)
{
	double v = rss / n;

	return n * log(v > RSS_FLOOR ? v : RSS_FLOOR) + 2.0 * k;
}

static double mult_of(const double *mult, size_t i)
{
	return mult ? mult[i] : 1.0;
}

/* Sum of squared relative residuals (y - fit) / y of model c. */
static double rel_rss(const struct points *p, const double *mult,
		      enum fit_class c, double a, double b)
{
	double rss = 0;

	for (size_t i = 0; i < p->n; i++) {
		double fit = c == FIT_POWER ? a * exp(b * p->lx[i]) :
			     a + b * feature(c, p->x[i]);
		double r = (p->y[i] - fit) / p->y[i];

		rss += mult_of(mult, i) * r * r;
	}
	return rss;
}

/* cost = a: weighted least squares on relative residuals, weight 1/y^2,
 * so each size counts alike however large its cost. */
static void fit_const(const struct points *p, const double *mult,
		      struct fit_model *m)
{
	double su = 0, suu = 0;

	for (size_t i = 0; i < p->n; i++) {
		double u = 1 / p->y[i], w = mult_of(mult, i);

		su += w * u;
		suu += w * u * u;
	}
	m->a = suu > 0 ? su / suu : 0;
	m->b = 0;
	m->ok = suu > 0;
}

/* cost = a + b*f(n), minimizing sum ((y - a - b f) / y)^2: a regression of
 * 1 on (1/y, f/y). f is scaled to at most 1 to keep the normal equations
 * well conditioned. A negative intercept (no cost is below zero) is set
 * to 0 and b fitted alone; a negative b means the class does not fit a
 * cost that does not grow, and the model is left out. */
static void fit_linear(const struct points *p, const double *mult,
		       enum fit_class c, struct fit_model *m)
{
	double scale = 0, s11 = 0, s12 = 0, s22 = 0, t1 = 0, t2 = 0, det;

	for (size_t i = 0; i < p->n; i++) {
		double f = feature(c, p->x[i]);

		scale = f > scale ? f : scale;
	}
	m->ok = false;
	if (!(scale > 0) || !isfinite(scale))
		return;
	for (size_t i = 0; i < p->n; i++) {
		double w = mult_of(mult, i), u = 1 / p->y[i];
		double g = feature(c, p->x[i]) / scale * u;

		s11 += w * u * u;
		s12 += w * u * g;
		s22 += w * g * g;
		t1 += w * u;
		t2 += w * g;
	}
	det = s11 * s22 - s12 * s12;
	if (!(det > 1e-12 * s11 * s22))
		return;		/* f is constant over these sizes */
	m->a = (t1 * s22 - t2 * s12) / det;
	m->b = (s11 * t2 - s12 * t1) / det;
	if (m->a < 0) {
		m->a = 0;
		m->b = t2 / s22;
	}
	if (!(m->b >= 0))
		return;
	m->b /= scale;
	m->ok = true;
}

/* cost = a*n^b by least squares on ln cost against ln n. */
static void fit_power(const struct points *p, const double *mult,
		      struct fit_model *m)
{
	double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, var;

	for (size_t i = 0; i < p->n; i++) {
		double w = mult_of(mult, i);

		sw += w;
		sx += w * p->lx[i];
		sy += w * p->ly[i];
	}
	m->ok = false;
	if (!(sw > 0))
		return;
	sx /= sw;
	sy /= sw;
	for (size_t i = 0; i < p->n; i++) {
		double w = mult_of(mult, i), dx = p->lx[i] - sx;

		sxx += w * dx * dx;
		sxy += w * dx * (p->ly[i] - sy);
	}
	var = sxx / sw;
	if (!(var > 1e-12))
		return;		/* one size only */
	m->b = sxy / sxx;
	m->a = exp(sy - m->b * sx);
	m->ok = isfinite(m->a) && isfinite(m->b);
}

static void fit_models(const struct points *p, const double *mult,
		       struct fit_model *m)
{
	for (enum fit_class c = 0; c < FIT_NMODELS; c++) {
		if (c == FIT_1)
			fit_const(p, mult, &m[c]);
		else if (c == FIT_POWER)
			fit_power(p, mult, &m[c]);
		else
			fit_linear(p, mult, c, &m[c]);
		m[c].rss = m[c].ok ? rel_rss(p, mult, c, m[c].a, m[c].b) :
				     INFINITY;
		m[c].aic = m[c].ok ? aic(m[c].rss, (double)p->n,
					 params(c)) : INFINITY;
		if (!isfinite(m[c].aic))
			m[c].ok = false;
	}
}

/* The slope of ln f(n) against ln n over the points: the exponent a power
 * law fitted to a pure f would get at these sizes (log n over 16..1e6:
 * 0.15; n log n: 1.15). Points where f is not positive are left out. */
static double class_exponent(const struct points *p, enum fit_class c)
{
	static const double nominal[FIT_NAMED] = { 0, 0, 1, 1, 2, 3 };
	double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;

	if (c == FIT_1)
		return 0;
	for (size_t i = 0; i < p->n; i++) {
		double f = feature(c, p->x[i]);

		if (!(f > 0))
			continue;
		sw++;
		sx += p->lx[i];
		sy += log(f);
	}
	if (sw < 2)
		return nominal[c];
	sx /= sw;
	sy /= sw;
	for (size_t i = 0; i < p->n; i++) {
		double f = feature(c, p->x[i]);

		if (!(f > 0))
			continue;
		sxx += (p->lx[i] - sx) * (p->lx[i] - sx);
		sxy += (p->lx[i] - sx) * (log(f) - sy);
	}
	return sxx > 0 ? sxy / sxx : 0;
}

/* The named class a power law's exponent k stands for. The classes whose
 * own exponent at these sizes is within FIT_EXP_TOL of k are candidates,
 * and the one of them that fits best (AIC) wins: this parts log n from
 * 1, and n log n from n, which lie close. With no candidate, the
 * smallest class that grows faster than k: a bound from above, so an
 * n^1.5 is reported as n^2, not n log n. */
static enum fit_class power_order(const struct fit_model *m,
				  const double *e, double k)
{
	enum fit_class best = FIT_NONE;

	for (enum fit_class c = 0; c < FIT_NAMED; c++) {
		if (fabs(k - e[c]) > FIT_EXP_TOL || !m[c].ok)
			continue;
		if (best == FIT_NONE || m[c].aic < m[best].aic)
			best = c;
	}
	if (best != FIT_NONE)
		return best;
	for (enum fit_class c = 0; c < FIT_NAMED; c++)
		if (e[c] > k)
			return c;
	return FIT_N3;
}

static enum fit_class order_of(const struct fit_model *m, const double *e,
			       enum fit_class c)
{
	return c == FIT_POWER ? power_order(m, e, m[FIT_POWER].b) : c;
}

/* The model chosen, by AIC with a margin for parsimony: among the
 * orders (a power law counts for its order), the slowest-growing one
 * whose best model is within FIT_AIC_MARGIN of the least AIC; then that
 * order's best model. A faster class must earn its place: with six
 * growing classes to try, plain least AIC would find growth in a
 * constant cost one time in eight (one high tuple at the largest size
 * is enough for n^3). On a tie the simpler model, the named classes
 * before the power law. *order: its order. FIT_NONE when none fits. */
static enum fit_class choose(const struct fit_model *m, const double *e,
			     enum fit_class *order)
{
	enum fit_class best_of[FIT_NAMED], least = FIT_NONE;

	for (enum fit_class o = 0; o < FIT_NAMED; o++)
		best_of[o] = FIT_NONE;
	for (enum fit_class c = 0; c < FIT_NMODELS; c++) {
		enum fit_class o;

		if (!m[c].ok)
			continue;
		o = order_of(m, e, c);
		if (best_of[o] == FIT_NONE || m[c].aic < m[best_of[o]].aic)
			best_of[o] = c;
		if (least == FIT_NONE || m[c].aic < m[least].aic)
			least = c;
	}
	for (enum fit_class o = 0; least != FIT_NONE && o < FIT_NAMED; o++)
		if (best_of[o] != FIT_NONE &&
		    m[best_of[o]].aic <= m[least].aic + FIT_AIC_MARGIN) {
			*order = o;
			return best_of[o];
		}
	*order = FIT_NONE;
	return FIT_NONE;
}

/* The best model whose order is not the winner's: how far the nearest
 * other growth class is. */
static void choose_runner_up(struct fit_result *r)
{
	r->runner_up = FIT_NONE;
	r->daic = INFINITY;
	for (enum fit_class c = 0; c < FIT_NMODELS; c++) {
		if (!r->m[c].ok || c == r->best ||
		    order_of(r->m, r->exp, c) == r->order)
			continue;
		if (r->runner_up == FIT_NONE ||
		    r->m[c].aic < r->m[r->runner_up].aic)
			r->runner_up = c;
	}
	if (r->runner_up != FIT_NONE)
		r->daic = r->m[r->runner_up].aic - r->m[r->best].aic;
}

/* xorshift64*: the same sequence for the same seed. */
static uint64_t next_random(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* The share of FIT_RESAMPLES resamples of the tuples (drawn with
 * replacement, as many as there are) whose chosen model has the same
 * order as r's: how much the answer rests on a few tuples. */
static int bootstrap(const struct points *p, struct fit_result *r)
{
	struct fit_model m[FIT_NMODELS];
	double *mult = malloc(p->n * sizeof(*mult));
	uint64_t seed = FIT_SEED;
	unsigned same = 0;

	if (!mult)
		return -ENOMEM;
	for (unsigned k = 0; k < FIT_RESAMPLES; k++) {
		enum fit_class best, order;

		memset(mult, 0, p->n * sizeof(*mult));
		for (size_t i = 0; i < p->n; i++)
			mult[next_random(&seed) % p->n] += 1;
		fit_models(p, mult, m);
		best = choose(m, r->exp, &order);
		if (best != FIT_NONE && order == r->order)
			same++;
	}
	free(mult);
	r->confidence = (double)same / FIT_RESAMPLES;
	return 0;
}

static void free_points(struct points *p)
{
	free(p->x);
	free(p->y);
	free(p->lx);
	free(p->ly);
}

/* The tuples' mean size and mean cost. Sizes below 1 (log n is not
 * defined at 0) and costs of 0 (no relative error) are left out and
 * counted. */
/* A tuple's cost per call: the mean, but with 3 calls or more, the mean
 * of all but the slowest. One call preempted, or the first probe hit in a
 * process (about 100 us more), is an outlier of several times the rest
 * that the mean alone would carry into the fit. */
static double tuple_cost(const struct size_tuple *t)
{
	if (t->calls >= 3 && t->sum >= t->max)
		return (double)(t->sum - t->max) / (double)(t->calls - 1);
	return (double)t->sum / (double)t->calls;
}

static int collect(const struct size_func *f, struct points *p,
		   struct fit_result *r)
{
	size_t cap = f->n ? f->n : 1;

	p->x = malloc(cap * sizeof(double));
	p->y = malloc(cap * sizeof(double));
	p->lx = malloc(cap * sizeof(double));
	p->ly = malloc(cap * sizeof(double));
	if (!p->x || !p->y || !p->lx || !p->ly)
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++) {
		const struct size_tuple *t = &f->t[i];
		double x, y;

		if (!t->calls)
			continue;
		x = (double)t->size_sum / (double)t->calls;
		y = tuple_cost(t);
		if (!(x >= 1) || !(y > 0)) {
			r->nleft++;
			continue;
		}
		p->x[p->n] = x;
		p->y[p->n] = y;
		p->lx[p->n] = log(x);
		p->ly[p->n] = log(y);
		if (!p->n || x < r->min_n)
			r->min_n = x;
		if (!p->n || x > r->max_n)
			r->max_n = x;
		p->n++;
	}
	r->npoints = p->n;
	return 0;
}

/* false, with why, when the points cannot tell the classes apart. */
static bool enough(const struct size_func *f, struct fit_result *r)
{
	char left[80] = "";

	if (r->nleft)
		snprintf(left, sizeof(left), " (%zu of size 0 or cost 0 left "
			 "out)", r->nleft);
	if (!f->n) {
		snprintf(r->why, sizeof(r->why), "no calls measured");
		return false;
	}
	if (r->npoints < FIT_MIN_SIZES) {
		snprintf(r->why, sizeof(r->why), "only %zu distinct size%s%s, "
			 "at least %d are needed", r->npoints,
			 r->npoints == 1 ? "" : "s", left, FIT_MIN_SIZES);
		return false;
	}
	if (r->max_n / r->min_n < FIT_MIN_RANGE) {
		snprintf(r->why, sizeof(r->why), "the sizes span only %.0f..%.0f"
			 "%s, less than one decade (max/min must be at least "
			 "%.0f)", r->min_n, r->max_n, left, FIT_MIN_RANGE);
		return false;
	}
	return true;
}

int fit__func(const struct size_func *f, struct fit_result *r)
{
	struct points p = { 0 };
	int err;

	memset(r, 0, sizeof(*r));
	r->best = r->order = r->runner_up = FIT_NONE;
	r->daic = INFINITY;
	err = collect(f, &p, r);
	if (err || !enough(f, r))
		goto out;
	for (enum fit_class c = 0; c < FIT_NAMED; c++)
		r->exp[c] = class_exponent(&p, c);
	fit_models(&p, NULL, r->m);
	r->best = choose(r->m, r->exp, &r->order);
	if (r->best == FIT_NONE) {
		snprintf(r->why, sizeof(r->why), "no model could be fitted");
		goto out;
	}
	choose_runner_up(r);
	err = bootstrap(&p, r);
	r->classified = !err;
out:
	free_points(&p);
	return err;
}

double fit__eval(const struct fit_result *r, enum fit_class c, double n)
{
	const struct fit_model *m = &r->m[c];

	if (c == FIT_POWER)
		return m->a * pow(n, m->b);
	return m->a + m->b * (c == FIT_1 ? 0 : feature(c, n));
}

const char *fit__class_name(enum fit_class c)
{
	return c < FIT_NAMED ? class_names[c] : NULL;
}

const char *fit__class_text(const struct fit_result *r, enum fit_class c,
			    char *buf, size_t len)
{
	if (c == FIT_POWER)
		snprintf(buf, len, "n^%.2f", r->m[FIT_POWER].b);
	else
		snprintf(buf, len, "%s", c < FIT_NAMED ? class_names[c] : "-");
	return buf;
}

/* A coefficient without spaces or a '+' that would read as a term:
 * 1500, 14.5, 0.51, 2.3e-05, 1.2e15. */
static void coef_text(double v, char *buf, size_t len)
{
	char *plus;

	if (fabs(v) >= 1e15)
		snprintf(buf, len, "%.2e", v);
	else if (fabs(v) >= 100)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.3g", v);
	plus = strchr(buf, '+');
	if (plus)
		memmove(plus, plus + 1, strlen(plus));
}

const char *fit__formula(const struct fit_result *r, enum fit_class c,
			 char *buf, size_t len)
{
	static const char *const term[FIT_NAMED] = {
		"", "*ln(n)", "*n", "*n*ln(n)", "*n^2", "*n^3",
	};
	const struct fit_model *m = &r->m[c];
	char a[32], b[32];

	coef_text(m->a, a, sizeof(a));
	coef_text(m->b, b, sizeof(b));
	if (c == FIT_POWER)
		snprintf(buf, len, "%s*n^%.2f", a, m->b);
	else if (c == FIT_1)
		snprintf(buf, len, "%s", a);
	else if (c < FIT_NAMED && m->a == 0)
		snprintf(buf, len, "%s%s", b, term[c]);
	else if (c < FIT_NAMED)
		snprintf(buf, len, "%s+%s%s", a, b, term[c]);
	else
		snprintf(buf, len, "-");
	return buf;
}

int fit__parse_class(const char *s, enum fit_class *c)
{
	static const struct { const char *text; enum fit_class c; } forms[] = {
		{ "1", FIT_1 }, { "logn", FIT_LOG_N }, { "n", FIT_N },
		{ "nlogn", FIT_N_LOG_N }, { "n^2", FIT_N2 }, { "n2", FIT_N2 },
		{ "n\xc2\xb2", FIT_N2 }, { "n^3", FIT_N3 }, { "n3", FIT_N3 },
		{ "n\xc2\xb3", FIT_N3 },
	};
	char norm[32], *o = norm;
	size_t len;

	if (!s)
		return -EINVAL;
	for (; *s; s++) {
		if (isspace((unsigned char)*s) || *s == '_' || *s == '*')
			continue;
		if ((size_t)(o - norm) >= sizeof(norm) - 1)
			return -EINVAL;
		*o++ = (char)tolower((unsigned char)*s);
	}
	*o = '\0';
	/* O(...) around it, and log(n) for log n */
	len = strlen(norm);
	if (len > 3 && norm[0] == 'o' && norm[1] == '(' && norm[len - 1] == ')') {
		memmove(norm, norm + 2, len - 3);
		norm[len - 3] = '\0';
	}
	for (char *p; (p = strstr(norm, "log(n)"));) {
		p[3] = 'n';
		memmove(p + 4, p + 6, strlen(p + 6) + 1);
	}
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
		if (!strcmp(norm, forms[i].text)) {
			*c = forms[i].c;
			return 0;
		}
	return -EINVAL;
}

/* Worst growth first: order, then the order's coefficient; then those
 * not classified, by name. */
static int by_growth(const void *a, const void *b, void *arg)
{
	const struct sizefits *s = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct fit_result *x = &s->r[i], *y = &s->r[j];

	if (x->classified != y->classified)
		return x->classified ? -1 : 1;
	if (x->classified && x->order != y->order)
		return x->order > y->order ? -1 : 1;
	if (x->classified) {
		double bx = x->m[x->order].ok ? x->m[x->order].b : 0;
		double by = y->m[y->order].ok ? y->m[y->order].b : 0;

		if (bx != by)
			return bx > by ? -1 : 1;
	}
	return strcmp(s->t->funcs[i].name, s->t->funcs[j].name);
}

int fit__table(struct sizefits *s, const struct sizetab *t)
{
	size_t n = t->nfuncs ? t->nfuncs : 1;

	*s = (struct sizefits){ .t = t };
	s->r = calloc(n, sizeof(*s->r));
	s->rank = calloc(n, sizeof(*s->rank));
	if (!s->r || !s->rank)
		goto nomem;
	for (size_t i = 0; i < t->nfuncs; i++) {
		if (fit__func(&t->funcs[i], &s->r[i]))
			goto nomem;
		s->rank[i] = i;
	}
	sort__array_r(s->rank, t->nfuncs, sizeof(*s->rank), by_growth, s);
	return 0;
nomem:
	fit__table_free(s);
	return -ENOMEM;
}

void fit__table_free(struct sizefits *s)
{
	free(s->r);
	free(s->rank);
	*s = (struct sizefits){ 0 };
}
