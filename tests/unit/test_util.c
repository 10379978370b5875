/* Unit tests for the plumbing in src/util: the clock, grow-by-doubling and
 * the sorted-range lookup. Inputs are built by the tests themselves. */
#include "check.h"
#include "util/clock.h"

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

int main(void)
{
	RUN(test_clock_monotonic);
	RUN(test_clock_ids);
	CHECK_EXIT();
}
