/* main -> copy_loop -> memcpy (glibc's, which sets up no frame): nearly all
 * the time is in memcpy, so a frame-pointer walk that misses memcpy's
 * caller loses copy_loop from most samples.
 * usage: memcpy_loop SECONDS [BYTES] */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *src, *dst;

__attribute__((noinline)) void copy_loop(size_t len, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		memcpy(dst, src, len);
		__asm__ volatile("" ::: "memory");
	}
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	size_t len = argc > 2 ? strtoul(argv[2], NULL, 0) : 64 * 1024;
	struct timespec t0, t;

	src = malloc(len);
	dst = malloc(len);
	if (!src || !dst)
		return 1;
	memset(src, 1, len);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		copy_loop(len, 1000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
