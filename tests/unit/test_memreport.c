/* report memory's analysis (src/report/memory.c) on samples made here:
 * --bucket sizes, counting by bucket (touched buckets only, kernel
 * addresses too), the working-set curve, the skew, panels split at the
 * gaps and bounded, the address ranges' text, and the report built from
 * samples: objects and --by values in their order, the curve over all
 * objects, the text's lines and a bounded page for a wild spread. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report/memory.h"

static bool parses(const char *s, uint64_t want)
{
	char err[128] = "";
	uint64_t got = 0;

	if (mem_bucket__parse(s, &got, err, sizeof(err))) {
		fprintf(stderr, "  %s: %s\n", s, err);
		return false;
	}
	if (got != want)
		fprintf(stderr, "  %s: %llu, want %llu\n", s,
			(unsigned long long)got, (unsigned long long)want);
	return got == want;
}

/* s is refused, with why containing what. */
static bool refused(const char *s, const char *what)
{
	char err[128] = "";
	uint64_t got = 12345;

	if (!mem_bucket__parse(s, &got, err, sizeof(err)) || got != 12345 ||
	    !strstr(err, what)) {
		fprintf(stderr, "  %s: got %llu, said '%s' (want '%s')\n", s,
			(unsigned long long)got, err, what);
		return false;
	}
	return true;
}

static void test_bucket_parse(void)
{
	CHECK(parses("64", 64) && parses("8", 8) && parses("8B", 8));
	CHECK(parses("4K", 4096) && parses("4k", 4096) &&
	      parses("4KiB", 4096) && parses("4KB", 4096) &&
	      parses("4kib", 4096));
	CHECK(parses("2M", 2 << 20) && parses("2MiB", 2 << 20));
	CHECK(parses("1G", 1 << 30) && parses("1GiB", 1 << 30) &&
	      parses("1024M", 1 << 30));
	CHECK(refused("4", "out of range") && refused("0", "out of range") &&
	      refused("2G", "out of range") &&
	      refused("2048M", "out of range"));
	CHECK(refused("3000", "not a power of two") &&
	      refused("12K", "not a power of two") &&
	      refused("96", "not a power of two"));
	CHECK(refused("", "not a size") && refused("x", "not a size") &&
	      refused("-64", "not a size") && refused(" 64", "not a size") &&
	      refused("+64", "not a size") && refused("0x40", "not a size") &&
	      refused("4Q", "not a size") && refused("64 ", "not a size") &&
	      refused("4T", "not a size") && refused("1.5K", "not a size"));
	/* too big for 64 bits before the unit is applied */
	CHECK(refused("99999999999999999999999", "not a size") &&
	      refused("18014398509481984K", "out of range"));
	CHECK(refused(NULL, "not a size"));
}

static void test_size_and_range_text(void)
{
	char buf[96];

	CHECK(!strcmp(mem__size_text(4096, buf, sizeof(buf)), "4 KiB"));
	CHECK(!strcmp(mem__size_text(12, buf, sizeof(buf)), "12 B"));
	CHECK(!strcmp(mem__size_text(3 << 19, buf, sizeof(buf)), "1.5 MiB"));
	CHECK(!strcmp(mem__size_text(1ull << 40, buf, sizeof(buf)), "1 TiB"));
	CHECK(!strcmp(mem__range_text(0x7f0000000ull, 0x7f00003ffull, 12, buf,
				      sizeof(buf)),
		      "0x7f0000000000-0x7f0000400000 (4 MiB)"));
	/* the last bucket of the address space: its end is 2^64 */
	CHECK(!strcmp(mem__range_text(UINT64_MAX >> 12, UINT64_MAX >> 12, 12,
				      buf, sizeof(buf)),
		      "0xfffffffffffff000-0x10000000000000000 (4 KiB)"));
	/* all of it: the size saturates instead of wrapping to 0 */
	CHECK(!strcmp(mem__range_text(0, UINT64_MAX >> 12, 12, buf,
				      sizeof(buf)),
		      "0x0-0x10000000000000000 (16.0 EiB)"));
}

static struct mem_sample smp(uint64_t addr, uint32_t n)
{
	return (struct mem_sample){ .addr = addr, .n = n, .t_ns = 0 };
}

