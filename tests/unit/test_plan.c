/* report plan's tree (src/report/plan.c) on profiles built here with
 * known labels: each sample's value on the path of its levels' values,
 * stopping at the first level it lacks, "(unattributed)" without the
 * outermost; inclusive and exclusive values; the order; the processes'
 * attributed shares; the levels from --levels and from the comment; the
 * exact text, and label text escaped in the text and the HTML. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "out/pprof.h"
#include "report/plan.h"
#include "report/pprofin.h"

static char dir[] = "/tmp/test_plan.XXXXXX";

#define MS 1000000ll
#define HOSTILE "<b>&\"x'\x1b[31m"

/* One sample of the test profile: n samples of these labels (NULL, -1:
 * none). */
struct spec {
	int64_t n;
	const char *query, *op;
	int64_t pipeline;
	const char *process;
	int64_t pid;
};

/* The plan the tests expect (checked by hand in test_text): query q17
 * 80 (5 its own), q3 10, unattributed 10 of 100; the process engine 90
 * attributed of 95. */
static const struct spec specs[] = {
	{ 40, "q17", "HashJoin#3", 2, "engine", 100 },
	{ 10, "q17", "HashJoin#3", 1, "engine", 100 },
	{ 5, "q17", "HashJoin#3", -1, "engine", 100 },
	{ 20, "q17", "Scan#1", 0, "engine", 100 },
	{ 5, "q17", NULL, -1, "engine", 100 },
	{ 10, "q3", HOSTILE, 1, "engine", 100 },
	{ 5, NULL, "Scan#1", 3, "engine", 100 },	/* no query: unattributed */
	{ 5, NULL, NULL, -1, "other", 200 },
};
#define NSPECS (sizeof(specs) / sizeof(specs[0]))

static size_t labels_of(const struct spec *s, struct pprof_label *l)
{
	size_t n = 0;

	l[n++] = (struct pprof_label){ .key = "process", .str = s->process };
	l[n++] = (struct pprof_label){ .key = "pid", .num = s->pid };
	if (s->query)
		l[n++] = (struct pprof_label){ .key = "query", .str = s->query };
	if (s->op)
		l[n++] = (struct pprof_label){ .key = "operator", .str = s->op };
	if (s->pipeline >= 0)	/* a register tag field: a number */
		l[n++] = (struct pprof_label){ .key = "pipeline",
					       .num = s->pipeline };
	return n;
}

/* The specs as a profile in dir/name: aggregated (a sample's value is
 * its n), or per-sample (n samples of 1, with times). comment: NULL for
 * none. */
static const char *write_profile(const char *name, bool per_sample,
				 const char *comment)
{
	static const struct pprof_vt types[2] = {
		{ "cpu", "nanoseconds" }, { "samples", "count" } };
	static char path[256];
	struct pprof *p = pprof__new(types, 2, types[0], 10 * MS);
	struct pprof_label l[5];
	uint64_t fn, loc;
	int64_t t = 0;
	uint8_t *gz = NULL;
	size_t len = 0;
	FILE *f;

	if (!p || (per_sample && pprof__set_timeline(p)))
		abort();
	fn = pprof__function(p, "f", NULL, NULL);
	loc = pprof__location(p, 0, 0x10, &fn, NULL, 1);
	pprof__set_time(p, 1000 * MS, 2000 * MS);
	pprof__set_time_origin(p, 0);
	if (comment && pprof__add_comment(p, comment))
		abort();
	for (size_t i = 0; i < NSPECS; i++) {
		size_t nl = labels_of(&specs[i], l);

		for (int64_t k = 0; k < (per_sample ? specs[i].n : 1); k++) {
			int64_t n = per_sample ? 1 : specs[i].n;
			int64_t v[2] = { n * 10 * MS, n };

			if (pprof__add_sample_at(p, &loc, 1, v, l, nl,
						 (t++) * MS))
				abort();
		}
	}
	if (pprof__encode(p, &gz, &len))
		abort();
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fwrite(gz, 1, len, f) != len)
		abort();
	fclose(f);
	free(gz);
	pprof__free(p);
	return path;
}

