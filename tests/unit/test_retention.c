/* Unit tests for src/out/retention.c: file names, the retention limits, stale
 * temporary files and the output directory, on real files in a temporary
 * directory. Symlinks and stray files stand beside the profiles to show
 * they are left alone. */
#include "check.h"
#include "out/retention.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[64];
static char path_buf[PATH_MAX];

static const char *tmp_path(const char *name)
{
	snprintf(path_buf, sizeof(path_buf), "%s/%s", tmpdir, name);
	return path_buf;
}

static bool make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tagprof-retention.XXXXXX");
	return mkdtemp(tmpdir) != NULL;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_tmpdir(void)
{
	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A file of size bytes in the temporary directory. */
static bool make_file(const char *name, size_t size)
{
	char buf[512];
	int fd = open(tmp_path(name), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	bool ok = fd >= 0;

	memset(buf, 'x', sizeof(buf));
	while (ok && size) {
		size_t n = size < sizeof(buf) ? size : sizeof(buf);

		ok = write(fd, buf, n) == (ssize_t)n;
		size -= n;
	}
	if (fd >= 0 && close(fd) < 0)
		ok = false;
	return ok;
}

/* An empty file at an absolute path. */
static bool touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	return fd >= 0 && close(fd) == 0;
}

static bool exists(const char *name)
{
	struct stat st;

	return lstat(tmp_path(name), &st) == 0;
}

/* The file name (no directory) for a window. */
static bool name_for(time_t t, const char *service, char *out, size_t len)
{
	char path[PATH_MAX];
	const char *slash;

	if (retention__file_name(tmpdir, t, service, path, sizeof(path)))
		return false;
	slash = strrchr(path, '/');
	if (!slash || (size_t)(slash - path) != strlen(tmpdir) ||
	    strncmp(path, tmpdir, strlen(tmpdir)))
		return false;
	snprintf(out, len, "%s", slash + 1);
	return true;
}

/* How many names in dir end with suffix. */
static int count_matching(const char *dir, const char *suffix)
{
	char cmd[PATH_MAX + 64];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | grep -c -- '%s$'", dir,
		 suffix);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (fscanf(p, "%d", &n) != 1)
		n = -1;
	pclose(p);
	return n;
}

/* ---- names ---- */

static void test_file_name_format(void)
{
	char path[PATH_MAX];

	CHECK(retention__file_name("/var/lib/tagprof", 0, "web", path,
				   sizeof(path)) == 0);
	CHECK(!strcmp(path, "/var/lib/tagprof/19700101T000000Z_web.pb.gz"));
	/* 2024-02-29 13:05:09 UTC, and a trailing slash is not doubled. */
	CHECK(retention__file_name("out/", 1709211909, "db-1.eu_west", path,
				   sizeof(path)) == 0);
	CHECK(!strcmp(path, "out/20240229T130509Z_db-1.eu_west.pb.gz"));
	CHECK(retention__file_name("/", 1709211909, "a", path,
				   sizeof(path)) == 0);
	CHECK(!strcmp(path, "/20240229T130509Z_a.pb.gz"));
}

static void test_file_name_too_long(void)
{
	char path[PATH_MAX];
	size_t need;

	CHECK(retention__file_name("/d", 0, "s", path, sizeof(path)) == 0);
	need = strlen(path) + 1;
	CHECK(retention__file_name("/d", 0, "s", path, need) == 0);
	CHECK(retention__file_name("/d", 0, "s", path, need - 1) ==
	      -ENAMETOOLONG);
	CHECK(path[0] == '\0');
	CHECK(retention__file_name("/d", 0, "s", path, 0) == -ENAMETOOLONG);
}

/* Fixed-width stamps: name order is time order whatever the services,
 * across a change in the number of digits of the epoch seconds. */
static void test_names_sort_by_time(void)
{
	static const time_t times[] = {
		0, 999999999, 1000000000, 1709211909, 1709211910,
		1709215509, 4102444800, 253402300799,	/* 9999-12-31 */
	};
	static const char *const services[] = {
		"zzz", "aaa", "mmm", "Z", "0", "web", "~~~", "-",
	};
	char prev[PATH_MAX], cur[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		CHECK(retention__file_name("/d", times[i], services[i], cur,
					   sizeof(cur)) == 0);
		if (i)
			CHECK(strcmp(prev, cur) < 0);
		memcpy(prev, cur, sizeof(cur));
	}
	/* Same second: then by service. */
	CHECK(retention__file_name("/d", 1709211909, "api", prev,
				   sizeof(prev)) == 0);
	CHECK(retention__file_name("/d", 1709211909, "web", cur,
				   sizeof(cur)) == 0);
	CHECK(strcmp(prev, cur) < 0);
	/* Years that would not fit four digits are refused, not misfiled. */
	CHECK(retention__file_name("/d", (time_t)253402300800, "s", cur,
				   sizeof(cur)) == -EINVAL);
}

