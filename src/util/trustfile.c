// SPDX-License-Identifier: BSD-2-Clause
/* Files root trusts by name. A symlink another user made at that name
 * (say to /etc/shadow) must not make root open, read or show the target,
 * and another user's file must not steer the agent. The checks apply to
 * what was opened (fstat), so a rename in between cannot swap it.
 */
#include "util/trustfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/errbuf.h"

#define TRUSTFILE_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

static bool trustfile__owner_ok(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* Opens the directory that holds path's last component, whose name is
 * left in *base. Directories on the way may be symlinks (/etc -> ...):
 * only the last component is the file's own. */
static int trustfile__open_dir(const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int dfd;

	if (!slash) {
		*base = path;
		return open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	*base = slash + 1;
	dir = slash == path ? strdup("/") :
			      strndup(path, (size_t)(slash - path));
	if (!dir) {
		errno = ENOMEM;
		return -1;
	}
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	return dfd;
}

/* base in dfd is a symlink: follows it once if root or we own it. The
 * link is checked and read through one O_PATH fd, so the link read is
 * the link checked; its target's own last component is not followed. */
static int trustfile__follow_once(int dfd, const char *base, char *why,
				  size_t len)
{
	char target[PATH_MAX];
	struct stat lst;
	ssize_t n;
	int lfd, fd, err;

	lfd = openat(dfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (lfd < 0)
		goto fail;
	if (fstat(lfd, &lst) < 0) {
		close(lfd);
		goto fail;
	}
	if (!S_ISLNK(lst.st_mode)) {	/* ELOOP from a directory on the way */
		close(lfd);
		errno = ELOOP;
		goto fail;
	}
	if (!trustfile__owner_ok(lst.st_uid)) {
		close(lfd);
		errbuf__set(why, len,
			    "is a symlink owned by uid %u (only root's or this user's are followed)",
			    (unsigned)lst.st_uid);
		return -EPERM;
	}
	n = readlinkat(lfd, "", target, sizeof(target) - 1);
	err = errno;
	close(lfd);
	if (n < 0) {
		errno = err;
		goto fail;
	}
	target[n] = '\0';
	fd = openat(dfd, target, TRUSTFILE_FLAGS | O_NOFOLLOW);
	if (fd >= 0)
		return fd;
	if (errno == ELOOP) {
		errbuf__set(why, len,
			    "is a symlink to a symlink (only one is followed)");
		return -ELOOP;
	}
fail:
	err = errno;
	errbuf__set(why, len, "%s", strerror(err));
	return -err;
}

int trustfile__open(const char *path, struct stat *st, char *why, size_t len)
{
	const char *base;
	int dfd, fd, err;

	errbuf__set(why, len, "%s", "");
	dfd = trustfile__open_dir(path, &base);
	if (dfd < 0) {
		err = errno;
		errbuf__set(why, len, "%s", strerror(err));
		return -err;
	}
	fd = openat(dfd, base, TRUSTFILE_FLAGS | O_NOFOLLOW);
	if (fd < 0 && errno == ELOOP)
		fd = trustfile__follow_once(dfd, base, why, len);
	else if (fd < 0) {
		fd = -errno;
		errbuf__set(why, len, "%s", strerror(errno));
	}
	close(dfd);
	if (fd < 0)
		return fd;
	err = 0;
	if (fstat(fd, st) < 0) {
		err = -errno;
		errbuf__set(why, len, "%s", strerror(errno));
	} else if (S_ISDIR(st->st_mode)) {
		err = -EISDIR;
		errbuf__set(why, len, "is a directory");
	} else if (!S_ISREG(st->st_mode)) {
		err = -EINVAL;
		errbuf__set(why, len, "is not a regular file");
	} else if (!trustfile__owner_ok(st->st_uid)) {
		/* The agent runs privileged: only root or its own user may
		 * steer it. */
		err = -EPERM;
		errbuf__set(why, len,
			    "is owned by uid %u, not by root or this user",
			    (unsigned)st->st_uid);
	} else if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		err = -EPERM;
		errbuf__set(why, len, "is writable by group or others");
	}
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}
