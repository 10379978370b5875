/* Where a thread-local variable of another process lives, relative to its
 * threads' thread pointer, so that BPF can read it at sample time. */
#ifndef TAGPROF_TLSLOC_H
#define TAGPROF_TLSLOC_H

#include <linux/types.h>
#include <stddef.h>

#include "sample_event.h"

/* Finds where `symbol` (an STT_TLS variable, e.g. "otel_thread_ctx_v1" or
 * "custom_labels_current_set") lives for the threads of pid. Scans the
 * process's file-backed executable mappings (/proc/PID/maps), opening each
 * file through /proc/PID/map_files/<range>, else /proc/PID/root/<path> or
 * the host's path while it is the mapped file (targetfile__open_mapped),
 * for a *defined* STT_TLS symbol of that name in .dynsym, else .symtab.
 * A file known not to define it (by device, inode, size and change times)
 * is not opened again. The first such module in address order
 * that yields a location wins. Fills loc, and module (the defining file's
 * path as maps shows it; on failure, the first definer's) if non-NULL.
 *
 * Returns 0, or the first defining module's failure: -EAGAIN when the
 * loader has not resolved its GOT entry yet (lazy TLSDESC, dlopen in
 * progress): try again later; -EOPNOTSUPP when a shared library defines it
 * but has no TLS relocation that gives its module id or offset (and on
 * architectures other than x86-64); -EINVAL when the file or process holds
 * values that make no sense; other -errno. -ENOENT when no mapped module
 * defines it, -ESRCH when the process is gone.
 *
 * glibc only: dtv_off is glibc's (musl's thread pointer and DTV layout
 * differ). */
int tlsloc__find(int pid, const char *symbol, struct tp_tls_loc *loc,
		 char *module, size_t modlen);

/* One symbol for tlsloc__find_all: what tlsloc__find takes and returns. */
struct tlsloc_query {
	const char *symbol;
	struct tp_tls_loc *loc;
	char *module;		/* NULL, or modlen bytes */
	size_t modlen;
	int err;		/* out: tlsloc__find's return value */
};
#define TLSLOC_QUERIES_MAX	4

struct procfs_map;
typedef void (*tlsloc_maps_fn)(const struct procfs_map *m, void *arg);

/* The modules of one process that defined none of the symbols its last
 * walk looked for (by device, inode and address range): a walk of the same
 * process for the same symbols passes them by without even their status,
 * and looks only at modules mapped since (a library dlopen()ed later).
 * A file rewritten in place under a running process is not looked at
 * again: the loader set up its TLS, if any, when it mapped the file. */
#define TLSLOC_MEMO_MAX	32
struct tlsloc_memo {
	uint64_t mods[TLSLOC_MEMO_MAX];
	size_t n;
};

/* tlsloc__find for n symbols (at most TLSLOC_QUERIES_MAX) in one walk of
 * the maps, each module's file opened at most once. each, if not NULL, is
 * called for every mapping (the walk then reads them all), so that a
 * caller needing something else of the maps does not read them again.
 * memo, if not NULL, is the process's (zeroed at first, or after an exec)
 * and is updated: the caller asks for the same symbols every time.
 * Returns 0 with each query's result in its err, or -errno when the maps
 * cannot be read (-ESRCH: the process is gone) or the arguments are
 * invalid (-EINVAL). */
int tlsloc__find_all(int pid, struct tlsloc_query *q, size_t n,
		     tlsloc_maps_fn each, void *each_arg,
		     struct tlsloc_memo *memo);

/* Reads a defined non-TLS data symbol's value (e.g. custom_labels_abi_version,
 * a u32) from the process's memory: len bytes, no more than the symbol's
 * size when it has one. 0, or -ENOENT when no mapped module defines it,
 * -EINVAL when len exceeds its size, other -errno. */
int tlsloc__read_symbol(int pid, const char *symbol, void *buf, size_t len);

#endif
