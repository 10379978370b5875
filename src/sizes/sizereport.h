/* What tagprof sizes and tagprof report sizes show of a table of tuples
 * (sizetab.h): the fits (fit.h) as a ranked text summary and an HTML page
 * (sizehtml.h), and the --assert checks a CI job relies on. */
#ifndef TAGPROF_SIZEREPORT_H
#define TAGPROF_SIZEREPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sizes/fit.h"
#include "sizes/sizetab.h"
#include "util/strbuf.h"

struct sizereport_opts {
	const char *html_path;		/* NULL: no HTML */
	const char *const *asserts;	/* --assert expressions */
	size_t nasserts;
	FILE *text;			/* the summary goes here (stdout), NULL: none */
	const char *title;		/* the HTML's heading; NULL: none */
	const char *prog;		/* messages' prefix; NULL: "tagprof" */
};

/* Fits every function of t, prints the ranked summary, writes the HTML,
 * checks the assertions. Returns 0; 1 when an assertion fails (each said
 * on stderr); 2 when an assertion is malformed; -errno when the HTML
 * cannot be written (message in err). The summary and the page are
 * written whatever the assertions say. */
int sizereport__run(const struct sizetab *t, const struct sizereport_opts *o,
		    char *err, size_t errlen);

/* 0 when expr is a well-formed assertion, else -EINVAL with why in err.
 * The forms: FUNC<=CLASS (the fitted order is CLASS or slower) and
 * FUNC<CLASS (slower), CLASS as fit__parse_class reads it. */
int sizereport__check_assert(const char *expr, char *err, size_t errlen);

/* The ranked summary (docs/sizes.md): one line on how the costs were
 * measured, the header
 *	function order class fit dAIC runner_up confidence sizes range calls
 * and a line per function; one not classified has '-' from order to
 * confidence and a second line "  FUNC: not classified: WHY". */
void sizereport__text(const struct sizefits *s, struct strbuf *b);

/* How the costs were measured and what was lost, as one sentence (the
 * summary's first line, the page's): the cost unit, the probes, the rate
 * guard's sampling, dropped tuples, skipped calls and size faults. */
void sizereport__measured(const struct sizetab *t, struct strbuf *b);

#endif
