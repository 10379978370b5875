// SPDX-License-Identifier: BSD-2-Clause
/* Every stats struct's list as a table, and lines rendered from them. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "capture/capture.h"
#include "capture/counters.h"
#include "capture/labels.h"
#include "kernel/ksymbolizer.h"
#include "proc/codemap.h"
#include "proc/ctxwatch.h"
#include "proc/proctable.h"
#include "proc/targetfile.h"
#include "sample_event.h"
#include "sym/debuginfo.h"
#include "sym/symbolizer.h"
#include "unwind/unwind.h"

/* The tables, one per list. A counter's offset in its struct is its
 * place in the list: the struct is generated from the list, every field
 * 64 bits, as the asserts below keep it. */
#define COUNT(field, text)	{ #field, text, false },
#define KIB(field, text)	{ #field, text, true },

static const struct counter_def tp[] = { TP_STATS_COUNTERS(COUNT) };
static const struct counter_def capture[] = { CAPTURE_COUNTERS(COUNT) };
static const struct counter_def proctable[] = {
	PROCTABLE_COUNTERS(COUNT, KIB)
};
static const struct counter_def debuginfo[] = { DEBUGINFO_COUNTERS(COUNT) };
static const struct counter_def symbolizer[] = { SYMBOLIZER_COUNTERS(COUNT) };
static const struct counter_def ksymbolizer[] = {
	KSYMBOLIZER_COUNTERS(COUNT)
};
static const struct counter_def targetfile[] = { TARGETFILE_COUNTERS(COUNT) };
static const struct counter_def ctxwatch[] = { CTXWATCH_COUNTERS(COUNT) };
static const struct counter_def labels[] = { LABELS_COUNTERS(COUNT) };
static const struct counter_def unwind[] = { UNWIND_COUNTERS(COUNT) };
static const struct counter_def codemap[] = { CODEMAP_COUNTERS(COUNT) };

#define ALL_COUNTS(type, defs)						\
	_Static_assert(sizeof(type) == sizeof(defs) /			\
		       sizeof((defs)[0]) * sizeof(uint64_t),		\
		       #type " is its list")
ALL_COUNTS(CG_TYPE_TP, tp);
ALL_COUNTS(CG_TYPE_CAPTURE, capture);
ALL_COUNTS(CG_TYPE_DEBUGINFO, debuginfo);
ALL_COUNTS(CG_TYPE_SYMBOLIZER, symbolizer);
ALL_COUNTS(CG_TYPE_KSYMBOLIZER, ksymbolizer);
ALL_COUNTS(CG_TYPE_TARGETFILE, targetfile);
ALL_COUNTS(CG_TYPE_CTXWATCH, ctxwatch);
ALL_COUNTS(CG_TYPE_LABELS, labels);
ALL_COUNTS(CG_TYPE_UNWIND, unwind);
ALL_COUNTS(CG_TYPE_CODEMAP, codemap);
/* proctable_stats: its list, then its debuginfo_stats */
_Static_assert(offsetof(CG_TYPE_PROCTABLE, sym) ==
	       sizeof(proctable) / sizeof(proctable[0]) * sizeof(uint64_t),
	       "proctable_stats is its list");

#define GROUP(defs)	{ defs, sizeof(defs) / sizeof((defs)[0]) }

static const struct {
	const struct counter_def *defs;
	size_t n;
} groups[CG_COUNT] = {
	[CG_TP] = GROUP(tp),
	[CG_CAPTURE] = GROUP(capture),
	[CG_PROCTABLE] = GROUP(proctable),
	[CG_DEBUGINFO] = GROUP(debuginfo),
	[CG_SYMBOLIZER] = GROUP(symbolizer),
	[CG_KSYMBOLIZER] = GROUP(ksymbolizer),
	[CG_TARGETFILE] = GROUP(targetfile),
	[CG_CTXWATCH] = GROUP(ctxwatch),
	[CG_LABELS] = GROUP(labels),
	[CG_UNWIND] = GROUP(unwind),
	[CG_CODEMAP] = GROUP(codemap),
};

const struct counter_def *counters__group(enum counter_group g, size_t *n)
{
	*n = groups[g].n;
	return groups[g].defs;
}

static const struct counter_def *def_of(const struct counter_ref *r)
{
	size_t i = r->offset / sizeof(uint64_t);

	return i < groups[r->group].n ? &groups[r->group].defs[i] : NULL;
}

static uint64_t value_of(const struct counter_ref *r,
			 const struct counter_values *v)
{
	const char *base = v->group[r->group];
	uint64_t n = 0;

	/* memcpy: tp_stats' fields are __u64, the others' uint64_t */
	if (base)
		memcpy(&n, base + r->offset, sizeof(n));
	return n;
}

/* A line being written: what it has taken so far, even past the buffer. */
struct out {
	char *buf;
	size_t len;
	int used;
};

static void put(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	size_t at = (size_t)o->used < o->len ? (size_t)o->used : o->len;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->len ? o->buf + at : NULL, o->len - at, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->used += n;
}

/* One counter: its number, then its words and its list's text. */
static void put_counter(struct out *o, const struct counter_ref *r,
			uint64_t n)
{
	const struct counter_def *d = def_of(r);

	if (d && d->kib)
		put(o, "%" PRIu64 " KiB", n >> 10);
	else
		put(o, "%" PRIu64, n);
	if (r->before)
		put(o, " %s", r->before);
	/* "?": a reference to no field of a list */
	put(o, " %s", d ? d->text : "?");
	if (r->after)
		put(o, " %s", r->after);
}

int counters__render(char *buf, size_t len, const char *title,
		     const struct counter_line *l,
		     const struct counter_values *v)
{
	struct out o = { buf, len, 0 };
	bool in = false;	/* inside a counter's parentheses */
	bool outer = false;	/* the counter they follow was shown */
	bool part = false;	/* the current part has shown a counter */
	const char *label = NULL;	/* the current part's */
	size_t shown = 0;

	if (len)
		*buf = '\0';
	if (title)
		put(&o, "%s: ", title);
	for (size_t i = 0; i < l->n; i++) {
		const struct counter_ref *r = &l->refs[i];
		uint64_t n = value_of(r, v);

		if (r->join == COUNTER_JOIN_PART) {
			label = r->label;
			part = false;
		}
		if (l->nonzero &&
		    (!n || (r->join == COUNTER_JOIN_IN && !outer))) {
			outer = outer && r->join == COUNTER_JOIN_IN;
			continue;
		}
		if (r->join != COUNTER_JOIN_IN)
			outer = true;
		if (in && r->join != COUNTER_JOIN_IN) {
			put(&o, ")");
			in = false;
		}
		if (!part) {	/* the first counter of its part */
			if (shown)
				put(&o, "; ");
			if (label)
				put(&o, "%s: ", label);
			part = true;
		} else if (r->join == COUNTER_JOIN_NEXT) {
			put(&o, ", ");
		}
		if (r->join == COUNTER_JOIN_IN) {
			put(&o, in ? ", " : " (");
			in = true;
		}
		put_counter(&o, r, n);
		shown++;
	}
	if (in)
		put(&o, ")");
	return o.used;
}

uint64_t counters__sum(const struct counter_line *l,
		       const struct counter_values *v)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct counter_def *d = def_of(&l->refs[i]);

		if (d && !d->kib)
			sum += value_of(&l->refs[i], v);
	}
	return sum;
}
