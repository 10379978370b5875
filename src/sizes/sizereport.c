// SPDX-License-Identifier: BSD-2-Clause
/* The fits of a table shown and checked (sizereport.h): the ranked text
 * summary, the HTML page through sizehtml.c, and --assert. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "out/atomicfile.h"
#include "sizes/sizehtml.h"
#include "sizes/sizereport.h"
#include "util/errbuf.h"

/* ---- the text summary ---- */

enum { C_FUNC, C_ORDER, C_CLASS, C_FIT, C_DAIC, C_RUNNER, C_CONF, C_SIZES,
       C_RANGE, C_CALLS, NCOLS };
#define CELL	96

static const char *const col_names[NCOLS] = {
	"function", "order", "class", "fit", "dAIC", "runner_up", "confidence",
	"sizes", "range", "calls",
};

/* A size for the range column: whole, as the tuples' mean sizes are for
 * exact sizes. */
static void size_text(double v, char *buf, size_t len)
{
	snprintf(buf, len, "%.0f", v);
}

/* The columns after the name of function i. */
static void row_cells(const struct sizefits *s, size_t i, char c[NCOLS][CELL])
{
	const struct size_func *f = &s->t->funcs[i];
	const struct fit_result *r = &s->r[i];
	double lo = INFINITY, hi = 0;
	uint64_t calls = 0;
	char a[32], b[32], fit[64];

	for (size_t k = 0; k < f->n; k++) {
		double n = (double)f->t[k].size_sum / (double)f->t[k].calls;

		calls += f->t[k].calls;
		lo = n < lo ? n : lo;
		hi = n > hi ? n : hi;
	}
	for (int k = C_ORDER; k <= C_CONF; k++)
		snprintf(c[k], CELL, "-");
	if (r->classified) {
		snprintf(c[C_ORDER], CELL, "%s", fit__class_name(r->order));
		fit__class_text(r, r->best, c[C_CLASS], CELL);
		snprintf(c[C_FIT], CELL, "\"%s\"",
			 fit__formula(r, r->best, fit, sizeof(fit)));
		if (r->runner_up != FIT_NONE) {
			snprintf(c[C_DAIC], CELL, "%.1f", r->daic);
			fit__class_text(r, r->runner_up, c[C_RUNNER], CELL);
		}
		snprintf(c[C_CONF], CELL, "%.2f", r->confidence);
	}
	snprintf(c[C_SIZES], CELL, "%zu", f->n);
	if (f->n) {
		size_text(lo, a, sizeof(a));
		size_text(hi, b, sizeof(b));
		snprintf(c[C_RANGE], CELL, "%s..%s", a, b);
	} else {
		snprintf(c[C_RANGE], CELL, "-");
	}
	snprintf(c[C_CALLS], CELL, "%" PRIu64, calls);
}

void sizereport__measured(const struct sizetab *t, struct strbuf *b)
{
	uint64_t skipped = 0, faults = 0;

	for (size_t i = 0; i < t->nfuncs; i++) {
		skipped += t->funcs[i].calls_skipped;
		faults += t->funcs[i].size_faults;
	}
	strbuf__printf(b, "cost in %s per call; probes: %s; ",
		       t->cost_unit && *t->cost_unit ? t->cost_unit : "ns",
		       t->probe_mode && *t->probe_mode ? t->probe_mode :
							 "unknown");
	if (t->sample_every > 1)
		strbuf__printf(b, "rate guard: 1 call in %" PRIu64 " measured",
			       t->sample_every);
	else
		strbuf__puts(b, "every call measured");
	if (t->tuples_dropped)
		strbuf__printf(b, "; %" PRIu64 " tuples dropped (the maps were "
			       "full)", t->tuples_dropped);
	if (skipped)
		strbuf__printf(b, "; %" PRIu64 " calls skipped (nested deeper "
			       "than the shadow stack)", skipped);
	if (faults)
		strbuf__printf(b, "; %" PRIu64 " size faults (the size could "
			       "not be read, calls not kept)", faults);
}

static void pad(struct strbuf *b, size_t have, size_t want)
{
	for (; have < want; have++)
		strbuf__add(b, " ", 1);
}

static void print_row(struct strbuf *b, const char *name,
		      char c[NCOLS][CELL], const size_t *w)
{
	strbuf__puts(b, name);
	for (int k = C_ORDER; k < NCOLS; k++) {
		pad(b, strlen(k == C_ORDER ? name : c[k - 1]), w[k - 1] + 2);
		strbuf__puts(b, c[k]);
	}
	strbuf__puts(b, "\n");
}

