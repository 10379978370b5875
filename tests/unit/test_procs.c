/* The process table's memory budget: the executable mappings and binary
 * records of all processes stay within their share of the bound, those
 * that do not fit are counted, and a larger bound keeps them all. */
#include "check.h"
#include "proc/proctable.h"

#include <stdint.h>
#include <unistd.h>

/* This test program maps itself, libc and the loader, executable. */
static void test_maps_budget(void)
{
	struct proctable *t = proctable__new();
	const struct proctable_stats *st;
	struct proc *p;
	size_t all;

	CHECK(t);
	st = proctable__stats(t);
	p = proctable__get(t, getpid(), 0, "test_procs");
	CHECK(p && p->nmaps >= 2 && st->maps_over_budget == 0);
	all = p->nmaps;
	CHECK(st->maps_bytes > 0 && st->maps_bytes <= st->maps_budget);
	/* The binaries go with the last process that maps them. */
	proctable__forget(t, getpid());
	CHECK(st->maps_bytes > 0);
	proctable__sweep(t);
	CHECK(st->maps_bytes == 0);
	/* A bound of 2 KiB: 512 bytes for every mapping, not enough for all
	 * of ours with their binaries' records. */
	proctable__set_memory(t, 2048);
	p = proctable__get(t, getpid(), 0, "test_procs");
	CHECK(p && p->nmaps < all && st->maps_over_budget > 0);
	CHECK(st->maps_bytes <= st->maps_budget);
	proctable__forget(t, getpid());
	proctable__sweep(t);
	CHECK(st->maps_bytes == 0);
	proctable__free(t);
}

int main(void)
{
	RUN(test_maps_budget);
	CHECK_EXIT();
}
