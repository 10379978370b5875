/* The instruction cost of tagprof_attach(), for tests/bench/attach_cost.sh.
 *
 *	attach_cost N MODE
 *
 * runs N iterations of one loop and exits; callgrind counts the
 * instructions, and the script subtracts the "none" run. Every loop calls
 * task(), which the compiler cannot see into (noipa, memory clobber), as
 * an application's task would be: nothing is hoisted out of the loop and
 * the TLS slot is reloaded around it, so the difference is the real cost
 * of the pair as an application pays it. Modes:
 *	none	task() only
 *	pair	prev = tagprof_attach(l); task(); tagprof_attach(prev);
 *		with no set attached outside the loop (prev is NULL)
 *	nested	the same inside an outer attach (prev is a set)
 *	raw	the bare OTEP store/restore, no seal check: the floor */
#include "tagprof/tagprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __clang__
#define OPAQUE __attribute__((noinline))
#else
#define OPAQUE __attribute__((noipa))
#endif

OPAQUE void task(void)
{
	__asm__ volatile("" ::: "memory");
}

OPAQUE void loop_none(long n)
{
	for (long i = 0; i < n; i++)
		task();
}

OPAQUE void loop_pair(const tagprof_labels *l, long n)
{
	for (long i = 0; i < n; i++) {
		const tagprof_labels *prev = tagprof_attach(l);

		task();
		tagprof_attach(prev);
	}
}

OPAQUE void loop_raw(const tagprof_labels *l, long n)
{
	for (long i = 0; i < n; i++) {
		void *prev = otel_thread_ctx_v1;

		otel_thread_ctx_v1 = (void *)l;
		task();
		otel_thread_ctx_v1 = prev;
	}
}

int main(int argc, char **argv)
{
	tagprof_labels *outer = tagprof_labels_new(), *l = tagprof_labels_new();
	const tagprof_labels *prev;
	long n;

	if (argc != 3 || !outer || !l)
		return 2;
	n = atol(argv[1]);
	tagprof_labels_add(outer, "outer", "1");
	tagprof_labels_add(l, "query_id", "q7");
	tagprof_labels_add(l, "tenant", "acme");
	/* Seal both here, so every mode runs the same setup. */
	tagprof_attach(tagprof_attach(outer));
	tagprof_attach(tagprof_attach(l));
	if (!strcmp(argv[2], "none")) {
		loop_none(n);
	} else if (!strcmp(argv[2], "pair")) {
		loop_pair(l, n);
	} else if (!strcmp(argv[2], "nested")) {
		prev = tagprof_attach(outer);
		loop_pair(l, n);
		tagprof_attach(prev);
	} else if (!strcmp(argv[2], "raw")) {
		loop_raw(l, n);
	} else {
		return 2;
	}
	return otel_thread_ctx_v1 != NULL;
}
