/* Second tenant of a reused pid (see pidreuse.c). usage: reuse_b SECONDS */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void reuse_beta_spin(double secs)
{
	struct timespec t0, t;
	unsigned long x = 1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ul + 3;
		sink = x;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
}

__attribute__((noinline)) void beta_padding(void)
{
	__asm__ volatile(".fill 16384, 1, 0x90");
}

int main(int argc, char **argv)
{
	reuse_beta_spin(argc > 1 ? atof(argv[1]) : 1);
	beta_padding();
	return 0;
}
