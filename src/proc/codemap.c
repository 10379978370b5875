// SPDX-License-Identifier: BSD-2-Clause
/* A process's code-region table, followed (codemap.h). */
#include "proc/codemap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/procfs.h"
#include "util/clock.h"
#include "util/hashmap.h"
#include "util/utf8.h"

#define CHUNK		(256u << 10)	/* bytes read of the table at once */
#define SIDS_MAX	(1u << 20)	/* string or set ids a table may define */
#define READ_TRIES	3		/* reads of a table switching under them */
#define SCAN_MAX	4096		/* regions looked at for one address */
#define ORDER_MAX	256		/* bytes of the level-order string */

/* A set as the table defined it: a name and levels, interned. */
struct set_def {
	const char *name;
	const struct code_levels *levels;	/* NULL: undefined */
};

/* A region and the pass of the table reads that last saw it added. */
struct slot {
	struct code_region r;
	uint32_t pass;
};

struct codemap {
	uint32_t pid;
	uint64_t anchor;
	/* the table being read */
	uint64_t gen, table, offset;
	bool have_gen, broken;
	bool switching;			/* reading a new table from its start */
	uint64_t switch_ns;		/* its base_ns */
	uint32_t pass;
	const char **sids;		/* the table's strings, by id - 1 */
	size_t nsids;
	struct set_def *sets;		/* the table's sets, by id - 1 */
	size_t nsets;
	uint64_t read_ns;		/* when the last read began */
	/* When the last read that reached the end of the table began: a
	 * live region is known live up to then only, for it may have been
	 * dropped since. UINT64_MAX: no read was ever tried (records given
	 * to codemap__apply alone). */
	uint64_t known_ns;
	uint64_t sampled_ns;		/* the last sample attributed against it */
	uint64_t pruned_ns;
	/* regions: a pool in arrival order, and its order by (start, from) */
	struct slot *r;
	size_t n, cap;
	uint32_t *order;
	size_t nsorted;			/* order's first n entries are sorted */
	size_t checked;			/* pool entries checked for overlaps */
	uint64_t maxlen;		/* the longest region's length */
	uint64_t lo, hi;		/* all regions lie in [lo, hi) */
	struct hashmap *by_id;		/* region id -> pool index */
	struct hashmap *strs;		/* interned strings */
	struct hashmap *levels;		/* interned level sets */
	size_t str_bytes;
	size_t collected_bytes;		/* codemap__bytes after the last collect */
	char order_str[ORDER_MAX];
	uint32_t order_n;
	uint64_t samples, attributed, win_samples, win_attributed;
};

struct codemap *codemap__new(uint32_t pid, uint64_t anchor)
{
	struct codemap *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->pid = pid;
	m->anchor = anchor;
	m->known_ns = UINT64_MAX;
	m->by_id = hashmap__new(0);
	m->strs = hashmap__new(HASHMAP_BORROW_KEYS);
	m->levels = hashmap__new(HASHMAP_BORROW_KEYS);
	if (!m->by_id || !m->strs || !m->levels) {
		codemap__free(m);
		return NULL;
	}
	return m;
}

static void free_ptr(void *p)
{
	free(p);
}

void codemap__free(struct codemap *m)
{
	if (!m)
		return;
	hashmap__free(m->by_id);
	hashmap__free_values(m->strs, free_ptr);
	hashmap__free_values(m->levels, free_ptr);
	free(m->sids);
	free(m->sets);
	free(m->r);
	free(m->order);
	free(m);
}

/* ---- interning ---- */

/* s[0..len) as one interned, sanitized string; NULL over the bounds. */
static const char *intern(struct codemap *m, const char *s, size_t len,
			  struct codemap_stats *st)
{
	char tmp[4 * TP_CODE_STR_MAX + 8], *copy;
	uint64_t v;
	size_t n;

	utf8__sanitize((const uint8_t *)s, len, tmp, sizeof(tmp));
	n = strlen(tmp);
	if (hashmap__get(m->strs, tmp, n, &v))
		return (const char *)(uintptr_t)v;
	if (m->str_bytes + n + 1 > CODEMAP_STRS_MAX) {
		st->over_budget++;
		return NULL;
	}
	copy = strdup(tmp);
	if (!copy)
		return NULL;
	if (hashmap__put(m->strs, copy, n, (uint64_t)(uintptr_t)copy)) {
		free(copy);
		return NULL;
	}
	m->str_bytes += n + 1;
	return copy;
}

