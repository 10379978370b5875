/* Register tags, for the end-to-end tests: a "query engine" whose
 * operators tag the reserved register (r15 on x86-64, x28 on arm64) before
 * calling shared code, with fields operator:16 (bits 0-15) and
 * pipeline:16 (bits 16-31).
 *
 * Operators: scan (1), and join (3), which runs in pipeline 3: its tag
 * 0x00030003 holds the same value in both fields, so a name given to
 * operator 3 must not show under pipeline, and a filter on one field must
 * ignore the other. Each operator also runs a function of its own under
 * its tag (op_scan_work, op_join_work), so that a sample's labels can be
 * checked against the code it was taken in, not only counted.
 *
 * shared and nested declare their tags, then spin untagged for a second in
 * warm_up() before they work for SECONDS, so that a profiler that started
 * with them knows the tags when the tagged work starts.
 *
 *	tagops shared SECONDS	scan and join both call shared_insert(),
 *				scan with 3 units of work, join with 1:
 *				shared_insert's samples split 75/25 between
 *				operator=scan and operator=join; each also
 *				runs its own function (1 unit)
 *	tagops nested SECONDS	operator scan calls stage_outer(), which sets
 *				pipeline=2 (keeping the operator bits) around
 *				its call of stage_inner(): stage_outer samples
 *				carry operator=scan and pipeline 0, stage_inner
 *				samples operator=scan pipeline=2; each level
 *				checks the value it restores (exit 3 if wrong)
 *	tagops names SECONDS	operators 5 and 6, 1:1, through shared_insert;
 *				the tags are declared at a quarter of the run
 *				(the profiler has found the process by then,
 *				without them), 5 is named "late_five" at half
 *				time, 6 never: no tag labels, then "5" and "6",
 *				then "late_five" and "6"
 *	tagops undeclared SECONDS  writes tags like shared but never declares
 *				them: no tag labels
 *	tagops phases SECONDS	known phases over time, for the timeline
 *				tests: thread q1 (label query_id=q1) runs
 *				scan alone for SECONDS, then thread q2
 *				(query_id=q2) runs join alone for SECONDS,
 *				then both run for SECONDS. After the warm-up,
 *				prints "phase N START_NS" per phase, N 1 to 3,
 *				START_NS its start on CLOCK_REALTIME (ns)
 *	tagops mixed SECONDS	declares scan, join and io (4), then sets a
 *				SIGUSR1 handler (so SigCgt in its status says
 *				the tags are published) and waits for the
 *				signal, spinning 1 ms in 10 untagged in
 *				wait_gate() (so that profilers attached to it
 *				find it); then for SECONDS runs each operator
 *				in turn for 20 ms: scan and join as in shared,
 *				io in op_io_read(), which reads /dev/zero with
 *				the syscall instruction itself (its time is
 *				mostly kernel time, under its tag). Exits
 *				after SECONDS, so profilers that wait for its
 *				exit all cover the same work.
 *
 * Every mode publishes the process context as service "tagops". Silent on
 * success; exit 1 on an API failure (or no SIGUSR1 within a minute), 2 on
 * bad usage, 3 on a bad restore.
 *
 * Built by GCC with -ffixed-r15 -DTAGPROF_TAG_REG_RESERVED (see the
 * Makefile). GCC 12 drops leaf functions' frame pointers at -O2 whatever
 * -mno-omit-leaf-frame-pointer says; KEEP_FRAME() makes it set one up, so
 * the frame-pointer unwinder sees each spinning leaf's caller. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <tagprof/tagprof.h>

#define OP_SCAN		1
#define OP_JOIN		3
#define OP_IO		4
#define OP_FIVE		5
#define OP_SIX		6
#define OP_MASK		0xffffULL
#define PIPELINE(p)	((uint64_t)(p) << 16)
#define TAG_SCAN	OP_SCAN
#define TAG_JOIN	(OP_JOIN | PIPELINE(3))
#define TAG_IO		OP_IO

#define UNIT_ITERS	20000	/* hash inserts in one unit: ~20-40 us */
#define WARM_UP_S	1.0
/* Not inlined, and not cloned either (GCC would make shared_insert.constprop
 * copies for constant arguments): the profile shows these names. */
