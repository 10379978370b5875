/* main -> spin_outer -> spin_inner, spinning for SECONDS: the program the
 * symbolization tests strip, give debug files, run in a chroot and replace
 * on disk. Built with -DSYMSPIN_OTHER it is another build with other
 * function names (the replacement).
 * usage: symspin SECONDS */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

#ifdef SYMSPIN_OTHER
#define spin_inner other_inner
#define spin_outer other_outer
#endif

__attribute__((noinline)) void spin_inner(void)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < 200000; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		__asm__("" : "+r"(x));
	}
	sink = x;
}

__attribute__((noinline)) void spin_outer(void)
{
	spin_inner();
	spin_inner();
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 20; i++)
			spin_outer();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
