/* The tagging dictionary of generated code: tagprof_code_regions() and
 * tagprof_code_region_drop(), published as the append-only table of
 * include/code_table.h.
 *
 * Registering appends records (the strings and sets not yet in the table,
 * then one ADD of 16 bytes a region) and stores the anchor's `used` once,
 * with release order: no system call, no republish of the process
 * context. The context names the anchor once, at the first registration.
 * When the table is full, a new one is built from the live regions and
 * published under the anchor's generation count (compact()).
 *
 * The library keeps the live regions (by start address, for drop and for
 * compaction), the sets they name and the strings those use, interned and
 * counted, so a long-running engine that compiles a new query name per
 * query does not grow without bound: what no live region uses goes at
 * compaction. Everything here runs under the library lock. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>

#include "code_table.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif

#define TABLE_MIN	(64u << 10)
#define VALUE_MAX	255

struct live {
	uint64_t id, time_ns, start;
	uint32_t len, set;
};

struct str {
	char *s;			/* NULL: free slot */
	uint32_t refs;			/* sets using it */
	bool in_table;			/* defined in the current table */
};

struct set {
	uint32_t name;			/* string id, 0: none */
	uint32_t n;
	uint32_t levels[TP_CODE_LEVELS_MAX];
	uint32_t refs;			/* live regions naming it; free slot:
					 * n == UINT32_MAX */
	uint32_t stamp;			/* the registration that counted it */
	bool in_table;
};

/* An array of entries with ids (index + 1), reusing the ids freed at a
 * compaction: within one table an id is defined once. */
struct pool {
	void *v;
	size_t n, cap;
	uint32_t *free_ids;
	size_t nfree, free_cap;
};

static struct tp_code_anchor anchor;	/* its address is published */
static struct {
	uint8_t *table;
	size_t size, used;
	struct live *live;
	size_t nlive, live_cap;
	struct tagprof__index by_start;	/* start -> live index */
	struct pool strs;		/* struct str */
	struct tagprof__index str_index;
	struct pool sets;		/* struct set */
	struct tagprof__index set_index;
	uint64_t next_id;
	uint32_t stamp;
	bool published;
} st;

#define STR(id)		(&((struct str *)st.strs.v)[(id) - 1])
#define SET(id)		(&((struct set *)st.sets.v)[(id) - 1])

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static uint64_t hash_set(const struct set *s)
{
	uint64_t h = mix(s->name, s->n);

	for (uint32_t i = 0; i < s->n; i++)
		h = mix(h, s->levels[i]);
	return h;
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return true;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * elem);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

/* An id for a new entry of pool p (entries of elem bytes); 0: ENOMEM. */
static uint32_t pool_take(struct pool *p, size_t elem)
{
	if (p->nfree)
		return p->free_ids[--p->nfree];
	if (!grow(&p->v, &p->cap, p->n + 1, elem) ||
	    !grow((void **)&p->free_ids, &p->free_cap, p->n + 1, sizeof(uint32_t)))
		return 0;
	return (uint32_t)++p->n;
}

static void pool_give(struct pool *p, uint32_t id)
{
	p->free_ids[p->nfree++] = id;	/* free_cap >= n: pool_take saw to it */
}

/* ---- the indexes' keys ---- */

static uint64_t live_hash(size_t i)
{
	return mix(0, st.live[i].start);
}

static bool live_eq(size_t i, const void *key)
{
	return st.live[i].start == *(const uint64_t *)key;
}

static uint64_t str_hash(size_t i)
{
	return hash_str(((struct str *)st.strs.v)[i].s);
}

static bool str_eq(size_t i, const void *key)
{
	return !strcmp(((struct str *)st.strs.v)[i].s, key);
}

static uint64_t set_hash(size_t i)
{
	return hash_set(&((struct set *)st.sets.v)[i]);
}

static bool set_eq(size_t i, const void *key)
{
	const struct set *a = &((struct set *)st.sets.v)[i], *b = key;

	return a->name == b->name && a->n == b->n &&
	       !memcmp(a->levels, b->levels, a->n * sizeof(a->levels[0]));
}

/* ---- the table ---- */

static void *table_map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* Names it in /proc/PID/maps: for people, not for the agent, which
	 * goes by the anchor. Kernels before 5.17 refuse; that is fine. */
	prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, p, size, "tagprof-code");
	return p;
}

