/* The pprof window as a consumer: resolved samples over a loctab make the
 * same profile as the pprof builder called directly the way the
 * symbolizer and capture did before the loctab (same mappings, functions,
 * locations, lines, samples, lost samples and time), and loctab ids cached
 * for one window or generation are never used for another. */
#include "check.h"
#include "out/pprof.h"
#include "out/pprofwin.h"
#include "pprof_decode.h"
#include "sym/loctab.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KSTART 0xffff800000000000ull
#define LIBC_START 0x7f0000001000ull

/* The profile as text, strings resolved and ids kept: two profiles with
 * the same text are the same profile, whatever their string tables. */
static char *describe(const uint8_t *gz, size_t len)
{
	Perftools__Profiles__Profile *pr = pprof_decode(gz, len);
	char *text = NULL;
	size_t size = 0, i, j;
	FILE *f;

	if (!pr)
		return NULL;
	f = open_memstream(&text, &size);
#define S(i) pr->string_table[i]
	fprintf(f, "time %lld duration %lld period %lld %s/%s\n",
		(long long)pr->time_nanos, (long long)pr->duration_nanos,
		(long long)pr->period, S(pr->period_type->type),
		S(pr->period_type->unit));
	for (i = 0; i < pr->n_sample_type; i++)
		fprintf(f, "type %s/%s\n", S(pr->sample_type[i]->type),
			S(pr->sample_type[i]->unit));
	for (i = 0; i < pr->n_comment; i++)
		fprintf(f, "comment %s\n", S(pr->comment[i]));
	for (i = 0; i < pr->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = pr->mapping[i];

		fprintf(f, "mapping %llu %llx-%llx@%llx %s %s %d%d%d%d\n",
			(unsigned long long)m->id,
			(unsigned long long)m->memory_start,
			(unsigned long long)m->memory_limit,
			(unsigned long long)m->file_offset, S(m->filename),
			S(m->build_id), m->has_functions, m->has_filenames,
			m->has_line_numbers, m->has_inline_frames);
	}
	for (i = 0; i < pr->n_function; i++)
		fprintf(f, "function %llu '%s' '%s' '%s'\n",
			(unsigned long long)pr->function[i]->id,
			S(pr->function[i]->name),
			S(pr->function[i]->system_name),
			S(pr->function[i]->filename));
	for (i = 0; i < pr->n_location; i++) {
		const Perftools__Profiles__Location *l = pr->location[i];

		fprintf(f, "location %llu m%llu %llx",
			(unsigned long long)l->id,
			(unsigned long long)l->mapping_id,
			(unsigned long long)l->address);
		for (j = 0; j < l->n_line; j++)
			fprintf(f, " f%llu:%lld",
				(unsigned long long)l->line[j]->function_id,
				(long long)l->line[j]->line);
		fputc('\n', f);
	}
	for (i = 0; i < pr->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pr->sample[i];

		fprintf(f, "sample");
		for (j = 0; j < s->n_value; j++)
			fprintf(f, " %lld", (long long)s->value[j]);
		fprintf(f, " @");
		for (j = 0; j < s->n_location_id; j++)
			fprintf(f, " %llu",
				(unsigned long long)s->location_id[j]);
		for (j = 0; j < s->n_label; j++)
			fprintf(f, " %s=%s/%lld/%s", S(s->label[j]->key),
				S(s->label[j]->str),
				(long long)s->label[j]->num,
				S(s->label[j]->num_unit));
		fputc('\n', f);
	}
#undef S
	fclose(f);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	return text;
}

static char *describe_pprof(struct pprof *pp)
{
	uint8_t *gz = NULL;
	size_t len = 0;
	char *text;

	if (pprof__encode(pp, &gz, &len))
		return NULL;
	text = describe(gz, len);
	free(gz);
	return text;
}

static const struct pprof_label labels_a[] = {
	{ .key = "process", .str = "app" },
	{ .key = "pid", .num = 7 },
	{ .key = "cpu", .num = 1, .num_unit = "cpu" },
	{ .key = "span", .str = "s1" },
};
static const struct pprof_label labels_b[] = {
	{ .key = "process", .str = "app" },
	{ .key = "pid", .num = 7 },
	{ .key = "cpu", .num = 2, .num_unit = "cpu" },
};

