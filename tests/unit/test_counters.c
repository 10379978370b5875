/* Counters rendered from their lists (capture/counters.h). */
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "capture/comments.h"
#include "capture/counters.h"
#include "capture/labels.h"
#include "capture/proccfg.h"
#include "proc/ctxwatch.h"
#include "proc/proctable.h"
#include "sample_event.h"
#include "sym/symbolizer.h"
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
				CHECK(strcmp(d[i].name, d[j].name));
		}
	}
}

static const struct counter_ref some_refs[] = {
	COUNTER(TP, ustack_copied),
	COUNTER_SUB(TP, ustack_probes),
	COUNTER_SUB(TP, ustack_short),
	COUNTER_PART("since start", UNWIND, cfi_used),
	COUNTER_SUB(UNWIND, cfi_rules),
	COUNTER(UNWIND, marked),
	COUNTER_PART(NULL, LABELS, unknown_key),
};

/* Joins, parentheses and parts, numbers before the lists' texts. */
static void test_render(void)
{
	struct tp_stats tp = { .ustack_copied = 5, .ustack_probes = 2,
			       .ustack_short = 1 };
	struct unwind_stats us = { .cfi_used = 7, .cfi_rules = 6,
				   .marked = 3 };
	struct labels_stats ls = { .unknown_key = 4 };
	struct counter_values v = { .group = {
		[CG_TP] = &tp, [CG_UNWIND] = &us, [CG_LABELS] = &ls } };
	struct counter_line l = COUNTER_LINE(some_refs);
	const char *want = "unwind fp: 5 samples with a stack copy (2 auto "
		"probes, 1 cut short by the stack's end); since start: 7 "
		"stacks from CFI (6 unwinds by cached rules), 3 processes "
		"marked for CFI; 4 unknown key";
	char buf[512];
	int n = counters__render(buf, sizeof(buf), "unwind fp", &l, &v);

	CHECK(!strcmp(buf, want));
	CHECK(n == (int)strlen(want));
	CHECK(counters__sum(&l, &v) == 5 + 2 + 1 + 7 + 6 + 3 + 4);
	/* no title: the counters alone; a group not given reads 0s */
	v.group[CG_UNWIND] = NULL;
	counters__render(buf, sizeof(buf), NULL, &l, &v);
	CHECK(!strncmp(buf, "5 samples with a stack copy (", 29));
	CHECK(strstr(buf, "; since start: 0 stacks from CFI (0 unwinds"));
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
	struct counter_line l = COUNTER_LINE(some_refs);
	char whole[512], cut[16];
	int n = counters__render(whole, sizeof(whole), "unwind", &l, &v);

	CHECK(counters__render(cut, sizeof(cut), "unwind", &l, &v) == n);
	CHECK(strlen(cut) == sizeof(cut) - 1 && !strncmp(cut, whole, 15));
	CHECK(counters__render(NULL, 0, "unwind", &l, &v) == n);
}

/* A line of problems: zero counters left out with their separators,
 * the parentheses of one left out too, a part's label before the first
 * counter it shows, words around a counter's text. */
