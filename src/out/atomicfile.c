/* Output files: a temporary file beside the target, fsync, rename. Readers
 * of the target see either the old file or the complete new one. */
#include "out/atomicfile.h"
#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Room for ".<base>.XXXXXX" within NAME_MAX (255): long names are cut. */
#define TMP_BASE_MAX 200
#define TMP_SUFFIX_LEN 6
#define TMP_NAME_SIZE (1 + TMP_BASE_MAX + 1 + TMP_SUFFIX_LEN + 1)
#define TMP_TRIES 100
#define WRITE_CHUNK ((size_t)1 << 30)

/* Splits path into a malloc'd directory and its final component (which
 * points into path). A path naming a directory ("x/", ".") is -EISDIR. */
static int split_path(const char *path, char **dir, const char **base)
{
	const char *slash;

	if (!path || !*path)
		return -ENOENT;
	slash = strrchr(path, '/');
	*base = slash ? slash + 1 : path;
	if (!**base || !strcmp(*base, ".") || !strcmp(*base, ".."))
		return -EISDIR;
	if (!slash)
		*dir = strdup(".");
	else if (slash == path)
		*dir = strdup("/");
	else
		*dir = strndup(path, (size_t)(slash - path));
	return *dir ? 0 : -ENOMEM;
}

/* Random bits for temporary names; falls back to time and pid when the
 * kernel's pool would block (early boot), which is fine for O_EXCL names. */
static uint64_t random_bits(void)
{
	static uint64_t counter;
	uint64_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	r = clock__mono_ns() ^ ((uint64_t)getpid() << 16) ^ ++counter;
	return r * 0x9e3779b97f4a7c15ULL;
}

static void make_temp_name(char *name, const char *base)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	uint64_t r = random_bits();
	int n, i;

	n = snprintf(name, TMP_NAME_SIZE, ".%.*s.", TMP_BASE_MAX, base);
	for (i = 0; i < TMP_SUFFIX_LEN; i++, r /= sizeof(chars) - 1)
		name[n + i] = chars[r % (sizeof(chars) - 1)];
	name[n + i] = '\0';
}

/* Creates a fresh temporary file in dfd, never following or reusing an
 * existing name. Returns the fd (name filled in) or -errno. */
