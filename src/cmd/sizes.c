/* tagprof sizes: input-sensitive profiles (issue 17). Each call of the
 * probed functions is measured from entry to return and kept per (function,
 * input size); at the end the tuples are written and each function's cost
 * is fitted against its size (src/sizes/fit.c), as aprof does, but with
 * uprobes on a running process instead of instrumenting every instruction. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "capture/proccfg.h"
#include "cmd/args.h"
#include "cmd/child.h"
#include "cmd/signals.h"
#include "cmd/sizes.h"
#include "out/atomicfile.h"
#include "proc/ctxwatch.h"
#include "sample_event.h"
#include "sizes/funcsym.h"
#include "sizes/probe.h"
#include "sizes/sizereport.h"
#include "sizes/sizespec.h"
#include "sizes/sizetab.h"
#include "util/clock.h"

#define DEFAULT_SIZE "arg1"
#define TICK_MS 100

struct func_arg {
	const char *spec;		/* --func as given */
	const char *size;		/* --size, or NULL: the default */
	char name[256];			/* SYMBOL */
	struct funcsym sym;
	struct sizespec sz;
};

struct sizes_opts {
	pid_t pid;
	char **command;
	double duration;		/* 0: until the process ends */
	const char *out;
	const char *html;
	uint64_t max_rate;		/* calls/s; 0: no guard */
	const char *cost;		/* NULL: ns */
	bool no_session;
	const char *default_size;
	const char *asserts[64];
	size_t nasserts;
	struct func_arg funcs[TP_SZ_MAX_FUNCS];
	size_t nfuncs;
};

void sizes_usage(FILE *out)
{
	fprintf(out,
"usage: tagprof sizes (-p PID | -- COMMAND [ARGS...])\n"
"                     --func [BINARY:]SYMBOL [--size SPEC] [--func ...]...\n"
"                     [-d SECONDS] [-o FILE.csv|FILE.json] [--html FILE.html]\n"
"                     [--max-calls-per-sec N] [--cost EVENT] [--no-session]\n"
"                     [--assert 'FUNC<=CLASS']...\n"
"\n"
"Measures every call of each function, from its entry to its return\n"
"(inclusive, in ns, or in EVENT counts with --cost, e.g. instructions), and\n"
"keeps one tuple per (function, input size): calls, min, max, sum and sum\n"
"of squares. Then fits cost against size (1, log n, n, n log n, n^2, n^3\n"
"and a power law; chosen by AIC) and prints the functions ranked by their\n"
"growth. Sizes are exact up to 1024, then in buckets of 1/16 of a power\n"
"of two.\n"
"\n"
"  -p PID                 measure a running process (until -d, Ctrl-C or\n"
"                         its exit)\n"
"  -- COMMAND             run COMMAND and measure it until it exits\n"
"  --func [BINARY:]SYM    a function to probe (up to %d). BINARY: a path,\n"
"                         or with -p a library's name (libc); default the\n"
"                         process's executable\n"
"  --size SPEC            the input size of the --func before it (before\n"
"                         any --func: every function's; default arg1):\n"
"                           argN               integer argument N (1-6)\n"
"                           argN->OFF          the u64 at argN + OFF\n"
"                           *(uW *)(argN+OFF)  W = 8, 16, 32, 64\n"
"                           label:KEY          the thread's label KEY, a\n"
"                                              number (libtagprof labels)\n"
"  -d SECONDS             stop after this long\n"
"  -o FILE                the tuples: JSON if FILE ends in .json, else CSV\n"
"  --html FILE            a page with each function's cost against size\n"
"  --max-calls-per-sec N  above N calls/s, measure one call in K (said in\n"
"                         the output)\n"
"  --cost EVENT           a per-CPU counter instead of time (instructions\n"
"                         needs a hardware PMU)\n"
"  --no-session           a uprobe and a uretprobe even where the kernel\n"
"                         has uprobe sessions (6.13+)\n"
"  --assert 'F<=CLASS'    exit 1 when F's fitted growth is worse than CLASS\n"
"                         (1, log n, n, n log n, n^2, n^3)\n"
"\n"
"Calls nested deeper than 64 probed calls in one thread are not measured\n"
"(counted). With -- COMMAND only COMMAND's process is measured, not its\n"
"children. Exit status: 0; 1 when an --assert fails or the capture could\n"
"not be made or written (said on stderr); 2 on bad usage.\n",
		TP_SZ_MAX_FUNCS);
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "tagprof sizes: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(tagprof sizes --help for usage)\n");
	return 2;
}

