// SPDX-License-Identifier: BSD-2-Clause
/* The samples as a tree of the code's components (plan.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/plan.h"
#include "util/errbuf.h"
#include "util/grow.h"
#include "util/hashmap.h"
#include "util/utf8.h"
#include "util/sort.h"

/* ---- the levels ---- */

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The key of n bytes at s, blanks trimmed, appended to l. */
static int add_key(struct plan_levels *l, const char *s, size_t n,
		   char *err, size_t errlen)
{
	while (n && blank(*s)) {
		s++;
		n--;
	}
	while (n && blank(s[n - 1]))
		n--;
	if (!n) {
		errbuf__set(err, errlen, "an empty level");
		return -EINVAL;
	}
	if (l->n == PLAN_MAX_LEVELS) {
		errbuf__set(err, errlen, "more than %d levels", PLAN_MAX_LEVELS);
		return -EINVAL;
	}
	for (size_t i = 0; i < l->n; i++)
		if (strlen(l->key[i]) == n && !memcmp(l->key[i], s, n)) {
			errbuf__set(err, errlen, "the level %s twice", l->key[i]);
			return -EINVAL;
		}
	l->key[l->n] = strndup(s, n);
	if (!l->key[l->n])
		return -ENOMEM;
	l->n++;
	return 0;
}

int plan_levels__parse(struct plan_levels *l, const char *s, char sep,
		       char *err, size_t errlen)
{
	const char *end;
	int ret;

	memset(l, 0, sizeof(*l));
	for (;;) {
		end = strchr(s, sep);
		ret = add_key(l, s, end ? (size_t)(end - s) : strlen(s), err,
			      errlen);
		if (ret) {
			plan_levels__free(l);
			return ret;
		}
		if (!end)
			return 0;
		s = end + 1;
	}
}

int plan_levels__from_comment(struct plan_levels *l, const struct pprofin *in,
			      char *err, size_t errlen)
{
	size_t n = strlen(PLAN_LEVELS_COMMENT);

	memset(l, 0, sizeof(*l));
	for (size_t i = 0; i < in->pr->n_comment; i++) {
		const char *c = pprofin__str(in, in->pr->comment[i]);

		if (!strncmp(c, PLAN_LEVELS_COMMENT, n))
			return plan_levels__parse(l, c + n, '>', err, errlen);
	}
	return -ENOENT;
}

bool plan_levels__equal(const struct plan_levels *a,
			const struct plan_levels *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->key[i], b->key[i]))
			return false;
	return true;
}

void plan_levels__print(const struct plan_levels *l, struct strbuf *b)
{
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			strbuf__puts(b, " > ");
		strbuf__puts(b, l->key[i]);
	}
}

void plan_levels__free(struct plan_levels *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->key[i]);
	memset(l, 0, sizeof(*l));
}

/* ---- building the tree ---- */

/* What names a node among its siblings. */
struct node_key {
	uint32_t parent;
	int32_t level;
	uint32_t value;
};

struct proc_key {
	uint64_t pid;
	uint32_t name;
	uint32_t pad;
};

/* s's index, added if new; PLAN_NONE on ENOMEM. */
static uint32_t intern(struct plan *p, const char *s)
{
	uint64_t v;
	char *copy;

	if (hashmap__get(p->str_ix, s, strlen(s), &v))
		return (uint32_t)v;
	if (p->nstr >= PLAN_NONE - 1 ||
	    grow__array(&p->str, &p->capstr, p->nstr + 1, sizeof(*p->str), 64))
		return PLAN_NONE;
	copy = strdup(s);
	if (!copy || hashmap__put(p->str_ix, copy, strlen(copy), p->nstr)) {
		free(copy);
		return PLAN_NONE;
	}
	p->str[p->nstr] = copy;
	return (uint32_t)p->nstr++;
}

/* The child of parent at level with this value, added if new; PLAN_NONE
 * on ENOMEM. */
