// SPDX-License-Identifier: BSD-2-Clause
/* Per-sample profiles as per-thread timelines (timeline.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/timeline.h"
#include "util/errbuf.h"
#include "util/grow.h"
#include "util/hashmap.h"
#include "util/sort.h"

/* Frames of one stack, leaf to root: pprof's own limit is none, ours is
 * what tagprof writes at most (127 user + 127 kernel, inlined ones
 * expanded) with room to spare; a deeper stack keeps its leaf end. */
#define MAX_DEPTH	1024
/* Labels of one sample: pprofin bounds nothing, the file does. */
#define MAX_PAIRS	64

struct timeline *timeline__new(void)
{
	struct timeline *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return NULL;
	tl->start_ns = INT64_MAX;
	tl->str_ix = hashmap__new(0);
	tl->func_ix = hashmap__new(0);
	tl->frame_ix = hashmap__new(0);
	tl->stack_ix = hashmap__new(0);
	tl->thread_ix = hashmap__new(0);
	if (!tl->str_ix || !tl->func_ix || !tl->frame_ix || !tl->stack_ix ||
	    !tl->thread_ix) {
		timeline__free(tl);
		return NULL;
	}
	return tl;
}

void timeline__free(struct timeline *tl)
{
	if (!tl)
		return;
	for (size_t i = 0; i < tl->nstr; i++)
		free(tl->str[i]);
	for (size_t i = 0; i < tl->nthreads; i++)
		free(tl->threads[i].s);
	free(tl->str);
	free(tl->funcs);
	free(tl->frames);
	free(tl->stacks);
	free(tl->pairs);
	free(tl->threads);
	hashmap__free(tl->str_ix);
	hashmap__free(tl->func_ix);
	hashmap__free(tl->frame_ix);
	hashmap__free(tl->stack_ix);
	hashmap__free(tl->thread_ix);
	free(tl);
}

void timeline__set_start(struct timeline *tl, int64_t start_ns)
{
	tl->start_ns = start_ns;
}

uint32_t timeline__find_str(const struct timeline *tl, const char *s)
{
	uint64_t v;

	return hashmap__get(tl->str_ix, s, strlen(s), &v) ? (uint32_t)v :
							     TL_NONE;
}

/* s's index, added if new; TL_NONE on ENOMEM. */
static uint32_t intern_str(struct timeline *tl, const char *s)
{
	uint32_t i = timeline__find_str(tl, s);
	char *copy;

	if (i != TL_NONE)
		return i;
	if (tl->nstr >= TL_NONE - 1 ||
	    grow__array(&tl->str, &tl->capstr, tl->nstr + 1,
			sizeof(*tl->str), 256))
		return TL_NONE;
	copy = strdup(s);
	if (!copy || hashmap__put(tl->str_ix, s, strlen(s), tl->nstr)) {
		free(copy);
		return TL_NONE;
	}
	tl->str[tl->nstr] = copy;
	return (uint32_t)tl->nstr++;
}

/* The index of row (size bytes) in the interned table at arrp (*n rows,
 * room for *cap), added if new; TL_NONE on ENOMEM. The row is its own
 * key: callers zero its padding. */
static uint32_t intern_row(struct hashmap *ix, void *arrp, size_t *n,
			   size_t *cap, const void *row, size_t size)
{
	uint64_t v;

	if (hashmap__get(ix, row, size, &v))
		return (uint32_t)v;
	if (*n >= TL_NONE - 1 || grow__array(arrp, cap, *n + 1, size, 256) ||
	    hashmap__put(ix, row, size, *n))
		return TL_NONE;
	memcpy(*(char **)arrp + *n * size, row, size);
	return (uint32_t)(*n)++;
}

/* The file name of a path: what a library is called in a call tree. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* The frame of one line of a location (func, line), or of a location
 * without lines (its address in its mapping). TL_NONE on ENOMEM. */
static uint32_t frame_of(struct timeline *tl, const struct pprofin *in,
			 const Perftools__Profiles__Location *loc,
			 const Perftools__Profiles__Line *ln)
{
	const Perftools__Profiles__Mapping *map =
		pprofin__mapping(in, loc->mapping_id);
	const Perftools__Profiles__Function *fn =
		ln ? pprofin__function(in, ln->function_id) : NULL;
	const char *file = map ? pprofin__str(in, map->filename) : "";
	struct tl_func f;
	struct tl_frame fr;
	char addr[32];

	/* hashed as bytes: the padding too */
	memset(&f, 0, sizeof(f));
	memset(&fr, 0, sizeof(fr));
	f.lib = TL_NONE;
	if (fn && *pprofin__str(in, fn->name)) {
		f.name = intern_str(tl, pprofin__str(in, fn->name));
	} else {
		snprintf(addr, sizeof(addr), "0x%" PRIx64, loc->address);
		f.name = intern_str(tl, addr);
	}
	if (*file)
		f.lib = intern_str(tl, base_name(file));
	f.kernel = !strncmp(file, "[kernel", 7);
	if (f.name == TL_NONE || (*file && f.lib == TL_NONE))
		return TL_NONE;
	fr.func = intern_row(tl->func_ix, &tl->funcs, &tl->nfuncs,
			     &tl->capfuncs, &f, sizeof(f));
	fr.line = ln ? ln->line : 0;
	if (fr.func == TL_NONE)
		return TL_NONE;
	return intern_row(tl->frame_ix, &tl->frames, &tl->nframes,
			  &tl->capframes, &fr, sizeof(fr));
}

