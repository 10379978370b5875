// SPDX-License-Identifier: BSD-2-Clause
/* Which file is trusted for a mapping, and its symbols (symtrust.h). */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "proc/procfs.h"
#include "proc/proctable.h"
#include "proc/symtrust.h"
#include "proc/targetfile.h"
#include "sym/elfsym.h"
#include "sym/symfile.h"

/* The build ID of the file as the process maps it, read from its memory;
 * false when it cannot be read (the process is gone, or not 64-bit). */
static bool mapped_build_id(const struct proc *p, const struct proc_map *m,
			    char *id, size_t len)
{
	if (!m->hdr_start || p->stale)
		return false;
	return elfsym__mem_build_id(p->pid, m->hdr_start, id, len) == 0;
}

/* The binary's path as the process sees it, without " (deleted)", into
 * buf ("" if it does not fit). */
static void binary_path(const struct binary *b, char *buf, size_t len)
{
	size_t n = strlen(b->path);

	if (b->deleted)
		n = procfs__undeleted_len(b->path, n);
	if (n >= len)
		n = 0;
	memcpy(buf, b->path, n);
	buf[n] = '\0';
}

/* Loads the symbols of the file open at fd, read from path (the mapped
 * file: targetfile__open_mapped checked it). 0, or -errno; -ESTALE when
 * its build ID is not the one the process has in memory. */
static int load_binary(const struct proc *p, struct binary *b, int fd,
		       const char *path, const char *orig,
		       const char *expected)
{
	char id[160], root[64];
	struct symfile_source src;
	int rc;

	rc = elfsym__peek_build_id(fd, id, sizeof(id));
	if (rc && rc != -ENOENT)
		return rc;		/* not ELF, or unreadable */
	if (expected && (rc || strcmp(id, expected)))
		return -ESTALE;
	procfs__root_path(root, sizeof(root), p->pid, "", 0);
	src = (struct symfile_source){ .path = path, .fd = fd,
				       .build_id = rc ? NULL : id,
				       .root = p->stale ? NULL : root,
				       .orig_path = orig, .dev = b->dev,
				       .ino = b->ino };
	b->sf = symcache__get(b->cache, &src);
	if (!b->sf)
		return errno ? -errno : -EINVAL;
	b->syms = symfile__elfsym(b->sf);
	return 0;
}

/* The file is the mapped one by device and inode (or map_files), and, when
 * the process's memory shows one, by build ID. */
struct symfile *symtrust__map_symfile(struct proctable_stats *st,
				      const struct proc *p, struct proc_map *m)
{
	char path[PATH_MAX + 32], orig[PATH_MAX], expected[160];
	struct binary *b = m->bin;
	bool have_id;
	int fd, rc;

	if (!b)
		return NULL;
	if (b->loaded)
		return b->sf;
	b->loaded = true;
	if (b->path[0] != '/') {	/* [vdso], [vsyscall] and the like */
		b->load_err = ENOENT;
		return NULL;
	}
	binary_path(b, orig, sizeof(orig));
	if (!orig[0]) {
		b->load_err = ENAMETOOLONG;
		return NULL;
	}
	have_id = mapped_build_id(p, m, expected, sizeof(expected));
	/* A stale pid is another process's now: only the host's path. */
	fd = targetfile__open_mapped(p->stale ? 0 : p->pid, m->start, m->end,
				     orig, b->dev, b->ino, path, sizeof(path));
	rc = fd < 0 ? fd : load_binary(p, b, fd, path, orig,
				       have_id ? expected : NULL);
	if (fd >= 0)
		close(fd);
	if (!rc) {
		if (elfsym__damaged(b->syms))
			st->elf_corrupt++;
		return b->sf;
	}
	b->load_err = -rc;
	st->elf_failed++;
	if (rc == -ESTALE)
		st->build_id_mismatch++;
	else if (rc == -ENOEXEC || rc == -EINVAL)
		st->elf_corrupt++;
	return NULL;
}
