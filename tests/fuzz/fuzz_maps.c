/* Fuzz target: /proc/PID/maps text, parsed as the agent parses it
 * (procfs__parse_maps over a FILE: procfs__read_maps is the thin wrapper
 * that opens /proc/PID/maps), each mapping handed to a callback that
 * reads all of it as the process table would; and one line alone
 * (procfs__parse_maps_line) with the path helpers on what it gives. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "proc/procfs.h"

static void use_map(const struct procfs_map *m)
{
	char buf[4096];
	size_t len = strlen(m->path);

	(void)procfs_map__exec(m);
	(void)(m->end - m->start + m->offset + m->dev + m->ino);
	(void)strnlen(m->perms, sizeof(m->perms));
	len = procfs__undeleted_len(m->path, len);
	(void)procfs__root_path(buf, sizeof(buf), 42, m->path, len);
	(void)procfs__root_path(buf, 32, PROCFS_SELF, m->path, len);
}

static int on_map(const struct procfs_map *m, void *arg)
{
	size_t *n = arg;

	use_map(m);
	/* Stop the walk now and then, as a callback may. */
	return ++*n == 1000 ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procfs_map m;
	size_t n = 0;
	char *line;
	FILE *f;

	if (size == 0)
		return 0;
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	procfs__parse_maps(f, on_map, &n);
	fclose(f);
	/* The first line alone, NUL-terminated as getline gives it. */
	line = malloc(size + 1);
	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = 0;
	if (procfs__parse_maps_line(line, &m))
		use_map(&m);
	free(line);
	return 0;
}
