/* A program whose own function is all it runs: own_work() spins for
 * SECONDS (default 2) and nothing else is on its stacks. It is linked
 * static without a C library (the Makefile's rule), so its profile has
 * one mapping and no frame of a library whose symbols or debug info vary
 * from machine to machine: on any machine, tagprof has nothing to report
 * as a problem for it. Its stacks end at _start, which clears the frame
 * pointer as the x86-64 ABI asks, so a frame-pointer walk stops there.
 * usage: ownwork [SECONDS] */

#include "nolibc.h"

#define STEPS			1000000ul	/* about 1 ms of work */

static unsigned long now_ms(void)
{
	return mono_ns() / 1000000;
}

static volatile unsigned long sink;

/* The work: xorshift steps, each depending on the last (the empty asm
 * keeps the compiler from folding them). */
static __attribute__((noinline)) unsigned long own_work(unsigned long n)
{
	unsigned long x = sink | 1;

	while (n--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		__asm__("" : "+r"(x));
	}
	return sink = x;
}

/* SECONDS from argv[1]: decimal digits, else the default. */
static unsigned long seconds(long argc, char **argv)
{
	unsigned long s = 0;
	const char *p = argc > 1 ? argv[1] : "";

	for (; *p >= '0' && *p <= '9'; p++)
		s = s * 10 + (unsigned long)(*p - '0');
	return s ? s : 2;
}

/* Called by _start with the initial stack: argc, then argv. */
__attribute__((noinline, used, noreturn)) void ownwork_main(long *sp)
{
	unsigned long end = now_ms() + 1000 * seconds(sp[0], (char **)(sp + 1));

	while (now_ms() < end)
		own_work(STEPS);
	exit_group(0);
}

NOLIBC_START(ownwork_main);
