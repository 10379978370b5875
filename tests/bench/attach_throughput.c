/* Task throughput with and without a label set attached per task, for
 * tests/bench/attach_throughput.sh.
 *
 *	attach_throughput calibrate           -> spin iterations per microsecond
 *	attach_throughput MODE SPIN MS        -> "WALL CPU": tasks/s over MS
 *	                                         milliseconds, and tasks per
 *	                                         worker CPU-second x workers
 *
 * MODE is "plain" or "attach". Two worker threads run micro-tasks back to
 * back, each a calibrated SPIN-iteration busy loop (about 1 us), until the
 * main thread raises the stop flag; "attach" wraps every task in
 * prev = tagprof_attach(set); task; tagprof_attach(prev), cycling through
 * 16 sets shared by both workers, as a pool serving many queries would.
 * Workers count their own tasks, so the only shared lines are the stop
 * flag and the (read-only) sets. The CPU-time rate is what the workers
 * would do with a CPU each: on a shared or virtual machine, where a worker
 * loses its CPU now and then, it is the steadier figure. */
#include "tagprof/tagprof.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WORKERS	2
#define NSETS	16

struct worker {
	pthread_t thread;
	long tasks;
	double cpu_s;
	char pad[64];	/* counters on lines of their own */
};

static struct worker workers[WORKERS];
static tagprof_labels *sets[NSETS];
static pthread_barrier_t start;
static int stop;
static int attach;
static long spin_iters;

static double clock_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* The task: a busy loop the compiler cannot remove or shorten. */
__attribute__((noinline)) static void task(long n)
{
	for (long i = 0; i < n; i++)
		__asm__ volatile("");
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	long n = 0, k = w - workers;
	double cpu0;

	pthread_barrier_wait(&start);
	cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	if (attach) {
		while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
			const tagprof_labels *prev = tagprof_attach(sets[(n + k) % NSETS]);

			task(spin_iters);
			tagprof_attach(prev);
			n++;
		}
	} else {
		while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
			task(spin_iters);
			n++;
		}
	}
	w->cpu_s = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	w->tasks = n;
	return NULL;
}

static int make_sets(void)
{
	char v[16];

	for (int i = 0; i < NSETS; i++) {
		sets[i] = tagprof_labels_new();
		snprintf(v, sizeof(v), "q%d", i);
		if (!sets[i] || tagprof_labels_add(sets[i], "query_id", v) ||
		    tagprof_labels_add(sets[i], "tenant", i & 1 ? "acme" : "globex"))
			return -1;
	}
	return 0;
}

static void run(long ms, double *wall_rate, double *cpu_rate)
{
	struct timespec d = { ms / 1000, (ms % 1000) * 1000000 };
	long total = 0;
	double t0, t1, cpu = 0;

	pthread_barrier_init(&start, NULL, WORKERS + 1);
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
	pthread_barrier_wait(&start);
	t0 = now_s();
	nanosleep(&d, NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < WORKERS; i++) {
		pthread_join(workers[i].thread, NULL);
		total += workers[i].tasks;
		cpu += workers[i].cpu_s;
	}
	t1 = now_s();
	*wall_rate = (double)total / (t1 - t0);
	*cpu_rate = (double)total / cpu * WORKERS;
}

/* Iterations per microsecond: the best of several timed runs, so a
 * preempted run does not make the tasks too short. */
static double calibrate(void)
{
	const long n = 20000000;
	double best = 0;

	for (int i = 0; i < 7; i++) {
		double t0 = now_s(), rate;

		task(n);
		rate = (double)n / ((now_s() - t0) * 1e6);
		if (rate > best)
			best = rate;
	}
	return best;
}

int main(int argc, char **argv)
{
	double wall, cpu;

	if (argc == 2 && !strcmp(argv[1], "calibrate")) {
		printf("%.0f\n", calibrate());
		return 0;
	}
	if (argc != 4)
		return 2;
	attach = !strcmp(argv[1], "attach");
	spin_iters = atol(argv[2]);
	if (make_sets())
		return 1;
	run(atol(argv[3]), &wall, &cpu);
	printf("%.0f %.0f\n", wall, cpu);
	return 0;
}
