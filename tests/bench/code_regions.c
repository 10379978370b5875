/* What the tagging dictionary of generated code costs (tests/bench/
 * code_regions.sh prints it):
 *   - tagprof_code_region() per call, in ns (median of RUNS batches);
 *   - the bytes the table holds per live region;
 *   - the agent's reader: memory held with N live regions, its first read
 *     of them, an incremental read of one more, and the attribution of a
 *     sample (a 20-frame stack, 3 of them in regions) in ns.
 * The library and the agent's reader (proc/codemap.h) run in this one
 * process: the reader finds the table as the agent does, through this
 * process's context, and reads it with process_vm_readv.
 *
 *	code_regions [N [RUNS]]		(default 100000 regions, 5 runs) */
#include "tagprof/tagprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "code_table.h"
#include "proc/codemap.h"
#include "proc/procctx.h"
#include "util/clock.h"

#define REGION	256	/* bytes of code each region names */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

#define QUERY	1320	/* regions of a query: the paper's TPC-H mean */

/* Level strings for region i: 22 queries, 12 operators and 4 pipelines
 * each, as a TPC-H-like plan gives them. */
struct levels {
	char p[32], o[48], q[32];
	const char *v[3];
};

static size_t query_salt;	/* makes new query names: new strings */

static void levels_of(struct levels *l, size_t i)
{
	snprintf(l->p, sizeof(l->p), "pipeline=%zu", i % 4);
	snprintf(l->o, sizeof(l->o), "operator=HashJoin#%zu", i % 48 / 4);
	snprintf(l->q, sizeof(l->q), "query=q%zu", i / QUERY % 22 + 1 + query_salt);
	l->v[0] = l->p;
	l->v[1] = l->o;
	l->v[2] = l->q;
}

/* Registers regions [first, first + n) at base, a query's at a time
 * (batch) or one call each. */
static void register_all(uint8_t *base, size_t n, size_t first, bool batch)
{
	static struct levels lv[QUERY];
	static struct tagprof_code_span sp[QUERY];

	for (size_t i = first; i < first + n;) {
		size_t k = batch ? QUERY - i % QUERY : 1, j;

		if (k > first + n - i)
			k = first + n - i;
		for (j = 0; j < k; j++) {
			levels_of(&lv[j], i + j);
			sp[j] = (struct tagprof_code_span){ base + (i + j) * REGION,
							    REGION, NULL, lv[j].v, 3 };
		}
		if (tagprof_code_regions(sp, k)) {
			fprintf(stderr, "tagprof_code_regions failed\n");
			exit(1);
		}
		i += k;
	}
}

static void drop_all(uint8_t *base, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tagprof_code_region_drop(base + i * REGION);
}

static uint64_t anchor_addr(void)
{
	struct procctx ctx = { 0 };
	const struct procctx_attr *a;
	uint64_t v = 0;

	if (procctx__read(getpid(), &ctx) >= 0 &&
	    (a = procctx__attr(&ctx, TP_CODE_ATTR)) && a->num > 0)
		v = (uint64_t)a->num;
	procctx__clear(&ctx);
	return v;
}

/* The agent's reader on n live regions, registered a query at a time
 * into this fresh process's table: its first read, its memory, its reads
 * after, and attribution per sample. */
