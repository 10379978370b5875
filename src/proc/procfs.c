// SPDX-License-Identifier: BSD-2-Clause
/* /proc/PID plumbing (procfs.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "proc/procfs.h"
#include "proc/targetfile.h"

/* A number at *p in base 16 or 10: at least one digit, and no more than
 * fit in 64 bits. Moves *p past it. */
static bool parse_num(const char **p, int base, uint64_t *v)
{
	const char *s = *p;
	uint64_t n = 0;
	unsigned d;

	for (;; s++) {
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (n > (UINT64_MAX - d) / base)
			return false;
		n = n * base + d;
	}
	if (s == *p)
		return false;
	*v = n;
	*p = s;
	return true;
}

/* The character c at *p, which is then moved past it. */
static bool parse_char(const char **p, char c)
{
	if (**p != c)
		return false;
	++*p;
	return true;
}

/* Parsed by hand, not with sscanf: every process discovery and maps
 * reload reads every line, and sscanf's format interpretation was most of
 * the parsing. The kernel writes the fields with one blank between them,
 * then pads to the path. */
bool procfs__parse_maps_line(char *line, struct procfs_map *m)
{
	const char *p = line;
	uint64_t maj, min;
	size_t len = strlen(line), n;

	if (len && line[len - 1] == '\n')
		line[--len] = '\0';
	if (!parse_num(&p, 16, &m->start) || !parse_char(&p, '-') ||
	    !parse_num(&p, 16, &m->end) || !parse_char(&p, ' '))
		return false;
	n = strcspn(p, " \t");
	if (!n || n >= sizeof(m->perms))
		return false;
	memcpy(m->perms, p, n);
	m->perms[n] = '\0';
	p += n;
	if (!parse_char(&p, ' ') || !parse_num(&p, 16, &m->offset) ||
	    !parse_char(&p, ' ') || !parse_num(&p, 16, &maj) ||
	    !parse_char(&p, ':') || !parse_num(&p, 16, &min) ||
	    !parse_char(&p, ' ') || !parse_num(&p, 10, &m->ino) ||
	    maj > UINT32_MAX || min > UINT32_MAX)
		return false;
	/* The path, after the padding; none: the end of the line. */
	if (*p && *p != ' ' && *p != '\t')
		return false;
	p += strspn(p, " \t");
	m->dev = maj << 32 | min;
	m->path = p;
	return true;
}

int procfs__parse_maps(FILE *f, procfs_maps_fn fn, void *arg)
{
	struct procfs_map m;
	char *line = NULL;
	size_t cap = 0;
	int ret = 0;

	while (!ret && getline(&line, &cap, f) > 0)
		if (procfs__parse_maps_line(line, &m))
			ret = fn(&m, arg);
	free(line);
	return ret;
}

/* "/proc/PID/what" (or /proc/self/what) into buf. */
static void proc_path(char *buf, size_t len, int pid, const char *what)
{
	if (pid != PROCFS_SELF)
		snprintf(buf, len, "/proc/%d/%s", pid, what);
	else
		snprintf(buf, len, "/proc/self/%s", what);
}

FILE *procfs__open_maps(int pid)
{
	char path[64];

	proc_path(path, sizeof(path), pid, "maps");
	return fopen(path, "re");
}

bool procfs__exe_id(int pid, uint64_t *dev, uint64_t *ino)
{
	char path[64];
	struct stat st;

	proc_path(path, sizeof(path), pid, "exe");
	if (stat(path, &st))
		return false;
	*dev = targetfile__dev(st.st_dev);
	*ino = st.st_ino;
	return true;
}

int procfs__read_maps(int pid, procfs_maps_fn fn, void *arg)
{
	FILE *f = procfs__open_maps(pid);
	int ret;

	if (!f)
		return -errno;
	ret = procfs__parse_maps(f, fn, arg);
	fclose(f);
	return ret;
}

/* The fallback: a file read, one open per call. */
static int read_proc_mem(int pid, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd, err;

	/* pread's offset is signed: higher addresses are no one's. */
	if (addr > INT64_MAX)
		return -EFAULT;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = pread(fd, buf, len, (off_t)addr);
	if (n < 0)
		err = errno == EIO ? -EFAULT : -errno;
	else
		err = (size_t)n == len ? 0 : -EFAULT;
	close(fd);
	return err;
}

int procfs__read_mem(int pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr,
				.iov_len = len };
	ssize_t n;

	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n >= 0)
		return (size_t)n == len ? 0 : -EFAULT;
	if (errno != ENOSYS && errno != EPERM)
		return -errno;
	return read_proc_mem(pid, addr, buf, len);
}

size_t procfs__undeleted_len(const char *path, size_t len)
{
	size_t sl = sizeof(PROCFS_DELETED) - 1;

	if (len > sl && !memcmp(path + len - sl, PROCFS_DELETED, sl))
		return len - sl;
	return len;
}

bool procfs__root_path(char *buf, size_t size, int pid, const char *path,
		       size_t len)
{
	int n;

	if (len > INT_MAX)
		return false;
	n = snprintf(buf, size, "/proc/%d/root%.*s", pid, (int)len, path);
	return n >= 0 && (size_t)n < size;
}
