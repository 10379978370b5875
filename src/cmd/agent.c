// SPDX-License-Identifier: BSD-2-Clause
/* `tagprof agent`: continuous, low-rate, system-wide profiling. Every
 * window it writes one pprof per service into the output directory, and
 * pushes it to a Pyroscope-compatible server when one is configured. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include "cmd/agent.h"
#include "capture/capture.h"
#include "cmd/caps.h"
#include "cmd/config.h"
#include "kernel/events.h"
#include "kernel/memevents.h"
#include "out/pprof.h"
#include "proc/proctable.h"
#include "out/push.h"
#include "out/retention.h"
#include "cmd/signals.h"
#include "out/atomicfile.h"
#include "unwind/mode.h"
#include "sym/symbolizer.h"
#include "util/clock.h"

#define DEFAULT_CONFIG "/etc/tagprof/agent.conf"
#define MAX_SERVICES 1024
#define PUSH_QUEUE 64		/* windows kept for retry by the pusher */
#define PENDING_MAX 32		/* files kept while the disk refuses them */
#define STOP_PUSH_MS 5000
/* The agent sleeps until the window ends, a signal, or the BPF side wakes
 * it for samples (bpf/collect.bpf.h, and SETTLED_WAIT_MS below): a clock
 * step delays a window end by at most this much. */
#define POLL_MAX_MS 10000
/* A window's files are due within this long of its end. */
#define WINDOW_LATE_MS 1000
/* Context discoveries due sooner wait for this. Every wake-up runs the
 * discoveries due, and samples wake the agent every few seconds while
 * there are any: on a busy host they are served by those, and this timer
 * fires for a starting process's quick rechecks and on a quiet host
 * (rechecks backed off far wait longer still: ctxwatch.c). */
#define TICK_MS 2000
/* Records of processes older than TP_SETTLED_NS (their maps read) and
 * exits wake the agent at most this often, where a new process's or an
 * exec's wake it within a second (wait_bound in bpf/collect.bpf.h). Each
 * wake-up of the agent costs about 0.4 ms of its CPU here, and what it
 * reads after a sleep is cold: at 4 s, a 19 Hz agent woke 16 times a
 * minute, and those wake-ups were a quarter of its CPU. The ring buffer
 * holds twice this long of records (capture.c). */
#define SETTLED_WAIT_MS 10000

/* A flag as given, re-applied over the config file on every (re)load. */
struct flag {
	const char *key, *value;
};

struct pending {		/* an encoded window the disk refused */
	char *path;
	uint8_t *data;
	size_t len;
};

struct agent {
	const char *config_path;	/* NULL: none given and no default */
	struct flag flags[32];
	size_t nflags;
	bool check_only;
	bool no_demangle;		/* --no-demangle */
	struct agent_config cfg;
	struct capture *cap;
	struct pusher *push;
	struct tp_event ev;
	struct pending pending[PENDING_MAX];
	size_t npending;
	uint64_t dropped_files;		/* pending files given up on */
	bool over_memory;		/* samples dropped: heap > max-memory */
	uint64_t perfmaps_over;		/* perf maps unread, as logged */
	uint64_t ctx_refusals;		/* process contexts refused, as logged */
	uint64_t cpu_mark;		/* thread CPU at the last window end */
	char host[256];
};

static volatile sig_atomic_t stop_requested, reload_requested;

