// SPDX-License-Identifier: BSD-2-Clause
/* tagprof report: commands that read profiles. `report pprof` merges
 * pprof files (per-sample ones from record -T, or ordinary ones) into one
 * aggregated pprof, cut to a time window and to label or tag values.
 * `report timeline` shows per-sample ones over time: the Firefox
 * Profiler's format, or one HTML page of lanes. `report plan` shows where
 * the samples went among the components that generated the code (query >
 * operator > pipeline), as a text tree or one HTML page. `report memory`
 * shows memory-access samples (record -e page-faults, mem-loads, ... -T)
 * by data object: heatmaps of time against address, skew and the hot
 * working set. `report sizes` reads the tuples of tagprof sizes again:
 * the growth of each function's cost with its input size, fitted. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/report.h"
#include "out/atomicfile.h"
#include "out/pprof.h"
#include "report/firefox.h"
#include "report/htmlview.h"
#include "report/memory.h"
#include "report/merge.h"
#include "report/plan.h"
#include "report/pprofin.h"
#include "report/timeline.h"
#include "sizes/sizereport.h"
#include "sizes/sizetab.h"
#include "util/gzip.h"
#include "util/strbuf.h"

#define MAX_INPUTS 4096

void report_usage(FILE *out)
{
	fprintf(out,
"usage: tagprof report pprof IN.pb.gz... [CUT] -o OUT.pb.gz\n"
"       tagprof report timeline IN.pb.gz... [CUT] -o OUT.json.gz\n"
"       tagprof report timeline IN.pb.gz... [CUT] --by KEY -o OUT.html\n"
"       tagprof report plan IN.pb.gz... [CUT] [--levels K1,K2,...]\n"
"                           [-o OUT.txt|OUT.html|-]\n"
"       tagprof report memory IN.pb.gz... [CUT] [--bucket SIZE] [--by KEY]\n"
"                             [-o OUT.txt|OUT.html|-]\n"
"       tagprof report sizes IN.csv|IN.json [--html OUT.html]\n"
"                            [--assert EXPR]... [-o OUT.csv|OUT.json]\n"
"\n"
"pprof: merges pprof files into one ordinary (aggregated) pprof: equal\n"
"stacks with equal labels become one sample, the time label t is dropped.\n"
"Several inputs are merged into one, such as an agent's windows of one\n"
"service; they must be the same kind of profile (the same sample types).\n"
"\n"
"timeline: per-sample profiles (record -T, the agent's timeline = true)\n"
"shown over time. OUT.json.gz (or .json) is the Firefox Profiler's\n"
"processed format: open it at https://profiler.firefox.com or\n"
"https://ui.perfetto.dev. Each thread is a track of its samples, and\n"
"each run of a thread's samples with one label or tag value (query_id=q1,\n"
"operator=scan) is an interval marker. OUT.html is one self-contained\n"
"page (no network): CPU over time in one lane per value of KEY, and each\n"
"value's share.\n"
"\n"
"plan: the samples as a tree of the components that generated the code\n"
"they ran, by their labels or tag fields: each sample goes to the path of\n"
"its values of the levels (query=q17 > operator=HashJoin#3 > pipeline=2),\n"
"down to the first level it lacks; without the outermost it is\n"
"(unattributed). Each node: its inclusive and exclusive share of all the\n"
"samples kept, and its samples (the sample type samples, else the first\n"
"type). Then each process's samples and how many have the outermost level.\n"
"The levels come from --levels, else from the inputs' comment\n"
"'code levels: query > operator > pipeline'. Text on standard output (or\n"
"-o OUT.txt), or one self-contained page (-o OUT.html).\n"
"\n"
"memory: memory-access profiles (record -e page-faults, minor-faults,\n"
"major-faults, mem-loads or mem-stores, with -T): the samples' data\n"
"addresses (label addr) grouped into buckets (--bucket), per data object\n"
"(label data_object) and, with --by, per value of KEY in each object.\n"
"First the coverage: samples read, lost (untimed, left out), kept, with\n"
"an address, with a resolved object (not [unmapped]/[unknown]), the\n"
"event, period and ldlat. Then the hot working set over all objects:\n"
"the bytes in buckets with at least k samples, k = 1, 2, 4, ..., and an\n"
"estimate of the accesses (k x the sampling period). Then per object:\n"
"its samples, latency (the sum of the label weight, cycles; n/a without\n"
"it), address range, buckets touched, skew (the share of the samples in\n"
"the top 1%% and 10%% of its buckets), its top 10 buckets, its buckets by\n"
"address and its working set; with --by, each value's share of its\n"
"samples and latency, and the same views per value. The .html page adds\n"
"per object a heatmap of time against address (a sequential scan is a\n"
"rising band), split into panels at wide gaps (16 drawn at most), with a\n"
"histogram of each row's samples. Text on standard output (or -o\n"
"OUT.txt), or one self-contained page (-o OUT.html). A profile without\n"
"addresses (not -T, or not a memory event) is refused (exit 2) with its\n"
"samples per data object.\n"
"\n"
"sizes: the tuples of tagprof sizes (its -o file, .csv or .json) read\n"
"again. Per function, its mean cost per call against its input size is\n"
"fitted to 1, log n, n, n log n, n^2, n^3 and a power law, the model\n"
"chosen by AIC (docs/sizes.md). On standard output: one line on how the\n"
"costs were measured, then one line per function, the fastest growth\n"
"first: function, order (its growth class), class (the model chosen),\n"
"fit, dAIC to the best model of another growth, that model, confidence\n"
"(the share of bootstrap resamples that give the same order), sizes,\n"
"range, calls. A function with fewer than 8 sizes, or sizes spanning less\n"
"than a decade, is not classified, and a line under it says why.\n"
"--html writes one self-contained page with a log-log plot per function;\n"
"-o writes the tuples again, CSV or JSON by the name. Each --assert\n"
"'FUNC<=CLASS' (or 'FUNC<CLASS') fails when FUNC grows faster than CLASS\n"
"(1, log n, n, n log n, n^2, n^3, spaces and '_' optional), or was not\n"
"measured or not classified; every assertion is said on standard error.\n"
"\n"
"CUT:\n"
"  --from T, --to T      keep the samples taken from T to T (both included),\n"
"                        counted from the earliest input's start; T is a\n"
"                        number with a unit: 2s, 1.5s, 250ms, 100us, 10ns,\n"
"                        1m (no unit: seconds). Needs per-sample inputs\n"
"  --label KEY=VALUE     keep the samples with this label\n"
"  --tag FIELD=NAME      keep the samples whose register tag field FIELD is\n"
"                        NAME (a name, or the number where it has none)\n"
"\n"
"  --by KEY              timeline .html: the label or tag field whose values\n"
"                        make the lanes (query_id, operator, ...); memory:\n"
"                        whose values split each object's samples\n"
"  --bucket SIZE         memory: the bucket addresses are grouped by: a\n"
"                        power of two from 8 B to 1 GiB, in bytes or with\n"
"                        K, M, G (KiB, MiB, GiB): 64, 4K, 2M (default 4K)\n"
"  --levels K1,K2,...    plan: the levels, outermost first (query,operator,\n"
"                        pipeline); overrides the inputs' comment\n"
"  --html FILE           sizes: the page to write (.html)\n"
"  --assert EXPR         sizes: FUNC<=CLASS or FUNC<CLASS, e.g.\n"
"                        'my_sort<=n log n'; may be given again\n"
"  -o, --output FILE     the file to write (mode 0640, written whole); plan\n"
"                        and memory: - (the default) for standard output;\n"
"                        sizes: the tuples, .csv or .json (no default)\n"
"  -h, --help            this help\n"
"\n"
"Exit status: 0, 1 when no sample was kept (memory: no sample with an\n"
"address; an empty but valid file is written; sizes: when an --assert\n"
"fails), 2 for bad usage or an input that cannot be read (memory: or\n"
"that has no addresses; sizes: or a malformed --assert, or an output that\n"
"cannot be written).\n");
}

/* "1.5s" -> 1500000000; false if not a duration. */
static bool parse_time(const char *s, int64_t *ns)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "m", 60e9 }, { "h", 3600e9 }, { "", 1e9 },
	};
	char *end;
	double v;

	if (!s || !*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return false;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			v *= units[i].ns;
			if (v > 9.2e18)
				return false;
			*ns = (int64_t)v;
			return true;
		}
	return false;
}