static void test_buckets(void)
{
	const struct mem_sample s[] = {
		smp(0xffff888000001234ull, 1), smp(0x7f0000001fffull, 2),
		smp(0x7f0000001000ull, 3), smp(0x1000, 1),
		smp(0xffff888000001000ull, 4), smp(0x7f0000000fffull, 5),
	};
	struct mem_bucket *b;
	size_t n;

	CHECK(!mem__buckets(s, 6, 12, &b, &n));
	/* four touched buckets, by address, kernel ones last */
	CHECK(n == 4);
	CHECK(b[0].idx == 1 && b[0].n == 1);
	CHECK(b[1].idx == 0x7f0000000ull && b[1].n == 5);
	CHECK(b[2].idx == 0x7f0000001ull && b[2].n == 5);
	CHECK(b[3].idx == 0xffff888000001ull && b[3].n == 5);
	free(b);
	/* 8-byte buckets split what 4 KiB ones merge */
	CHECK(!mem__buckets(s, 6, 3, &b, &n));
	CHECK(n == 6 && b[4].idx == 0xffff888000001000ull >> 3 &&
	      b[5].idx == 0xffff888000001230ull >> 3 && b[5].n == 1);
	free(b);
	CHECK(!mem__buckets(s, 0, 12, &b, &n) && n == 0 && !b);
}

/* buckets with these counts, at indices 0, 2, 4, ... */
static size_t make_buckets(struct mem_bucket *b, const uint64_t *counts,
			   size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (struct mem_bucket){ .idx = 2 * i, .n = counts[i] };
	return n;
}

static void test_working_set(void)
{
	static const uint64_t counts[] = { 1, 2, 3, 4, 8, 9, 1, 1 };
	struct mem_bucket b[8];
	struct mem_ws_point ws[MEM_WS_POINTS];
	size_t n = make_buckets(b, counts, 8), np;

	np = mem__working_set(b, n, ws);
	CHECK(np == 4);
	CHECK(ws[0].k == 1 && ws[0].buckets == 8);
	CHECK(ws[1].k == 2 && ws[1].buckets == 5);
	CHECK(ws[2].k == 4 && ws[2].buckets == 3);
	CHECK(ws[3].k == 8 && ws[3].buckets == 2);
	CHECK(mem__working_set(b, 0, ws) == 0);
	/* one bucket hit 2^40 times: 41 points, the last 1 bucket */
	b[0].n = 1ull << 40;
	np = mem__working_set(b, 1, ws);
	CHECK(np == 41 && ws[40].k == 1ull << 40 && ws[40].buckets == 1);
}

static void test_skew(void)
{
	struct mem_bucket *b = calloc(1024, sizeof(*b));
	struct mem_skew k;

	CHECK(b);
	/* one hot bucket of 100: the top 1% is it, the top 10% ten */
	for (size_t i = 0; i < 100; i++)
		b[i] = (struct mem_bucket){ .idx = i, .n = i == 37 ? 901 : 1 };
	CHECK(!mem__skew(b, 100, &k));
	CHECK(k.total == 1000 && k.top1_n == 1 && k.top1 == 901);
	CHECK(k.top10_n == 10 && k.top10 == 910);
	CHECK(k.ntop == MEM_TOP_BUCKETS && k.top[0].idx == 37 &&
	      k.top[0].n == 901 && k.top[1].idx == 0 && k.top[9].idx == 8);
	/* uniform: the shares are the buckets' (rounded up: 11 and 103) */
	for (size_t i = 0; i < 1024; i++)
		b[i] = (struct mem_bucket){ .idx = i, .n = 4 };
	CHECK(!mem__skew(b, 1024, &k));
	CHECK(k.top1_n == 11 && k.top1 == 44 && k.top10_n == 103 &&
	      k.top10 == 412 && k.total == 4096);
	CHECK(!mem__skew(b, 3, &k) && k.top1_n == 1 && k.top10_n == 1 &&
	      k.ntop == 3);
	CHECK(!mem__skew(b, 0, &k) && k.total == 0 && k.ntop == 0);
	free(b);
}

/* n runs of len touched buckets (count c each) from start, every gap
 * apart, into b; the buckets. */
static size_t runs(struct mem_bucket *b, size_t at, uint64_t start,
		   size_t n, size_t len, uint64_t gap, uint64_t c)
{
	for (size_t r = 0; r < n; r++)
		for (size_t i = 0; i < len; i++)
			b[at++] = (struct mem_bucket){
				.idx = start + r * (len + gap) + i, .n = c };
	return at;
}