/* The frames of sample s, root first, into out (at most max); their
 * count, or -ENOMEM. pprof lists locations leaf first, and a location's
 * lines innermost (inlined) first. */
static int frames_of(struct timeline *tl, const struct pprofin *in,
		     const Perftools__Profiles__Sample *s, uint32_t *out,
		     size_t max)
{
	size_t n = 0;

	for (size_t i = s->n_location_id; i-- > 0 && n < max;) {
		const Perftools__Profiles__Location *loc =
			pprofin__location(in, s->location_id[i]);
		size_t nl = loc ? loc->n_line : 0;

		if (!loc)
			continue;
		if (!nl) {
			out[n] = frame_of(tl, in, loc, NULL);
			if (out[n++] == TL_NONE)
				return -ENOMEM;
			continue;
		}
		for (size_t j = nl; j-- > 0 && n < max;) {
			out[n] = frame_of(tl, in, loc, loc->line[j]);
			if (out[n++] == TL_NONE)
				return -ENOMEM;
		}
	}
	return (int)n;
}

/* The stack of frames[0..n) (root first): TL_NONE for none, or on ENOMEM
 * (*err set). */
static uint32_t stack_of(struct timeline *tl, const uint32_t *frames,
			 size_t n, int *err)
{
	struct tl_stack st = { .prefix = TL_NONE };

	for (size_t i = 0; i < n; i++) {
		st.frame = frames[i];
		st.prefix = intern_row(tl->stack_ix, &tl->stacks,
				       &tl->nstacks, &tl->capstacks, &st,
				       sizeof(st));
		if (st.prefix == TL_NONE) {
			*err = -ENOMEM;
			return TL_NONE;
		}
	}
	return st.prefix;
}

/* Labels that say which thread, or when: the thread's own fields. */
static bool thread_key(const char *key)
{
	static const char *const keys[] = {
		"process", "thread_name", "service", "pid", "tid", "cpu", "t",
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(key, keys[i]))
			return true;
	return false;
}

struct ident {
	uint64_t pid, tid;
	const char *name, *process;
};

/* The thread of s from its labels; a writer without them puts every
 * sample on one thread 0 of process 0. */
static struct ident ident_of(const struct pprofin *in,
			     const Perftools__Profiles__Sample *s)
{
	struct ident id = { .name = "", .process = "" };

	for (size_t i = 0; i < s->n_label; i++) {
		const Perftools__Profiles__Label *l = s->label[i];
		const char *key = pprofin__str(in, l->key);

		if (!strcmp(key, "pid") && !l->str)
			id.pid = (uint64_t)l->num;
		else if (!strcmp(key, "tid") && !l->str)
			id.tid = (uint64_t)l->num;
		else if (!strcmp(key, "thread_name") && l->str)
			id.name = pprofin__str(in, l->str);
		else if (!strcmp(key, "process") && l->str)
			id.process = pprofin__str(in, l->str);
	}
	return id;
}

static struct tl_thread *thread_of(struct timeline *tl,
				   const struct ident *id)
{
	uint64_t key[2] = { id->pid, id->tid }, v;
	struct tl_thread *t;

	if (hashmap__get(tl->thread_ix, key, sizeof(key), &v))
		return &tl->threads[v];
	if (grow__array(&tl->threads, &tl->capthreads, tl->nthreads + 1,
			sizeof(*tl->threads), 16) ||
	    hashmap__put(tl->thread_ix, key, sizeof(key), tl->nthreads))
		return NULL;
	t = &tl->threads[tl->nthreads++];
	*t = (struct tl_thread){ .pid = id->pid, .tid = id->tid };
	t->name = intern_str(tl, *id->name ? id->name : *id->process ?
				 id->process : "samples");
	t->process = intern_str(tl, *id->process ? id->process : "");
	return t->name == TL_NONE || t->process == TL_NONE ? NULL : t;
}

/* s's labels other than the thread's own, into tl->pairs. */
static int add_pairs(struct timeline *tl, const struct pprofin *in,
		     const Perftools__Profiles__Sample *s,
		     struct tl_sample *out)
{
	char num[32];

	out->pairs = (uint32_t)tl->npairs;
	out->npairs = 0;
	for (size_t i = 0; i < s->n_label && out->npairs < MAX_PAIRS; i++) {
		const Perftools__Profiles__Label *l = s->label[i];
		const char *key = pprofin__str(in, l->key);
		struct tl_pair p;

		if (thread_key(key))
			continue;
		snprintf(num, sizeof(num), "%" PRId64, l->num);
		p.key = intern_str(tl, key);
		p.val = intern_str(tl, l->str ? pprofin__str(in, l->str) : num);
		if (p.key == TL_NONE || p.val == TL_NONE ||
		    tl->npairs >= TL_NONE - 1 ||
		    grow__array(&tl->pairs, &tl->cappairs, tl->npairs + 1,
				sizeof(*tl->pairs), 1024))
			return -ENOMEM;
		tl->pairs[tl->npairs++] = p;
		out->npairs++;
	}
	return 0;
}