/* A level set and its hash key: the key and value pointers, packed
 * (strings are interned, so the pointers are their identity). */
struct levels_entry {
	struct code_levels lv;
	const char *packed[2 * TP_CODE_LEVELS_MAX];
};

static const struct code_levels *intern_levels(struct codemap *m,
					       const struct code_levels *lv)
{
	struct levels_entry *e = malloc(sizeof(*e));
	size_t klen = 2 * lv->n * sizeof(e->packed[0]);
	uint64_t v;

	if (!e)
		return NULL;
	e->lv = *lv;
	memcpy(e->packed, lv->key, lv->n * sizeof(lv->key[0]));
	memcpy(e->packed + lv->n, lv->val, lv->n * sizeof(lv->val[0]));
	if (hashmap__get(m->levels, e->packed, klen, &v)) {
		free(e);
		return &((struct levels_entry *)(uintptr_t)v)->lv;
	}
	if (hashmap__put(m->levels, e->packed, klen, (uint64_t)(uintptr_t)e)) {
		free(e);
		return NULL;
	}
	return &e->lv;
}

/* ---- collecting what nothing names ---- */

/* s into keep, the map of strings still named. */
static int keep_str(struct hashmap *keep, const char *s)
{
	return s ? hashmap__put(keep, s, strlen(s), (uint64_t)(uintptr_t)s) : 0;
}

/* lv (interned: a levels_entry) and its strings into the maps kept. */
static int keep_levels(struct hashmap *keep_lv, struct hashmap *keep,
		       const struct code_levels *lv)
{
	const struct levels_entry *e = (const struct levels_entry *)lv;
	int err = 0;

	if (!lv)
		return 0;
	for (uint32_t i = 0; i < lv->n && !err; i++)
		err = keep_str(keep, lv->key[i]) ?: keep_str(keep, lv->val[i]);
	return err ?: hashmap__put(keep_lv, e->packed,
				   2 * lv->n * sizeof(e->packed[0]),
				   (uint64_t)(uintptr_t)e);
}

/* Frees every entry of old that keep lacks. */
static void sweep(struct hashmap *old, const struct hashmap *keep)
{
	const void *key;
	size_t it = 0, len;
	uint64_t v;

	while (hashmap__next(old, &it, &key, &len, &v))
		if (!hashmap__get(keep, key, len, NULL))
			free((void *)(uintptr_t)v);
}

/* Frees the interned strings and level sets that nothing names any more:
 * neither the current table's ids nor a region still kept. Each table
 * switch leaves the old table's strings behind, and the regions pruned
 * leave theirs; without this a JIT that compiles a query a second would
 * reach CODEMAP_STRS_MAX within hours, and its new code would go unnamed.
 * On an allocation failure nothing is freed. */
static void collect(struct codemap *m)
{
	struct hashmap *keep = hashmap__new(HASHMAP_BORROW_KEYS);
	struct hashmap *keep_lv = hashmap__new(HASHMAP_BORROW_KEYS);
	const void *key;
	size_t it = 0, len;
	int err = !keep || !keep_lv;

	for (size_t i = 0; i < m->nsids && !err; i++)
		err = keep_str(keep, m->sids[i]);
	for (size_t i = 0; i < m->nsets && !err; i++)
		err = keep_str(keep, m->sets[i].name) ?:
		      keep_levels(keep_lv, keep, m->sets[i].levels);
	for (size_t i = 0; i < m->n && !err; i++)
		err = keep_str(keep, m->r[i].r.name) ?:
		      keep_levels(keep_lv, keep, m->r[i].r.levels);
	if (err) {
		hashmap__free(keep);
		hashmap__free(keep_lv);
		return;
	}
	sweep(m->strs, keep);
	sweep(m->levels, keep_lv);
	hashmap__free(m->strs);
	hashmap__free(m->levels);
	m->strs = keep;
	m->levels = keep_lv;
	m->str_bytes = 0;
	while (hashmap__next(keep, &it, &key, &len, NULL))
		m->str_bytes += len + 1;
	m->collected_bytes = codemap__bytes(m);
}

