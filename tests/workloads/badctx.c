/* Thread contexts that are wrong in every way the reader must survive, one
 * kind per thread (named after it), each thread busy the whole time:
 *   bad_unmapped  TLS pointer into unmapped memory
 *   bad_invalid   record with valid = 0
 *   bad_oversize  attrs_size over 612
 *   bad_unknown   a key index missing from the key map
 *   bad_utf8      a value that is not UTF-8
 *   bad_torn      a record another thread rewrites while it is read
 * usage: badctx SECONDS */
#include <pthread.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include "otel_ctx_writer.h"

__attribute__((visibility("default"), used)) __thread void *otel_thread_ctx_v1;

static double secs, ipu;
static struct otel_record r_invalid, r_oversize, r_unknown, r_utf8, r_torn;
static volatile int stop;

struct job {
	const char *name;
	void *record;
};

static void *worker(void *arg)
{
	struct job *j = arg;
	struct timespec t0;

	prctl(PR_SET_NAME, j->name);
	*(void *volatile *)&otel_thread_ctx_v1 = j->record;	/* kept, in place */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (elapsed_s(&t0) < secs)
		spin_us(1000, ipu);
	return NULL;
}

/* Rewrites r_torn in place as fast as it can, the OTEP way (valid=0,
 * change, valid=1), so readers catch it mid-change. */
static void *rewriter(void *arg)
{
	uint8_t n = 0;

	(void)arg;
	prctl(PR_SET_NAME, "rewriter");
	while (!stop) {
		__atomic_store_n(&r_torn.valid, 0, __ATOMIC_RELEASE);
		r_torn.attrs_size = 0;
		otel_record_add(&r_torn, 0, "xxxxxxxxxxxxxxxx", 1 + (n++ % 16));
		__atomic_store_n(&r_torn.valid, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const keys[] = { "k0", "k1" };
	struct job jobs[] = {
		{ "bad_unmapped", (void *)0x10 },
		{ "bad_invalid", &r_invalid },
		{ "bad_oversize", &r_oversize },
		{ "bad_unknown", &r_unknown },
		{ "bad_utf8", &r_utf8 },
		{ "bad_torn", &r_torn },
	};
	enum { N = sizeof(jobs) / sizeof(jobs[0]) };
	pthread_t th[N], rw;

	secs = argc > 1 ? atof(argv[1]) : 3;
	ipu = calibrate_iters_per_us();
	otel_record_add(&r_invalid, 0, "v", 1);
	r_invalid.valid = 0;
	otel_record_add(&r_oversize, 0, "v", 1);
	r_oversize.attrs_size = 700;
	otel_record_add(&r_unknown, 7, "v", 1);
	otel_record_add(&r_utf8, 0, "ok\xff\xfe\xc0.", 6);
	otel_record_add(&r_torn, 0, "x", 1);
	if (otel_ctx_publish("badctx", keys, 2))
		return 1;
	pthread_create(&rw, NULL, rewriter, NULL);
	for (int i = 0; i < N; i++)
		pthread_create(&th[i], NULL, worker, &jobs[i]);
	for (int i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	stop = 1;
	pthread_join(rw, NULL);
	return 0;
}
