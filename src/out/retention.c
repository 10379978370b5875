// SPDX-License-Identifier: BSD-2-Clause
/* The agent's output directory: one file per window, named so that names
 * sort by time; stale temporary files from a crash; the oldest profiles
 * deleted beyond the retention limits.
 *
 * Everything here works relative to an O_NOFOLLOW directory fd with the
 * *at calls and AT_SYMLINK_NOFOLLOW, and touches only regular files owned
 * by our effective uid whose names match the exact patterns below: a
 * symlink, a stray file, or another user's file with a profile's name (say
 * one dated in the future, which would sort last and make retention delete
 * our newest profiles) is never followed, counted or deleted. The
 * directory itself must be ours (or root's) and writable by nobody else.
 */
#include "out/retention.h"
#include "util/grow.h"
#include "util/sort.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RETENTION_DIR_MODE	0750
#define RETENTION_SUFFIX	".pb.gz"
#define RETENTION_SUFFIX_LEN	(sizeof(RETENTION_SUFFIX) - 1)
#define RETENTION_SERVICE_MAX	64
#define RETENTION_SERVICE_NONE	"unknown"
/* "YYYYMMDDTHHMMSSZ" */
#define RETENTION_STAMP_LEN	16
/* atomicfile__write's temporary names: "." base "." and six characters of
 * [A-Za-z0-9], the base cut to 200 characters (see src/out/atomicfile.c). */
#define RETENTION_TMP_BASE_MAX	200
#define RETENTION_TMP_SUFFIX	6

struct retention__file {
	char *name;
	uint64_t size;
};

struct retention__list {
	struct retention__file *files;
	size_t n;
	size_t cap;
};

static bool retention__is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool retention__is_alnum(char c)
{
	return retention__is_digit(c) || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z');
}

static bool retention__is_service_char(char c)
{
	return retention__is_alnum(c) || c == '.' || c == '_' || c == '-';
}

static bool retention__ends_with(const char *s, size_t len, const char *suf,
				 size_t suflen)
{
	return len >= suflen && !memcmp(s + len - suflen, suf, suflen);
}

/* ---- names ---- */

/* The service as it goes into a file name: [A-Za-z0-9._-] only, at most
 * RETENTION_SERVICE_MAX characters, never empty, never a leading '.'. */
static void retention__sanitize(const char *service,
				char out[RETENTION_SERVICE_MAX + 1])
{
	size_t i;

	if (!service || !*service)
		service = RETENTION_SERVICE_NONE;
	for (i = 0; i < RETENTION_SERVICE_MAX && service[i]; i++)
		out[i] = retention__is_service_char(service[i]) ? service[i]
								 : '_';
	out[i] = '\0';
	if (out[0] == '.')
		out[0] = '_';
}

