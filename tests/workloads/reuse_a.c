/* First tenant of a reused pid (see pidreuse.c). usage: reuse_a SECONDS */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

/* Padding so reuse_b's hot loop lands at addresses that, read with this
 * binary's symbols, would name a different function (pidreuse runs both
 * at the same address). */
__attribute__((noinline)) void alpha_padding(void)
{
	__asm__ volatile(".fill 8192, 1, 0x90");
}

__attribute__((noinline)) void reuse_alpha_spin(double secs)
{
	struct timespec t0, t;
	unsigned long x = 1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ul + 1;
		sink = x;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
}

/* And so this binary's code spans all of reuse_b's: none of reuse_b's
 * addresses falls outside reuse_a's mapping, where it would look unmapped
 * and have the memory map read again. */
__attribute__((noinline)) void alpha_tail_padding(void)
{
	__asm__ volatile(".fill 32768, 1, 0x90");
}

int main(int argc, char **argv)
{
	alpha_padding();
	reuse_alpha_spin(argc > 1 ? atof(argv[1]) : 1);
	alpha_tail_padding();
	return 0;
}