/* KEY=VALUE into its halves (pointing into s, which is changed). */
static bool split_pair(char *s, const char **key, const char **val)
{
	char *eq = strchr(s, '=');

	if (!eq || eq == s || !eq[1])
		return false;
	*eq = '\0';
	*key = s;
	*val = eq + 1;
	return true;
}

struct report_args {
	const char *cmd;	/* "tagprof report pprof", ... */
	const char *output;
	const char *by;
	const char *levels;	/* report plan's --levels */
	const char *bucket;	/* report memory's --bucket */
	bool timeline;		/* report timeline: inputs need times */
	bool plan;		/* report plan: --levels is for it */
	bool memory;		/* report memory: --by, --bucket are for it */
	const char *from, *to;
	struct merge_cut cut;
	char **inputs;
	int ninputs;
};

static int parse_args(int argc, char **argv, struct report_args *a)
{
	static const struct option longopts[] = {
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "label", required_argument, NULL, 'L' },
		{ "tag", required_argument, NULL, 'g' },
		{ "by", required_argument, NULL, 'b' },
		{ "levels", required_argument, NULL, 'l' },
		{ "bucket", required_argument, NULL, 'B' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			a->from = optarg;
			break;
		case 't':
			a->to = optarg;
			break;
		case 'L':
		case 'g':
			if (!split_pair(optarg, c == 'L' ? &a->cut.label_key :
							   &a->cut.tag_key,
					c == 'L' ? &a->cut.label_val :
						   &a->cut.tag_val)) {
				fprintf(stderr, "%s: %s\n", a->cmd, c == 'L' ?
					"--label wants KEY=VALUE" :
					"--tag wants FIELD=NAME");
				return 2;
			}
			break;
		case 'b':
			a->by = optarg;
			break;
		case 'l':
			a->levels = optarg;
			break;
		case 'B':
			a->bucket = optarg;
			break;
		case 'o':
			a->output = optarg;
			break;
		case 'h':
			report_usage(stdout);
			exit(0);
		default:
			report_usage(stderr);
			return 2;
		}
	}
	a->inputs = argv + optind;
	a->ninputs = argc - optind;
	if (a->by && !a->timeline && !a->memory) {
		fprintf(stderr, "%s: --by is for report timeline's .html and "
			"report memory\n", a->cmd);
		return 2;
	}
	if (a->bucket && !a->memory) {
		fprintf(stderr, "%s: --bucket is for report memory\n", a->cmd);
		return 2;
	}
	if (a->levels && !a->plan) {
		fprintf(stderr, "%s: --levels is for report plan\n", a->cmd);
		return 2;
	}
	if (!a->ninputs || !a->output) {
		fprintf(stderr, "%s: %s\n", a->cmd, !a->ninputs ?
			"no input profile given" : "no output given (-o FILE)");
		return 2;
	}
	if (a->ninputs > MAX_INPUTS) {
		fprintf(stderr, "%s: more than %d inputs\n", a->cmd,
			MAX_INPUTS);
		return 2;
	}
	return 0;
}