/* The stack of sample s. A per-sample profile repeats its stacks: they
 * are looked up by their location ids (seen: this input's), one hash per
 * sample rather than several per frame. *err on ENOMEM. */
static uint32_t sample_stack(struct timeline *tl, const struct pprofin *in,
			     const Perftools__Profiles__Sample *s,
			     struct hashmap *seen, int *err)
{
	static uint32_t frames[MAX_DEPTH];
	size_t len = s->n_location_id * sizeof(*s->location_id);
	uint64_t v;
	uint32_t st;
	int n;

	if (len && hashmap__get(seen, s->location_id, len, &v))
		return (uint32_t)v;
	n = frames_of(tl, in, s, frames, MAX_DEPTH);
	if (n < 0) {
		*err = n;
		return TL_NONE;
	}
	st = stack_of(tl, frames, (size_t)n, err);
	if (!*err && len && hashmap__put(seen, s->location_id, len, st))
		*err = -ENOMEM;
	return st;
}

static int add_sample(struct timeline *tl, const struct pprofin *in,
		      const Perftools__Profiles__Sample *s, int64_t t,
		      struct hashmap *seen)
{
	struct ident id = ident_of(in, s);
	struct tl_thread *th = thread_of(tl, &id);
	struct tl_sample smp = { .t_ns = t };
	int err = 0;

	if (!th)
		return -ENOMEM;
	smp.stack = sample_stack(tl, in, s, seen, &err);
	if (err || add_pairs(tl, in, s, &smp))
		return -ENOMEM;
	if (grow__array(&th->s, &th->cap, th->n + 1, sizeof(*th->s), 1024))
		return -ENOMEM;
	th->s[th->n++] = smp;
	if (t > tl->end_ns)
		tl->end_ns = t;
	return 0;
}

/* The sampling period in ns, where the profile says it is one (period
 * type cpu or wall, unit nanoseconds). */
static int64_t period_ns(const struct pprofin *in)
{
	const Perftools__Profiles__ValueType *pt = in->pr->period_type;

	if (!pt || in->pr->period <= 0 ||
	    strcmp(pprofin__str(in, pt->unit), "nanoseconds"))
		return 0;
	return in->pr->period;
}

int timeline__add(struct timeline *tl, const struct pprofin *in,
		  const struct merge_cut *cut, char *err, size_t errlen)
{
	const Perftools__Profiles__Profile *pr = in->pr;
	int64_t base = pr->time_nanos - tl->start_ns, t;
	struct hashmap *seen = hashmap__new(0);	/* location ids -> stack */
	int ret = 0;

	if (!seen) {
		errbuf__set(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}

	if (!tl->period_ns)
		tl->period_ns = period_ns(in);
	if (pr->time_nanos + pr->duration_nanos - tl->start_ns > tl->end_ns)
		tl->end_ns = pr->time_nanos + pr->duration_nanos - tl->start_ns;
	for (size_t i = 0; i < pr->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pr->sample[i];

		tl->counts.samples++;
		if (!merge_cut__keeps(cut, in, s, &tl->counts.untimed))
			continue;
		if (pprofin__sample_time(in, s, &t)) {
			tl->counts.untimed++;
			continue;
		}
		ret = add_sample(tl, in, s, base + t, seen);
		if (ret) {
			errbuf__set(err, errlen, "%s", strerror(-ret));
			break;
		}
		tl->counts.kept++;
	}
	hashmap__free(seen);
	return ret;
}

static int by_time(const void *a, const void *b)
{
	const struct tl_sample *x = a, *y = b;

	if (x->t_ns != y->t_ns)
		return x->t_ns < y->t_ns ? -1 : 1;
	/* the same time: the order they came in (qsort is not stable) */
	return x->pairs < y->pairs ? -1 : x->pairs > y->pairs;
}

static int by_ids(const void *a, const void *b)
{
	const struct tl_thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void timeline__sort(struct timeline *tl)
{
	for (size_t i = 0; i < tl->nthreads; i++)
		sort__array(tl->threads[i].s, tl->threads[i].n,
			    sizeof(*tl->threads[i].s), by_time);
	/* The index maps threads to their old places: it goes stale. */
	sort__array(tl->threads, tl->nthreads, sizeof(*tl->threads), by_ids);
	hashmap__free(tl->thread_ix);
	tl->thread_ix = NULL;
}

uint32_t timeline__value(const struct timeline *tl, const struct tl_sample *s,
			 uint32_t key)
{
	for (uint32_t i = 0; i < s->npairs; i++)
		if (tl->pairs[s->pairs + i].key == key)
			return tl->pairs[s->pairs + i].val;
	return TL_NONE;
}
