/* Counters rendered from their lists (capture/counters.h). */
#include <stdint.h>
#include <string.h>

#include "capture/capture.h"
#include "capture/counters.h"
#include "proc/proctable.h"
#include "sample_event.h"
#include "unwind/unwind.h"

#include "check.h"

/* Every list: a name and a text for each counter, names apart. */
static void test_lists(void)
{
	for (int g = 0; g < CG_COUNT; g++) {
		size_t n;
		const struct counter_def *d = counters__group(g, &n);

		CHECK(n > 0);
		for (size_t i = 0; i < n; i++) {
			CHECK(d[i].name && *d[i].name);
			CHECK(d[i].text && *d[i].text);
			for (size_t j = 0; j < i; j++)
				CHECK(strcmp(d[i].name, d[j].name) &&
				      d[i].offset != d[j].offset);
		}
	}
}

static const struct counter_ref unwind_refs[] = {
	COUNTER(TP, ustack_copied),
	COUNTER_SUB(TP, ustack_probes),
	COUNTER_SUB(TP, ustack_short),
	COUNTER(TP, ustack_failed),
	COUNTER_PART("since start", UNWIND, cfi_used),
	COUNTER(UNWIND, cfi_rules),
	COUNTER_SUB(UNWIND, cfi_rules_differ),
	COUNTER_PART(NULL, UNWIND, marked),
	COUNTER_SUB(UNWIND, unmarked),
};

/* Joins, parentheses and parts, numbers before the lists' texts. */
static void test_render(void)
{
	struct tp_stats tp = { .ustack_copied = 5, .ustack_probes = 2,
			       .ustack_short = 1 };
	struct unwind_stats us = { .cfi_used = 7, .cfi_rules = 6,
				   .marked = 3, .unmarked = 1 };
	struct counter_values v = { .group = {
		[CG_TP] = &tp, [CG_UNWIND] = &us } };
	struct counter_line l = COUNTER_LINE(unwind_refs);
	const char *want = "unwind fp: 5 samples with a stack copy (2 auto "
		"probes, 1 cut short by the stack's end), 0 copies failed; "
		"since start: 7 stacks from CFI, 6 unwinds by cached rules (0 "
		"differing from libdwfl); 3 processes marked for CFI (1 "
		"unmarked)";
	char buf[512];
	int n = counters__render(buf, sizeof(buf), "unwind fp", &l, &v);

	CHECK(!strcmp(buf, want));
	CHECK(n == (int)strlen(want));
	CHECK(counters__sum(&l, &v) == 5 + 2 + 1 + 7 + 6 + 3 + 1);
	/* no title: the counters alone; a group not given reads 0s */
	v.group[CG_UNWIND] = NULL;
	counters__render(buf, sizeof(buf), NULL, &l, &v);
	CHECK(!strncmp(buf, "5 samples with a stack copy (", 29));
	CHECK(strstr(buf, "; since start: 0 stacks from CFI, 0 unwinds"));
}

/* Sizes in KiB; a part first in its line has its label right after the
 * title; sums leave sizes out. */
static void test_render_kib(void)
{
	static const struct counter_ref refs[] = {
		COUNTER_PART("JIT perf maps", PROCTABLE, perfmap_over_budget),
		COUNTER_SUB(PROCTABLE, perfmap_proc_budget),
		COUNTER_SUB(PROCTABLE, perfmaps_budget),
		COUNTER(PROCTABLE, perfmap_refused),
	};
	struct proctable_stats ps = { .perfmap_over_budget = 2,
				      .perfmap_proc_budget = 32 << 20,
				      .perfmaps_budget = (128 << 20) + 1023,
				      .perfmap_refused = 1 };
	struct counter_values v = { .group = { [CG_PROCTABLE] = &ps } };
	struct counter_line l = COUNTER_LINE(refs);
	char buf[512];

	counters__render(buf, sizeof(buf), "symbols", &l, &v);
	CHECK(!strcmp(buf, "symbols: JIT perf maps: 2 not read over the "
		      "memory budget (32768 KiB a process, 131072 KiB in "
		      "all), 1 refused (not a regular file, a link, another "
		      "user's)"));
	CHECK(counters__sum(&l, &v) == 3);
}

/* A short buffer: cut, terminated, and the length the line wanted. */
static void test_render_short(void)
{
	struct tp_stats tp = { .ustack_copied = 5 };
	struct counter_values v = { .group = { [CG_TP] = &tp } };
	struct counter_line l = COUNTER_LINE(unwind_refs);
	char whole[512], cut[16];
	int n = counters__render(whole, sizeof(whole), "unwind", &l, &v);

	CHECK(counters__render(cut, sizeof(cut), "unwind", &l, &v) == n);
	CHECK(strlen(cut) == sizeof(cut) - 1 && !strncmp(cut, whole, 15));
	CHECK(counters__render(NULL, 0, "unwind", &l, &v) == n);
}

int main(void)
{
	RUN(test_lists);
	RUN(test_render);
	RUN(test_render_kib);
	RUN(test_render_short);
	CHECK_EXIT();
}
