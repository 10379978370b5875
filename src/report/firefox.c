// SPDX-License-Identifier: BSD-2-Clause
/* The Firefox Profiler's processed profile format (firefox.h).
 *
 * Which version, and why 55. The format is defined by the type definitions
 * of firefox-devtools/profiler (src/types/profile.js and markers.js at
 * version 55, commit b039cd7eb, 2024-12-29) and its changelog
 * (docs-developer/CHANGELOG-formats.md). The profiler upgrades any older
 * version on load (processed-profile-versioning), so an older version is
 * read by every deployment, the current one (70) included. Perfetto's
 * importer (src/trace_processor/importers/gecko, 2026) reads what it
 * understands and drops the rest without a word: it reads each thread's
 * own tables (versions before 60 keep them per thread), the stack table's
 * `prefix` column (version 66 replaced it with `prefixOffset`, which it
 * does not read), `samples.time` (not `timeDeltas`), and markers. It finds
 * the format by the text starting with {"meta". Version 55 is the newest
 * with all of that: per-thread tables and string arrays, and marker
 * schemas with `fields` (55 renamed `data`).
 *
 * Both readers drop a row with an index out of range, and Perfetto drops a
 * null or -1 in most columns and so shifts the rest: every index written
 * here is in range, and null appears only where both allow it (a root
 * stack's prefix, a sample without frames). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/firefox.h"
#include "util/grow.h"

/* Categories (meta.categories): the first grey one is the default. */
enum { CAT_OTHER, CAT_USER, CAT_KERNEL, CAT_LABEL };

/* A run of samples that continues past a gap this many sampling periods
 * long (the thread did not run) is two runs. */
#define GAP_PERIODS	4
#define GAP_UNKNOWN_NS	(50 * 1000 * 1000)	/* period not known */
/* Keys with a run open: those of the last sample, which has at most
 * timeline.c's MAX_PAIRS labels. */
#define MAX_OPEN	64

/* One thread's tables: the timeline's shared rows renumbered in the order
 * the thread first uses them (parents before children). */
struct local {
	uint32_t *stack, *frame, *func, *str, *lib;	/* global -> local */
	uint32_t *stacks, *frames, *funcs, *strs, *libs; /* local -> global */
	size_t nstacks, nframes, nfuncs, nstrs, nlibs;
};

static int local_init(struct local *l, const struct timeline *tl)
{
	size_t n[] = { tl->nstacks, tl->nframes, tl->nfuncs, tl->nstr,
		       tl->nstr };
	uint32_t **g2l[] = { &l->stack, &l->frame, &l->func, &l->str, &l->lib };
	uint32_t **l2g[] = { &l->stacks, &l->frames, &l->funcs, &l->strs,
			     &l->libs };

	memset(l, 0, sizeof(*l));
	for (size_t i = 0; i < 5; i++) {
		*g2l[i] = malloc((n[i] ? n[i] : 1) * sizeof(uint32_t));
		*l2g[i] = malloc((n[i] ? n[i] : 1) * sizeof(uint32_t));
		if (!*g2l[i] || !*l2g[i])
			return -ENOMEM;
		memset(*g2l[i], 0xff, (n[i] ? n[i] : 1) * sizeof(uint32_t));
	}
	return 0;
}

static void local_free(struct local *l)
{
	free(l->stack), free(l->frame), free(l->func), free(l->str),
	free(l->lib);
	free(l->stacks), free(l->frames), free(l->funcs), free(l->strs),
	free(l->libs);
}

/* Forgets the last thread's numbering: only the rows it used. */
static void local_reset(struct local *l)
{
	for (size_t i = 0; i < l->nstacks; i++)
		l->stack[l->stacks[i]] = TL_NONE;
	for (size_t i = 0; i < l->nframes; i++)
		l->frame[l->frames[i]] = TL_NONE;
	for (size_t i = 0; i < l->nfuncs; i++)
		l->func[l->funcs[i]] = TL_NONE;
	for (size_t i = 0; i < l->nstrs; i++)
		l->str[l->strs[i]] = TL_NONE;
	for (size_t i = 0; i < l->nlibs; i++)
		l->lib[l->libs[i]] = TL_NONE;
	l->nstacks = l->nframes = l->nfuncs = l->nstrs = l->nlibs = 0;
}

