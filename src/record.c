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
#include <sys/wait.h>

#include "caps.h"
#include "events.h"
#include "kallsyms.h"
#include "pprof.h"
#include "procs.h"
#include "record.h"
#include "sample_event.h"
#include "sampler.h"
#include "sink.h"
#include "symbolize.h"
#include "threadctx.h"

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
	char **command;		/* after --, or NULL */
};

/* Everything one capture accumulates. */
struct capture {
	struct record_opts *o;
	struct tp_event ev;
	struct pprof *pp;
	struct procs *procs;
	struct kallsyms *ks;
	struct symbolizer *sym;
	struct threadctx *tc;
	uint64_t records, samples, bad_records;
	int64_t start_real_ns;
	uint64_t start_mono_ns;
};

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t child_changed;

void record_usage(FILE *out)
{
	fprintf(out,
"usage: tagprof record [-a] [-p PID[,PID...]] [-e EVENT] [-F HZ | -c PERIOD]\n"
"                      [-d SECONDS] [-o FILE] [-v] [--cgroup PATH] [--idle]\n"
"                      [--label KEY=VALUE] [--tag FIELD=NAME]\n"
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
"                        as INST_RETIRED.PREC_DIST; :p, :pp, :ppp ask for PEBS\n"
"  -F, --freq HZ         samples per second per CPU (default %d, or %d\n"
"                        with --label or --tag)\n"
"  -c, --count PERIOD    one sample every PERIOD events (ns for cpu-clock)\n"
"  -d, --duration SECS   stop after SECS seconds (default %d; with COMMAND,\n"
"                        when the command exits); Ctrl-C stops early and\n"
"                        still writes the file\n"
"  -o, --output FILE     pprof to write (default tagprof.pb.gz)\n"
"  -v, --verbose         more detail; -vv adds libbpf debug output\n"
"  -h, --help            this help\n"
"\n"
"With -- COMMAND, tagprof starts COMMAND, profiles it and the processes it\n"
"starts until it exits, and exits with its status.\n",
		DEFAULT_FREQ, LABEL_FREQ, DEFAULT_SECONDS);
}

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void on_sigchld(int sig)
{
	(void)sig;
	child_changed = 1;
}