int retention__file_name(const char *dir, time_t start, const char *service,
			 char *path, size_t len)
{
	char svc[RETENTION_SERVICE_MAX + 1];
	char stamp[RETENTION_STAMP_LEN + 1];
	const char *sep = "/";
	struct tm tm;
	size_t dlen;
	int n;

	if (path && len)
		path[0] = '\0';
	/* Four-digit years only, so the names keep sorting by time. */
	if (!gmtime_r(&start, &tm) || tm.tm_year < -1900 ||
	    tm.tm_year > 9999 - 1900)
		return -EINVAL;
	if (strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm) !=
	    RETENTION_STAMP_LEN)
		return -EINVAL;
	retention__sanitize(service, svc);
	if (!dir)
		dir = "";
	dlen = strlen(dir);
	if (!dlen || dir[dlen - 1] == '/')
		sep = "";
	if (!path || !len)
		return -ENAMETOOLONG;
	n = snprintf(path, len, "%s%s%s_%s" RETENTION_SUFFIX, dir, sep, stamp,
		     svc);
	if (n < 0 || (size_t)n >= len) {
		path[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}

/* Two digits at s, within [lo, hi]. */
static bool retention__two_digits(const char *s, int lo, int hi)
{
	int v;

	if (!retention__is_digit(s[0]) || !retention__is_digit(s[1]))
		return false;
	v = (s[0] - '0') * 10 + (s[1] - '0');
	return v >= lo && v <= hi;
}

/* True for exactly the names retention__file_name makes. */
static bool retention__is_profile_name(const char *name)
{
	size_t len = strlen(name), svc_len, i;
	const char *svc;

	if (len < RETENTION_STAMP_LEN + 2 + RETENTION_SUFFIX_LEN)
		return false;
	for (i = 0; i < 4; i++)
		if (!retention__is_digit(name[i]))
			return false;
	if (!retention__two_digits(name + 4, 1, 12) ||
	    !retention__two_digits(name + 6, 1, 31) || name[8] != 'T' ||
	    !retention__two_digits(name + 9, 0, 23) ||
	    !retention__two_digits(name + 11, 0, 59) ||
	    !retention__two_digits(name + 13, 0, 60) || name[15] != 'Z' ||
	    name[16] != '_')
		return false;
	if (!retention__ends_with(name, len, RETENTION_SUFFIX,
				  RETENTION_SUFFIX_LEN))
		return false;
	svc = name + RETENTION_STAMP_LEN + 1;
	svc_len = len - (RETENTION_STAMP_LEN + 1) - RETENTION_SUFFIX_LEN;
	if (svc_len < 1 || svc_len > RETENTION_SERVICE_MAX || svc[0] == '.')
		return false;
	for (i = 0; i < svc_len; i++)
		if (!retention__is_service_char(svc[i]))
			return false;
	return true;
}

/* True for exactly the temporary names atomicfile__write makes for a
 * target whose name ends in .pb.gz: "." base "." XXXXXX. */
static bool retention__is_temp_name(const char *name)
{
	size_t len = strlen(name), base_len, i;
	const char *base = name + 1;

	if (len < 1 + RETENTION_SUFFIX_LEN + 2 + RETENTION_TMP_SUFFIX ||
	    name[0] != '.' || name[len - RETENTION_TMP_SUFFIX - 1] != '.')
		return false;
	for (i = len - RETENTION_TMP_SUFFIX; i < len; i++)
		if (!retention__is_alnum(name[i]))
			return false;
	base_len = len - RETENTION_TMP_SUFFIX - 2;
	/* A base longer than atomicfile's cut would not end in .pb.gz any more. */
	if (base_len <= RETENTION_SUFFIX_LEN ||
	    base_len > RETENTION_TMP_BASE_MAX)
		return false;
	return retention__ends_with(base, base_len, RETENTION_SUFFIX,
				    RETENTION_SUFFIX_LEN);
}

/* ---- directory walks ---- */

/* Opens dir for reading, refusing a symlink. The DIR owns the fd. */
static int retention__opendir(const char *dir, DIR **d)
{
	int fd;

	if (!dir || !*dir)
		return -ENOENT;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*d = fdopendir(fd);
	if (!*d) {
		int err = -errno;

		close(fd);
		return err;
	}
	return 0;
}

/* A regular file we wrote: not followed, owned by our effective uid (the
 * owner of every file atomicfile__write creates). 1 yes, 0 no or gone,
 * -errno otherwise. */
static int retention__ours(int dfd, const char *name, struct stat *st)
{
	if (fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	return S_ISREG(st->st_mode) && st->st_uid == geteuid() ? 1 : 0;
}

int retention__clean_temp(const char *dir)
{
	struct dirent *de;
	struct stat st;
	int removed = 0, err, dfd;
	DIR *d;

	err = retention__opendir(dir, &d);
	if (err)
		return err;
	dfd = dirfd(d);
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			err = errno ? -errno : 0;
			break;
		}
		if (!retention__is_temp_name(de->d_name))
			continue;
		err = retention__ours(dfd, de->d_name, &st);
		if (err < 0)
			break;
		if (!err)
			continue;
		err = 0;
		/* unlinkat never follows; a name swapped for a symlink since
		 * the stat loses only the link. */
		if (unlinkat(dfd, de->d_name, 0) == 0)
			removed++;
		else if (errno != ENOENT) {
			err = -errno;
			break;
		}
	}
	closedir(d);
	return err ? err : removed;
}

static int retention__list_add(struct retention__list *l, const char *name,
			       uint64_t size)
{
	if (grow__array(&l->files, &l->cap, l->n + 1, sizeof(*l->files), 64))
		return -ENOMEM;
	l->files[l->n].name = strdup(name);
	if (!l->files[l->n].name)
		return -ENOMEM;
	l->files[l->n].size = size;
	l->n++;
	return 0;
}

static void retention__list_free(struct retention__list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->files[i].name);
	free(l->files);
	l->files = NULL;
	l->n = l->cap = 0;
}

