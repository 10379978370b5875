// SPDX-License-Identifier: BSD-2-Clause
/* tagprof report: commands that read profiles. `report pprof` merges
 * pprof files (per-sample ones from record -T, or ordinary ones) into one
 * aggregated pprof, cut to a time window and to label or tag values. */
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
#include "report/merge.h"
#include "report/pprofin.h"

#define MAX_INPUTS 4096

void report_usage(FILE *out)
{
	fprintf(out,
"usage: tagprof report pprof IN.pb.gz... [--from T] [--to T]\n"
"                            [--label KEY=VALUE] [--tag FIELD=NAME] -o OUT\n"
"\n"
"Merges pprof files into one ordinary (aggregated) pprof: equal stacks with\n"
"equal labels become one sample, the time label t is dropped. Several\n"
"inputs are merged into one, such as an agent's windows of one service;\n"
"they must be the same kind of profile (the same sample types).\n"
"\n"
"  --from T, --to T      keep the samples taken from T to T (both included),\n"
"                        counted from the earliest input's start; T is a\n"
"                        number with a unit: 2s, 1.5s, 250ms, 100us, 10ns,\n"
"                        1m (no unit: seconds). Needs per-sample inputs\n"
"                        (record -T, or the agent's timeline = true)\n"
"  --label KEY=VALUE     keep the samples with this label\n"
"  --tag FIELD=NAME      keep the samples whose register tag field FIELD is\n"
"                        NAME (a name, or the number where it has none)\n"
"  -o, --output FILE     the pprof to write (mode 0640, written whole)\n"
"  -h, --help            this help\n"
"\n"
"Exit status: 0, 1 when no sample was kept (an empty profile is written),\n"
"2 for bad usage or an input that cannot be read.\n");
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
	const char *output;
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
				fprintf(stderr, "tagprof report: %s\n", c == 'L' ?
					"--label wants KEY=VALUE" :
					"--tag wants FIELD=NAME");
				return 2;
			}
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
	if (!a->ninputs || !a->output) {
		fprintf(stderr, "tagprof report pprof: %s\n", !a->ninputs ?
			"no input profile given" : "no output given (-o FILE)");
		return 2;
	}
	if (a->ninputs > MAX_INPUTS) {
		fprintf(stderr, "tagprof report pprof: more than %d inputs\n",
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
		fprintf(stderr, "tagprof report pprof: --%s %s is not a time "
			"(use e.g. 2s, 1.5s, 250ms)\n", bad_from ? "from" : "to",
			bad_from ? a->from : a->to);
		return false;
	}
	if (from > to) {
		fprintf(stderr, "tagprof report pprof: --from %s is after "
			"--to %s\n", a->from, a->to);
		return false;
	}
	a->cut.window = true;
	a->cut.from_ns = base + from;
	a->cut.to_ns = to > INT64_MAX - base ? INT64_MAX : base + to;
	return true;
}

/* Whether any sample of in has a time. */
static bool has_times(const struct pprofin *in)
{
	int64_t t;

	for (size_t i = 0; i < in->pr->n_sample; i++)
		if (!pprofin__sample_time(in, in->pr->sample[i], &t))
			return true;
	return false;
}

static int write_out(struct merge *m, const char *path)
{
	struct pprof *pp = merge__pprof(m);
	uint8_t *buf = NULL;
	size_t len = 0;
	int ret = pprof__encode(pp, &buf, &len);

	if (!ret)
		ret = atomicfile__write(path, buf, len, 0640);
	free(buf);
	if (ret)
		fprintf(stderr, "tagprof report pprof: cannot write %s: %s\n",
			path, strerror(-ret));
	return ret;
}

static int report_pprof(int argc, char **argv)
{
	struct report_args a = { 0 };
	struct pprofin *in = NULL;
	const struct merge_counts *n;
	struct merge *m = NULL;
	int64_t base = INT64_MAX;
	char err[512];
	int ret = parse_args(argc, argv, &a), i;

	if (ret)
		return ret;
	ret = 2;
	in = calloc((size_t)a.ninputs, sizeof(*in));
	if (!in)
		goto out;
	for (i = 0; i < a.ninputs; i++) {
		if (pprofin__load(&in[i], a.inputs[i], err, sizeof(err))) {
			fprintf(stderr, "tagprof report pprof: %s\n", err);
			goto out;
		}
		if (in[i].pr->time_nanos < base)
			base = in[i].pr->time_nanos;
	}
	if (!set_window(&a, base))
		goto out;
	for (i = 0; a.cut.window && i < a.ninputs; i++)
		if (!has_times(&in[i])) {
			fprintf(stderr, "tagprof report pprof: %s has no sample "
				"times (the label t): --from/--to need a "
				"per-sample profile (tagprof record -T)\n",
				a.inputs[i]);
			goto out;
		}
	m = merge__new(&a.cut);
	if (!m)
		goto out;
	for (i = 0; i < a.ninputs; i++)
		if (merge__add(m, &in[i], err, sizeof(err))) {
			fprintf(stderr, "tagprof report pprof: %s: %s\n",
				a.inputs[i], err);
			goto out;
		}
	if (write_out(m, a.output))
		goto out;
	n = merge__counts(m);
	fprintf(stderr, "tagprof report pprof: %" PRIu64 " of %" PRIu64
		" samples kept from %d file%s, %zu stacks; wrote %s\n",
		n->kept, n->samples, a.ninputs, a.ninputs == 1 ? "" : "s",
		pprof__sample_count(merge__pprof(m)), a.output);
	if (n->untimed)
		fprintf(stderr, "tagprof report pprof: %" PRIu64 " samples "
			"without a time left out of the window (lost ones: "
			"their time is not known)\n", n->untimed);
	ret = 0;
	if (!n->kept) {
		fprintf(stderr, "tagprof report pprof: no sample was kept%s\n",
			a.cut.window ? ": is the window inside the profiles?" : "");
		ret = 1;
	}
out:
	for (i = 0; in && i < a.ninputs; i++)
		pprofin__free(&in[i]);
	free(in);
	merge__free(m);
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
	fprintf(stderr, "tagprof report: unknown report '%s'\n", argv[1]);
	report_usage(stderr);
	return 2;
}