static int create_temp(int dfd, const char *base, char *name)
{
	int i, fd;

	for (i = 0; i < TMP_TRIES; i++) {
		make_temp_name(name, base);
		fd = openat(dfd, name,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				    O_CLOEXEC,
			    0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	ssize_t n;

	while (len) {
		n = write(fd, p, len < WRITE_CHUNK ? len : WRITE_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Opens the directory for the *at calls and its fsync. A directory we may
 * write and search but not read still works, without the fsync. */
static int open_dir(const char *dir, bool *can_sync)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	*can_sync = dfd >= 0;
	if (dfd < 0 && errno == EACCES)
		dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return dfd < 0 ? -errno : dfd;
}

/* Makes the rename durable. EINVAL: the filesystem cannot sync dirs. */
static int sync_dir(int dfd, bool can_sync)
{
	if (!can_sync || fsync(dfd) == 0 || errno == EINVAL)
		return 0;
	return -errno;
}

/* Fills the new temporary file and closes it; *fd is -1 afterwards. */
static int fill_temp(int *fd, const void *data, size_t len, mode_t mode)
{
	int err = 0;

	if (fchmod(*fd, mode & 07777) < 0)
		err = -errno;
	if (!err)
		err = write_all(*fd, data, len);
	if (!err && fsync(*fd) < 0)
		err = -errno;
	/* close can report a delayed write error (e.g. on NFS). */
	if (close(*fd) < 0 && !err)
		err = -errno;
	*fd = -1;
	return err;
}

int atomicfile__write(const char *path, const void *data, size_t len,
		       mode_t mode)
{
	char tmp[TMP_NAME_SIZE];
	char *dir = NULL;
	const char *base;
	int dfd = -1, fd = -1, err;
	bool created = false, can_sync;

	err = split_path(path, &dir, &base);
	if (err)
		goto cleanup;
	dfd = open_dir(dir, &can_sync);
	if (dfd < 0) {
		err = dfd;
		goto cleanup;
	}
	fd = create_temp(dfd, base, tmp);
	if (fd < 0) {
		err = fd;
		goto cleanup;
	}
	created = true;
	err = fill_temp(&fd, data, len, mode);
	if (err)
		goto cleanup;
	/* rename replaces whatever is at path, a symlink included, and
	 * never follows it. */
	if (renameat(dfd, tmp, dfd, base) < 0) {
		err = -errno;
		goto cleanup;
	}
	created = false;
	err = sync_dir(dfd, can_sync);
cleanup:
	if (fd >= 0)
		close(fd);
	if (created)
		unlinkat(dfd, tmp, 0);
	if (dfd >= 0)
		close(dfd);
	free(dir);
	return err;
}

int atomicfile__check_writable(const char *path)
{
	struct stat st;
	char *dir = NULL;
	const char *base;
	int err;

	err = split_path(path, &dir, &base);
	if (err)
		goto cleanup;
	if (stat(dir, &st) < 0) {
		err = -errno;
		goto cleanup;
	}
	err = -ENOTDIR;
	if (!S_ISDIR(st.st_mode))
		goto cleanup;
	/* Effective ids: what the later open and rename will run as. */
	if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0) {
		err = -errno;
		goto cleanup;
	}
	/* lstat: a symlink to a directory would simply be replaced. */
	err = -EISDIR;
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
		goto cleanup;
	err = 0;
cleanup:
	free(dir);
	return err;
}

/* What atomicfile__write does for one file, for several in one directory:
 * the files are written first (their write-back started at once), then
 * synced, then renamed, and the directory synced once. The syncs of files
 * written together find their neighbours' inodes and the directory
 * already on disk: a window of many services costs a few waits for the
 * disk, not several per file. */
size_t atomicfile__write_in(const char *dir, struct atomicfile_item *items,
			    size_t n, mode_t mode)
{
	char (*tmp)[TMP_NAME_SIZE] = NULL;
	size_t staged = 0, ok = 0, fail = n, i;
	int dfd, *fds = NULL, err = 0;
	bool can_sync;

	if (!n)
		return 0;
	dfd = open_dir(dir, &can_sync);
	tmp = calloc(n, sizeof(*tmp));
	fds = calloc(n, sizeof(*fds));
	if (dfd < 0 || !tmp || !fds) {
		err = dfd < 0 ? dfd : -ENOMEM;
		fail = 0;
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		fds[i] = create_temp(dfd, items[i].name, tmp[i]);
		if (fds[i] < 0) {
			err = fds[i];
			fail = i;
			break;
		}
		staged = i + 1;
		if (fchmod(fds[i], mode & 07777) < 0)
			err = -errno;
		if (!err)
			err = write_all(fds[i], items[i].data, items[i].len);
		if (err) {
			fail = i;
			break;
		}
		/* Only a hint: the fsync below waits. */
		sync_file_range(fds[i], 0, 0, SYNC_FILE_RANGE_WRITE);
	}
	for (i = 0; i < staged; i++) {
		if (i < fail && fsync(fds[i]) < 0) {
			err = -errno;
			fail = i;
		}
		/* close can report a delayed write error (e.g. on NFS). */
		if (close(fds[i]) < 0 && i < fail) {
			err = -errno;
			fail = i;
		}
	}
	/* In order, so the directory never holds a file without the older
	 * ones before it. rename replaces a symlink, never follows it. */
	for (i = 0; i < fail; i++) {
		if (renameat(dfd, tmp[i], dfd, items[i].name) < 0) {
			err = -errno;
			fail = i;
			break;
		}
		ok++;
	}
	for (i = fail; i < staged; i++)
		unlinkat(dfd, tmp[i], 0);
	if (ok) {
		int serr = sync_dir(dfd, can_sync);

		if (serr) {	/* in place, maybe not on disk: again later */
			err = serr;
			fail = 0;
			ok = 0;
		}
	}
cleanup:
	for (i = 0; i < n; i++)
		items[i].err = i < fail ? 0 : i == fail ? err : -EAGAIN;
	if (dfd >= 0)
		close(dfd);
	free(tmp);
	free(fds);
	return ok;
}
