/* A Polar Signals custom-labels v1 writer, from the ABI text: the main
 * thread runs 100 us tasks, each drawn as job=alpha (odds 3 in 4, in
 * spin_alpha) or job=beta (in spin_beta). Each set also holds the other's job value under
 * another key of the same length (via), so a filter or a decoder that
 * looks at the wrong key takes the other set.
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

static cl_label alpha[] = { { S("job"), S("alpha") }, { S("via"), S("beta") } };
static cl_label beta[] = { { S("job"), S("beta") }, { S("via"), S("alpha") } };
static cl_labelset set_a = { alpha, 2, 2 }, set_b = { beta, 2, 2 };

/* A volatile store: nothing of ours reads it back, the profiler does. */
static void set_labels(cl_labelset *set)
{
	*(cl_labelset *volatile *)&custom_labels_current_set = set;
}

static double ipu;

/* Each set's work runs in its own function: a sample's leaf says which set
 * was current at that moment. */
static __attribute__((noinline)) void spin_alpha(void)
{
	spin_us(100, ipu);
}

static __attribute__((noinline)) void spin_beta(void)
{
	spin_us(100, ipu);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	struct timespec t0;

	ipu = calibrate_iters_per_us();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (elapsed_s(&t0) < secs) {
		if (three_in_four(&rng)) {
			set_labels(&set_a);
			spin_alpha();
		} else {
			set_labels(&set_b);
			spin_beta();
		}
		set_labels(NULL);
	}
	return 0;
}