/* The window, counted from base; false (reported) if it is not one. */
static bool set_window(struct report_args *a, int64_t base)
{
	int64_t from = 0, to = INT64_MAX - base;

	bool bad_from = a->from && !parse_time(a->from, &from);

	if (!a->from && !a->to)
		return true;
	if (bad_from || (a->to && !parse_time(a->to, &to))) {
		fprintf(stderr, "%s: --%s %s is not a time "
			"(use e.g. 2s, 1.5s, 250ms)\n", a->cmd,
			bad_from ? "from" : "to",
			bad_from ? a->from : a->to);
		return false;
	}
	if (from > to) {
		fprintf(stderr, "%s: --from %s is after --to %s\n", a->cmd,
			a->from, a->to);
		return false;
	}
	a->cut.window = true;
	a->cut.from_ns = base + from;
	a->cut.to_ns = to > INT64_MAX - base ? INT64_MAX : base + to;
	return true;
}

/* Loads every input, sets the window from the earliest one's start, and
 * refuses inputs without sample times where the window or a timeline
 * needs them (an empty input makes an empty timeline): 0, or 2 (said).
 * *base: that start. */
static int load_inputs(struct report_args *a, struct pprofin *in,
		       int64_t *base)
{
	char err[512];

	*base = INT64_MAX;
	for (int i = 0; i < a->ninputs; i++) {
		if (pprofin__load(&in[i], a->inputs[i], err, sizeof(err))) {
			fprintf(stderr, "%s: %s\n", a->cmd, err);
			return 2;
		}
		if (in[i].pr->time_nanos < *base)
			*base = in[i].pr->time_nanos;
	}
	if (!set_window(a, *base))
		return 2;
	for (int i = 0; i < a->ninputs; i++) {
		const char *need = a->cut.window ?
			"--from/--to need a per-sample profile (tagprof record -T)" :
			a->timeline && in[i].pr->n_sample ?
			"a timeline needs a per-sample profile (tagprof record "
			"-T, or the agent's timeline = true)" : NULL;

		if (need && !pprofin__has_times(&in[i])) {
			fprintf(stderr, "%s: %s has no sample times (the label "
				"t): %s\n", a->cmd, a->inputs[i], need);
			return 2;
		}
	}
	return 0;
}

