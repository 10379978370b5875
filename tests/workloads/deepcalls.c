/* Nesting for tagprof sizes' shadow stack (tests/e2e/sizes_depth.sh):
 *
 *	deepcalls depth D K	K calls of nest(D): nest(n) calls nest(n - 1)
 *				down to nest(1), so D probed calls are open at
 *				once; each level spins n * 200 turns after
 *				its callee returns, so its cost grows with n
 *	deepcalls jump K	K calls of jump_top(8): jump_top sets a
 *				jmp_buf and calls jump_down(8), which
 *				recurses to jump_down(1), which longjmps back
 *				to jump_top: 8 entries of jump_down never
 *				return
 *
 * Prints "deepcalls: nest calls=N" or "deepcalls: jump top=K down=N" on
 * stderr: the entries made. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned long sink;
static unsigned long entries;

static void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline, used)) unsigned long nest(unsigned long n)
{
	entries++;
	if (n > 1)
		nest(n - 1);
	spin(n * 200);
	__asm__ volatile("" ::: "memory");	/* not a tail call */
	return n;
}

static jmp_buf back;

__attribute__((noinline, used)) void jump_down(unsigned long n)
{
	entries++;
	if (n <= 1)
		longjmp(back, 1);
	jump_down(n - 1);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, used)) unsigned long jump_top(unsigned long n)
{
	if (!setjmp(back))
		jump_down(n);
	spin(n * 1000);
	return n;
}

int main(int argc, char **argv)
{
	unsigned long k;

	if (argc == 4 && !strcmp(argv[1], "depth")) {
		unsigned long d = strtoul(argv[2], NULL, 0);

		k = strtoul(argv[3], NULL, 0);
		for (unsigned long i = 0; i < k; i++)
			nest(d);
		fprintf(stderr, "deepcalls: nest calls=%lu\n", entries);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "jump")) {
		k = strtoul(argv[2], NULL, 0);
		for (unsigned long i = 0; i < k; i++)
			jump_top(8);
		fprintf(stderr, "deepcalls: jump top=%lu down=%lu\n", k,
			entries);
		return 0;
	}
	fprintf(stderr, "usage: deepcalls depth D K | jump K\n");
	return 2;
}