#define SHARED		__attribute__((noipa))
#define KEEP_FRAME()	__asm__ volatile("" : : "r"(__builtin_frame_address(0)))

static uint64_t table[1 << 12];
static uint64_t seed = 0x9e3779b97f4a7c15ULL;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "tagops: %s: %s\n", what, strerror(-err));
	exit(1);
}

/* The work itself, inlined into each function so that samples land there:
 * a multiplicative hash and a table insert per iteration. */
static inline __attribute__((always_inline)) void insert_spin(unsigned long n)
{
	uint64_t s = seed;

	for (unsigned long i = 0; i < n; i++) {
		uint64_t h = (s += 0x9e3779b97f4a7c15ULL) * 0xff51afd7ed558ccdULL;

		h ^= h >> 33;
		table[h & (sizeof(table) / sizeof(table[0]) - 1)] += h;
	}
	seed = s;
}

/* Work per call varies uniformly over 0.5..1.5 of its mean: a fixed period
 * would beat with the sampling period, and samplers with different phases
 * would then see different shares. */
static unsigned long jitter(unsigned long mean)
{
	static uint64_t x = 88172645463325252ull;

	x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return mean / 2 + x % (mean ? mean : 1);
}

/* The code every operator shares. */
SHARED void shared_insert(unsigned int units)
{
	KEEP_FRAME();
	insert_spin(jitter((unsigned long)units * UNIT_ITERS));
}

/* Each operator's own code. */
SHARED void op_scan_work(void)
{
	KEEP_FRAME();
	insert_spin(jitter(UNIT_ITERS));
}

SHARED void op_join_work(void)
{
	KEEP_FRAME();
	insert_spin(jitter(UNIT_ITERS));
}

/* An operator: its tag is set for the call of its own code (if any) and
 * of the shared code only. */
static __attribute__((noinline)) void run_op(uint64_t tag, void (*own)(void),
					     unsigned int units)
{
	uint64_t prev = tagprof_tag_swap(tag);

	if (own)
		own();
	shared_insert(units);
	tagprof_tag_swap(prev);
}

static void declare(void)
{
	static const char *const fields[] = { "operator:16", "pipeline:16" };
	int err = tagprof_tags_declare(TAGPROF_TAG_REG_NAME, fields, 2);

	if (err)
		die("tagprof_tags_declare", err);
}

static void name(uint64_t op, const char *s)
{
	int err = tagprof_tag_name("operator", op, s);

	if (err)
		die("tagprof_tag_name", err);
}

/* Untagged work for the first second after the declaration: the profiler
 * finds a process at its first sample, and when that sample came while the
 * dynamic loader was still mapping libtagprof (often: it takes about one
 * sampling period) it looks again only half a second later. Tagged work
 * starts once the tags are surely known, so its samples all carry them. */
SHARED void warm_up(void)
{
	double end = now_s() + WARM_UP_S;

	KEEP_FRAME();
	while (now_s() < end)
		insert_spin(UNIT_ITERS);
}

static void mode_shared(double secs, bool declared)
{
	double end;

	if (declared) {
		declare();
		name(OP_SCAN, "scan");
		name(OP_JOIN, "join");
		warm_up();
	}
	end = now_s() + secs;
	while (now_s() < end) {
		for (int k = 0; k < 50; k++) {
			run_op(TAG_SCAN, op_scan_work, 3);
			run_op(TAG_JOIN, op_join_work, 1);
		}
	}
}

/* ---- nested ---- */

/* A swap that ends a tagged call hands back the tag the callee left (got,
 * which must be the one set for it) and leaves the one from before it. */
