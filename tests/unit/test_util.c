/* Unit tests for the plumbing in src/util: the clock, grow-by-doubling,
 * the sorted-range lookup and free ranges. Inputs are built by the tests themselves. */
#include "check.h"
#include "util/clock.h"
#include "util/grow.h"
#include "util/ranges.h"
#include "util/sortedrange.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* Monotonic readings never go back, and move on across a sleep. */
static void test_clock_monotonic(void)
{
	struct timespec pause = { 0, 2 * 1000 * 1000 };
	uint64_t prev = clock__mono_ns(), now, before_ms;

	CHECK(prev > 0);
	for (int i = 0; i < 100000; i++) {
		now = clock__mono_ns();
		CHECK(now >= prev);
		prev = now;
	}
	before_ms = clock__mono_ms();
	nanosleep(&pause, NULL);
	CHECK(clock__mono_ns() - prev >= 2 * 1000 * 1000);
	CHECK(clock__mono_ms() >= before_ms + 2);
}

/* ns are whole: the other clocks read in the same unit, and a clock that
 * cannot be read gives 0. */
static void test_clock_ids(void)
{
	uint64_t real = clock__ns(CLOCK_REALTIME), mono = clock__mono_ns();

	/* After 2020-01-01, in ns. */
	CHECK(real > 1577836800ull * 1000000000ull);
	/* Boot time is monotonic time plus time asleep, read after it. */
	CHECK(clock__ns(CLOCK_BOOTTIME) >= mono);
	CHECK(clock__ns((clockid_t)-1000) == 0);
}

/* The first room is first_cap; after that it doubles, as often as need
 * asks, and what was there is kept. */
static void test_grow_doubling(void)
{
	size_t cap = 0, caps[8], ncaps = 0;
	int *v = NULL;
	bool ok = true;

	CHECK(grow__array(&v, &cap, 1, sizeof(*v), 4) == 0);
	CHECK(v && cap == 4);
	for (int i = 0; i < 40; i++) {
		size_t before = cap;

		CHECK(grow__array(&v, &cap, (size_t)i + 1, sizeof(*v), 4) == 0);
		if (cap != before && ncaps < 8)
			caps[ncaps++] = cap;
		v[i] = i * 7;
	}
	CHECK(ncaps == 4 && caps[0] == 8 && caps[1] == 16 && caps[2] == 32 &&
	      caps[3] == 64);
	for (int i = 0; i < 40; i++)
		ok = ok && v[i] == i * 7;
	CHECK(ok);
	/* Room already there: nothing changes. */
	CHECK(grow__array(&v, &cap, 10, sizeof(*v), 4) == 0 && cap == 64);
	/* A need far past the capacity doubles until it fits. */
	CHECK(grow__array(&v, &cap, 1000, sizeof(*v), 4) == 0 && cap == 1024);
	free(v);
	/* A first need over first_cap doubles from it; first_cap 0 is 1. */
	v = NULL;
	cap = 0;
	CHECK(grow__array(&v, &cap, 100, sizeof(*v), 16) == 0 && cap == 128);
	free(v);
	v = NULL;
	cap = 0;
	CHECK(grow__array(&v, &cap, 3, sizeof(*v), 0) == 0 && cap == 4);
	free(v);
}

/* Sizes that overflow size_t are refused, and leave the array as it was. */
static void test_grow_overflow(void)
{
	size_t cap = 0;
	char *v = NULL;

	CHECK(grow__array(&v, &cap, 8, 1, 8) == 0 && cap == 8);
	v[0] = 'x';
	CHECK(grow__array(&v, &cap, SIZE_MAX / 2 + 2, 1, 8) == -ENOMEM);
	CHECK(cap == 8 && v[0] == 'x');
	/* The count fits, count times the element size does not. */
	CHECK(grow__array(&v, &cap, SIZE_MAX / 16, 32, 8) == -ENOMEM);
	CHECK(cap == 8 && v[0] == 'x');
	/* Too big for memory: realloc says so. */
	CHECK(grow__array(&v, &cap, SIZE_MAX / 4, 1, 8) == -ENOMEM);
	CHECK(cap == 8 && v[0] == 'x');
	free(v);
}

/* A bound stops the doubling there, and a need over it is refused. */
static void test_grow_max(void)
{
	size_t cap = 0;
	int *v = NULL;

	CHECK(grow__array_max(&v, &cap, 1, sizeof(*v), 8, 20) == 0 && cap == 8);
	CHECK(grow__array_max(&v, &cap, 9, sizeof(*v), 8, 20) == 0 && cap == 16);
	CHECK(grow__array_max(&v, &cap, 17, sizeof(*v), 8, 20) == 0 && cap == 20);
	v[19] = 1;
	CHECK(grow__array_max(&v, &cap, 21, sizeof(*v), 8, 20) == -E2BIG);
	CHECK(cap == 20 && v[19] == 1);
	free(v);
	/* A first capacity over the bound is cut to it. */
	v = NULL;
	cap = 0;
	CHECK(grow__array_max(&v, &cap, 2, sizeof(*v), 256, 5) == 0 && cap == 5);
	free(v);
}

struct range {
	uint32_t tag;		/* the start is not first: the offset counts */
	uint64_t start, end;
};

/* Sorted by start; 0x3000 twice, the way symbol aliases share one. */
static const struct range ranges[] = {
	{ 1, 0x1000, 0x1800 },
	{ 2, 0x2000, 0x2800 },
	{ 3, 0x3000, 0x3100 },
	{ 4, 0x3000, 0x3400 },
	{ 5, 0x5000, 0x6000 },
};
#define NRANGES (sizeof(ranges) / sizeof(ranges[0]))

