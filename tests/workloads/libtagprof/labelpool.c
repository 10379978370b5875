/* A thread pool serving three queries with libtagprof: 4 workers run
 * micro-tasks of 1-20 us, each task attaching its query's label set
 * (query_id=qN tenant=acme) for its duration. Per worker, every 10 tasks
 * are 5 of q1, 3 of q2 and 2 of q3 with durations drawn the same way, so
 * the queries' CPU shares are 50/30/20. Each query's task runs its own
 * function (spin_q1, spin_q2, spin_q3): a sample whose leaf is spin_qN was
 * taken while qN's set was attached, so the profile can check that each
 * sample carries the labels of its own moment, not only the shares.
 *
 * Built four ways (see the Makefile): libtagprof shared, static in a PIE,
 * static in a non-PIE executable, and (LABELPOOL_DLOPEN) dlopen()ed one
 * second after start, before which tasks run unlabelled (in task_spin).
 * LABELPOOL_NOLABELS=1 in the environment runs the same tasks without ever
 * building or attaching a set (for the dlopen build: without loading the
 * library), as a baseline for benchmarks.
 * usage: labelpool SECONDS [PATH_TO_LIBTAGPROF_SO] */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <tagprof/tagprof.h>

#define WORKERS 4
#define DLOPEN_AFTER_S 1.0

static const char *const names[3] = { "q1", "q2", "q3" };
static const int cycle[10] = { 0, 1, 0, 2, 0, 1, 0, 2, 0, 1 };
static tagprof_labels *sets[3];
static volatile int ready;	/* sets built: label the tasks */
static double secs, ipu;
static int nolabels;

/* The library's entry points: direct calls, or looked up after dlopen. */
static tagprof_labels *(*labels_new)(void);
static int (*labels_add)(tagprof_labels *, const char *, const char *);
static int (*process_init)(const char *);
static const tagprof_labels *(*attach)(const tagprof_labels *);

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* About us microseconds of CPU; a macro, not an inline function, so that
 * no inlined frame sits under the function that runs it. */
#define SPIN(us)							\
	do {								\
		volatile unsigned long x = 1;				\
		for (unsigned long i = 0; i < (unsigned long)((us) * ipu); i++) \
			x = x * 6364136223846793005ul + 1;		\
	} while (0)

static __attribute__((noinline)) void task_spin(double us)
{
	SPIN(us);
}

static __attribute__((noinline)) void spin_q1(double us)
{
	SPIN(us);
}

static __attribute__((noinline)) void spin_q2(double us)
{
	SPIN(us);
}

static __attribute__((noinline)) void spin_q3(double us)
{
	SPIN(us);
}

static void (*const spin[3])(double) = { spin_q1, spin_q2, spin_q3 };

static double calibrate(void)
{
	double t0 = now_s();

	task_spin(0);
	ipu = 1;
	task_spin(20000000);	/* 20M iterations at 1 "iteration per us" */
	return 20000000 / ((now_s() - t0) * 1e6);
}

#ifdef LABELPOOL_DLOPEN
static int load_library(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);

	if (!h) {
		fprintf(stderr, "labelpool: %s\n", dlerror());
		return -1;
	}
	labels_new = (tagprof_labels *(*)(void))dlsym(h, "tagprof_labels_new");
	labels_add = (int (*)(tagprof_labels *, const char *, const char *))
		dlsym(h, "tagprof_labels_add");
	process_init = (int (*)(const char *))dlsym(h, "tagprof_process_init");
	attach = (const tagprof_labels *(*)(const tagprof_labels *))
		dlsym(h, "tagprof__attach");
	return labels_new && labels_add && process_init && attach ? 0 : -1;
}
#else
/* The inline attach, as an application uses it. */
static const tagprof_labels *attach_inline(const tagprof_labels *l)
{
	return tagprof_attach(l);
}

static int load_library(const char *path)
{
	(void)path;
	labels_new = tagprof_labels_new;
	labels_add = tagprof_labels_add;
	process_init = tagprof_process_init;
	attach = attach_inline;
	return 0;
}
#endif

static int build_sets(const char *path)
{
	if (nolabels)
		return 0;
	if (load_library(path) || process_init("labelpool"))
		return -1;
	for (int q = 0; q < 3; q++) {
		sets[q] = labels_new();
		if (!sets[q] || labels_add(sets[q], "query_id", names[q]) ||
		    labels_add(sets[q], "tenant", "acme"))
			return -1;
	}
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	return 0;
}

static void *worker(void *arg)
{
	unsigned long rng = 88172645463325252ul ^ (unsigned long)(uintptr_t)arg;
	double end = now_s() + secs;
	const tagprof_labels *prev;
	int i = 0, q;

	while (now_s() < end) {
		for (int k = 0; k < 100; k++, i++) {
			double us;

			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			us = 1 + (rng % 1900) / 100.0;	/* 1..20 us */
			if (__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
				q = cycle[i % 10];
				prev = attach(sets[q]);
				spin[q](us);
				attach(prev);
			} else {
				task_spin(us);
			}
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *path = argc > 2 ? argv[2] : "libtagprof.so";
	pthread_t th[WORKERS];
	double start;

	secs = argc > 1 ? atof(argv[1]) : 5;
	nolabels = getenv("LABELPOOL_NOLABELS") != NULL;
	ipu = calibrate();
	start = now_s();
#ifndef LABELPOOL_DLOPEN
	if (build_sets(path))
		return 1;
#endif
	for (long w = 0; w < WORKERS; w++)
		pthread_create(&th[w], NULL, worker, (void *)w);
#ifdef LABELPOOL_DLOPEN
	while (now_s() - start < DLOPEN_AFTER_S)
		usleep(10000);
	if (build_sets(path))
		return 1;
#endif
	for (int w = 0; w < WORKERS; w++)
		pthread_join(th[w], NULL);
	(void)start;
	return 0;
}