static void check_restore(uint64_t got, uint64_t set, uint64_t before)
{
	uint64_t now = tagprof_tag_get();

	if (got != set || now != before) {
		fprintf(stderr, "tagops: got back %#llx (set %#llx), now %#llx (before %#llx)\n",
			(unsigned long long)got, (unsigned long long)set,
			(unsigned long long)now, (unsigned long long)before);
		exit(3);
	}
}

SHARED void stage_inner(void)
{
	KEEP_FRAME();
	insert_spin(UNIT_ITERS);
}

/* Work of its own under the caller's tag, then pipeline 2 for the inner
 * stage: operator bits kept, pipeline field replaced. */
SHARED void stage_outer(void)
{
	uint64_t before = tagprof_tag_get(), tag = (before & OP_MASK) | PIPELINE(2), prev;

	insert_spin(UNIT_ITERS);
	prev = tagprof_tag_swap(tag);
	stage_inner();
	check_restore(tagprof_tag_swap(prev), tag, before);
}

static void mode_nested(double secs)
{
	double end;

	declare();
	name(OP_SCAN, "scan");
	warm_up();
	end = now_s() + secs;
	while (now_s() < end) {
		for (int k = 0; k < 50; k++) {
			uint64_t prev = tagprof_tag_swap(OP_SCAN);

			stage_outer();
			check_restore(tagprof_tag_swap(prev), OP_SCAN, prev);
		}
	}
}

/* ---- names ---- */

static void mode_names(double secs)
{
	double start = now_s(), quarter = start + secs / 4, half = start + secs / 2;
	double end = start + secs, t;
	bool declared = false, named = false;

	while ((t = now_s()) < end) {
		if (!declared && t >= quarter) {
			declare();
			declared = true;
		}
		if (!named && t >= half) {
			name(OP_FIVE, "late_five");
			named = true;
		}
		for (int k = 0; k < 50; k++) {
			run_op(OP_FIVE, NULL, 1);
			run_op(OP_SIX, NULL, 1);
		}
	}
}

/* ---- mixed ---- */

#define IO_BYTES	(128 << 10)
#define CHUNK_S		0.020

static char io_buf[IO_BYTES];
static int zero_fd = -1;
static volatile sig_atomic_t gate_open;

/* read(2) issued right here: no libc wrapper, built without -ffixed-r15,
 * between the tagged code and the kernel. */
static long raw_read(int fd, void *buf, size_t n)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"((long)SYS_read), "D"((long)fd), "S"(buf), "d"(n)
			 : "rcx", "r11", "memory");
	return ret;
#else
	register long x8 __asm__("x8") = SYS_read;
	register long x0 __asm__("x0") = fd;
	register long x1 __asm__("x1") = (long)buf;
	register long x2 __asm__("x2") = (long)n;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	return x0;
#endif
}

/* The io operator's own code: its time is spent in the kernel, zeroing
 * io_buf, with the tag in the user registers saved at syscall entry. */
SHARED void op_io_read(void)
{
	KEEP_FRAME();
	if (raw_read(zero_fd, io_buf, sizeof(io_buf)) != (long)sizeof(io_buf))
		die("read /dev/zero", -EIO);
}

SHARED void wait_gate(void)
{
	KEEP_FRAME();
	insert_spin(UNIT_ITERS / 25);	/* ~1 ms */
}

static void on_usr1(int sig)
{
	(void)sig;
	gate_open = 1;
}

/* ---- phases ---- */

struct phase_thread {
	const char *query;
	uint64_t tag;
	void (*own)(void);
	double from, to;	/* CLOCK_MONOTONIC seconds it works between */
};

static uint64_t real_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Idle until from (sleeping: no samples), then the operator until to,
 * under the thread's query label. */
static void *phase_worker(void *arg)
{
	const struct phase_thread *t = arg;
	tagprof_labels *l = tagprof_labels_new();
	double now;

	if (!l || tagprof_labels_add(l, "query_id", t->query))
		die("tagprof_labels", ENOMEM);
	tagprof_attach(l);
	while ((now = now_s()) < t->from)
		usleep((useconds_t)((t->from - now) * 1e6) + 1);
	while (now_s() < t->to)
		run_op(t->tag, t->own, 1);
	tagprof_attach(NULL);
	tagprof_labels_free(l);
	return NULL;
}