enum {
	OPT_FUNC = 256, OPT_SIZE, OPT_HTML, OPT_MAXRATE, OPT_COST,
	OPT_NOSESSION, OPT_ASSERT,
};

static int parse_args(int argc, char **argv, struct sizes_opts *o)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "func", required_argument, NULL, OPT_FUNC },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "html", required_argument, NULL, OPT_HTML },
		{ "max-calls-per-sec", required_argument, NULL, OPT_MAXRATE },
		{ "cost", required_argument, NULL, OPT_COST },
		{ "no-session", no_argument, NULL, OPT_NOSESSION },
		{ "assert", required_argument, NULL, OPT_ASSERT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char err[256];
	uint64_t v;
	char *end;
	int c;

	o->default_size = DEFAULT_SIZE;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:d:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!args__parse_u64(optarg, INT_MAX, &v))
				return usage_error("-p '%s': not a process id",
						   optarg);
			o->pid = v;
			break;
		case 'd':
			o->duration = strtod(optarg, &end);
			if (*end || !(o->duration > 0) || o->duration > 1e7)
				return usage_error("-d '%s': a number of "
						   "seconds above 0", optarg);
			break;
		case 'o':
			o->out = optarg;
			break;
		case OPT_FUNC:
			if (o->nfuncs == TP_SZ_MAX_FUNCS)
				return usage_error("too many --func (at most "
						   "64): %s", optarg);
			o->funcs[o->nfuncs].sym.fd = -1;
			o->funcs[o->nfuncs++].spec = optarg;
			break;
		case OPT_SIZE:
			if (o->nfuncs)
				o->funcs[o->nfuncs - 1].size = optarg;
			else
				o->default_size = optarg;
			break;
		case OPT_HTML:
			o->html = optarg;
			break;
		case OPT_MAXRATE:
			if (!args__parse_u64(optarg, UINT64_MAX, &o->max_rate))
				return usage_error("--max-calls-per-sec '%s': "
						   "a number above 0", optarg);
			break;
		case OPT_COST:
			o->cost = strcmp(optarg, "ns") ? optarg : NULL;
			break;
		case OPT_NOSESSION:
			o->no_session = true;
			break;
		case OPT_ASSERT:
			if (o->nasserts == 64)
				return usage_error("too many --assert: %s",
						   optarg);
			if (sizereport__check_assert(optarg, err, sizeof(err)))
				return usage_error("%s", err);
			o->asserts[o->nasserts++] = optarg;
			break;
		case 'h':
			sizes_usage(stdout);
			exit(0);
		default:
			return usage_error("%s", "bad option");
		}
	}
	if (optind < argc)
		o->command = argv + optind;
	if (!o->nfuncs)
		return usage_error("%s", "no --func given");
	if (!!o->pid == !!o->command)
		return usage_error("%s", "give either -p PID or -- COMMAND");
	return 0;
}

/* COMMAND's file: argv[0] as execvp finds it. */
static bool find_command(const char *name, char *path, size_t len)
{
	const char *dirs = getenv("PATH"), *p;

	if (strchr(name, '/')) {
		snprintf(path, len, "%s", name);
		return true;
	}
	if (!dirs)
		dirs = "/usr/local/bin:/usr/bin:/bin";
	for (p = dirs; *p; p += *p == ':') {
		size_t n = strcspn(p, ":");
		struct stat st;

		snprintf(path, len, "%.*s/%s", (int)n, n ? p : ".", name);
		if (!stat(path, &st) && S_ISREG(st.st_mode) &&
		    !access(path, X_OK))
			return true;
		p += n;
	}
	return false;
}

/* Every --func's symbol and --size. At most one label key per run: the
 * BPF side resolves one (sizeprobe__set_context). */
