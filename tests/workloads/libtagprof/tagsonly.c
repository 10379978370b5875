/* A program that uses register tags and nothing else of libtagprof, as the
 * README's "Register tags" section shows them: tagprof_tags_declare(),
 * tagprof_tag_name() and tagprof_tag_swap(), no label set, no
 * tagprof_process_init(). Compiling query engines tag operators this way
 * without any per-query labels. The Makefile links it twice, with
 * libtagprof.a and no extra linker flag (the linker then leaves the
 * thread-context variable out), and with libtagprof.so.
 *
 *	tagsonly SECONDS
 *
 * Operators "build" (1) and "probe" (2) call one shared function,
 * shared_insert(), build with 3 units of work and probe with 1: its samples
 * split 75/25 between operator=build and operator=probe. The tags are
 * declared first; then the program spins untagged in warm_up() for a
 * second (a profiler started with it finds the declaration meanwhile),
 * then works for SECONDS. Exit 1 on an API failure, 2 on bad usage. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <tagprof/tagprof.h>

#define OP_BUILD	1
#define OP_PROBE	2

/* GCC 12 drops a leaf's frame pointer at -O2 whatever the flags say: an
 * empty asm that reads the frame makes it keep one, so the frame-pointer
 * unwinder sees shared_insert's caller. */
#define KEEP_FRAME() __asm__ volatile("" : : "r"(__builtin_frame_address(0)))

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One unit of work is a fixed loop, the same in every call. */
static __attribute__((noinline)) void shared_insert(int units)
{
	uint64_t h = sink;

	KEEP_FRAME();
	for (long i = 0; i < 100000L * units; i++)
		h = h * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = h;
}

static __attribute__((noinline)) void warm_up(double seconds)
{
	double end = now() + seconds;

	KEEP_FRAME();
	while (now() < end)
		for (int i = 0; i < 1000; i++)
			sink = sink * 31 + i;
}

int main(int argc, char **argv)
{
	static const char *const fields[] = { "operator:16" };
	double seconds, end;
	uint64_t prev, rng = 1;
	int k;

	tagprof_tag_swap(0);	/* the untagged value, before any work */
	if (argc != 2 || (seconds = atof(argv[1])) <= 0) {
		fprintf(stderr, "usage: tagsonly SECONDS\n");
		return 2;
	}
	if (tagprof_tags_declare(TAGPROF_TAG_REG_NAME, fields, 1) ||
	    tagprof_tag_name("operator", OP_BUILD, "build") ||
	    tagprof_tag_name("operator", OP_PROBE, "probe")) {
		fprintf(stderr, "tagsonly: declaring the tags failed\n");
		return 1;
	}
	warm_up(1);
	end = now() + seconds;
	while (now() < end) {
		/* k varies from round to round so that a round's length does
		 * not stay in step with the sampling period: a fixed ~0.5 ms
		 * round sampled every 1 ms aliased, and the split then drifted
		 * by up to 3 points from run to run. Each round keeps 3:1. */
		k = 1 + (int)((rng = rng * 6364136223846793005ULL +
					 1442695040888963407ULL) >> 61);
		prev = tagprof_tag_swap(OP_BUILD);
		shared_insert(3 * k);
		tagprof_tag_swap(prev);
		prev = tagprof_tag_swap(OP_PROBE);
		shared_insert(k);
		tagprof_tag_swap(prev);
	}
	return 0;
}