static void test_render_nonzero(void)
{
	static const struct counter_ref refs[] = {
		COUNTER(TP, ustack_copied),
		COUNTER_SUB(TP, ustack_probes),
		COUNTER(TP, ustack_failed),
		COUNTER_SUB(TP, ustack_short),
		COUNTER_PART("since start", UNWIND, cfi_used),
		COUNTER(UNWIND, marked),
		COUNTER_WITH("samples", TP, lost, "here"),
	};
	struct tp_stats tp = { .ustack_probes = 2, .ustack_failed = 3,
			       .ustack_short = 1, .lost = 4 };
	struct unwind_stats us = { .marked = 5 };
	struct counter_values v = { .group = {
		[CG_TP] = &tp, [CG_UNWIND] = &us } };
	struct counter_line l = COUNTER_LINE_NONZERO(refs);
	struct counter_line full = COUNTER_LINE(refs);
	char buf[512];

	counters__render(buf, sizeof(buf), "problems", &l, &v);
	CHECK(!strcmp(buf, "problems: 3 copies failed (1 cut short by the "
		      "stack's end); since start: 5 processes marked for "
		      "CFI, 4 samples lost (ring buffer full) here"));
	/* nothing in the first part: the second has no "; " before it */
	tp = (struct tp_stats){ .lost = 1 };
	counters__render(buf, sizeof(buf), NULL, &l, &v);
	CHECK(!strcmp(buf, "since start: 5 processes marked for CFI, 1 "
		      "samples lost (ring buffer full) here"));
	us.marked = 0;
	tp.lost = 0;
	CHECK(counters__render(buf, sizeof(buf), "problems", &l, &v) == 10);
	CHECK(!strcmp(buf, "problems: "));
	/* the same refs in full: every counter, zeros included */
	counters__render(buf, sizeof(buf), NULL, &full, &v);
	CHECK(!strcmp(buf, "0 samples with a stack copy (0 auto probes), 0 "
		      "copies failed (0 cut short by the stack's end); since "
		      "start: 0 stacks from CFI, 0 processes marked for CFI, "
		      "0 samples lost (ring buffer full) here"));
}

/* ---- the comments and the summary (capture/comments.h) ---- */

/* Every group's struct (its i-th counter its i-th uint64_t), each counter
 * a value of its own. */
static uint64_t store[CG_COUNT][64];

/* What counter i of group g shows: its number, or its KiB. */
static uint64_t shown_as(int g, size_t i)
{
	return 1000 * (g + 1) + i + 1;
}

static struct counter_values fill(void)
{
	struct counter_values v;

	for (int g = 0; g < CG_COUNT; g++) {
		size_t n;
		const struct counter_def *d = counters__group(g, &n);

		for (size_t i = 0; i < n && i < 64; i++)
			store[g][i] = shown_as(g, i) << (d[i].kib ? 10 : 0);
		v.group[g] = store[g];
	}
	return v;
}

static char shown[16384];

static void collect(void *ctx, const char *line)
{
	size_t at = strlen(shown);

	(void)ctx;
	snprintf(shown + at, sizeof(shown) - at, "%s\n", line);
}

/* "NUMBER TEXT" in text, the number not the end of a longer one. */
static bool says(const char *text, uint64_t n, bool kib, const char *what)
{
	char want[256];
	const char *p;

	snprintf(want, sizeof(want), "%llu %s%s", (unsigned long long)n,
		 kib ? "KiB " : "", what);
	for (p = strstr(text, want); p; p = strstr(p + 1, want))
		if (p == text || p[-1] < '0' || p[-1] > '9')
			return true;
	return false;
}

/* The comments that start with COMMENTS_FULL, without it. */
static char full[16384];

static void window_comments_at(struct counter_values v, struct tp_stats *cpu,
			       int ncpus, uint64_t freq, uint64_t period)
{
	struct proccfg_filters flt = { 0 };
	struct comments_in in = { .v = v, .event = "cpu-clock",
				  .freq = freq, .period = period,
				  .unwind = TP_UNWIND_FP,
				  .ksym_source = "kallsyms", .per_cpu = cpu,
				  .ncpus = ncpus, .duration_ns = 2049000000,
				  .filters = &flt };
	const size_t np = strlen(COMMENTS_FULL);
	char *p, *f = full;

	shown[0] = '\0';
	comments__window(&in, collect, NULL);
	for (p = shown; *p; p = strchr(p, '\n') + 1) {
		size_t len = strcspn(p, "\n") + 1;

		if (strncmp(p, COMMENTS_FULL, np))
			continue;
		memcpy(f, p + np, len - np);
		f += len - np;
	}
	*f = '\0';
}

static void window_comments(struct counter_values v, struct tp_stats *cpu,
			    int ncpus)
{
	window_comments_at(v, cpu, ncpus, 99, 0);
}

/* How many lines of text do not start with COMMENTS_FULL: what report
 * headers show. */