/* Plain lines on stderr: one per event. */
static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	va_list ap;

	fputs("tagprof agent: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void agent_usage(FILE *out)
{
	fprintf(out,
"usage: tagprof agent [--config FILE] [--output-dir DIR] [--window SECONDS]\n"
"                     [-F HZ | -c PERIOD] [-e EVENT] [--push-url URL]\n"
"                     [--push-auth-file FILE]\n"
"                     [--retain-files N] [--retain-bytes SIZE] [--max-memory SIZE]\n"
"                     [--no-demangle] [--unwind fp|dwarf|auto] [--stack-bytes N]\n"
"                     [--debuginfod-urls URLS] [--timeline] [--ldlat CYCLES]\n"
"                     [-v] [--check-config]\n"
"\n"
"Profiles the whole system continuously. Every window it writes one pprof per\n"
"service (the process context's service.name, else the executable's name) to\n"
"the output directory as <UTC start>_<service>.pb.gz, and pushes it to a\n"
"Pyroscope-compatible server if --push-url is set. Runs until SIGTERM,\n"
"SIGINT or SIGXCPU, which write the partial window first; SIGHUP re-reads\n"
"the config (freq, count, event, ldlat, unwind, stack-bytes, timeline and\n"
"debuginfod-urls only at a restart: the privileges to apply them are dropped\n"
"after start-up);\n"
"other signals that would end it (SIGUSR1, SIGUSR2, SIGPIPE,\n"
"SIGALRM, real-time signals...) are ignored.\n"
"\n"
"  --config FILE         settings as 'key = value' lines, keys being the long\n"
"                        options below (default %s if it exists);\n"
"                        options given here override it\n"
"  --output-dir DIR      where profiles go (default /var/lib/tagprof, mode 0750)\n"
"  --window SECONDS      window length, e.g. 60, 90s, 5m (default 60)\n"
"  -F, --freq HZ         samples per second per CPU (default 19)\n"
"  -c, --count PERIOD    one sample every PERIOD events instead of -F (none:\n"
"                        by -F, the default); for memory events, whose\n"
"                        bursts no frequency follows (-e page-faults -c 16)\n"
"  -e, --event EVENT     as for record (default auto)\n"
"  --push-url URL        POST each window to URL/ingest (Pyroscope API)\n"
"  --push-auth-file FILE 'Bearer TOKEN', a token, or 'user:password'; the file\n"
"                        must not be readable or writable by others\n"
"  --retain-files N      keep at most N profiles (default 1440; 0: no limit)\n"
"  --retain-bytes SIZE   keep at most SIZE bytes of profiles (default 1G)\n"
"  --max-memory SIZE     above this much heap, samples are dropped and counted\n"
"                        (default 64M)\n"
"  --no-demangle         keep C++ and Rust function names mangled\n"
"  --unwind MODE         user stacks: fp, dwarf or auto (default), as for record\n"
"  --stack-bytes N       user stack copied per sample for CFI (default 8192,\n"
"                        at most 16384)\n"
"  --debuginfod-urls URLS debuginfod servers to fetch missing debug files\n"
"                        from, space-separated (default: $DEBUGINFOD_URLS;\n"
"                        none: no fetching)\n"
"  --timeline            per-sample windows, as record -T writes them (config:\n"
"                        timeline = true); bigger files\n"
"  --ldlat CYCLES        -e mem-loads on Intel PEBS: sample loads slower than\n"
"                        CYCLES (default 30)\n"
"  -v, --verbose         a line per window; more with -vv\n"
"  --check-config        print the settings that would be used, and exit\n"
"  -h, --help            this help\n", DEFAULT_CONFIG);
}

static int parse_args(struct agent *a, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'C' },
		{ "output-dir", required_argument, NULL, 'o' },
		{ "window", required_argument, NULL, 'w' },
		{ "freq", required_argument, NULL, 'F' },
		{ "event", required_argument, NULL, 'e' },
		{ "push-url", required_argument, NULL, 'u' },
		{ "push-auth-file", required_argument, NULL, 'A' },
		{ "retain-files", required_argument, NULL, 'n' },
		{ "retain-bytes", required_argument, NULL, 'b' },
		{ "max-memory", required_argument, NULL, 'm' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "check-config", no_argument, NULL, 'K' },
		{ "no-demangle", no_argument, NULL, 'N' },
		{ "unwind", required_argument, NULL, 'W' },
		{ "stack-bytes", required_argument, NULL, 'S' },
		{ "debuginfod-urls", required_argument, NULL, 'U' },
		{ "timeline", no_argument, NULL, 'T' },
		{ "ldlat", required_argument, NULL, 'l' },
		{ "count", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char err[256];
	int c, idx, verbose = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "F:c:e:vh", longopts, &idx)) != -1) {
		switch (c) {
		case 'C':
			a->config_path = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'K':
			a->check_only = true;
			break;
		case 'N':
			a->no_demangle = true;
			break;
		case 'h':
			agent_usage(stdout);
			exit(0);
		case '?':
			agent_usage(stderr);
			return 2;
		default:
			/* One slot stays free for -v's "verbose" below. */
			if (a->nflags + 1 >= sizeof(a->flags) /
						sizeof(a->flags[0])) {
				fprintf(stderr, "tagprof agent: too many "
					"settings on the command line (at most "
					"%zu)\n", sizeof(a->flags) /
					sizeof(a->flags[0]) - 1);
				return 2;
			}
			a->flags[a->nflags++] = (struct flag){
				c == 'F' ? "freq" : c == 'e' ? "event" :
				c == 'c' ? "count" :
				longopts[idx].name, optarg ? optarg : "true" };
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tagprof agent: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}
	if (verbose) {
		/* The level as text, 1 to 3 (more -v count as 3): no
		 * formatting, whose buffer GCC cannot prove big enough
		 * (-Wformat-truncation with the sanitizers' -O2). */
		static const char *const level[] = { "1", "2", "3" };

		a->flags[a->nflags++] = (struct flag){
			"verbose", strdup(level[(verbose > 3 ? 3 : verbose) - 1]) };
	}
	/* Validate the flags now, so a typo fails before anything starts. */
	struct agent_config tmp;

	config__defaults(&tmp);
	for (size_t i = 0; i < a->nflags; i++)
		if (config__set(&tmp, a->flags[i].key, a->flags[i].value, err,
				sizeof(err))) {
			fprintf(stderr, "tagprof agent: %s\n", err);
			config__free(&tmp);
			return 2;
		}
	config__free(&tmp);
	return 0;
}

