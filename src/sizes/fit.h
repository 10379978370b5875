/* The growth of a function's cost with its input size (tagprof sizes,
 * issue 17): one fit per model over the tuples' mean cost at their mean
 * size, the model chosen by AIC, its growth class ("order") and a
 * bootstrap confidence. docs/sizes.md says why it is done this way. */
#ifndef TAGPROF_FIT_H
#define TAGPROF_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sizes/sizetab.h"

/* The models, by growth: cost = a + b*f(n) for the six named classes,
 * cost = a*n^b for the power law. */
enum fit_class {
	FIT_1,
	FIT_LOG_N,
	FIT_N,
	FIT_N_LOG_N,
	FIT_N2,
	FIT_N3,
	FIT_POWER,
	FIT_NMODELS,
};
#define FIT_NAMED	FIT_POWER	/* the classes before it */
#define FIT_NONE	FIT_NMODELS

/* Refusals: fewer distinct sizes, or a narrower max/min ratio. */
#define FIT_MIN_SIZES		8
#define FIT_MIN_RANGE		10.0
#define FIT_RESAMPLES		200
/* A power law's exponent k matches a named class whose own exponent over
 * the same sizes is within this (see fit__order). */
#define FIT_EXP_TOL		0.15
/* A faster-growing order is chosen only when it beats every slower one
 * by this much AIC (Burnham and Anderson: within 2, about as good). */
#define FIT_AIC_MARGIN		2.0

struct fit_model {
	bool ok;		/* fitted, and a growing class did not fall */
	double a, b;		/* see enum fit_class */
	double rss;		/* sum of squared relative residuals */
	double aic;		/* N ln(rss/N) + 2k */
};

struct fit_result {
	bool classified;
	char why[192];		/* not classified: why, in words */
	size_t npoints;		/* tuples fitted */
	size_t nleft;		/* tuples of mean size < 1 or cost 0, not fitted */
	double min_n, max_n;	/* the fitted tuples' mean sizes */
	struct fit_model m[FIT_NMODELS];
	double exp[FIT_NAMED];	/* each class's log-log slope at these sizes */
	enum fit_class best;	/* chosen by AIC */
	enum fit_class order;	/* its growth: one of the named classes */
	enum fit_class runner_up; /* best model of another order; FIT_NONE */
	double daic;		/* runner_up's AIC - best's (INFINITY: none);
				 * below 0 when a faster order fits better, by
				 * less than FIT_AIC_MARGIN */
	double confidence;	/* share of resamples whose order is order */
};

/* Fits f's tuples. Sets r->classified false, with why, when there are
 * too few sizes or too narrow a range. 0, or -ENOMEM. */
int fit__func(const struct size_func *f, struct fit_result *r);

/* cost of model c of r at size n. */
double fit__eval(const struct fit_result *r, enum fit_class c, double n);

/* "1", "log_n", "n", "n_log_n", "n^2", "n^3"; the power law as "n^K", K
 * to 2 decimals (r's exponent), into buf. */
const char *fit__class_text(const struct fit_result *r, enum fit_class c,
			    char *buf, size_t len);
/* A named class's token; NULL for the power law. */
const char *fit__class_name(enum fit_class c);
/* Model c of r as a formula without spaces, e.g. "120+0.51*n^2",
 * "1500+14.5*ln(n)", "0.8*n^1.97"; into buf. */
const char *fit__formula(const struct fit_result *r, enum fit_class c,
			 char *buf, size_t len);
/* A class as a user writes it: "n log n", "nlogn", "n_log_n", "O(n^2)",
 * "n2", "log n", "1", ... (spaces, '_' and '*' ignored, any case). 0, or
 * -EINVAL. Never the power law. */
int fit__parse_class(const char *s, enum fit_class *c);

/* Every function of a table fitted, and the order the views show them
 * in: the worst growth first (order, then its coefficient b), those not
 * classified last, by name. */
struct sizefits {
	const struct sizetab *t;
	struct fit_result *r;	/* one per function, as t->funcs */
	size_t *rank;		/* indices into t->funcs */
};

/* 0, or -ENOMEM (s is then empty). */
int fit__table(struct sizefits *s, const struct sizetab *t);
void fit__table_free(struct sizefits *s);

#endif