static void test_service_sanitized(void)
{
	char path[PATH_MAX], longsvc[300];
	const char *svc;

	CHECK(retention__file_name("/d", 0, "../../etc/passwd", path,
				   sizeof(path)) == 0);
	CHECK(!strncmp(path, "/d/19700101T000000Z_", 20));
	svc = path + 20;
	CHECK(!strchr(svc, '/'));
	CHECK(svc[0] != '.');
	CHECK(!strcmp(svc, "_._.._etc_passwd.pb.gz"));

	CHECK(retention__file_name("/d", 0, ".hidden", path,
				   sizeof(path)) == 0);
	CHECK(!strcmp(path + 20, "_hidden.pb.gz"));

	CHECK(retention__file_name("/d", 0, "", path, sizeof(path)) == 0);
	CHECK(!strcmp(path + 20, "unknown.pb.gz"));
	CHECK(retention__file_name("/d", 0, NULL, path, sizeof(path)) == 0);
	CHECK(!strcmp(path + 20, "unknown.pb.gz"));

	/* Spaces, controls, non-ASCII bytes (two for é), shell characters. */
	CHECK(retention__file_name("/d", 0, "a b\tc\xc3\xa9$*", path,
				   sizeof(path)) == 0);
	CHECK(!strcmp(path + 20, "a_b_c____.pb.gz"));

	memset(longsvc, 'a', sizeof(longsvc) - 1);
	longsvc[sizeof(longsvc) - 1] = '\0';
	CHECK(retention__file_name("/d", 0, longsvc, path,
				   sizeof(path)) == 0);
	CHECK(strlen(path + 20) == 64 + strlen(".pb.gz"));
	CHECK(!strcmp(path + 20 + 64, ".pb.gz"));
}

/* ---- retention__enforce ---- */

/* Profiles, one a minute from t0, services alternating; sizes[i] bytes. */
static bool make_profiles(time_t t0, const size_t *sizes, int n,
			  char names[][128])
{
	static const char *const svcs[] = { "web", "api", "db" };

	for (int i = 0; i < n; i++)
		if (!name_for(t0 + 60 * i, svcs[i % 3], names[i], 128) ||
		    !make_file(names[i], sizes[i]))
			return false;
	return true;
}

/* Files enforce must never touch, each with a name that nearly matches. */
static const char *const strays[] = {
	"notes.txt",
	"20240101T000000Z_x.pb",		/* no .gz */
	"2024010xT000000Z_x.pb.gz",		/* not a digit */
	"20241301T000000Z_x.pb.gz",		/* month 13 */
	"20240101T000000_x.pb.gz",		/* no Z */
	"20240101T000000Z-x.pb.gz",		/* no _ */
	"20240101T000000Z_.pb.gz",		/* empty service */
	"20240101T000000Z_.x.pb.gz",		/* service starts with . */
	"20240101T000000Z_a b.pb.gz",		/* space */
	"x20240101T000000Z_x.pb.gz",
	".20240101T000000Z_x.pb.gz.AbC123",	/* a temporary file */
};
#define NSTRAYS (int)(sizeof(strays) / sizeof(strays[0]))

/* The oldest-looking names of all: a symlink (to a file outside that must
 * survive too) and a directory. */
#define LINK_NAME "19700101T000000Z_link.pb.gz"
#define DIR_NAME "19700101T000001Z_dir.pb.gz"

static bool make_strays(char *outside, size_t len)
{
	for (int i = 0; i < NSTRAYS; i++)
		if (!make_file(strays[i], 10))
			return false;
	snprintf(outside, len, "%s.outside", tmpdir);
	return touch(outside) && symlink(outside, tmp_path(LINK_NAME)) == 0 &&
	       mkdir(tmp_path(DIR_NAME), 0700) == 0;
}