static uint32_t child_of(struct plan *p, uint32_t parent, int32_t level,
			 uint32_t value)
{
	struct node_key k = { parent, level, value };
	uint64_t v;

	if (hashmap__get(p->node_ix, &k, sizeof(k), &v))
		return (uint32_t)v;
	if (p->nnodes >= PLAN_NONE - 1 ||
	    grow__array(&p->nodes, &p->capnodes, p->nnodes + 1,
			sizeof(*p->nodes), 64) ||
	    hashmap__put(p->node_ix, &k, sizeof(k), p->nnodes))
		return PLAN_NONE;
	p->nodes[p->nnodes] = (struct plan_node){
		.parent = parent, .level = level, .value = value,
		.child = PLAN_NONE, .next = PLAN_NONE,
		.depth = parent ? p->nodes[parent].depth + 1 : 0,
	};
	return (uint32_t)p->nnodes++;
}

static struct plan_proc *proc_of(struct plan *p, uint64_t pid, uint32_t name)
{
	struct proc_key k = { .pid = pid, .name = name };
	uint64_t v;

	if (hashmap__get(p->proc_ix, &k, sizeof(k), &v))
		return &p->procs[v];
	if (grow__array(&p->procs, &p->capprocs, p->nprocs + 1,
			sizeof(*p->procs), 16) ||
	    hashmap__put(p->proc_ix, &k, sizeof(k), p->nprocs))
		return NULL;
	p->procs[p->nprocs] = (struct plan_proc){ .pid = pid, .name = name };
	return &p->procs[p->nprocs++];
}

struct plan *plan__new(const struct plan_levels *levels)
{
	struct plan *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->str_ix = hashmap__new(0);
	p->node_ix = hashmap__new(0);
	p->proc_ix = hashmap__new(0);
	if (!p->str_ix || !p->node_ix || !p->proc_ix ||
	    grow__array(&p->nodes, &p->capnodes, 1, sizeof(*p->nodes), 64))
		goto fail;
	p->nodes[p->nnodes++] = (struct plan_node){
		.parent = PLAN_NONE, .level = -1, .child = PLAN_NONE,
		.next = PLAN_NONE };
	/* string 0 is "": the root's value, a process without a name; the
	 * value's type until an input has one */
	if (intern(p, "") == PLAN_NONE ||
	    (p->type = intern(p, "samples")) == PLAN_NONE ||
	    (p->unit = intern(p, "count")) == PLAN_NONE)
		goto fail;
	for (size_t i = 0; i < levels->n; i++) {
		p->levels.key[i] = strdup(levels->key[i]);
		if (!p->levels.key[i])
			goto fail;
		p->levels.n++;
	}
	return p;
fail:
	plan__free(p);
	return NULL;
}

void plan__free(struct plan *p)
{
	if (!p)
		return;
	plan_levels__free(&p->levels);
	for (size_t i = 0; i < p->nstr; i++)
		free(p->str[i]);
	free(p->str);
	free(p->nodes);
	free(p->procs);
	hashmap__free(p->str_ix);
	hashmap__free(p->node_ix);
	hashmap__free(p->proc_ix);
	free(p);
}

/* The index in in's string table of s, -1 if it has none. */
static int64_t find_str(const struct pprofin *in, const char *s)
{
	for (size_t i = 0; i < in->pr->n_string_table; i++)
		if (!strcmp(in->pr->string_table[i], s))
			return (int64_t)i;
	return -1;
}

/* The column of in's values that holds the plan's value: the first input
 * with sample types picks it ("samples", else the first type). -1 (why in
 * err) when in has no such column; -2 when in has no sample types. */
static int value_column(struct plan *p, const struct pprofin *in, char *err,
			size_t errlen)
{
	const Perftools__Profiles__Profile *pr = in->pr;

	if (!pr->n_sample_type)
		return -2;
	if (!p->typed) {
		size_t col = 0;

		for (size_t i = 0; i < pr->n_sample_type; i++)
			if (!strcmp(pprofin__str(in, pr->sample_type[i]->type),
				    "samples")) {
				col = i;
				break;
			}
		p->type = intern(p, pprofin__str(in, pr->sample_type[col]->type));
		p->unit = intern(p, pprofin__str(in, pr->sample_type[col]->unit));
		if (p->type == PLAN_NONE || p->unit == PLAN_NONE) {
			errbuf__set(err, errlen, "%s", strerror(ENOMEM));
			return -1;
		}
		p->typed = true;
		return (int)col;
	}
	for (size_t i = 0; i < pr->n_sample_type; i++)
		if (!strcmp(pprofin__str(in, pr->sample_type[i]->type),
			    plan__str(p, p->type)) &&
		    !strcmp(pprofin__str(in, pr->sample_type[i]->unit),
			    plan__str(p, p->unit)))
			return (int)i;
	errbuf__set(err, errlen, "no sample type %s/%s, which the first "
		    "profile has: not the same kind of profile",
		    plan__str(p, p->type), plan__str(p, p->unit));
	return -1;
}

