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
#include "../otep_text.h"

static const char *const keys[] = { "shard", "phase" };
static const char *const set_a[] = { "s07", "scan" };
static const char *const set_b[] = { "s11", "merge" };

__attribute__((noinline)) static void spin_scan(unsigned long n) { otep_spin(3 * n); }
__attribute__((noinline)) static void spin_merge(unsigned long n) { otep_spin(n); }

/* A round is 3n iterations under A, n under B, with n from 0.5 to 1.5
 * units (rand_r): 3:1 exactly, and rounds of varying length, so that the
 * sampling period does not lock onto one phase of them. */
static void *worker(void *arg)
{
	unsigned int seed = 12345 + (uintptr_t)arg;

	while (!otep_past(&otep_deadline)) {
		unsigned long n = otep_unit / 2 + (unsigned long)rand_r(&seed) % (otep_unit + 1);

		otep_pc_set(set_a);
		spin_scan(n);
		otep_pc_set(set_b);
		spin_merge(n);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 3;

	if (otep_pc_start("otep-pc-writer", keys, 2) != 0)
		return 1;
	otep_run(worker, secs);
	return 0;
}