void sizereport__text(const struct sizefits *s, struct strbuf *b)
{
	const struct sizetab *t = s->t;
	char c[NCOLS][CELL];
	size_t w[NCOLS];

	strbuf__puts(b, "# ");
	sizereport__measured(t, b);
	strbuf__puts(b, "\n");
	for (int k = 0; k < NCOLS; k++)
		w[k] = strlen(col_names[k]);
	for (size_t i = 0; i < t->nfuncs; i++) {
		row_cells(s, i, c);
		if (strlen(t->funcs[i].name) > w[C_FUNC])
			w[C_FUNC] = strlen(t->funcs[i].name);
		for (int k = C_ORDER; k < NCOLS; k++)
			w[k] = strlen(c[k]) > w[k] ? strlen(c[k]) : w[k];
	}
	for (int k = 0; k < NCOLS; k++)
		snprintf(c[k], CELL, "%s", col_names[k]);
	print_row(b, col_names[C_FUNC], c, w);
	for (size_t j = 0; j < t->nfuncs; j++) {
		size_t i = s->rank[j];

		row_cells(s, i, c);
		print_row(b, t->funcs[i].name, c, w);
		if (!s->r[i].classified)
			strbuf__printf(b, "  %s: not classified: %s\n",
				       t->funcs[i].name, s->r[i].why);
	}
}

/* ---- --assert ---- */

struct sizeassert {
	char func[SIZETAB_MAX_STR + 1];
	bool strict;		/* '<': below the bound, not at it */
	enum fit_class bound;
};

