/* Fuzz target: the agent's config file (tagprof agent --config), read as
 * the agent reads it (config__load, which opens a path only): the input
 * is written to one file in /dev/shm (a memfd's /proc/self/fd/N is no
 * path config__load follows: it resolves links itself, trustfile__open),
 * mode 0600, this user's, as it trusts. A file refused leaves the
 * settings as they were; one taken is copied and freed. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "cmd/config.h"

static int fd = -1;
static char path[64];

static void cleanup(void)
{
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_config c, copy;
	char err[256];
	int ret;

	if (fd < 0) {
		snprintf(path, sizeof(path), "/dev/shm/fuzz_config.XXXXXX");
		fd = mkstemp(path);
		if (fd < 0)
			abort();
		atexit(cleanup);
	}
	fuzz_rewrite(fd, data, size);
	config__defaults(&c);
	ret = config__load(&c, path, err, sizeof(err));
	if (ret < 0 && ret != -EINVAL && ret != -ENOMEM)
		abort();	/* the file itself must be readable */
	if (ret < 0 && !err[0])
		abort();	/* a refusal says why */
	if (ret == 0 && config__copy(&copy, &c) == 0)
		config__free(&copy);
	config__free(&c);
	return 0;
}