/* ---- applying records ---- */

static bool key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

/* "key=value" into level i of lv; false when it is not one. */
static bool split_level(struct codemap *m, const char *s, struct code_levels *lv,
			uint32_t i, struct codemap_stats *st)
{
	const char *eq = strchr(s, '=');
	size_t klen = eq ? (size_t)(eq - s) : 0;

	if (!klen || klen > TP_CODE_KEY_MAX)
		return false;
	for (size_t k = 0; k < klen; k++)
		if (!key_char(s[k]))
			return false;
	lv->key[i] = intern(m, s, klen, st);
	lv->val[i] = intern(m, eq + 1, strlen(eq + 1), st);
	return lv->key[i] && lv->val[i];
}

static const char *sid_str(const struct codemap *m, uint32_t id)
{
	return id && id <= m->nsids ? m->sids[id - 1] : NULL;
}

/* Makes room for id in an array of *n elements of elem bytes, zeroed. */
static bool id_room(void **v, size_t *n, uint64_t id, size_t elem)
{
	size_t cap = *n ? *n : 64;
	void *p;

	if (!id || id > SIDS_MAX)
		return false;
	if (id <= *n)
		return true;
	while (cap < id)
		cap *= 2;
	p = realloc(*v, cap * elem);
	if (!p)
		return false;
	memset((char *)p + *n * elem, 0, (cap - *n) * elem);
	*v = p;
	*n = cap;
	return true;
}

static bool apply_str(struct codemap *m, const uint8_t *rec,
		      const struct tp_code_rec *h, struct codemap_stats *st)
{
	if (h->count > TP_CODE_STR_MAX || h->size < sizeof(*h) + h->count ||
	    !id_room((void **)&m->sids, &m->nsids, h->id, sizeof(*m->sids)))
		return false;
	m->sids[h->id - 1] = intern(m, (const char *)rec + sizeof(*h), h->count, st);
	return m->sids[h->id - 1] != NULL;
}

/* The level order string from a set with more levels than seen yet. */
static void note_order(struct codemap *m, const struct code_levels *lv)
{
	size_t off = 0;

	if (lv->n <= m->order_n)
		return;
	m->order_n = lv->n;
	m->order_str[0] = '\0';
	for (uint32_t i = lv->n; i-- > 0 && off < sizeof(m->order_str);)
		off += snprintf(m->order_str + off, sizeof(m->order_str) - off,
				"%s%s", i + 1 < lv->n ? " > " : "", lv->key[i]);
}

static bool apply_set(struct codemap *m, const uint8_t *rec,
		      const struct tp_code_rec *h, struct codemap_stats *st)
{
	struct code_levels lv = { .n = h->count };
	struct tp_code_set s;
	struct set_def d = { 0 };

	if (h->count > TP_CODE_LEVELS_MAX ||
	    h->size < sizeof(s) + h->count * sizeof(uint32_t) ||
	    !id_room((void **)&m->sets, &m->nsets, h->id, sizeof(*m->sets)))
		return false;
	memcpy(&s, rec, sizeof(s));
	for (uint32_t i = 0; i < lv.n; i++) {
		uint32_t sid;
		const char *str;

		memcpy(&sid, rec + sizeof(s) + i * sizeof(sid), sizeof(sid));
		str = sid_str(m, sid);
		if (!str || !split_level(m, str, &lv, i, st))
			return false;
	}
	d.name = s.name ? sid_str(m, s.name) : NULL;
	d.levels = intern_levels(m, &lv);
	if ((s.name && !d.name) || !d.levels)
		return false;
	note_order(m, d.levels);
	m->sets[h->id - 1] = d;
	return true;
}

