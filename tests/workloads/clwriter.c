/* A Polar Signals custom-labels v1 writer, from the ABI text: the main
 * thread alternates between job=alpha (3 parts) and job=beta (1 part).
 * usage: clwriter SECONDS */
#include <stdint.h>
#include <stdlib.h>
#include "otel_ctx_writer.h"

typedef struct {
	size_t len;
	const unsigned char *buf;
} cl_string;

typedef struct {
	cl_string key, value;
} cl_label;

typedef struct {
	cl_label *storage;
	size_t count, capacity;
} cl_labelset;

__attribute__((visibility("default"), used))
__thread cl_labelset *custom_labels_current_set;
__attribute__((visibility("default"), used))
const uint32_t custom_labels_abi_version = 1;

#define S(x) { sizeof(x) - 1, (const unsigned char *)(x) }

static cl_label alpha[] = { { S("job"), S("alpha") }, { S("shard"), S("7") } };
static cl_label beta[] = { { S("job"), S("beta") }, { S("shard"), S("7") } };
static cl_labelset set_a = { alpha, 2, 2 }, set_b = { beta, 2, 2 };

/* A volatile store: nothing of ours reads it back, the profiler does. */
static void set_labels(cl_labelset *set)
{
	*(cl_labelset *volatile *)&custom_labels_current_set = set;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3, ipu;
	struct timespec t0;

	ipu = calibrate_iters_per_us();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (elapsed_s(&t0) < secs) {
		set_labels(&set_a);
		spin_us(300, ipu);
		set_labels(&set_b);
		spin_us(100, ipu);
		set_labels(NULL);
	}
	return 0;
}
