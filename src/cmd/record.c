// SPDX-License-Identifier: BSD-2-Clause
/* `tagprof record`: capture samples for a while, or for a command's life,
 * and write one symbolized pprof. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "capture/capture.h"
#include "capture/comments.h"
#include "cmd/args.h"
#include "cmd/caps.h"
#include "kernel/events.h"
#include "kernel/memevents.h"
#include "out/pprof.h"
#include "cmd/child.h"
#include "cmd/record.h"
#include "sample_event.h"
#include "cmd/signals.h"
#include "out/atomicfile.h"
#include "unwind/mode.h"
#include "sym/symbolizer.h"
#include "util/clock.h"

#define DEFAULT_FREQ 99
#define LABEL_FREQ 999		/* a per-query capture wants detail */
#define DEFAULT_SECONDS 10
#define MAX_PIDS 1024

struct record_opts {
	const char *event;	/* -e, "auto" by default */
	uint64_t freq, period;	/* -F / -c; 0 = not given */
	double seconds;		/* -d; 0 = not given */
	const char *output;
	uint32_t pids[MAX_PIDS];
	size_t npids;
	const char *cgroup;
	bool idle;
	char *label_key, *label_val;	/* --label KEY=VALUE */
	char *tag_field, *tag_name;	/* --tag FIELD=NAME */
	int verbose;
	uint64_t start_cpu_ns;	/* CPU and monotonic time at main, for -v */
	uint64_t start_ns;
	char **command;		/* after --, or NULL */
	int until_pidfd;	/* --until-exit: a pidfd, or -1 */
	uint32_t until_pid;
	bool no_demangle;	/* --no-demangle */
	bool timeline;		/* -T: a pprof Sample per sample */
	int unwind;		/* --unwind: enum tp_unwind_mode */
	uint32_t stack_bytes;	/* --stack-bytes; 0 = default */
	const char *debuginfod;	/* --debuginfod URLS; NULL: the environment */
	uint32_t ldlat;		/* --ldlat; 0 = not given */
};

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t child_changed;

void record_usage(FILE *out)
{
	fprintf(out,
"usage: tagprof record [-a] [-p PID[,PID...]] [-e EVENT] [-F HZ | -c PERIOD]\n"
"                      [-d SECONDS] [-o FILE] [-T] [-v] [--cgroup PATH] [--idle]\n"
"                      [--label KEY=VALUE] [--tag FIELD=NAME] [--until-exit PID]\n"
"                      [--no-demangle] [--unwind fp|dwarf|auto]\n"
"                      [--stack-bytes N] [--debuginfod URLS]\n"
"                      [-- COMMAND [ARGS...]]\n"
"\n"
"Samples CPUs with BPF and writes a gzipped pprof with symbolized user and\n"
"kernel stacks, labelled with process, thread_name, pid, tid and cpu.\n"
"\n"
"  -a, --all-cpus        whole system (the default without -p or COMMAND)\n"
"  -p, --pid PID,...     only these processes (all their threads)\n"
"      --cgroup PATH     only tasks in this cgroup v2 directory or below it\n"
"      --idle            also keep samples of the idle task (pid 0)\n"
"      --label KEY=VALUE only samples whose thread has this label attached\n"
"                        (filtered in the kernel; -F defaults to 999 then)\n"
"      --tag FIELD=NAME  only samples whose register tag has FIELD set to NAME\n"
"                        (a dictionary name or a number; in the kernel, 999 Hz)\n"
"  -e, --event EVENT     auto (default): precise cycles if the CPU can sample\n"
"                        them, else cpu-clock; or cpu-clock, cycles,\n"
"                        instructions, ref-cycles, or a libpfm4 event name such\n"
"                        as INST_RETIRED.PREC_DIST; :p, :pp, :ppp ask for PEBS.\n"
"                        Memory accesses, each sample with its data address\n"
"                        (label data_object; with -T also addr): page-faults,\n"
"                        minor-faults, major-faults on any machine; mem-loads,\n"
"                        mem-stores on Intel PEBS or AMD IBS, which add the\n"
"                        label data_src and the weight (latency, cycles)\n"
"      --ldlat CYCLES    mem-loads on PEBS: sample loads slower than CYCLES\n"
"                        (default 30, as perf mem)\n"
"  -F, --freq HZ         samples per second per CPU (default %d, or %d\n"
"                        with --label or --tag)\n"
"  -c, --count PERIOD    one sample every PERIOD events (ns for cpu-clock)\n"
"  -d, --duration SECS   stop after SECS seconds (default %d; with COMMAND,\n"
"                        when the command exits); Ctrl-C (SIGINT),\n"
"                        SIGTERM, SIGHUP or SIGXCPU stops early and still\n"
"                        writes the file; SIGUSR1, SIGUSR2, SIGPIPE and the\n"
"                        like are ignored\n"
"      --until-exit PID  stop when process PID exits (with -d: whichever\n"
"                        comes first)\n"
"  -o, --output FILE     pprof to write (default tagprof.pb.gz)\n"
"  -T, --timeline        keep each sample on its own, with its time as the\n"
"                        numeric label t (ns since the profile's start), as\n"
"                        perf record -T keeps timestamps: cut a window with\n"
"                        go tool pprof -tagfocus=t=2s:3s or tagprof report\n"
"                        pprof --from 2s --to 3s; see it over time with\n"
"                        tagprof report timeline FILE -o OUT.json.gz (open\n"
"                        at profiler.firefox.com); the file is bigger\n"
"      --unwind MODE     user stacks: fp (frame pointers), dwarf (a stack copy\n"
"                        per sample, unwound with CFI), or auto (default:\n"
"                        frame pointers, CFI for processes that need it)\n"
"      --stack-bytes N   user stack copied per sample for CFI (default %d,\n"
"                        at most %d)\n"
"      --debuginfod URLS fetch the debug files of stripped binaries that the\n"
"                        host lacks from these debuginfod servers (space-\n"
"                        separated; default: $DEBUGINFOD_URLS; '' for none),\n"
"                        in the background: frames named once a file comes\n"
"      --no-demangle     keep C++ and Rust function names as the symbols\n"
"                        are (mangled)\n"
"  -v, --verbose         more detail, and at the end every counter of the\n"
"                        profile (its comments that start with '#');\n"
"                        -vv adds libbpf debug output\n"
"  -h, --help            this help\n"
"\n"
"With -- COMMAND, tagprof starts COMMAND, profiles it and the processes it\n"
"starts until it exits, and exits with its status.\n",
		DEFAULT_FREQ, LABEL_FREQ, DEFAULT_SECONDS, TP_STACK_DEFAULT,
		TP_STACK_MAX);
}