static bool region_push(struct codemap *m, const struct code_region *r)
{
	struct slot *pool;
	uint32_t *order;
	size_t cap;

	if (m->n == m->cap) {
		cap = m->cap ? m->cap * 2 : 256;
		pool = realloc(m->r, cap * sizeof(*pool));
		if (!pool)
			return false;
		m->r = pool;
		order = realloc(m->order, cap * sizeof(*order));
		if (!order)
			return false;
		m->order = order;
		m->cap = cap;
	}
	if (hashmap__put(m->by_id, &r->id, sizeof(r->id), m->n))
		return false;
	m->r[m->n] = (struct slot){ *r, m->pass };
	if (!m->n || r->start < m->lo)
		m->lo = r->start;
	if (r->end > m->hi)
		m->hi = r->end;
	m->order[m->n] = (uint32_t)m->n;
	m->n++;
	if (r->end - r->start > m->maxlen)
		m->maxlen = r->end - r->start;
	return true;
}

/* One span of an ADD: false when it is bad. */
static bool add_span(struct codemap *m, uint64_t id, uint64_t t,
		     const struct tp_code_span *sp, struct codemap_stats *st)
{
	const struct set_def *d;
	uint64_t idx;

	/* Known: the new table of a compaction adds the live ones again. */
	if (hashmap__get(m->by_id, &id, sizeof(id), &idx)) {
		m->r[idx].pass = m->pass;
		return m->switching;
	}
	d = sp->set && sp->set <= m->nsets ? &m->sets[sp->set - 1] : NULL;
	if (!d || !d->levels || !sp->len || sp->start + sp->len < sp->start)
		return false;
	if (m->n >= CODEMAP_REGIONS_MAX) {
		st->over_budget++;
		return true;
	}
	if (!region_push(m, &(struct code_region){
			.start = sp->start, .end = sp->start + sp->len,
			.from_ns = t, .to_ns = UINT64_MAX, .id = id,
			.name = d->name, .levels = d->levels }))
		return false;
	st->added++;
	return true;
}

/* An ADD: each bad span is a bad record of its own. */
static bool apply_add(struct codemap *m, const uint8_t *rec,
		      const struct tp_code_rec *h, struct codemap_stats *st)
{
	struct tp_code_add a;

	if (h->count > TP_CODE_SPANS_MAX ||
	    h->size < sizeof(a) + h->count * sizeof(struct tp_code_span) ||
	    h->id + h->count < h->id)
		return false;
	memcpy(&a, rec, sizeof(a));
	for (uint32_t i = 0; i < h->count; i++) {
		struct tp_code_span sp;

		memcpy(&sp, rec + sizeof(a) + i * sizeof(sp), sizeof(sp));
		if (!add_span(m, h->id + i, a.time_ns, &sp, st))
			st->bad_records++;
	}
	return true;
}

static bool apply_drop(struct codemap *m, const uint8_t *rec,
		       const struct tp_code_rec *h, struct codemap_stats *st)
{
	struct tp_code_drop d;
	uint64_t idx;

	if (h->size < sizeof(d) ||
	    !hashmap__get(m->by_id, &h->id, sizeof(h->id), &idx))
		return false;
	memcpy(&d, rec, sizeof(d));
	if (m->r[idx].r.to_ns == UINT64_MAX) {
		m->r[idx].r.to_ns = d.time_ns;
		st->dropped++;
	}
	return true;
}

static bool apply_one(struct codemap *m, const uint8_t *rec,
		      const struct tp_code_rec *h, struct codemap_stats *st)
{
	switch (h->kind) {
	case TP_CODE_REC_STR:
		return apply_str(m, rec, h, st);
	case TP_CODE_REC_SET:
		return apply_set(m, rec, h, st);
	case TP_CODE_REC_ADD:
		return apply_add(m, rec, h, st);
	case TP_CODE_REC_DROP:
		return apply_drop(m, rec, h, st);
	default:
		return true;	/* a later version's record: skipped */
	}
}

size_t codemap__apply(struct codemap *m, const uint8_t *buf, size_t len,
		      struct codemap_stats *st)
{
	size_t pos = 0;

	/* Fields are read with memcpy: the bytes are the process's, and
	 * nothing makes buf aligned. */
	while (!m->broken && len - pos >= sizeof(struct tp_code_rec)) {
		struct tp_code_rec h;

		memcpy(&h, buf + pos, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > TP_CODE_TABLE_MAX) {
			m->broken = true;
			st->bad_records++;
			break;
		}
		if (h.size > len - pos)
			break;		/* the rest is in the next read */
		if (!apply_one(m, buf + pos, &h, st))
			st->bad_records++;
		pos += h.size;
	}
	return pos;
}