/* Global row g's local number in map/list, given one if new. */
static uint32_t number(uint32_t *map, uint32_t *list, size_t *n, uint32_t g)
{
	if (map[g] == TL_NONE) {
		map[g] = (uint32_t)*n;
		list[(*n)++] = g;
	}
	return map[g];
}

static uint32_t local_str(struct local *l, uint32_t g)
{
	return number(l->str, l->strs, &l->nstrs, g);
}

static uint32_t local_frame(struct local *l, const struct timeline *tl,
			    uint32_t g)
{
	const struct tl_func *f = &tl->funcs[tl->frames[g].func];

	if (l->frame[g] != TL_NONE)
		return l->frame[g];
	if (l->func[tl->frames[g].func] == TL_NONE) {
		local_str(l, f->name);
		if (f->lib != TL_NONE) {
			local_str(l, f->lib);
			number(l->lib, l->libs, &l->nlibs, f->lib);
		}
	}
	number(l->func, l->funcs, &l->nfuncs, tl->frames[g].func);
	return number(l->frame, l->frames, &l->nframes, g);
}

/* Stack g's local number; its callers are numbered first. */
static uint32_t local_stack(struct local *l, const struct timeline *tl,
			    uint32_t g)
{
	uint32_t chain[1024], n = 0;

	if (g == TL_NONE)
		return TL_NONE;
	/* up to the first caller already numbered, or the root */
	for (uint32_t s = g; s != TL_NONE && l->stack[s] == TL_NONE &&
			     n < sizeof(chain) / sizeof(chain[0]);
	     s = tl->stacks[s].prefix)
		chain[n++] = s;
	while (n--) {
		local_frame(l, tl, tl->stacks[chain[n]].frame);
		number(l->stack, l->stacks, &l->nstacks, chain[n]);
	}
	return l->stack[g];
}

static void ms(struct strbuf *b, int64_t ns)
{
	strbuf__json_num(b, (double)ns / 1e6);
}

/* "name":[v,v,...] of one constant value n times. */
static void const_column(struct strbuf *b, const char *name, const char *v,
			 size_t n)
{
	strbuf__printf(b, "\"%s\":[", name);
	for (size_t i = 0; i < n; i++)
		strbuf__printf(b, "%s%s", i ? "," : "", v);
	strbuf__puts(b, "],");
}

struct marker {
	uint32_t name;		/* local string "KEY=VALUE" */
	uint32_t key, val;	/* global strings */
	int64_t start, end;
	uint32_t samples;
};

struct markers {
	struct marker *m;
	size_t n, cap;
	uint32_t *open;		/* per key string: index into m, or TL_NONE */
};

/* The markers' "KEY=VALUE" names of one thread: the timeline is not
 * changed here, so they live in the thread's string array only, after the
 * strings it shares with the timeline. */
struct names {
	char **s;
	size_t n, cap;
};

/* Runs of samples that carry one label value, per key, in time order. A
 * run ends at a sample without its key or with another value, or at a gap
 * in the thread's samples. */
static int thread_markers(const struct timeline *tl, const struct tl_thread *t,
			  struct markers *mk)
{
	int64_t gap = tl->period_ns ? GAP_PERIODS * tl->period_ns :
				      GAP_UNKNOWN_NS;
	int64_t step = tl->period_ns ? tl->period_ns : 0;
	uint32_t open_keys[MAX_OPEN];	/* keys with a run open */
	size_t nopen = 0, w;

	mk->n = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct tl_sample *s = &t->s[i];
		int64_t next = i + 1 < t->n ? t->s[i + 1].t_ns : INT64_MAX;

