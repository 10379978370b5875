/* Separate debug files and DWARF.
 *
 * Distributions strip their binaries and ship the symbol tables and DWARF
 * in debug files (Debian's -dbgsym packages) under /usr/lib/debug. A
 * binary names its debug file two ways, and both are looked up, through
 * the process's root first (a container's own /usr/lib/debug), then the
 * host's:
 *
 *   by build ID   DIR/.build-id/xx/rest-of-the-id.debug
 *   by debuglink  the .gnu_debuglink name, in the binary's directory, its
 *                 .debug/ subdirectory, and DIR/<binary's directory>/
 *
 * DIR is /usr/lib/debug, or the directories listed in the environment
 * variable TAGPROF_DEBUG_DIRS (absolute paths, separated by ':') when it
 * is set. A debug file is used only when its build ID equals the binary's
 * and, found by debuglink, its CRC-32 equals the one the link records; a
 * truncated or corrupt one is refused. Every refusal is counted.
 *
 * DWARF gives source file and line for an address, and the functions
 * inlined there: one frame per inlined call, innermost first. */
#ifndef TAGPROF_DEBUGINFO_H
#define TAGPROF_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/counter.h"

struct elfsym;

/* X(field, text) (util/counter.h). */
#define DEBUGINFO_COUNTERS(X)						\
	X(files, "symbol files loaded")					\
	/* the time their reading took (symbol tables, debug files found	\
	 * on the host): samples wait while a file is read */		\
	X(load_ms, "ms reading them")					\
	X(load_max_ms, "ms the longest")				\
	X(shared, "binaries served by a loaded file")			\
	/* ... of them by one no binary used at the time (symfile.h) */	\
	X(unused_reused, "of them by one kept unused")			\
	/* files freed after no binary used them for a while */	\
	X(unused_freed, "unused files freed")				\
	/* debug files found by build ID, and by .gnu_debuglink */	\
	X(debug_by_build_id, "debug files by build ID")			\
	X(debug_by_link, "by debuglink")				\
	/* stripped (no .symtab), and no debug file found */		\
	X(debug_missing, "stripped binaries without")			\
	/* refused: CRC-32 differs, another build's, unreadable or	\
	 * truncated */							\
	X(debug_crc_mismatch, "CRC mismatch")				\
	X(debug_build_id_mismatch, "build ID mismatch")			\
	X(debug_bad, "unreadable or truncated")				\
	/* refused unopened: a .gnu_debuglink with a '/', which could	\
	 * lead out of the debug directories (../../etc/shadow) */	\
	X(debug_link_path, "debuglinks naming a path")			\
	X(dwarf_opened, "opened")	/* DWARF handles */		\
	X(dwarf_errors, "errors")	/* DWARF libdw could not read */ \
	X(dwarf_too_big, "over the memory budget")			\
	/* handles closed to stay in budget */				\
	X(dwarf_evicted, "closed to stay in the budget")		\
	/* lookups named by symbols alone: the budget was held by	\
	 * handles opened less than a second before (symfile.h) */	\
	X(dwarf_deferred, "lookups without DWARF while the budget was "	\
	  "held")							\
	/* handles closed at two minutes, to drop libdw's state */	\
	X(dwarf_restarted, "reopened afresh")				\
	/* the file changed since its symbols were read */		\
	X(dwarf_changed, "changed on disk")				\
	/* refused: names another file (dwz) outside the host's debug	\
	 * dirs */							\
	X(dwarf_external, "DWARF naming another file")			\
	/* files with a symbol table left out for its size */		\
	X(symbols_over_budget, "files with symbol tables over the "	\
	  "memory budget")						\
	/* debug files asked of debuginfod servers (debuginfod.h), and	\
	 * how each fetch ended: asked minus the rest are under way */	\
	X(fetch_asked, "asked")						\
	X(fetch_fetched, "fetched")					\
	X(fetch_not_found, "not found")					\
	X(fetch_timed_out, "timed out")					\
	X(fetch_refused, "refused (another build, too big or not a "	\
	  "debug file)")						\
	X(fetch_failed, "failed (server unreachable or error)")		\
	X(fetch_not_asked, "not asked (too many)")

struct debuginfo_stats {
	DEBUGINFO_COUNTERS(COUNTER_FIELD)
};

/* What is known of a binary when its debug file is looked for. */
struct debug_target {
	const char *root;	/* "/proc/PID/root", or NULL for none */
	const char *path;	/* the binary's path in the process's view */
	const char *build_id;	/* the binary's, or NULL */
	const char *debuglink;	/* its .gnu_debuglink name, or NULL */
	uint32_t crc;		/* and the CRC-32 the link records */
	uint64_t dev, ino;	/* the binary itself (never its own debug
				 * file) */
	uint64_t sym_max;	/* symbol tables' bound (elfsym__open_fd) */
};

/* Looks for the binary's debug file. Returns its symbols, with the path it
 * was read from in *path (malloc'd) and whether that is in a host debug
 * directory (whose symbolic links are followed) in *in_debug_dir, or NULL (none found, or every one
 * found refused). */
struct elfsym *debuginfo__find(const struct debug_target *t, char **path,
			       bool *in_debug_dir, struct debuginfo_stats *st);

/* The directories searched (for messages and tests), ':'-separated. */
const char *debuginfo__dirs(void);

/* CRC-32 of a whole file, the .gnu_debuglink way (zlib's CRC-32). 0 or
 * -errno. */
int debuginfo__file_crc(const char *path, uint32_t *crc);

/* One frame of an address: innermost first. Strings are owned by the
 * dwarf_file and valid until it is closed; name may be NULL (no name in
 * the DWARF), file NULL and line 0 (no line information). */
struct dwframe {
	const char *name;	/* linkage (mangled) name, else the name */
	const char *file;
	int line;
};

struct dwarf_file;

/* Opens the DWARF of the ELF file at path. Its debug sections are read
 * into memory (never mapped: a file truncated under a mapping would kill
 * the agent with SIGBUS), so a file whose sections exceed max_bytes is
 * refused (-E2BIG). It is opened by targetfile__open with want: when its
 * ino is non-zero, the file must still be that inode (-ESTALE). 0 with *out and *bytes (the memory the sections take)
 * set, or -errno (-ENODATA: no DWARF; -EINVAL: libdw refused it; -EXDEV:
 * it names another file, a dwz one, and is not in a debug directory). */
struct targetfile_want;
int dwarf_file__open(const char *path, const struct targetfile_want *want,
		     uint64_t max_bytes, struct dwarf_file **out,
		     uint64_t *bytes);

/* Frames for the link-time address vaddr, innermost first: the innermost
 * inlined function at the address's line, then each function it was
 * inlined into at the line of the call, ending with the function that
 * holds the code. At most max; returns how many (0 when the DWARF does not
 * cover vaddr). A frame of the address's line is returned even when no
 * function DIE covers it (hand-written assembly): its name is NULL. */
size_t dwarf_file__lookup(struct dwarf_file *d, uint64_t vaddr,
			  struct dwframe *out, size_t max);

/* Errors libdw reported on lookups so far (corrupt DWARF). */
uint64_t dwarf_file__errors(const struct dwarf_file *d);

void dwarf_file__close(struct dwarf_file *d);	/* accepts NULL */

#endif