static int by_idx(const void *a, const void *b)
{
	const struct mem_bucket *x = a, *y = b;

	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Sorted by address, duplicates merged. */
static size_t sort_buckets(struct mem_bucket *b, size_t n)
{
	size_t out = 0;

	qsort(b, n, sizeof(*b), by_idx);
	for (size_t i = 0; i < n; i++) {
		if (out && b[out - 1].idx == b[i].idx)
			b[out - 1].n += b[i].n;
		else
			b[out++] = b[i];
	}
	return out;
}

static size_t drawn(const struct mem_panel *p, size_t n)
{
	size_t d = 0;

	for (size_t i = 0; i < n; i++)
		d += p[i].drawn;
	return d;
}

static void test_panels(void)
{
	struct mem_bucket *b = calloc(20000, sizeof(*b));
	struct mem_panel *p;
	size_t n, np, k;

	CHECK(b);
	/* one dense range: one panel, however tall */
	n = runs(b, 0, 1000, 1, 5000, 0, 1);
	CHECK(!mem__panels(b, n, 160, 256, &p, &np));
	CHECK(np == 1 && p[0].first == 1000 && p[0].last == 5999 &&
	      p[0].nb == 5000 && p[0].samples == 5000 && p[0].drawn);
	free(p);
	/* user and kernel addresses: split at the gap */
	n = runs(b, 0, 0x7f0000000ull, 1, 300, 0, 2);
	n = runs(b, n, 0xffff888000000ull, 1, 200, 0, 1);
	CHECK(!mem__panels(b, n, 160, 256, &p, &np));
	CHECK(np == 2 && p[0].first == 0x7f0000000ull && p[0].nb == 300 &&
	      p[0].samples == 600 && p[1].first == 0xffff888000000ull &&
	      p[1].last == 0xffff888000000ull + 199 && p[1].b0 == 300);
	free(p);
	/* a panel of at most rows buckets keeps its gaps: they show */
	n = runs(b, 0, 0, 2, 10, 100, 1);
	CHECK(!mem__panels(b, n, 160, 256, &p, &np) && np == 1);
	free(p);
	/* a gap under half the span stays... */
	n = runs(b, 0, 0, 2, 400, 799, 1);
	CHECK(!mem__panels(b, n, 160, 256, &p, &np) && np == 1);
	free(p);
	/* ...one of half splits */
	n = runs(b, 0, 0, 2, 400, 800, 1);
	CHECK(!mem__panels(b, n, 160, 256, &p, &np) && np == 2 &&
	      p[0].last == 399 && p[1].first == 1200);
	free(p);
	/* a dense array and a small one far off: apart */
	n = runs(b, 0, 0, 1, 3000, 0, 1);
	n = runs(b, n, 50000, 1, 5, 0, 1);
	CHECK(!mem__panels(b, n, 160, 256, &p, &np) && np == 2 &&
	      p[1].first == 50000 && p[1].nb == 5);
	free(p);
	/* random access over one structure: one panel, however sparse */
	n = 0;
	for (uint64_t i = 0; i < 2000; i++)
		n = runs(b, n, i * 300 + check_rnd(200), 1, 1, 0, 1);
	CHECK(!mem__panels(b, n, 160, 256, &p, &np) && np == 1);
	free(p);
	/* and sparser: 1000 samples of 64 B buckets over 1 GiB */
	n = 0;
	for (uint64_t i = 0; i < 1000; i++)
		n = runs(b, n, check_rnd(1ull << 24), 1, 1, 0, 1);
	n = sort_buckets(b, n);
	CHECK(!mem__panels(b, n, 160, 256, &p, &np) && np == 1);
	free(p);
	/* and beside it, far away, another mapping: two */
	n = 0;
	for (uint64_t i = 0; i < 2000; i++)
		n = runs(b, n, i * 300 + check_rnd(200), 1, 1, 0, 1);
	n = runs(b, n, 1ull << 40, 1, 100, 0, 1);
	CHECK(!mem__panels(b, n, 160, 256, &p, &np) && np == 2 &&
	      p[1].first == 1ull << 40 && p[0].nb == 2000);
	free(p);
	/* 40 far-apart mappings: 40 panels, the 16 with most samples
	 * drawn */
	n = 0;
	for (size_t r = 0; r < 40; r++)
		n = runs(b, n, r << 30, 1, 50, 0, r == 7 ? 100 : 1 + r % 3);
	CHECK(!mem__panels(b, n, 160, 256, &p, &np));
	CHECK(np == 40 && drawn(p, np) == MEM_PANELS_DRAWN && p[7].drawn);
	for (size_t i = 0; i < np; i++)
		CHECK(p[i].first == (uint64_t)i << 30 && p[i].nb == 50);
	free(p);
	/* more ranges than max: max panels, the widest gaps split first */
	n = 0;
	for (size_t r = 0; r < 300; r++)
		n = runs(b, n, (r << 30) + (r == 150 ? 1ull << 40 : 0), 1, 20,
			 0, 1);
	CHECK(!mem__panels(b, n, 160, 8, &p, &np));
	CHECK(np == 8);
	for (k = 0; k < np && p[k].first != (150ull << 30) + (1ull << 40); k++)
		;
	CHECK(k < np && p[k - 1].last == (149ull << 30) + 19);
	free(p);
	CHECK(!mem__panels(b, 0, 160, 8, &p, &np) && np == 0);
	free(b);
}

/* A report of samples: obj name, comp value (NULL: none), address,
 * time, weight (0: none). */
struct row {
	const char *obj, *comp;
	uint64_t addr;
	int64_t t;
	uint64_t weight;
};

static int add_rows(struct memrep *m, const struct row *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t name = memrep__intern(m, r[i].obj);
		struct mem_sample s = {
			.addr = r[i].addr, .t_ns = r[i].t, .n = 1,
			.weight = r[i].weight, .has_weight = r[i].weight > 0,
			.obj = memrep__object(m, name, 1),
			.comp = !m->by ? MEM_NONE : r[i].comp ?
				memrep__intern(m, r[i].comp) : MEM_NOVAL,
		};

		if (memrep__add_sample(m, &s))
			return -1;
		m->cov.addr++;
	}
	return 0;
}