static bool strays_intact(const char *outside)
{
	struct stat st;

	for (int i = 0; i < NSTRAYS; i++)
		if (!exists(strays[i]))
			return false;
	return lstat(tmp_path(LINK_NAME), &st) == 0 && S_ISLNK(st.st_mode) &&
	       stat(outside, &st) == 0 &&
	       lstat(tmp_path(DIR_NAME), &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_enforce_by_count(void)
{
	static const size_t sizes[5] = { 10, 10, 10, 10, 10 };
	char names[5][128], outside[PATH_MAX] = "";
	int i, r = -1;

	CHECK(make_tmpdir());
	if (make_profiles(1709211909, sizes, 5, names) &&
	    make_strays(outside, sizeof(outside))) {
		r = retention__enforce(tmpdir, 3, 0);
		for (i = 0; i < 5; i++)
			if (exists(names[i]) != (i >= 2))
				r = -1000 - i;
		if (!strays_intact(outside))
			r = -2000;
		/* Within the limit now: nothing more goes. */
		if (r == 2 && retention__enforce(tmpdir, 3, 0) != 0)
			r = -3000;
		if (r == 2 && retention__enforce(tmpdir, 0, 0) != 0)
			r = -3001;
		if (r == 2 && (retention__enforce(tmpdir, 1, 0) != 2 ||
			       !exists(names[4]) || exists(names[3])))
			r = -3002;
		if (r == 2 && !strays_intact(outside))
			r = -3003;
	}
	unlink(outside);
	rm_tmpdir();
	CHECK(r == 2);
}

static void test_enforce_by_bytes(void)
{
	static const size_t sizes[4] = { 100, 200, 300, 400 };
	char names[4][128], outside[PATH_MAX] = "";
	bool made;
	int stage = 0;

	CHECK(make_tmpdir());
	made = make_profiles(1000000000 - 120, sizes, 4, names) &&
	       make_strays(outside, sizeof(outside));
	/* 1000 bytes: 100 and 200 go to reach 700; the strays do not count. */
	if (made && (stage = 1, retention__enforce(tmpdir, 0, 700) == 2) &&
	    !exists(names[0]) && !exists(names[1]) && exists(names[2]) &&
	    exists(names[3]) &&
	    /* 700 <= 700 already; 699 takes the 300. */
	    (stage = 2, retention__enforce(tmpdir, 0, 700) == 0) &&
	    (stage = 3, retention__enforce(tmpdir, 0, 699) == 1) &&
	    !exists(names[2]) && exists(names[3]) &&
	    (stage = 4, strays_intact(outside)) &&
	    /* Both limits: the count allows 5, the bytes only 0. */
	    (stage = 5, retention__enforce(tmpdir, 5, 1) == 1) &&
	    !exists(names[3]) && strays_intact(outside))
		stage = 0;
	unlink(outside);
	rm_tmpdir();
	if (stage)
		fprintf(stderr, "  failed at stage %d\n", stage);
	CHECK(made && stage == 0);
}

static void test_enforce_refuses_bad_dir(void)
{
	int a, b, c, d;

	CHECK(make_tmpdir());
	mkdir(tmp_path("real"), 0700);
	symlink("real", tmp_path("link"));
	make_file("file", 1);
	a = retention__enforce(tmp_path("missing"), 1, 0);
	b = retention__enforce(tmp_path("link"), 1, 0);
	c = retention__enforce(tmp_path("file"), 1, 0);
	d = retention__clean_temp(tmp_path("link"));
	rm_tmpdir();
	CHECK(a == -ENOENT);
	CHECK(b == -ELOOP || b == -ENOTDIR);
	CHECK(c == -ENOTDIR);
	CHECK(d == -ELOOP || d == -ENOTDIR);
}

/* Another user's files in the directory (planted while it was writable,
 * or by a user who shares the agent's group): future-dated names sort
 * last, so counting them would make retention delete our newest profiles
 * instead. They neither count nor go, and neither does a symlink. */
#define OTHER_UID 65534
static const char *const planted[] = {
	"99991231T235959Z_evil.pb.gz",
	"99991231T235958Z_evil.pb.gz",
	"20991231T000000Z_web.pb.gz",
	".99991231T235959Z_evil.pb.gz.AbC123",	/* a temporary name */
};
#define NPLANTED (int)(sizeof(planted) / sizeof(planted[0]))
#define PLANTED_LINK "99991231T235957Z_link.pb.gz"

static bool plant_others(const char *outside)
{
	for (int i = 0; i < NPLANTED; i++)
		if (!make_file(planted[i], 1000) ||
		    chown(tmp_path(planted[i]), OTHER_UID, OTHER_UID) != 0)
			return false;
	return symlink(outside, tmp_path(PLANTED_LINK)) == 0 &&
	       lchown(tmp_path(PLANTED_LINK), OTHER_UID, OTHER_UID) == 0;
}

static bool planted_intact(void)
{
	for (int i = 0; i < NPLANTED; i++)
		if (!exists(planted[i]))
			return false;
	return exists(PLANTED_LINK);
}

static void test_enforce_only_ours(void)
{
	static const size_t sizes[5] = { 10, 10, 10, 10, 10 };
	char names[5][128], outside[PATH_MAX];
	int i, r = -1, bytes = -1, temp = -1;

	CHECK(make_tmpdir());
	snprintf(outside, sizeof(outside), "%s.outside", tmpdir);
	if (touch(outside) && make_profiles(1709211909, sizes, 5, names) &&
	    plant_others(outside)) {
		/* 5 of ours over a limit of 3: our 2 oldest go, no more. */
		r = retention__enforce(tmpdir, 3, 0);
		for (i = 0; i < 5; i++)
			if (exists(names[i]) != (i >= 2))
				r = -1000 - i;
		if (!planted_intact())
			r = -2000;
		/* 30 bytes of ours under 35: the 4000 planted do not count. */
		bytes = retention__enforce(tmpdir, 0, 35);
		temp = retention__clean_temp(tmpdir);
		if (!planted_intact() || !exists(names[4]))
			bytes = -2000;
	}
	unlink(outside);
	rm_tmpdir();
	if (r != 2 || bytes || temp)
		fprintf(stderr, "  r=%d bytes=%d temp=%d\n", r, bytes, temp);
	CHECK(r == 2);
	CHECK(bytes == 0);
	CHECK(temp == 0);
}

/* ---- retention__clean_temp ---- */

static void test_clean_temp(void)
{
	static const char *const removed[] = {
		".x.pb.gz.AbC123",
		".20240229T130509Z_web.pb.gz.q9Z0aB",
	};
	static const char *const kept[] = {
		"x.pb.gz", ".other", ".x.pb.gz", ".x.pb.gz.",
		".x.pb.gz.AbC12",	/* five characters */
		".x.pb.gz.AbC1234",	/* seven */
		".x.pb.gz.AbC-23",	/* not [A-Za-z0-9] */
		".x.pb.gz_AbC123",	/* no dot before the suffix */
		".x.txt.AbC123",	/* not a profile's temporary file */
		"..pb.gz.AbC123",	/* empty base */
		"x.pb.gz.AbC123",	/* no leading dot */
		"20240229T130509Z_web.pb.gz",
	};
	char outside[PATH_MAX];
	struct stat st;
	size_t i;
	int r, bad = 0;

	CHECK(make_tmpdir());
	for (i = 0; i < sizeof(removed) / sizeof(removed[0]); i++)
		bad |= !make_file(removed[i], 5);
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		bad |= !make_file(kept[i], 5);
	/* Matching names that are not regular files stay. */
	snprintf(outside, sizeof(outside), "%s.outside", tmpdir);
	bad |= !touch(outside);
	bad |= symlink(outside, tmp_path(".y.pb.gz.AbC123")) != 0;
	bad |= mkdir(tmp_path(".z.pb.gz.AbC123"), 0700) != 0;
	r = bad ? -1 : retention__clean_temp(tmpdir);
	for (i = 0; i < sizeof(removed) / sizeof(removed[0]); i++)
		bad |= exists(removed[i]);
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		bad |= !exists(kept[i]) << 1;
	bad |= !(lstat(tmp_path(".y.pb.gz.AbC123"), &st) == 0 &&
		 S_ISLNK(st.st_mode)) << 2;
	bad |= (stat(outside, &st) != 0) << 3;
	bad |= !exists(".z.pb.gz.AbC123") << 4;
	/* Nothing left to clean. */
	if (r == 2 && retention__clean_temp(tmpdir) != 0)
		bad |= 1 << 5;
	unlink(outside);
	rm_tmpdir();
	if (bad)
		fprintf(stderr, "  clean_temp: r=%d bad=%#x\n", r, bad);
	CHECK(r == 2);
	CHECK(!bad);
}

/* ---- retention__ensure_dir ---- */

static bool mode_is(const char *path, mode_t mode)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
	       (st.st_mode & 07777) == mode;
}

static void test_ensure_dir(void)
{
	char a[PATH_MAX], ab[PATH_MAX], abc[PATH_MAX], slash[PATH_MAX];
	mode_t old = umask(077);	/* the mode must not depend on it */
	int r[8], i, bad = 0;

	CHECK(make_tmpdir());
	snprintf(a, sizeof(a), "%s/a", tmpdir);
	snprintf(ab, sizeof(ab), "%s/a/b", tmpdir);
	snprintf(abc, sizeof(abc), "%s/a//b/c", tmpdir);
	snprintf(slash, sizeof(slash), "%s/d/e/", tmpdir);
	r[0] = retention__ensure_dir(abc);
	bad |= !mode_is(a, 0750) || !mode_is(ab, 0750) ||
	       !mode_is(tmp_path("a/b/c"), 0750);
	r[1] = retention__ensure_dir(abc);	/* already there */
	r[2] = retention__ensure_dir(slash);
	bad |= !mode_is(tmp_path("d/e"), 0750) << 1;
	/* An existing directory keeps its mode. */
	mkdir(tmp_path("mine"), 0700);
	r[3] = retention__ensure_dir(tmp_path("mine"));
	bad |= !mode_is(tmp_path("mine"), 0700) << 2;
	/* A symlink to a directory, a regular file, a file as a parent. */
	symlink("a", tmp_path("link"));
	make_file("file", 1);
	r[4] = retention__ensure_dir(tmp_path("link"));
	r[5] = retention__ensure_dir(tmp_path("file"));
	r[6] = retention__ensure_dir(tmp_path("file/sub"));
	r[7] = retention__ensure_dir("");
	umask(old);
	rm_tmpdir();
	if (bad || r[0] || r[1] || r[2] || r[3] || r[4] != -ELOOP ||
	    r[5] != -ENOTDIR || r[6] != -ENOTDIR || r[7] != -ENOENT) {
		for (i = 0; i < 8; i++)
			fprintf(stderr, "%s%d", i ? " " : "  ensure_dir: ",
				r[i]);
		fprintf(stderr, " bad=%#x\n", bad);
	}
	CHECK(!bad);
	CHECK(r[0] == 0 && r[1] == 0 && r[2] == 0 && r[3] == 0);
	CHECK(r[4] == -ELOOP);
	CHECK(r[5] == -ENOTDIR);
	CHECK(r[6] == -ENOTDIR);
	CHECK(r[7] == -ENOENT);
}

/* A directory others may write is refused, sticky or not, and so is one
 * another user owns: they could delete our profiles or take the names of
 * the next windows. */
static void test_ensure_dir_refuses_shared(void)
{
	static const mode_t modes[] = { 0777, 01777, 0770, 0730, 0702 };
	int r[6], i, bad = 0;

	CHECK(make_tmpdir());
	for (i = 0; i < 5; i++) {
		char name[16];

		snprintf(name, sizeof(name), "m%o", (unsigned)modes[i]);
		if (mkdir(tmp_path(name), 0700) || chmod(tmp_path(name), modes[i]))
			bad |= 1 << i;
		r[i] = retention__ensure_dir(tmp_path(name));
	}
	r[5] = -EPERM;
	if (geteuid() == 0 && !bad) {
		mkdir(tmp_path("theirs"), 0700);
		if (chown(tmp_path("theirs"), OTHER_UID, OTHER_UID))
			bad |= 1 << 6;
		r[5] = retention__ensure_dir(tmp_path("theirs"));
	}
	rm_tmpdir();
	for (i = 0; i < 6; i++)
		if (r[i] != -EPERM)
			fprintf(stderr, "  r[%d]=%d\n", i, r[i]);
	CHECK(!bad);
	for (i = 0; i < 6; i++)
		CHECK(r[i] == -EPERM);
}

/* The pieces together, as the agent uses them: a directory made, a
 * window's file named into it, old windows pruned. */
static void test_agent_flow(void)
{
	char dir[PATH_MAX], path[PATH_MAX];
	int r = 0, i;

	CHECK(make_tmpdir());
	snprintf(dir, sizeof(dir), "%s/out", tmpdir);
	if (retention__ensure_dir(dir) != 0)
		r = -1;
	for (i = 0; !r && i < 10; i++) {
		int fd;

		if (retention__file_name(dir, 1709211909 + 60 * i, "svc",
					 path, sizeof(path)) ||
		    (fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)) < 0 ||
		    write(fd, "0123456789", 10) != 10 || close(fd))
			r = -2;
		else
			r = retention__enforce(dir, 4, 35) < 0 ? -3 : 0;
	}
	i = count_matching(dir, "_svc.pb.gz");
	rm_tmpdir();
	CHECK(r == 0);
	CHECK(i == 3);	/* 3 x 10 bytes <= 35 */
}

int main(void)
{
	RUN(test_file_name_format);
	RUN(test_file_name_too_long);
	RUN(test_names_sort_by_time);
	RUN(test_service_sanitized);
	RUN(test_enforce_by_count);
	RUN(test_enforce_by_bytes);
	RUN(test_enforce_refuses_bad_dir);
	if (geteuid() == 0)
		RUN(test_enforce_only_ours);
	else
		SKIP(test_enforce_only_ours, "needs root to chown files");
	RUN(test_clean_temp);
	RUN(test_ensure_dir);
	RUN(test_ensure_dir_refuses_shared);
	RUN(test_agent_flow);
	CHECK_EXIT();
}
