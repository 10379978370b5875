/* Process table: what each sampled process has mapped, so user addresses
 * can be turned into (binary, offset). Entries are keyed by pid and checked
 * against the process start time the BPF side reports, so a reused pid
 * never inherits the old process's maps; exec and exit drop entries. */
#ifndef TAGPROF_PROCTABLE_H
#define TAGPROF_PROCTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proc/datamap.h"
#include "proc/jitmap.h"
#include "sym/debuginfo.h"
#include "util/counter.h"

struct elfsym;
struct jitdump_hit;
struct jitdumpfile;
struct symcache;
struct symfile;

/* One file-backed or special executable mapping, shared across processes
 * that map the same file. Its symbols are a symfile, shared by build ID. */
struct binary {
	char *path;		/* as in /proc/PID/maps, e.g. /usr/lib/libc.so.6 */
	char *name;		/* basename of path, without " (deleted)" */
	uint64_t dev, ino;
	bool deleted;		/* the maps said " (deleted)": replaced */
	struct symfile *sf;	/* loaded on first use; NULL if unreadable
				 * or not the file that is mapped */
	struct elfsym *syms;	/* sf's own symbol table */
	bool loaded;
	int load_err;		/* errno of the failed load, 0 if none;
				 * ESTALE: another build than the mapped one */
	unsigned int refs;	/* mappings that use it */
	struct symcache *cache;
	struct proctable *owner;	/* whose budget it counts in */
};

struct proc_map {
	uint64_t start, end, offset;
	struct binary *bin;	/* NULL for anonymous memory */
	bool anon_exec;		/* executable anonymous memory (JIT) */
	bool exe;		/* maps the file the process executes */
	uint64_t hdr_start;	/* where this process maps the file's offset
				 * 0 (its ELF header), 0 if nowhere */
	uint32_t loctab_id;	/* loctab mapping id, valid for loctab_gen */
	uint64_t loctab_gen;
};

struct proc {
	uint32_t pid;
	uint64_t start_ns;	/* group leader start, boot-time ns */
	char exe[64];		/* executable name for the `process` label */
	struct proc_map *maps;	/* executable mappings, sorted by start */
	size_t nmaps;
	bool anon_exec;		/* one of the maps is anonymous code */
	bool stale;		/* /proc says another process now owns the pid */
	uint64_t loaded_ns;	/* when maps were last read */
	uint64_t reload_ns;	/* how long after that an unmapped address
				 * may read them again (proctable.c) */
	uint32_t maps_grown;	/* re-reads that found the address they were
				 * for: the process mapped more */
	uint64_t maps_ver;	/* changes with every read of the maps, and
				 * is never reused by another process: an
				 * address means the same while it holds */
	struct data_maps data;	/* every mapping, while data addresses are
				 * named (proctable__set_data_maps) */
	struct jitmap jitmap;	/* JIT symbols (perf map) */
	struct jitdumpfile *jitdump;	/* JIT code (jitdump), or NULL */
	struct proctable *owner;
};

/* X(field, text) counts, K(field, text) bytes (util/counter.h). */
#define PROCTABLE_COUNTERS(X, K)					\
	X(procs_seen, "seen")		/* process entries created */	\
	/* maps re-read for an address not mapped */			\
	X(maps_reloads, "maps re-read for an unmapped address")	\
	/* /proc/PID/maps unreadable (process gone) */			\
	X(maps_failed, "maps unreadable")				\
	/* maps read only in part: the mappings of all processes over	\
	 * their budget */						\
	X(maps_over_budget, "maps kept in part over the memory budget")	\
	K(maps_budget, "in all")	/* all mappings kept may take */ \
	K(maps_bytes, "held")		/* ... they take now */		\
	/* /proc/PID belongs to a newer process */			\
	X(pid_reused, "pid reused")					\
	/* binaries whose symbols could not be read: not ELF, or	\
	 * corrupt or truncated ELF */					\
	X(elf_failed, "binaries unreadable")				\
	X(elf_corrupt, "binaries corrupt")				\
	/* the file on disk is not the build the process maps: not	\
	 * trusted */							\
	X(build_id_mismatch, "build ID mismatch (replaced on disk)")	\
	X(perfmaps_read, "read")	/* JIT perf maps (first reads) */ \
	X(perfmap_bad_lines, "garbage lines skipped")			\
	X(perfmap_truncated, "over the size limit")			\
	/* not a regular file, a symbolic link, or another user's */	\
	X(perfmap_refused, "refused (not a regular file, a link, "	\
	  "another user's)")						\
	/* not read: over the process's or the total budget (once per	\
	 * version) */							\
	X(perfmap_over_budget, "not read over the memory budget")	\
	K(perfmap_proc_budget, "a process") /* one process's map may hold */ \
	K(perfmaps_budget, "in all")	/* ... all maps and jitdumps */	\
	K(perfmap_bytes, "held")	/* ... the maps hold now */	\
	X(jitdumps_read, "read")	/* jitdump files (first reads) */ \
	X(jitdump_records, "records")					\
	X(jitdump_loads, "code loads")	/* and moves, kept */		\
	X(jitdump_debug_entries, "debug line entries")			\
	/* JIT_CODE_UNWINDING_INFO: counted, not used */		\
	X(jitdump_unwind_infos, "unwinding infos, unused")		\
	/* refused: sizes that do not add up, names without their NUL,	\
	 * moves of code never loaded; a record size that loses the	\
	 * records after it */						\
	X(jitdump_bad_records, "bad records refused")			\
	X(jitdump_names_fixed, "names with invalid UTF-8 replaced")	\
	/* the rest unread: over JITDUMP_FILE_MAX bytes, JITDUMP_CODES_MAX \
	 * codes or JITDUMP_LINES_MAX lines (once per file) */		\
	X(jitdump_truncated, "over the size or count limits")		\
	/* not a regular file, another user's, not a jitdump (its	\
	 * header); once per file */					\
	X(jitdump_refused, "refused (not a regular file, another "	\
	  "user's, not a jitdump)")					\
	/* the rest unread: over the process's share or what the perf	\
	 * maps and other jitdumps leave of the total (once per file) */ \
	X(jitdump_over_budget, "read in part over the memory budget")	\
	K(jitdump_bytes, "held")	/* ... jitdumps hold now */

