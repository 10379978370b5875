/* An OTEP 4947 thread-context writer that does not use libtagprof, written
 * from the OTEP text: two workers alternate between query_id=a (3 parts of
 * the time) and query_id=b (1 part), tenant=t1 on both.
 * usage: otelwriter SECONDS */
#include <pthread.h>
#include <stdlib.h>
#include "otel_ctx_writer.h"

__attribute__((visibility("default"), used)) __thread void *otel_thread_ctx_v1;

static struct otel_record rec_a, rec_b;

/* A volatile store, as the OTEP asks: otherwise the compiler may drop the
 * stores no code of ours reads back. */
static void set_ctx(void *rec)
{
	*(void *volatile *)&otel_thread_ctx_v1 = rec;
}
static double secs, ipu;

static void *worker(void *arg)
{
	struct timespec t0;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (elapsed_s(&t0) < secs) {
		set_ctx(&rec_a);
		spin_us(300, ipu);
		set_ctx(&rec_b);
		spin_us(100, ipu);
		set_ctx(NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const keys[] = { "query_id", "tenant" };
	pthread_t th[2];

	secs = argc > 1 ? atof(argv[1]) : 3;
	ipu = calibrate_iters_per_us();
	otel_record_add(&rec_a, 0, "a", 1);
	otel_record_add(&rec_a, 1, "t1", 2);
	otel_record_add(&rec_b, 0, "b", 1);
	otel_record_add(&rec_b, 1, "t1", 2);
	memset(rec_a.trace_id, 0xab, 16);
	memset(rec_a.span_id, 0xcd, 8);
	if (otel_ctx_publish("otelwriter", keys, 2))
		return 1;
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return 0;
}