static void *table_append(size_t n)
{
	void *p = st.table + st.used;

	memset(p, 0, n);
	st.used += n;
	return p;
}

static size_t rec_size(size_t payload)
{
	return (payload + 7) & ~(size_t)7;
}

static size_t str_bytes(uint32_t id)
{
	return rec_size(sizeof(struct tp_code_rec) + strlen(STR(id)->s));
}

/* The bytes of set id's record and its strings', those already in the
 * table counted only when all is true. */
static size_t set_bytes(uint32_t id, bool all)
{
	const struct set *s = SET(id);
	size_t b = rec_size(sizeof(struct tp_code_set) + s->n * sizeof(uint32_t));

	if (s->in_table && !all)
		return 0;
	if (s->name && (all || !STR(s->name)->in_table))
		b += str_bytes(s->name);
	for (uint32_t i = 0; i < s->n; i++)
		if (all || !STR(s->levels[i])->in_table)
			b += str_bytes(s->levels[i]);
	return b;
}

static size_t add_bytes(size_t nspans)
{
	return sizeof(struct tp_code_add) + nspans * sizeof(struct tp_code_span);
}

static void put_str(uint32_t id)
{
	struct str *s = STR(id);
	size_t len = strlen(s->s);
	struct tp_code_rec *h;

	if (s->in_table)
		return;
	h = table_append(rec_size(sizeof(*h) + len));
	*h = (struct tp_code_rec){ .size = rec_size(sizeof(*h) + len),
				   .kind = TP_CODE_REC_STR, .count = len, .id = id };
	memcpy(h + 1, s->s, len);
	s->in_table = true;
}

static void put_set(uint32_t id)
{
	struct set *s = SET(id);
	size_t size = rec_size(sizeof(struct tp_code_set) + s->n * sizeof(uint32_t));
	struct tp_code_set *r;

	if (s->in_table)
		return;
	if (s->name)
		put_str(s->name);
	for (uint32_t i = 0; i < s->n; i++)
		put_str(s->levels[i]);
	r = table_append(size);
	r->h = (struct tp_code_rec){ .size = size, .kind = TP_CODE_REC_SET,
				     .count = s->n, .id = id };
	r->name = s->name;
	memcpy(r->levels, s->levels, s->n * sizeof(uint32_t));
	s->in_table = true;
}

/* An ADD of the n live regions from index i, which have consecutive ids
 * and one time; their sets are in the table. */
static void put_add(const struct live *l, size_t n)
{
	struct tp_code_add *a = table_append(add_bytes(n));

	a->h = (struct tp_code_rec){ .size = add_bytes(n), .kind = TP_CODE_REC_ADD,
				     .count = n, .id = l[0].id };
	a->time_ns = l[0].time_ns;
	for (size_t k = 0; k < n; k++)
		a->spans[k] = (struct tp_code_span){ l[k].start, l[k].len, l[k].set };
}

static void put_drop(uint64_t id, uint64_t t)
{
	struct tp_code_drop *d = table_append(sizeof(*d));

	d->h = (struct tp_code_rec){ .size = sizeof(*d), .kind = TP_CODE_REC_DROP,
				     .id = id };
	d->time_ns = t;
}

static void publish_used(void)
{
	__atomic_store_n(&anchor.used, st.used, __ATOMIC_RELEASE);
}

/* How many live regions from index i an ADD can carry: consecutive ids,
 * one time, up to TP_CODE_SPANS_MAX. */
static size_t run_length(size_t i)
{
	size_t n = 1;

	while (i + n < st.nlive && n < TP_CODE_SPANS_MAX &&
	       st.live[i + n].id == st.live[i].id + n &&
	       st.live[i + n].time_ns == st.live[i].time_ns)
		n++;
	return n;
}

/* Frees the sets no live region names and the strings no set uses; their
 * ids serve the next table. Every in_table flag is cleared. */
static void collect(void)
{
	for (uint32_t id = 1; id <= st.sets.n; id++) {
		struct set *s = SET(id);

		s->in_table = false;
		if (s->n == UINT32_MAX || s->refs)
			continue;
		tagprof__index_delete(&st.set_index, tagprof__index_probe(
			&st.set_index, hash_set(s), s, set_eq), set_hash);
		if (s->name)
			STR(s->name)->refs--;
		for (uint32_t i = 0; i < s->n; i++)
			STR(s->levels[i])->refs--;
		s->n = UINT32_MAX;
		pool_give(&st.sets, id);
	}
	for (uint32_t id = 1; id <= st.strs.n; id++) {
		struct str *s = STR(id);

		s->in_table = false;
		if (!s->s || s->refs)
			continue;
		tagprof__index_delete(&st.str_index, tagprof__index_probe(
			&st.str_index, hash_str(s->s), s->s, str_eq), str_hash);
		free(s->s);
		s->s = NULL;
		pool_give(&st.strs, id);
	}
}

