// SPDX-License-Identifier: BSD-2-Clause
/* A process's jitdump, found, read and read on within its budget
 * (jitdumpfile.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "proc/jitdump.h"
#include "proc/jitdumpfile.h"
#include "proc/jitmap.h"
#include "proc/proctable.h"
#include "proc/targetfile.h"
#include "util/clock.h"

/* What was read of the file at time R names code exactly for samples
 * taken before R; a sample after it may run code whose record came later
 * (a JIT reusing memory writes the new code's). So the file is looked at
 * again for every sample newer than the last look: a look covers every
 * sample taken before it, all the samples of the reader's batch then, so
 * it costs a stat(2) per batch while the file does not grow, and a read of
 * what was appended when it did; and one per sample taken while the reader
 * runs. (Not sooner than 1 ms after the last look, as it once was, named a
 * sample taken just after a look from the code its memory held before: a
 * sanitized CI's codegen_churn_jit_names.) Without a sample time (or with
 * times of another clock), once a second. */
#define RECHECK_NS (1000ull * 1000 * 1000)
/* Code that ended this long ago names no sample still on its way. */
#define KEEP_NS (30ull * 1000 * 1000 * 1000)
/* A dump is not worth going over below this. */
#define FORGET_MIN (256u << 10)

struct jitdumpfile {
	struct jitdump *dump;		/* what was read of the file, or NULL */
	struct jitdump_stats st;	/* its parse's counts ... */
	struct jitdump_stats counted;	/* ... as the table's counters have
					 * them */
	size_t bytes;			/* dump's, in the table's total */
	char *path;			/* as the process maps it; NULL: none
					 * found */
	uint64_t start, end, dev, ino;	/* its mapping */
	uint64_t maps_ver;		/* of the maps it was looked for in */
	uint64_t looked_ns;		/* when its size was last looked at */
	uint64_t size;			/* ... and what it was */
	uint32_t nspid;
	uid_t uid;
	bool have_ids;			/* nspid and uid were read */
	bool read, refused, truncated;	/* counted for this file */
	size_t forget_at;		/* bytes the dump may reach before
					 * ended code is forgotten next */
	uint64_t forgot_ns;		/* when that was last tried */
};

/* A name a JIT's jitdump may have, before the process's ids are read. */
static bool jitdump_like(const char *name)
{
	size_t n = strlen(name);

	return n > 9 && !strncmp(name, "jit-", 4) &&
	       !strcmp(name + n - 5, ".dump");
}

/* The process's own jitdump: jit-NSPID.dump (perf's rule: one it maps
 * of another pid was inherited, or is another process's). */
static const struct proc_map *find_map(struct jitdumpfile *jf,
				       const struct proc *p)
{
	char want[32];

	for (size_t i = 0; i < p->nmaps; i++) {
		const struct proc_map *m = &p->maps[i];

		if (!m->bin || !jitdump_like(m->bin->name))
			continue;
		if (!jf->have_ids &&
		    !(jf->have_ids = jitmap__ns_pid_uid(p->pid, &jf->nspid,
							&jf->uid)))
			return NULL;
		snprintf(want, sizeof(want), "jit-%u.dump", jf->nspid);
		if (!strcmp(m->bin->name, want))
			return m;
	}
	return NULL;
}

/* Forgets what was read of the file, and takes it off the table's
 * total; the counts stay. */
static void forget_dump(struct jitdumpfile *jf, struct proctable_stats *st)
{
	if (st)
		st->jitdump_bytes -= jf->bytes;
	jf->bytes = 0;
	jitdump__free(jf->dump);
	jf->dump = NULL;
	jf->size = 0;
	memset(&jf->st, 0, sizeof(jf->st));
	memset(&jf->counted, 0, sizeof(jf->counted));
	jf->read = jf->refused = jf->truncated = false;
}

/* Looks for the file in the maps as last read. A file no longer mapped
 * is kept: it described the code the process ran. */
