/* The tagging dictionary of generated code: tagprof_code_region() and
 * tagprof_code_region_drop(), published as the append-only table of
 * include/code_table.h.
 *
 * Registering appends one ADD record (and a STR record for each string not
 * yet in the table) and stores the anchor's `used` with release order: no
 * system call, no republish of the process context. The context names the
 * anchor once, at the first registration. When the table is full, a new
 * one is built from the live regions and published under the anchor's
 * generation count (compact()).
 *
 * The library keeps the live regions (by start address, for drop and for
 * compaction) and the strings they use (interned, refcounted, so a
 * long-running engine that compiles a new query name per query does not
 * grow without bound: strings no live region uses go at compaction).
 * Everything here runs under the library lock. */
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
	uint64_t id, time_ns, start, len;
	uint32_t name;			/* string id, 0: none */
	uint32_t nlevels;
	uint32_t levels[TP_CODE_LEVELS_MAX];
};

struct str {
	char *s;			/* NULL: free slot */
	uint32_t refs;			/* live regions using it */
	bool in_table;			/* defined in the current table */
};

/* Open addressing with linear probing; slots hold index + 1 (0: empty). */
struct index {
	uint32_t *slot;
	size_t cap;			/* a power of two, or 0 */
	size_t n;
};

static struct tp_code_anchor anchor;	/* its address is published */
static struct {
	uint8_t *table;
	size_t size, used;
	struct live *live;
	size_t nlive, live_cap;
	struct index by_start;		/* start -> live index */
	struct str *strs;		/* by string id - 1 */
	size_t nstrs, strs_cap;
	struct index by_text;		/* string text -> string id - 1 */
	uint32_t *free_ids;		/* string ids free for the next table */
	size_t nfree, free_cap;
	uint64_t next_id;
	bool published;
} st;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
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

/* ---- the two indexes: key(i) gives the key of entry i ---- */

typedef bool (*index_eq)(size_t i, const void *key);

static bool index_rehash(struct index *x, size_t cap,
			 uint64_t (*hash_of)(size_t i))
{
	uint32_t *old = x->slot;
	size_t ocap = x->cap;

	x->slot = calloc(cap, sizeof(*x->slot));
	if (!x->slot) {
		x->slot = old;
		return false;
	}
	x->cap = cap;
	for (size_t i = 0; i < ocap; i++) {
		size_t j;

		if (!old[i])
			continue;
		for (j = hash_of(old[i] - 1) & (cap - 1); x->slot[j]; j = (j + 1) & (cap - 1))
			;
		x->slot[j] = old[i];
	}
	free(old);
	return true;
}

/* The slot holding key, or the empty slot where it would go. */
static size_t index_probe(const struct index *x, uint64_t h, const void *key,
			  index_eq eq)
{
	size_t j = h & (x->cap - 1);

	while (x->slot[j] && !eq(x->slot[j] - 1, key))
		j = (j + 1) & (x->cap - 1);
	return j;
}

/* Room for one more entry at load <= 1/2. */
static bool index_reserve(struct index *x, uint64_t (*hash_of)(size_t i))
{
	if ((x->n + 1) * 2 <= x->cap)
		return true;
	return index_rehash(x, x->cap ? x->cap * 2 : 256, hash_of);
}

/* Empties slot j and moves later entries of its run back (no tombstones). */
static void index_delete(struct index *x, size_t j, uint64_t (*hash_of)(size_t i))
{
	size_t mask = x->cap - 1, k = j;

	x->slot[j] = 0;
	x->n--;
	for (;;) {
		size_t home;

		k = (k + 1) & mask;
		if (!x->slot[k])
			return;
		home = hash_of(x->slot[k] - 1) & mask;
		/* Leave it where it is if its home lies cyclically in (j, k]. */
		if (j <= k ? (home > j && home <= k) : (home > j || home <= k))
			continue;
		x->slot[j] = x->slot[k];
		x->slot[k] = 0;
		j = k;
	}
}

static uint64_t live_hash(size_t i)
{
	return hash64(st.live[i].start);
}

static bool live_eq(size_t i, const void *key)
{
	return st.live[i].start == *(const uint64_t *)key;
}

static uint64_t str_hash(size_t i)
{
	return hash_str(st.strs[i].s);
}

static bool str_eq(size_t i, const void *key)
{
	return !strcmp(st.strs[i].s, key);
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

	st.used += n;
	return p;
}

static size_t rec_size(size_t payload)
{
	return (payload + 7) & ~(size_t)7;
}

static size_t str_rec_size(const char *s)
{
	return rec_size(sizeof(struct tp_code_rec) + strlen(s));
}

static size_t add_rec_size(uint32_t nlevels)
{
	return rec_size(sizeof(struct tp_code_add) + nlevels * sizeof(uint32_t));
}