static int headed(const char *text)
{
	int n = 0;

	for (const char *p = text; *p; p = strchr(p, '\n') + 1)
		n += !!strncmp(p, COMMENTS_FULL, strlen(COMMENTS_FULL));
	return n;
}

/* A counter added to a list and to no line would be missing from every
 * profile: each one shows, with its own number, in the comments. */
static void test_comments_show_every_counter(void)
{
	window_comments(fill(), NULL, 0);
	for (int g = 0; g < CG_COUNT; g++) {
		size_t n;
		const struct counter_def *d = counters__group(g, &n);

		for (size_t i = 0; i < n; i++) {
			CHECK(i < 64);
			if (!says(shown, shown_as(g, i), d[i].kib,
				  d[i].text)) {
				fprintf(stderr, "  group %d: %s not shown in:"
					"\n%s", g, d[i].name, shown);
				CHECK(0);
			}
		}
	}
	CHECK(!strstr(shown, " ?"));	/* every reference found its list */
}

/* The first screen: what was recorded, then the problems that are not
 * zero, nothing else outside the full lines. */
static void test_comments_first_screen(void)
{
	struct counter_values v = { 0 };
	struct symbolizer_stats zs = { .no_symbol = 40, .user_frames = 90 };
	struct debuginfo_stats ds = { .debug_missing = 3, .files = 4 };
	struct tp_stats tp = { .lost = 12, .samples = 100 };

	window_comments(v, NULL, 0);
	CHECK(!strncmp(shown, "tagprof " TAGPROF_VERSION ": cpu-clock at 99 "
		       "Hz, 2.0 s\n", strlen(TAGPROF_VERSION) + 33));
	CHECK(headed(shown) == 1);
	window_comments_at(v, NULL, 0, 0, 250000);
	CHECK(!strncmp(shown, "tagprof " TAGPROF_VERSION ": cpu-clock every "
		       "250000 events, 2.0 s\n",
		       strlen(TAGPROF_VERSION) + 42));

	v.group[CG_SYMBOLIZER] = &zs;
	v.group[CG_DEBUGINFO] = &ds;
	v.group[CG_TP] = &tp;
	window_comments(v, NULL, 0);
	CHECK(headed(shown) == 2);
	CHECK(strstr(shown, "\nproblems: 12 samples lost (ring buffer full), "
		     "3 stripped binaries without debug info, 40 user frames "
		     "without symbol\n" COMMENTS_FULL));

	/* Every problem at its largest still fits, whole. */
	for (int g = 0; g < CG_COUNT; g++)
		memset(store[g], 0xff, sizeof(store[g]));
	for (int g = 0; g < CG_COUNT; g++)
		v.group[g] = store[g];
	window_comments(v, NULL, 0);
	CHECK(headed(shown) == 2);
	CHECK(strstr(shown, " of CFI\n" COMMENTS_FULL));
}

/* Every problem counter, each with its own number, and each once. */
static void test_comments_problems_each(void)
{
	struct counter_values v = fill();
	const char *line, *end;

	window_comments(v, NULL, 0);
	line = strstr(shown, "\nproblems: ");
	CHECK(line);
	if (!line)
		return;
	end = strchr(line + 1, '\n');
	for (int g = 0; g < CG_COUNT; g++) {
		size_t n;
		const struct counter_def *d = counters__group(g, &n);

		for (size_t i = 0; i < n; i++) {
			char num[32];
			const char *p = line, *at = NULL;
			int seen = 0;

			snprintf(num, sizeof(num), " %llu ",
				 (unsigned long long)shown_as(g, i));
			while ((p = strstr(p + 1, num)) && p < end) {
				at = p;
				seen++;
			}
			CHECK(seen <= 1);
			/* its list's text is in the line, after its number */
			if (at && !d[i].kib)
				CHECK(strstr(at, d[i].text) &&
				      strstr(at, d[i].text) < end);
		}
	}
}

/* Lines as they were, each after COMMENTS_FULL: first words and the
 * lines' order. */