		for (size_t k = w = 0; k < nopen; k++) {
			if (timeline__value(tl, s, open_keys[k]) == TL_NONE)
				mk->open[open_keys[k]] = TL_NONE;
			else
				open_keys[w++] = open_keys[k];
		}
		nopen = w;
		for (uint32_t p = 0; p < s->npairs; p++) {
			const struct tl_pair *pr = &tl->pairs[s->pairs + p];
			uint32_t o = mk->open[pr->key];
			struct marker *m;

			if (o == TL_NONE || mk->m[o].val != pr->val ||
			    s->t_ns - mk->m[o].end > gap) {
				if (o == TL_NONE && nopen == MAX_OPEN)
					continue;	/* cannot happen */
				if (grow__array(&mk->m, &mk->cap, mk->n + 1,
						sizeof(*mk->m), 64))
					return -ENOMEM;
				if (o == TL_NONE)
					open_keys[nopen++] = pr->key;
				o = (uint32_t)mk->n++;
				mk->open[pr->key] = o;
				mk->m[o] = (struct marker){ .key = pr->key,
							    .val = pr->val,
							    .start = s->t_ns };
			}
			m = &mk->m[o];
			/* to the next sample, at most a period on */
			m->end = next - s->t_ns < step ? next : s->t_ns + step;
			m->samples++;
		}
	}
	for (size_t k = 0; k < nopen; k++)
		mk->open[open_keys[k]] = TL_NONE;
	return 0;
}

/* The markers' names: "KEY=VALUE" strings after the thread's others. */
static int marker_names(const struct timeline *tl, struct markers *mk,
			struct local *l, struct names *nm)
{
	nm->n = 0;
	for (size_t k = 0; k < mk->n; k++) {
		const char *key = timeline__str(tl, mk->m[k].key),
			   *val = timeline__str(tl, mk->m[k].val);
		size_t j, len = strlen(key) + strlen(val) + 2;
		char *s;

		for (j = 0; j < nm->n; j++) {
			size_t kl = strlen(key);

			if (!strncmp(nm->s[j], key, kl) && nm->s[j][kl] == '=' &&
			    !strcmp(nm->s[j] + kl + 1, val))
				break;
		}
		if (j == nm->n) {
			if (grow__array(&nm->s, &nm->cap, nm->n + 1,
					sizeof(*nm->s), 16))
				return -ENOMEM;
			s = malloc(len);
			if (!s)
				return -ENOMEM;
			snprintf(s, len, "%s=%s", key, val);
			nm->s[nm->n++] = s;
		}
		mk->m[k].name = (uint32_t)(l->nstrs + j);
	}
	return 0;
}

static void names_clear(struct names *nm)
{
	for (size_t i = 0; i < nm->n; i++)
		free(nm->s[i]);
	nm->n = 0;
}

/* What the table columns are read from. */
struct cols {
	const struct timeline *tl;
	const struct local *l;
	const uint32_t *lib_index;
	const uint32_t *stacks;	/* the thread's samples' local stacks */
};

/* A column's value of row i, or -1 where the column has its "none". */
typedef int64_t (*col_fn)(const struct cols *c, size_t i);

static int64_t sample_stack(const struct cols *c, size_t i)
{
	return c->stacks[i] == TL_NONE ? -1 : (int64_t)c->stacks[i];
}

static int64_t stack_frame(const struct cols *c, size_t i)
{
	return c->l->frame[c->tl->stacks[c->l->stacks[i]].frame];
}

static int64_t stack_prefix(const struct cols *c, size_t i)
{
	uint32_t p = c->tl->stacks[c->l->stacks[i]].prefix;

	return p == TL_NONE ? -1 : (int64_t)c->l->stack[p];
}

static const struct tl_func *frame_func(const struct cols *c, size_t i)
{
	return &c->tl->funcs[c->tl->frames[c->l->frames[i]].func];
}

static int64_t frame_category(const struct cols *c, size_t i)
{
	return frame_func(c, i)->kernel ? CAT_KERNEL : CAT_USER;
}

static int64_t frame_func_ix(const struct cols *c, size_t i)
{
	return c->l->func[c->tl->frames[c->l->frames[i]].func];
}

static int64_t frame_line(const struct cols *c, size_t i)
{
	int64_t line = c->tl->frames[c->l->frames[i]].line;

	return line > 0 ? line : -1;
}

static int64_t func_name(const struct cols *c, size_t i)
{
	return c->l->str[c->tl->funcs[c->l->funcs[i]].name];
}

static int64_t func_resource(const struct cols *c, size_t i)
{
	uint32_t lib = c->tl->funcs[c->l->funcs[i]].lib;

	return lib == TL_NONE ? -1 : (int64_t)c->l->lib[lib];
}