static void test_report(void)
{
	static const struct row rows[] = {
		{ "buf", "q1", 0x10000, 1, 10 },
		{ "buf", "q1", 0x10008, 2, 10 },
		{ "buf", "q2", 0x11000, 3, 30 }, { "buf", NULL, 0x12000, 4, 0 },
		{ "heap", "q2", 0x5000, 5, 0 }, { "buf", "q1", 0x13000, 6, 10 },
		{ "heap", "q2", 0x5010, 7, 0 }, { "buf", "q2", 0x10010, 8, 30 },
	};
	struct memrep *m = memrep__new(&(struct memrep_opts){
		.bucket = 4096, .by = "query" });
	const struct mem_set *buf, *c;
	struct strbuf b = { 0 };

	CHECK(m && !add_rows(m, rows, 8) && !memrep__finish(m));
	/* objects by samples; each: its whole set, then its values' */
	CHECK(m->nobjs == 2 && !strcmp(memrep__str(m, m->objs[0].name), "buf"));
	CHECK(m->objs[0].ncomps == 3 && m->objs[1].ncomps == 1);
	buf = &m->sets[m->objs[0].set];
	CHECK(buf->samples == 6 && buf->nb == 4 && buf->weighted == 5 &&
	      buf->weight == 90 && buf->comp == MEM_NONE);
	CHECK(buf->b[0].idx == 0x10 && buf->b[0].n == 3 && buf->np == 1);
	c = &m->sets[m->objs[0].comp0];
	CHECK(!strcmp(memrep__str(m, c[0].comp), "q1") && c[0].samples == 3 &&
	      c[0].weight == 30 && c[0].nb == 2);
	CHECK(!strcmp(memrep__str(m, c[1].comp), "q2") && c[1].samples == 2 &&
	      c[1].weight == 60);
	CHECK(c[2].comp == MEM_NOVAL && c[2].samples == 1 && !c[2].weighted);
	/* every object's buckets, added */
	CHECK(m->buckets_all == 5 && m->ncomps == 3 && m->nws == 2 &&
	      m->ws[0].buckets == 5 && m->ws[1].buckets == 2);
	CHECK(m->t0 == 1 && m->t1 == 8);
	CHECK(!memrep__write_text(m, &(struct memrep_out){ .title = "x" }, &b));
	CHECK(strstr(b.p, "\n== all objects: 2 objects, 5 buckets touched "
		     "(20 KiB)\n"));
	CHECK(strstr(b.p, "\n== object buf, query=q1\nsamples: 3 (50.0% of "
		     "the object's)\nlatency: 30 cycles (33.3% of the "
		     "object's)"));
	CHECK(strstr(b.p, "\n  (no query)  1 16.7%  0 0.0%\n"));
	CHECK(strstr(b.p, "\n== object heap\nsamples: 2 (25.0% of those with "
		     "an address)\nlatency: n/a"));
	strbuf__free(&b);
	CHECK(!memrep__write_html(m, &(struct memrep_out){ .title = "<x>" },
				  &b));
	CHECK(strstr(b.p, "<title>tagprof memory: &lt;x&gt;</title>") &&
	      !strstr(b.p, "<x>") && strstr(b.p, "class=\"heat\""));
	strbuf__free(&b);
	memrep__free(m);
}

