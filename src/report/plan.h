/* `tagprof report plan`: where the samples went among the components that
 * generated the running code (issue #14). A query compiles into operators,
 * an operator into pipelines; each sample carries the label of each level
 * (query=q17, operator=HashJoin#3, pipeline=2). The levels, outermost
 * first, make a tree: a sample's value goes to the path of its values,
 * down to the first level it lacks, and is that node's exclusive value. A
 * sample without the outermost level is "(unattributed)", at the top.
 *
 * The value is the sample type "samples" where a profile has one (what
 * report timeline counts: tagprof's first column, pprof's cpu profiles'
 * too), else the first sample type. Shares are of the value of every
 * sample kept, attributed or not. Each process's samples, and how many of
 * them are attributed, are counted by their process and pid labels. */
#ifndef TAGPROF_PLAN_H
#define TAGPROF_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/merge.h"
#include "report/pprofin.h"
#include "util/strbuf.h"

#define PLAN_NONE		UINT32_MAX
#define PLAN_MAX_LEVELS		16
/* The comment that names the levels, outermost first, keys separated by
 * " > ": "code levels: query > operator > pipeline". */
#define PLAN_LEVELS_COMMENT	"code levels:"
#define PLAN_UNATTRIBUTED	"(unattributed)"

struct plan_levels {
	char *key[PLAN_MAX_LEVELS];
	size_t n;
};

/* s, keys separated by sep with blanks around them trimmed, into l (the
 * keys copied). 0; -EINVAL with why in err (an empty key, one given
 * twice, more than PLAN_MAX_LEVELS); -ENOMEM. */
int plan_levels__parse(struct plan_levels *l, const char *s, char sep,
		       char *err, size_t errlen);

/* The levels in's first "code levels:" comment names. 0; -ENOENT when it
 * has none; as plan_levels__parse for a bad one. */
int plan_levels__from_comment(struct plan_levels *l, const struct pprofin *in,
			      char *err, size_t errlen);

bool plan_levels__equal(const struct plan_levels *a,
			const struct plan_levels *b);
/* "query > operator > pipeline" into b. */
void plan_levels__print(const struct plan_levels *l, struct strbuf *b);
void plan_levels__free(struct plan_levels *l);	/* accepts a zeroed one */

struct plan_node {
	uint32_t parent;	/* PLAN_NONE: the root (every sample) */
	int32_t level;		/* index into the levels; -1: root or
				 * unattributed */
	uint32_t value;		/* string: the label's value */
	uint32_t child, next;	/* first child and next sibling, by inclusive
				 * value (plan__sort); PLAN_NONE: none */
	uint32_t depth;		/* 0: the top (a child of the root) */
	int64_t incl, excl;
};

struct plan_proc {
	uint64_t pid;		/* 0: no pid label */
	uint32_t name;		/* string: the process label, "" if none */
	int64_t samples, attributed;
};

struct plan {
	struct plan_levels levels;
	char **str;
	size_t nstr, capstr;
	struct plan_node *nodes;	/* [0]: the root */
	size_t nnodes, capnodes;
	struct plan_proc *procs;	/* by attributed value after plan__sort */
	size_t nprocs, capprocs;
	uint32_t type, unit;		/* strings: the value's sample type */
	bool typed;			/* the type is set (an input had one) */
	struct hashmap *str_ix, *node_ix, *proc_ix;
	struct merge_counts counts;
};

/* A plan over these levels (copied; at least one). NULL on ENOMEM. */
struct plan *plan__new(const struct plan_levels *levels);
void plan__free(struct plan *p);	/* accepts NULL */

/* Adds in's samples that cut keeps. The first input with sample types
 * picks the value's type; another without that type is refused (-EINVAL,
 * why in err). 0, or -errno. */
int plan__add(struct plan *p, const struct pprofin *in,
	      const struct merge_cut *cut, char *err, size_t errlen);

/* Children and processes in their order: by inclusive (attributed) value
 * descending, then by name. After the last plan__add. */
int plan__sort(struct plan *p);

static inline const char *plan__str(const struct plan *p, uint32_t i)
{
	return i < p->nstr ? p->str[i] : "";
}

/* The value of every sample kept. */
static inline int64_t plan__total(const struct plan *p)
{
	return p->nodes[0].incl;
}

struct plan_opts {
	const char *title;		/* what was read */
	const char *levels_from;	/* where the levels came from */
};

/* The sorted plan as an indented text tree, or as one self-contained HTML
 * page (no script, nothing fetched), into out. 0, or -ENOMEM. */
int plan__write_text(const struct plan *p, const struct plan_opts *o,
		     struct strbuf *out);
int plan__write_html(const struct plan *p, const struct plan_opts *o,
		     struct strbuf *out);

#endif