void codemap__switch(struct codemap *m, uint64_t base_ns)
{
	m->switching = true;
	m->switch_ns = base_ns;
	m->pass++;
	m->offset = 0;
	m->broken = false;
	/* String and set ids belong to a table. */
	if (m->sids)
		memset(m->sids, 0, m->nsids * sizeof(*m->sids));
	if (m->sets)
		memset(m->sets, 0, m->nsets * sizeof(*m->sets));
}

void codemap__switch_done(struct codemap *m)
{
	if (!m->switching)
		return;
	m->switching = false;
	/* Live, and not in the new table: dropped before it was made. */
	for (size_t i = 0; i < m->n; i++) {
		struct slot *s = &m->r[i];

		if (s->r.to_ns == UINT64_MAX && s->pass != m->pass) {
			s->r.to_ns = m->switch_ns;
		}
	}
}

/* ---- lookups ---- */

static int by_start(const void *a, const void *b, void *arg)
{
	const struct slot *r = arg;
	const struct code_region *x = &r[*(const uint32_t *)a].r;
	const struct code_region *y = &r[*(const uint32_t *)b].r;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->from_ns != y->from_ns)
		return x->from_ns < y->from_ns ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Sorts the regions added since the last sort and merges them in, from
 * the back: only the new ones are copied out, and only the sorted ones
 * above the smallest of them move. */
static void sort_new(struct codemap *m)
{
	size_t na = m->nsorted, nb = m->n - m->nsorted, out = m->n;
	uint32_t *b;

	if (!nb)
		return;
	qsort_r(m->order + na, nb, sizeof(*m->order), by_start, m->r);
	b = malloc(nb * sizeof(*b));
	if (!b) {
		/* No room to merge: sort it all in place. */
		qsort_r(m->order, m->n, sizeof(*m->order), by_start, m->r);
		m->nsorted = m->n;
		return;
	}
	memcpy(b, m->order + na, nb * sizeof(*b));
	while (nb) {
		if (na && by_start(&m->order[na - 1], &b[nb - 1], m->r) > 0)
			m->order[--out] = m->order[--na];
		else
			m->order[--out] = b[--nb];
	}
	free(b);
	m->nsorted = m->n;
}

