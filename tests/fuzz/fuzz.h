/* What the fuzz targets share: libFuzzer's entry point, numbers taken from
 * the input, and the input written to a file the agent's code opens. */
#ifndef TAGPROF_FUZZ_H
#define TAGPROF_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The 8 bytes at p, little-endian: an address or a time from the input. */
static inline uint64_t fuzz_word(const uint8_t *p)
{
	uint64_t v = 0;

	for (int k = 0; k < 8; k++)
		v |= (uint64_t)p[k] << (8 * k);
	return v;
}

/* Makes fd's file hold exactly the input; aborts when it cannot. */
static inline void fuzz_rewrite(int fd, const uint8_t *data, size_t size)
{
	if (ftruncate(fd, 0))
		abort();
	for (size_t done = 0; done < size;) {
		ssize_t n = pwrite(fd, data + done, size - done, done);

		if (n <= 0)
			abort();
		done += n;
	}
}

#endif