static struct plan_levels qop_levels(void)
{
	struct plan_levels l;

	if (plan_levels__parse(&l, "query,operator,pipeline", ',', NULL, 0))
		abort();
	return l;
}

/* The plan of one profile, cut by cut (NULL: none), sorted. */
static struct plan *plan_of(const char *path, const struct merge_cut *cut)
{
	struct plan_levels l = qop_levels();
	struct merge_cut none = { 0 };
	struct pprofin in;
	struct plan *p = plan__new(&l);
	char err[256];

	if (!p || pprofin__load(&in, path, err, sizeof(err)) ||
	    plan__add(p, &in, cut ? cut : &none, err, sizeof(err)) ||
	    plan__sort(p))
		abort();
	pprofin__free(&in);
	plan_levels__free(&l);
	return p;
}

/* The node at the path "v1/v2/..." of values (PLAN_UNATTRIBUTED at the
 * top), NULL if none. */
static const struct plan_node *node_at(const struct plan *p, const char *path)
{
	char buf[256], *save, *v;
	uint32_t n = 0, c;

	snprintf(buf, sizeof(buf), "%s", path);
	for (v = strtok_r(buf, "/", &save); v; v = strtok_r(NULL, "/", &save)) {
		for (c = p->nodes[n].child; c != PLAN_NONE; c = p->nodes[c].next)
			if (!strcmp(plan__str(p, p->nodes[c].value), v))
				break;
		if (c == PLAN_NONE)
			return NULL;
		n = c;
	}
	return &p->nodes[n];
}

static bool is(const struct plan *p, const char *path, int64_t incl,
	       int64_t excl)
{
	const struct plan_node *n = node_at(p, path);

	if (n && n->incl == incl && n->excl == excl)
		return true;
	fprintf(stderr, "  %s: %lld/%lld, want %lld/%lld\n", path,
		n ? (long long)n->incl : -1ll, n ? (long long)n->excl : -1ll,
		(long long)incl, (long long)excl);
	return false;
}

/* The tree of both kinds of profile: the value is the samples column
 * (the second here), whatever the per-sample file's layout. */
static void check_tree(bool per_sample)
{
	struct plan *p = plan_of(write_profile("t.pb.gz", per_sample, NULL),
				 NULL);

	CHECK(plan__total(p) == 100 && p->counts.kept ==
	      (per_sample ? 100 : NSPECS));
	CHECK(!strcmp(plan__str(p, p->type), "samples"));
	CHECK(is(p, "q17", 80, 5));
	CHECK(is(p, "q17/HashJoin#3", 55, 5));
	CHECK(is(p, "q17/HashJoin#3/2", 40, 40));
	CHECK(is(p, "q17/HashJoin#3/1", 10, 10));
	CHECK(is(p, "q17/Scan#1", 20, 0));
	CHECK(is(p, "q17/Scan#1/0", 20, 20));
	CHECK(is(p, "q3/" HOSTILE "/1", 10, 10));
	/* without a query, Scan#1 and pipeline 3 go nowhere below */
	CHECK(is(p, PLAN_UNATTRIBUTED, 10, 10));
	CHECK(!node_at(p, PLAN_UNATTRIBUTED "/Scan#1") && p->nnodes == 11);
	/* order: by inclusive value, the unattributed last on a tie */
	CHECK(p->nodes[p->nodes[0].child].value == node_at(p, "q17")->value);
	CHECK(node_at(p, "q3")->next ==
	      (uint32_t)(node_at(p, PLAN_UNATTRIBUTED) - p->nodes));
	/* processes: engine 90 of 95 attributed, other none */
	CHECK(p->nprocs == 2 && p->procs[0].pid == 100 &&
	      !strcmp(plan__str(p, p->procs[0].name), "engine"));
	CHECK(p->procs[0].samples == 95 && p->procs[0].attributed == 90);
	CHECK(p->procs[1].pid == 200 && p->procs[1].attributed == 0);
	plan__free(p);
}

