/* /proc/PID plumbing shared by the process table, the TLS locator, the
 * process-context reader and the unwinder: the maps parser, the remote
 * memory reader and the path of a process's root.
 *
 * As in bcc's trace_helpers, the parser takes any FILE (a recorded maps
 * text in the unit tests, through fmemopen) and /proc is a thin wrapper
 * around it, so that what the parser makes of hostile text can be tested
 * without root and without a process to show it. */
#ifndef TAGPROF_PROCFS_H
#define TAGPROF_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One line of /proc/PID/maps:
 *   start-end perms offset major:minor inode [path]
 * path is the rest of the line, spaces and a " (deleted)" suffix included:
 * "" for anonymous memory, "[vdso]", "[stack]", "[anon:NAME]" for the
 * special and named ones. It points into the line read, valid only while
 * the callback that gets it runs. */
struct procfs_map {
	uint64_t start, end;
	uint64_t offset;	/* into the file, for a file mapping */
	uint64_t dev;		/* major << 32 | minor (targetfile__dev) */
	uint64_t ino;		/* 0 when no file is mapped */
	char perms[8];		/* "r-xp" */
	const char *path;
};

static inline bool procfs_map__exec(const struct procfs_map *m)
{
	return m->perms[2] == 'x';
}

/* Parses one line into *m; its newline, if any, is cut off. false for a
 * line that is not a maps line (then *m is not to be used). */
bool procfs__parse_maps_line(char *line, struct procfs_map *m);

/* Called for each mapping: 0 goes on; anything else stops the walk and is
 * what the walk returns. */
typedef int (*procfs_maps_fn)(const struct procfs_map *m, void *arg);

/* Calls fn for each line of f that parses, in order; lines that do not
 * are skipped. A line is read whole, whatever its length: the kernel
 * bounds a maps line (a path of PATH_MAX, escaped). Returns what fn
 * returned to stop, else 0 at the end of f or when reading fails: callers
 * that must not take a partial list for the whole check ferror(f). */
int procfs__parse_maps(FILE *f, procfs_maps_fn fn, void *arg);

/* The pid of this process, whatever pid namespace /proc was mounted from
 * (/proc/self). */
#define PROCFS_SELF (-1)

/* /proc/PID/maps, open for reading; NULL with errno set when it cannot be
 * opened. */
FILE *procfs__open_maps(int pid);

/* The device (as maps shows it: targetfile__dev) and inode of the file
 * pid executes, from stat(2) of /proc/PID/exe: the kernel's own link to
 * the file the process runs, which no path a user controls takes part
 * in. false when there is none (a kernel thread, a process gone). */
bool procfs__exe_id(int pid, uint64_t *dev, uint64_t *ino);

/* procfs__parse_maps over /proc/PID/maps: -errno when it cannot be
 * opened, else what the walk returned. */
int procfs__read_maps(int pid, procfs_maps_fn fn, void *arg);

/* Reads len bytes at addr of pid's memory: process_vm_readv, else
 * /proc/PID/mem where that syscall is missing (ENOSYS) or refused (EPERM,
 * some sandboxes). 0 when all of it was read; -EFAULT when not all of it
 * is mapped; -ESRCH when the process is gone; else -errno. */
int procfs__read_mem(int pid, uint64_t addr, void *buf, size_t len);

/* The kernel ends the path of a file replaced or removed while mapped with
 * " (deleted)" (/proc/PID/maps, /proc/PID/exe): the length of path's first
 * len bytes without it, or len when it does not end so. */
#define PROCFS_DELETED " (deleted)"
size_t procfs__undeleted_len(const char *path, size_t len);

/* "/proc/PID/root" followed by the first len bytes of path (absolute, as
 * the process sees it) into buf: the agent's name for the process's file,
 * which targetfile__open resolves inside that root and without symbolic
 * links. An empty path gives the root itself. false when it does not fit
 * in size bytes. */
bool procfs__root_path(char *buf, size_t size, int pid, const char *path,
		       size_t len);

#endif