/* Defaults, then the config file, then the flags. */
static int load_config(const struct agent *a, struct agent_config *out)
{
	const char *path = a->config_path;
	char err[512];

	config__defaults(out);
	if (!path && access(DEFAULT_CONFIG, F_OK) == 0)
		path = DEFAULT_CONFIG;
	if (path && config__load(out, path, err, sizeof(err))) {
		logf_("%s", err);
		config__free(out);
		return -EINVAL;
	}
	for (size_t i = 0; i < a->nflags; i++)
		if (config__set(out, a->flags[i].key, a->flags[i].value, err,
				sizeof(err))) {
			logf_("%s", err);
			config__free(out);
			return -EINVAL;
		}
	return 0;
}

static void print_config(const struct agent_config *c)
{
	char count[24] = "none";

	if (c->count)
		snprintf(count, sizeof(count), "%" PRIu64, c->count);
	printf("output-dir = %s\nwindow = %" PRIu64 "\nfreq = %" PRIu64
	       "\nevent = %s\npush-url = %s\npush-auth-file = %s\n"
	       "retain-files = %" PRIu64 "\nretain-bytes = %" PRIu64
	       "\nmax-memory = %" PRIu64 "\nverbose = %d\nunwind = %s\n"
	       "stack-bytes = %u\ndebuginfod-urls = %s\ntimeline = %s\n"
	       "ldlat = %u\ncount = %s\n",
	       c->output_dir,
	       c->window_s, c->freq, c->event,
	       c->push_url ? c->push_url : "none",
	       c->push_auth_file ? c->push_auth_file : "none", c->retain_files,
	       c->retain_bytes, c->max_memory, c->verbose,
	       unwind_mode__name(c->unwind), c->stack_bytes,
	       !c->debuginfod_urls ? "(DEBUGINFOD_URLS)" :
	       *c->debuginfod_urls ? c->debuginfod_urls : "none",
	       c->timeline ? "true" : "false", c->ldlat ? c->ldlat :
	       MEMEVENTS_LDLAT_DEFAULT, count);
}