static void test_comments_lines(void)
{
	struct tp_stats cpu[3] = { { .lost = 0 }, { .lost = 7 } };
	static const char *const starts[] = {
		"tagprof ", "event: cpu-clock", "samples: ", "lost on cpu 1: 7",
		"frames since start: ", "kernel names since start, from "
		"kallsyms: ", "processes since start: ", "symbols since start: ",
		"debug info since start: ", "debuginfod since start: ",
		"target files since start: ",
		"thread context: ", "process context since start: ",
		"register tags: ", "code regions since start: ", "unwind fp: ",
		"kernel CFI: ", "memory: ",
	};
	const char *p = full;

	window_comments(fill(), cpu, 3);
	for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		CHECK(!strncmp(p, starts[i], strlen(starts[i])));
		p = strchr(p, '\n') + 1;
	}
	CHECK(!*p);
}

static bool matches(const char *text, const char *re)
{
	regex_t r;
	bool m;

	if (regcomp(&r, re, REG_EXTENDED | REG_NEWLINE | REG_NOSUB))
		return false;
	m = !regexec(&r, text, 0, NULL, 0);
	regfree(&r);
	return m;
}

/* What the e2e tests look for in the full lines (tests/e2e/NAME.sh). */
static void test_comments_as_tests_read_them(void)
{
	struct counter_values v = fill();
	static const char *const res[] = {
		"^samples: ",						/* cli */
		" [0-9]+ dropped over the memory limit",		/* agent */
		"^target files.*[0-9]+ through /proc/PID/map_files",	/* attack_files */
		"^target files.*[0-9]+ times not permitted",
		"^target files.*[0-9]+ symbolic links",
		"^target files.*[0-9]+ not regular files",
		"^target files.*[0-9]+ not the mapped file",
		"[0-9]+ by debuglink", "[0-9]+ CRC mismatch",	/* symbols */
		"[0-9]+ debug files by build ID",
		"[0-9]+ unreadable or truncated",
		"[0-9]+ garbage lines skipped", "[0-9]+ binaries corrupt",
		/* attack_perfmap */
		"JIT perf maps:.* [0-9]+ not read over the memory budget",
		"^thread context:.*[0-9]+ samples with context",	/* labels_filter */
		"^thread context:.*[0-9]+ samples dropped by --label",
		"^thread context:.*[0-9]+ record unreadable",	/* labels_bad */
		"^thread context:.*[0-9]+ invalid record",
		"^thread context:.*[0-9]+ oversize record",
		"^thread context:.*[0-9]+ unknown key",
		"^thread context:.*[0-9]+ invalid UTF-8",
		"^process context.*[0-9]+ payloads refused unread",	/* attack_otelctx */
		"^process context.*[0-9]+ decoded as neither",	/* labels_otep_forms */
		"^unwind fp: 0 samples with a stack copy .*since start: 0 "
		"stacks from CFI,",					/* unwind */
	};

	/* unwind fp: no copies, nothing from CFI */
	store[CG_TP][offsetof(struct tp_stats, ustack_copied) / 8] = 0;
	store[CG_UNWIND][offsetof(struct unwind_stats, cfi_used) / 8] = 0;
	window_comments(v, NULL, 0);
	for (size_t i = 0; i < sizeof(res) / sizeof(res[0]); i++)
		if (!matches(full, res[i])) {
			fprintf(stderr, "  /%s/ not in:\n%s", res[i], full);
			CHECK(0);
		}
}

static void summary(const struct comments_in *in)
{
	FILE *f = fmemopen(shown, sizeof(shown), "w");

	if (f) {
		comments__summary(in, f);
		fclose(f);
	}
}

/* The summary: its lines, those it has only when they have something to
 * say, and what the tests read in them. */
