/* The symbols of one ELF file as the symbolizer uses them: its own symbol
 * table, its debug file's when it is stripped, and DWARF (its own or the
 * debug file's) for source lines and inlined functions.
 *
 * Files are cached by GNU build ID, so every process and container that
 * maps the same build shares one copy; files without a build ID are cached
 * per file. A file no binary refers to any more is kept for a while, so
 * that the next process to map it (a program run again and again, the
 * libraries every process maps) finds its symbols and open DWARF, within
 * bounds (struct symcache_keep); symcache__sweep frees the rest.
 * DWARF is opened on first use and kept within a memory budget: when the
 * open DWARF handles would exceed it, the least recently used are closed
 * (and reopened if needed again). */
#ifndef TAGPROF_SYMFILE_H
#define TAGPROF_SYMFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sym/debuginfo.h"

/* Default budget for the DWARF sections held in memory, and the most DWARF
 * handles open at once. TAGPROF_DWARF_MAX_MB overrides the budget (0: no
 * DWARF at all). A file over the budget is named from its symbol tables.
 * The agent aims at 32 MB RSS in all; glibc's debug file (libc6-dbg) alone
 * is 10 MB of DWARF once inflated, ~25 ms of CPU, so it stays out. */
#define SYMCACHE_DWARF_BUDGET	(8ull << 20)
#define SYMCACHE_DWARF_SHARE	8	/* at most an eighth of max-memory */
#define SYMCACHE_DWARF_OPEN_MAX	64
/* A handle stays open this long before another may close it for room. */
#define SYMCACHE_DWARF_MIN_OPEN_NS	(1000ull * 1000 * 1000)
/* ...and is opened afresh after this long (at a sweep): libdw fills a
 * Dwarf's state (CUs, DIEs, line tables, abbreviations) as lookups ask and
 * frees none of it before dwarf_end, so a file in use for days would keep
 * every part of it ever read, outside the budget counted at open. */
#define SYMCACHE_DWARF_RESTART_NS	(120ull * 1000 * 1000 * 1000)
/* One file's symbol tables may cost at most a quarter of max-memory (the
 * agent's --max-memory; `record`: 512M): the rest of a binary's owner's
 * making is left out and its functions go unnamed, counted. */
#define SYMCACHE_SYMBOLS_SHARE	4
/* Files no binary refers to are kept this long, at most this many, and
 * their symbol tables within this many bytes: an eighth of max-memory
 * once it is set (their DWARF stays within the DWARF budget above). Two
 * minutes spare a program run again and again its reloads, and bound what
 * rarely seen programs hold: with ten, they kept adding files held for the
 * first ten minutes of a long run (tests/bench/soak.sh). */
#define SYMCACHE_KEEP_NS	(120ull * 1000000000)
#define SYMCACHE_KEEP_FILES	64
#define SYMCACHE_KEEP_BYTES	(8ull << 20)
#define SYMCACHE_KEEP_SHARE	8

struct elfsym;
struct symfile;
struct symcache;

/* stats is updated as files are loaded and looked up; it must outlive c. */
struct symcache *symcache__new(struct debuginfo_stats *stats);

/* The agent's --max-memory: the DWARF budget becomes at most an eighth of
 * it (unless TAGPROF_DWARF_MAX_MB set it), and so do the unused files'
 * symbols. 0 changes nothing. */
void symcache__set_memory(struct symcache *c, uint64_t max_memory);
void symcache__free(struct symcache *c);	/* accepts NULL */

/* Where the file a process maps was found, and what to look for. */
struct symfile_source {
	const char *path;	/* where the file was opened, for its DWARF
				 * later, e.g. /proc/PID/map_files/... */
	int fd;			/* the file, opened by targetfile__open_mapped */
	uint64_t dev, ino;	/* and its identity, as maps shows it; ino 0:
				 * fd is unset, path is opened instead */
	const char *build_id;	/* its build ID, or NULL when it has none */
	const char *root;	/* the process's root, for debug files */
	const char *orig_path;	/* the path in the process's view */
};

/* The cached file for src, loading it (and finding its debug file) on
 * first use. Takes a reference, which symcache__put drops. NULL with
 * errno when the file cannot be read (ENOEXEC: not ELF; EINVAL: corrupt). */
struct symfile *symcache__get(struct symcache *c,
			      const struct symfile_source *src);
void symcache__put(struct symcache *c, struct symfile *sf);  /* accepts NULL */

/* Fetches debug files the host lacks from the debuginfod servers urls
 * names (debuginfod__urls: NULL is DEBUGINFOD_URLS, "" none): each file
 * loaded from now on that is stripped, or has no DWARF, and has no debug
 * file on the host, is asked for in the background. 0 (also when there
 * are no servers), or -1 with the reason in err: nothing is fetched. */
int symcache__set_debuginfod(struct symcache *c, const char *urls, char *err,
			     size_t errlen);

/* Takes the fetches that ended, counting each, and gives each file its
 * debug file. Never waits. Returns how many files got one. */
size_t symcache__collect(struct symcache *c);

/* Grows with every debug file symcache__collect gave: names of addresses
 * resolved before it came may be found now. */
uint64_t symcache__debug_gen(const struct symcache *c);

/* The cached file of a build ID, without a reference, or NULL. */
struct symfile *symcache__find(const struct symcache *c, const char *build_id);

/* Frees the files no binary refers to any more that are over the bounds:
 * longest unused first. */
void symcache__sweep(struct symcache *c);

/* How long, and how many, unused files are kept. */
struct symcache_keep {
	uint64_t ns;		/* since their last user left */
	uint64_t files;
	uint64_t bytes;		/* of their symbol tables */
};

/* Other bounds than SYMCACHE_KEEP_* (tests; 0 ns: none kept). */
void symcache__set_keep(struct symcache *c, const struct symcache_keep *k);
/* Another age than SYMCACHE_DWARF_RESTART_NS (tests). */
void symcache__set_dwarf_restart(struct symcache *c, uint64_t ns);

size_t symcache__count(const struct symcache *c);		/* files held */
/* Files held that no binary refers to, and their symbols' bytes. */
size_t symcache__unused(const struct symcache *c, uint64_t *bytes);
uint64_t symcache__dwarf_bytes(const struct symcache *c);	/* DWARF held */

/* The binary's own symbols (build ID, PT_LOADs, symbol tables). */
struct elfsym *symfile__elfsym(const struct symfile *sf);
const char *symfile__build_id(const struct symfile *sf);
int symfile__offset_to_vaddr(const struct symfile *sf, uint64_t file_offset,
			     uint64_t *vaddr);

/* Whether DWARF was found for the file (its own or its debug file's), and
 * whether its function names came from a debug file. */
bool symfile__has_dwarf(const struct symfile *sf);
bool symfile__has_debug_file(const struct symfile *sf);

/* One frame: raw (mangled) function name, source file and line. */
struct symframe {
	const char *name;	/* NULL: none known */
	const char *file;	/* NULL: none known */
	int line;		/* 0: none known */
};

/* Frames for the link-time address vaddr, innermost first (inlined
 * functions, then the function holding the code), at most max. The
 * outermost frame is named by the symbol table, else by DWARF. Strings
 * stay valid until the next call on c. Returns 0 when nothing at all is
 * known of vaddr. */
size_t symfile__lookup(struct symcache *c, struct symfile *sf, uint64_t vaddr,
		       struct symframe *out, size_t max);

#endif
