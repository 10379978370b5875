// SPDX-License-Identifier: BSD-2-Clause
/* One way to open a file a profiled process names (targetfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "proc/procfs.h"
#include "proc/targetfile.h"

static struct targetfile_stats stats;
static bool map_files_denied;	/* EPERM once: no capability, stop trying */

uint64_t targetfile__dev(dev_t dev)
{
	return ((uint64_t)major(dev) << 32) | minor(dev);
}

const struct targetfile_stats *targetfile__stats(void)
{
	return &stats;
}

/* "/proc/PID/root" and the rest of path, when path lies under a process's
 * root; false otherwise. */
static bool split_root(const char *path, char *root, size_t rootlen,
		       const char **rest)
{
	const char *p = path + 6, *end;
	size_t n;

	if (strncmp(path, "/proc/", 6) || *p < '1' || *p > '9')
		return false;
	end = p + strspn(p, "0123456789");
	if (strncmp(end, "/root/", 6))
		return false;
	n = end + 5 - path;	/* "/proc/PID/root" */
	if (n >= rootlen)
		return false;
	memcpy(root, path, n);
	root[n] = '\0';
	*rest = end + 5;	/* keeps the leading '/' */
	return true;
}

/* Drops the last component of a resolved path ("" stands for "/"). */
static size_t drop_last(char *resolved)
{
	char *slash = strrchr(resolved, '/');

	if (slash)
		*slash = '\0';
	return strlen(resolved);
}

/* Appends component [p, p + n) to the resolved path of length *len. */
static int append_component(char *resolved, size_t size, size_t *len,
			    const char *p, size_t n)
{
	if (*len + 1 + n >= size)
		return -ENAMETOOLONG;
	resolved[(*len)++] = '/';
	memcpy(resolved + *len, p, n);
	*len += n;
	resolved[*len] = '\0';
	return 0;
}

/* Resolves path's symbolic links as the kernel would, into out, but only
 * links owned by root. In the host's debug directories only root is meant
 * to make links (Fedora's .build-id entries are links); one a user planted
 * in a directory it may write could name a file only root may read, and
 * its symbols would reach a profile. out is then opened with no link
 * followed, so a link put on the way meanwhile is refused, not followed. */
static int resolve_root_links(const char *path, char *out, size_t size)
{
	char todo[PATH_MAX], next[PATH_MAX], target[PATH_MAX];
	const char *p = todo;
	size_t len = 0;
	int links = 0, err;

	if ((size_t)snprintf(todo, sizeof(todo), "%s", path) >= sizeof(todo))
		return -ENAMETOOLONG;
	out[0] = '\0';
	while (*p) {
		const char *end;
		struct stat st;
		ssize_t n;

		p += strspn(p, "/");
		end = p + strcspn(p, "/");
		if (end == p || (end - p == 1 && p[0] == '.')) {
			p = end;
			continue;
		}
		if (end - p == 2 && p[0] == '.' && p[1] == '.') {
			len = drop_last(out);	/* out holds no links */
			p = end;
			continue;
		}
		err = append_component(out, size, &len, p, end - p);
		if (err)
			return err;
		p = end;
		if (lstat(out, &st) != 0)
			return -errno;
		if (!S_ISLNK(st.st_mode))
			continue;
		if (st.st_uid != 0) {
			stats.untrusted_link++;
			return -ELOOP;
		}
		if (++links > TARGETFILE_LINKS_MAX)
			return -ELOOP;
		n = readlink(out, target, sizeof(target) - 1);
		if (n <= 0)
			return n < 0 ? -errno : -ENOENT;
		target[n] = '\0';
		if ((size_t)snprintf(next, sizeof(next), "%s/%s", target, p) >=
		    sizeof(next))
			return -ENAMETOOLONG;
		memcpy(todo, next, sizeof(todo));
		p = todo;
		if (target[0] == '/') {
			out[0] = '\0';
			len = 0;
		} else {
			len = drop_last(out);
		}
	}
	if (!len)
		snprintf(out, size, "/");
	return 0;
}

/* An O_PATH descriptor for path, resolved as the header says. */
static int open_path(const char *path, bool follow)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
				.resolve = RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS };
	char root[64], resolved[PATH_MAX];
	const char *rest = path;
	int dfd = AT_FDCWD, fd, err;

	if (follow && !split_root(path, root, sizeof(root), &rest)) {
		err = resolve_root_links(path, resolved, sizeof(resolved));
		if (err) {
			if (err == -ELOOP)
				stats.symlink++;
			return err;
		}
		path = rest = resolved;
	}
	if (split_root(path, root, sizeof(root), &rest)) {
		/* The root itself is a magic link the kernel resolves. */
		dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return -errno;
		how.resolve |= RESOLVE_IN_ROOT;
	}
	fd = (int)syscall(SYS_openat2, dfd, rest, &how, sizeof(how));
	err = fd < 0 ? -errno : 0;
	if (err == -ENOSYS) {
		/* Before Linux 5.6: the last component at least. */
		fd = openat(AT_FDCWD, path, (int)how.flags);
		err = fd < 0 ? -errno : 0;
	}
	if (dfd != AT_FDCWD)
		close(dfd);
	if (err == -ELOOP)
		stats.symlink++;
	return err ? err : fd;
}