static uint32_t floor_tag(const struct range *v, size_t n, uint64_t addr)
{
	const struct range *r = SORTEDRANGE_FLOOR(v, n, start, addr);

	return r ? r->tag : 0;
}

static void test_range_lookup(void)
{
	/* Empty, and below the first start. */
	CHECK(SORTEDRANGE_UPPER(ranges, 0, start, 0x1000) == 0);
	CHECK(floor_tag(ranges, 0, 0x1000) == 0);
	CHECK(floor_tag(NULL, 0, 0x1000) == 0);
	CHECK(SORTEDRANGE_UPPER(ranges, NRANGES, start, 0xfff) == 0);
	CHECK(floor_tag(ranges, NRANGES, 0) == 0);
	CHECK(floor_tag(ranges, NRANGES, 0xfff) == 0);
	/* Exactly at a start, and between two. */
	CHECK(floor_tag(ranges, NRANGES, 0x1000) == 1);
	CHECK(floor_tag(ranges, NRANGES, 0x2000) == 2);
	CHECK(floor_tag(ranges, NRANGES, 0x1fff) == 1);
	CHECK(floor_tag(ranges, NRANGES, 0x1900) == 1);	/* past its end */
	CHECK(floor_tag(ranges, NRANGES, 0x4fff) == 4);
	/* Equal starts: the last of them. */
	CHECK(floor_tag(ranges, NRANGES, 0x3000) == 4);
	CHECK(SORTEDRANGE_UPPER(ranges, NRANGES, start, 0x3000) == 4);
	CHECK(SORTEDRANGE_UPPER(ranges, NRANGES, start, 0x2fff) == 2);
	/* Past the last start, up to the top of the address space. */
	CHECK(floor_tag(ranges, NRANGES, 0x5000) == 5);
	CHECK(floor_tag(ranges, NRANGES, UINT64_MAX) == 5);
	CHECK(SORTEDRANGE_UPPER(ranges, NRANGES, start, UINT64_MAX) == NRANGES);
	/* An empty array may have no storage (found by fuzzing). */
	CHECK(sortedrange__upper(NULL, 0, sizeof(ranges[0]),
				 offsetof(struct range, start), 0x1000) == 0);
	/* One element; and every prefix of the array agrees with a scan. */
	CHECK(floor_tag(ranges, 1, 0x9000) == 1);
	for (size_t n = 0; n <= NRANGES; n++)
		for (uint64_t a = 0; a < 0x7000; a += 0x80) {
			size_t want = 0;

			while (want < n && ranges[want].start <= a)
				want++;
			CHECK(sortedrange__upper(ranges, n, sizeof(ranges[0]),
						 offsetof(struct range, start),
						 a) == want);
		}
}

/* Free ranges against a model, an array of entries marked taken: random
 * takes and gives, and after each the list must be what the model says:
 * sorted, apart, no taken entry free, the top just past the last taken
 * entry, and a take without growth failing only when no free run holds
 * it. */
static void test_free_ranges(void)
{
	enum { LIMIT = 512, LIVE = 64 };
	static bool taken[LIMIT];
	struct { uint32_t start, len; } live[LIVE];
	size_t nlive = 0;
	uint64_t ntaken = 0;
	struct ranges r;
	uint32_t seed = 12345, start;

	ranges__init(&r, LIMIT);
	for (int step = 0; step < 20000; step++) {
		uint32_t len, top = 0, run = 0, longest = 0;
		bool grow;
		int err;

		seed = seed * 1103515245 + 12345;
		len = 1 + (seed >> 16) % 40;
		grow = (seed >> 8) & 1;
		if (nlive < LIVE && (seed >> 12) % 3) {
			for (uint32_t i = 0; i < r.top; i++) {
				run = taken[i] ? 0 : run + 1;
				if (run > longest)
					longest = run;
			}
			err = ranges__take(&r, len, grow, &start);
			if (longest < len && !grow)
				CHECK(err == -ENOSPC);
			else if (longest >= len)
				CHECK(!err && start < r.top);
			if (err)
				continue;
			CHECK(start + len <= LIMIT);
			for (uint32_t i = start; i < start + len; i++) {
				CHECK(!taken[i]);
				taken[i] = true;
			}
			live[nlive].start = start;
			live[nlive++].len = len;
			ntaken += len;
		} else if (nlive) {
			size_t k = (seed >> 4) % nlive;

			CHECK(!ranges__give(&r, live[k].start, live[k].len));
			for (uint32_t i = 0; i < live[k].len; i++)
				taken[live[k].start + i] = false;
			ntaken -= live[k].len;
			live[k] = live[--nlive];
		}
		for (uint32_t i = 0; i < LIMIT; i++)
			if (taken[i])
				top = i + 1;
		CHECK(r.top == top);
		for (size_t i = 0; i < r.n; i++) {
			CHECK(r.free[i].len > 0);
			CHECK(r.free[i].start + r.free[i].len < r.top);
			if (i)
				CHECK(r.free[i - 1].start + r.free[i - 1].len <
				      r.free[i].start);
			for (uint32_t j = 0; j < r.free[i].len; j++)
				CHECK(!taken[r.free[i].start + j]);
		}
		CHECK(ranges__free_below_top(&r) + ntaken == r.top);
	}
	ranges__free(&r);
	CHECK(r.top == 0 && r.n == 0 && r.limit == LIMIT);
}

int main(void)
{
	RUN(test_clock_monotonic);
	RUN(test_clock_ids);
	RUN(test_grow_doubling);
	RUN(test_grow_overflow);
	RUN(test_grow_max);
	RUN(test_range_lookup);
	RUN(test_free_ranges);
	CHECK_EXIT();
}