static void mode_phases(double secs)
{
	/* q1 scans in phases 1 and 3 (a thread for each), q2 joins in 2 and 3 */
	struct phase_thread q[3] = {
		{ "q1", TAG_SCAN, op_scan_work, 0, 1 },
		{ "q2", TAG_JOIN, op_join_work, 1, 3 },
		{ "q1", TAG_SCAN, op_scan_work, 2, 3 },
	};
	pthread_t th[3];
	double start;
	uint64_t real;

	declare();
	name(OP_SCAN, "scan");
	name(OP_JOIN, "join");
	warm_up();
	start = now_s();
	real = real_ns();
	for (int i = 0; i < 3; i++) {
		q[i].from = start + q[i].from * secs;
		q[i].to = start + q[i].to * secs;
		if (pthread_create(&th[i], NULL, phase_worker, &q[i]))
			die("pthread_create", EAGAIN);
	}
	for (int n = 0; n < 3; n++)
		printf("phase %d %llu\n", n + 1,
		       (unsigned long long)(real + (uint64_t)(n * secs * 1e9)));
	fflush(stdout);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
}

static void mode_mixed(double secs)
{
	const struct timespec pause = { 0, 9000000 };
	struct sigaction sa = { .sa_handler = on_usr1 };
	double limit = now_s() + 60, end, t;

	zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (zero_fd < 0)
		die("open /dev/zero", -errno);
	declare();
	name(OP_SCAN, "scan");
	name(OP_JOIN, "join");
	name(OP_IO, "io");
	/* Last: a caught SIGUSR1 (SigCgt in /proc/PID/status) tells the test
	 * the tags are published. */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		die("sigaction", -errno);
	while (!gate_open) {
		if (now_s() > limit)
			die("no SIGUSR1 within a minute", -ETIMEDOUT);
		wait_gate();
		nanosleep(&pause, NULL);
	}
	/* Operators in 20 ms turns, not interleaved finely: two samplers
	 * then count nearly the same samples in each turn (to one sample in
	 * each stretch the thread runs), where interleaving would give each
	 * its own binomial draw of which operator a sample lands in. */
	end = now_s() + secs;
	while ((t = now_s()) < end) {
		for (double e = t + CHUNK_S; now_s() < e;)
			run_op(TAG_SCAN, op_scan_work, 3);
		for (double e = now_s() + CHUNK_S; now_s() < e;)
			run_op(TAG_JOIN, op_join_work, 1);
		for (double e = now_s() + CHUNK_S; now_s() < e;) {
			uint64_t prev = tagprof_tag_swap(TAG_IO);

			op_io_read();
			tagprof_tag_swap(prev);
		}
	}
	close(zero_fd);
}

int main(int argc, char **argv)
{
	double secs;
	int err;

	/* What the C runtime left in the register is no tag. */
	tagprof_tag_swap(0);
	if (argc != 3 || (secs = atof(argv[2])) <= 0) {
		fprintf(stderr, "usage: tagops shared|nested|names|undeclared|mixed|phases SECONDS\n");
		return 2;
	}
	err = tagprof_process_init("tagops");
	if (err)
		die("tagprof_process_init", err);
	if (!strcmp(argv[1], "shared"))
		mode_shared(secs, true);
	else if (!strcmp(argv[1], "nested"))
		mode_nested(secs);
	else if (!strcmp(argv[1], "names"))
		mode_names(secs);
	else if (!strcmp(argv[1], "undeclared"))
		mode_shared(secs, false);
	else if (!strcmp(argv[1], "mixed"))
		mode_mixed(secs);
	else if (!strcmp(argv[1], "phases"))
		mode_phases(secs);
	else
		return 2;
	return tagprof_tag_get() == 0 ? 0 : 3;
}
