// SPDX-License-Identifier: BSD-2-Clause
/* A process's JIT perf map, read and re-read within its budget
 * (jitmap.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "proc/jitmap.h"
#include "proc/perfmap.h"
#include "proc/procfs.h"
#include "proc/proctable.h"
#include "util/clock.h"

#define RECHECK_NS (1000ull * 1000 * 1000)
/* A map found changed at every reread is reread ever less often, up to
 * this: a process rewriting its map all the time costs one read of at
 * most its budget per interval, not a read per second. */
#define RECHECK_MAX_NS (32ull * RECHECK_NS)

bool jitmap__ns_pid_uid(uint32_t pid, uint32_t *nspid, uid_t *uid)
{
	char path[64], *line = NULL, *s, *end;
	unsigned long v;
	bool have_pid = false, have_uid = false;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	*nspid = pid;
	while (getline(&line, &cap, f) > 0) {
		if (!strncmp(line, "NSpid:", 6)) {
			/* The last field is the innermost namespace's. */
			for (s = line + 6;; s = end) {
				v = strtoul(s, &end, 10);
				if (end == s)
					break;
				*nspid = v;
				have_pid = true;
			}
		} else if (!strncmp(line, "Uid:", 4)) {
			strtoul(line + 4, &end, 10);	/* real */
			v = strtoul(end, &s, 10);	/* effective */
			if (s != end) {
				*uid = v;
				have_uid = true;
			}
		}
	}
	free(line);
	fclose(f);
	return have_uid && (have_pid || *nspid == pid);
}

void jitmap__drop(struct jitmap *j, struct proctable_stats *st)
{
	if (j->map && st)
		st->perfmap_bytes -= perfmap__bytes(j->map);
	perfmap__free(j->map);
	j->map = NULL;
}

/* Counts a map not read because of the budget, once per version of the
 * file. */
static void over_budget(struct jitmap *j, struct proctable_stats *st,
			uint64_t ino, uint64_t size, uint64_t mtime)
{
	if (j->over && ino == j->ino && size == j->size &&
	    mtime == j->mtime_ns)
		return;
	j->over = true;
	st->perfmap_over_budget++;
}

static void refresh(struct jitmap *j, struct proctable_stats *st,
		    uint32_t pid)
{
	struct perfmap_stats ps;
	struct perfmap *pm;
	uint64_t mtime, room;
	char path[128], rel[64];
	uint32_t nspid;
	struct stat sb;
	uid_t uid = (uid_t)-1;
	int err;

	j->tried = true;
	j->checked_ns = clock__mono_ns();
	if (!jitmap__ns_pid_uid(pid, &nspid, &uid))
		return;
	snprintf(rel, sizeof(rel), "/tmp/perf-%u.map", nspid);
	if (!procfs__root_path(path, sizeof(path), pid, rel, strlen(rel)) ||
	    lstat(path, &sb))
		return;
	mtime = (uint64_t)sb.st_mtim.tv_sec * 1000000000ull +
		sb.st_mtim.tv_nsec;
	if ((j->map || j->over) && (uint64_t)sb.st_ino == j->ino &&
	    (uint64_t)sb.st_size == j->size && mtime == j->mtime_ns) {
		/* Unchanged: back to the usual pace. */
		j->backoff_ns /= 2;
		return;
	}
	/* Changed since the last read: the next one waits longer. */
	if (j->tried_read)
		j->backoff_ns = j->backoff_ns ? j->backoff_ns * 2 :
						RECHECK_NS;
	if (j->backoff_ns > RECHECK_MAX_NS)
		j->backoff_ns = RECHECK_MAX_NS;
	j->tried_read = true;
	/* The old version goes first: it is stale, and the new one gets its
	 * room within the total. */
	jitmap__drop(j, st);
	room = st->perfmap_bytes < st->perfmaps_budget ?
	       st->perfmaps_budget - st->perfmap_bytes : 0;
	if (room > st->perfmap_proc_budget)
		room = st->perfmap_proc_budget;
	/* Too big for the room left, by its size: not opened at all. */
	if ((uint64_t)sb.st_size > room) {
		over_budget(j, st, sb.st_ino, sb.st_size, mtime);
		goto remember;
	}
	err = perfmap__read(path, uid, room, &pm, &ps);
	if (err == -EFBIG) {	/* grew since the lstat */
		over_budget(j, st, sb.st_ino, sb.st_size, mtime);
		goto remember;
	}
	if (err) {
		if ((err == -EPERM || err == -ENOEXEC) && !j->refused) {
			j->refused = true;
			st->perfmap_refused++;
		}
		return;
	}
	j->over = false;
	if (!j->read) {
		j->read = true;
		st->perfmaps_read++;
	}
	/* Maps grow by appending: count only lines not counted before. */
	if (ps.bad_lines > j->bad)
		st->perfmap_bad_lines += ps.bad_lines - j->bad;
	j->bad = ps.bad_lines;
	if (ps.truncated && !j->truncated) {
		j->truncated = true;
		st->perfmap_truncated++;
	}
	st->perfmap_bytes += perfmap__bytes(pm);
	j->map = pm;
remember:
	j->ino = sb.st_ino;
	j->size = sb.st_size;
	j->mtime_ns = mtime;
}

const char *jitmap__name(struct jitmap *j, struct proctable_stats *st,
			 uint32_t pid, uint64_t addr)
{
	const char *name;

	name = perfmap__lookup(j->map, addr, NULL);
	if (name)
		return name;
	if (j->tried && clock__mono_ns() - j->checked_ns <
	    RECHECK_NS + j->backoff_ns)
		return NULL;
	refresh(j, st, pid);
	return perfmap__lookup(j->map, addr, NULL);
}