static void free_inputs(struct pprofin *in, int n)
{
	for (int i = 0; in && i < n; i++)
		pprofin__free(&in[i]);
	free(in);
}

/* data written to path, or said why not. */
static int write_file(const struct report_args *a, const void *data,
		      size_t len)
{
	int ret = atomicfile__write(a->output, data, len, 0640);

	if (ret)
		fprintf(stderr, "%s: cannot write %s: %s\n", a->cmd, a->output,
			strerror(-ret));
	return ret;
}

/* What was kept, and 1 if nothing was. */
static int say_kept(const struct report_args *a, const struct merge_counts *n,
		    const char *what)
{
	fprintf(stderr, "%s: %" PRIu64 " of %" PRIu64 " samples kept from %d "
		"file%s, %s; wrote %s\n", a->cmd, n->kept, n->samples,
		a->ninputs, a->ninputs == 1 ? "" : "s", what,
		strcmp(a->output, "-") ? a->output : "standard output");
	if (n->untimed)
		fprintf(stderr, "%s: %" PRIu64 " samples without a time left "
			"out (lost ones: their time is not known)\n", a->cmd,
			n->untimed);
	if (n->kept)
		return 0;
	fprintf(stderr, "%s: no sample was kept%s\n", a->cmd, a->cut.window ?
		": is the window inside the profiles?" : "");
	return 1;
}

static int report_pprof(int argc, char **argv)
{
	struct report_args a = { .cmd = "tagprof report pprof" };
	struct pprofin *in = NULL;
	struct merge *m = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;
	int64_t base;
	char err[512], what[64];
	int ret = parse_args(argc, argv, &a), i;

	if (ret)
		return ret;
	ret = 2;
	in = calloc((size_t)a.ninputs, sizeof(*in));
	if (!in || load_inputs(&a, in, &base))
		goto out;
	m = merge__new(&a.cut);
	if (!m)
		goto out;
	for (i = 0; i < a.ninputs; i++)
		if (merge__add(m, &in[i], err, sizeof(err))) {
			fprintf(stderr, "%s: %s: %s\n", a.cmd, a.inputs[i], err);
			goto out;
		}
	if (pprof__encode(merge__pprof(m), &buf, &len)) {
		fprintf(stderr, "%s: out of memory\n", a.cmd);
		goto out;
	}
	if (write_file(&a, buf, len))
		goto out;
	snprintf(what, sizeof(what), "%zu stacks",
		 pprof__sample_count(merge__pprof(m)));
	ret = say_kept(&a, merge__counts(m), what);
out:
	free(buf);
	free_inputs(in, a.ninputs);
	merge__free(m);
	return ret;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n > t && !strcmp(s + n - t, tail);
}

/* The label keys the timeline's samples carry, for an error message. */
static void say_keys(const struct report_args *a, const struct timeline *tl)
{
	bool *seen = calloc(tl->nstr ? tl->nstr : 1, sizeof(*seen));
	size_t n = 0;

	if (!seen)
		return;
	for (size_t i = 0; i < tl->npairs; i++)
		seen[tl->pairs[i].key] = true;
	fprintf(stderr, "%s: the samples' labels and tag fields:", a->cmd);
	for (size_t i = 0; i < tl->nstr; i++)
		if (seen[i])
			fprintf(stderr, "%s %s", n++ ? "," : "",
				timeline__str(tl, (uint32_t)i));
	fprintf(stderr, "%s\n", n ? "" : " none");
	free(seen);
}

/* tl as the file a asks for, into b; *what: for the summary line. 0, or
 * 2 (said). */
static int render(const struct report_args *a, const struct timeline *tl,
		  struct strbuf *b, char *what, size_t whatlen)
{
	struct firefox_counts fc;
	size_t lanes;
	int err;

	if (ends_with(a->output, ".html") || ends_with(a->output, ".htm")) {
		err = htmlview__write(tl, &(struct htmlview_opts){
			.by = a->by, .title = a->inputs[0] }, b, &lanes);
		if (err == -ENOENT) {
			fprintf(stderr, "%s: no sample has the label or tag "
				"field '%s'\n", a->cmd, a->by);
			say_keys(a, tl);
			return 2;
		}
		snprintf(what, whatlen, "%zu lanes by %s", lanes, a->by);
	} else {
		err = firefox__write(tl, b, &fc);
		snprintf(what, whatlen, "%zu threads, %zu markers", fc.threads,
			 fc.markers);
	}
	if (err) {
		fprintf(stderr, "%s: %s\n", a->cmd, strerror(-err));
		return 2;
	}
	return 0;
}