/* The window's frames as the symbolizer resolves them: the kernel's
 * mapping first, then a kernel frame, a libc frame with an inlined line,
 * a frame in no mapping, and a libc frame of a second mapping. */
struct frames {
	uint32_t kmap, libc, libc2;
	uint32_t kloc, inl, unknown, other;
};

static bool resolve(struct loctab *lt, struct frames *fr)
{
	uint32_t fns[2];
	int32_t lines[2] = { 12, 40 };

	fr->kmap = loctab__mapping(lt, KSTART, ~0ull, 0, "[kernel.kallsyms]",
				   NULL);
	fns[0] = loctab__function(lt, "do_syscall_64", NULL, NULL);
	fr->kloc = loctab__location(lt, fr->kmap, KSTART + 0x100, fns, NULL,
				    1);
	fr->libc = loctab__mapping(lt, LIBC_START, LIBC_START + 0x1000, 0x2000,
				   "/lib/libc.so.6", "abcd");
	fns[0] = loctab__function(lt, "memcpy", "__memcpy", "memcpy.c");
	fns[1] = loctab__function(lt, "qsort", "qsort", "qsort.c");
	loctab__mapping_set_info(lt, fr->libc, true, true, true);
	fr->inl = loctab__location(lt, fr->libc, LIBC_START + 0x10, fns, lines,
				   2);
	fns[0] = loctab__function(lt, "[unknown]", NULL, NULL);
	fr->unknown = loctab__location(lt, 0, 0x1233, fns, NULL, 1);
	fr->libc2 = loctab__mapping(lt, LIBC_START + 0x1000,
				    LIBC_START + 0x2000, 0x3000,
				    "/lib/libc.so.6", "abcd");
	loctab__mapping_set_exe(lt, fr->libc2);	/* as if a program */
	fns[0] = loctab__function(lt, "[libc.so.6]", NULL, NULL);
	fr->other = loctab__location(lt, fr->libc2, LIBC_START + 0x1800, fns,
				     NULL, 1);
	return fr->kmap && fr->kloc && fr->libc && fr->inl && fr->unknown &&
	       fr->libc2 && fr->other;
}

/* The same profile made directly, in the order the symbolizer and capture
 * called the pprof builder before the loctab. */
static struct pprof *direct(void)
{
	struct pprof_vt types[2] = { { "samples", "count" },
				     { "cpu", "nanoseconds" } };
	struct pprof *pp = pprof__new(types, 2, types[1], 1000);
	uint64_t km, lm, lm2, fns[2], locs[4], fn, loc;
	const int64_t lines[2] = { 12, 40 };
	const struct pprof_label lost[2] = {
		{ .key = "process", .str = "[tagprof]" },
		{ .key = "service", .str = DROPPED_SERVICE },
	};
	int64_t v[2];

	km = pprof__mapping(pp, KSTART, ~0ull, 0, "[kernel.kallsyms]", NULL);
	fns[0] = pprof__function(pp, "do_syscall_64", NULL, NULL);
	locs[0] = pprof__location(pp, km, KSTART + 0x100, fns, NULL, 1);
	lm = pprof__mapping(pp, LIBC_START, LIBC_START + 0x1000, 0x2000,
			    "/lib/libc.so.6", "abcd");
	fns[0] = pprof__function(pp, "memcpy", "__memcpy", "memcpy.c");
	fns[1] = pprof__function(pp, "qsort", "qsort", "qsort.c");
	pprof__mapping_set_info(pp, lm, true, true, true);
	locs[1] = pprof__location(pp, lm, LIBC_START + 0x10, fns, lines, 2);
	fns[0] = pprof__function(pp, "[unknown]", NULL, NULL);
	locs[2] = pprof__location(pp, 0, 0x1233, fns, NULL, 1);
	v[0] = 1, v[1] = 900;
	pprof__add_sample(pp, locs, 3, v, labels_a, 4);
	v[0] = 1, v[1] = 1100;
	pprof__add_sample(pp, locs, 3, v, labels_a, 4);
	lm2 = pprof__mapping(pp, LIBC_START + 0x1000, LIBC_START + 0x2000,
			     0x3000, "/lib/libc.so.6", "abcd");
	pprof__mapping_set_exe(pp, lm2);	/* written first */
	fns[0] = pprof__function(pp, "[libc.so.6]", NULL, NULL);
	locs[3] = pprof__location(pp, lm2, LIBC_START + 0x1800, fns, NULL, 1);
	v[0] = 1, v[1] = 1000;
	pprof__add_sample(pp, locs + 1, 3, v, labels_b, 3);
	/* Lost samples, each worth the average sample (3000 / 3). */
	fn = pprof__function(pp, "[dropped: the profiler was over its memory "
			     "limit]", NULL, NULL);
	loc = pprof__location(pp, 0, ~0ull - 2, &fn, NULL, 1);
	v[0] = 2, v[1] = 2000;
	pprof__add_sample(pp, &loc, 1, v, lost, 2);
	fn = pprof__function(pp, "[lost: malformed records]", NULL, NULL);
	loc = pprof__location(pp, 0, ~0ull, &fn, NULL, 1);
	v[0] = 5, v[1] = 5000;
	pprof__add_sample(pp, &loc, 1, v, lost, 2);
	pprof__set_time(pp, 1700000000000000000ll, 60000000000ll);
	return pp;
}