static void find(struct jitdumpfile *jf, struct proctable_stats *st,
		 const struct proc *p)
{
	const struct proc_map *m;

	jf->maps_ver = p->maps_ver;
	m = find_map(jf, p);
	if (!m)
		return;
	if (jf->path && (m->bin->dev != jf->dev || m->bin->ino != jf->ino)) {
		/* Another file of that name: the JIT started again. */
		forget_dump(jf, st);
		free(jf->path);
		jf->path = NULL;
	}
	if (!jf->path) {
		jf->path = strdup(m->bin->path);
		if (!jf->path)
			return;
		jf->looked_ns = 0;
	}
	jf->start = m->start;
	jf->end = m->end;
	jf->dev = m->bin->dev;
	jf->ino = m->bin->ino;
}

static void refuse(struct jitdumpfile *jf, struct proctable_stats *st)
{
	if (!jf->refused) {
		jf->refused = true;
		st->jitdump_refused++;
	}
}

/* The most the dump may hold: its process's share, within what the perf
 * maps and the other jitdumps leave of the total. */
static size_t room(const struct jitdumpfile *jf,
		   const struct proctable_stats *st)
{
	uint64_t used = st->perfmap_bytes + st->jitdump_bytes - jf->bytes;
	uint64_t r = used < st->perfmaps_budget ?
		     st->perfmaps_budget - used : 0;

	return r < st->perfmap_proc_budget ? r : st->perfmap_proc_budget;
}

/* Adds what the parse counted since the last time to the table's
 * counters; flags count once per file. */
static void count(struct jitdumpfile *jf, struct proctable_stats *st)
{
	const struct jitdump_stats *s = &jf->st, *c = &jf->counted;
	size_t bytes = jitdump__bytes(jf->dump);

	st->jitdump_bytes = st->jitdump_bytes - jf->bytes + bytes;
	jf->bytes = bytes;
	st->jitdump_records += s->records - c->records;
	st->jitdump_loads += s->loads + s->moves - c->loads - c->moves;
	st->jitdump_debug_entries += s->debug_entries - c->debug_entries;
	st->jitdump_unwind_infos += s->unwind_infos - c->unwind_infos;
	st->jitdump_bad_records += s->bad_records + s->bad_names -
				   c->bad_records - c->bad_names;
	st->jitdump_names_fixed += s->names_fixed - c->names_fixed;
	if (s->bad_header && !c->bad_header)
		refuse(jf, st);
	if (s->full && !c->full)
		st->jitdump_truncated++;
	if (s->over_budget && !c->over_budget)
		st->jitdump_over_budget++;
	jf->counted = *s;
}

/* Reads the file on from where the dump stopped, up to end, a record's
 * worth at a time. */
