/* A tiny JIT: copies a spin loop (x86-64: dec %rdi; jnz; ret) into two
 * anonymous executable pages and runs both, naming only the first in
 * /tmp/perf-PID.map (with a name holding spaces). With "garbage", the map
 * also holds four lines that are not "START SIZE name", and a blank one.
 * With "big", it also names BIG_ENTRIES functions no code is at (a large
 * JIT's map: megabytes of symbols for whoever reads it).
 * With "none", it writes no map and prints "jitmap: pid N, code START SIZE" (its
 * named function): the test puts
 * there what an attacker would (tests/e2e/hostile_perfmap.sh).
 * The map is removed at exit.
 * usage: jitmap SECONDS [garbage|big|none]    (exits 77 when not on x86-64) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#define JIT_NAME "jit spin loop [tagprof test]"
#define BIG_ENTRIES 100000
#define BIG_BASE 0x100000000000ul	/* below any mapping here */

static const unsigned char code[] = {
	0x48, 0xff, 0xcf,	/* loop: dec %rdi */
	0x75, 0xfb,		/*       jnz loop */
	0xc3,			/*       ret */
};

typedef void (*spin_fn)(unsigned long);

static char map_path[64];

static spin_fn jit(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0xcc, 4096);	/* int3 everywhere else */
	memcpy(p, code, sizeof(code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return NULL;
	return (spin_fn)p;
}

static void cleanup(void)
{
	unlink(map_path);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	int garbage = argc > 2 && !strcmp(argv[2], "garbage");
	int big = argc > 2 && !strcmp(argv[2], "big");
	int none = argc > 2 && !strcmp(argv[2], "none");
	struct timespec t0, t;
	spin_fn named, unnamed;
	FILE *f;

#if !defined(__x86_64__)
	(void)secs;
	(void)garbage;
	(void)big;
	(void)none;
	fprintf(stderr, "jitmap: x86-64 only\n");
	return 77;
#else
	named = jit();
	unnamed = jit();
	if (!named || !unnamed) {
		perror("jitmap: mmap");
		return 1;
	}
	if (none) {
		printf("jitmap: pid %d, code %lx %zx\n", (int)getpid(),
		       (unsigned long)named, sizeof(code));
		fflush(stdout);
		goto run;
	}
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(map_path, "w");
	if (!f) {
		perror(map_path);
		return 1;
	}
	atexit(cleanup);
	if (garbage)
		fprintf(f, "this is not a map line\n"
			"12345\n"
			"%lx 0 zero_size\n"
			"ffffffffffffffff 10 wraps_around\n"
			"\n", (unsigned long)unnamed);
	for (int i = 0; big && i < BIG_ENTRIES; i++)
		fprintf(f, "%lx 40 big_jit_function_%06d\n",
			BIG_BASE + 64ul * (unsigned long)i, i);
	fprintf(f, "%lx %zx %s\n", (unsigned long)named, sizeof(code), JIT_NAME);
	fclose(f);
run:
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		named(3000000);
		unnamed(1000000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
#endif
}