static int retention__cmp(const void *a, const void *b)
{
	const struct retention__file *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* Lists the profiles in d: matching names, our regular files only. */
static int retention__scan(DIR *d, struct retention__list *l)
{
	struct dirent *de;
	struct stat st;
	int err;

	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de)
			return errno ? -errno : 0;
		if (!retention__is_profile_name(de->d_name))
			continue;
		err = retention__ours(dirfd(d), de->d_name, &st);
		if (err < 0)
			return err;
		if (!err)
			continue;
		err = retention__list_add(l, de->d_name, (uint64_t)st.st_size);
		if (err)
			return err;
	}
}

static bool retention__over(uint64_t files, uint64_t bytes,
			    uint64_t max_files, uint64_t max_bytes)
{
	return (max_files && files > max_files) ||
	       (max_bytes && bytes > max_bytes);
}

int retention__enforce(const char *dir, uint64_t max_files,
		       uint64_t max_bytes)
{
	struct retention__list l = { 0 };
	uint64_t bytes = 0, files;
	int deleted = 0, err;
	size_t i;
	DIR *d;

	err = retention__opendir(dir, &d);
	if (err)
		return err;
	err = retention__scan(d, &l);
	if (err || (!max_files && !max_bytes))
		goto cleanup;
	for (i = 0; i < l.n; i++)
		bytes += l.files[i].size;
	files = l.n;
	/* Fixed-width UTC stamps first: name order is time order. */
	sort__array(l.files, l.n, sizeof(*l.files), retention__cmp);
	for (i = 0; i < l.n && retention__over(files, bytes, max_files,
					       max_bytes); i++) {
		if (unlinkat(dirfd(d), l.files[i].name, 0) == 0) {
			deleted++;
		} else if (errno != ENOENT) {	/* ENOENT: already gone */
			err = -errno;
			break;
		}
		files--;
		bytes -= l.files[i].size;
	}
cleanup:
	retention__list_free(&l);
	closedir(d);
	return err ? err : deleted;
}

/* ---- the directory itself ---- */

/* Creates one directory with exactly RETENTION_DIR_MODE whatever the
 * umask; 1 created, 0 already there, -errno. The chmod goes through an
 * O_NOFOLLOW fd so a symlink swapped in after the mkdir is not followed. */
static int retention__mkdir(const char *path)
{
	int fd, err = 0;

	if (mkdir(path, RETENTION_DIR_MODE) < 0)
		return errno == EEXIST ? 0 : -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, RETENTION_DIR_MODE) < 0)
		err = -errno;
	close(fd);
	return err ? err : 1;
}

/* Others must not add, rename or delete files in the directory: with
 * write access they could remove our profiles or take the names of the
 * next windows, the sticky bit notwithstanding (it stops deletion, not
 * new names). So: owned by root or us, writable by neither group nor
 * others. */
static bool retention__safe_dir(const struct stat *st)
{
	return (st->st_uid == 0 || st->st_uid == geteuid()) &&
	       !(st->st_mode & (S_IWGRP | S_IWOTH));
}

int retention__ensure_dir(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;
	size_t len;
	char *p;
	int err, fd;

	if (!dir || !*dir)
		return -ENOENT;
	len = strlen(dir);
	if (len >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, len + 1);
	while (len > 1 && path[len - 1] == '/')	/* "a/b/" is "a/b" */
		path[--len] = '\0';
	/* Parents: created when missing; existing ones may be symlinks
	 * (/var -> /private/var), a later mkdir fails on a non-directory. */
	for (p = path + 1; (p = strchr(p, '/')); p++) {
		if (p[-1] == '/')
			continue;	/* "a//b" */
		*p = '\0';
		err = retention__mkdir(path);
		*p = '/';
		if (err < 0)
			return err;
	}
	err = retention__mkdir(path);
	if (err < 0)
		return err;
	/* A real directory, not a symlink to one, that nobody else can
	 * write: fstat of an O_NOFOLLOW fd checks the one we will use. */
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOTDIR && lstat(path, &st) == 0 &&
		       S_ISLNK(st.st_mode) ? -ELOOP : -errno;
	err = fstat(fd, &st) < 0 ? -errno : 0;
	close(fd);
	if (!err && !retention__safe_dir(&st))
		err = -EPERM;
	return err;
}