static const struct pprofwin_opts opts = {
	.sample_type = "cpu", .sample_unit = "nanoseconds", .period = 1000,
	.service_label = true,
};

static void test_same_as_direct(void)
{
	struct loctab *lt = loctab__new();
	struct pprofwin *w = pprofwin__new(&opts);
	struct pprof *got = NULL, *want = direct();
	struct frames fr;
	char *a = NULL, *b = NULL;
	uint32_t locs[4];

	CHECK(lt && w && want && resolve(lt, &fr));
	locs[0] = fr.kloc, locs[1] = fr.inl, locs[2] = fr.unknown;
	locs[3] = fr.other;
	pprofwin__sample(w, &(struct resolved_sample){
		.pid = 7, .period = 900, .locs = locs, .nlocs = 3,
		.labels = labels_a, .nlabels = 4, .lt = lt });
	pprofwin__sample(w, &(struct resolved_sample){
		.pid = 7, .period = 1100, .locs = locs, .nlocs = 3,
		.labels = labels_a, .nlabels = 4, .lt = lt });
	pprofwin__sample(w, &(struct resolved_sample){
		.pid = 7, .period = 1000, .locs = locs + 1, .nlocs = 3,
		.labels = labels_b, .nlabels = 3, .lt = lt });
	pprofwin__close(w, &(struct window_end){
		.start_real_ns = 1700000000000000000ll,
		.duration_ns = 60000000000ull, .samples = 3, .value = 3000,
		.dropped = 2, .malformed = 5 });
	got = pprofwin__take(w);
	CHECK(got);
	a = describe_pprof(got);
	b = describe_pprof(want);
	CHECK(a && b);
	if (strcmp(a, b))
		fprintf(stderr, "  got:\n%s  want:\n%s", a, b);
	CHECK(!strcmp(a, b));
	/* The executable's mapping first, its id kept. */
	CHECK(strstr(a, "\nmapping 3 "));
	CHECK(strstr(a, "\nmapping 3 ") < strstr(a, "\nmapping 1 "));
	/* Two distinct samples and the two kinds lost. */
	CHECK(pprof__sample_count(got) == 4);
	/* The next window starts empty. */
	CHECK(pprofwin__pprof(w) != got);
	CHECK(pprof__sample_count(pprofwin__pprof(w)) == 0);
	free(a);
	free(b);
	pprof__free(got);
	pprof__free(want);
	pprofwin__free(w);
	loctab__free(lt);
}

/* The only location of the profile, by address; 0 when not one. */
static uint64_t only_address(struct pprof *pp)
{
	Perftools__Profiles__Profile *pr;
	uint8_t *gz = NULL;
	size_t len = 0;
	uint64_t addr = 0;

	if (pprof__encode(pp, &gz, &len))
		return 0;
	pr = pprof_decode(gz, len);
	free(gz);
	if (pr && pr->n_location == 1)
		addr = pr->location[0]->address;
	if (pr)
		perftools__profiles__profile__free_unpacked(pr, NULL);
	return addr;
}

/* Loctab ids name other frames after a reset: a pprof id cached for one
 * generation is not used for the next, in the same window or the next. */
