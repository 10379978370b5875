// SPDX-License-Identifier: BSD-2-Clause
/* A process's mappings for naming data addresses. Paths come from the
 * target's own maps file: a file name is whatever its owner chose, and an
 * anonymous mapping's name ([anon:NAME], prctl) too, so each is copied as
 * valid UTF-8 and bounded by the maps line it came from. */
#include "proc/datamap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc/procfs.h"
#include "util/grow.h"
#include "util/sortedrange.h"
#include "util/utf8.h"

/* Longest name kept: a maps line's path is at most PATH_MAX. */
#define DATAMAP_NAME_MAX	4096

/* Room for a name of n bytes: each invalid byte may become a 3-byte
 * U+FFFD. */
static size_t name_room(size_t n)
{
	return 3 * n + 1;
}

uint64_t datamaps__cost(const struct procfs_map *pm)
{
	return sizeof(struct data_map) +
	       name_room(strnlen(pm->path, DATAMAP_NAME_MAX));
}

static char *copy_name(const char *path)
{
	size_t n = strnlen(path, DATAMAP_NAME_MAX);
	size_t room = name_room(n);
	char *out = malloc(room);

	if (out)
		utf8__sanitize((const uint8_t *)path, n, out, room);
	return out;
}

int datamaps__add(struct data_maps *d, const struct procfs_map *pm,
		  size_t max)
{
	struct data_map *m, *prev;

	if (pm->end <= pm->start)
		return 0;
	if (d->n >= max)
		return -E2BIG;
	if (grow__array_max(&d->v, &d->cap, d->n + 1, sizeof(*d->v), 64, max))
		return -ENOMEM;
	m = &d->v[d->n];
	*m = (struct data_map){ .start = pm->start, .end = pm->end,
				.dev = pm->dev, .ino = pm->ino };
	prev = d->n ? &d->v[d->n - 1] : NULL;
	if (*pm->path) {
		m->name = copy_name(pm->path);
		if (!m->name)
			return -ENOMEM;
		d->bytes += name_room(strnlen(pm->path, DATAMAP_NAME_MAX));
	} else if (prev && prev->end == m->start && prev->ino) {
		m->dev = prev->dev;	/* .bss after the file's last page */
		m->ino = prev->ino;
	}
	d->bytes += sizeof(*m);
	d->n++;
	return 0;
}

void datamaps__free(struct data_maps *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].name);
	free(d->v);
	*d = (struct data_maps){ 0 };
}

const struct data_map *datamaps__at(const struct data_maps *d, uint64_t addr)
{
	const struct data_map *m = SORTEDRANGE_FLOOR(d->v, d->n, start, addr);

	return m && addr < m->end ? m : NULL;
}

const char *datamaps__name(const struct data_map *m)
{
	return m->name ? m->name : "[anon]";
}