/* One input's string indices of the keys a sample is read by. */
struct keys {
	int64_t level[PLAN_MAX_LEVELS];
	int64_t process, pid;
};

/* The value of the label with key index k on s, in p's strings (a number
 * in decimal: register tag fields without a name); PLAN_NONE if s has no
 * such label, or on ENOMEM (*nomem set). */
static uint32_t label_value(struct plan *p, const struct pprofin *in,
			    const Perftools__Profiles__Sample *s, int64_t k,
			    bool *nomem)
{
	char num[32];
	uint32_t v;

	if (k < 0)
		return PLAN_NONE;
	for (size_t i = 0; i < s->n_label; i++) {
		const Perftools__Profiles__Label *l = s->label[i];

		if (l->key != k)
			continue;
		snprintf(num, sizeof(num), "%" PRId64, l->num);
		v = intern(p, l->str ? pprofin__str(in, l->str) : num);
		*nomem = v == PLAN_NONE;
		return v;
	}
	return PLAN_NONE;
}

/* The numeric label with key index k on s, 0 if none. */
static uint64_t label_num(const Perftools__Profiles__Sample *s, int64_t k)
{
	for (size_t i = 0; k >= 0 && i < s->n_label; i++)
		if (s->label[i]->key == k && !s->label[i]->str)
			return (uint64_t)s->label[i]->num;
	return 0;
}

/* The node s's value goes to: the deepest of the path of its levels'
 * values, which stops at the first level s lacks; the unattributed node
 * when it lacks the outermost. PLAN_NONE on ENOMEM. */
static uint32_t node_of(struct plan *p, const struct pprofin *in,
			const Perftools__Profiles__Sample *s,
			const struct keys *k)
{
	uint32_t node = 0, val;
	bool nomem = false;

	for (size_t i = 0; i < p->levels.n; i++) {
		val = label_value(p, in, s, k->level[i], &nomem);
		if (nomem)
			return PLAN_NONE;
		if (val == PLAN_NONE)
			break;
		node = child_of(p, node, (int32_t)i, val);
		if (node == PLAN_NONE)
			return PLAN_NONE;
	}
	if (node)
		return node;
	val = intern(p, PLAN_UNATTRIBUTED);
	return val == PLAN_NONE ? PLAN_NONE : child_of(p, 0, -1, val);
}

/* value to node and every node above it; node's exclusive. */
static void add_value(struct plan *p, uint32_t node, int64_t value)
{
	p->nodes[node].excl += value;
	for (uint32_t n = node; n != PLAN_NONE; n = p->nodes[n].parent)
		p->nodes[n].incl += value;
}

static int add_sample(struct plan *p, const struct pprofin *in,
		      const Perftools__Profiles__Sample *s,
		      const struct keys *k, int col)
{
	uint32_t node = node_of(p, in, s, k), name;
	struct plan_proc *proc;
	bool nomem = false;

	if (node == PLAN_NONE)
		return -ENOMEM;
	name = label_value(p, in, s, k->process, &nomem);
	if (nomem)
		return -ENOMEM;
	proc = proc_of(p, label_num(s, k->pid), name == PLAN_NONE ? 0 : name);
	if (!proc)
		return -ENOMEM;
	add_value(p, node, s->value[col]);
	proc->samples += s->value[col];
	if (p->nodes[node].level >= 0)
		proc->attributed += s->value[col];
	return 0;
}