/* b written to the output, gzipped where its name ends in .gz. */
static int write_rendered(const struct report_args *a, const struct strbuf *b)
{
	uint8_t *gz = NULL;
	size_t len = 0;
	int ret;

	if (!ends_with(a->output, ".gz"))
		return write_file(a, b->p, b->len);
	if (gzip__compress((const uint8_t *)b->p, b->len, &gz, &len)) {
		fprintf(stderr, "%s: out of memory\n", a->cmd);
		return -ENOMEM;
	}
	ret = write_file(a, gz, len);
	free(gz);
	return ret;
}

/* The output's kind from its name; false (said) if it has none. */
static bool output_kind_ok(const struct report_args *a)
{
	bool html = ends_with(a->output, ".html") || ends_with(a->output, ".htm");

	if (!html && !ends_with(a->output, ".json") &&
	    !ends_with(a->output, ".json.gz")) {
		fprintf(stderr, "%s: -o %s: name the output .json.gz or .json "
			"(Firefox Profiler), or .html\n", a->cmd, a->output);
		return false;
	}
	if (html && !a->by) {
		fprintf(stderr, "%s: an .html timeline needs --by KEY, the "
			"label or tag field whose values make the lanes (e.g. "
			"--by operator, --by query_id)\n", a->cmd);
		return false;
	}
	return true;
}

static int report_timeline(int argc, char **argv)
{
	struct report_args a = { .cmd = "tagprof report timeline",
				 .timeline = true };
	struct pprofin *in = NULL;
	struct timeline *tl = NULL;
	struct strbuf b = { 0 };
	int64_t base;
	char err[512], what[96];
	int ret = parse_args(argc, argv, &a), i;

	if (ret)
		return ret;
	ret = 2;
	if (!output_kind_ok(&a))
		return 2;
	in = calloc((size_t)a.ninputs, sizeof(*in));
	tl = timeline__new();
	if (!in || !tl || load_inputs(&a, in, &base))
		goto out;
	timeline__set_start(tl, base);
	for (i = 0; i < a.ninputs; i++)
		if (timeline__add(tl, &in[i], &a.cut, err, sizeof(err))) {
			fprintf(stderr, "%s: %s: %s\n", a.cmd, a.inputs[i], err);
			goto out;
		}
	timeline__sort(tl);
	if (render(&a, tl, &b, what, sizeof(what)) || write_rendered(&a, &b))
		goto out;
	ret = say_kept(&a, &tl->counts, what);
out:
	strbuf__free(&b);
	timeline__free(tl);
	free_inputs(in, a.ninputs);
	return ret;
}

/* l as "A > B > C" for a message, into buf. */
static const char *levels_text(const struct plan_levels *l, char *buf,
			       size_t len)
{
	struct strbuf b = { 0 };

	plan_levels__print(l, &b);
	snprintf(buf, len, "%s", b.err || !b.p ? "?" : b.p);
	strbuf__free(&b);
	return buf;
}

/* The levels from --levels, else from the first input whose comment names
 * them; another input that names others is said and left. *from: which,
 * for the output. false (said) when there are none or they are bad. */
static bool choose_levels(const struct report_args *a,
			  const struct pprofin *in, struct plan_levels *l,
			  const char **from)
{
	struct plan_levels other;
	char err[160], t1[256], t2[256];
	int first = -1, ret;

	if (a->levels) {
		*from = "from --levels";
		if (!plan_levels__parse(l, a->levels, ',', err, sizeof(err)))
			return true;
		fprintf(stderr, "%s: --levels %s: %s\n", a->cmd, a->levels, err);
		return false;
	}
	*from = a->ninputs == 1 ? "from the profile's comment" :
				  "from the profiles' comments";
	for (int i = 0; i < a->ninputs; i++) {
		ret = plan_levels__from_comment(first < 0 ? l : &other, &in[i],
						err, sizeof(err));
		if (ret == -ENOENT)
			continue;
		if (ret) {
			fprintf(stderr, "%s: %s: its comment '%s' is bad: %s "
				"(pass --levels)\n", a->cmd, a->inputs[i],
				PLAN_LEVELS_COMMENT, err);
			plan_levels__free(l);
			return false;
		}
		if (first < 0) {
			first = i;
			continue;
		}
		if (!plan_levels__equal(l, &other))
			fprintf(stderr, "%s: %s names the levels %s, %s names "
				"%s: using the first's (pass --levels to "
				"choose)\n", a->cmd, a->inputs[first],
				levels_text(l, t1, sizeof(t1)), a->inputs[i],
				levels_text(&other, t2, sizeof(t2)));
		plan_levels__free(&other);
	}
	if (first >= 0)
		return true;
	fprintf(stderr, "%s: no levels: %s no comment '%s A > B > C'; pass "
		"--levels, outermost first, e.g. --levels "
		"query,operator,pipeline\n", a->cmd, a->ninputs == 1 ?
		"the profile has" : "no profile has", PLAN_LEVELS_COMMENT);
	return false;
}