static int parse_pids(struct record_opts *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	char path[64];
	uint64_t v;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!args__parse_u64(tok, INT32_MAX, &v)) {
			fprintf(stderr, "tagprof: invalid pid '%s'\n", tok);
			ret = -EINVAL;
			break;
		}
		snprintf(path, sizeof(path), "/proc/%" PRIu64, v);
		if (access(path, F_OK)) {
			fprintf(stderr, "tagprof: no such process: %" PRIu64 "\n", v);
			ret = -ESRCH;
			break;
		}
		if (o->npids == MAX_PIDS) {
			fprintf(stderr, "tagprof: at most %d pids\n", MAX_PIDS);
			ret = -E2BIG;
			break;
		}
		o->pids[o->npids++] = v;
	}
	free(copy);
	if (!ret && o->npids == 0) {
		fprintf(stderr, "tagprof: invalid pid list '%s'\n", arg);
		ret = -EINVAL;
	}
	return ret;
}

/* --label KEY=VALUE or --tag FIELD=NAME, given once: a key of 1 to 255
 * bytes, '=', a value of at most max_val bytes (may contain '='). */
static int parse_pair(const char *opt, const char *form, const char *arg,
		      size_t max_val, char **key, char **val)
{
	const char *eq = strchr(arg, '=');
	size_t klen = eq ? (size_t)(eq - arg) : 0;

	if (*key) {
		fprintf(stderr, "tagprof: give %s once\n", opt);
		return -EINVAL;
	}
	if (!eq || klen == 0 || klen > 255) {
		fprintf(stderr, "tagprof: %s wants %s with a key of 1 to 255 bytes, not '%s'\n",
			opt, form, arg);
		return -EINVAL;
	}
	if (strlen(eq + 1) > max_val) {
		fprintf(stderr, "tagprof: %s value longer than %zu bytes\n", opt,
			max_val);
		return -EINVAL;
	}
	*key = strndup(arg, klen);
	*val = strdup(eq + 1);
	return *key && *val ? 0 : -ENOMEM;
}

/* --until-exit PID: a pidfd tells when that very process exits, even if
 * its pid is reused later. */
