/* A fixed amount of CPU work done at the bottom of a deep call chain, so a
 * profiler's overhead shows up as extra wall time (the work never shrinks to
 * fit a duration) and every sample carries a long user stack.
 * usage: fixedwork [ITERATIONS [DEPTH]]
 *   ITERATIONS  times to descend and spin (default 5400, about 5 s here)
 *   DEPTH       frames of descend() above the spin (default 130, so stacks
 *               are deeper than the kernel's 127-frame perf_event_max_stack) */
#include <stdio.h>
#include <stdlib.h>

#define DEFAULT_ITERATIONS 5400ul
#define DEFAULT_DEPTH 130ul
#define SPIN_STEPS 1000000ul	/* LCG steps per iteration: about 1 ms */

static volatile unsigned long sink;

/* The work itself: a dependent multiply-add chain. The empty asm hides x
 * from the optimizer each step, so clang cannot merge steps (it would fold
 * eight LCG steps into one otherwise) and the cost per step stays fixed. */
static __attribute__((noinline)) unsigned long spin(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		__asm__("" : "+r"(x));
	}
	sink = x;
	return x;
}

/* One frame per level. The empty asm after the recursive call is a compiler
 * barrier: the call is no longer in tail position, so neither sibling-call
 * optimization nor tail-recursion elimination can fold the frames away. */
static __attribute__((noinline)) unsigned long descend(unsigned long depth)
{
	unsigned long r;

	if (depth == 0)
		return spin(SPIN_STEPS);
	r = descend(depth - 1);
	__asm__ __volatile__("" : "+r"(r) : : "memory");
	return r + depth;
}

static unsigned long arg(int argc, char **argv, int i, unsigned long def)
{
	char *end;
	unsigned long v;

	if (argc <= i)
		return def;
	v = strtoul(argv[i], &end, 10);
	if (*argv[i] == '\0' || *end || v == 0) {
		fprintf(stderr, "usage: fixedwork [ITERATIONS [DEPTH]]\n");
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned long iterations = arg(argc, argv, 1, DEFAULT_ITERATIONS);
	unsigned long depth = arg(argc, argv, 2, DEFAULT_DEPTH);
	unsigned long acc = 0;

	for (unsigned long i = 0; i < iterations; i++)
		acc += descend(depth);
	sink = acc;
	return 0;
}
