/* Issue 15, case 4: a thread context rewritten millions of times a second.
 * Publishes the keys a and b (OTEP 4719) and points its worker thread's
 * otel_thread_ctx_v1 (OTEP 4947) at one record, which is rewritten in
 * place as fast as the CPU goes, by the OTEP's protocol (valid=0, the
 * attributes, valid=1): each consistent record has a=b=D*200 for one
 * digit D, changing each time. A sample whose a differs from b, or whose value
 * is not one digit
 * repeated, carries a torn record.
 * usage: ctxstorm SECONDS MODE
 *   self:  the worker rewrites its own record between spins (a sample
 *          interrupts it mid-write at worst: valid=0, never torn)
 *   other: a second thread rewrites the worker's record while it spins
 *          (a reader on another CPU can see the bytes change under it)
 *   PAUSE (other): iterations of a short spin after each rewrite (20),
 *          so that valid=1 lasts long enough for a reader to see it at
 *          both ends of a read that a rewrite crossed; 0: back to back
 * The two threads are pinned to CPUs 0 and 1: they must run at once.
 * SIGTERM ends it before SECONDS. Prints the rewrite rate at the end: "ctxstorm: N rewrites/s". */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "otel_ctx_writer.h"

__attribute__((visibility("default"), used)) __thread void *otel_thread_ctx_v1;

static struct otel_record rec;
static double secs;
static unsigned pause_iters = 20;
static atomic_int stop;
static volatile sig_atomic_t term;

static void on_term(int sig)
{
	(void)sig;
	term = 1;
}
static unsigned long rewrites;

/* Values this long make a rewrite take long enough (a few hundred ns) that
 * a reader on another CPU lands in one. */
#define VLEN 200

/* One rewrite: a=b=D*VLEN. Offsets of the values are fixed (idx, len,
 * VLEN bytes; twice), so the size never changes: only valid marks the write. */
static void rewrite(unsigned d)
{
	volatile uint8_t *v = &rec.valid;
	uint8_t c = '0' + d % 10;

	*v = 0;
	atomic_signal_fence(memory_order_seq_cst);
	atomic_thread_fence(memory_order_release);
	memset(rec.attrs + 2, c, VLEN);
	memset(rec.attrs + 4 + VLEN, c, VLEN);
	atomic_thread_fence(memory_order_release);
	*v = 1;
}

static __attribute__((noinline)) void storm_spin(void)
{
	volatile unsigned long x = 1;

	for (int i = 0; i < 64; i++)
		x = x * 6364136223846793005ul + 1;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);	/* best effort */
}

static void *rewriter(void *arg)
{
	unsigned long n = 0;

	pin((int)(uintptr_t)arg);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		rewrite(++n);
		for (volatile unsigned i = 0; i < pause_iters; i++)
			;
	}
	rewrites = n;
	return NULL;
}

static void *worker(void *arg)
{
	int self = arg != NULL;
	unsigned long n = 0;
	struct timespec t0;

	pin(0);
	*(void *volatile *)&otel_thread_ctx_v1 = &rec;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		for (int i = 0; i < 256; i++) {
			if (self)
				rewrite(++n);
			storm_spin();
		}
		if (elapsed_s(&t0) >= secs || term)
			break;
	}
	if (self)
		rewrites = n;
	atomic_store(&stop, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const keys[] = { "a", "b" };
	pthread_t w, r;
	struct timespec t0;
	int self;

	secs = argc > 1 ? atof(argv[1]) : 3;
	self = argc > 2 && !strcmp(argv[2], "self");
	if (argc > 3)
		pause_iters = atoi(argv[3]);
	char zeros[VLEN];

	memset(zeros, '0', VLEN);
	otel_record_add(&rec, 0, zeros, VLEN);
	otel_record_add(&rec, 1, zeros, VLEN);
	if (otel_ctx_publish("ctxstorm", keys, 2))
		return 1;
	printf("ctxstorm: pid %d, %s\n", getpid(), self ? "self" : "other");
	fflush(stdout);
	signal(SIGTERM, on_term);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_create(&w, NULL, worker, self ? (void *)1 : NULL);
	if (!self)
		pthread_create(&r, NULL, rewriter, (void *)1);
	pthread_join(w, NULL);
	if (!self)
		pthread_join(r, NULL);
	printf("ctxstorm: %.0f rewrites/s\n", rewrites / elapsed_s(&t0));
	return 0;
}
