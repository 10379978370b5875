/* What a per-sample (timeline) pprof costs against the merged one, for the
 * same samples: a minute at 999 Hz on two CPUs by default (119,880
 * samples), over a few thousand distinct stacks (a few hot, most rare)
 * with the labels record gives (process, thread, pid, tid, cpu) and a
 * query_id that each of 8 threads changes every half second. Prints, per mode,
 * the CPU to add the samples and to encode the file, per sample, the bytes
 * of the file per sample, and the heap the builder holds (mallinfo2).
 *
 * usage: timeline_cost [SAMPLES [STACKS [DEPTH]]]   (tests/bench/timeline_cost.sh) */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "out/pprof.h"

static uint64_t cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* xorshift64: the same samples for both modes */
static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static int run(int timeline, size_t nsamples, size_t nstacks, size_t depth)
{
	static const struct pprof_vt types[2] = {
		{ "samples", "count" }, { "cpu", "nanoseconds" } };
	struct pprof *p = pprof__new(types, 2, types[1], 1001001);
	uint64_t x = 88172645463325252ull, *stacks, fn, t0, t1, t2;
	size_t nlocs = nstacks * 2, heap;
	uint8_t *gz = NULL;
	size_t len = 0;
	char name[32], query[16], tid[16];

	stacks = calloc(nstacks * depth, sizeof(*stacks));
	if (!p || !stacks || (timeline && pprof__set_timeline(p)))
		return 1;
	for (size_t i = 0; i < nlocs; i++) {
		snprintf(name, sizeof(name), "function_%zu", i);
		fn = pprof__function(p, name, NULL, "/src/engine.c");
		if (!fn || !pprof__location(p, 0, 0x400000 + 16 * i, &fn,
					    NULL, 1))
			return 1;
	}
	/* stacks share their roots, as real ones do */
	for (size_t s = 0; s < nstacks; s++)
		for (size_t d = 0; d < depth; d++)
			stacks[s * depth + d] = 1 + (d < depth / 2 ?
				next(&x) % nlocs : (s + d) % nlocs);
	pprof__set_time_origin(p, 0);
	t0 = cpu_ns();
	for (size_t i = 0; i < nsamples; i++) {
		uint64_t r = next(&x);
		int64_t v[2] = { 1, 1001001 };
		struct pprof_label l[6] = {
			{ .key = "process", .str = "engine" },
			{ .key = "thread", .str = "worker" },
			{ .key = "pid", .num = 4242 },
			{ .key = "tid", .str = tid },
			{ .key = "cpu", .num = (int64_t)(i & 1), .num_unit = "cpu" },
			{ .key = "query_id", .str = query },
		};

		/* 8 threads, each on one query for half a second at a time;
		 * a few stacks are hot, most are rare (the square of a
		 * uniform draw) */
		uint64_t th = r % 8, u = (r >> 8) % 65536;

		snprintf(tid, sizeof(tid), "%llu", 4242 + (unsigned long long)th);
		snprintf(query, sizeof(query), "q%llu",
			 (unsigned long long)(th * 1000 + i / 999));
		if (pprof__add_sample_at(p, stacks + u * u / 65536 * nstacks /
						 65536 * depth,
					 depth, v, l, 6,
					 (int64_t)(i * 1001001 / 2)))
			return 1;
	}
	t1 = cpu_ns();
	heap = mallinfo2().uordblks;
	if (pprof__encode(p, &gz, &len))
		return 1;
	t2 = cpu_ns();
	printf("%-9s %8zu %9zu %10.0f %11.0f %9.1f %8.1f\n",
	       timeline ? "timeline" : "merged", nsamples,
	       timeline ? pprof__event_count(p) : pprof__sample_count(p),
	       (double)(t1 - t0) / (double)nsamples,
	       (double)(t2 - t1) / (double)nsamples,
	       (double)len / (double)nsamples, (double)heap / 1048576.0);
	free(gz);
	free(stacks);
	pprof__free(p);
	return 0;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 119880;
	size_t stacks = argc > 2 ? strtoull(argv[2], NULL, 10) : 3000;
	size_t depth = argc > 3 ? strtoull(argv[3], NULL, 10) : 24;

	if (!n || !stacks || !depth) {
		fprintf(stderr, "usage: timeline_cost [SAMPLES [STACKS [DEPTH]]]\n");
		return 2;
	}
	printf("%-9s %8s %9s %10s %11s %9s %8s\n", "mode", "samples",
	       "in_file", "add_ns/s", "encode_ns/s", "bytes/s", "heap_MB");
	return run(0, n, stacks, depth) || run(1, n, stacks, depth);
}