static void install_signals(void)
{
	struct sigaction sa = { 0 };

	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop_signal;	/* no SA_RESTART: poll must wake */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_sigchld;
	sigaction(SIGCHLD, &sa, NULL);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Parses a positive decimal into *v (at most max); false if not one. */
static bool parse_u64(const char *s, uint64_t max, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end || x == 0 || x > max)
		return false;
	*v = x;
	return true;
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
		if (!parse_u64(tok, INT32_MAX, &v)) {
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
		{ "tag", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end;
	int c;

	o->event = "auto";
	o->output = "tagprof.pb.gz";
	optind = 1;
	/* '+': stop at the first non-option, so COMMAND keeps its flags. */
	while ((c = getopt_long(argc, argv, "+ap:e:F:c:d:o:vh", longopts,
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
		case 'F':
			if (!parse_u64(optarg, 100000, &o->freq)) {
				fprintf(stderr, "tagprof: -F wants a frequency of 1 to 100000 Hz, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'c':
			if (!parse_u64(optarg, UINT64_MAX >> 1, &o->period)) {
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
			if (parse_pair("--tag", "FIELD=NAME", optarg, 255,
				       &o->tag_field, &o->tag_name))
				return 2;
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
	int ret;

	if (!strcmp(o->event, "auto")) {
		events__auto(ev);
		fprintf(stderr, "tagprof: event auto: using %s%s\n", ev->name,
			ev->hardware ? " (precise cycles)" :
			" (no precise cycles sampling on this machine)");
		return 0;
	}
	if (events__parse(o->event, ev, err, sizeof(err))) {
		fprintf(stderr, "tagprof: %s\n", err);
		return 1;
	}
	ret = events__probe(&ev->attr);
	if (ret) {
		events__explain(ev, -ret, err, sizeof(err));
		fprintf(stderr, "tagprof: %s\n", err);
		return 1;
	}
	return 0;
}

#define MAX_LABELS 64

static void add_sample(struct capture *c, const struct tp_sample *s,
		       const uint8_t *blob, const uint64_t *frames)
{
	uint64_t locs[2 * TP_MAX_FRAMES];
	struct pprof_label labels[MAX_LABELS];
	char comm[TP_COMM_LEN + 1], strs[8192];
	struct proc *p = NULL;
	int64_t values[2];
	size_t n, nl = 0;

	memcpy(comm, s->comm, TP_COMM_LEN);
	comm[TP_COMM_LEN] = '\0';
	if (s->pid) {
		p = procs__get(c->procs, s->pid, s->start_ns, comm);
		threadctx__on_sample(c->tc, s->pid);
	}
	n = symbolizer__stack(c->sym, p, frames, s->user_depth,
			      frames + s->user_depth, s->kern_depth, locs);

	labels[nl++] = (struct pprof_label){ .key = "process",
					     .str = p ? p->exe : comm };
	labels[nl++] = (struct pprof_label){ .key = "thread_name", .str = comm };
	labels[nl++] = (struct pprof_label){ .key = "pid", .num = s->pid };
	labels[nl++] = (struct pprof_label){ .key = "tid", .num = s->tid };
	labels[nl++] = (struct pprof_label){ .key = "cpu", .num = s->cpu,
					     .num_unit = "cpu" };
	nl += threadctx__labels(c->tc, &(struct threadctx_sample){
		.pid = s->pid, .kind = s->ctx_kind, .blob = blob,
		.size = s->ctx_size, .tag_valid = s->tag_valid, .tag = s->tag },
		labels + nl, MAX_LABELS - nl, strs, sizeof(strs));
	values[0] = 1;
	values[1] = (int64_t)s->period;
	pprof__add_sample(c->pp, locs, n, values, labels, nl);
	c->samples++;
}

/* Ring-buffer callback: never trust a record's own lengths blindly. */
static int on_record(void *ctx, const void *data, size_t size)
{
	struct capture *c = ctx;
	const struct tp_sample *s = data;
	const struct tp_task_event *t = data;
	size_t pad;

	c->records++;
	if (size < sizeof(__u32)) {
		c->bad_records++;
		return 0;
	}
	switch (s->type) {
	case TP_REC_SAMPLE:
		pad = size >= sizeof(*s) ? (s->ctx_size + 7u) & ~7u : 0;
		if (size < sizeof(*s) || s->user_depth > TP_MAX_FRAMES ||
		    s->kern_depth > TP_MAX_FRAMES || s->ctx_size > TP_CTX_SPACE ||
		    size < sizeof(*s) + pad + (s->user_depth + s->kern_depth) *
			    sizeof(uint64_t)) {
			c->bad_records++;
			return 0;
		}
		add_sample(c, s, (const uint8_t *)(s + 1),
			   (const uint64_t *)((const uint8_t *)(s + 1) + pad));
		break;
	case TP_REC_EXEC:
	case TP_REC_EXIT:
		if (size < sizeof(*t)) {
			c->bad_records++;
			return 0;
		}
		procs__forget(c->procs, t->pid);
		if (t->type == TP_REC_EXEC)
			threadctx__on_exec(c->tc, t->pid);
		else
			threadctx__on_exit(c->tc, t->pid);
		break;
	default:
		c->bad_records++;
	}
	return 0;
}

/* Forks COMMAND stopped before exec; it runs once released. A CLOEXEC
 * pipe reports a failed exec back to us. */
struct child {
	pid_t pid;
	int go_fd;	/* write a byte: exec */
	int err_fd;	/* read: errno of a failed exec, or EOF */
};

static int child_start(char **argv, struct child *ch)
{
	int go[2], err[2];
	char b;

	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		return -errno;
	ch->pid = fork();
	if (ch->pid < 0)
		return -errno;
	if (ch->pid == 0) {
		int e;

		close(go[1]);
		close(err[0]);
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	ch->go_fd = go[1];
	ch->err_fd = err[0];
	return 0;
}

/* Lets the child exec; returns 0 or the errno of its failed exec. */
static int child_release(struct child *ch)
{
	int e = 0;
	char b = 1;

	if (write(ch->go_fd, &b, 1) != 1)
		e = errno;
	close(ch->go_fd);
	ch->go_fd = -1;
	if (read(ch->err_fd, &e, sizeof(e)) != sizeof(e))
		e = 0;	/* EOF: exec succeeded */
	close(ch->err_fd);
	return e;
}

static int exit_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 1;
}

static void status_line(const struct capture *c, uint64_t elapsed_ns,
			const struct tp_stats *st)
{
	fprintf(stderr, "\r\033[Ktagprof: %.1fs  samples %" PRIu64
		"  lost %llu  processes %zu", elapsed_ns / 1e9, c->samples,
		(unsigned long long)st->lost, procs__count(c->procs));
	fflush(stderr);
}

/* Polls until the duration passes, a signal arrives or the child exits.
 * Sets *child_status when the child was reaped. */
static void capture_loop(struct capture *c, struct sampler *s,
			 pid_t child, int *child_status)
{
	uint64_t limit = c->o->seconds * 1e9, elapsed, last_status = 0;
	bool tty = isatty(STDERR_FILENO);
	struct tp_stats st;
	int wstatus;

	for (;;) {
		sampler__poll(s, 100);
		threadctx__tick(c->tc);
		elapsed = clock_ns(CLOCK_MONOTONIC) - c->start_mono_ns;
		if (stop_requested || (limit && elapsed >= limit))
			break;
		if (child > 0 && child_changed) {
			child_changed = 0;
			if (waitpid(child, &wstatus, WNOHANG) == child) {
				*child_status = exit_status(wstatus);
				break;
			}
		}
		if (tty && elapsed - last_status >= 500000000ull) {
			sampler__stats(s, &st, NULL);
			status_line(c, elapsed, &st);
			last_status = elapsed;
		}
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
}

/* Every way reading a thread's context can fail, counted. */
static void add_context_comment(struct capture *c, const struct tp_stats *st)
{
	const struct threadctx_stats *ts = threadctx__stats(c->tc);
	char buf[512];

	snprintf(buf, sizeof(buf),
		 "thread context: %llu samples with context, %" PRIu64
		 " processes with context; failures: %llu TLS page not "
		 "readable, %llu record unreadable, %llu invalid record, %llu "
		 "oversize record, %llu torn record, %" PRIu64 " unknown key, %"
		 PRIu64 " invalid UTF-8 replaced, %" PRIu64 " truncated, %"
		 PRIu64 " location unresolved; %llu samples dropped by --label",
		 (unsigned long long)st->ctx_read, ts->procs_found,
		 (unsigned long long)st->ctx_tls_unreadable,
		 (unsigned long long)st->ctx_record_unreadable,
		 (unsigned long long)st->ctx_invalid,
		 (unsigned long long)st->ctx_oversize,
		 (unsigned long long)st->ctx_torn, ts->unknown_key, ts->bad_utf8,
		 ts->truncated, ts->locate_failed,
		 (unsigned long long)st->label_filtered);
	pprof__add_comment(c->pp, buf);
	snprintf(buf, sizeof(buf),
		 "register tags: %llu samples with a tag, %" PRIu64 " processes "
		 "declared tags; %llu saved registers unreadable, %" PRIu64
		 " field values without a name; %llu samples dropped by --tag",
		 (unsigned long long)st->tag_read, ts->tag_procs,
		 (unsigned long long)st->tag_unreadable, ts->tag_unnamed,
		 (unsigned long long)st->tag_filtered);
	pprof__add_comment(c->pp, buf);
}

static void add_comments(struct capture *c, const struct tp_stats *st,
			 const struct tp_stats *per_cpu, int ncpus)
{
	const struct symbolize_stats *ss = symbolizer__stats(c->sym);
	const struct procs_stats *ps = procs__stats(c->procs);
	char buf[256];
	int n;

	pprof__add_comment(c->pp, "tagprof " TAGPROF_VERSION);
	snprintf(buf, sizeof(buf), "event: %s", c->ev.name);
	pprof__add_comment(c->pp, buf);
	snprintf(buf, sizeof(buf),
		 "samples: %" PRIu64 " received, %llu lost (ring buffer full), "
		 "%" PRIu64 " malformed", c->samples,
		 (unsigned long long)st->lost, c->bad_records);
	pprof__add_comment(c->pp, buf);
	for (int i = 0; i < ncpus; i++) {
		if (!per_cpu[i].lost)
			continue;
		n = snprintf(buf, sizeof(buf), "lost on cpu %d: %llu", i,
			     (unsigned long long)per_cpu[i].lost);
		if (n > 0)
			pprof__add_comment(c->pp, buf);
	}
	snprintf(buf, sizeof(buf),
		 "frames: %" PRIu64 " user (%" PRIu64 " unmapped, %" PRIu64
		 " without symbol), %" PRIu64 " kernel (%" PRIu64
		 " without symbol)", ss->user_frames, ss->unmapped,
		 ss->no_symbol, ss->kernel_frames, ss->kernel_no_symbol);
	pprof__add_comment(c->pp, buf);
	snprintf(buf, sizeof(buf),
		 "processes: %" PRIu64 " seen, %" PRIu64 " maps unreadable, %"
		 PRIu64 " pid reused, %" PRIu64 " binaries unreadable; %llu "
		 "user threads without user stack, %llu exec/exit events lost",
		 ps->procs_seen, ps->maps_failed, ps->pid_reused,
		 ps->elf_failed, (unsigned long long)st->no_user_stack,
		 (unsigned long long)st->task_lost);
	pprof__add_comment(c->pp, buf);
	add_context_comment(c, st);
}

static int write_profile(struct capture *c, uint64_t duration_ns)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int ret;

	pprof__set_time(c->pp, c->start_real_ns, duration_ns);
	ret = pprof__encode(c->pp, &buf, &len);
	if (!ret)
		ret = sink__write_atomic(c->o->output, buf, len, 0640);
	if (ret)
		fprintf(stderr, "tagprof: cannot write %s: %s\n", c->o->output,
			strerror(-ret));
	else
		fprintf(stderr, "tagprof: wrote %s (%zu bytes, %zu stacks)\n",
			c->o->output, len, pprof__sample_count(c->pp));
	free(buf);
	return ret;
}

static void print_context_summary(const struct capture *c,
				  const struct tp_stats *st)
{
	const struct threadctx_stats *ts = threadctx__stats(c->tc);
	unsigned long long fails = st->ctx_tls_unreadable +
				   st->ctx_record_unreadable + st->ctx_invalid +
				   st->ctx_oversize + st->ctx_torn;

	if (!st->ctx_read && !fails && !ts->procs_found)
		return;	/* (tags are reported below, with the context) */
	fprintf(stderr, "tagprof: thread context: %llu samples labelled, %"
		PRIu64 " processes; %llu TLS unreadable, %llu record "
		"unreadable, %llu invalid, %llu oversize, %llu torn, %" PRIu64
		" unknown key\n", (unsigned long long)st->ctx_read,
		ts->procs_found, (unsigned long long)st->ctx_tls_unreadable,
		(unsigned long long)st->ctx_record_unreadable,
		(unsigned long long)st->ctx_invalid,
		(unsigned long long)st->ctx_oversize,
		(unsigned long long)st->ctx_torn, ts->unknown_key);
	if (c->o->label_key)
		fprintf(stderr, "tagprof: --label %s=%s dropped %llu samples\n",
			c->o->label_key, c->o->label_val,
			(unsigned long long)st->label_filtered);
	if (st->tag_read || ts->tag_procs)
		fprintf(stderr, "tagprof: register tags: %llu samples tagged, %"
			PRIu64 " processes\n", (unsigned long long)st->tag_read,
			ts->tag_procs);
	if (c->o->tag_field)
		fprintf(stderr, "tagprof: --tag %s=%s dropped %llu samples\n",
			c->o->tag_field, c->o->tag_name,
			(unsigned long long)st->tag_filtered);
}

static void print_summary(const struct capture *c, const struct tp_stats *st,
			  uint64_t duration_ns)
{
	fprintf(stderr,
		"tagprof: %.1f s, event %s, %" PRIu64 " samples, %llu lost, "
		"%" PRIu64 " processes\n", duration_ns / 1e9, c->ev.name,
		c->samples, (unsigned long long)st->lost,
		procs__stats(c->procs)->procs_seen);
	if (st->lost)
		fprintf(stderr, "tagprof: warning: %llu samples were lost "
			"because the ring buffer was full (see the profile's "
			"comments for the CPUs)\n", (unsigned long long)st->lost);
	if (!c->samples)
		fprintf(stderr, "tagprof: warning: no samples were collected\n");
	print_context_summary(c, st);
}

static struct pprof *new_pprof(const struct capture *c)
{
	struct pprof_vt types[2] = {
		{ "samples", "count" },
		{ c->ev.sample_type, c->ev.sample_unit },
	};
	int64_t period = c->o->period;

	if (!period && c->ev.software_clock)
		period = 1000000000ll / c->o->freq;
	return pprof__new(types, 2, types[1], period);
}

static int capture_init(struct capture *c, struct record_opts *o)
{
	c->o = o;
	if (!o->freq && !o->period)
		o->freq = o->label_key || o->tag_field ? LABEL_FREQ :
							 DEFAULT_FREQ;
	if (!o->seconds && !o->command)
		o->seconds = DEFAULT_SECONDS;
	c->ks = kallsyms__load(NULL);
	if (!c->ks)
		fprintf(stderr, "tagprof: warning: kernel symbols unavailable "
			"(/proc/kallsyms: %s)\n", strerror(errno));
	c->procs = procs__new();
	c->sym = symbolizer__new(c->procs, c->ks);
	c->pp = new_pprof(c);
	c->tc = threadctx__new(&(struct threadctx_filters){
		.label_key = o->label_key, .label_val = o->label_val,
		.tag_field = o->tag_field, .tag_name = o->tag_name });
	if (!c->procs || !c->sym || !c->pp || !c->tc) {
		fprintf(stderr, "tagprof: out of memory\n");
		return 1;
	}
	symbolizer__set_pprof(c->sym, c->pp);
	return 0;
}

static void capture_free(struct capture *c)
{
	threadctx__free(c->tc);
	pprof__free(c->pp);
	symbolizer__free(c->sym);
	procs__free(c->procs);
	kallsyms__free(c->ks);
}

static int run(struct record_opts *o)
{
	struct sampler_opts so = { 0 };
	struct capture c = { 0 };
	struct child ch = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	struct tp_stats st, *per_cpu = NULL;
	struct sampler *s = NULL;
	int ret = 1, child_status = -1, e, wstatus;
	uint64_t duration;
	char err[512];

	/* The event decides the pprof's sample types: choose it first. */
	if (choose_event(o, &c.ev) || capture_init(&c, o))
		goto cleanup;
	if (o->command && child_start(o->command, &ch)) {
		fprintf(stderr, "tagprof: cannot start %s: %s\n", o->command[0],
			strerror(errno));
		goto cleanup;
	}
	so.event = c.ev;
	so.use_period = o->period != 0;
	so.freq = o->freq;
	so.period = o->period;
	so.pids = o->npids ? o->pids : NULL;
	so.npids = o->npids;
	if (o->command) {
		so.pids = (uint32_t *)&ch.pid;
		so.npids = 1;
		so.follow_children = true;
	}
	so.cgroup = o->cgroup;
	so.include_idle = o->idle;
	so.filter_label = o->label_key != NULL;
	so.filter_tag = o->tag_field != NULL;
	so.verbose = o->verbose;

	install_signals();
	s = sampler__start(&so, on_record, &c, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "tagprof: %s\n", err);
		goto cleanup;
	}
	threadctx__attach(c.tc, s);
	/* The in-kernel --label filter drops samples of processes it has no
	 * settings for: configure every running process up front. */
	if (o->label_key || o->tag_field)
		threadctx__scan_all(c.tc);
	c.start_real_ns = clock_ns(CLOCK_REALTIME);
	c.start_mono_ns = clock_ns(CLOCK_MONOTONIC);
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
	capture_loop(&c, s, ch.pid, &child_status);
	duration = clock_ns(CLOCK_MONOTONIC) - c.start_mono_ns;
	sampler__stop(s);

	per_cpu = calloc(sampler__ncpus(s), sizeof(*per_cpu));
	sampler__stats(s, &st, per_cpu);
	if (per_cpu)
		add_comments(&c, &st, per_cpu, sampler__ncpus(s));
	print_summary(&c, &st, duration);
	ret = write_profile(&c, duration) ? 1 : 0;

	if (ch.pid > 0) {
		if (child_status < 0 && waitpid(ch.pid, &wstatus, 0) == ch.pid)
			child_status = exit_status(wstatus);
		if (!ret && child_status >= 0)
			ret = child_status;
	}
cleanup:
	if (ch.go_fd >= 0) {	/* never released: don't leave it waiting */
		close(ch.go_fd);
		close(ch.err_fd);
		waitpid(ch.pid, NULL, 0);
	}
	free(per_cpu);
	sampler__free(s);
	capture_free(&c);
	return ret;
}

int record_main(int argc, char **argv)
{
	static struct record_opts o;
	char why[256];
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret;
	if (!caps__can_profile(why, sizeof(why))) {
		fprintf(stderr, "tagprof: %s\n", why);
		return 1;
	}
	ret = sink__check_writable(o.output);
	if (ret) {
		fprintf(stderr, "tagprof: cannot write %s: %s\n", o.output,
			strerror(-ret));
		return 1;
	}
	return run(&o);
}