struct proctable_stats {
	PROCTABLE_COUNTERS(COUNTER_FIELD, COUNTER_FIELD)
	struct debuginfo_stats sym;	/* symbol files and debug info */
};

struct proctable;

struct proctable *proctable__new(void);

/* Sets the memory bounds of what is kept per process from the agent's
 * --max-memory (0: record's own defaults). Perf maps: a quarter of it in
 * all, a sixteenth for one process; a map over its share is not read.
 * Executable mappings: a quarter of it for all processes; a process that
 * finds no room keeps the mappings that fit, in address order. */
void proctable__set_memory(struct proctable *t, uint64_t max_memory);
void proctable__free(struct proctable *t);		/* accepts NULL */

/* The entry for (pid, start_ns), read from /proc on first sight. Returns
 * NULL only on ENOMEM; a process that is gone gets an entry with no maps. */
struct proc *proctable__get(struct proctable *t, uint32_t pid, uint64_t start_ns,
			const char *comm);

/* Drops the entry: the pid exec'd or exited. */
void proctable__forget(struct proctable *t, uint32_t pid);

/* The mapping that holds addr, re-reading the maps when none does (a
 * library loaded after the first read): at most every 200 ms, or 10 ms
 * after the last read when the sample was taken (time_ns, CLOCK_MONOTONIC;
 * 0 when unknown) after it. NULL if none. */
struct proc_map *proctable__find_map(struct proctable *t, struct proc *p,
				 uint64_t addr, uint64_t time_ns);

/* The mapping that holds addr in the maps read so far (no re-read), or
 * NULL. */
struct proc_map *proctable__map_at(const struct proc *p, uint64_t addr);

/* Whether each read of a process's maps keeps all its mappings too, not
 * only the executable ones, for proctable__data_object. Off by default;
 * set before the first process is read. */
void proctable__set_data_maps(struct proctable *t, bool on);

/* What a data address of p taken at time_ns belongs to, into buf (len
 * bytes): a variable of a binary it maps, "NAME (BINARY)", else the
 * mapping (its path, "[heap]", "[stack]", "[anon]"), else "[kernel]" or
 * "[unmapped]". An address no mapping holds reads the maps again, as
 * proctable__find_map does. Returns buf, and in *how which step named it. */
enum data_object_kind {
	DATA_OBJECT_SYMBOL,
	DATA_OBJECT_MAPPING,
	DATA_OBJECT_NONE,	/* [kernel], [unmapped] */
};
const char *proctable__data_object(struct proctable *t, struct proc *p,
				   uint64_t addr, uint64_t time_ns, char *buf,
				   size_t len, enum data_object_kind *how);

/* Symbols of a binary, loaded through /proc/PID/root on first use (so
 * binaries in other mount namespaces resolve). NULL if unreadable. */
struct elfsym *proctable__binary_syms(struct proctable *t, const struct proc *p,
				  struct binary *b);

/* The symbol file of the binary a mapping holds, loaded on first use from
 * the file trusted for it (symtrust.h). NULL if unreadable or not trusted
 * (counted in the stats). */
struct symfile *proctable__map_symfile(struct proctable *t, const struct proc *p,
				   struct proc_map *m);

/* The symbol cache, for lookups (symfile__lookup). */
struct symcache *proctable__symcache(struct proctable *t);

/* The name a JIT gave the code at addr in its perf map
 * (/tmp/perf-PID.map, PID as the process sees itself: jitmap.h), or NULL.
 * The map is read on first use and again, at most once a second, when an
 * address is missing and the file changed. The name is valid until the
 * next call for this process. */
const char *proctable__jit_name(struct proctable *t, struct proc *p,
				uint64_t addr);

/* The code load of the process's jitdump (jitdumpfile.h) that held addr
 * at time_ns (CLOCK_MONOTONIC; 0: now), its file as the process maps it
 * in *path: 1. 0 when the process has a jitdump that names no code there
 * then; -ENOENT when it has none that can be read. The file is found in
 * the maps and read on first use, and read on from where it stopped when
 * it grew, for a sample newer than the last look (jitdumpfile.h).
 * Strings are valid until the next call for this process. */
int proctable__jitdump(struct proctable *t, struct proc *p, uint64_t addr,
		       uint64_t time_ns, struct jitdump_hit *hit,
		       const char **path);

/* Frees entries of processes that are gone (exit events can be lost, or
 * come before we saw the process) and binaries no process maps any more. */
void proctable__sweep(struct proctable *t);

/* Whether pid still names the process that started at start_ns (0: any). */
bool proctable__alive(const struct proctable *t, uint32_t pid, uint64_t start_ns);

size_t proctable__count(const struct proctable *t);
const struct proctable_stats *proctable__stats(const struct proctable *t);

#endif