static void test_summary(void)
{
	struct tp_stats tp = { .ustack_copied = 4, .ustack_probes = 1,
			       .tag_filtered = 2 };
	struct capture_stats cs = { .samples = 4 };
	struct unwind_stats us = { .cfi_used = 3, .cfi_rules = 2,
				   .marked = 1 };
	struct proctable_stats ps = { .procs_seen = 2 };
	struct ctxwatch_stats cw = { 0 };
	struct proccfg_filters flt = { .tag_field = "req", .tag_name = "a" };
	struct comments_in in = { .v = { .group = {
		[CG_TP] = &tp, [CG_CAPTURE] = &cs, [CG_UNWIND] = &us,
		[CG_PROCTABLE] = &ps, [CG_CTXWATCH] = &cw } },
		.event = "cpu-clock", .unwind = TP_UNWIND_DWARF,
		.duration_ns = 1500000000, .ring_bytes = 1000,
		.filters = &flt };

	summary(&in);
	CHECK(!strcmp(shown,
		"tagprof: 1.5 s, event cpu-clock, 4 samples, 0 lost, 2 "
		"processes\n"
		"tagprof: unwind dwarf: 4 samples with a stack copy (1 auto "
		"probes), 3 stacks from CFI (2 unwinds by cached rules, 0 "
		"differing from libdwfl), 0 frameless leaf callers recovered, "
		"1 processes marked for CFI; 250 ring-buffer bytes per "
		"sample\n"
		"tagprof: --tag req=a dropped 2 samples\n"));
	/* unwind.sh, bench/unwind_cost.sh, bench/record_overhead.sh */
	CHECK(matches(shown, "^tagprof: unwind dwarf.*\\(([0-9]+) unwinds "
		      "by cached rules.* [0-9]+ differing from libdwfl"));
	CHECK(matches(shown, " [0-9]+ ring-buffer bytes per sample"));
	CHECK(matches(shown, "^tagprof: [0-9.]+ s, event .*, [0-9]+ "
		      "samples, [0-9]+ lost"));

	/* tags_only.sh, labels_writers.sh, attack_otelctx.sh */
	cw.tag_procs = 1;
	cw.schema_unknown = 1;
	cw.ctx_refused = 3;
	summary(&in);
	CHECK(matches(shown, "register tags: [0-9]* samples tagged, [0-9]* "
		      "processes"));
	CHECK(matches(shown, "^tagprof: thread context: .* 1 unknown "
		      "schema"));
	CHECK(matches(shown, "^tagprof: process context: 3 payloads "
		      "refused"));
	CHECK(!strstr(shown, "JIT perf maps"));
}

/* The agent's log lines, and what they count. */
static void test_log_lines(void)
{
	struct proctable_stats ps = { .perfmap_over_budget = 2,
				      .perfmap_refused = 1,
				      .perfmap_proc_budget = 1 << 20,
				      .perfmaps_budget = 4 << 20 };
	struct ctxwatch_stats cw = { .ctx_refused = 3, .ctx_malformed = 1,
				     .ctx_refreshes = 5 };
	struct counter_values v = { .group = { [CG_PROCTABLE] = &ps,
					       [CG_CTXWATCH] = &cw } };
	char buf[512];

	CHECK(comments__perfmaps_unread(&v, buf, sizeof(buf)) == 3);
	CHECK(!strcmp(buf, "2 not read over the memory budget (1024 KiB a "
		      "process, 4096 KiB in all), 1 refused (not a regular "
		      "file, a link, another user's); those processes' JIT "
		      "frames are unnamed"));
	CHECK(comments__ctx_refusals(&v, buf, sizeof(buf)) == 4);
	CHECK(!strcmp(buf, "3 payloads refused unread (AnyValues nested "
		      "over 8 deep or over 16384 fields), 1 decoded as "
		      "neither a ProcessContext nor a Resource"));
}

int main(void)
{
	RUN(test_lists);
	RUN(test_render);
	RUN(test_render_kib);
	RUN(test_render_short);
	RUN(test_render_nonzero);
	RUN(test_comments_show_every_counter);
	RUN(test_comments_first_screen);
	RUN(test_comments_problems_each);
	RUN(test_comments_lines);
	RUN(test_comments_as_tests_read_them);
	RUN(test_summary);
	RUN(test_log_lines);
	CHECK_EXIT();
}