static void test_generations(void)
{
	struct loctab *lt = loctab__new();
	struct pprofwin *w = pprofwin__new(&opts);
	struct pprof *pp;
	uint32_t fn, loc;

	CHECK(lt && w);
	fn = loctab__function(lt, "a", NULL, NULL);
	loc = loctab__location(lt, 0, 0xa0, &fn, NULL, 1);
	pprofwin__sample(w, &(struct resolved_sample){
		.period = 1, .locs = &loc, .nlocs = 1, .lt = lt });
	pp = pprofwin__take(w);
	CHECK(pp && only_address(pp) == 0xa0);
	pprof__free(pp);

	/* Not reset: the same ids, interned into the new window's pprof. */
	pprofwin__sample(w, &(struct resolved_sample){
		.period = 1, .locs = &loc, .nlocs = 1, .lt = lt });
	pp = pprofwin__take(w);
	CHECK(pp && only_address(pp) == 0xa0);
	pprof__free(pp);

	/* Reset within a window: id 1 is another frame now. */
	loctab__reset(lt);
	fn = loctab__function(lt, "b", NULL, NULL);
	CHECK(loctab__location(lt, 0, 0xb0, &fn, NULL, 1) == loc);
	pprofwin__sample(w, &(struct resolved_sample){
		.period = 1, .locs = &loc, .nlocs = 1, .lt = lt });
	pp = pprofwin__take(w);
	CHECK(pp && only_address(pp) == 0xb0);
	pprof__free(pp);
	pprofwin__free(w);
	loctab__free(lt);
}

/* A window that lost everything still has samples: the lost ones, worth
 * the event's period when no sample gave an average, without a service
 * label unless asked. */
static void test_lost_only(void)
{
	struct pprofwin_opts o = opts;
	struct pprofwin *w;
	struct pprof *pp;
	char *text;

	o.service_label = false;
	w = pprofwin__new(&o);
	CHECK(w);
	pprofwin__close(w, &(struct window_end){ .start_real_ns = 5,
		.duration_ns = 7, .lost = 3 });
	pp = pprofwin__take(w);
	CHECK(pp);
	text = describe_pprof(pp);
	CHECK(text);
	if (!strstr(text, "sample 3 3000 @ 1 process=[tagprof]/0/\n") ||
	    strstr(text, "service") || !strstr(text, "time 5 duration 7 ") ||
	    !strstr(text, "'[lost: the ring buffer was full]'"))
		fprintf(stderr, "  %s", text);
	CHECK(strstr(text, "sample 3 3000 @ 1 process=[tagprof]/0/\n"));
	CHECK(!strstr(text, "service"));
	CHECK(strstr(text, "time 5 duration 7 "));
	CHECK(strstr(text, "'[lost: the ring buffer was full]'"));
	free(text);
	pprof__free(pp);
	pprofwin__free(w);
	pprofwin__free(NULL);
}

/* An address nothing named when its samples came, named before the window
 * closes (its debug file came late): the window's pprof shows the name on
 * the same location, used by the same samples; the mapping claims its
 * functions only then. A location named late but never sampled is not
 * added. */