static int resolve_funcs(struct sizes_opts *o, const char **label)
{
	char exe[4096] = "", err[512];

	if (o->command && !find_command(o->command[0], exe, sizeof(exe))) {
		fprintf(stderr, "tagprof sizes: %s: command not found\n",
			o->command[0]);
		return 1;
	}
	*label = NULL;
	for (size_t i = 0; i < o->nfuncs; i++) {
		struct func_arg *f = &o->funcs[i];

		if (!f->size)
			f->size = o->default_size;
		if (sizespec__parse(f->size, &f->sz, err, sizeof(err)) ||
		    funcsym__resolve(f->spec, o->pid, exe, &f->sym, f->name,
				     sizeof(f->name), err, sizeof(err))) {
			fprintf(stderr, "tagprof sizes: %s\n", err);
			return 1;
		}
		if (f->sz.fn.kind != TP_SZ_LABEL)
			continue;
		if (*label && strcmp(*label, f->sz.label)) {
			fprintf(stderr, "tagprof sizes: label:%s and label:%s: "
				"one label key per run\n", *label, f->sz.label);
			return 1;
		}
		*label = f->sz.label;
	}
	return 0;
}

/* label: sizes. Discovery finds where the target's threads keep their
 * context; proccfg resolves the key against its process context, and the
 * result goes to the BPF side. */
struct labelwatch {
	struct proccfg *cfg;
	struct ctxwatch *cw;
	struct sizeprobe *probe;
	pid_t pid;
	bool found;
	bool key_known;
	uint64_t last_refresh_ns;
};

static int on_context(void *arg, uint32_t pid,
		      const struct ctxwatch_found *found)
{
	struct labelwatch *lw = arg;
	const struct tp_proc_cfg *v;
	int ret = proccfg__set_context(lw->cfg, pid, found);

	if (ret || pid != (uint32_t)lw->pid)
		return ret;
	v = proccfg__get(lw->cfg, pid);
	if (!v)
		return 0;
	lw->found = true;
	lw->key_known = v->otel.kind == TP_TLS_NONE ||
			v->filter_key_idx != TP_FILTER_NO_KEY;
	return sizeprobe__set_context(lw->probe, v);
}

/* Call once COMMAND was exec'd (exec true) or for -p. */
static int labelwatch_start(struct labelwatch *lw, const char *key,
			    struct sizeprobe *probe, pid_t pid, bool exec)
{
	struct proccfg_filters f = { .label_key = key, .label_val = "" };

	lw->probe = probe;
	lw->pid = pid;
	lw->cfg = proccfg__new(&f);
	lw->cw = lw->cfg ? ctxwatch__new(on_context, lw) : NULL;
	if (!lw->cw)
		return -ENOMEM;
	ctxwatch__on_sample(lw->cw, pid, 0);
	/* a new image: looked at again soon, and often while it starts */
	if (exec)
		ctxwatch__on_exec(lw->cw, pid);
	return 0;
}

/* Until the key is known, the process context is read again every 10 ms:
 * the process may publish the key's name after the first look, and calls
 * meanwhile lose their size. */
static void labelwatch_tick(struct labelwatch *lw)
{
	uint64_t now = clock__mono_ns();

	if (!lw->cw)
		return;
	ctxwatch__tick(lw->cw);
	if (lw->found && !lw->key_known &&
	    now - lw->last_refresh_ns >= 10000000) {
		lw->last_refresh_ns = now;
		ctxwatch__reread(lw->cw, lw->pid);
	}
}

static void labelwatch_free(struct labelwatch *lw)
{
	ctxwatch__free(lw->cw);
	proccfg__free(lw->cfg);
}

/* The rate guard: each second, the entries of the last one set how many
 * calls to skip per one measured, so that about max_rate are. It only
 * grows, so one figure says what the whole run did. */
static void rate_guard(const struct sizes_opts *o, struct sizeprobe *p,
		       uint64_t *last_entries, uint64_t *last_ns,
		       uint32_t *every)
{
	uint64_t now = clock__mono_ns(), n, dt = now - *last_ns;

	if (!o->max_rate || dt < 1000000000ull / 4)
		return;
	n = sizeprobe__entries(p);
	double rate = (double)(n - *last_entries) * 1e9 / dt;
	*last_entries = n;
	*last_ns = now;
	if (rate > o->max_rate) {
		double want = rate / o->max_rate;

		if (want > *every && want < 1e9) {
			*every = (uint32_t)(want + 0.999);
			sizeprobe__set_sample_every(p, *every);
		}
	}
}

