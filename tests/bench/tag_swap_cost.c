/* The instruction cost of tagprof_tag_swap(), for
 * tests/bench/tag_swap_cost.sh. Built by GCC with -ffixed-r15
 * -DTAGPROF_TAG_REG_RESERVED (x28 on arm64).
 *
 *	tag_swap_cost N MODE
 *
 * runs N iterations of one loop and exits; callgrind counts the
 * instructions, and the script subtracts the "none" run. Every loop calls
 * task(), which the compiler cannot see into, as tagged code calls shared
 * code: the previous tag must live across the call. Modes:
 *	none	task() only
 *	pair	prev = tagprof_tag_swap(tag); task(); tagprof_tag_swap(prev);
 *	field	the same, setting one field of the current tag (get, mask,
 *		or, swap), as an inner abstraction level does
 *	get	tagprof_tag_get() alone, its value passed to task_arg(),
 *		which costs what task() costs */
#include "tagprof/tagprof.h"

#include <stdlib.h>
#include <string.h>

#define OPAQUE __attribute__((noipa))

OPAQUE void task(void)
{
	__asm__ volatile("" ::: "memory");
}

OPAQUE void task_arg(uint64_t v)
{
	__asm__ volatile("" : : "r"(v) : "memory");
}

OPAQUE void loop_none(long n)
{
	for (long i = 0; i < n; i++)
		task();
}

OPAQUE void loop_pair(uint64_t tag, long n)
{
	for (long i = 0; i < n; i++) {
		uint64_t prev = tagprof_tag_swap(tag);

		task();
		tagprof_tag_swap(prev);
	}
}

OPAQUE void loop_field(uint64_t pipeline, long n)
{
	for (long i = 0; i < n; i++) {
		uint64_t prev = tagprof_tag_swap((tagprof_tag_get() & 0xffff) | pipeline << 16);

		task();
		tagprof_tag_swap(prev);
	}
}

OPAQUE void loop_get(long n)
{
	for (long i = 0; i < n; i++)
		task_arg(tagprof_tag_get());
}

int main(int argc, char **argv)
{
	long n;

	if (argc != 3)
		return 2;
	n = atol(argv[1]);
	tagprof_tag_swap(0);
	if (!strcmp(argv[2], "none"))
		loop_none(n);
	else if (!strcmp(argv[2], "pair"))
		loop_pair(3, n);
	else if (!strcmp(argv[2], "field"))
		loop_field(2, n);
	else if (!strcmp(argv[2], "get"))
		loop_get(n);
	else
		return 2;
	return tagprof_tag_get() != 0;
}