int plan__add(struct plan *p, const struct pprofin *in,
	      const struct merge_cut *cut, char *err, size_t errlen)
{
	const Perftools__Profiles__Profile *pr = in->pr;
	int col = value_column(p, in, err, errlen), ret;
	struct keys k;

	if (col == -2) {
		p->counts.samples += pr->n_sample;	/* none: check() */
		return 0;
	}
	if (col < 0)
		return -EINVAL;
	for (size_t i = 0; i < p->levels.n; i++)
		k.level[i] = find_str(in, p->levels.key[i]);
	k.process = find_str(in, "process");
	k.pid = find_str(in, "pid");
	for (size_t i = 0; i < pr->n_sample; i++) {
		p->counts.samples++;
		if (!merge_cut__keeps(cut, in, pr->sample[i],
				      &p->counts.untimed))
			continue;
		ret = add_sample(p, in, pr->sample[i], &k, col);
		if (ret) {
			errbuf__set(err, errlen, "%s", strerror(-ret));
			return ret;
		}
		p->counts.kept++;
	}
	return 0;
}

/* ---- order ---- */

/* Siblings by inclusive value descending; ties: the unattributed last,
 * then by value. */
static int by_parent_incl(const void *a, const void *b, void *arg)
{
	const struct plan *p = arg;
	const struct plan_node *x = &p->nodes[*(const uint32_t *)a];
	const struct plan_node *y = &p->nodes[*(const uint32_t *)b];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->incl != y->incl)
		return x->incl > y->incl ? -1 : 1;
	if (x->level != y->level)
		return x->level > y->level ? -1 : 1;
	return strcmp(plan__str(p, x->value), plan__str(p, y->value));
}