static int64_t resource_lib(const struct cols *c, size_t i)
{
	return c->lib_index[c->l->libs[i]];
}

static int64_t resource_name(const struct cols *c, size_t i)
{
	return c->l->str[c->l->libs[i]];
}

/* "name":[...], of n rows, none written where get gives -1. */
static void column(struct strbuf *b, const char *name, size_t n, col_fn get,
		   const struct cols *c, const char *none)
{
	strbuf__printf(b, "\"%s\":[", name);
	for (size_t i = 0; i < n; i++) {
		int64_t v = get(c, i);

		if (v < 0)
			strbuf__printf(b, "%s%s", i ? "," : "", none);
		else
			strbuf__printf(b, "%s%" PRId64, i ? "," : "", v);
	}
	strbuf__puts(b, "],");
}

static void write_samples(struct strbuf *b, const struct tl_thread *t,
			  const struct cols *c)
{
	strbuf__puts(b, "\"samples\":{");
	column(b, "stack", t->n, sample_stack, c, "null");
	strbuf__puts(b, "\"time\":[");
	for (size_t i = 0; i < t->n; i++) {
		if (i)
			strbuf__add(b, ",", 1);
		ms(b, t->s[i].t_ns);
	}
	strbuf__printf(b, "],\"weight\":null,\"weightType\":\"samples\","
		       "\"length\":%zu},", t->n);
}

static void write_markers(struct strbuf *b, const struct timeline *tl,
			  const struct markers *mk)
{
	strbuf__puts(b, "\"markers\":{\"data\":[");
	for (size_t i = 0; i < mk->n; i++) {
		strbuf__printf(b, "%s{\"type\":\"TagprofLabel\",\"key\":",
			       i ? "," : "");
		strbuf__json_str(b, timeline__str(tl, mk->m[i].key));
		strbuf__puts(b, ",\"value\":");
		strbuf__json_str(b, timeline__str(tl, mk->m[i].val));
		strbuf__printf(b, ",\"samples\":%" PRIu32 "}",
			       mk->m[i].samples);
	}
	strbuf__puts(b, "],\"name\":[");
	for (size_t i = 0; i < mk->n; i++)
		strbuf__printf(b, "%s%" PRIu32, i ? "," : "", mk->m[i].name);
	strbuf__puts(b, "],\"startTime\":[");
	for (size_t i = 0; i < mk->n; i++) {
		if (i)
			strbuf__add(b, ",", 1);
		ms(b, mk->m[i].start);
	}
	strbuf__puts(b, "],\"endTime\":[");
	for (size_t i = 0; i < mk->n; i++) {
		if (i)
			strbuf__add(b, ",", 1);
		ms(b, mk->m[i].end);
	}
	strbuf__puts(b, "],");
	const_column(b, "phase", "1", mk->n);	/* 1: an interval */
	const_column(b, "category", "3", mk->n);	/* CAT_LABEL */
	strbuf__printf(b, "\"length\":%zu},", mk->n);
}

static void write_tables(struct strbuf *b, const struct cols *cols)
{
	const struct local *l = cols->l;

	strbuf__puts(b, "\"stackTable\":{");
	column(b, "frame", l->nstacks, stack_frame, cols, "");
	column(b, "prefix", l->nstacks, stack_prefix, cols, "null");
	strbuf__printf(b, "\"length\":%zu},", l->nstacks);

	strbuf__puts(b, "\"frameTable\":{");
	const_column(b, "address", "-1", l->nframes);
	const_column(b, "inlineDepth", "0", l->nframes);
	column(b, "category", l->nframes, frame_category, cols, "");
	const_column(b, "subcategory", "0", l->nframes);
	column(b, "func", l->nframes, frame_func_ix, cols, "");
	const_column(b, "nativeSymbol", "null", l->nframes);
	const_column(b, "innerWindowID", "null", l->nframes);
	column(b, "line", l->nframes, frame_line, cols, "null");
	const_column(b, "column", "null", l->nframes);
	strbuf__printf(b, "\"length\":%zu},", l->nframes);

	strbuf__puts(b, "\"funcTable\":{");
	column(b, "name", l->nfuncs, func_name, cols, "");
	const_column(b, "isJS", "false", l->nfuncs);
	const_column(b, "relevantForJS", "false", l->nfuncs);
	column(b, "resource", l->nfuncs, func_resource, cols, "-1");
	const_column(b, "fileName", "null", l->nfuncs);
	const_column(b, "lineNumber", "null", l->nfuncs);
	const_column(b, "columnNumber", "null", l->nfuncs);
	strbuf__printf(b, "\"length\":%zu},", l->nfuncs);

	/* resources: one per library the thread's functions are in */
	strbuf__puts(b, "\"resourceTable\":{");
	column(b, "lib", l->nlibs, resource_lib, cols, "");
	column(b, "name", l->nlibs, resource_name, cols, "");
	const_column(b, "host", "null", l->nlibs);
	const_column(b, "type", "1", l->nlibs);	/* 1: a library */
	strbuf__printf(b, "\"length\":%zu},", l->nlibs);
	strbuf__puts(b, "\"nativeSymbols\":{\"libIndex\":[],\"address\":[],"
		     "\"name\":[],\"functionSize\":[],\"length\":0},");
}