static char *trim(char *s)
{
	char *e = s + strlen(s);

	while (*s == ' ' || *s == '\t')
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/* FUNC<=CLASS or FUNC<CLASS. The operator is the last '<', as a class has
 * none and a C++ name may (operator<, vector<int>). */
static int parse_assert(const char *expr, struct sizeassert *a, char *err,
			size_t errlen)
{
	char buf[SIZETAB_MAX_STR + 64], *lt, *func, *cls;

	if (!expr || strlen(expr) >= sizeof(buf)) {
		errbuf__set(err, errlen, "longer than %zu bytes",
			    sizeof(buf) - 1);
		return -EINVAL;
	}
	strcpy(buf, expr);
	lt = strrchr(buf, '<');
	if (!lt) {
		errbuf__set(err, errlen, "not FUNC<=CLASS or FUNC<CLASS (e.g. "
			    "'my_sort<=n log n')");
		return -EINVAL;
	}
	a->strict = lt[1] != '=';
	cls = trim(lt + (a->strict ? 1 : 2));
	*lt = '\0';
	func = trim(buf);
	if (!*func) {
		errbuf__set(err, errlen, "no function before '%s'",
			    a->strict ? "<" : "<=");
		return -EINVAL;
	}
	if (fit__parse_class(cls, &a->bound)) {
		errbuf__set(err, errlen, "'%s' is not a class: write 1, log n, "
			    "n, n log n, n^2 or n^3", cls);
		return -EINVAL;
	}
	if (a->strict && a->bound == FIT_1) {
		errbuf__set(err, errlen, "nothing grows slower than 1: use "
			    "'<=1'");
		return -EINVAL;
	}
	snprintf(a->func, sizeof(a->func), "%s", func);
	return 0;
}

int sizereport__check_assert(const char *expr, char *err, size_t errlen)
{
	struct sizeassert a;

	return parse_assert(expr, &a, err, errlen);
}

/* The function an assertion names: by its name as given, else by the
 * symbol of a BINARY:SYMBOL name when only one has it. -ENOENT, or
 * -EEXIST when several do. */
static int find_func(const struct sizetab *t, const char *name, size_t *at)
{
	size_t n = strlen(name), found = 0;

	for (size_t i = 0; i < t->nfuncs; i++)
		if (!strcmp(t->funcs[i].name, name)) {
			*at = i;
			return 0;
		}
	for (size_t i = 0; i < t->nfuncs; i++) {
		const char *fn = t->funcs[i].name;
		size_t len = strlen(fn);

		if (len > n && fn[len - n - 1] == ':' &&
		    !strcmp(fn + len - n, name)) {
			*at = i;
			found++;
		}
	}
	return found == 1 ? 0 : found ? -EEXIST : -ENOENT;
}

static const char *class_words(enum fit_class c)
{
	static const char *const words[FIT_NAMED] = {
		"1", "log n", "n", "n log n", "n^2", "n^3",
	};

	return c < FIT_NAMED ? words[c] : "?";
}

/* 0 when the assertion holds, 1 (said why) when not. */
static int check_one(const struct sizefits *s, const char *prog,
		     const char *expr, const struct sizeassert *a)
{
	const struct fit_result *r;
	char cls[32], fit[64];
	size_t i;
	int found = find_func(s->t, a->func, &i);

	if (found) {
		fprintf(stderr, "%s: --assert '%s' failed: %s\n", prog, expr,
			found == -EEXIST ? "several functions end in that "
			"name: give BINARY:SYMBOL" : "no such function was "
			"measured");
		return 1;
	}
	r = &s->r[i];
	if (!r->classified) {
		fprintf(stderr, "%s: --assert '%s' failed: %s was not "
			"classified (%s), so the bound cannot be shown\n",
			prog, expr, s->t->funcs[i].name, r->why);
		return 1;
	}
	fit__class_text(r, r->best, cls, sizeof(cls));
	fit__formula(r, r->best, fit, sizeof(fit));
	if (a->strict ? r->order < a->bound : r->order <= a->bound) {
		fprintf(stderr, "%s: --assert '%s' holds: %s grows as %s "
			"(class %s, confidence %.2f)\n", prog, expr,
			s->t->funcs[i].name, class_words(r->order), cls,
			r->confidence);
		return 0;
	}
	fprintf(stderr, "%s: --assert '%s' failed: %s grows as %s (class %s, "
		"fit %s, confidence %.2f), %s %s\n", prog, expr,
		s->t->funcs[i].name, class_words(r->order), cls, fit,
		r->confidence, a->strict ? "not below" : "worse than",
		class_words(a->bound));
	return 1;
}

/* Every assertion: 0, 1 when one failed, 2 when one is malformed (said
 * before any is checked). */
static int check_asserts(const struct sizefits *s,
			 const struct sizereport_opts *o, const char *prog)
{
	struct sizeassert *a;
	char why[256];
	int ret = 0;

	if (!o->nasserts)
		return 0;
	a = calloc(o->nasserts, sizeof(*a));
	if (!a) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 2;
	}
	for (size_t k = 0; k < o->nasserts; k++)
		if (parse_assert(o->asserts[k], &a[k], why, sizeof(why))) {
			fprintf(stderr, "%s: --assert '%s': %s\n", prog,
				o->asserts[k], why);
			ret = 2;
		}
	/* every one is checked and said, not only up to the first failure */
	for (size_t k = 0; ret != 2 && k < o->nasserts; k++)
		if (check_one(s, prog, o->asserts[k], &a[k]))
			ret = 1;
	free(a);
	return ret;
}

static int write_text(const struct sizefits *s, FILE *out, char *err,
		      size_t errlen)
{
	struct strbuf b = { 0 };
	int ret;

	sizereport__text(s, &b);
	ret = b.err;
	if (!ret && (fwrite(b.p, 1, b.len, out) != b.len || fflush(out)))
		ret = -EIO;
	if (ret)
		errbuf__set(err, errlen, "cannot write the summary: %s",
			    strerror(-ret));
	strbuf__free(&b);
	return ret;
}

static int write_html(const struct sizefits *s, const struct sizereport_opts *o,
		      char *err, size_t errlen)
{
	struct strbuf b = { 0 };
	int ret = sizehtml__write(s, o->title, &b);

	if (!ret)
		ret = atomicfile__write(o->html_path, b.p, b.len, 0640);
	if (ret)
		errbuf__set(err, errlen, "cannot write %s: %s", o->html_path,
			    strerror(-ret));
	strbuf__free(&b);
	return ret;
}

int sizereport__run(const struct sizetab *t, const struct sizereport_opts *o,
		    char *err, size_t errlen)
{
	const char *prog = o->prog ? o->prog : "tagprof";
	struct sizefits s;
	int ret, out = 0;

	if (fit__table(&s, t)) {
		errbuf__set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (o->text)
		out = write_text(&s, o->text, err, errlen);
	if (!out && o->html_path)
		out = write_html(&s, o, err, errlen);
	ret = check_asserts(&s, o, prog);
	fit__table_free(&s);
	return out ? out : ret;
}
