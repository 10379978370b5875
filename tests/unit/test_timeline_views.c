/* report timeline's parts (src/report/timeline.c, firefox.c, htmlview.c)
 * on a per-sample profile built here with known times and labels: the
 * stacks shared and root first, threads and samples in order, the runs
 * that become markers (value changes, gaps), and hostile label text
 * escaped in both outputs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "out/pprof.h"
#include "report/firefox.h"
#include "report/htmlview.h"
#include "report/pprofin.h"
#include "report/timeline.h"

static char dir[] = "/tmp/test_timeline_views.XXXXXX";

#define MS 1000000ll

/* thread 10: op a at 0-4 ms, b at 5-7, a at 8-9; thread 11: op a at 0, 1
 * and 100 ms (a gap: two runs), then a hostile value at 101 ms. Period 1
 * ms. Stacks: main -> f everywhere. */
static const char *write_profile(void)
{
	static const struct pprof_vt types[2] = {
		{ "samples", "count" }, { "cpu", "nanoseconds" } };
	static char path[256];
	struct pprof *p = pprof__new(types, 2, types[1], MS);
	uint64_t fmain, ff, locs[2];
	int64_t v[2] = { 1, MS };
	uint8_t *gz = NULL;
	size_t len = 0;
	FILE *f;

	if (!p || pprof__set_timeline(p))
		abort();
	fmain = pprof__function(p, "main", NULL, NULL);
	ff = pprof__function(p, "f", NULL, NULL);
	locs[0] = pprof__location(p, 0, 0x20, &ff, NULL, 1);	/* leaf */
	locs[1] = pprof__location(p, 0, 0x10, &fmain, NULL, 1);
	pprof__set_time(p, 1000 * MS, 200 * MS);
	pprof__set_time_origin(p, 0);
	for (int i = 0; i < 10; i++) {
		struct pprof_label l[3] = {
			{ .key = "pid", .num = 10 }, { .key = "tid", .num = 10 },
			{ .key = "op", .str = i >= 5 && i < 8 ? "b" : "a" } };

		if (pprof__add_sample_at(p, locs, 2, v, l, 3, i * MS))
			abort();
	}
	for (int i = 0; i < 4; i++) {
		int64_t t[4] = { 0, MS, 100 * MS, 101 * MS };
		struct pprof_label l[4] = {
			{ .key = "pid", .num = 10 }, { .key = "tid", .num = 11 },
			{ .key = "thread_name", .str = "worker" },
			{ .key = "op", .str = i < 3 ? "a" : "<x\">" } };

		if (pprof__add_sample_at(p, locs, 2, v, l, 4, t[i]))
			abort();
	}
	if (pprof__encode(p, &gz, &len))
		abort();
	snprintf(path, sizeof(path), "%s/tl.pb.gz", dir);
	f = fopen(path, "w");
	if (!f || fwrite(gz, 1, len, f) != len)
		abort();
	fclose(f);
	free(gz);
	pprof__free(p);
	return path;
}

static struct timeline *load(struct pprofin *in)
{
	struct merge_cut cut = { 0 };
	struct timeline *tl = timeline__new();
	char err[256];

	if (!tl || pprofin__load(in, write_profile(), err, sizeof(err)))
		abort();
	timeline__set_start(tl, in->pr->time_nanos);
	if (timeline__add(tl, in, &cut, err, sizeof(err)))
		abort();
	timeline__sort(tl);
	return tl;
}

static void test_threads_and_stacks(void)
{
	struct pprofin in;
	struct timeline *tl = load(&in);
	const struct tl_thread *a = &tl->threads[0], *b = &tl->threads[1];
	const struct tl_stack *leaf;

	CHECK(tl->nthreads == 2 && a->tid == 10 && b->tid == 11);
	CHECK(a->n == 10 && b->n == 4 && tl->counts.kept == 14);
	CHECK(!strcmp(timeline__str(tl, b->name), "worker"));
	CHECK(tl->period_ns == MS);
	for (size_t i = 1; i < a->n; i++)
		CHECK(a->s[i].t_ns > a->s[i - 1].t_ns);
	/* one stack for all, main at the root, f its leaf */
	CHECK(tl->nstacks == 2 && a->s[0].stack == b->s[2].stack);
	leaf = &tl->stacks[a->s[0].stack];
	CHECK(!strcmp(timeline__str(tl, tl->funcs[tl->frames[leaf->frame].func].name), "f"));
	CHECK(tl->stacks[leaf->prefix].prefix == TL_NONE);
	CHECK(!strcmp(timeline__str(tl, tl->funcs[tl->frames[tl->stacks[leaf->prefix].frame].func].name), "main"));
	/* pid, tid and thread_name are the thread's, not labels */
	CHECK(a->s[0].npairs == 1 && b->s[0].npairs == 1);
	timeline__free(tl);
	pprofin__free(&in);
}

static void test_firefox_markers(void)
{
	struct pprofin in;
	struct timeline *tl = load(&in);
	struct strbuf b = { 0 };
	struct firefox_counts n;
	char *t11;

	CHECK(!firefox__write(tl, &b, &n) && n.threads == 2 && n.samples == 14);
	CHECK(!strncmp(b.p, "{\"meta\":", 8));
	/* thread 10: a 0-4 ms (to 5: one period on), b 5-7, a 8-9 */
	CHECK(strstr(b.p, "\"startTime\":[0,5,8],\"endTime\":[5,8,10]"));
	/* thread 11: a at 0 and 1 ms, then a gap of 99 ms: a new run, which
	 * ends at the next sample's other value */
	t11 = strstr(b.p, "\"tid\":11");
	CHECK(t11 && strstr(t11, "\"startTime\":[0,100,101],"
			    "\"endTime\":[2,101,102]"));
	CHECK(n.markers == 6);
	/* the hostile value, escaped in the JSON */
	CHECK(strstr(b.p, "\"op=<x\\\">\"") && !strstr(b.p, "<x\">"));
	strbuf__free(&b);
	timeline__free(tl);
	pprofin__free(&in);
}

static void test_html(void)
{
	struct pprofin in;
	struct timeline *tl = load(&in);
	struct strbuf b = { 0 };
	size_t lanes;

	CHECK(!htmlview__write(tl, &(struct htmlview_opts){ .by = "op",
		.title = "t<i>" }, &b, &lanes) && lanes == 3);
	CHECK(strstr(b.p, "data-value=\"a\"") && strstr(b.p, "data-value=\"b\""));
	CHECK(strstr(b.p, "&lt;x&quot;&gt;") && !strstr(b.p, "<x\"") &&
	      !strstr(b.p, "<i>"));
	/* a: 7 + 3 of 14 samples */
	CHECK(strstr(b.p, "data-share=\"71.43\""));
	strbuf__free(&b);
	CHECK(htmlview__write(tl, &(struct htmlview_opts){ .by = "nosuch",
		.title = "" }, &b, &lanes) == -ENOENT);
	CHECK(htmlview__write(tl, &(struct htmlview_opts){ .by = "main",
		.title = "" }, &b, &lanes) == -ENOENT);	/* a string, not a label */
	strbuf__free(&b);
	CHECK(!htmlview__write(tl, &(struct htmlview_opts){ .by = "thread_name",
		.title = "" }, &b, &lanes) && lanes == 2);
	strbuf__free(&b);
	timeline__free(tl);
	pprofin__free(&in);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	RUN(test_threads_and_stacks);
	RUN(test_firefox_markers);
	RUN(test_html);
	check_remove_dir(dir);
	CHECK_EXIT();
}