static void test_named_late(void)
{
	struct loctab *lt = loctab__new();
	struct pprofwin *w = pprofwin__new(&opts);
	uint32_t m, fns[2], loc, unused;
	const int32_t lines[2] = { 7, 21 };
	struct pprof *pp;
	char *text;

	CHECK(lt && w);
	m = loctab__mapping(lt, LIBC_START, LIBC_START + 0x1000, 0,
			    "/bin/prog", "beef");
	loc = loctab__location(lt, m, LIBC_START + 0x40, NULL, NULL, 0);
	unused = loctab__location(lt, m, LIBC_START + 0x80, NULL, NULL, 0);
	CHECK(m && loc && unused);
	for (int i = 0; i < 2; i++)
		pprofwin__sample(w, &(struct resolved_sample){
			.period = 10, .locs = &loc, .nlocs = 1, .lt = lt });
	fns[0] = loctab__function(lt, "inlined", NULL, "a.c");
	fns[1] = loctab__function(lt, "outer", "outer", "a.c");
	CHECK(!loctab__name_location(lt, loc, fns, lines, 2));
	CHECK(!loctab__name_location(lt, unused, fns, lines, 1));
	CHECK(loctab__name_location(lt, loc, fns, lines, 1) == -EEXIST);
	loctab__mapping_set_info(lt, m, true, true, true);
	pprofwin__close(w, &(struct window_end){ .samples = 2, .value = 20,
						 .lt = lt });
	pp = pprofwin__take(w);
	text = pp ? describe_pprof(pp) : NULL;
	CHECK(text);
	if (text && (!strstr(text, "location 1 m1 7f0000001040 f1:7 f2:21\n") ||
		     !strstr(text, "sample 2 20 @ 1\n") ||
		     !strstr(text, " beef 1111\n") ||
		     strstr(text, "7f0000001080")))
		fprintf(stderr, "  %s", text);
	CHECK(text && strstr(text, "location 1 m1 7f0000001040 f1:7 f2:21\n"));
	CHECK(text && strstr(text, "function 2 'outer' 'outer' 'a.c'\n"));
	CHECK(text && strstr(text, "sample 2 20 @ 1\n"));
	CHECK(text && strstr(text, " beef 1111\n"));
	CHECK(text && !strstr(text, "7f0000001080"));
	free(text);
	pprof__free(pp);
	pprofwin__free(w);
	loctab__free(lt);
}

/* Memory-access samples: a per-sample window gives each its data address
 * and, where the hardware measured one, its weight as numeric labels, and
 * the weight as a third value; an aggregated one leaves the address out,
 * so that samples of one data object aggregate, and sums the weights. */
static char *memory_window(bool timeline)
{
	static const struct pprof_label obj[] = {
		{ .key = "data_object", .str = "table (app)" },
		{ .key = "process", .str = "app" },
	};
	const struct tp_mem mem[3] = {
		{ .addr = 0x601000, .weight = 40, .flags = TP_MEM_WEIGHT },
		{ .addr = 0x602040, .weight = 300, .flags = TP_MEM_WEIGHT },
		{ .addr = 0x603000 },
	};
	struct pprofwin_opts o = {
		.sample_type = "mem-loads", .sample_unit = "count",
		.period = 100, .timeline = timeline, .memory = true,
		.weight = true,
	};
	struct loctab *lt = loctab__new();
	struct pprofwin *w = pprofwin__new(&o);
	struct pprof *pp;
	char *text = NULL;

	for (int i = 0; lt && w && i < 3; i++)
		pprofwin__sample(w, &(struct resolved_sample){
			.pid = 7, .tid = 7, .time_ns = 1000 + i,
			.period = 100, .labels = obj, .nlabels = 2, .lt = lt,
			.mem = &mem[i] });
	if (w) {
		pprofwin__close(w, &(struct window_end){ .duration_ns = 9,
			.samples = 3, .value = 300, .lt = lt });
		pp = pprofwin__take(w);
		text = pp ? describe_pprof(pp) : NULL;
		pprof__free(pp);
	}
	pprofwin__free(w);
	loctab__free(lt);
	return text;
}

static void test_memory_samples(void)
{
	char *t = memory_window(true), *a = memory_window(false);
	bool ok = t && a &&
		strstr(t, "type weight/cycles\n") &&
		strstr(t, "sample 1 100 40 @ weight=/40/cycles data_object="
		       "table (app)/0/ process=app/0/ addr=/6295552/ t=") &&
		strstr(t, "sample 1 100 300 @ weight=/300/cycles data_object="
		       "table (app)/0/ process=app/0/ addr=/6299712/ t=") &&
		/* no weight measured: no label, and nothing added */
		strstr(t, "sample 1 100 0 @ data_object=table (app)/0/ "
		       "process=app/0/ addr=/6303744/ t=") &&
		!strstr(a, "addr=") && !strstr(a, "weight=") &&
		strstr(a, "sample 3 300 340 @ data_object=table (app)/0/ "
		       "process=app/0/\n");

	if (!ok)
		fprintf(stderr, "  per-sample:\n%s  aggregated:\n%s",
			t ? t : "(none)\n", a ? a : "(none)\n");
	free(t);
	free(a);
	CHECK(ok);
}

int main(void)
{
	RUN(test_same_as_direct);
	RUN(test_named_late);
	RUN(test_generations);
	RUN(test_lost_only);
	RUN(test_memory_samples);
	CHECK_EXIT();
}
