/* Fuzz target: a JIT perf map (/tmp/perf-PID.map), parsed as the agent
 * parses the file's bytes (perfmap__parse), then looked up. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz.h"
#include "proc/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap_stats st = { 0 };
	struct perfmap *m = perfmap__parse((const char *)data, size, &st);
	uint64_t start;

	if (!m)
		return 0;
	/* Lookups at addresses the input names, and around them. */
	for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
		uint64_t a = fuzz_word(data + i);

		perfmap__lookup(m, a, &start);
		perfmap__lookup(m, a - 1, &start);
	}
	perfmap__lookup(m, 0x1000, &start);
	perfmap__free(m);
	return 0;
}