/* The output's kind from its name: .html, else text (.txt or -); false
 * (said) for another name. */
static bool plan_output_ok(const struct report_args *a, bool *html)
{
	*html = ends_with(a->output, ".html") || ends_with(a->output, ".htm");
	if (*html || !strcmp(a->output, "-") || ends_with(a->output, ".txt"))
		return true;
	fprintf(stderr, "%s: -o %s: name the output .txt or .html, or - for "
		"standard output\n", a->cmd, a->output);
	return false;
}

/* b to standard output (-) or written whole to the file. */
static int write_plan(const struct report_args *a, const struct strbuf *b)
{
	if (strcmp(a->output, "-"))
		return write_file(a, b->p, b->len);
	if (fwrite(b->p, 1, b->len, stdout) != b->len || fflush(stdout)) {
		fprintf(stderr, "%s: cannot write standard output: %s\n",
			a->cmd, strerror(errno));
		return -EIO;
	}
	return 0;
}

static int report_plan(int argc, char **argv)
{
	struct report_args a = { .cmd = "tagprof report plan", .output = "-",
				 .plan = true };
	struct plan_levels levels = { 0 };
	struct pprofin *in = NULL;
	struct plan *p = NULL;
	struct strbuf b = { 0 };
	const char *from;
	int64_t base;
	char err[512], title[512], what[64];
	bool html;
	int ret = parse_args(argc, argv, &a), i;

	if (ret)
		return ret;
	if (!plan_output_ok(&a, &html))
		return 2;
	ret = 2;
	in = calloc((size_t)a.ninputs, sizeof(*in));
	if (!in || load_inputs(&a, in, &base) ||
	    !choose_levels(&a, in, &levels, &from))
		goto out;
	p = plan__new(&levels);
	if (!p) {
		fprintf(stderr, "%s: out of memory\n", a.cmd);
		goto out;
	}
	for (i = 0; i < a.ninputs; i++)
		if (plan__add(p, &in[i], &a.cut, err, sizeof(err))) {
			fprintf(stderr, "%s: %s: %s\n", a.cmd, a.inputs[i], err);
			goto out;
		}
	if (a.ninputs > 1)
		snprintf(title, sizeof(title), "%s and %d more", a.inputs[0],
			 a.ninputs - 1);
	else
		snprintf(title, sizeof(title), "%s", a.inputs[0]);
	if (plan__sort(p) ||
	    (html ? plan__write_html : plan__write_text)(p, &(struct plan_opts){
		    .title = title, .levels_from = from }, &b)) {
		fprintf(stderr, "%s: out of memory\n", a.cmd);
		goto out;
	}
	if (write_plan(&a, &b))
		goto out;
	snprintf(what, sizeof(what), "%zu component%s", p->nnodes - 1,
		 p->nnodes == 2 ? "" : "s");
	ret = say_kept(&a, &p->counts, what);
out:
	strbuf__free(&b);
	plan__free(p);
	plan_levels__free(&levels);
	free_inputs(in, a.ninputs);
	return ret;
}

/* The cut as given ("--from 1s --label query=q1"), into b; nothing
 * without one. */
static void cut_text(const struct report_args *a, struct strbuf *b)
{
	const struct merge_cut *c = &a->cut;

	if (a->from)
		strbuf__printf(b, " --from %s", a->from);
	if (a->to)
		strbuf__printf(b, " --to %s", a->to);
	if (c->label_key)
		strbuf__printf(b, " --label %s=%s", c->label_key, c->label_val);
	if (c->tag_key)
		strbuf__printf(b, " --tag %s=%s", c->tag_key, c->tag_val);
}

