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
 * file through /proc/PID/root/<path>, or /proc/PID/map_files/<range> when
 * that fails or names another file, for a *defined* STT_TLS symbol of that
 * name in .dynsym, else .symtab. The first such module in address order
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

/* tlsloc__find remembers which file versions (fstat's identity, size and
 * times) define no such symbol, and opens them without reading them again;
 * this forgets them all (the memory goes back). */
void tlsloc__forget_files(void);

/* Reads a defined non-TLS data symbol's value (e.g. custom_labels_abi_version,
 * a u32) from the process's memory: len bytes, no more than the symbol's
 * size when it has one. 0, or -ENOENT when no mapped module defines it,
 * -EINVAL when len exceeds its size, other -errno. */
int tlsloc__read_symbol(int pid, const char *symbol, void *buf, size_t len);

#endif
