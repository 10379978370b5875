/* The tagging dictionary of generated code end to end in one process:
 * libtagprof's tagprof_code_region() writes the table, and the agent's
 * reader (proc/codemap.h) finds it as the agent does, through the process
 * context (procctx__read of this very process, process_vm_readv), and
 * follows it. Then the reader alone against hostile tables. */
#include "tagprof/tagprof.h"
#include "check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "code_table.h"
#include "proc/codemap.h"
#include "proc/procctx.h"
#include "util/clock.h"

static struct codemap_stats st;

/* A map of this process's table, found as the agent finds it. */
static struct codemap *follow_self(void)
{
	struct procctx ctx = { 0 };
	const struct procctx_attr *a;
	struct codemap *m = NULL;

	if (procctx__read(getpid(), &ctx) < 0)
		return NULL;
	a = procctx__attr(&ctx, TP_CODE_ATTR);
	if (a && !a->str && a->num > 0)
		m = codemap__new(getpid(), (uint64_t)a->num);
	procctx__clear(&ctx);
	return m;
}

/* Code memory: the reader never touches it, any pages do. */
static uint8_t *code_pages(size_t n)
{
	void *p = mmap(NULL, n * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static const char *level(const struct code_region *r, const char *key)
{
	for (uint32_t i = 0; r && i < r->levels->n; i++)
		if (!strcmp(r->levels->key[i], key))
			return r->levels->val[i];
	return NULL;
}

static bool streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static uint8_t *code;		/* 64 pages every case may use */

static void test_arguments_refused(void)
{
	const char *ok[] = { "operator=Scan#1" };
	const char *bad_key[] = { "oper ator=x" }, *no_eq[] = { "operator" };
	const char *long_key[] = { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=1" };
	const char *bad_utf8[] = { "operator=\xff\xfe" };
	const char *nine[9] = { "a=1", "b=1", "c=1", "d=1", "e=1", "f=1", "g=1", "h=1", "i=1" };

	CHECK(tagprof_code_region(NULL, 16, "x", ok, 1) == -EINVAL);
	CHECK(tagprof_code_region(code, 0, "x", ok, 1) == -EINVAL);
	CHECK(tagprof_code_region(code, 16, "x", NULL, 1) == -EINVAL);
	CHECK(tagprof_code_region(code, 16, "x", bad_key, 1) == -EINVAL);
	CHECK(tagprof_code_region(code, 16, "x", no_eq, 1) == -EINVAL);
	CHECK(tagprof_code_region(code, 16, "x", long_key, 1) == -EINVAL);
	CHECK(tagprof_code_region(code, 16, "x", bad_utf8, 1) == -EINVAL);
	CHECK(tagprof_code_region(code, 16, "x", nine, 9) == -EINVAL);
	CHECK(tagprof_code_region((void *)UINTPTR_MAX, 16, "x", ok, 1) == -EINVAL);
	CHECK(tagprof_code_region_drop(code + 7) == -ENOENT);
}

static void test_regions_found(void)
{
	const char *scan[] = { "pipeline=1", "operator=Scan#1", "query=q1" };
	const char *join[] = { "pipeline=2", "operator=HashJoin#3", "query=q1" };
	const struct code_region *r, *first;
	struct codemap *m;
	uint64_t t;

	CHECK(tagprof_code_region(code, 100, "q1_scan", scan, 3) == 0);
	CHECK(tagprof_code_region(code + 4096, 50, NULL, join, 3) == 0);
	t = clock__mono_ns();
	m = follow_self();
	CHECK(m);
	CHECK(codemap__refresh(m, t, &st) == 0);
	r = first = codemap__find(m, (uintptr_t)code + 99, t);
	CHECK(r && streq(r->name, "q1_scan"));
	CHECK(streq(level(r, "operator"), "Scan#1") && streq(level(r, "pipeline"), "1") &&
	      streq(level(r, "query"), "q1"));
	CHECK(!codemap__find(m, (uintptr_t)code + 100, t));	/* its end */
	r = codemap__find(m, (uintptr_t)code + 4096, t);
	CHECK(r && !r->name && streq(level(r, "operator"), "HashJoin#3"));
	CHECK(!strcmp(codemap__level_order(m), "query > operator > pipeline"));
	/* Not yet registered when an earlier sample was taken. */
	CHECK(!codemap__find(m, (uintptr_t)code, first->from_ns - 1));
	codemap__free(m);
	CHECK(tagprof_code_region_drop(code) == 0);
	CHECK(tagprof_code_region_drop(code + 4096) == 0);
}

/* A caller frame is a return address: the region of the call, which may
 * be its last instruction, is the byte before. */
static void test_attribute_innermost(void)
{
	const char *gen[] = { "operator=Probe#2" }, *outer[] = { "operator=Outer#9" };
	const struct code_region *r;
	struct codemap *m;
	uint64_t user[3], t;
	bool leaf;

	CHECK(tagprof_code_region(code + 8192, 64, "probe", gen, 1) == 0);
	CHECK(tagprof_code_region(code + 3 * 4096, 64, "outer", outer, 1) == 0);
	m = follow_self();
	CHECK(m);
	t = clock__mono_ns();
	/* leaf in shared code, caller returns just past the probe's end */
	user[0] = 0x1000;
	user[1] = (uintptr_t)code + 8192 + 64;
	user[2] = (uintptr_t)code + 3 * 4096 + 10;
	r = codemap__attribute(m, user, 3, t, &leaf, &st);
	CHECK(r && streq(level(r, "operator"), "Probe#2") && !leaf);
	user[0] = (uintptr_t)code + 3 * 4096 + 5;
	r = codemap__attribute(m, user, 3, t, &leaf, &st);
	CHECK(r && streq(level(r, "operator"), "Outer#9") && leaf);
	user[0] = (uintptr_t)code + 8192 + 64;	/* a leaf is its own pc */
	r = codemap__attribute(m, user, 1, t, &leaf, &st);
	CHECK(!r);
	codemap__free(m);
	CHECK(tagprof_code_region_drop(code + 8192) == 0);
	CHECK(tagprof_code_region_drop(code + 3 * 4096) == 0);
}

/* Code memory reused: each sample gets the code that was there when it
 * was taken, whether or not the reader saw the old region first. */
static void test_reuse_versions(void)
{
	const char *q1[] = { "query=q1" }, *q2[] = { "query=q2" }, *q3[] = { "query=q3" };
	const struct code_region *r;
	struct codemap *early = follow_self(), *late;
	uint64_t t0, t1, t2, t3;

	CHECK(early);
	CHECK(tagprof_code_region(code + 5 * 4096, 128, "a", q1, 1) == 0);
	t0 = clock__mono_ns();
	CHECK(codemap__refresh(early, t0, &st) == 0);
	CHECK(tagprof_code_region_drop(code + 5 * 4096) == 0);
	t1 = clock__mono_ns();
	CHECK(tagprof_code_region(code + 5 * 4096, 128, "b", q2, 1) == 0);
	t2 = clock__mono_ns();
	/* Registered again in place without a drop: the library ends q2. */
	CHECK(tagprof_code_region(code + 5 * 4096, 128, "c", q3, 1) == 0);
	t3 = clock__mono_ns();
	late = follow_self();
	CHECK(late);
	for (int pass = 0; pass < 2; pass++) {
		struct codemap *m = pass ? late : early;

		CHECK(codemap__refresh(m, t3, &st) == 0);
		r = codemap__find(m, (uintptr_t)code + 5 * 4096, t0);
		CHECK(r && streq(level(r, "query"), "q1"));
		CHECK(!codemap__find(m, (uintptr_t)code + 5 * 4096, t1));
		r = codemap__find(m, (uintptr_t)code + 5 * 4096, t2);
		CHECK(r && streq(level(r, "query"), "q2"));
		r = codemap__find(m, (uintptr_t)code + 5 * 4096 + 127, t3);
		CHECK(r && streq(level(r, "query"), "q3"));
	}
	codemap__free(early);
	codemap__free(late);
	CHECK(tagprof_code_region_drop(code + 5 * 4096) == 0);
}

/* A region over part of a live one at another start: the old one ends
 * when the new one begins, counted. */
static void test_overlap_ends_older(void)
{
	const char *a[] = { "operator=A" }, *b[] = { "operator=B" };
	const struct code_region *r;
	struct codemap_stats s = { 0 };
	struct codemap *m = follow_self();
	uint64_t t0, t1;

	CHECK(m);
	CHECK(tagprof_code_region(code + 6 * 4096, 256, "a", a, 1) == 0);
	t0 = clock__mono_ns();
	CHECK(tagprof_code_region(code + 6 * 4096 + 128, 256, "b", b, 1) == 0);
	t1 = clock__mono_ns();
	CHECK(codemap__refresh(m, t1, &s) == 0);
	CHECK(s.overlapped == 1);
	r = codemap__find(m, (uintptr_t)code + 6 * 4096 + 10, t0);
	CHECK(r && streq(level(r, "operator"), "A"));
	CHECK(!codemap__find(m, (uintptr_t)code + 6 * 4096 + 10, t1));
	r = codemap__find(m, (uintptr_t)code + 6 * 4096 + 130, t1);
	CHECK(r && streq(level(r, "operator"), "B"));
	codemap__free(m);
	CHECK(tagprof_code_region_drop(code + 6 * 4096) == 0);
	CHECK(tagprof_code_region_drop(code + 6 * 4096 + 128) == 0);
}

/* Enough churn to make the library compact its table several times: the
 * reader follows every switch, and what was dropped before a switch it
 * did not see is not live after it. */
static void test_compaction_followed(void)
{
	char q[32], op[32];
	const char *lv[] = { op, q };
	struct codemap_stats s = { 0 };
	struct codemap *m = follow_self();
	const struct code_region *r;
	uint64_t t;
	int i;

	CHECK(m);
	CHECK(tagprof_code_region(code + 7 * 4096, 64, "keeper",
				  (const char *[]){ "query=keep" }, 1) == 0);
	CHECK(codemap__refresh(m, clock__mono_ns(), &s) == 0);
	for (i = 0; i < 20000; i++) {
		snprintf(q, sizeof(q), "query=q%d", i);
		snprintf(op, sizeof(op), "operator=Op#%d", i % 7);
		CHECK(tagprof_code_region(code + 8 * 4096 + (i % 256) * 64, 64,
					  "churn", lv, 2) == 0);
		if (i % 5000 == 4999)
			CHECK(codemap__refresh(m, clock__mono_ns(), &s) == 0);
	}
	t = clock__mono_ns();
	CHECK(codemap__refresh(m, t, &s) == 0);
	CHECK(s.bad_records == 0 && s.unreadable == 0);
	r = codemap__find(m, (uintptr_t)code + 7 * 4096, t);
	CHECK(r && streq(level(r, "query"), "keep"));
	/* Slot 0 last held i = 19968, slot 31 i = 19999, slot 255 19967 */
	r = codemap__find(m, (uintptr_t)code + 8 * 4096, t);
	CHECK(r && streq(level(r, "query"), "q19968"));
	r = codemap__find(m, (uintptr_t)code + 8 * 4096 + 31 * 64, t);
	CHECK(r && streq(level(r, "query"), "q19999"));
	r = codemap__find(m, (uintptr_t)code + 8 * 4096 + 255 * 64, t);
	CHECK(r && streq(level(r, "query"), "q19967"));
	for (i = 0; i < 256; i++)
		CHECK(tagprof_code_region_drop(code + 8 * 4096 + i * 64) == 0);
	CHECK(tagprof_code_region_drop(code + 7 * 4096) == 0);
	/* A reader that starts now sees nothing live. */
	codemap__free(m);
	m = follow_self();
	t = clock__mono_ns();
	CHECK(m && codemap__refresh(m, t, &s) == 0);
	CHECK(!codemap__find(m, (uintptr_t)code + 8 * 4096, t));
	codemap__free(m);
}

/* A JIT that compiles query after query for hours: the reader frees the
 * strings and level sets of the regions it pruned and of the tables
 * before, so its memory follows what is live, not what ever was; and what
 * is live keeps its names. */
static void test_strings_collected(void)
{
	char q[256], op[32];
	const char *lv[] = { op, q };
	struct codemap_stats s = { 0 };
	struct codemap *m = follow_self();
	const struct code_region *r;
	size_t peak = 0, bytes;
	uint64_t t;
	int i;

	CHECK(m);
	CHECK(tagprof_code_region(code + 9 * 4096, 64, "keeper",
				  (const char *[]){ "query=kept" }, 1) == 0);
	/* 40,000 queries of one region each, with 200-byte distinct query
	 * strings: 8 MB of strings in all, one region live at a time. */
	for (i = 0; i < 40000; i++) {
		snprintf(q, sizeof(q), "query=%0200d", i);
		snprintf(op, sizeof(op), "operator=Op#%d", i % 7);
		CHECK(tagprof_code_region(code + 10 * 4096, 64, "q", lv, 2) == 0);
		if (i % 1000 == 999) {
			t = clock__mono_ns();
			CHECK(codemap__refresh(m, t, &s) == 0);
			/* as if 11 s passed: the ended regions go */
			codemap__prune(m, t + 11000000000ull);
			bytes = codemap__bytes(m);
			peak = bytes > peak ? bytes : peak;
		}
		CHECK(tagprof_code_region_drop(code + 10 * 4096) == 0);
	}
	CHECK(s.over_budget == 0 && s.bad_records == 0);
	/* Without collecting, the strings alone would hold 8 MB. */
	CHECK(peak < (2u << 20));
	CHECK(tagprof_code_region(code + 10 * 4096, 64, "last", lv, 2) == 0);
	t = clock__mono_ns();
	CHECK(codemap__refresh(m, t, &s) == 0);
	codemap__prune(m, t + 11000000000ull);
	r = codemap__find(m, (uintptr_t)code + 9 * 4096, t);
	CHECK(r && streq(r->name, "keeper") && streq(level(r, "query"), "kept"));
	r = codemap__find(m, (uintptr_t)code + 10 * 4096, t);
	CHECK(r && streq(r->name, "last") && streq(level(r, "query"), q + 6) &&
	      streq(level(r, "operator"), "Op#1"));
	CHECK(tagprof_code_region_drop(code + 10 * 4096) == 0);
	CHECK(tagprof_code_region_drop(code + 9 * 4096) == 0);
	codemap__free(m);
}

/* A process that exits: its regions live at the last read name the
 * samples taken up to that read, and not those after (they may have been
 * dropped in between, with no read left to tell): those are counted. */
static void test_gone_process(void)
{
	const char *lv[] = { "query=child" };
	struct codemap_stats s = { 0 };
	struct procctx ctx = { 0 };
	const struct procctx_attr *a;
	struct codemap *m = NULL;
	const struct code_region *r;
	int go[2], ready[2];
	uint64_t user[1], t0, t1;
	bool leaf;
	pid_t pid;
	char c;

	CHECK(!pipe(go) && !pipe(ready));
	pid = fork();
	if (!pid) {
		int ok = tagprof_process_init("child") == 0 &&
			 tagprof_code_region(code + 40 * 4096, 64, "c", lv, 1) == 0;

		c = ok ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	CHECK(pid > 0 && read(ready[0], &c, 1) == 1 && c == 'y');
	if (procctx__read(pid, &ctx) >= 0 && (a = procctx__attr(&ctx, TP_CODE_ATTR)))
		m = codemap__new(pid, (uint64_t)a->num);
	procctx__clear(&ctx);
	t0 = clock__mono_ns();
	CHECK(m && codemap__refresh(m, t0, &s) == 0);
	CHECK(write(go[1], "x", 1) == 1);
	waitpid(pid, NULL, 0);
	user[0] = (uintptr_t)code + 40 * 4096 + 8;
	r = codemap__attribute(m, user, 1, t0 - 1, &leaf, &s);
	CHECK(r && streq(level(r, "query"), "child") && s.unverified == 0);
	t1 = clock__mono_ns();
	r = codemap__attribute(m, user, 1, t1, &leaf, &s);
	CHECK(!r && s.unverified == 1 && s.unreadable == 0);
	codemap__free(m);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
}

/* A compiled query's regions in one call, as the paper's TPC-H query:
 * 1,320 of them over 12 operators and 4 pipelines. The table grows by 16
 * bytes a region and the sets' bytes once; starts registered again in the
 * same call (the last wins) and over live regions end the older ones. */
static void test_batch(void)
{
	static char lv[48][3][32];
	static const char *ptrs[48][3];
	struct tagprof_code_span *sp = calloc(1320, sizeof(*sp));
	const struct tp_code_anchor *an;
	struct codemap *m = follow_self();
	const struct code_region *r;
	uint64_t used, gen, t;
	int i;

	CHECK(sp && m);
	for (i = 0; i < 48; i++) {
		snprintf(lv[i][0], 32, "pipeline=%d", i % 4);
		snprintf(lv[i][1], 32, "operator=Op#%d", i / 4);
		snprintf(lv[i][2], 32, "query=q17");
		for (int k = 0; k < 3; k++)
			ptrs[i][k] = lv[i][k];
	}
	for (i = 0; i < 1320; i++)
		sp[i] = (struct tagprof_code_span){ code + 16 * 4096 + i * 16, 16,
						    NULL, ptrs[i % 48], 3 };
	CHECK(codemap__refresh(m, clock__mono_ns(), &st) == 0);
	an = (const void *)(uintptr_t)codemap__anchor(m);
	used = an->used;
	gen = an->gen;
	CHECK(tagprof_code_regions(sp, 1320) == 0);
	/* 16 bytes a region, the ADD's header, and 48 sets of 3 levels with
	 * their 65 strings, at most (some may be in the table already). */
	CHECK(an->gen != gen || an->used - used <= 1320 * 16 + 24 + 48 * 40 + 65 * 32);
	/* Again: each start ends its live region; a start twice in one call
	 * ends the first of them too. */
	sp[1].start = sp[0].start;
	sp[1].levels = ptrs[47];
	CHECK(tagprof_code_regions(sp, 2) == 0);
	t = clock__mono_ns();
	CHECK(codemap__refresh(m, t, &st) == 0);
	r = codemap__find(m, (uintptr_t)code + 16 * 4096, t);
	CHECK(r && streq(level(r, "operator"), "Op#11") && streq(level(r, "pipeline"), "3"));
	r = codemap__find(m, (uintptr_t)code + 16 * 4096 + 16, t);
	CHECK(r && streq(level(r, "operator"), "Op#0") && streq(level(r, "pipeline"), "1"));
	r = codemap__find(m, (uintptr_t)code + 16 * 4096 + 1319 * 16, t);
	CHECK(r && streq(level(r, "operator"), "Op#5") && streq(level(r, "pipeline"), "3"));
	for (i = 0; i < 1320; i++)
		CHECK(tagprof_code_region_drop(code + 16 * 4096 + i * 16) == 0);
	codemap__free(m);
	free(sp);
}

/* ---- the reader alone, on tables written here ---- */

struct tbl {
	uint8_t b[4096];
	size_t n;
};

static void put(struct tbl *t, const void *rec, size_t size)
{
	memcpy(t->b + t->n, rec, size);
	t->n += size;
}

static void put_str(struct tbl *t, uint64_t id, const char *s)
{
	uint8_t r[64] = { 0 };
	struct tp_code_rec h = { .kind = TP_CODE_REC_STR, .count = strlen(s), .id = id };

	h.size = (sizeof(h) + h.count + 7) & ~7u;
	memcpy(r, &h, sizeof(h));
	memcpy(r + sizeof(h), s, h.count);
	put(t, r, h.size);
}

static void put_set(struct tbl *t, uint64_t id, uint32_t name, uint32_t nlv,
		    const uint32_t *sids)
{
	uint8_t r[128] = { 0 };
	struct tp_code_set h = {
		.h = { .kind = TP_CODE_REC_SET, .count = nlv, .id = id },
		.name = name };

	h.h.size = (sizeof(h) + 4 * nlv + 7) & ~7u;
	memcpy(r, &h, sizeof(h));
	memcpy(r + sizeof(h), sids, 4 * nlv);
	put(t, r, h.h.size);
}

/* An ADD of one span. */
static void put_add(struct tbl *t, uint64_t id, uint64_t start, uint32_t len,
		    uint32_t set)
{
	struct {
		struct tp_code_add a;
		struct tp_code_span sp;
	} r = { .a = { .h = { .size = sizeof(r), .kind = TP_CODE_REC_ADD,
			      .count = 1, .id = id }, .time_ns = 1 },
		.sp = { start, len, set } };

	put(t, &r, sizeof(r));
}

static void test_bad_records_counted(void)
{
	struct codemap_stats s = { 0 };
	struct codemap *m = codemap__new(1, 0);
	struct tbl t = { .n = 0 };
	uint32_t ok[] = { 1 }, undefined[] = { 9 }, notkv[] = { 2 };

	CHECK(m);
	codemap__switch(m, 0);
	put_str(&t, 1, "operator=Scan");
	put_str(&t, 2, "no equals sign");
	put_set(&t, 1, 0, 1, ok);
	put_set(&t, 2, 0, 1, undefined);		/* bad */
	put_set(&t, 3, 0, 1, notkv);			/* bad */
	put_set(&t, 4, 7, 1, ok);			/* no string 7: bad */
	put_add(&t, 10, 0x1000, 16, 1);
	put_add(&t, 11, 0x2000, 16, 2);			/* set undefined: bad */
	put_add(&t, 12, UINT64_MAX - 4, 16, 1);		/* wraps: bad */
	put_add(&t, 13, 0x4000, 0, 1);			/* empty: bad */
	CHECK(codemap__apply(m, t.b, t.n, &s) == t.n);
	CHECK(s.added == 1 && s.bad_records == 6);
	/* An id again: the new table of a compaction adds the live regions
	 * again, but once it is read, a known id is bad. */
	codemap__switch_done(m);
	t.n = 0;
	put_add(&t, 10, 0x5000, 16, 1);
	CHECK(codemap__apply(m, t.b, t.n, &s) == t.n);
	CHECK(s.added == 1 && s.bad_records == 7);
	CHECK(codemap__find(m, 0x1000, 5));
	/* A size that is not a record's stops the table for good. */
	memset(t.b, 0, sizeof(t.b));
	t.n = 0;
	put(&t, &(struct tp_code_rec){ .size = 12, .kind = TP_CODE_REC_STR }, 16);
	put_add(&t, 20, 0x6000, 16, 1);
	CHECK(codemap__apply(m, t.b, t.n, &s) == 0);
	CHECK(s.bad_records == 8 && !codemap__find(m, 0x6000, 5));
	codemap__free(m);
}

/* ---- random tables against a brute-force reference ---- */


struct ref {
	uint64_t start, end, from, to, id;
	uint32_t set;
};

/* The reference's answer: the region that held addr at t, the newest if
 * several did (0: none). A region added ends the live ones it overlaps,
 * in id order, as the table's semantics say. */
static uint64_t ref_find(const struct ref *r, size_t n, uint64_t addr, uint64_t t)
{
	const struct ref *best = NULL;

	for (size_t i = 0; i < n; i++)
		if (r[i].start <= addr && addr < r[i].end && r[i].from <= t &&
		    t < r[i].to && (!best || r[i].from > best->from))
			best = &r[i];
	return best ? best->id : 0;
}

/* Batches of regions over a small address range (so they overlap and
 * reuse each other's code), drops, queries at random times and
 * addresses in between: codemap__find must give the reference's region. */
static void test_random_reference(void)
{
	struct codemap_stats s = { 0 };
	struct codemap *m = codemap__new(1, 0);
	static struct ref ref[4000];
	static uint8_t buf[1 << 16];
	size_t nref = 0, len;
	uint64_t t = 1000, next_id = 1;
	int mismatches = 0;

	CHECK(m);
	codemap__switch(m, 0);
	{
		struct tbl tb = { .n = 0 };
		uint32_t sid = 1;

		put_str(&tb, 1, "operator=A");
		put_set(&tb, 1, 0, 1, &sid);
		CHECK(codemap__apply(m, tb.b, tb.n, &s) == tb.n);
	}
	for (int round = 0; round < 300; round++) {
		size_t k = 1 + check_rnd(8), base = nref;
		struct tp_code_add a = { .h = { .kind = TP_CODE_REC_ADD, .count = k,
						.id = next_id }, .time_ns = t };

		/* an ADD of k regions at time t */
		a.h.size = sizeof(a) + k * sizeof(struct tp_code_span);
		memcpy(buf, &a, sizeof(a));
		for (size_t i = 0; i < k; i++) {
			struct tp_code_span sp = { 0x10000 + check_rnd(64) * 16, 8 + check_rnd(120), 1 };

			memcpy(buf + sizeof(a) + i * sizeof(sp), &sp, sizeof(sp));
			/* it ends the live regions it overlaps (older ids) */
			for (size_t j = 0; j < nref; j++)
				if (ref[j].to == UINT64_MAX && ref[j].start < sp.start + sp.len &&
				    sp.start < ref[j].end)
					ref[j].to = t;
			ref[nref++] = (struct ref){ sp.start, sp.start + sp.len, t,
						    UINT64_MAX, next_id++, 1 };
		}
		len = a.h.size;
		/* a drop or two of random regions, a little later */
		for (int d = check_rnd(3); d > 0 && nref; d--) {
			struct ref *r = &ref[check_rnd(nref)];
			struct tp_code_drop dr = { .h = { .size = sizeof(dr),
				.kind = TP_CODE_REC_DROP, .id = r->id }, .time_ns = t + 5 };

			memcpy(buf + len, &dr, sizeof(dr));
			len += sizeof(dr);
			if (r->to == UINT64_MAX)
				r->to = t + 5;
		}
		CHECK(codemap__apply(m, buf, len, &s) == len);
		(void)base;
		t += 10;
		for (int q = 0; q < 50; q++) {
			uint64_t addr = 0x10000 + check_rnd(64 * 16 + 128), when = 990 + check_rnd(t - 980);
			const struct code_region *r = codemap__find(m, addr, when);
			uint64_t want = ref_find(ref, nref, addr, when);

			if ((r ? r->id : 0) != want && mismatches++ < 5)
				fprintf(stderr, "  %#llx at %llu: got region %llu, want %llu\n",
					(unsigned long long)addr, (unsigned long long)when,
					(unsigned long long)(r ? r->id : 0),
					(unsigned long long)want);
		}
	}
	CHECK(mismatches == 0);
	CHECK(s.bad_records == 0);
	codemap__free(m);
}

/* Every prefix and every single-byte corruption of a good table: no crash,
 * no read past the buffer (run under the sanitizers by make check
 * SANITIZE=...), and what parses is bounded. */
static void test_hostile_bytes(void)
{
	struct tbl t = { .n = 0 };
	uint32_t lv[] = { 1, 2 };

	put_str(&t, 1, "operator=Scan#1");
	put_str(&t, 2, "query=q1");
	put_set(&t, 1, 2, 2, lv);
	put_add(&t, 1, 0x1000, 64, 1);
	put(&t, &(struct tp_code_drop){ .h = { .size = 24, .kind = TP_CODE_REC_DROP,
					       .id = 1 }, .time_ns = 9 }, 24);
	for (size_t len = 0; len <= t.n; len++) {
		struct codemap_stats s = { 0 };
		struct codemap *m = codemap__new(1, 0);
		uint8_t *copy = malloc(len ? len : 1);

		CHECK(m && copy);
		memcpy(copy, t.b, len);
		codemap__switch(m, 0);
		CHECK(codemap__apply(m, copy, len, &s) <= len);
		free(copy);
		codemap__free(m);
	}
	for (size_t i = 0; i < t.n; i++) {
		for (int v = 0; v < 256; v += 51) {
			struct codemap_stats s = { 0 };
			struct codemap *m = codemap__new(1, 0);
			struct tbl c = t;

			CHECK(m);
			c.b[i] = (uint8_t)v;
			codemap__switch(m, 0);
			CHECK(codemap__apply(m, c.b, c.n, &s) <= c.n);
			CHECK(codemap__count(m) <= 1);
			codemap__free(m);
		}
	}
}

/* A table address that is not mapped, or an anchor of garbage: an error,
 * counted, nothing kept. */
static void test_bad_anchor(void)
{
	static char junk[64] = "not an anchor";
	struct codemap_stats s = { 0 };
	struct codemap *m = codemap__new(getpid(), (uintptr_t)junk);

	CHECK(m);
	CHECK(codemap__refresh(m, clock__mono_ns(), &s) == -EINVAL);
	CHECK(s.unreadable == 1 && codemap__count(m) == 0);
	codemap__free(m);
	m = codemap__new(getpid(), 8);
	CHECK(m && codemap__refresh(m, clock__mono_ns(), &s) < 0);
	codemap__free(m);
}

/* A record larger than the reader's chunk (256 KiB): a size below the
 * table's bound, so not refused by its size, but never whole in a chunk.
 * The reader once read the same chunk again forever; it must refuse the
 * table and return. Run in a child, so a hang is a failure, not a stall. */
static void test_record_over_chunk(void)
{
	static struct tp_code_anchor a = { .magic = TP_CODE_MAGIC,
		.version = TP_CODE_VERSION, .anchor_size = sizeof(a) };
	size_t size = 1u << 20;
	uint8_t *table = calloc(1, size);
	struct tp_code_rec big = { .size = 512u << 10, .kind = 99 };
	int status = 0;
	pid_t pid;

	CHECK(table);
	if (!table)
		return;
	memcpy(table, &big, sizeof(big));
	a.table = (uintptr_t)table;
	a.size = size;
	a.used = size;
	pid = fork();
	if (pid == 0) {
		struct codemap_stats s = { 0 };
		struct codemap *m = codemap__new(getpid(), (uintptr_t)&a);

		alarm(10);
		if (!m || codemap__refresh(m, clock__mono_ns(), &s) != 0 ||
		    s.bad_records != 1 || codemap__count(m) != 0)
			_exit(1);
		codemap__free(m);
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	free(table);
}

int main(void)
{
	code = code_pages(64);
	if (!code)
		return 1;
	RUN(test_arguments_refused);
	RUN(test_regions_found);
	RUN(test_attribute_innermost);
	RUN(test_reuse_versions);
	RUN(test_overlap_ends_older);
	RUN(test_compaction_followed);
	RUN(test_strings_collected);
	RUN(test_batch);
	RUN(test_gone_process);
	RUN(test_bad_records_counted);
	RUN(test_record_over_chunk);
	RUN(test_random_reference);
	RUN(test_hostile_bytes);
	RUN(test_bad_anchor);
	return check_failed_total ? 1 : 0;
}