/* --bucket's size, or the default; false (said) for a bad one. */
static bool bucket_ok(const struct report_args *a, uint64_t *size)
{
	char err[128];

	*size = MEM_BUCKET_DEFAULT;
	if (!a->bucket || !mem_bucket__parse(a->bucket, size, err,
					     sizeof(err)))
		return true;
	fprintf(stderr, "%s: --bucket %s: %s\n", a->cmd, a->bucket, err);
	return false;
}

/* No input has an address: what the samples are, per data object, and
 * how to record addresses. 2. */
static int say_no_addr(const struct report_args *a, const struct memrep *m)
{
	struct strbuf b = { 0 };

	if (a->ninputs == 1)
		fprintf(stderr, "%s: %s has no samples with an addr label",
			a->cmd, a->inputs[0]);
	else
		fprintf(stderr, "%s: none of the %d inputs has samples with an "
			"addr label", a->cmd, a->ninputs);
	fprintf(stderr, ": record with -e page-faults (or mem-loads, "
		"mem-stores) and -T\n");
	if (!m->nnoaddr || memrep__write_noaddr(m, 20, &b) || !b.p)
		goto out;
	fprintf(stderr, "%s: all it gives is the samples per data object "
		"(kept by the cut):\n%s", a->cmd, b.p);
out:
	strbuf__free(&b);
	return 2;
}

/* The samples of every input into m: 0, or 2 (said). */
static int read_memory(const struct report_args *a, struct memrep *m,
		       const struct pprofin *in, int64_t base)
{
	char err[512];
	bool has_addr;

	for (int i = 0; i < a->ninputs; i++) {
		if (memrep__add(m, &in[i], &a->cut, base, &has_addr, err,
				sizeof(err))) {
			fprintf(stderr, "%s: %s: %s\n", a->cmd, a->inputs[i],
				err);
			return 2;
		}
		if (!has_addr && a->ninputs > 1)
			fprintf(stderr, "%s: %s has no samples with an addr "
				"label: it counts in the coverage only\n",
				a->cmd, a->inputs[i]);
	}
	if (!m->cov.files_addr)
		return say_no_addr(a, m);
	if (a->by && m->cov.addr && !m->cov.with_by) {
		fprintf(stderr, "%s: no sample with an address has the label "
			"or tag field '%s'\n", a->cmd, a->by);
		return 2;
	}
	if (memrep__finish(m)) {
		fprintf(stderr, "%s: out of memory\n", a->cmd);
		return 2;
	}
	return 0;
}

/* m as a page or as text into b, titled by the inputs, with the cut: 0,
 * or 2 (said). */
static int render_memory(const struct report_args *a, const struct memrep *m,
			 bool html, struct strbuf *b)
{
	struct strbuf cut = { 0 };
	char title[512];
	int err;

	if (a->ninputs > 1)
		snprintf(title, sizeof(title), "%s and %d more", a->inputs[0],
			 a->ninputs - 1);
	else
		snprintf(title, sizeof(title), "%s", a->inputs[0]);
	cut_text(a, &cut);
	err = cut.err ? cut.err :
	      (html ? memrep__write_html : memrep__write_text)(m,
			&(struct memrep_out){ .title = title,
					      .cut = cut.p ? cut.p + 1 : NULL },
			b);
	strbuf__free(&cut);
	if (!err)
		return 0;
	fprintf(stderr, "%s: out of memory\n", a->cmd);
	return 2;
}

/* What was kept and left out; 1 if no sample with an address was. */
static int say_memory_kept(const struct report_args *a, const struct memrep *m)
{
	char what[96];
	int ret;

	snprintf(what, sizeof(what), "%" PRIu64 " with an address, %zu data "
		 "object%s", m->cov.addr, m->nobjs, m->nobjs == 1 ? "" : "s");
	ret = say_kept(a, &m->counts, what);
	if (m->cov.lost)
		fprintf(stderr, "%s: %" PRIu64 " lost samples (untimed) left "
			"out\n", a->cmd, m->cov.lost);
	if (ret || m->cov.addr)
		return ret;
	fprintf(stderr, "%s: no sample with an address was kept\n", a->cmd);
	return 1;
}

