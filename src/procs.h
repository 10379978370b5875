/* Process table: what each sampled process has mapped, so user addresses
 * can be turned into (binary, offset). Entries are keyed by pid and checked
 * against the process start time the BPF side reports, so a reused pid
 * never inherits the old process's maps; exec and exit drop entries. */
#ifndef TAGPROF_PROCS_H
#define TAGPROF_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elfsym;

/* One file-backed or special executable mapping, shared across processes
 * that map the same file. */
struct binary {
	char *path;		/* as in /proc/PID/maps, e.g. /usr/lib/libc.so.6 */
	const char *name;	/* basename of path */
	uint64_t dev, ino;
	struct elfsym *syms;	/* loaded on first use; NULL if unreadable */
	bool loaded;
	int load_err;		/* errno of the failed load, 0 if none */
	unsigned int refs;	/* mappings that use it */
};

struct proc_map {
	uint64_t start, end, offset;
	struct binary *bin;	/* NULL for anonymous memory */
	bool anon_exec;		/* executable anonymous memory (JIT) */
	uint64_t pprof_id;	/* pprof mapping id, valid for pprof_gen */
	uint64_t pprof_gen;
};

struct proc {
	uint32_t pid;
	uint64_t start_ns;	/* group leader start, boot-time ns */
	char exe[64];		/* executable name for the `process` label */
	struct proc_map *maps;	/* executable mappings, sorted by start */
	size_t nmaps;
	bool stale;		/* /proc says another process now owns the pid */
	uint64_t loaded_ns;	/* when maps were last read */
};

struct procs_stats {
	uint64_t procs_seen;	/* process entries created */
	uint64_t maps_reloads;	/* maps re-read for an address not mapped */
	uint64_t maps_failed;	/* /proc/PID/maps unreadable (process gone) */
	uint64_t pid_reused;	/* /proc/PID belongs to a newer process */
	uint64_t elf_failed;	/* binaries whose symbols could not be read */
};

struct procs;

struct procs *procs__new(void);
void procs__free(struct procs *t);		/* accepts NULL */

/* The entry for (pid, start_ns), read from /proc on first sight. Returns
 * NULL only on ENOMEM; a process that is gone gets an entry with no maps. */
struct proc *procs__get(struct procs *t, uint32_t pid, uint64_t start_ns,
			const char *comm);

/* Drops the entry: the pid exec'd or exited. */
void procs__forget(struct procs *t, uint32_t pid);

/* The mapping that holds addr, re-reading the maps at most every 200 ms
 * when none does (a library loaded after the first read). NULL if none. */
struct proc_map *procs__find_map(struct procs *t, struct proc *p,
				 uint64_t addr);

/* Symbols of a binary, loaded through /proc/PID/root on first use (so
 * binaries in other mount namespaces resolve). NULL if unreadable. */
struct elfsym *procs__binary_syms(struct procs *t, const struct proc *p,
				  struct binary *b);

/* Frees entries of processes that are gone (exit events can be lost, or
 * come before we saw the process) and binaries no process maps any more. */
void procs__sweep(struct procs *t);

size_t procs__count(const struct procs *t);
const struct procs_stats *procs__stats(const struct procs *t);

#endif