/* Bytes the records of region r take, its strings counted as if none were
 * in the table yet: a bound that holds across a compaction, which empties
 * the table of strings. */
static size_t region_bytes(const struct live *r)
{
	size_t b = add_rec_size(r->nlevels);

	if (r->name)
		b += str_rec_size(st.strs[r->name - 1].s);
	for (uint32_t i = 0; i < r->nlevels; i++)
		b += str_rec_size(st.strs[r->levels[i] - 1].s);
	return b;
}

static void put_str(uint32_t id)
{
	struct str *s = &st.strs[id - 1];
	size_t len = strlen(s->s), size = str_rec_size(s->s);
	struct tp_code_rec *h;

	if (s->in_table)
		return;
	h = table_append(size);
	memset(h, 0, size);
	*h = (struct tp_code_rec){ .size = size, .kind = TP_CODE_REC_STR,
				   .count = len, .id = id };
	memcpy(h + 1, s->s, len);
	s->in_table = true;
}

static void put_add(const struct live *r)
{
	size_t size = add_rec_size(r->nlevels);
	struct tp_code_add *a;

	if (r->name)
		put_str(r->name);
	for (uint32_t i = 0; i < r->nlevels; i++)
		put_str(r->levels[i]);
	a = table_append(size);
	memset(a, 0, size);
	a->h = (struct tp_code_rec){ .size = size, .kind = TP_CODE_REC_ADD,
				     .count = r->nlevels, .id = r->id };
	a->time_ns = r->time_ns;
	a->start = r->start;
	a->len = r->len;
	a->name = r->name;
	memcpy(a->levels, r->levels, r->nlevels * sizeof(uint32_t));
}

static void publish_used(void)
{
	__atomic_store_n(&anchor.used, st.used, __ATOMIC_RELEASE);
}

/* Frees the strings no live region uses; their ids serve the next table. */
static void strs_collect(void)
{
	for (size_t i = 0; i < st.nstrs; i++) {
		struct str *s = &st.strs[i];

		s->in_table = false;
		if (!s->s || s->refs)
			continue;
		index_delete(&st.by_text,
			     index_probe(&st.by_text, hash_str(s->s), s->s, str_eq),
			     str_hash);
		free(s->s);
		s->s = NULL;
		st.free_ids[st.nfree++] = (uint32_t)(i + 1);
	}
}

/* A new table holding the live regions and room for `extra` more bytes,
 * published under the generation count. -ENOSPC past TP_CODE_TABLE_MAX. */
