/* An OTEP 4947 thread-context writer that does not use libtagprof, written
 * from the OTEP text: two workers run 100 us tasks, each drawn as
 * query_id=q1 (odds 3 in 4, in spin_q1) or query_id=q10 (in spin_q10),
 * tenant=t1 on both.
 * One value is a prefix of the other, so that a --label filter that
 * compares only some of the bytes keeps the wrong query. Record q1 also
 * carries a trace context whose bytes all differ (their order shows).
 * usage: otelwriter SECONDS
 * OTELWRITER_SCHEMA in the environment replaces the threadlocal.schema_version
 * it publishes ("tlsdesc_v1_dev"). */
#include <pthread.h>
#include <stdlib.h>
#include "otel_ctx_writer.h"

__attribute__((visibility("default"), used)) __thread void *otel_thread_ctx_v1;

static struct otel_record rec_q1, rec_q10;

/* A volatile store, as the OTEP asks: otherwise the compiler may drop the
 * stores no code of ours reads back. */
static void set_ctx(void *rec)
{
	*(void *volatile *)&otel_thread_ctx_v1 = rec;
}
static double secs, ipu;

/* Each query runs its own function: a sample's leaf says which record was
 * current at that moment. */
static __attribute__((noinline)) void spin_q1(void)
{
	spin_us(100, ipu);
}

static __attribute__((noinline)) void spin_q10(void)
{
	spin_us(100, ipu);
}

static void *worker(void *arg)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull + (uintptr_t)arg;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (elapsed_s(&t0) < secs) {
		if (three_in_four(&rng)) {
			set_ctx(&rec_q1);
			spin_q1();
		} else {
			set_ctx(&rec_q10);
			spin_q10();
		}
		set_ctx(NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const keys[] = { "query_id", "tenant" };
	pthread_t th[2];

	secs = argc > 1 ? atof(argv[1]) : 3;
	if (getenv("OTELWRITER_SCHEMA"))	/* threadlocal.schema_version */
		otel_ctx_schema = getenv("OTELWRITER_SCHEMA");
	ipu = calibrate_iters_per_us();
	otel_record_add(&rec_q1, 0, "q1", 2);
	otel_record_add(&rec_q1, 1, "t1", 2);
	otel_record_add(&rec_q10, 0, "q10", 3);
	otel_record_add(&rec_q10, 1, "t1", 2);
	for (int i = 0; i < 16; i++)		/* 000102...0f */
		rec_q1.trace_id[i] = i;
	for (int i = 0; i < 8; i++)		/* 1011...17 */
		rec_q1.span_id[i] = 0x10 + i;
	if (otel_ctx_publish("otelwriter", keys, 2))
		return 1;
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return 0;
}
