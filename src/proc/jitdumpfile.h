/* A process's jitdump (jitdump.h), found as perf finds it: the JIT maps
 * the file, executable (perf's agent, V8 and .NET all do, so that perf
 * record sees the mapping), and its name is jit-NSPID.dump, NSPID the pid
 * the process has in its own namespace. The process table keeps the
 * executable mappings: the file is looked for there when they were read
 * again, and opened through /proc/PID/map_files (targetfile.h), the
 * kernel's own link to the file mapped, so no path or link the process
 * controls decides what is read. It must be a regular file of the
 * process's user or root. At most JITDUMP_FILE_MAX bytes of it are read.
 *
 * The JIT appends: the file is looked at again for a sample taken after
 * the last look (the code there may have been replaced since; a look
 * covers the reader's whole batch of samples), at most every millisecond,
 * or once a second without a sample time; and when it grew, it is read on
 * from the record where the last read stopped.
 * What it holds counts in the budget the perf maps have (struct
 * proctable_stats, perfmap_proc_budget for one process, perfmaps_budget
 * for all of them and the maps); a file over it is read in part. The
 * counters are the process table's (jitdump*). */
#ifndef TAGPROF_JITDUMPFILE_H
#define TAGPROF_JITDUMPFILE_H

#include <stdint.h>

struct jitdump_hit;
struct jitdumpfile;
struct proc;
struct proctable_stats;

/* The code load of p's jitdump that held addr at time_ns: 1 with *hit and
 * the file's path as the process maps it in *path. 0 when p has a jitdump
 * that names no code there then; -ENOENT when it has none that can be
 * read; -ENOMEM. *jf, NULL at first, is p's state, made here. Strings are
 * valid until the next call for p. */
int jitdumpfile__lookup(struct jitdumpfile **jf, struct proctable_stats *st,
			const struct proc *p, uint64_t addr, uint64_t time_ns,
			struct jitdump_hit *hit, const char **path);

/* Frees jf (NULL accepted), and takes what it held off st's total (st may
 * be NULL). */
void jitdumpfile__free(struct jitdumpfile *jf, struct proctable_stats *st);

#endif