static bool process_gone(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return access(path, F_OK) != 0;
}

static volatile sig_atomic_t stop_flag, hup_flag, chld_flag;

/* Runs until -d passes, a signal comes, or the process ends; says why. */
static void measure(const struct sizes_opts *o, struct sizeprobe *p,
		    struct labelwatch *lw, pid_t child, int *child_status)
{
	uint64_t start = clock__mono_ns(), last_ns = start, entries = 0;
	uint64_t swept_ns = start;
	uint32_t every = 1;
	int ws;

	for (;;) {
		struct pollfd pfd = { .fd = signals__wake_fd(), .events = POLLIN };

		/* a context or key not found yet is looked for at every
		 * 10 ms tick: calls before it lose their label size */
		poll(&pfd, pfd.fd >= 0,
		     lw->cw && !(lw->found && lw->key_known) ? 10 : TICK_MS);
		signals__drain();
		if (stop_flag || hup_flag)
			break;
		if (child > 0 && waitpid(child, &ws, WNOHANG) == child) {
			*child_status = child_exit_status(ws);
			break;
		}
		if (child <= 0 && process_gone(o->pid)) {
			fprintf(stderr, "tagprof sizes: process %d exited "
				"after %.1f s; what was measured until then "
				"follows\n", (int)o->pid,
				(clock__mono_ns() - start) / 1e9);
			break;
		}
		if (o->duration &&
		    clock__mono_ns() - start >= o->duration * 1e9)
			break;
		rate_guard(o, p, &entries, &last_ns, &every);
		labelwatch_tick(lw);
		if (clock__mono_ns() - swept_ns > 1000000000ull) {
			swept_ns = clock__mono_ns();
			sizeprobe__sweep_threads(p);
		}
	}
}

/* What went unmeasured, on stderr, so that nothing is silently missing. */
static void say_counts(const struct sizetab *t,
		       const struct sizeprobe_counts *c, const char *label,
		       const struct labelwatch *lw, const struct sizeprobe *p)
{
	for (size_t i = 0; i < t->nfuncs; i++) {
		const struct size_func *f = &t->funcs[i];

		if (f->size_faults)
			fprintf(stderr, "tagprof sizes: %s: %" PRIu64 " calls "
				"not measured: their size (%s) could not be "
				"read\n", f->name, f->size_faults,
				f->size_spec);
		if (f->calls_skipped)
			fprintf(stderr, "tagprof sizes: %s: %" PRIu64 " calls "
				"not measured: nested deeper than %d probed "
				"calls\n", f->name, f->calls_skipped,
				TP_SZ_DEPTH);
	}
	if (c->no_label)
		fprintf(stderr, "tagprof sizes: %" PRIu64 " calls not "
			"measured: the thread had no numeric label %s (%s; "
			"%" PRIu64 " thread contexts read, %" PRIu64
			" unreadable)\n", c->no_label, label,
			!lw->found ? "the process's thread context was not "
			"found" : !lw->key_known ? "the process never "
			"published the key" : "the key is known", c->ctx_read,
			c->ctx_unreadable);
	if (t->tuples_dropped)
		fprintf(stderr, "tagprof sizes: %" PRIu64 " calls not kept: "
			"the tuple map was full (%" PRIu64 " tuples)\n",
			t->tuples_dropped, sizeprobe__capacity(p));
	if (c->no_thread_room)
		fprintf(stderr, "tagprof sizes: %" PRIu64 " calls not "
			"measured: over %d threads at once\n",
			c->no_thread_room, TP_SZ_MAX_THREADS);
	if (c->migrated)
		fprintf(stderr, "tagprof sizes: %" PRIu64 " calls not "
			"measured: returned on another CPU (counter cost)\n",
			c->migrated);
	if (c->lost_frames || c->unmatched_returns)
		fprintf(stderr, "tagprof sizes: %" PRIu64 " entries without a "
			"return (longjmp, exit) and %" PRIu64 " returns "
			"without an entry\n", c->lost_frames,
			c->unmatched_returns);
	fprintf(stderr, "tagprof sizes: %s; BPF maps %.1f MiB (room for "
		"%" PRIu64 " tuples)\n", sizeprobe__mode(p),
		sizeprobe__map_bytes(p) / 1048576.0, sizeprobe__capacity(p));
}

