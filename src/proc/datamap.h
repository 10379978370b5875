/* Every mapping of a process, for naming data addresses (memory-access
 * events): which file, or which kind of anonymous memory ([heap],
 * [stack], [anon]), holds an address. The process table keeps these only
 * while a memory-access event samples, beside its executable mappings. */
#ifndef TAGPROF_DATAMAP_H
#define TAGPROF_DATAMAP_H

#include <stddef.h>
#include <stdint.h>

struct procfs_map;

struct data_map {
	uint64_t start, end;
	/* The file mapped; for anonymous memory that starts where a file's
	 * mapping ends, that file: a binary's .bss past its last page. 0
	 * when neither. */
	uint64_t dev, ino;
	char *name;		/* the path or "[heap]"-like name, as valid
				 * UTF-8; NULL for plain anonymous memory */
};

struct data_maps {
	struct data_map *v;	/* by address, not overlapping */
	size_t n, cap;
	uint64_t bytes;		/* what they hold, names included */
};

/* Adds one line of /proc/PID/maps (in the file's order, which is by
 * address). 0, -E2BIG past max entries, or -ENOMEM. */
int datamaps__add(struct data_maps *d, const struct procfs_map *pm,
		  size_t max);
void datamaps__free(struct data_maps *d);

/* The most that adding pm can add to d->bytes. */
uint64_t datamaps__cost(const struct procfs_map *pm);

/* The mapping holding addr, or NULL. */
const struct data_map *datamaps__at(const struct data_maps *d, uint64_t addr);

/* The name a mapping is shown by: its name, or "[anon]". */
const char *datamaps__name(const struct data_map *m);

#endif