static void test_tree_aggregated(void)
{
	check_tree(false);
}

static void test_tree_per_sample(void)
{
	check_tree(true);
}

static const char want_text[] =
	"tagprof report plan: t<1>\n"
	"levels: query > operator > pipeline (from --levels)\n"
	"100 samples (count) in all; every share is of all of them\n"
	"\n"
	"process              samples  attributed (query)\n"
	"engine (pid 100)          95          90  94.7%\n"
	"1 other process            5           0   0.0%\n"
	"\n"
	" incl%   excl%     samples  name\n"
	" 80.0%    5.0%          80  query=q17\n"
	" 55.0%    5.0%          55    operator=HashJoin#3\n"
	" 40.0%   40.0%          40      pipeline=2\n"
	" 10.0%   10.0%          10      pipeline=1\n"
	" 20.0%    0.0%          20    operator=Scan#1\n"
	" 20.0%   20.0%          20      pipeline=0\n"
	" 10.0%    0.0%          10  query=q3\n"
	" 10.0%    0.0%          10    operator=<b>&\"x'\\x1b[31m\n"
	" 10.0%   10.0%          10      pipeline=1\n"
	" 10.0%   10.0%          10  (unattributed)\n";

/* The whole text, exactly: the escape character of the hostile value as
 * \x1b, so that it cannot drive a terminal. */
static void test_text(void)
{
	struct plan *p = plan_of(write_profile("t.pb.gz", false, NULL), NULL);
	struct strbuf b = { 0 };

	CHECK(!plan__write_text(p, &(struct plan_opts){ .title = "t<1>",
		.levels_from = "from --levels" }, &b));
	if (strcmp(b.p, want_text))
		fprintf(stderr, "  got:\n%s  want:\n%s", b.p, want_text);
	CHECK(!strcmp(b.p, want_text));
	strbuf__free(&b);
	plan__free(p);
}

/* The page: every node in the tree table and the icicle, label text
 * escaped, nothing that runs or fetches. */
static void test_html(void)
{
	struct plan *p = plan_of(write_profile("t.pb.gz", false, NULL), NULL);
	struct strbuf b = { 0 };

	CHECK(!plan__write_html(p, &(struct plan_opts){ .title = "t<i>",
		.levels_from = "from --levels" }, &b));
	CHECK(strstr(b.p, "<tr data-node=\"1\" data-depth=\"0\" data-level="
		     "\"query\" data-value=\"q17\" data-incl=\"80.00\" "
		     "data-excl=\"5.00\" data-samples=\"80\""));
	CHECK(strstr(b.p, "data-value=\"(unattributed)\" data-incl=\"10.00\""));
	CHECK(strstr(b.p, "&lt;b&gt;&amp;&quot;x&#39;") && !strstr(b.p, "<b>") &&
	      !strstr(b.p, "<i>"));
	CHECK(strstr(b.p, "<title>query=q17 &gt; operator=HashJoin#3 &gt; "
		     "pipeline=2: 40.0% inclusive, 40.0% exclusive, 40 samples"
		     "</title>"));
	/* q17's box: 80% of the 1100 px */
	CHECK(strstr(b.p, "<svg class=\"box\" x=\"0.00\" y=\"0\" width=\"880.00\""));
	CHECK(!strstr(b.p, "<script") && strstr(b.p, "default-src 'none'"));
	strbuf__free(&b);
	plan__free(p);
}

/* A label cut keeps its samples only, and the shares are of those. */
static void test_cut(void)
{
	struct merge_cut cut = { .label_key = "query", .label_val = "q3" };
	struct plan *p = plan_of(write_profile("t.pb.gz", false, NULL), &cut);

	CHECK(plan__total(p) == 10 && p->counts.kept == 1 &&
	      p->counts.samples == NSPECS);
	CHECK(is(p, "q3", 10, 0) && !node_at(p, "q17"));
	plan__free(p);
}