static int report_memory(int argc, char **argv)
{
	struct report_args a = { .cmd = "tagprof report memory", .output = "-",
				 .memory = true };
	struct pprofin *in = NULL;
	struct memrep *m = NULL;
	struct strbuf b = { 0 };
	uint64_t bucket;
	int64_t base;
	bool html;
	int ret = parse_args(argc, argv, &a);

	if (ret)
		return ret;
	if (!plan_output_ok(&a, &html) || !bucket_ok(&a, &bucket))
		return 2;
	ret = 2;
	in = calloc((size_t)a.ninputs, sizeof(*in));
	m = memrep__new(&(struct memrep_opts){ .bucket = bucket, .by = a.by });
	if (!in || !m || load_inputs(&a, in, &base) ||
	    read_memory(&a, m, in, base) || render_memory(&a, m, html, &b) ||
	    write_plan(&a, &b))
		goto out;
	ret = say_memory_kept(&a, m);
out:
	strbuf__free(&b);
	memrep__free(m);
	free_inputs(in, a.ninputs);
	return ret;
}

struct sizes_args {
	const char *cmd;
	const char *input, *output, *html;
	const char **asserts;
	size_t nasserts;
};

/* report sizes' options: 0, or 2 (said). a->asserts is the caller's to
 * free. */
static int parse_sizes_args(int argc, char **argv, struct sizes_args *a)
{
	static const struct option longopts[] = {
		{ "html", required_argument, NULL, 'H' },
		{ "assert", required_argument, NULL, 'A' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char err[256];
	int c;

	a->asserts = calloc((size_t)argc, sizeof(*a->asserts));
	if (!a->asserts)
		return 2;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'H':
			a->html = optarg;
			break;
		case 'A':
			if (sizereport__check_assert(optarg, err, sizeof(err))) {
				fprintf(stderr, "%s: --assert '%s': %s\n",
					a->cmd, optarg, err);
				return 2;
			}
			a->asserts[a->nasserts++] = optarg;
			break;
		case 'o':
			a->output = optarg;
			break;
		case 'h':
			report_usage(stdout);
			exit(0);
		default:
			report_usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "%s: %s\n", a->cmd, argc == optind ?
			"no input given (a tagprof sizes .csv or .json)" :
			"one input only");
		return 2;
	}
	a->input = argv[optind];
	if (a->output && !ends_with(a->output, ".csv") &&
	    !ends_with(a->output, ".json")) {
		fprintf(stderr, "%s: -o %s: name the output .csv or .json\n",
			a->cmd, a->output);
		return 2;
	}
	if (a->html && !ends_with(a->html, ".html") &&
	    !ends_with(a->html, ".htm")) {
		fprintf(stderr, "%s: --html %s: name the page .html\n", a->cmd,
			a->html);
		return 2;
	}
	return 0;
}

/* What was read and written, on standard error. */
static void say_sizes(const struct sizes_args *a, const struct sizetab *t)
{
	size_t tuples = 0;

	for (size_t i = 0; i < t->nfuncs; i++)
		tuples += t->funcs[i].n;
	fprintf(stderr, "%s: %zu function%s, %zu tuples from %s", a->cmd,
		t->nfuncs, t->nfuncs == 1 ? "" : "s", tuples, a->input);
	if (a->output)
		fprintf(stderr, "; wrote %s", a->output);
	if (a->html)
		fprintf(stderr, "%s %s", a->output ? " and" : "; wrote",
			a->html);
	fprintf(stderr, "\n");
}

static int report_sizes(int argc, char **argv)
{
	struct sizes_args a = { .cmd = "tagprof report sizes" };
	struct sizetab t = { 0 };
	char err[512];
	int ret = parse_sizes_args(argc, argv, &a);

	if (ret)
		goto out;
	ret = 2;
	if (sizetab__read(&t, a.input, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", a.cmd, err);
		goto out;
	}
	if (a.output && sizetab__save(&t, a.output, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", a.cmd, err);
		goto out;
	}
	ret = sizereport__run(&t, &(struct sizereport_opts){
			.html_path = a.html, .asserts = a.asserts,
			.nasserts = a.nasserts, .text = stdout,
			.title = a.input, .prog = a.cmd }, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "%s: %s\n", a.cmd, err);
		ret = 2;
		goto out;
	}
	say_sizes(&a, &t);
out:
	sizetab__free(&t);
	free(a.asserts);
	return ret;
}

int report_main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		report_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "pprof"))
		return report_pprof(argc - 1, argv + 1);
	if (!strcmp(argv[1], "timeline"))
		return report_timeline(argc - 1, argv + 1);
	if (!strcmp(argv[1], "plan"))
		return report_plan(argc - 1, argv + 1);
	if (!strcmp(argv[1], "memory"))
		return report_memory(argc - 1, argv + 1);
	if (!strcmp(argv[1], "sizes"))
		return report_sizes(argc - 1, argv + 1);
	fprintf(stderr, "tagprof report: unknown report '%s'\n", argv[1]);
	report_usage(stderr);
	return 2;
}
