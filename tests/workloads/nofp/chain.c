/* main -> f1 -> f2 -> f3 -> f4 -> f5, every function noinline, built by
 * GCC without frame pointers and without tail calls (see the Makefile): a
 * frame-pointer walk cannot get past f5, CFI sees the whole chain. Each
 * caller keeps a little stack of its own, so the CFA moves with rsp.
 * usage: nofp_chain SECONDS */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

#define CALLER(name, callee)                                                 \
	__attribute__((noinline)) void name(unsigned long n)                 \
	{                                                                    \
		volatile unsigned long local[4] = { n, n + 1, n + 2, n + 3 }; \
                                                                             \
		callee(local[0]);                                            \
		sink += local[3];                                            \
	}

__attribute__((noinline)) void f5(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

CALLER(f4, f5)
CALLER(f3, f4)
CALLER(f2, f3)
CALLER(f1, f2)

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		f1(200000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
