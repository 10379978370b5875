/* The programs churn execs: churn_a and churn_b, built from this one file
 * with SPIN_FN alpha_spin or beta_spin (the Makefile). Static, non-PIE and
 * without a C library, the two are the same bytes at the same addresses
 * but for their symbol tables: the spin function is at one address in
 * both, so a sample of one read with the other's symbols names the other's
 * function. When a pid that ran churn_a is reused by churn_b, a profiler
 * that kept the old process's mappings says beta_spin's samples are
 * alpha_spin's. Exec and exit are cheap: no loader, no libc start.
 * usage: churn_a|churn_b [MILLISECONDS]   (default 5) */

#ifndef SPIN_FN
#error "build with -DSPIN_FN=alpha_spin or beta_spin"
#endif

#include "../nolibc.h"

static unsigned long now_us(void)
{
	return mono_ns() / 1000;
}

static volatile unsigned long sink;

/* Spins until end_us: xorshift steps between clock reads. */
__attribute__((noinline, used)) void SPIN_FN(unsigned long end_us)
{
	unsigned long x = sink | 1;

	do {
		for (int i = 0; i < 20000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			__asm__("" : "+r"(x));
		}
		sink = x;
	} while (now_us() < end_us);
}

__attribute__((noinline, used, noreturn)) void spin_main(long *sp)
{
	const char *p = sp[0] > 1 ? ((char **)(sp + 1))[1] : "";
	unsigned long ms = 0;

	for (; *p >= '0' && *p <= '9' && ms < 100000; p++)
		ms = ms * 10 + (unsigned long)(*p - '0');
	SPIN_FN(now_us() + 1000 * (ms ? ms : 5));
	exit_group(0);
}

NOLIBC_START(spin_main);
