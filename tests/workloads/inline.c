/* An always_inline helper in a hot loop: with DWARF, its code is its own
 * frame (an inlined line) inside the caller's location.
 * usage: inline SECONDS */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long
inl_mix(unsigned long x, unsigned long i)
{
	x ^= x >> 29;
	x = x * 0xbf58476d1ce4e5b9ul + i;
	x ^= x >> 32;
	__asm__("" : "+r"(x));
	return x;
}

__attribute__((noinline)) void inl_hot(void)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < 300000; i++)
		x = inl_mix(x, i);
	sink = x;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 20; i++)
			inl_hot();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
