/* Counters as the profile's comments and the summary print them: each as
 * "NUMBER TEXT", the text from its stats struct's X-macro list
 * (util/counter.h), so no line spells out a counter's meaning again.
 *
 * A line is a title and a list of references to counters, each joined to
 * the one before: ", " (COUNTER), inside parentheses after the last
 * counter that is not itself inside them (COUNTER_SUB), or as a new part,
 * "; LABEL: " (COUNTER_PART). Which counters a line shows and in what
 * order is the line's; what each says is its list's.
 *
 * A line of problems shows only the counters that are not zero, each on
 * its own, away from the line that gives its text a context: a reference
 * may add words before and after its list's text (COUNTER_WITH). */
#ifndef TAGPROF_COUNTERS_H
#define TAGPROF_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The stats structs, a group of counters each. */
enum counter_group {
	CG_TP,		/* struct tp_stats: the BPF programs' */
	CG_CAPTURE,	/* struct capture_stats: the samples the agent got */
	CG_PROCTABLE,	/* struct proctable_stats */
	CG_DEBUGINFO,	/* struct debuginfo_stats */
	CG_SYMBOLIZER,	/* struct symbolizer_stats */
	CG_KSYMBOLIZER,	/* struct ksymbolizer_stats */
	CG_TARGETFILE,	/* struct targetfile_stats */
	CG_CTXWATCH,	/* struct ctxwatch_stats */
	CG_LABELS,	/* struct labels_stats */
	CG_UNWIND,	/* struct unwind_stats */
	CG_CODEMAP,	/* struct codemap_stats */
	CG_COUNT,
};

/* Each group's struct, for COUNTER() and the others below: where they are
 * used, the struct must be complete (its header included). */
#define CG_TYPE_TP		struct tp_stats
#define CG_TYPE_CAPTURE		struct capture_stats
#define CG_TYPE_PROCTABLE	struct proctable_stats
#define CG_TYPE_DEBUGINFO	struct debuginfo_stats
#define CG_TYPE_SYMBOLIZER	struct symbolizer_stats
#define CG_TYPE_KSYMBOLIZER	struct ksymbolizer_stats
#define CG_TYPE_TARGETFILE	struct targetfile_stats
#define CG_TYPE_CTXWATCH	struct ctxwatch_stats
#define CG_TYPE_LABELS		struct labels_stats
#define CG_TYPE_UNWIND		struct unwind_stats
#define CG_TYPE_CODEMAP		struct codemap_stats

/* One counter, as its list declares it. */
struct counter_def {
	const char *name;	/* the field's */
	const char *text;	/* shown after the number */
	bool kib;		/* bytes, shown as "N KiB TEXT" */
};

/* A group's counters in the order of its list, n of them: the i-th is the
 * struct's i-th uint64_t. */
const struct counter_def *counters__group(enum counter_group g, size_t *n);

enum counter_join {
	COUNTER_JOIN_NEXT,	/* ", " */
	COUNTER_JOIN_IN,	/* " (" or, inside the parentheses, ", " */
	COUNTER_JOIN_PART,	/* "; " and the label, if any, and ": " */
};

/* Where a line shows a counter. */
struct counter_ref {
	enum counter_group group;
	enum counter_join join;
	size_t offset;		/* of the field in the group's struct */
	const char *label;	/* COUNTER_JOIN_PART: NULL or what the part is */
	/* NULL or words around the list's text: "N BEFORE TEXT AFTER" */
	const char *before, *after;
};

#define COUNTER_REF_(g, f, join, label)					\
	{ CG_##g, join, offsetof(CG_TYPE_##g, f), label, NULL, NULL }
#define COUNTER(g, f)		COUNTER_REF_(g, f, COUNTER_JOIN_NEXT, NULL)
#define COUNTER_SUB(g, f)	COUNTER_REF_(g, f, COUNTER_JOIN_IN, NULL)
#define COUNTER_PART(label, g, f) COUNTER_REF_(g, f, COUNTER_JOIN_PART, label)
#define COUNTER_WITH(before, g, f, after)				\
	{ CG_##g, COUNTER_JOIN_NEXT, offsetof(CG_TYPE_##g, f), NULL,	\
	  before, after }

struct counter_line {
	const struct counter_ref *refs;
	size_t n;
	/* Zero counters are left out, with their separators, and the
	 * counters inside the parentheses of one left out. */
	bool nonzero;
};
#define COUNTER_LINE(refs) { refs, sizeof(refs) / sizeof((refs)[0]), false }
#define COUNTER_LINE_NONZERO(refs)					\
	{ refs, sizeof(refs) / sizeof((refs)[0]), true }

/* Where the counters are read: each group's struct (NULL reads 0s). */
struct counter_values {
	const void *group[CG_COUNT];
};

/* Renders l into buf: "TITLE: " unless title is NULL, then its counters
 * (those shown: see counter_line). Returns what snprintf would: the
 * length the whole line takes. */
int counters__render(char *buf, size_t len, const char *title,
		     const struct counter_line *l,
		     const struct counter_values *v);

/* The sum of l's counts (sizes left out): not 0 when the line has
 * something to say. */
uint64_t counters__sum(const struct counter_line *l,
		       const struct counter_values *v);

#endif
