/* A process's JIT symbols: its perf map (perfmap.h), /tmp/perf-NSPID.map
 * under the process's root, NSPID the pid it has in its own namespace.
 * The map is read on first use and again, at most once a second (less
 * often for a map that changes at every look), when an address is missing
 * and the file changed. The maps of all processes share a budget, and one
 * process's map has a share of it (proctable__set_memory): a map over the
 * room left is not read. The counters are the process table's
 * (struct proctable_stats, perfmap*). */
#ifndef TAGPROF_JITMAP_H
#define TAGPROF_JITMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct perfmap;
struct proctable_stats;

/* One process's map and what is known of its file; starts zeroed. */
struct jitmap {
	struct perfmap *map;	/* the version read, or NULL */
	bool tried, refused, truncated;
	bool tried_read;	/* a version of the file was seen */
	bool read;		/* ... and one was read */
	bool over;		/* the version seen is over the budget */
	uint64_t checked_ns;
	uint64_t backoff_ns;	/* added to the recheck interval */
	uint64_t ino, size, mtime_ns;	/* of the version seen */
	uint64_t bad;		/* garbage lines in the last read */
};

/* The name the JIT of process pid gave the code at addr, or NULL. The
 * name is valid until the next call for this process. */
const char *jitmap__name(struct jitmap *j, struct proctable_stats *st,
			 uint32_t pid, uint64_t addr);

/* The pid process pid has in its own namespace, the one its JIT names its
 * files by, and its effective uid, from /proc/PID/status. false when it
 * cannot be read. */
bool jitmap__ns_pid_uid(uint32_t pid, uint32_t *nspid, uid_t *uid);

/* Frees the map read, and takes it off st's total (st may be NULL). */
void jitmap__drop(struct jitmap *j, struct proctable_stats *st);

#endif