static int choose_event(struct agent *a)
{
	char err[512];
	int ret;

	ret = events__choose(a->cfg.event, &a->ev, err, sizeof(err));
	if (!ret && a->cfg.ldlat)
		ret = memevents__set_ldlat(&a->ev, a->cfg.ldlat, err,
					   sizeof(err));
	if (ret)
		logf_("%s", err);
	else if (!strcmp(a->cfg.event, "auto"))
		logf_("event auto: using %s", a->ev.name);
	return ret;
}

static int start_capture(struct agent *a)
{
	struct capture_opts co = { 0 };
	char err[512];

	co.event = a->ev;
	co.freq = a->cfg.freq;
	co.period = a->cfg.count;
	co.service_label = true;
	co.unwind = a->cfg.unwind;
	co.stack_bytes = a->cfg.stack_bytes;
	co.timeline = a->cfg.timeline;
	co.max_memory = a->cfg.max_memory;
	co.debuginfod_urls = a->cfg.debuginfod_urls;
	co.tick_ms = TICK_MS;
	co.settled_wait_ms = SETTLED_WAIT_MS;
	co.verbose = a->cfg.verbose > 1 ? a->cfg.verbose - 1 : 0;
	co.account_cpu = a->cfg.verbose > 0;
	a->cap = capture__start(&co, err, sizeof(err));
	if (!a->cap) {
		logf_("%s", err);
		return -1;
	}
	return 0;
}

static void log_line(const char *line)
{
	logf_("%s", line);
}

/* Once the BPF programs are loaded and attached and the perf events open,
 * only reading processes is left (README, "Privileges"). Before the push
 * thread starts, which inherits this thread's sets. */
static int drop_privileges(struct agent *a)
{
	const struct caps_probe probes[] = {
		{ CAP_BPF, capture__bpf_works, a->cap },
		{ CAP_PERFMON, capture__bpf_works, a->cap },
	};
	char why[256];

	capture__prepare_drop(a->cap);
	if (caps__drop(probes, sizeof(probes) / sizeof(probes[0]), log_line,
		       why, sizeof(why))) {
		logf_("%s", why);
		return -1;
	}
	return 0;
}

static int start_push(struct agent *a)
{
	char err[512];

	if (!a->cfg.push_url)
		return 0;
	a->push = push__start(a->cfg.push_url, a->cfg.push_auth_file,
			      PUSH_QUEUE, err, sizeof(err));
	if (!a->push) {
		logf_("push: %s", err);
		return -1;
	}
	return 0;
}

/* ---- writing windows ---- */

static void pending_free(struct pending *p)
{
	free(p->path);
	free(p->data);
	memset(p, 0, sizeof(*p));
}

/* Keeps a refused file for the next window; the oldest goes when full. */
static void keep_pending(struct agent *a, const char *path, uint8_t *data,
			 size_t len)
{
	if (a->npending == PENDING_MAX) {
		pending_free(&a->pending[0]);
		memmove(a->pending, a->pending + 1,
			(PENDING_MAX - 1) * sizeof(a->pending[0]));
		a->npending--;
		a->dropped_files++;
	}
	a->pending[a->npending].path = strdup(path);
	a->pending[a->npending].data = data;
	a->pending[a->npending].len = len;
	if (!a->pending[a->npending].path) {
		free(data);
		a->dropped_files++;
		return;
	}
	a->npending++;
}