static void write_strings(struct strbuf *b, const struct timeline *tl,
			  const struct local *l, const struct names *nm)
{
	strbuf__puts(b, "\"stringArray\":[");
	for (size_t i = 0; i < l->nstrs; i++) {
		if (i)
			strbuf__add(b, ",", 1);
		strbuf__json_str(b, timeline__str(tl, l->strs[i]));
	}
	for (size_t i = 0; i < nm->n; i++) {
		if (i || l->nstrs)
			strbuf__add(b, ",", 1);
		strbuf__json_str(b, nm->s[i]);
	}
	strbuf__puts(b, "]");
}

static void write_thread_head(struct strbuf *b, const struct timeline *tl,
			      const struct tl_thread *t)
{
	strbuf__puts(b, "{\"processType\":\"default\",\"processStartupTime\":0,"
		     "\"processShutdownTime\":null,\"registerTime\":");
	ms(b, t->n ? t->s[0].t_ns : 0);
	strbuf__puts(b, ",\"unregisterTime\":null,\"pausedRanges\":[],"
		     "\"showMarkersInTimeline\":true,\"name\":");
	strbuf__json_str(b, timeline__str(tl, t->name));
	strbuf__printf(b, ",\"isMainThread\":%s,\"processName\":",
		       t->pid == t->tid ? "true" : "false");
	strbuf__json_str(b, timeline__str(tl, t->process));
	strbuf__printf(b, ",\"pid\":\"%" PRIu64 "\",\"tid\":%" PRIu64 ",",
		       t->pid, t->tid);
}

static void write_meta(struct strbuf *b, const struct timeline *tl)
{
	strbuf__puts(b, "{\"meta\":{\"interval\":");
	ms(b, tl->period_ns ? tl->period_ns : 1000000);
	strbuf__puts(b, ",\"startTime\":");
	ms(b, tl->start_ns);
	strbuf__puts(b, ",\"endTime\":");
	ms(b, tl->start_ns + tl->end_ns);
	strbuf__printf(b, ",\"processType\":0,\"product\":\"tagprof\","
		       "\"stackwalk\":1,\"version\":31,"
		       "\"preprocessedProfileVersion\":%d,"
		       "\"symbolicated\":true,\"categories\":["
		       "{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]},"
		       "{\"name\":\"User\",\"color\":\"blue\",\"subcategories\":[\"Other\"]},"
		       "{\"name\":\"Kernel\",\"color\":\"orange\",\"subcategories\":[\"Other\"]},"
		       "{\"name\":\"Label\",\"color\":\"green\",\"subcategories\":[\"Other\"]}],"
		       "\"markerSchema\":[{\"name\":\"TagprofLabel\","
		       "\"tooltipLabel\":\"{marker.data.key}={marker.data.value}\","
		       "\"tableLabel\":\"{marker.data.key}={marker.data.value}\","
		       "\"chartLabel\":\"{marker.data.value}\","
		       "\"display\":[\"marker-chart\",\"marker-table\",\"timeline-overview\"],"
		       "\"description\":\"A run of consecutive samples of the thread that carry this label or tag value\","
		       "\"fields\":[{\"key\":\"key\",\"label\":\"Label\",\"format\":\"string\"},"
		       "{\"key\":\"value\",\"label\":\"Value\",\"format\":\"string\"},"
		       "{\"key\":\"samples\",\"label\":\"Samples\",\"format\":\"integer\"}]}]},",
		       FIREFOX_PROCESSED_VERSION);
}

