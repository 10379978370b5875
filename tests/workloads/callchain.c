/* main -> work -> {leaf_a, leaf_b}: leaf_a does 3 units of work for every
 * unit leaf_b does, so a correct profile splits work's time 75/25.
 * usage: callchain SECONDS */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static __attribute__((noinline)) void spin(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

__attribute__((noinline)) void leaf_a(void)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < 300000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

__attribute__((noinline)) void leaf_b(void)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < 100000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

__attribute__((noinline)) void work(void)
{
	leaf_a();
	leaf_b();
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	struct timespec t0, t;

	spin(1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 20; i++)
			work();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