static int by_attributed(const void *a, const void *b, void *arg)
{
	const struct plan *p = arg;
	const struct plan_proc *x = a, *y = b;
	int c;

	if (x->attributed != y->attributed)
		return x->attributed > y->attributed ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	c = strcmp(plan__str(p, x->name), plan__str(p, y->name));
	if (c)
		return c;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int plan__sort(struct plan *p)
{
	size_t n = p->nnodes - 1;
	uint32_t *ix = malloc((n ? n : 1) * sizeof(*ix));

	if (!ix)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		ix[i] = (uint32_t)i + 1;
	qsort_r(ix, n, sizeof(*ix), by_parent_incl, p);
	for (size_t i = 0; i < p->nnodes; i++)
		p->nodes[i].child = p->nodes[i].next = PLAN_NONE;
	/* backwards, so that each node goes in front of its later siblings */
	for (size_t i = n; i-- > 0;) {
		struct plan_node *c = &p->nodes[ix[i]];

		c->next = p->nodes[c->parent].child;
		p->nodes[c->parent].child = ix[i];
	}
	free(ix);
	sort__array_r(p->procs, p->nprocs, sizeof(*p->procs), by_attributed, p);
	/* the index maps processes to their old places: it goes stale */
	hashmap__free(p->proc_ix);
	p->proc_ix = NULL;
	return 0;
}

/* ---- what both outputs show ---- */

static double share(int64_t v, int64_t total)
{
	return total > 0 ? 100.0 * (double)v / (double)total : 0;
}

/* The next node of a depth-first walk of the sorted tree from the root's
 * first child: children before siblings. PLAN_NONE at the end. */
static uint32_t walk_next(const struct plan *p, uint32_t n)
{
	if (p->nodes[n].child != PLAN_NONE)
		return p->nodes[n].child;
	for (; n; n = p->nodes[n].parent)
		if (p->nodes[n].next != PLAN_NONE)
			return p->nodes[n].next;
	return PLAN_NONE;
}

static const char *level_key(const struct plan *p, const struct plan_node *n)
{
	return n->level >= 0 ? p->levels.key[n->level] : NULL;
}

/* Processes with nothing attributed are counted on one line. */
static size_t procs_shown(const struct plan *p)
{
	size_t n = 0;

	while (n < p->nprocs && p->procs[n].attributed)
		n++;
	return n;
}

/* ---- text ---- */

/* s for a terminal: valid UTF-8, control characters (C0, DEL, C1) as
 * \xNN, so that a label value from a target process stays on its line
 * and cannot drive the terminal. Returns the characters written. */
static size_t put_text(struct strbuf *b, const char *s)
{
	size_t n = strlen(s), cap = 3 * n + 1, chars = 0;
	char *v = malloc(cap);

	if (!v) {
		b->err = b->err ? b->err : -ENOMEM;
		return 0;
	}
	utf8__sanitize((const uint8_t *)s, n, v, cap);
	for (const unsigned char *c = (unsigned char *)v; *c; c++) {
		if (*c < 0x20 || *c == 0x7f) {
			strbuf__printf(b, "\\x%02x", *c);
			chars += 4;
		} else if (*c == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f) {
			strbuf__printf(b, "\\x%02x", *++c);
			chars += 4;
		} else {
			strbuf__add(b, (const char *)c, 1);
			chars += (*c & 0xc0) != 0x80;
		}
	}
	free(v);
	return chars;
}

static void pad(struct strbuf *b, size_t n)
{
	while (n--)
		strbuf__add(b, " ", 1);
}

/* s as put_text, right-aligned in width characters. */
static void put_right(struct strbuf *b, const char *s, size_t width)
{
	struct strbuf t = { 0 };
	size_t n = put_text(&t, s);

	pad(b, n < width ? width - n : 0);
	if (t.len)
		strbuf__add(b, t.p, t.len);
	if (t.err && !b->err)
		b->err = t.err;
	strbuf__free(&t);
}

/* "NAME (pid N)" for a terminal; the characters written. */
static size_t put_proc(struct strbuf *b, const struct plan *p,
		       const struct plan_proc *pc)
{
	const char *name = plan__str(p, pc->name);
	size_t n = *name ? put_text(b, name) : 0;
	char pid[40];

	if (!*name && !pc->pid) {
		strbuf__puts(b, "(no process label)");
		return 18;
	}
	if (!pc->pid)
		return n;
	n += (size_t)snprintf(pid, sizeof(pid), "%s(pid %" PRIu64 ")",
			      *name ? " " : "", pc->pid);
	strbuf__puts(b, pid);
	return n;
}

/* The width of the process column: its longest name, at most 40. */
static size_t procs_width(const struct plan *p, size_t shown,
			  const char *others)
{
	size_t width = shown < p->nprocs ? strlen(others) : strlen("process");
	struct strbuf tmp = { 0 };
	size_t w;

	for (size_t i = 0; i < shown; i++) {
		w = put_proc(&tmp, p, &p->procs[i]);
		width = w > width ? w : width;
	}
	strbuf__free(&tmp);
	return width < 40 ? width : 40;
}

static void text_procs(struct strbuf *b, const struct plan *p)
{
	size_t shown = procs_shown(p), width, w;
	int64_t rest = 0;
	char others[48];

	snprintf(others, sizeof(others), "%zu other process%s",
		 p->nprocs - shown, p->nprocs - shown == 1 ? "" : "es");
	width = procs_width(p, shown, others);
	strbuf__printf(b, "%-*s  ", (int)width, "process");
	put_right(b, plan__str(p, p->type), 10);
	strbuf__puts(b, "  attributed (");
	put_text(b, p->levels.key[0]);
	strbuf__puts(b, ")\n");
	for (size_t i = 0; i < shown; i++) {
		const struct plan_proc *pc = &p->procs[i];

		w = put_proc(b, p, pc);
		pad(b, w < width ? width - w : 0);
		strbuf__printf(b, "  %10" PRId64 "  %10" PRId64 " %5.1f%%\n",
			       pc->samples, pc->attributed,
			       share(pc->attributed, pc->samples));
	}
	for (size_t i = shown; i < p->nprocs; i++)
		rest += p->procs[i].samples;
	if (shown < p->nprocs)
		strbuf__printf(b, "%-*s  %10" PRId64 "  %10d %5.1f%%\n",
			       (int)width, others, rest, 0, 0.0);
}

static void text_node(struct strbuf *b, const struct plan *p,
		      const struct plan_node *n)
{
	const char *key = level_key(p, n);

	strbuf__printf(b, "%5.1f%%  %5.1f%%  %10" PRId64 "  ",
		       share(n->incl, plan__total(p)),
		       share(n->excl, plan__total(p)), n->incl);
	pad(b, 2 * n->depth);
	if (key) {
		put_text(b, key);
		strbuf__add(b, "=", 1);
	}
	put_text(b, plan__str(p, n->value));
	strbuf__add(b, "\n", 1);
}

int plan__write_text(const struct plan *p, const struct plan_opts *o,
		     struct strbuf *out)
{
	strbuf__puts(out, "tagprof report plan: ");
	put_text(out, o->title);
	strbuf__puts(out, "\nlevels: ");
	for (size_t i = 0; i < p->levels.n; i++) {
		strbuf__puts(out, i ? " > " : "");
		put_text(out, p->levels.key[i]);
	}
	strbuf__printf(out, " (%s)\n%" PRId64 " ", o->levels_from,
		       plan__total(p));
	put_text(out, plan__str(p, p->type));
	strbuf__puts(out, " (");
	put_text(out, plan__str(p, p->unit));
	strbuf__puts(out, ") in all; every share is of all of them\n\n");
	text_procs(out, p);
	strbuf__printf(out, "\n%6s  %6s  ", "incl%", "excl%");
	put_right(out, plan__str(p, p->type), 10);
	strbuf__puts(out, "  name\n");
	for (uint32_t n = p->nodes[0].child; n != PLAN_NONE;
	     n = walk_next(p, n))
		text_node(out, p, &p->nodes[n]);
	return out->err;
}

/* ---- HTML ---- */

/* Geometry, in CSS pixels. */
#define PLOT_W		1100
#define ROW_H		24
#define CHAR_W		7	/* of the 12px text, about */

/* One color a level, lighter than the timeline's so that text reads on
 * them; the unattributed grey. */
static const char *const level_colors[] = {
	"#a0cbe8", "#ffbe7d", "#8cd17d", "#f1ce63", "#86bcb6",
	"#ff9d9a", "#d4a6c8", "#fabfd2", "#d7b5a6", "#b6992d",
};
#define NLEVEL_COLORS (sizeof(level_colors) / sizeof(level_colors[0]))
#define UNATTRIBUTED_COLOR "#d3d3d3"

static const char *node_color(const struct plan_node *n)
{
	return n->level >= 0 ? level_colors[n->level % NLEVEL_COLORS] :
			       UNATTRIBUTED_COLOR;
}

/* "key=value", escaped; the unattributed node has no key. */
static void html_name(struct strbuf *b, const struct plan *p,
		      const struct plan_node *n)
{
	const char *key = level_key(p, n);

	if (key) {
		strbuf__html(b, key);
		strbuf__add(b, "=", 1);
	}
	strbuf__html(b, plan__str(p, n->value));
}

/* "query=q17 > operator=HashJoin#3", escaped. */
static void html_path(struct strbuf *b, const struct plan *p, uint32_t n)
{
	if (p->nodes[n].parent) {
		html_path(b, p, p->nodes[n].parent);
		strbuf__puts(b, " &gt; ");
	}
	html_name(b, p, &p->nodes[n]);
}

static void html_numbers(struct strbuf *b, const struct plan *p,
			 const struct plan_node *n)
{
	strbuf__printf(b, ": %.1f%% inclusive, %.1f%% exclusive, %" PRId64
		       " %s", share(n->incl, plan__total(p)),
		       share(n->excl, plan__total(p)), n->incl,
		       plan__str(p, p->type));
}

/* The node's box in the icicle, then its children's under it; each box
 * an inner <svg>, which clips its text. Boxes under half a pixel are left
 * out (the table has them). */
static void html_box(struct strbuf *b, const struct plan *p, uint32_t i,
		     double x)
{
	const struct plan_node *n = &p->nodes[i];
	double w = (double)PLOT_W * share(n->incl, plan__total(p)) / 100;

	if (w < 0.5)
		return;
	strbuf__printf(b, "<svg class=\"box\" x=\"%.2f\" y=\"%u\" width=\"%.2f\" "
		       "height=\"%d\" data-node=\"%u\"><title>", x,
		       n->depth * ROW_H, w, ROW_H - 1, i);
	html_path(b, p, i);
	html_numbers(b, p, n);
	strbuf__printf(b, "</title><rect width=\"100%%\" height=\"100%%\" "
		       "fill=\"%s\"/>", node_color(n));
	if (w > 3 * CHAR_W) {
		strbuf__puts(b, "<text x=\"4\" y=\"16\">");
		html_name(b, p, n);
		strbuf__puts(b, "</text>");
	}
	strbuf__puts(b, "</svg>\n");
	for (uint32_t c = n->child; c != PLAN_NONE; c = p->nodes[c].next) {
		html_box(b, p, c, x);
		x += (double)PLOT_W * share(p->nodes[c].incl, plan__total(p)) /
		     100;
	}
}

static void html_icicle(struct strbuf *b, const struct plan *p)
{
	int h = (int)(p->levels.n ? p->levels.n : 1) * ROW_H;
	double x = 0;

	strbuf__printf(b, "<svg id=\"icicle\" xmlns=\"http://www.w3.org/2000/svg\" "
		       "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
		       PLOT_W, h, PLOT_W, h);
	for (uint32_t c = p->nodes[0].child; c != PLAN_NONE;
	     c = p->nodes[c].next) {
		html_box(b, p, c, x);
		x += (double)PLOT_W * share(p->nodes[c].incl, plan__total(p)) /
		     100;
	}
	strbuf__puts(b, "</svg>\n");
}

static void html_legend(struct strbuf *b, const struct plan *p)
{
	strbuf__puts(b, "<p class=\"legend\">");
	for (size_t i = 0; i < p->levels.n; i++) {
		strbuf__printf(b, "<span class=\"key\" style=\"background:%s\">",
			       level_colors[i % NLEVEL_COLORS]);
		strbuf__html(b, p->levels.key[i]);
		strbuf__puts(b, "</span>");
	}
	strbuf__printf(b, "<span class=\"key\" style=\"background:%s\">%s"
		       "</span></p>\n", UNATTRIBUTED_COLOR, PLAN_UNATTRIBUTED);
}

static void html_proc_name(struct strbuf *b, const struct plan *p,
			   const struct plan_proc *pc)
{
	const char *name = plan__str(p, pc->name);

	if (!*name && !pc->pid) {
		strbuf__puts(b, "(no process label)");
		return;
	}
	strbuf__html(b, name);
	if (pc->pid)
		strbuf__printf(b, "%s(pid %" PRIu64 ")", *name ? " " : "",
			       pc->pid);
}

static void html_procs(struct strbuf *b, const struct plan *p)
{
	size_t shown = procs_shown(p);
	int64_t rest = 0;

	strbuf__puts(b, "<table id=\"processes\"><thead><tr><th>process</th><th>");
	strbuf__html(b, plan__str(p, p->type));
	strbuf__puts(b, "</th><th>attributed (");
	strbuf__html(b, p->levels.key[0]);
	strbuf__puts(b, ")</th><th>attributed share</th></tr></thead>"
		     "<tbody>\n");
	for (size_t i = 0; i < p->nprocs; i++) {
		const struct plan_proc *pc = &p->procs[i];

		if (i >= shown) {
			rest += pc->samples;
			continue;
		}
		strbuf__printf(b, "<tr data-pid=\"%" PRIu64 "\"><td>", pc->pid);
		html_proc_name(b, p, pc);
		strbuf__printf(b, "</td><td>%" PRId64 "</td><td>%" PRId64
			       "</td><td>%.1f%%</td></tr>\n", pc->samples,
			       pc->attributed,
			       share(pc->attributed, pc->samples));
	}
	if (shown < p->nprocs)
		strbuf__printf(b, "<tr class=\"rest\"><td>%zu other process%s"
			       "</td><td>%" PRId64 "</td><td>0</td><td>0.0%%"
			       "</td></tr>\n", p->nprocs - shown,
			       p->nprocs - shown == 1 ? "" : "es", rest);
	strbuf__puts(b, "</tbody></table>\n");
}

static void html_row(struct strbuf *b, const struct plan *p, uint32_t i)
{
	const struct plan_node *n = &p->nodes[i];
	const char *key = level_key(p, n);
	double incl = share(n->incl, plan__total(p));

	strbuf__printf(b, "<tr data-node=\"%u\" data-depth=\"%u\" "
		       "data-level=\"", i, n->depth);
	strbuf__html(b, key ? key : "");
	strbuf__puts(b, "\" data-value=\"");
	strbuf__html(b, plan__str(p, n->value));
	strbuf__printf(b, "\" data-incl=\"%.2f\" data-excl=\"%.2f\" "
		       "data-samples=\"%" PRId64 "\" title=\"", incl,
		       share(n->excl, plan__total(p)), n->incl);
	html_path(b, p, i);
	strbuf__printf(b, "\"><td class=\"name\" style=\"padding-left:%upx\">"
		       "<span class=\"sw\" style=\"background:%s\"></span>",
		       10 + 18 * n->depth, node_color(n));
	html_name(b, p, n);
	strbuf__printf(b, "</td><td class=\"incl\"><span class=\"bar\" "
		       "style=\"width:%.0fpx\"></span>%.1f%%</td><td>%.1f%%"
		       "</td><td>%" PRId64 "</td></tr>\n", 2 * incl, incl,
		       share(n->excl, plan__total(p)), n->incl);
}

static void html_tree(struct strbuf *b, const struct plan *p)
{
	strbuf__puts(b, "<table id=\"tree\"><thead><tr><th>component</th>"
		     "<th>inclusive</th><th>exclusive</th><th>");
	strbuf__html(b, plan__str(p, p->type));
	strbuf__puts(b, "</th></tr></thead><tbody>\n");
	for (uint32_t n = p->nodes[0].child; n != PLAN_NONE;
	     n = walk_next(p, n))
		html_row(b, p, n);
	strbuf__puts(b, "</tbody></table>\n");
}

static const char style[] =
	"body{font:14px sans-serif;margin:16px;color:#222;background:#fff}"
	"h1{font-size:18px;margin:0 0 4px}p.sum{color:#555;margin:0 0 12px}"
	".key{display:inline-block;padding:2px 8px;margin-right:6px;"
	"font-size:12px}"
	"svg .box text{font-size:12px;fill:#222}"
	"svg .box rect{stroke:#fff;stroke-width:1}"
	"svg .box:hover rect{stroke:#000}"
	"table{border-collapse:collapse;margin-top:16px}"
	"th,td{padding:3px 10px;border-bottom:1px solid #ddd;text-align:right;"
	"white-space:nowrap}"
	"th:first-child,td:first-child{text-align:left}"
	"td.incl{text-align:left}"
	".sw{display:inline-block;width:10px;height:10px;margin-right:6px}"
	".bar{display:inline-block;height:10px;background:#4e79a7;"
	"margin-right:6px;vertical-align:middle}";

int plan__write_html(const struct plan *p, const struct plan_opts *o,
		     struct strbuf *b)
{
	strbuf__puts(b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
		     "<meta http-equiv=\"Content-Security-Policy\" "
		     "content=\"default-src 'none'; style-src 'unsafe-inline'\">"
		     "<title>tagprof plan: ");
	strbuf__html(b, o->title);
	strbuf__printf(b, "</title><style>%s</style></head><body>\n<h1>"
		       "Where the samples went: ", style);
	for (size_t i = 0; i < p->levels.n; i++) {
		strbuf__puts(b, i ? " &gt; " : "");
		strbuf__html(b, p->levels.key[i]);
	}
	strbuf__puts(b, "</h1>\n<p class=\"sum\">");
	strbuf__html(b, o->title);
	strbuf__printf(b, ": %" PRId64 " ", plan__total(p));
	strbuf__html(b, plan__str(p, p->type));
	strbuf__puts(b, " (");
	strbuf__html(b, plan__str(p, p->unit));
	strbuf__puts(b, "); the levels ");
	strbuf__html(b, o->levels_from);
	strbuf__puts(b, "; every share is of all samples; a box's width is its "
		     "inclusive share (hover for numbers)</p>\n");
	html_legend(b, p);
	html_icicle(b, p);
	html_procs(b, p);
	html_tree(b, p);
	strbuf__puts(b, "</body></html>\n");
	return b->err;
}