static void bench_reader(uint8_t *base, size_t n, int runs, uint64_t *ns)
{
	struct codemap_stats st = { 0 };
	uint64_t t0, t1, user[20], sink = 0;
	struct codemap *m;
	bool leaf;

	register_all(base, n, 0, true);
	m = codemap__new(getpid(), anchor_addr());
	if (!m)
		exit(1);
	t0 = clock__mono_ns();
	codemap__refresh(m, t0, &st);
	t1 = clock__mono_ns();
	printf("reader: %zu live regions: first read %.1f ms, %.1f MiB held (%.0f bytes a region)\n",
	       codemap__count(m), (t1 - t0) / 1e6, codemap__bytes(m) / 1048576.0,
	       (double)codemap__bytes(m) / codemap__count(m));
	register_all(base, 1, n, false);
	t0 = clock__mono_ns();
	codemap__refresh(m, t0, &st);
	t1 = clock__mono_ns();
	printf("reader: a read that finds one more region %.1f us, ", (t1 - t0) / 1e3);
	t0 = clock__mono_ns();
	codemap__refresh(m, t0, &st);
	t1 = clock__mono_ns();
	printf("one that finds nothing new %.1f us\n", (t1 - t0) / 1e3);

	/* A 20-frame stack: 3 frames of shared code (no region), then
	 * generated code, then the engine. */
	for (int i = 0; i < 20; i++)
		user[i] = 0x1000 + i * 64;
	for (int r = 0; r < runs; r++) {
		uint64_t now = clock__mono_ns();

		t0 = clock__mono_ns();
		for (int i = 0; i < 1000000; i++) {
			user[3] = (uintptr_t)base + (size_t)(i * 7919u % n) * REGION + 17;
			sink += (uintptr_t)codemap__attribute(m, user, 20, now - 1, &leaf, &st);
		}
		ns[r] = clock__mono_ns() - t0;
	}
	printf("attribution: %.1f ns a sample (20 frames, the 4th in a region; median of %d x 1M)\n",
	       median(ns, runs) / 1e6, runs);
	for (int i = 0; i < 20; i++)
		user[i] = 0x1000 + i * 64;
	for (int r = 0; r < runs; r++) {
		t0 = clock__mono_ns();
		for (int i = 0; i < 1000000; i++)
			sink += (uintptr_t)codemap__attribute(m, user, 20, 1, &leaf, &st);
		ns[r] = clock__mono_ns() - t0;
	}
	printf("attribution: %.1f ns a sample in no region (20 frames)%s\n",
	       median(ns, runs) / 1e6, sink == 42 ? " " : "");
	codemap__free(m);
	drop_all(base, n + 1);
}

/* tagprof_code_region() a call a region, then tagprof_code_regions() a
 * query's regions a call: rounds of n registrations and n drops. The
 * level strings are made outside the timing: a code generator has them. */
static void bench_register(uint8_t *base, size_t n, int runs, uint64_t *ns)
{
	for (int batch = 0; batch < 2; batch++) {
		for (int r = 0; r < runs; r++) {
			uint64_t t0, t1, fmt = 0;

			t0 = clock__mono_ns();
			register_all(base, n, 0, batch);
			t1 = clock__mono_ns();
			for (size_t i = 0; i < n; i++) {
				struct levels l;
				uint64_t a = clock__mono_ns();

				levels_of(&l, i);
				fmt += clock__mono_ns() - a;
			}
			ns[r] = t1 - t0 - fmt;
			drop_all(base, n);
		}
		printf("%s: %.0f ns a region (median of %d rounds of %zu)\n",
		       batch ? "tagprof_code_regions, a query's 1320 a call" :
			       "tagprof_code_region, a call a region",
		       (double)median(ns, runs) / n, runs, n);
	}
}

/* What one new query's regions (new strings) add to a table with room (a
 * compaction in between spoils the figure: then again). */
static void bench_query_bytes(uint8_t *base)
{
	const struct tp_code_anchor *anchor = (const void *)(uintptr_t)anchor_addr();

	for (int again = 0; anchor && again < 3; again++) {
		uint64_t gen = anchor->gen, used = anchor->used, b;

		query_salt = 1000 + again;
		register_all(base, QUERY, 0, true);
		b = anchor->used - used;
		query_salt = 0;
		drop_all(base, QUERY);
		if (anchor->gen != gen)
			continue;
		printf("table: a new query's %d regions add %llu bytes, %.1f a region, "
		       "its 48 sets and their strings included (the paper's dictionary: "
		       "~30 KB a TPC-H query)\n", QUERY, (unsigned long long)b,
		       (double)b / QUERY);
		return;
	}
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	uint64_t *ns = calloc(runs > 0 ? runs : 1, sizeof(*ns));
	uint8_t *base = mmap(NULL, (n + 1) * REGION, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (!ns || base == MAP_FAILED || runs < 1 || n < QUERY)
		return 1;
	bench_reader(base, n, runs, ns);
	bench_register(base, n, runs, ns);
	bench_query_bytes(base);
	return 0;
}
