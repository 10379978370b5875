// SPDX-License-Identifier: BSD-2-Clause
/* The analysis of `tagprof report memory` (memory.h): buckets, working
 * set, skew, panels, and the report's views built from the samples. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report/memory.h"
#include "util/errbuf.h"
#include "util/grow.h"
#include "util/hashmap.h"
#include "util/sort.h"

/* ---- bucket sizes ---- */

/* The power of a size suffix, case aside; -1 if it is none. */
static int suffix_shift(const char *s)
{
	static const struct { const char *name; int shift; } units[] = {
		{ "", 0 }, { "b", 0 },
		{ "k", 10 }, { "kb", 10 }, { "kib", 10 },
		{ "m", 20 }, { "mb", 20 }, { "mib", 20 },
		{ "g", 30 }, { "gb", 30 }, { "gib", 30 },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcasecmp(s, units[i].name))
			return units[i].shift;
	return -1;
}

int mem_bucket__parse(const char *s, uint64_t *size, char *err,
		      size_t errlen)
{
	unsigned long long v;
	char *end;
	int shift;

	/* strtoull takes blanks, signs and hex: a size is plain digits */
	if (!s || *s < '0' || *s > '9')
		goto not_size;
	errno = 0;
	v = strtoull(s, &end, 10);
	shift = suffix_shift(end);
	if (errno || shift < 0)
		goto not_size;
	if (v > (MEM_BUCKET_MAX >> shift) || (v << shift) < MEM_BUCKET_MIN) {
		errbuf__set(err, errlen, "out of range: a bucket is 8 B to "
			    "1 GiB");
		return -EINVAL;
	}
	v <<= shift;
	if (v & (v - 1)) {
		errbuf__set(err, errlen, "%llu bytes is not a power of two "
			    "(use e.g. 64, 4K, 2M)", v);
		return -EINVAL;
	}
	*size = v;
	return 0;
not_size:
	errbuf__set(err, errlen, "not a size (use e.g. 64, 4K, 4KiB, 2M)");
	return -EINVAL;
}

const char *mem__size_text(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = {
		"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB",
	};
	size_t u = 0;

	while (u + 1 < sizeof(units) / sizeof(units[0]) &&
	       bytes >> (10 * (u + 1)))
		u++;
	if (!(bytes & ((1ull << (10 * u)) - 1)))
		snprintf(buf, len, "%" PRIu64 " %s", bytes >> (10 * u),
			 units[u]);
	else
		snprintf(buf, len, "%.1f %s",
			 (double)bytes / (double)(1ull << (10 * u)), units[u]);
	return buf;
}

const char *mem__range_text(uint64_t first, uint64_t last, unsigned shift,
			    char *buf, size_t len)
{
	uint64_t end = (last + 1) << shift;
	char size[32], endtxt[24];

	/* the last bucket of the address space ends at 2^64 */
	if (!end)
		snprintf(endtxt, sizeof(endtxt), "0x10000000000000000");
	else
		snprintf(endtxt, sizeof(endtxt), "0x%" PRIx64, end);
	mem__size_text(mem__span_bytes(first, last, shift), size,
		       sizeof(size));
	snprintf(buf, len, "0x%" PRIx64 "-%s (%s)", first << shift, endtxt,
		 size);
	return buf;
}

/* ---- buckets ---- */

static int by_idx(const void *a, const void *b)
{
	const struct mem_bucket *x = a, *y = b;

	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int mem__buckets(const struct mem_sample *s, size_t n, unsigned shift,
		 struct mem_bucket **out, size_t *nout)
{
	/* bucket index -> its place in b: counts for touched buckets only */
	struct hashmap *ix = hashmap__new(0);
	struct mem_bucket *b = NULL;
	size_t nb = 0, cap = 0;
	uint64_t at, idx;

	*out = NULL;
	*nout = 0;
	if (!ix)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		idx = s[i].addr >> shift;
		if (hashmap__get(ix, &idx, sizeof(idx), &at)) {
			b[at].n += s[i].n;
			continue;
		}
		if (grow__array(&b, &cap, nb + 1, sizeof(*b), 64) ||
		    hashmap__put(ix, &idx, sizeof(idx), nb)) {
			free(b);
			hashmap__free(ix);
			return -ENOMEM;
		}
		b[nb++] = (struct mem_bucket){ .idx = idx, .n = s[i].n };
	}
	hashmap__free(ix);
	sort__array(b, nb, sizeof(*b), by_idx);
	*out = b;
	*nout = nb;
	return 0;
}