/* Checks an O_PATH descriptor and opens its file for reading. Takes pfd. */
static int reopen_checked(int pfd, const struct targetfile_want *want,
			  struct stat *out)
{
	char self[64];
	struct stat st, st2;
	int fd;

	if (fstat(pfd, &st) != 0) {
		fd = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		/* A symlink itself (O_NOFOLLOW on the last component) too. */
		if (S_ISLNK(st.st_mode))
			stats.symlink++;
		else
			stats.not_regular++;
		fd = S_ISLNK(st.st_mode) ? -ELOOP : -ENOEXEC;
		goto cleanup;
	}
	if (want && want->ino && (st.st_ino != want->ino ||
				  targetfile__dev(st.st_dev) != want->dev)) {
		stats.replaced++;
		fd = -ESTALE;
		goto cleanup;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		fd = -errno;
		goto cleanup;
	}
	/* The same inode, reached through the descriptor: checked anyway. */
	if (fstat(fd, &st2) != 0 || st2.st_ino != st.st_ino ||
	    st2.st_dev != st.st_dev) {
		close(fd);
		fd = -ESTALE;
		goto cleanup;
	}
	stats.opened++;
	if (out)
		*out = st;
cleanup:
	close(pfd);
	return fd;
}

/* Whether path is /proc/PID/map_files/START-END, and nothing more. */
static bool is_map_files(const char *path)
{
	unsigned int pid;
	uint64_t lo, hi;
	int n = 0;

	return sscanf(path, "/proc/%u/map_files/%" SCNx64 "-%" SCNx64 "%n",
		      &pid, &lo, &hi, &n) == 3 && n > 0 && !path[n] && lo < hi;
}

int targetfile__open(const char *path, const struct targetfile_want *want,
		     struct stat *st)
{
	int pfd;

	if (!path || path[0] != '/')
		return -EINVAL;
	if (is_map_files(path)) {
		/* The kernel's link to the mapped file, never the target's. */
		if (map_files_denied)
			return -EPERM;
		pfd = open(path, O_PATH | O_CLOEXEC);
		if (pfd < 0 && errno == EPERM) {
			map_files_denied = true;
			stats.map_files_denied++;
		}
		if (pfd < 0)
			return -errno;
	} else {
		pfd = open_path(path, want && want->follow);
		if (pfd < 0)
			return pfd;
	}
	return reopen_checked(pfd, want, st);
}

int targetfile__stat_mapped(uint32_t pid, uint64_t start, uint64_t end,
			    uint64_t dev, uint64_t ino, struct stat *st)
{
	char path[96];

	if (!pid || start >= end || !ino)
		return -EINVAL;
	if (map_files_denied)
		return -EPERM;
	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64,
		 pid, start, end);
	/* The kernel's link to the mapped file: stat follows it, and opens
	 * nothing (no FIFO waits, no device side effect). */
	if (stat(path, st) != 0) {
		if (errno == EPERM && !map_files_denied) {
			map_files_denied = true;
			stats.map_files_denied++;
		}
		return -errno;
	}
	if (!S_ISREG(st->st_mode))
		return -ENOEXEC;
	if (st->st_ino != ino || targetfile__dev(st->st_dev) != dev)
		return -ESTALE;
	return 0;
}

int targetfile__open_mapped(uint32_t pid, uint64_t start, uint64_t end,
			    const char *path, uint64_t dev, uint64_t ino,
			    char *used, size_t usedlen)
{
	struct targetfile_want want = { .dev = dev, .ino = ino };
	char buf[3][PATH_MAX + 32];
	size_t n = 0;
	int fd = -ENOENT;

	if (!ino)
		return -EINVAL;		/* nothing to check the file against */
	/* The mapped file itself; then the path as the process sees it;
	 * then the host's (the process may be gone). */
	if (pid && start < end)
		snprintf(buf[n++], sizeof(buf[0]),
			 "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, start,
			 end);
	if (path && path[0] == '/') {
		/* What maps adds to a deleted file's name is not part of it. */
		int len = (int)procfs__undeleted_len(path, strlen(path));
		if (pid && procfs__root_path(buf[n], sizeof(buf[0]), (int)pid,
					     path, len))
			n++;
		if ((size_t)snprintf(buf[n], sizeof(buf[0]), "%.*s", len,
				     path) < sizeof(buf[0]))
			n++;
	}
	for (size_t i = 0; i < n; i++) {
		fd = targetfile__open(buf[i], &want, NULL);
		if (fd >= 0) {
			if (i == 0 && pid && start < end)
				stats.by_map_files++;
			if (used)
				snprintf(used, usedlen, "%s", buf[i]);
			return fd;
		}
		/* Refused for what it is, or a link planted on the way: the
		 * other paths can only be worse. */
		if (fd == -ENOEXEC || fd == -ELOOP)
			return fd;
	}
	return fd;
}