static int compact(size_t extra)
{
	size_t need = extra, size = TABLE_MIN;
	uint8_t *old = st.table;
	size_t old_size = st.size;
	void *t;

	if (!grow((void **)&st.free_ids, &st.free_cap, st.nstrs, sizeof(uint32_t)))
		return -ENOMEM;
	strs_collect();
	for (size_t i = 0; i < st.nlive; i++)
		need += add_rec_size(st.live[i].nlevels);
	for (size_t i = 0; i < st.nstrs; i++)
		if (st.strs[i].s)
			need += str_rec_size(st.strs[i].s);
	/* Twice what it holds: appends until the next compaction pay for
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
	for (size_t i = 0; i < st.nlive; i++)
		put_add(&st.live[i]);

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

/* Makes room for n more bytes, compacting when the table is full. */
static int reserve(size_t n)
{
	if (st.table && st.size - st.used >= n)
		return 0;
	return compact(n);
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

/* ---- strings ---- */

static bool key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

/* "key=value" as the header documents it. */
static bool level_valid(const char *s)
{
	const char *eq = strchr(s, '=');
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

static bool name_valid(const char *s)
{
	size_t len = strlen(s);

	return len && len <= TP_CODE_STR_MAX &&
	       tagprof__utf8_valid((const unsigned char *)s, len);
}

/* The id of string s, interned; its refcount is not changed. 0: ENOMEM. */
static uint32_t str_intern(const char *s)
{
	uint64_t h = hash_str(s);
	size_t j, i;
	char *copy;

	if (st.by_text.cap) {
		j = index_probe(&st.by_text, h, s, str_eq);
		if (st.by_text.slot[j])
			return st.by_text.slot[j];
	}
	if (!index_reserve(&st.by_text, str_hash))
		return 0;
	if (!st.nfree && !grow((void **)&st.strs, &st.strs_cap, st.nstrs + 1,
			       sizeof(*st.strs)))
		return 0;
	copy = strdup(s);
	if (!copy)
		return 0;
	i = st.nfree ? st.free_ids[--st.nfree] - 1 : st.nstrs++;
	st.strs[i] = (struct str){ .s = copy };
	j = index_probe(&st.by_text, h, s, str_eq);
	st.by_text.slot[j] = (uint32_t)(i + 1);
	st.by_text.n++;
	return (uint32_t)(i + 1);
}

static void refs_add(const struct live *r, int d)
{
	if (r->name)
		st.strs[r->name - 1].refs += d;
	for (uint32_t i = 0; i < r->nlevels; i++)
		st.strs[r->levels[i] - 1].refs += d;
}

/* ---- live regions ---- */

static void live_remove(size_t j)
{
	size_t i = st.by_start.slot[j] - 1, last = st.nlive - 1;

	refs_add(&st.live[i], -1);
	index_delete(&st.by_start, j, live_hash);
	if (i != last) {
		size_t k = index_probe(&st.by_start, live_hash(last),
				       &st.live[last].start, live_eq);

		st.live[i] = st.live[last];
		st.by_start.slot[k] = (uint32_t)(i + 1);
	}
	st.nlive--;
}

/* Appends a DROP for the live region in slot j and forgets it; the
 * caller reserved the room. */
static void drop_slot(size_t j, uint64_t t)
{
	struct tp_code_drop *d = table_append(sizeof(*d));

	*d = (struct tp_code_drop){
		.h = { .size = sizeof(*d), .kind = TP_CODE_REC_DROP,
		       .id = st.live[st.by_start.slot[j] - 1].id },
		.time_ns = t };
	live_remove(j);
}

static ssize_t live_slot(uint64_t start)
{
	size_t j;

	if (!st.by_start.cap)
		return -1;
	j = index_probe(&st.by_start, hash64(start), &start, live_eq);
	return st.by_start.slot[j] ? (ssize_t)j : -1;
}

/* Appends r (its strings interned and referenced by the caller). */
static int region_add(struct live *r)
{
	ssize_t j;
	int err;

	if (!grow((void **)&st.live, &st.live_cap, st.nlive + 1, sizeof(*st.live)) ||
	    !index_reserve(&st.by_start, live_hash))
		return -ENOMEM;
	/* One reservation for all of it, a drop included: no compaction
	 * can come between the records. */
	err = reserve(region_bytes(r) + sizeof(struct tp_code_drop));
	if (err)
		return err;
	/* The same start again: code rebuilt in place. The old one ends. */
	j = live_slot(r->start);
	if (j >= 0)
		drop_slot((size_t)j, r->time_ns);
	r->id = ++st.next_id;
	put_add(r);
	j = (ssize_t)index_probe(&st.by_start, hash64(r->start), &r->start, live_eq);
	st.by_start.slot[j] = (uint32_t)(st.nlive + 1);
	st.by_start.n++;
	st.live[st.nlive++] = *r;
	publish_used();
	return 0;
}

/* Interns r's strings and takes a reference on each: 0 or -ENOMEM. */
static int region_strings(struct live *r, const char *name,
			  const char *const levels[], size_t nlevels)
{
	if (name && !(r->name = str_intern(name)))
		return -ENOMEM;
	if (r->name)
		st.strs[r->name - 1].refs++;
	for (size_t i = 0; i < nlevels; i++) {
		r->levels[i] = str_intern(levels[i]);
		if (!r->levels[i]) {
			r->nlevels = (uint32_t)i;
			refs_add(r, -1);
			return -ENOMEM;
		}
		st.strs[r->levels[i] - 1].refs++;
	}
	r->nlevels = (uint32_t)nlevels;
	return 0;
}

int tagprof_code_region(const void *start, size_t len, const char *name,
			const char *const levels[], size_t nlevels)
{
	struct live r = { .start = (uint64_t)(uintptr_t)start, .len = len };
	int err;

	if (!start || !len || (nlevels && !levels) || nlevels > TP_CODE_LEVELS_MAX ||
	    r.start + len < r.start || (name && !name_valid(name)))
		return -EINVAL;
	for (size_t i = 0; i < nlevels; i++)
		if (!levels[i] || !level_valid(levels[i]))
			return -EINVAL;
	err = tagprof__ctx_ensure();
	if (err)
		return err;
	tagprof__lock();
	err = publish_anchor();
	if (!err)
		err = region_strings(&r, name, levels, nlevels);
	if (!err) {
		r.time_ns = now_ns();
		err = region_add(&r);
		if (err)
			refs_add(&r, -1);
	}
	tagprof__unlock();
	return err;
}

int tagprof_code_region_drop(const void *start)
{
	ssize_t j;
	int err = -ENOENT;

	tagprof__lock();
	j = live_slot((uint64_t)(uintptr_t)start);
	if (j >= 0) {
		/* A compaction leaves the live set and its index alone. */
		err = reserve(sizeof(struct tp_code_drop));
		if (!err) {
			drop_slot((size_t)j, now_ns());
			publish_used();
		}
	}
	tagprof__unlock();
	return err;
}
