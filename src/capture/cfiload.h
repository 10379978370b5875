/* The kernel's CFI tables and the processes walked by them (the cfi_*
 * maps, bpf/maps.bpf.h): their one owner, beside proccfg, which owns the
 * per-process settings that turn the walk on. A process marked by `auto`
 * gets its executable mappings written, each naming the table of its
 * binary; a binary's table is built (by the unwinder) and written into the
 * shared arrays once, and stays while any walked process maps it. One no
 * process maps is kept for a while (a minute at most), in case one comes
 * back, and its space goes to a new table before the arrays grow: the
 * arrays are mapped into the agent up to the last table, and what is
 * mapped counts in its resident size. */
#ifndef TAGPROF_CFILOAD_H
#define TAGPROF_CFILOAD_H

#include <stddef.h>
#include <stdint.h>

struct cfiload;
struct sampler;
struct unwinder;

/* NULL on ENOMEM. Writes to s's maps. */
struct cfiload *cfiload__new(struct sampler *s);
void cfiload__free(struct cfiload *l);		/* accepts NULL */

/* Puts pid's mappings and their tables in the kernel, so that its samples
 * are walked by CFI once its setting says so (again after its mappings
 * changed). 0, or -errno: ENOTSUP the mode walks no stack by CFI, ESRCH
 * the process is not known or has over TP_CFI_MAPS mappings, ENOSPC the
 * tables' memory is full, ENOMEM. */
int cfiload__put(struct cfiload *l, struct unwinder *u, uint32_t pid);

/* What the tables hold: tables written (unused: no walked process maps
 * its binary); rows in use against the top of those handed out, up to
 * which the agent has the arrays mapped (mapped: the bytes it maps). */
struct cfiload_usage {
	size_t tables, unused;
	uint64_t swept;		/* dropped unused for a minute, since start */
	uint64_t rows, rows_top;
	uint64_t mapped;
};
void cfiload__usage(const struct cfiload *l, struct cfiload_usage *out);

/* Drops the tables unused for a minute, and unmaps the arrays above the
 * tops: at a window's end. */
void cfiload__sweep(struct cfiload *l);

/* pid is no longer walked by CFI. */
void cfiload__drop(struct cfiload *l, uint32_t pid);

#endif