/* How many regions in order start at or below addr. */
static size_t upper(const struct codemap *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nsorted;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->r[m->order[mid]].r.start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Two regions over the same code at once: the older one ends when the
 * newer one began, whether or not a drop of it came in the same batch of
 * records (so the order the records were read in does not matter). After
 * each batch, for the regions it added (pool index first_new on) against
 * those in reach of them; counted in st when not NULL. */
static void end_overlaps(struct codemap *m, size_t first_new,
			 struct codemap_stats *st)
{
	for (size_t k = first_new; k < m->n; k++) {
		struct code_region *r = &m->r[k].r, *older, *newer;
		size_t i = upper(m, r->end - 1), seen = 0;

		while (i-- > 0 && seen++ < SCAN_MAX) {
			struct code_region *o = &m->r[m->order[i]].r;

			if (o->start < r->start && r->start - o->start >= m->maxlen)
				break;
			if (o == r || o->end <= r->start)
				continue;
			older = o->id < r->id ? o : r;
			newer = older == r ? o : r;
			if (older->to_ns <= newer->from_ns)
				continue;
			older->to_ns = newer->from_ns;
			if (st)
				st->overlapped++;
		}
	}
}

static void settle(struct codemap *m, struct codemap_stats *st)
{
	sort_new(m);
	end_overlaps(m, m->checked, st);
	m->checked = m->n;
}

/* The region holding addr at t; a live one only when t is not past what
 * the last read knew (*unknown set when that refused one). */
static const struct code_region *find(struct codemap *m, uint64_t addr,
				      uint64_t t, bool *unknown)
{
	const struct code_region *best = NULL;
	size_t i, seen = 0;

	/* Most frames of most stacks are in no generated code at all. */
	if (addr < m->lo || addr >= m->hi)
		return NULL;
	/* Records applied without a refresh (codemap__apply alone). */
	if (m->nsorted != m->n)
		settle(m, NULL);
	i = upper(m, addr);

	/* Back from the last region starting at or below addr, while one
	 * could still reach it; the newest that holds addr at t wins. */
	while (i-- > 0 && seen++ < SCAN_MAX) {
		const struct code_region *r = &m->r[m->order[i]].r;

		if (addr - r->start >= m->maxlen)
			break;
		if (addr >= r->end || r->from_ns > t || t >= r->to_ns ||
		    (best && r->from_ns <= best->from_ns))
			continue;
		if (r->to_ns == UINT64_MAX && t > m->known_ns) {
			*unknown = true;
			continue;
		}
		best = r;
	}
	return best;
}

const struct code_region *codemap__find(struct codemap *m, uint64_t addr,
					uint64_t t)
{
	bool unknown = false;

	return find(m, addr, t, &unknown);
}

/* ---- reading the process's table ---- */

static int read_anchor(const struct codemap *m, struct tp_code_anchor *a)
{
	int err = procfs__read_mem(m->pid, m->anchor, a, sizeof(*a));

	if (err)
		return err;
	if (memcmp(a->magic, TP_CODE_MAGIC, sizeof(a->magic)) ||
	    a->version != TP_CODE_VERSION || a->anchor_size < sizeof(*a))
		return -EINVAL;
	return 0;
}

/* Reads the table from m->offset to used, a chunk at a time, each kept
 * only when the generation did not move while it was read. 0, -EAGAIN
 * (it moved), or -errno. */
static int read_records(struct codemap *m, const struct tp_code_anchor *a,
			struct codemap_stats *st)
{
	uint64_t used = a->used < a->size ? a->used : a->size;
	struct tp_code_anchor again;
	size_t len, done;
	uint8_t *buf;
	int err = 0;

	if (used > TP_CODE_TABLE_MAX)
		used = TP_CODE_TABLE_MAX;
	if (m->offset >= used)
		return 0;
	/* As much as is new, up to a chunk, and only while reading: a
	 * process that appends a region at a time costs a small buffer. */
	buf = malloc(used - m->offset < CHUNK ? used - m->offset : CHUNK);
	if (!buf)
		return -ENOMEM;
	while (m->offset < used && !m->broken) {
		len = used - m->offset < CHUNK ? used - m->offset : CHUNK;
		err = procfs__read_mem(m->pid, m->table + m->offset, buf, len);
		if (!err)
			err = read_anchor(m, &again);
		if (!err && again.gen != a->gen)
			err = -EAGAIN;
		if (err)
			break;
		done = codemap__apply(m, buf, len, st);
		/* Nothing whole in a full read: a record runs past what the
		 * process says it wrote, or is larger than a chunk (its size
		 * under TP_CODE_TABLE_MAX). Reading the same bytes again
		 * would never end. */
		if (!done && !m->broken) {
			m->broken = true;
			st->bad_records++;
		}
		m->offset += done;
	}
	free(buf);
	return err;
}

static int refresh_once(struct codemap *m, struct codemap_stats *st)
{
	struct tp_code_anchor a;
	int err = read_anchor(m, &a);

	if (err)
		return err;
	if (a.gen & 1)
		return -EAGAIN;
	if (!m->have_gen || a.gen != m->gen || a.table != m->table) {
		if (!m->have_gen)
			st->tables++;
		m->have_gen = true;
		m->gen = a.gen;
		m->table = a.table;
		codemap__switch(m, a.base_ns);
	}
	if (!a.table)
		return 0;
	err = read_records(m, &a, st);
	if (!err && m->offset >= (a.used < a.size ? a.used : a.size))
		codemap__switch_done(m);
	return err;
}

int codemap__refresh(struct codemap *m, uint64_t now_ns,
		     struct codemap_stats *st)
{
	int err = -EAGAIN;

	m->read_ns = now_ns;
	if (m->known_ns == UINT64_MAX)
		m->known_ns = 0;
	for (int i = 0; i < READ_TRIES && err == -EAGAIN; i++) {
		err = refresh_once(m, st);
		if (err == -EAGAIN)
			st->torn_reads++;
	}
	if (!err && !m->broken)
		m->known_ns = now_ns;
	/* A process gone is no failure (its samples newer than the last
	 * read are counted apart, codemap__attribute). */
	if (err && err != -EAGAIN && err != -ESRCH)
		st->unreadable++;
	settle(m, st);
	if (now_ns - m->pruned_ns > CODEMAP_KEEP_NS / 2)
		codemap__prune(m, now_ns);
	return err;
}

const struct code_region *codemap__attribute(struct codemap *m,
					     const uint64_t *user, size_t nu,
					     uint64_t t, bool *leaf,
					     struct codemap_stats *st)
{
	const struct code_region *r = NULL;
	bool unknown = false;

	if (t >= m->read_ns)
		codemap__refresh(m, clock__mono_ns(), st);
	m->sampled_ns = clock__mono_ns();
	for (size_t i = 0; i < nu && !r && !unknown; i++) {
		/* A caller's frame is its return address: the call is the
		 * byte before, and may be the region's last. */
		r = find(m, i ? user[i] - 1 : user[i], t, &unknown);
		*leaf = i == 0;
	}
	/* Its innermost region in reach was live at the last read, which
	 * came before the sample, and none can come now (the process is
	 * gone): it may have been dropped and its code reused. */
	if (unknown && !r)
		st->unverified++;
	m->samples++;
	m->win_samples++;
	st->samples++;
	if (r) {
		m->attributed++;
		m->win_attributed++;
		st->attributed++;
	}
	return r;
}

/* ---- upkeep ---- */

void codemap__prune(struct codemap *m, uint64_t now_ns)
{
	size_t k = 0;

	/* What is pending first: the pool is about to move. */
	settle(m, NULL);
	m->pruned_ns = now_ns;
	for (size_t i = 0; i < m->n; i++) {
		struct slot *s = &m->r[i];

		if (s->r.to_ns != UINT64_MAX && s->r.to_ns + CODEMAP_KEEP_NS < now_ns) {
			hashmap__del(m->by_id, &s->r.id, sizeof(s->r.id), NULL);
			continue;
		}
		if (k != i) {
			m->r[k] = *s;
			hashmap__put(m->by_id, &s->r.id, sizeof(s->r.id), k);
		}
		k++;
	}
	if (k != m->n) {
		m->n = k;
		m->maxlen = 0;
		for (size_t i = 0; i < m->n; i++) {
			m->order[i] = (uint32_t)i;
			if (m->r[i].r.end - m->r[i].r.start > m->maxlen)
				m->maxlen = m->r[i].r.end - m->r[i].r.start;
		}
		m->nsorted = 0;
		sort_new(m);
		m->checked = m->n;
	}
	/* The strings of the regions pruned and of the tables before: at
	 * most each time the map doubled, so the cost stays in proportion. */
	if (codemap__bytes(m) > 2 * m->collected_bytes)
		collect(m);
}

const char *codemap__level_order(const struct codemap *m)
{
	return m->order_str;
}

void codemap__counts(const struct codemap *m, uint64_t *samples,
		     uint64_t *attributed, uint64_t *win_samples,
		     uint64_t *win_attributed)
{
	*samples = m->samples;
	*attributed = m->attributed;
	*win_samples = m->win_samples;
	*win_attributed = m->win_attributed;
}

void codemap__window_reset(struct codemap *m)
{
	m->win_samples = 0;
	m->win_attributed = 0;
}

size_t codemap__count(const struct codemap *m)
{
	return m->n;
}

uint64_t codemap__anchor(const struct codemap *m)
{
	return m->anchor;
}

size_t codemap__bytes(const struct codemap *m)
{
	return sizeof(*m) + m->cap * (sizeof(*m->r) + sizeof(*m->order)) +
	       m->nsids * sizeof(*m->sids) + m->nsets * sizeof(*m->sets) +
	       m->str_bytes +
	       hashmap__size(m->levels) * sizeof(struct levels_entry);
}

void codemap__tick(struct codemap *m, uint64_t now_ns, uint64_t every,
		   struct codemap_stats *st)
{
	if (now_ns - m->sampled_ns < 1000000000ull && now_ns - m->read_ns >= every)
		codemap__refresh(m, now_ns, st);
}