/* floor(log2(v)) for v > 0. */
static unsigned log2_floor(uint64_t v)
{
	return 63 - (unsigned)__builtin_clzll(v);
}

size_t mem__working_set(const struct mem_bucket *b, size_t n,
			struct mem_ws_point *out)
{
	/* buckets by the power of two at or below their count: those with
	 * at least 2^j samples are the classes j and up */
	uint64_t class[MEM_WS_POINTS] = { 0 }, above = 0;
	int top = -1;

	for (size_t i = 0; i < n; i++) {
		unsigned c;

		if (!b[i].n)
			continue;
		c = log2_floor(b[i].n);
		class[c]++;
		top = (int)c > top ? (int)c : top;
	}
	for (int j = top; j >= 0; j--) {
		above += class[j];
		out[j] = (struct mem_ws_point){ .k = 1ull << j,
						.buckets = above };
	}
	return (size_t)(top + 1);
}

static int by_count_desc(const void *a, const void *b)
{
	const struct mem_bucket *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return by_idx(a, b);
}

int mem__skew(const struct mem_bucket *b, size_t n, struct mem_skew *out)
{
	struct mem_bucket *sorted;

	memset(out, 0, sizeof(*out));
	if (!n)
		return 0;
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, b, n * sizeof(*sorted));
	sort__array(sorted, n, sizeof(*sorted), by_count_desc);
	/* the top shares round up: one bucket of 50 is its top 1% */
	out->top1_n = (n + 99) / 100;
	out->top10_n = (n + 9) / 10;
	for (size_t i = 0; i < n; i++) {
		out->total += sorted[i].n;
		if (i < out->top1_n)
			out->top1 += sorted[i].n;
		if (i < out->top10_n)
			out->top10 += sorted[i].n;
	}
	out->ntop = n < MEM_TOP_BUCKETS ? n : MEM_TOP_BUCKETS;
	memcpy(out->top, sorted, out->ntop * sizeof(*sorted));
	free(sorted);
	return 0;
}

/* ---- panels ---- */

struct gap {
	size_t pos;		/* between b[pos] and b[pos + 1] */
	uint64_t len;		/* untouched buckets */
};

