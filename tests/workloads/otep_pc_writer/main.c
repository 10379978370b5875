/* otep_pc_writer: links the otep_pc shared library (lib.c) and has two
 * workers each loop over record A (shard=s07 phase=scan) for 3n iterations
 * of one loop and record B (shard=s11 phase=merge) for n, so CPU time
 * splits 3:1 between A and B.
 * usage: otep_pc_writer [SECONDS]   (default 3) */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "otep_pc.h"

static const char *const keys[] = { "shard", "phase" };
static const char *const set_a[] = { "s07", "scan" };
static const char *const set_b[] = { "s11", "merge" };

static unsigned long unit;		/* loop iterations per 100 us */
static struct timespec deadline;
static volatile unsigned long sink;

static void spin(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 2862933555777941757UL + 3037000493UL + i;
	sink = x;
}

__attribute__((noinline)) static void spin_scan(unsigned long n) { spin(3 * n); }
__attribute__((noinline)) static void spin_merge(unsigned long n) { spin(n); }

static int past(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline.tv_sec ||
	       (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec);
}

/* A round is 3n iterations under A, n under B, with n from 0.5 to 1.5
 * units (rand_r): 3:1 exactly, and rounds of varying length, so that the
 * sampling period does not lock onto one phase of them. */
static void *worker(void *arg)
{
	unsigned int seed = 12345 + (uintptr_t)arg;

	while (!past()) {
		unsigned long n = unit / 2 + (unsigned long)rand_r(&seed) % (unit + 1);

		otep_pc_set(set_a);
		spin_scan(n);
		otep_pc_set(set_b);
		spin_merge(n);
	}
	return NULL;
}

/* Iterations per 100 us of this thread's CPU time. */
static unsigned long calibrate(void)
{
	struct timespec a, b;
	unsigned long n = 1000000;
	double us;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	spin(n);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	us = (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3;
	return us > 0 ? n * 100 / us : n / 10;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 3;
	pthread_t t[2];

	if (otep_pc_start("otep-pc-writer", keys, 2) != 0)
		return 1;
	unit = calibrate();
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += secs;
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