static void feed_file(struct jitdumpfile *jf, int fd, uint64_t end)
{
	uint8_t *buf = malloc(JITDUMP_RECORD_MAX);
	uint64_t off = jitdump__next(jf->dump), next;
	ssize_t n;

	if (!buf)
		return;
	while (off < end) {
		n = pread(fd, buf, end - off < JITDUMP_RECORD_MAX ?
				   end - off : JITDUMP_RECORD_MAX, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		next = jitdump__feed(jf->dump, buf, n, end, &jf->st);
		/* A record not all written yet: the rest next time. */
		if (next == off)
			break;
		off = next;
	}
	free(buf);
	jitdump__index(jf->dump);
}

/* Whether more of the file can be read: it was not refused, and its
 * parse was not stopped for good. */
static bool readable(const struct jitdumpfile *jf)
{
	const struct jitdump_stats *s = &jf->st;

	return !jf->refused && !s->bad_header && !s->broken && !s->full &&
	       !s->over_budget;
}

/* Forgets the code that ended long ago when the dump doubled since the
 * last time, or when its parse stopped at the memory bound (then at most
 * once a RECHECK_NS): what it holds follows the JIT's live code, and a
 * JIT that compiles for days stays named. */
static void forget_ended(struct jitdumpfile *jf, uint64_t now)
{
	size_t bytes = jitdump__bytes(jf->dump);
	bool stuck = jf->st.over_budget && now - jf->forgot_ns >= RECHECK_NS;

	if (!jf->dump || (bytes <= jf->forget_at && !stuck))
		return;
	jf->forgot_ns = now;
	/* Made room: the parse goes on (the stop stays counted). */
	if (jitdump__forget(jf->dump, now > KEEP_NS ? now - KEEP_NS : 0))
		jf->st.over_budget = false;
	bytes = jitdump__bytes(jf->dump);
	jf->forget_at = 2 * bytes > FORGET_MIN ? 2 * bytes : FORGET_MIN;
}

/* Opens the file mapped and reads what it gained since the last time. */
static void read_more(struct jitdumpfile *jf, struct proctable_stats *st,
		      uint32_t pid, uint64_t now)
{
	struct stat sb;
	uint64_t size;
	int fd;

	/* Unchanged, by the kernel's link to it: nothing opened. */
	if (jf->dump && !targetfile__stat_mapped(pid, jf->start, jf->end,
						 jf->dev, jf->ino, &sb) &&
	    (uint64_t)sb.st_size == jf->size)
		return;
	fd = targetfile__open_mapped(pid, jf->start, jf->end, jf->path,
				     jf->dev, jf->ino, NULL, 0);
	if (fd < 0) {
		/* A link on the way, not a regular file, another file. */
		if (fd == -ELOOP || fd == -ENOEXEC || fd == -ESTALE)
			refuse(jf, st);
		return;
	}
	if (fstat(fd, &sb) || (sb.st_uid != jf->uid && sb.st_uid != 0)) {
		refuse(jf, st);
		goto out;
	}
	size = sb.st_size;
	if (jf->dump && size == jf->size)
		goto out;
	/* Shorter than what was read: written again from the start. */
	if (jf->dump && size < jitdump__next(jf->dump))
		forget_dump(jf, st);
	jf->size = size;
	forget_ended(jf, now);
	if (!readable(jf))
		goto out;
	if (size > JITDUMP_FILE_MAX && !jf->truncated) {
		jf->truncated = true;
		st->jitdump_truncated++;
	}
	if (!jf->dump && !(jf->dump = jitdump__new(0)))
		goto out;
	jitdump__set_max_bytes(jf->dump, room(jf, st));
	feed_file(jf, fd, size < JITDUMP_FILE_MAX ? size : JITDUMP_FILE_MAX);
	/* Read: its header was. */
	if (!jf->read && jitdump__next(jf->dump)) {
		jf->read = true;
		st->jitdumps_read++;
	}
	count(jf, st);
out:
	close(fd);
}

/* Whether to look at the file again before naming code for a sample
 * taken at time_ns. */
static bool look_again(const struct jitdumpfile *jf, uint64_t time_ns,
		       uint64_t now)
{
	if (!jf->looked_ns || now - jf->looked_ns >= RECHECK_NS)
		return true;
	return time_ns > jf->looked_ns && !jf->st.arch_time;
}

int jitdumpfile__lookup(struct jitdumpfile **jfp, struct proctable_stats *st,
			const struct proc *p, uint64_t addr, uint64_t time_ns,
			struct jitdump_hit *hit, const char **path)
{
	struct jitdumpfile *jf = *jfp;
	uint64_t now;

	if (!jf && !(jf = *jfp = calloc(1, sizeof(*jf))))
		return -ENOMEM;
	if (jf->maps_ver != p->maps_ver)
		find(jf, st, p);
	if (!jf->path)
		return -ENOENT;
	now = clock__mono_ns();
	if (look_again(jf, time_ns, now)) {
		/* Before the look: what is written after it is not in it. */
		jf->looked_ns = now;
		read_more(jf, st, p->pid, now);
	}
	if (!jf->dump || jf->refused || jf->st.bad_header)
		return -ENOENT;
	if (!jitdump__lookup(jf->dump, addr, time_ns, hit))
		return 0;
	*path = jf->path;
	return 1;
}

void jitdumpfile__free(struct jitdumpfile *jf, struct proctable_stats *st)
{
	uint64_t end;

	if (!jf)
		return;
	/* The process is gone: a record still cut short at the end of its
	 * file will never be finished. */
	end = jf->size < JITDUMP_FILE_MAX ? jf->size : JITDUMP_FILE_MAX;
	if (jf->dump && readable(jf) && jitdump__next(jf->dump) < end)
		st->jitdump_bad_records++;
	forget_dump(jf, st);
	free(jf->path);
	free(jf);
}