static int watch_pid(struct record_opts *o, const char *arg)
{
	uint64_t v;

	if (!args__parse_u64(arg, INT32_MAX, &v)) {
		fprintf(stderr, "tagprof: invalid pid '%s'\n", arg);
		return -EINVAL;
	}
	o->until_pidfd = syscall(SYS_pidfd_open, (pid_t)v, 0);
	if (o->until_pidfd < 0) {
		fprintf(stderr, "tagprof: --until-exit %" PRIu64 ": %s\n", v,
			errno == ESRCH ? "no such process" : strerror(errno));
		return -errno;
	}
	o->until_pid = v;
	return 0;
}

/* Whether the --until-exit process has exited. */
static bool watched_exited(const struct record_opts *o)
{
	struct pollfd pfd = { .fd = o->until_pidfd, .events = POLLIN };

	return o->until_pidfd >= 0 && poll(&pfd, 1, 0) == 1;
}

/* Returns 0, or 2 for a usage error (already reported). */
static int parse_args(int argc, char **argv, struct record_opts *o)
{
	static const struct option longopts[] = {
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "pid", required_argument, NULL, 'p' },
		{ "event", required_argument, NULL, 'e' },
		{ "freq", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "idle", no_argument, NULL, 'I' },
		{ "label", required_argument, NULL, 'L' },
		{ "tag", required_argument, NULL, 'g' },
		{ "timeline", no_argument, NULL, 'T' },
		{ "until-exit", required_argument, NULL, 'U' },
		{ "no-demangle", no_argument, NULL, 'M' },
		{ "unwind", required_argument, NULL, 'W' },
		{ "stack-bytes", required_argument, NULL, 'S' },
		{ "debuginfod", required_argument, NULL, 'D' },
		{ "ldlat", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t v64;
	char *end;
	int c;

	o->event = "auto";
	o->output = "tagprof.pb.gz";
	o->until_pidfd = -1;
	optind = 1;
	/* '+': stop at the first non-option, so COMMAND keeps its flags. */
	while ((c = getopt_long(argc, argv, "+ap:e:F:c:d:o:vTh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'a':
			break;
		case 'p':
			if (parse_pids(o, optarg))
				return 2;
			break;
		case 'e':
			o->event = optarg;
			break;
		case 'l':
			if (!args__parse_u64(optarg, MEMEVENTS_LDLAT_MAX, &v64)) {
				fprintf(stderr, "tagprof: --ldlat wants a threshold of 1 to %d cycles, not '%s'\n",
					MEMEVENTS_LDLAT_MAX, optarg);
				return 2;
			}
			o->ldlat = (uint32_t)v64;
			break;
		case 'F':
			if (!args__parse_u64(optarg, 100000, &o->freq)) {
				fprintf(stderr, "tagprof: -F wants a frequency of 1 to 100000 Hz, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'c':
			if (!args__parse_u64(optarg, UINT64_MAX >> 1, &o->period)) {
				fprintf(stderr, "tagprof: -c wants a positive period, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'd':
			errno = 0;
			o->seconds = strtod(optarg, &end);
			if (errno || *end || !(o->seconds > 0) ||
			    o->seconds > 1e7) {
				fprintf(stderr, "tagprof: -d wants a positive number of seconds, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'G':
			o->cgroup = optarg;
			break;
		case 'I':
			o->idle = true;
			break;
		case 'L':
			if (parse_pair("--label", "KEY=VALUE", optarg, TP_FILTER_VAL_MAX,
				       &o->label_key, &o->label_val))
				return 2;
			break;
		case 'T':
			o->timeline = true;
			break;
		case 'g':
			if (parse_pair("--tag", "FIELD=NAME", optarg, 255,
				       &o->tag_field, &o->tag_name))
				return 2;
			break;
		case 'U':
			if (watch_pid(o, optarg))
				return 2;
			break;
		case 'M':
			o->no_demangle = true;
			break;
		case 'W':
			o->unwind = unwind_mode__parse(optarg);
			if (o->unwind < 0) {
				fprintf(stderr, "tagprof: --unwind wants fp, dwarf or auto, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'S':
			if (!args__parse_u64(optarg, UINT32_MAX, &v64)) {
				fprintf(stderr, "tagprof: --stack-bytes wants a positive number of bytes, not '%s'\n",
					optarg);
				return 2;
			}
			o->stack_bytes = unwind_mode__stack_bytes(v64);
			break;
		case 'D':
			o->debuginfod = optarg;
			break;
		case 'h':
			record_usage(stdout);
			exit(0);
		default:
			record_usage(stderr);
			return 2;
		}
	}
	if (o->freq && o->period) {
		fprintf(stderr, "tagprof: -F and -c exclude each other\n");
		return 2;
	}
	if (optind < argc)
		o->command = &argv[optind];
	if (o->command && o->npids) {
		fprintf(stderr, "tagprof: give -p or a COMMAND, not both\n");
		return 2;
	}
	if (!*o->output) {
		fprintf(stderr, "tagprof: -o wants a file name\n");
		return 2;
	}
	return 0;
}

/* Picks the event; prints the choice for auto. Returns 0 or 1 (reported). */
static int choose_event(const struct record_opts *o, struct tp_event *ev)
{
	char err[512];

	if (events__choose(o->event, ev, err, sizeof(err)) ||
	    (o->ldlat && memevents__set_ldlat(ev, o->ldlat, err, sizeof(err)))) {
		fprintf(stderr, "tagprof: %s\n", err);
		return 1;
	}
	if (!strcmp(o->event, "auto"))
		fprintf(stderr, "tagprof: event auto: using %s%s\n", ev->name,
			ev->hardware ? " (precise cycles)" :
			" (no precise cycles sampling on this machine)");
	return 0;
}

static void status_line(struct capture *c, uint64_t elapsed_ns)
{
	fprintf(stderr, "\r\033[Ktagprof: %.1fs  samples %" PRIu64
		"  lost %" PRIu64 "  processes %zu", elapsed_ns / 1e9,
		capture__total_samples(c), capture__total_lost(c),
		capture__processes(c));
	fflush(stderr);
}

/* Polls until the duration passes, a signal arrives or the child exits.
 * Sets *child_status when the child was reaped. */
static void capture_loop(struct capture *c, const struct record_opts *o,
			 uint64_t start_ns, pid_t child, int *child_status)
{
	uint64_t limit = o->seconds * 1e9, elapsed, last_status = 0;
	bool tty = isatty(STDERR_FILENO);
	int wstatus;

	for (;;) {
		capture__poll(c, 100, -1);
		elapsed = clock__ns(CLOCK_MONOTONIC) - start_ns;
		if (stop_requested || (limit && elapsed >= limit) ||
		    watched_exited(o))
			break;
		if (child > 0 && child_changed) {
			child_changed = 0;
			if (waitpid(child, &wstatus, WNOHANG) == child) {
				*child_status = child_exit_status(wstatus);
				break;
			}
		}
		if (tty && elapsed - last_status >= 500000000ull) {
			status_line(c, elapsed);
			last_status = elapsed;
		}
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
}

/* -v: every counter of the profile written, as its full comments say. */
static void print_counters(const struct pprof *pp)
{
	const size_t np = strlen(COMMENTS_FULL);
	const char *line;

	for (size_t i = 0; (line = pprof__comment(pp, i)); i++)
		if (!strncmp(line, COMMENTS_FULL, np))
			fprintf(stderr, "tagprof: %s\n", line + np);
}

static int write_profile(struct capture *c, const char *path, int verbose)
{
	struct pprof *pp = capture__take(c);
	uint8_t *buf = NULL;
	size_t len = 0;
	int ret = pp ? pprof__encode(pp, &buf, &len) : -ENOMEM;

	if (!ret)
		ret = atomicfile__write(path, buf, len, 0640);
	if (ret)
		fprintf(stderr, "tagprof: cannot write %s: %s\n", path,
			strerror(-ret));
	else
		fprintf(stderr, "tagprof: wrote %s (%zu bytes, %zu stacks)\n",
			path, len, pprof__sample_count(pp));
	if (pp && verbose)
		print_counters(pp);
	free(buf);
	pprof__free(pp);
	return ret;
}

static void fill_capture_opts(const struct record_opts *o,
			      const struct child *ch, struct capture_opts *co)
{
	co->freq = o->freq;
	co->period = o->period;
	co->pids = o->npids ? o->pids : NULL;
	co->npids = o->npids;
	if (o->command) {
		co->pids = (const uint32_t *)&ch->pid;
		co->npids = 1;
		co->follow_children = true;
	}
	co->cgroup = o->cgroup;
	co->idle = o->idle;
	co->filters = (struct proccfg_filters){
		.label_key = o->label_key, .label_val = o->label_val,
		.tag_field = o->tag_field, .tag_name = o->tag_name };
	co->verbose = o->verbose;
	co->unwind = o->unwind;
	co->stack_bytes = o->stack_bytes;
	co->debuginfod_urls = o->debuginfod;
	co->timeline = o->timeline;
}

static void log_line(const char *line)
{
	fprintf(stderr, "tagprof: %s\n", line);
}

static bool output_writable(void *ctx)
{
	return !atomicfile__check_writable(ctx);
}

/* Once the BPF programs are loaded and attached and the perf events open,
 * reading processes is left, and writing the output: CAP_DAC_OVERRIDE
 * stays only if its directory is not writable without it (root writing
 * into another user's directory). The command was started before, with
 * the privileges it was given. */
static int drop_privileges(struct capture *c, struct record_opts *o)
{
	const struct caps_probe probes[] = {
		{ CAP_BPF, capture__bpf_works, c },
		{ CAP_PERFMON, capture__bpf_works, c },
		{ CAP_DAC_OVERRIDE, output_writable, (void *)o->output },
	};
	char why[256];

	capture__prepare_drop(c);
	if (caps__drop(probes, sizeof(probes) / sizeof(probes[0]),
		       o->verbose ? log_line : NULL, why, sizeof(why))) {
		fprintf(stderr, "tagprof: %s\n", why);
		return -1;
	}
	return 0;
}

static int run(struct record_opts *o)
{
	struct capture_opts co = { 0 };
	struct child ch = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	struct capture *c = NULL;
	int ret = 1, child_status = -1, e, wstatus;
	uint64_t start, duration;
	char err[512];

	if (!o->freq && !o->period)
		o->freq = o->label_key || o->tag_field ? LABEL_FREQ :
							 DEFAULT_FREQ;
	if (!o->seconds && !o->command && o->until_pidfd < 0)
		o->seconds = DEFAULT_SECONDS;
	if (choose_event(o, &co.event))
		goto cleanup;
	if (o->command && child_start(o->command, &ch)) {
		fprintf(stderr, "tagprof: cannot start %s: %s\n", o->command[0],
			strerror(errno));
		goto cleanup;
	}
	fill_capture_opts(o, &ch, &co);
	symbolizer__set_demangle_default(!o->no_demangle);
	/* SIGHUP too: the terminal is gone, write the file. */
	signals__install(&stop_requested, &stop_requested);
	signals__flag(SIGCHLD, &child_changed);
	c = capture__start(&co, err, sizeof(err));
	if (!c) {
		fprintf(stderr, "tagprof: %s\n", err);
		goto cleanup;
	}
	if (drop_privileges(c, o))
		goto cleanup;
	start = clock__ns(CLOCK_MONOTONIC);
	if (o->verbose)
		/* From main: the exec and the dynamic loader before it are
		 * the same for any program of this size (tests/bench/startup.sh
		 * measures them apart). */
		fprintf(stderr, "tagprof: start-up: %.1f ms CPU, %.1f ms wall "
			"until sampling began\n",
			(clock__ns(CLOCK_PROCESS_CPUTIME_ID) - o->start_cpu_ns) / 1e6,
			(start - o->start_ns) / 1e6);
	if (o->command) {
		e = child_release(&ch);
		if (e) {
			fprintf(stderr, "tagprof: cannot run %s: %s\n",
				o->command[0], strerror(e));
			waitpid(ch.pid, NULL, 0);
			ch.pid = -1;
			ret = 127;
			goto cleanup;
		}
	}
	capture_loop(c, o, start, ch.pid, &child_status);
	duration = clock__ns(CLOCK_MONOTONIC) - start;
	capture__stop(c);
	capture__print_summary(c, duration);
	ret = write_profile(c, o->output, o->verbose) ? 1 : 0;

	if (ch.pid > 0) {
		if (child_status < 0 && waitpid(ch.pid, &wstatus, 0) == ch.pid)
			child_status = child_exit_status(wstatus);
		if (!ret && child_status >= 0)
			ret = child_status;
	}
cleanup:
	if (ch.go_fd >= 0) {	/* never released: don't leave it waiting */
		close(ch.go_fd);
		close(ch.err_fd);
		waitpid(ch.pid, NULL, 0);
	}
	capture__free(c);
	return ret;
}

int record_main(int argc, char **argv)
{
	static struct record_opts o;
	char why[256];
	int ret;

	o.start_cpu_ns = clock__ns(CLOCK_PROCESS_CPUTIME_ID);
	o.start_ns = clock__mono_ns();
	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret;
	if (!caps__can_profile(why, sizeof(why))) {
		fprintf(stderr, "tagprof: %s\n", why);
		return 1;
	}
	ret = atomicfile__check_writable(o.output);
	if (ret) {
		fprintf(stderr, "tagprof: cannot write %s: %s\n", o.output,
			strerror(-ret));
		return 1;
	}
	return run(&o);
}