struct window_report {
	size_t services, written, kept;
	int write_err;
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Writes what the disk refused before, oldest first, then this window's
 * files, in one batch (atomicfile__write_in: the disk is waited for a few
 * times per window, not per file). From the first failure on, files wait
 * for the next window, so the directory stays in order. Takes fresh's
 * data and paths. */
static void write_files(struct agent *a, struct pending *fresh,
			size_t nfresh, int dir_err, struct window_report *r)
{
	size_t np = a->npending, n = np + nfresh, written = 0, i;
	struct atomicfile_item *items = calloc(n ? n : 1, sizeof(*items));
	int err = dir_err;

	if (!err && !items)
		err = -ENOMEM;
	if (!err) {
		for (i = 0; i < n; i++) {
			struct pending *p = i < np ? &a->pending[i] :
						     &fresh[i - np];

			items[i] = (struct atomicfile_item){
				.name = base_name(p->path), .data = p->data,
				.len = p->len };
		}
		written = atomicfile__write_in(a->cfg.output_dir, items, n,
					       0640);
		if (written < n)
			err = items[written].err;
	}
	free(items);
	if (err && !r->write_err && err != -EAGAIN)
		r->write_err = err;
	/* The pending files written go; those after them stay. */
	for (i = 0; i < np && i < written; i++)
		pending_free(&a->pending[i]);
	memmove(a->pending, a->pending + i, (np - i) * sizeof(a->pending[0]));
	a->npending -= i;
	for (i = 0; i < nfresh; i++) {
		struct pending *p = &fresh[i];

		if (np + i < written) {
			r->written++;
			free(p->data);
		} else {
			keep_pending(a, p->path, p->data, p->len);
			r->kept++;
		}
		free(p->path);
	}
}

/* The wall clock's second, read as ms_until reads it. time() reads the
 * coarse clock, which lags by up to a tick: beside ms_until's, the loop
 * polled with a zero timeout tens of times (40 traced) in that tick
 * before a window's end, until time() caught up. */
static time_t now_s(void)
{
	return (time_t)(clock__ns(CLOCK_REALTIME) / 1000000000);
}

/* Encodes one service's profile into *f and hands it to the pusher. */
static int encode_service(struct agent *a, const struct pprof *pp,
			  const char *service, time_t start, time_t end,
			  struct pending *f)
{
	const char *keys[1] = { "host" }, *vals[1] = { a->host };
	char path[4096];