static void test_levels(void)
{
	struct plan_levels a, b;
	struct pprofin in;
	char err[128];

	CHECK(!plan_levels__parse(&a, " query ,operator,\tpipeline", ',',
				  err, sizeof(err)));
	CHECK(a.n == 3 && !strcmp(a.key[0], "query") &&
	      !strcmp(a.key[2], "pipeline"));
	CHECK(plan_levels__parse(&b, "query,,pipeline", ',', err,
				 sizeof(err)) == -EINVAL && strstr(err, "empty"));
	CHECK(plan_levels__parse(&b, "query,pipeline,query", ',', err,
				 sizeof(err)) == -EINVAL && strstr(err, "twice"));
	CHECK(plan_levels__parse(&b, "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q", ',',
				 err, sizeof(err)) == -EINVAL);
	CHECK(plan_levels__parse(&b, "", ',', err, sizeof(err)) == -EINVAL);
	/* the comment the agent writes, outermost first */
	CHECK(!pprofin__load(&in, write_profile("c.pb.gz", false,
		"code levels: query > operator > pipeline"), err, sizeof(err)));
	CHECK(!plan_levels__from_comment(&b, &in, err, sizeof(err)));
	CHECK(plan_levels__equal(&a, &b));
	plan_levels__free(&b);
	pprofin__free(&in);
	CHECK(!pprofin__load(&in, write_profile("c.pb.gz", false,
		"code levels: query > operator"), err, sizeof(err)));
	CHECK(!plan_levels__from_comment(&b, &in, err, sizeof(err)));
	CHECK(b.n == 2 && !plan_levels__equal(&a, &b));
	plan_levels__free(&b);
	pprofin__free(&in);
	CHECK(!pprofin__load(&in, write_profile("c.pb.gz", false, "other"),
			     err, sizeof(err)));
	CHECK(plan_levels__from_comment(&b, &in, err, sizeof(err)) == -ENOENT);
	pprofin__free(&in);
	plan_levels__free(&a);
}

/* A profile without a samples column is counted by its first; a second
 * input without that type is refused. */
static void test_value_type(void)
{
	static const struct pprof_vt heap[1] = { { "alloc_space", "bytes" } };
	struct plan_levels l = qop_levels();
	struct plan *p = plan__new(&l);
	struct pprof *pp = pprof__new(heap, 1, heap[0], 0);
	struct merge_cut none = { 0 };
	struct pprof_label lab = { .key = "query", .str = "q1" };
	struct pprofin in, in2;
	int64_t v = 4096;
	uint64_t fn, loc;
	uint8_t *gz = NULL;
	size_t len = 0;
	char err[256], path[256];
	FILE *f;

	CHECK(p && pp);
	fn = pprof__function(pp, "malloc", NULL, NULL);
	loc = pprof__location(pp, 0, 0x10, &fn, NULL, 1);
	CHECK(!pprof__add_sample(pp, &loc, 1, &v, &lab, 1));
	CHECK(!pprof__encode(pp, &gz, &len));
	snprintf(path, sizeof(path), "%s/heap.pb.gz", dir);
	f = fopen(path, "w");
	CHECK(f && fwrite(gz, 1, len, f) == len && !fclose(f));
	CHECK(!pprofin__load(&in, path, err, sizeof(err)));
	CHECK(!plan__add(p, &in, &none, err, sizeof(err)));
	CHECK(!strcmp(plan__str(p, p->type), "alloc_space") &&
	      plan__total(p) == 4096);
	CHECK(!pprofin__load(&in2, write_profile("t.pb.gz", false, NULL), err,
			     sizeof(err)));
	CHECK(plan__add(p, &in2, &none, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "alloc_space/bytes"));
	pprofin__free(&in);
	pprofin__free(&in2);
	free(gz);
	pprof__free(pp);
	plan__free(p);
	plan_levels__free(&l);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	RUN(test_tree_aggregated);
	RUN(test_tree_per_sample);
	RUN(test_text);
	RUN(test_html);
	RUN(test_cut);
	RUN(test_levels);
	RUN(test_value_type);
	check_remove_dir(dir);
	CHECK_EXIT();
}