static int finish(const struct sizes_opts *o, struct sizeprobe *p,
		  const char *label, const struct labelwatch *lw,
		  uint64_t duration_ns)
{
	struct sizereport_opts ro = {
		.html_path = o->html, .asserts = o->asserts,
		.nasserts = o->nasserts, .text = stdout,
	};
	struct sizetab t = { 0 };
	struct sizeprobe_counts c;
	char err[512];
	int ret;

	ret = sizeprobe__read(p, &t, &c);
	t.duration_ns = duration_ns;
	if (ret) {
		fprintf(stderr, "tagprof sizes: reading the tuples: %s\n",
			strerror(-ret));
		sizetab__free(&t);
		return 1;
	}
	say_counts(&t, &c, label, lw, p);
	if (o->out && (ret = sizetab__save(&t, o->out, err, sizeof(err))))
		fprintf(stderr, "tagprof sizes: %s\n", err);
	ret = ret ? 1 : 0;
	int r = sizereport__run(&t, &ro, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "tagprof sizes: %s\n", err);
		r = 1;
	}
	sizetab__free(&t);
	return r ? r : ret;
}

static int run(struct sizes_opts *o)
{
	struct sizeprobe_func pf[TP_SZ_MAX_FUNCS];
	struct sizeprobe_opts po = { .no_session = o->no_session,
				     .cost_event = o->cost,
				     .nfuncs = o->nfuncs, .funcs = pf };
	struct child ch = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	struct labelwatch lw = { 0 };
	struct sizeprobe *p = NULL;
	int child_status = -1, ret = 1, e;
	const char *label;
	char err[512];
	uint64_t start;

	if (resolve_funcs(o, &label))
		goto out;
	if (o->out && (e = atomicfile__check_writable(o->out))) {
		fprintf(stderr, "tagprof sizes: cannot write %s: %s\n", o->out,
			strerror(-e));
		goto out;
	}
	for (size_t i = 0; i < o->nfuncs; i++)
		pf[i] = (struct sizeprobe_func){ .name = o->funcs[i].name,
			.sym = &o->funcs[i].sym, .spec = &o->funcs[i].sz,
			.spec_text = o->funcs[i].size };
	if (o->command) {
		if ((e = child_start(o->command, &ch))) {
			fprintf(stderr, "tagprof sizes: fork: %s\n",
				strerror(-e));
			goto out;
		}
		o->pid = ch.pid;
	}
	po.pid = o->pid;
	if ((e = sizeprobe__open(&po, &p, err, sizeof(err)))) {
		fprintf(stderr, "tagprof sizes: %s\n", err);
		goto out;
	}
	signals__install(&stop_flag, &hup_flag);
	if (o->command)
		signals__flag(SIGCHLD, &chld_flag);
	start = clock__mono_ns();
	if (o->command && (e = child_release(&ch))) {
		fprintf(stderr, "tagprof sizes: %s: %s\n", o->command[0],
			strerror(e));
		goto out;
	}
	if (label && labelwatch_start(&lw, label, p, o->pid, o->command)) {
		fprintf(stderr, "tagprof sizes: out of memory\n");
		goto out;
	}
	measure(o, p, &lw, ch.pid, &child_status);
	ret = finish(o, p, label, &lw, clock__mono_ns() - start);
	if (child_status > 0 && !ret)
		fprintf(stderr, "tagprof sizes: %s exited with status %d\n",
			o->command[0], child_status);
out:
	if (ch.pid > 0 && child_status < 0) {
		kill(ch.pid, SIGTERM);
		waitpid(ch.pid, NULL, 0);
	}
	labelwatch_free(&lw);
	sizeprobe__free(p);
	for (size_t i = 0; i < o->nfuncs; i++)
		funcsym__close(&o->funcs[i].sym);
	return ret;
}

int sizes_main(int argc, char **argv)
{
	static struct sizes_opts o;
	int ret;

	memset(&o, 0, sizeof(o));
	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret;
	return run(&o);
}