	memset(f, 0, sizeof(*f));
	if (pprof__encode_where(pp, "service", service, &f->data, &f->len) ||
	    retention__file_name(a->cfg.output_dir, start, service, path,
				 sizeof(path)) ||
	    !(f->path = strdup(path))) {
		free(f->data);
		return -1;
	}
	if (a->push)
		push__enqueue(a->push, service, keys, vals, 1, start, end,
			      f->data, f->len);
	return 0;
}

/* samples: the events the window took (the profile holds one record per
 * distinct stack and labels). */
static void write_window(struct agent *a, struct pprof *pp, uint64_t samples)
{
	const char *services[MAX_SERVICES];
	struct window_report r = { 0 };
	time_t start = pprof__time_nanos(pp) / 1000000000ll;
	time_t end = now_s();
	struct pending *fresh;
	size_t nfresh = 0;
	char perr[256];
	int ret;

	/* The directory may have vanished, or be back: (re)create it. */
	ret = retention__ensure_dir(a->cfg.output_dir);
	r.services = pprof__label_values(pp, "service", services,
					 MAX_SERVICES);
	fresh = calloc(r.services ? r.services : 1, sizeof(*fresh));
	for (size_t i = 0; fresh && i < r.services; i++)
		if (!encode_service(a, pp, services[i], start, end,
				    &fresh[nfresh]))
			nfresh++;
	write_files(a, fresh, nfresh, ret ? ret : fresh ? 0 : -ENOMEM, &r);
	free(fresh);
	if (!a->npending)
		retention__enforce(a->cfg.output_dir, a->cfg.retain_files,
				   a->cfg.retain_bytes);
	/* Problems are logged once per window, not once per file. */
	if (r.write_err)
		logf_("cannot write to %s: %s; %zu profiles waiting, %" PRIu64
		      " given up", a->cfg.output_dir, strerror(-r.write_err),
		      a->npending, a->dropped_files);
	if (a->push) {
		push__take_error(a->push, perr, sizeof(perr));
		if (*perr)
			logf_("push: %s", perr);
	}
	if (a->cfg.verbose)
		logf_("window: %" PRIu64 " samples (%zu distinct), %zu services, "
		      "%zu files written, %zu waiting", samples,
		      pprof__sample_count(pp), r.services,
		      r.written, a->npending);
}

/* Perf maps left unread (over the memory budget, or refused), when there
 * are new ones: the JIT frames of those processes are unnamed. */
static void log_budgets(struct agent *a)
{
	char unread[200];
	uint64_t n = capture__perfmaps_unread(a->cap, unread, sizeof(unread));

	if (n == a->perfmaps_over)
		return;
	a->perfmaps_over = n;
	logf_("perf maps since start: %s", unread);
}

/* ---- the loop ---- */

/* The sanitizer runtime's count of the bytes the program holds; defined
 * only in a sanitized build (make SANITIZE=...), whose allocator is the
 * runtime's: glibc's mallinfo2 sees none of it then, and the RSS is mostly
 * ASan's shadow memory. */
size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

/* Heap in use: what the aggregation and caches cost. */
static uint64_t heap_bytes(void)
{
	struct mallinfo2 mi;

	if (__sanitizer_get_current_allocated_bytes)
		return __sanitizer_get_current_allocated_bytes();
	mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

/* Gives free heap back to the system when there is much of it: after a
 * busy window, or processes gone with their maps and symbols. */
static void trim_heap(void)
{
	struct mallinfo2 mi = mallinfo2();

	if (mi.fordblks >= HEAP_KEEP_BYTES)
		malloc_trim(0);
}

/* What the heap and the bounded caches hold, for -v: a slow climb in a
 * long run (tests/bench/soak.sh) is told apart here between a leak (in
 * use), fragmentation (free) and a cache still filling. */
static void log_memory(struct agent *a)
{
	struct mallinfo2 mi = mallinfo2();
	char caches[512];

	logf_("heap: %zu KiB in use, %zu KiB free (%zu pieces) in an arena of "
	      "%zu KiB; %zu KiB in %zu mapped blocks", mi.uordblks >> 10,
	      mi.fordblks >> 10, mi.ordblks, mi.arena >> 10, mi.hblkhd >> 10,
	      mi.hblks);
	capture__describe_caches(a->cap, caches, sizeof(caches));
	logf_("caches: %s", caches);
}

/* End of the window that contains now: windows are aligned to the wall
 * clock, so hosts' files line up. */
static time_t window_end(time_t now, uint64_t window)
{
	return (now / window + 1) * window;
}

static void end_window(struct agent *a)
{
	uint64_t cpu0 = clock__ns(CLOCK_THREAD_CPUTIME_ID);
	struct capture_cpu cpu;
	struct pprof *pp;
	uint64_t samples, n;
	char refused[160];

	capture__drain(a->cap);
	samples = capture__window_samples(a->cap);
	cpu = capture__take_cpu(a->cap);
	pp = capture__take(a->cap);

	/* Hostile process contexts are logged once per window with news. */
	n = capture__ctx_refusals(a->cap, refused, sizeof(refused));
	if (n > a->ctx_refusals)	/* a new capture starts from 0 */
		logf_("process context since start: %s", refused);
	a->ctx_refusals = n;
	if (!pp) {
		logf_("out of memory closing a window; it goes on");
		return;
	}
	write_window(a, pp, samples);
	log_budgets(a);
	pprof__free(pp);
	capture__sweep(a->cap);
	trim_heap();
	/* What a window costs beyond its samples, what they cost, and all
	 * of the loop's CPU since the last window end: the parts leave out
	 * only the loop itself (heap checks, signals).
	 * tests/bench/agent_overhead.sh reads both lines. */
	if (a->cfg.verbose) {
		uint64_t now = clock__ns(CLOCK_THREAD_CPUTIME_ID);

		logf_("window work: %.3f ms CPU", (now - cpu0) / 1e6);
		log_memory(a);
		logf_("window cpu: %.3f ms reading %" PRIu64 " samples "
		      "(%.1f us each), %.3f ms discovering, %.3f ms in %"
		      PRIu64 " waits; %.3f ms in all", cpu.read_ns / 1e6,
		      samples, samples ? cpu.read_ns / 1e3 / samples : 0.0,
		      cpu.tick_ns / 1e6, cpu.wait_ns / 1e6, cpu.wakeups,
		      (now - a->cpu_mark) / 1e6);
	}
	a->cpu_mark = clock__ns(CLOCK_THREAD_CPUTIME_ID);
}

/* Ends the window due at the wall-clock second end, and says so when its
 * files come more than WINDOW_LATE_MS after that: how long the loop took
 * to get to it (resolving samples, discoveries) and the writing itself
 * (encoding, the disk), the two places a late window can lose its time. */
static void end_window_on_time(struct agent *a, time_t end)
{
	uint64_t t0 = clock__ns(CLOCK_REALTIME), t1;
	int64_t before = (int64_t)(t0 / 1000000) - (int64_t)end * 1000;
	char when[32] = "?";
	struct tm tm;

	end_window(a);
	t1 = clock__ns(CLOCK_REALTIME);
	if (before + (int64_t)((t1 - t0) / 1000000) <= WINDOW_LATE_MS)
		return;
	if (gmtime_r(&end, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	logf_("warning: the window that ended at %s was written %.2f s late: "
	      "%.2f s before its work began, %.2f s of work", when,
	      before / 1e3 + (t1 - t0) / 1e9, before / 1e3, (t1 - t0) / 1e9);
}

/* Equal strings, or both NULL. */
static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The settings the sampler was started with, from cur into fresh (and
 * fresh's into cur, which is then freed). */
static void swap_sampler_settings(struct agent_config *fresh,
				  struct agent_config *cur)
{
	struct agent_config t = *fresh;

	fresh->freq = cur->freq;
	fresh->event = cur->event;
	fresh->unwind = cur->unwind;
	fresh->stack_bytes = cur->stack_bytes;
	fresh->timeline = cur->timeline;
	fresh->ldlat = cur->ldlat;
	fresh->count = cur->count;
	fresh->debuginfod_urls = cur->debuginfod_urls;
	cur->event = t.event;
	cur->debuginfod_urls = t.debuginfod_urls;
}

/* SIGHUP: new settings; those of the sampler only at a restart. */
static void reload(struct agent *a)
{
	struct agent_config fresh;
	bool resample;

	if (load_config(a, &fresh)) {
		logf_("reload failed; keeping the current settings");
		return;
	}
	resample = fresh.freq != a->cfg.freq ||
		   strcmp(fresh.event, a->cfg.event) ||
		   fresh.unwind != a->cfg.unwind ||
		   fresh.stack_bytes != a->cfg.stack_bytes ||
		   fresh.timeline != a->cfg.timeline ||
		   fresh.ldlat != a->cfg.ldlat ||
		   fresh.count != a->cfg.count ||
		   !same_str(fresh.debuginfod_urls, a->cfg.debuginfod_urls);
	if (resample) {
		/* Opening perf events and loading BPF took privileges the
		 * agent dropped after its start: the sampler's settings stay
		 * until a restart. */
		logf_("warning: freq, count, event, ldlat, unwind, stack-bytes, timeline and "
		      "debuginfod-urls change only at a restart (the agent "
		      "dropped the privileges to open perf events and load BPF "
		      "after its start): the sampler keeps its settings; "
		      "restart the agent to apply them");
		swap_sampler_settings(&fresh, &a->cfg);
	}
	push__stop(a->push, STOP_PUSH_MS);
	a->push = NULL;
	config__free(&a->cfg);
	a->cfg = fresh;
	start_push(a);
	logf_("reloaded settings");
}

/* Drops samples while the heap is over --max-memory, and says when that
 * starts and ends. */
static void check_memory(struct agent *a)
{
	uint64_t heap = heap_bytes();
	bool over = heap > a->cfg.max_memory;

	if (over != a->over_memory)
		logf_(over ? "warning: heap %" PRIu64 " KiB is over max-memory %"
			     PRIu64 " KiB: samples are dropped (and counted) "
			     "until it is back under" :
			     "heap %" PRIu64 " KiB is back under max-memory %"
			     PRIu64 " KiB: samples are kept again",
		      heap >> 10, a->cfg.max_memory >> 10);
	a->over_memory = over;
	capture__set_dropping(a->cap, over);
}

/* Milliseconds until the wall-clock second `end` starts, within
 * [0, POLL_MAX_MS]. */
static int ms_until(time_t end)
{
	int64_t left = (int64_t)end * 1000 -
		       (int64_t)(clock__ns(CLOCK_REALTIME) / 1000000);

	return left < 0 ? 0 : left > POLL_MAX_MS ? POLL_MAX_MS : (int)left;
}

static int run(struct agent *a)
{
	time_t next = window_end(now_s(), a->cfg.window_s), checked = 0;

	while (!stop_requested) {
		time_t now;

		capture__poll(a->cap, ms_until(next), signals__wake_fd());
		signals__drain();
		now = now_s();
		if (now != checked) {	/* the heap, once a second */
			checked = now;
			check_memory(a);
		}
		if (reload_requested) {
			reload_requested = 0;
			reload(a);
			now = now_s();
			next = window_end(now, a->cfg.window_s);
		}
		if (now >= next) {
			end_window_on_time(a, next);
			next = window_end(now_s(), a->cfg.window_s);
		}
	}
	if (!a->cap)
		return 1;
	capture__stop(a->cap);
	end_window(a);		/* the partial window */
	return 0;
}

int agent_main(int argc, char **argv)
{
	static struct agent a;
	char why[256];
	int ret;

	ret = parse_args(&a, argc, argv);
	if (ret)
		return ret;
	if (load_config(&a, &a.cfg))
		return 2;
	if (a.check_only) {
		print_config(&a.cfg);
		config__free(&a.cfg);
		return 0;
	}
	if (!caps__can_profile(why, sizeof(why))) {
		logf_("%s", why);
		return 1;
	}
	ret = retention__ensure_dir(a.cfg.output_dir);
	if (ret == -EPERM) {
		/* Others who can write there could delete our profiles or
		 * take the names of the next windows. */
		logf_("refusing output-dir %s: it must be owned by root or uid "
		      "%u and not writable by group or others (chmod go-w it)",
		      a.cfg.output_dir, (unsigned)geteuid());
		return 1;
	}
	if (ret) {
		logf_("cannot use %s: %s", a.cfg.output_dir, strerror(-ret));
		return 1;
	}
	retention__clean_temp(a.cfg.output_dir);
	gethostname(a.host, sizeof(a.host) - 1);
	symbolizer__set_demangle_default(!a.no_demangle);
	/* SIGTERM, SIGINT, SIGXCPU: the partial window is written, exit 0. */
	signals__install(&stop_requested, &reload_requested);
	ret = 1;
	/* The capture first: it may set DEBUGINFOD_URLS (debuginfod.h), and
	 * setenv is not safe while another thread (libcurl, pushing) reads
	 * the environment. */
	if (choose_event(&a) || start_capture(&a) || drop_privileges(&a) ||
	    start_push(&a))
		goto cleanup;
	if (a.cfg.count)
		logf_("profiling every %" PRIu64 " events, %" PRIu64 " s "
		      "windows, into %s", a.cfg.count, a.cfg.window_s,
		      a.cfg.output_dir);
	else
		logf_("profiling at %" PRIu64 " Hz, %" PRIu64 " s windows, "
		      "into %s", a.cfg.freq, a.cfg.window_s, a.cfg.output_dir);
	if (heap_bytes() > a.cfg.max_memory)
		logf_("warning: max-memory %" PRIu64 " KiB is below the %" PRIu64
		      " KiB in use at start: samples will be dropped",
		      a.cfg.max_memory >> 10, heap_bytes() >> 10);
	ret = run(&a);
cleanup:
	capture__free(a.cap);
	push__stop(a.push, STOP_PUSH_MS);
	for (size_t i = 0; i < a.npending; i++)
		pending_free(&a.pending[i]);
	config__free(&a.cfg);
	return ret;
}