/* profile.libs: one per library name, in string order; lib_index maps a
 * library's string to its place. */
static void write_libs(struct strbuf *b, const struct timeline *tl,
		       uint32_t *lib_index)
{
	uint32_t n = 0;
	bool *is_lib = calloc(tl->nstr ? tl->nstr : 1, sizeof(*is_lib));

	if (!is_lib) {
		b->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < tl->nfuncs; i++)
		if (tl->funcs[i].lib != TL_NONE)
			is_lib[tl->funcs[i].lib] = true;
	strbuf__puts(b, "\"libs\":[");
	for (uint32_t s = 0; s < tl->nstr; s++) {
		if (!is_lib[s])
			continue;
		lib_index[s] = n;
		strbuf__printf(b, "%s{\"arch\":\"\",\"name\":", n++ ? "," : "");
		strbuf__json_str(b, timeline__str(tl, s));
		strbuf__puts(b, ",\"path\":");
		strbuf__json_str(b, timeline__str(tl, s));
		strbuf__puts(b, ",\"debugName\":");
		strbuf__json_str(b, timeline__str(tl, s));
		strbuf__puts(b, ",\"debugPath\":");
		strbuf__json_str(b, timeline__str(tl, s));
		strbuf__puts(b, ",\"breakpadId\":\"\",\"codeId\":null}");
	}
	strbuf__puts(b, "],");
	free(is_lib);
}

static int write_thread(struct strbuf *b, const struct timeline *tl,
			const struct tl_thread *t, struct local *l,
			struct markers *mk, struct names *nm,
			const uint32_t *lib_index)
{
	uint32_t *stacks = malloc((t->n ? t->n : 1) * sizeof(*stacks));
	const struct cols cols = { tl, l, lib_index, stacks };
	int err;

	if (!stacks)
		return -ENOMEM;
	local_reset(l);
	local_str(l, t->name);
	for (size_t i = 0; i < t->n; i++)
		stacks[i] = local_stack(l, tl, t->s[i].stack);
	err = thread_markers(tl, t, mk);
	if (!err)
		err = marker_names(tl, mk, l, nm);
	if (err) {
		free(stacks);
		return err;
	}
	write_thread_head(b, tl, t);
	write_samples(b, t, &cols);
	write_markers(b, tl, mk);
	write_tables(b, &cols);
	write_strings(b, tl, l, nm);
	strbuf__puts(b, "}");
	names_clear(nm);
	free(stacks);
	return 0;
}

int firefox__write(const struct timeline *tl, struct strbuf *out,
		   struct firefox_counts *counts)
{
	struct local l;
	struct markers mk = { 0 };
	struct names nm = { 0 };
	uint32_t *lib_index = calloc(tl->nstr ? tl->nstr : 1,
				     sizeof(*lib_index));
	int err = local_init(&l, tl);

	*counts = (struct firefox_counts){ 0 };
	mk.open = malloc((tl->nstr ? tl->nstr : 1) * sizeof(*mk.open));
	if (!err && (!lib_index || !mk.open))
		err = -ENOMEM;
	if (err)
		goto out;
	memset(mk.open, 0xff, (tl->nstr ? tl->nstr : 1) * sizeof(*mk.open));
	write_meta(out, tl);
	write_libs(out, tl, lib_index);
	strbuf__puts(out, "\"threads\":[");
	for (size_t i = 0; i < tl->nthreads && !err; i++) {
		if (i)
			strbuf__add(out, ",", 1);
		err = write_thread(out, tl, &tl->threads[i], &l, &mk, &nm,
				   lib_index);
		counts->samples += tl->threads[i].n;
		counts->markers += mk.n;
	}
	strbuf__puts(out, "]}\n");
	counts->threads = tl->nthreads;
	if (!err)
		err = out->err;
out:
	local_free(&l);
	free(mk.m);
	free(mk.open);
	names_clear(&nm);
	free(nm.s);
	free(lib_index);
	return err;
}
