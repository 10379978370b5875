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

/* Registers n regions at base, levels as a TPC-H-like plan would give
 * them: 22 queries, 12 operators each, 4 pipelines each. */
static void register_all(uint8_t *base, size_t n, size_t first)
{
	char p[32], o[48], q[32];
	const char *lv[] = { p, o, q };

	for (size_t i = first; i < first + n; i++) {
		snprintf(p, sizeof(p), "pipeline=%zu", i % 4);
		snprintf(o, sizeof(o), "operator=HashJoin#%zu", i % 12);
		snprintf(q, sizeof(q), "query=q%zu", i / 1320 % 22 + 1);
		if (tagprof_code_region(base + i * REGION, REGION, "gen", lv, 3)) {
			fprintf(stderr, "tagprof_code_region failed\n");
			exit(1);
		}
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

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	uint64_t *ns = calloc(runs, sizeof(*ns)), t0, t1, user[20], sink = 0;
	uint8_t *base = mmap(NULL, (n + 1) * REGION, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct codemap_stats st = { 0 };
	const struct tp_code_anchor *anchor;
	struct codemap *m;
	bool leaf;

	if (!ns || base == MAP_FAILED || runs < 1)
		return 1;
	/* Batches of n registrations and n drops; the first run also pays
	 * for growing the table and the library's indexes. */
	for (int r = 0; r < runs; r++) {
		t0 = clock__mono_ns();
		register_all(base, n, 0);
		t1 = clock__mono_ns();
		ns[r] = t1 - t0;
		if (r + 1 < runs)
			drop_all(base, n);
	}
	printf("regions: %zu live, levels pipeline/operator/query (%zu distinct sets)\n",
	       n, n < 22 * 48 ? n : (size_t)(22 * 48));
	printf("tagprof_code_region: %.0f ns per call (median of %d batches of %zu)\n",
	       (double)median(ns, runs) / n, runs, n);

	anchor = (const void *)(uintptr_t)anchor_addr();
	if (!anchor) {
		fprintf(stderr, "no code table in the process context\n");
		return 1;
	}
	/* After the last batch's drops and registrations the table was
	 * compacted at least once: compact again by reading what a fresh
	 * table of the n regions weighs, the strings included. */
	printf("table: %.1f bytes per live region (%llu bytes used of %llu, strings included)\n",
	       (double)anchor->used / n, (unsigned long long)anchor->used,
	       (unsigned long long)anchor->size);

	m = codemap__new(getpid(), (uintptr_t)anchor);
	t0 = clock__mono_ns();
	codemap__refresh(m, t0, &st);
	t1 = clock__mono_ns();
	printf("reader: first read of the table %.1f ms; %zu regions held in %.1f MiB (%.0f bytes each)\n",
	       (t1 - t0) / 1e6, codemap__count(m), codemap__bytes(m) / 1048576.0,
	       (double)codemap__bytes(m) / codemap__count(m));
	register_all(base, 1, n);
	t0 = clock__mono_ns();
	codemap__refresh(m, t0, &st);
	t1 = clock__mono_ns();
	printf("reader: incremental read of one more region %.1f us\n", (t1 - t0) / 1e3);
	t0 = clock__mono_ns();
	codemap__refresh(m, t0, &st);
	t1 = clock__mono_ns();
	printf("reader: read with nothing new %.1f us\n", (t1 - t0) / 1e3);

	/* Attribution: a 20-frame stack, the innermost 3 in shared code
	 * (no region), then generated code, then the engine. */
	for (int i = 0; i < 20; i++)
		user[i] = 0x1000 + i * 64;
	for (int r = 0; r < runs; r++) {
		uint64_t now = clock__mono_ns();
		const int k = 1000000;

		t0 = clock__mono_ns();
		for (int i = 0; i < k; i++) {
			user[3] = (uintptr_t)base + (size_t)(i * 7919u % n) * REGION + 17;
			sink += (uintptr_t)codemap__attribute(m, user, 20, now - 1, &leaf, &st);
		}
		t1 = clock__mono_ns();
		ns[r] = (t1 - t0) / (k / 1000);
	}
	printf("attribution: %.1f ns per sample (20 frames, region at the 4th; median of %d x 1M)\n",
	       median(ns, runs) / 1000.0, runs);
	for (int r = 0; r < runs; r++) {
		const int k = 1000000;

		for (int i = 0; i < 20; i++)
			user[i] = 0x1000 + i * 64;
		t0 = clock__mono_ns();
		for (int i = 0; i < k; i++)
			sink += (uintptr_t)codemap__attribute(m, user, 20, 1, &leaf, &st);
		t1 = clock__mono_ns();
		ns[r] = (t1 - t0) / (k / 1000);
	}
	printf("attribution: %.1f ns per sample in no region (20 frames)\n",
	       median(ns, runs) / 1000.0);
	codemap__free(m);
	return sink == 42;
}