/* A new table holding the live regions and room for `extra` more bytes,
 * published under the generation count. -ENOSPC past TP_CODE_TABLE_MAX. */
static int compact(size_t extra)
{
	size_t need = extra, size = TABLE_MIN, old_size = st.size;
	uint8_t *old = st.table;
	void *t;

	collect();
	for (size_t i = 0; i < st.nlive; i++)
		need += add_bytes(1);
	for (uint32_t id = 1; id <= st.sets.n; id++)
		if (SET(id)->n != UINT32_MAX)
			need += set_bytes(id, true);
	/* Twice what it holds: the appends until the next compaction pay for
	 * this one's copy. */
	while (size < 2 * need && size < TP_CODE_TABLE_MAX)
		size *= 2;
	if (need > size)
		return -ENOSPC;
	t = table_map(size);
	if (!t)
		return -ENOMEM;
	st.table = t;
	st.size = size;
	st.used = 0;
	for (size_t i = 0, n; i < st.nlive; i += n) {
		n = run_length(i);
		for (size_t k = 0; k < n; k++)
			put_set(st.live[i + k].set);
		put_add(&st.live[i], n);
	}

	__atomic_store_n(&anchor.gen, anchor.gen + 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	anchor.table = (uint64_t)(uintptr_t)st.table;
	anchor.size = st.size;
	anchor.used = st.used;
	anchor.base_ns = now_ns();
	__atomic_store_n(&anchor.gen, anchor.gen + 1, __ATOMIC_RELEASE);
	/* A reader still in the old table gets EFAULT or sees gen moved. */
	if (old)
		munmap(old, old_size);
	return 0;
}

/* Room for `now` more bytes, or for `fresh` in a compacted table (which
 * holds none of the strings and sets the caller counted in now). */
static int reserve(size_t now, size_t fresh)
{
	if (st.table && st.size - st.used >= now)
		return 0;
	return compact(fresh);
}

/* Names the anchor in the process context: once. */
static int publish_anchor(void)
{
	struct tagprof__attr a = { .key = TP_CODE_ATTR, .kind = TAGPROF__VAL_INT,
				   .i = (int64_t)(uintptr_t)&anchor };
	int err;

	if (st.published)
		return 0;
	memcpy(anchor.magic, TP_CODE_MAGIC, sizeof(anchor.magic));
	anchor.version = TP_CODE_VERSION;
	anchor.anchor_size = sizeof(anchor);
	err = tagprof__ctx_set_attrs_locked(&a, 1);
	if (!err)
		st.published = true;
	return err;
}

/* ---- validation ---- */

static bool key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

/* "key=value" as the header documents it. */
static bool level_valid(const char *s)
{
	const char *eq = s ? strchr(s, '=') : NULL;
	size_t klen, vlen;

	if (!eq)
		return false;
	klen = (size_t)(eq - s);
	vlen = strlen(eq + 1);
	if (klen < 1 || klen > TP_CODE_KEY_MAX || vlen > VALUE_MAX)
		return false;
	for (size_t i = 0; i < klen; i++)
		if (!key_char(s[i]))
			return false;
	return tagprof__utf8_valid((const unsigned char *)eq + 1, vlen);
}

static bool span_valid(const struct tagprof_code_span *sp)
{
	size_t len;

	if (!sp->start || !sp->len || sp->len > UINT32_MAX ||
	    (uintptr_t)sp->start + sp->len < (uintptr_t)sp->start ||
	    sp->nlevels > TP_CODE_LEVELS_MAX || (sp->nlevels && !sp->levels))
		return false;
	if (sp->name) {
		len = strlen(sp->name);
		if (!len || len > TP_CODE_STR_MAX ||
		    !tagprof__utf8_valid((const unsigned char *)sp->name, len))
			return false;
	}
	for (size_t i = 0; i < sp->nlevels; i++)
		if (!level_valid(sp->levels[i]))
			return false;
	return true;
}

/* ---- interning ---- */

/* The id of string s, interned, with a reference taken. 0: ENOMEM. */
static uint32_t str_intern(const char *s)
{
	uint64_t h = hash_str(s);
	uint32_t id;
	size_t j;
	char *copy;

	if (!tagprof__index_reserve(&st.str_index, str_hash))
		return 0;
	j = tagprof__index_probe(&st.str_index, h, s, str_eq);
	if (st.str_index.slot[j]) {
		id = st.str_index.slot[j];
		STR(id)->refs++;
		return id;
	}
	copy = strdup(s);
	id = copy ? pool_take(&st.strs, sizeof(struct str)) : 0;
	if (!id) {
		free(copy);
		return 0;
	}
	*STR(id) = (struct str){ .s = copy, .refs = 1 };
	tagprof__index_put(&st.str_index, j, id - 1);
	return id;
}

static void set_release_strs(const struct set *s)
{
	if (s->name)
		STR(s->name)->refs--;
	for (uint32_t i = 0; i < s->n; i++)
		STR(s->levels[i])->refs--;
}

/* The id of the set of sp's name and levels, interned, with a reference
 * taken for one region. 0: ENOMEM. Strings a set holds are referenced
 * once by it. */
static uint32_t set_intern(const struct tagprof_code_span *sp)
{
	struct set key = { .n = (uint32_t)sp->nlevels };
	uint32_t id = 0;
	size_t j;

	if (sp->name && !(key.name = str_intern(sp->name)))
		goto fail;
	for (; key.n && id < key.n; id++)
		if (!(key.levels[id] = str_intern(sp->levels[id])))
			goto fail;
	if (!tagprof__index_reserve(&st.set_index, set_hash))
		goto fail;
	j = tagprof__index_probe(&st.set_index, hash_set(&key), &key, set_eq);
	if (st.set_index.slot[j]) {
		/* Known: its strings are referenced already. */
		set_release_strs(&key);
		id = st.set_index.slot[j];
		SET(id)->refs++;
		return id;
	}
	id = pool_take(&st.sets, sizeof(struct set));
	if (!id) {
		set_release_strs(&key);
		return 0;
	}
	key.refs = 1;
	*SET(id) = key;
	tagprof__index_put(&st.set_index, j, id - 1);
	return id;
fail:
	key.n = id;		/* the levels interned so far */
	set_release_strs(&key);
	return 0;
}

/* ---- live regions ---- */

static ssize_t live_slot(uint64_t start)
{
	size_t j;

	if (!st.by_start.cap)
		return -1;
	j = tagprof__index_probe(&st.by_start, mix(0, start), &start, live_eq);
	return st.by_start.slot[j] ? (ssize_t)j : -1;
}

/* Forgets the live region in index slot j (its set's reference goes). */
static void live_remove(size_t j)
{
	size_t i = st.by_start.slot[j] - 1, last = st.nlive - 1;

	SET(st.live[i].set)->refs--;
	tagprof__index_delete(&st.by_start, j, live_hash);
	if (i != last) {
		size_t k = tagprof__index_probe(&st.by_start, live_hash(last),
						&st.live[last].start, live_eq);

		st.live[i] = st.live[last];
		st.by_start.slot[k] = (uint32_t)(i + 1);
	}
	st.nlive--;
}

/* The bytes registering spans[0..n) with sets ids[] may append: now
 * (strings and sets already in the table not counted) and in a fresh
 * table. A set is counted once (stamped). */
static void batch_bytes(const uint32_t *ids, size_t n, size_t *now, size_t *fresh)
{
	size_t chunks = (n + TP_CODE_SPANS_MAX - 1) / TP_CODE_SPANS_MAX;
	/* For each region registered again at the same start, a drop, and
	 * the ADD header of the run it cuts. */
	size_t fixed = chunks * add_bytes(0) +
		       n * (sizeof(struct tp_code_span) + sizeof(struct tp_code_drop) +
			    add_bytes(0));

	*now = *fresh = fixed;
	if (++st.stamp == 0) {		/* wrapped: no set may look counted */
		for (uint32_t id = 1; id <= st.sets.n; id++)
			SET(id)->stamp = 0;
		st.stamp = 1;
	}
	for (size_t i = 0; i < n; i++) {
		struct set *s = SET(ids[i]);

		if (s->stamp == st.stamp)
			continue;
		s->stamp = st.stamp;
		*now += set_bytes(ids[i], false);
		*fresh += set_bytes(ids[i], true);
	}
}

/* Emits the ADD of the live regions appended since index *run. */
static void flush_run(size_t *run)
{
	if (*run < st.nlive)
		put_add(&st.live[*run], st.nlive - *run);
	*run = st.nlive;
}

/* Appends the regions (room reserved, sets referenced) in runs of one ADD
 * each. The same start as a live region is code rebuilt in place: the old
 * region ends first. A removal moves the last live region into its hole,
 * so the run is flushed before it: a run stays the live array's tail, in
 * id order. */
static void batch_put(const struct tagprof_code_span *spans, const uint32_t *ids,
		      size_t n, uint64_t t)
{
	size_t run = st.nlive;

	for (size_t k = 0; k < n; k++) {
		uint64_t start = (uintptr_t)spans[k].start;
		ssize_t j = live_slot(start);

		if (j >= 0) {
			flush_run(&run);
			put_drop(st.live[st.by_start.slot[j] - 1].id, t);
			live_remove((size_t)j);
			run = st.nlive;
		}
		if (st.nlive - run == TP_CODE_SPANS_MAX)
			flush_run(&run);
		put_set(ids[k]);
		j = (ssize_t)tagprof__index_probe(&st.by_start, mix(0, start),
						  &start, live_eq);
		st.live[st.nlive] = (struct live){
			.id = ++st.next_id, .time_ns = t, .start = start,
			.len = (uint32_t)spans[k].len, .set = ids[k] };
		tagprof__index_put(&st.by_start, (size_t)j, st.nlive++);
	}
	flush_run(&run);
}

/* Room for n more live regions in the array and its index. */
static bool live_room(size_t n)
{
	if (!grow((void **)&st.live, &st.live_cap, st.nlive + n, sizeof(*st.live)))
		return false;
	while ((st.by_start.n + n) * 2 > st.by_start.cap)
		if (!tagprof__index_rehash(&st.by_start, st.by_start.cap ?
					   st.by_start.cap * 2 : 256, live_hash))
			return false;
	return true;
}

static void sets_release(const uint32_t *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		SET(ids[i])->refs--;
}

/* Registers spans under the lock: the sets first (each region takes a
 * reference), then room, then the records. */
static int register_locked(const struct tagprof_code_span *spans, size_t n,
			   uint32_t *ids)
{
	size_t now, fresh, i;
	int err = publish_anchor();

	for (i = 0; !err && i < n; i++)
		if (!(ids[i] = set_intern(&spans[i])))
			err = -ENOMEM;
	if (err) {
		sets_release(ids, i ? i - 1 : 0);
		return err;
	}
	batch_bytes(ids, n, &now, &fresh);
	if (!live_room(n))
		err = -ENOMEM;
	if (!err)
		err = reserve(now, fresh);
	if (err) {
		sets_release(ids, n);
		return err;
	}
	batch_put(spans, ids, n, now_ns());
	publish_used();
	return 0;
}

int tagprof_code_regions(const struct tagprof_code_span *spans, size_t n)
{
	uint32_t *ids;
	int err;

	if (!n || !spans)
		return n ? -EINVAL : 0;
	for (size_t i = 0; i < n; i++)
		if (!span_valid(&spans[i]))
			return -EINVAL;
	ids = malloc(n * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	err = tagprof__ctx_ensure();
	if (!err) {
		tagprof__lock();
		err = register_locked(spans, n, ids);
		tagprof__unlock();
	}
	free(ids);
	return err;
}

int tagprof_code_region(const void *start, size_t len, const char *name,
			const char *const levels[], size_t nlevels)
{
	const struct tagprof_code_span sp = { start, len, name, levels, nlevels };

	return tagprof_code_regions(&sp, 1);
}

int tagprof_code_region_drop(const void *start)
{
	ssize_t j;
	int err = -ENOENT;

	tagprof__lock();
	j = live_slot((uint64_t)(uintptr_t)start);
	if (j >= 0) {
		/* A compaction leaves the live set and its index alone. */
		err = reserve(sizeof(struct tp_code_drop), sizeof(struct tp_code_drop));
		if (!err) {
			put_drop(st.live[st.by_start.slot[j] - 1].id, now_ns());
			live_remove((size_t)j);
			publish_used();
		}
	}
	tagprof__unlock();
	return err;
}