static int by_gap_desc(const void *a, const void *b)
{
	const struct gap *x = a, *y = b;

	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int by_pos(const void *a, const void *b)
{
	const struct gap *x = a, *y = b;

	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Whether the gaps g[0..k), out of the panel b[first..last]'s, part it:
 * together they are half its span or more (the panel is mostly empty at
 * their width), and the narrowest of them is far wider than one
 * structure sampled at random leaves: n points at random over a span S
 * leave a widest gap of about S/n (ln n + 0.6), and one of twice
 * (ln n + 1) S/n is a chance of about 1/(7n). */
static bool parts(const struct mem_bucket *b, size_t first, size_t last,
		  uint64_t sum, uint64_t narrowest)
{
	uint64_t span = b[last].idx - b[first].idx + 1;
	double n = (double)(last - first + 1);

	return sum >= span / 2 + span % 2 &&
	       (double)narrowest * n >= 2 * (double)span * (log(n) + 1);
}

/* The gaps that part panel b[first..last], by position, in g (room for
 * last - first): the widest ones, fewest that are half its span; at most
 * room. None when it fits in rows, a bucket a row. */
static size_t cuts_of(const struct mem_bucket *b, size_t first, size_t last,
		      uint64_t rows, struct gap *g, size_t room)
{
	uint64_t span = b[last].idx - b[first].idx + 1, sum = 0;
	size_t ng = 0, k = 0;

	if (span <= rows || !room)
		return 0;
	for (size_t i = first; i < last; i++) {
		uint64_t len = b[i + 1].idx - b[i].idx - 1;

		if (len)
			g[ng++] = (struct gap){ i, len };
	}
	sort__array(g, ng, sizeof(*g), by_gap_desc);
	while (k < ng && sum < span / 2 + span % 2)
		sum += g[k++].len;
	if (!k || !parts(b, first, last, sum, g[k - 1].len))
		return 0;
	k = k < room ? k : room;	/* the widest of them */
	sort__array(g, k, sizeof(*g), by_pos);
	return k;
}

struct piece {
	size_t first, last;	/* indices into the buckets */
};

/* Parts the pieces, breadth first: a piece is parted, and its parts in
 * turn, until none parts or there are max pieces; a part spans at most
 * half of its piece, so this goes at most 64 deep. queue: room for max;
 * the pieces that part no more into done, *ndone of them. */
static int split(const struct mem_bucket *b, size_t n, uint64_t rows,
		 size_t max, struct piece *queue, struct piece *done,
		 size_t *ndone)
{
	struct gap *g = malloc(n * sizeof(*g));
	size_t queued = 1, k;

	if (!g)
		return -ENOMEM;
	*ndone = 0;
	queue[0] = (struct piece){ 0, n - 1 };
	while (queued) {
		struct piece p = queue[0];
		size_t first = p.first;

		memmove(queue, queue + 1, --queued * sizeof(*queue));
		k = cuts_of(b, p.first, p.last, rows, g,
			    max - *ndone - queued - 1);
		if (!k) {
			done[(*ndone)++] = p;
			continue;
		}
		for (size_t i = 0; i <= k; i++) {
			size_t last = i < k ? g[i].pos : p.last;

			queue[queued++] = (struct piece){ first, last };
			first = last + 1;
		}
	}
	free(g);
	return 0;
}

static int piece_by_first(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

static int by_samples_desc(const void *a, const void *b, void *arg)
{
	const struct mem_panel *p = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (p[x].samples != p[y].samples)
		return p[x].samples > p[y].samples ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The panels with the most samples are drawn. */
static int mark_drawn(struct mem_panel *p, size_t n)
{
	size_t *order = malloc((n ? n : 1) * sizeof(*order));

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	sort__array_r(order, n, sizeof(*order), by_samples_desc, p);
	for (size_t i = 0; i < n && i < MEM_PANELS_DRAWN; i++)
		p[order[i]].drawn = true;
	free(order);
	return 0;
}

/* The panels of the pieces (by address). */
static void fill_panels(const struct mem_bucket *b, const struct piece *pc,
			size_t n, struct mem_panel *p)
{
	for (size_t i = 0; i < n; i++) {
		p[i] = (struct mem_panel){ .first = b[pc[i].first].idx,
					   .last = b[pc[i].last].idx,
					   .b0 = pc[i].first,
					   .nb = pc[i].last - pc[i].first + 1 };
		for (size_t j = pc[i].first; j <= pc[i].last; j++)
			p[i].samples += b[j].n;
	}
}

int mem__panels(const struct mem_bucket *b, size_t n, uint64_t rows,
		size_t max, struct mem_panel **out, size_t *nout)
{
	struct piece *pc;
	size_t np = 0;

	*out = NULL;
	*nout = 0;
	if (!n)
		return 0;
	max = max ? max : 1;
	/* the queue, then the pieces done */
	pc = malloc(2 * max * sizeof(*pc));
	if (!pc || split(b, n, rows, max, pc, pc + max, &np))
		goto nomem;
	sort__array(pc + max, np, sizeof(*pc), piece_by_first);
	*out = calloc(np, sizeof(**out));
	if (!*out)
		goto nomem;
	fill_panels(b, pc + max, np, *out);
	*nout = np;
	free(pc);
	if (!mark_drawn(*out, *nout))
		return 0;
	free(*out);
	*out = NULL;
	*nout = 0;
	return -ENOMEM;
nomem:
	free(pc);
	return -ENOMEM;
}

/* ---- the report's tables ---- */

struct memrep *memrep__new(const struct memrep_opts *o)
{
	struct memrep *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->bucket = o->bucket ? o->bucket : MEM_BUCKET_DEFAULT;
	m->shift = log2_floor(m->bucket);
	m->by = o->by;
	m->t0 = INT64_MAX;
	m->t1 = INT64_MIN;
	m->str_ix = hashmap__new(0);
	m->obj_ix = hashmap__new(0);
	m->noaddr_ix = hashmap__new(0);
	if (!m->str_ix || !m->obj_ix || !m->noaddr_ix) {
		memrep__free(m);
		return NULL;
	}
	return m;
}

void memrep__free(struct memrep *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nstr; i++)
		free(m->str[i]);
	for (size_t i = 0; i < m->nsets; i++) {
		free(m->sets[i].b);
		free(m->sets[i].p);
		free(m->sets[i].ws);
	}
	free(m->str);
	free(m->s);
	free(m->objs);
	free(m->sets);
	hashmap__free(m->str_ix);
	hashmap__free(m->obj_ix);
	hashmap__free(m->noaddr_ix);
	free(m->noaddr);
	free(m);
}

uint32_t memrep__intern(struct memrep *m, const char *s)
{
	uint64_t v;
	char *copy;

	if (hashmap__get(m->str_ix, s, strlen(s), &v))
		return (uint32_t)v;
	if (m->nstr >= MEM_NOVAL - 1 ||
	    grow__array(&m->str, &m->capstr, m->nstr + 1, sizeof(*m->str),
			64))
		return MEM_NONE;
	copy = strdup(s);
	if (!copy || hashmap__put(m->str_ix, s, strlen(s), m->nstr)) {
		free(copy);
		return MEM_NONE;
	}
	m->str[m->nstr] = copy;
	return (uint32_t)m->nstr++;
}

/* Objects that say the address was not found in any mapping. */
static bool unresolved_name(const char *name)
{
	return !*name || !strcmp(name, "[unmapped]") ||
	       !strcmp(name, "[unknown]") || !strcmp(name, "(no data_object)");
}

uint32_t memrep__object(struct memrep *m, uint32_t name, uint64_t pid)
{
	uint64_t v;
	struct mem_obj *o;

	if (hashmap__get(m->obj_ix, &name, sizeof(name), &v)) {
		o = &m->objs[v];
		o->pids |= o->pid != pid;
		return (uint32_t)v;
	}
	if (grow__array(&m->objs, &m->capobjs, m->nobjs + 1, sizeof(*m->objs),
			16) ||
	    hashmap__put(m->obj_ix, &name, sizeof(name), m->nobjs))
		return MEM_NONE;
	m->objs[m->nobjs] = (struct mem_obj){
		.name = name, .pid = pid,
		.resolved = !unresolved_name(memrep__str(m, name)) };
	return (uint32_t)m->nobjs++;
}

int memrep__add_sample(struct memrep *m, const struct mem_sample *s)
{
	if (s->obj >= m->nobjs ||
	    grow__array(&m->s, &m->caps, m->ns + 1, sizeof(*m->s), 1024))
		return -ENOMEM;
	m->s[m->ns++] = *s;
	m->objs[s->obj].samples += s->n;
	if (s->t_ns != MEM_NO_TIME) {
		m->t0 = s->t_ns < m->t0 ? s->t_ns : m->t0;
		m->t1 = s->t_ns > m->t1 ? s->t_ns : m->t1;
	}
	return 0;
}

/* ---- memrep__finish ---- */

static int obj_by_samples(const void *a, const void *b, void *arg)
{
	const struct memrep *m = arg;
	const struct mem_obj *x = &m->objs[*(const uint32_t *)a],
			     *y = &m->objs[*(const uint32_t *)b];

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(memrep__str(m, x->name), memrep__str(m, y->name));
}

/* Objects by samples, the samples' indices with them. */
static int order_objects(struct memrep *m)
{
	uint32_t *order = malloc((m->nobjs + 1) * sizeof(*order));
	uint32_t *place = malloc((m->nobjs + 1) * sizeof(*place));
	struct mem_obj *objs = malloc((m->nobjs + 1) * sizeof(*objs));

	if (!order || !place || !objs) {
		free(order);
		free(place);
		free(objs);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < m->nobjs; i++)
		order[i] = i;
	sort__array_r(order, m->nobjs, sizeof(*order), obj_by_samples, m);
	for (uint32_t i = 0; i < m->nobjs; i++) {
		objs[i] = m->objs[order[i]];
		place[order[i]] = i;
	}
	for (size_t i = 0; i < m->ns; i++)
		m->s[i].obj = place[m->s[i].obj];
	free(m->objs);
	m->objs = objs;
	m->capobjs = m->nobjs + 1;
	free(order);
	free(place);
	return 0;
}

static int by_obj_comp(const void *a, const void *b)
{
	const struct mem_sample *x = a, *y = b;

	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	return x->comp < y->comp ? -1 : x->comp > y->comp;
}

/* st's working-set curve, in an array of its size. */
static int set_working_set(struct mem_set *st)
{
	struct mem_ws_point ws[MEM_WS_POINTS];

	st->nws = mem__working_set(st->b, st->nb, ws);
	st->ws = malloc((st->nws ? st->nws : 1) * sizeof(*ws));
	if (!st->ws)
		return -ENOMEM;
	memcpy(st->ws, ws, st->nws * sizeof(*ws));
	return 0;
}

/* The numbers of set st, from its samples. */
static int analyze_set(struct memrep *m, struct mem_set *st)
{
	int err;

	for (size_t i = st->first; i < st->first + st->n; i++) {
		const struct mem_sample *s = &m->s[i];

		st->samples += s->n;
		st->untimed += s->t_ns == MEM_NO_TIME ? s->n : 0;
		st->weighted += s->has_weight ? s->n : 0;
		st->weight += s->has_weight ? s->weight : 0;
	}
	err = mem__buckets(m->s + st->first, st->n, m->shift, &st->b, &st->nb);
	if (!err)
		err = mem__panels(st->b, st->nb, MEM_PANEL_ROWS, MEM_SPLIT_MAX,
				  &st->p, &st->np);
	if (!err)
		err = mem__skew(st->b, st->nb, &st->skew);
	if (!err)
		err = set_working_set(st);
	return err;
}

static int set_by_samples(const void *a, const void *b, void *arg)
{
	const struct memrep *m = arg;
	const struct mem_set *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	/* samples without the key last among equals */
	if (x->comp == MEM_NOVAL || y->comp == MEM_NOVAL)
		return (x->comp == MEM_NOVAL) - (y->comp == MEM_NOVAL);
	return strcmp(memrep__str(m, x->comp), memrep__str(m, y->comp));
}

/* Sets of object o (samples [first, end)): the whole, then one per --by
 * value, by samples. */
static int object_sets(struct memrep *m, uint32_t o, size_t first,
		       size_t end, size_t *nsets)
{
	struct mem_obj *obj = &m->objs[o];
	size_t i = first, j;

	obj->set = (*nsets)++;
	m->sets[obj->set] = (struct mem_set){
		.obj = o, .comp = MEM_NONE, .first = first, .n = end - first };
	obj->comp0 = *nsets;
	for (; m->by && i < end; i = j) {
		for (j = i; j < end && m->s[j].comp == m->s[i].comp; j++)
			;
		m->sets[(*nsets)++] = (struct mem_set){
			.obj = o, .comp = m->s[i].comp, .first = i,
			.n = j - i };
	}
	obj->ncomps = *nsets - obj->comp0;
	for (size_t k = obj->set; k < *nsets; k++)
		if (analyze_set(m, &m->sets[k]))
			return -ENOMEM;
	sort__array_r(m->sets + obj->comp0, obj->ncomps, sizeof(*m->sets),
		      set_by_samples, m);
	return 0;
}

/* The curve over every object: their buckets are apart (an object's
 * bucket is its own), so the counts add up; and the latency. */
static void total_working_set(struct memrep *m)
{
	for (size_t o = 0; o < m->nobjs; o++) {
		const struct mem_set *st = &m->sets[m->objs[o].set];

		m->buckets_all += st->nb;
		m->weight += st->weight;
		for (size_t k = 0; k < st->nws; k++) {
			m->ws[k].k = st->ws[k].k;
			m->ws[k].buckets += st->ws[k].buckets;
		}
		m->nws = st->nws > m->nws ? st->nws : m->nws;
	}
}

/* The --by values among the samples: the distinct values of the sets. */
static int count_comps(struct memrep *m)
{
	bool *seen;

	m->ncomps = 0;
	if (!m->by)
		return 0;
	seen = calloc(m->nstr + 1, sizeof(*seen));
	if (!seen)
		return -ENOMEM;
	for (size_t i = 0; i < m->nsets; i++) {
		uint32_t c = m->sets[i].comp;
		size_t slot = c == MEM_NOVAL ? m->nstr : c;

		if (c == MEM_NONE || seen[slot])
			continue;
		seen[slot] = true;
		m->ncomps++;
	}
	free(seen);
	return 0;
}

/* A whole set per object, and with --by one per (object, value): the
 * runs of the sorted samples. */
static size_t count_sets(const struct memrep *m)
{
	size_t n = m->nobjs;

	for (size_t i = 0; m->by && i < m->ns; i++)
		if (!i || by_obj_comp(&m->s[i - 1], &m->s[i]))
			n++;
	return n;
}

int memrep__finish(struct memrep *m)
{
	size_t nsets = 0, first = 0, end;

	if (order_objects(m))
		return -ENOMEM;
	sort__array(m->s, m->ns, sizeof(*m->s), by_obj_comp);
	m->sets = calloc(count_sets(m) + 1, sizeof(*m->sets));
	if (!m->sets)
		return -ENOMEM;
	for (uint32_t o = 0; o < m->nobjs; o++, first = end) {
		for (end = first; end < m->ns && m->s[end].obj == o; end++)
			;
		m->nsets = nsets;
		if (object_sets(m, o, first, end, &nsets)) {
			m->nsets = nsets;
			return -ENOMEM;
		}
	}
	m->nsets = nsets;
	total_working_set(m);
	return count_comps(m);
}
