/* Label churn for tests/bench/soak.sh: a new label set every few
 * milliseconds, never seen before (request_id=rN, tenant=tK of 50 tenants),
 * built, attached for a task of about SPIN_US microseconds, detached and
 * freed: the profiler sees an endless stream of distinct label values and
 * must not keep them past their window. WORKERS threads (default 1) each
 * run task, sleep about as long, next task.
 * usage: labelchurn SECONDS [WORKERS [SPIN_US]]
 * Prints the sets made per second on stdout at the end. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include <tagprof/tagprof.h>

static double secs;
static long spin_us = 1000;
static atomic_ulong made, failed;
static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void labelled_task(double us)
{
	double end = now() + us / 1e6;
	unsigned long x = sink | 1;

	do {
		for (int i = 0; i < 2000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			__asm__("" : "+r"(x));
		}
		sink = x;
	} while (now() < end);
}

static void *worker(void *arg)
{
	unsigned long id = (unsigned long)arg, n = 0;
	double t0 = now();
	char rid[32], tenant[16];

	while (now() - t0 < secs) {
		tagprof_labels *l = tagprof_labels_new();
		const tagprof_labels *prev;

		if (!l) {
			failed++;
			usleep(1000);
			continue;
		}
		snprintf(rid, sizeof(rid), "r%lu_%lu", id, n);
		snprintf(tenant, sizeof(tenant), "t%lu", n % 50);
		n++;
		if (tagprof_labels_add(l, "request_id", rid) ||
		    tagprof_labels_add(l, "tenant", tenant)) {
			failed++;
			tagprof_labels_free(l);
			continue;
		}
		prev = tagprof_attach(l);
		labelled_task(spin_us);
		tagprof_attach(prev);
		tagprof_labels_free(l);
		made++;
		usleep(spin_us);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[16];
	long workers = 1;
	double t0;

	if (argc < 2) {
		fprintf(stderr, "usage: labelchurn SECONDS [WORKERS [SPIN_US]]\n");
		return 2;
	}
	secs = atof(argv[1]);
	if (argc > 2)
		workers = atol(argv[2]);
	if (argc > 3)
		spin_us = atol(argv[3]);
	if (workers < 1 || workers > 16 || spin_us < 1 || spin_us > 1000000)
		return 2;
	if (tagprof_process_init("labelchurn"))
		return 1;
	t0 = now();
	for (long i = 0; i < workers; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i))
			return 1;
	for (long i = 0; i < workers; i++)
		pthread_join(th[i], NULL);
	printf("labelchurn: %.0f sets/s, %lu failed\n", made / (now() - t0),
	       (unsigned long)failed);
	return 0;
}