/* One object of n samples at 64-byte buckets, addresses from addr(i). */
static struct memrep *spread(size_t n, uint64_t (*addr)(size_t))
{
	struct memrep *m = memrep__new(&(struct memrep_opts){ .bucket = 64 });
	uint32_t name = m ? memrep__intern(m, "[anon]") : MEM_NONE;

	for (size_t i = 0; m && i < n; i++) {
		struct mem_sample s = {
			.addr = addr(i), .t_ns = (int64_t)i * 1000, .n = 1,
			.obj = memrep__object(m, name, 1), .comp = MEM_NONE };

		if (memrep__add_sample(m, &s)) {
			memrep__free(m);
			return NULL;
		}
	}
	if (m && memrep__finish(m)) {
		memrep__free(m);
		return NULL;
	}
	return m;
}

/* Anywhere in the 64-bit space. */
static uint64_t anywhere(size_t i)
{
	(void)i;
	return check_rnd(UINT64_MAX) ^ (check_rnd(2) << 63);
}

/* Half in the kernel's direct map (64 GiB), half in 20 user mappings of
 * 64 KiB, 4 GiB apart. */
static uint64_t mixed(size_t i)
{
	if (i % 2)
		return 0xffff888000000000ull + check_rnd(1ull << 36);
	return 0x7f0000000000ull + ((uint64_t)(i / 2 % 20) << 32) +
	       check_rnd(1 << 16);
}

/* Samples all over the 64-bit space: a scatter, one panel, not 50000;
 * kernel and user mappings far apart: a panel each, 16 drawn. Bounded
 * pages either way. */
static void test_wild_spread(void)
{
	struct memrep *m = spread(50000, anywhere);
	struct strbuf b = { 0 };
	const struct mem_set *st;

	CHECK(m);
	st = &m->sets[m->objs[0].set];
	CHECK(st->nb == 50000 && st->np == 1);
	CHECK(!memrep__write_html(m, &(struct memrep_out){ .title = "w" }, &b));
	CHECK(b.len < 16u << 20);
	strbuf__free(&b);
	memrep__free(m);

	m = spread(50000, mixed);
	CHECK(m);
	st = &m->sets[m->objs[0].set];
	CHECK(st->np == 21 && drawn(st->p, st->np) == MEM_PANELS_DRAWN);
	for (size_t i = 0; i < 20; i++)
		CHECK(st->p[i].first >> (32 - 6) ==
			      (0x7f0000000000ull >> 32) + i &&
		      st->p[i].samples == 1250 && st->p[i].drawn == (i < 15));
	/* the kernel's range, the fullest, is one panel, drawn */
	CHECK(st->p[20].first >= 0xffff888000000000ull >> 6 &&
	      st->p[20].drawn && st->p[20].samples == 25000);
	CHECK(!memrep__write_html(m, &(struct memrep_out){ .title = "w" }, &b));
	CHECK(b.len < 16u << 20 && strstr(b.p, "more address ranges"));
	strbuf__free(&b);
	CHECK(!memrep__write_text(m, &(struct memrep_out){ .title = "w" }, &b));
	CHECK(b.len < 1u << 20 && strstr(b.p, " more ranges, "));
	strbuf__free(&b);
	memrep__free(m);
}

int main(void)
{
	RUN(test_bucket_parse);
	RUN(test_size_and_range_text);
	RUN(test_buckets);
	RUN(test_working_set);
	RUN(test_skew);
	RUN(test_panels);
	RUN(test_report);
	RUN(test_wild_spread);
	CHECK_EXIT();
}
