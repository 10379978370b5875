/* targetfile: what a profiled process can put at a path it names must never
 * hang, mislead or expose the agent; and elfimage: a binary read for
 * unwinding holds only what unwinding needs, and a file cut short while it
 * is read is an error, not SIGBUS. */
#include "check.h"
#include "unwind/elfimage.h"
#include "proc/targetfile.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <elfutils/libdw.h>

extern char __executable_start;	/* the linker's: file offset 0 */

static char tmpdir[] = "/tmp/tagprof-targetfile.XXXXXX";

static void tpath(char *buf, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", tmpdir, name);
}

static bool write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	return f && fputs(text, f) >= 0 && !fclose(f);
}

static struct targetfile_want want_of(const char *path)
{
	struct stat st;
	struct targetfile_want w = { 0 };

	if (!stat(path, &st)) {
		w.dev = targetfile__dev(st.st_dev);
		w.ino = st.st_ino;
	}
	return w;
}

static void test_regular_file(void)
{
	char p[PATH_MAX], buf[8] = "";
	struct targetfile_want w;
	struct stat st;
	int fd;

	tpath(p, "plain");
	CHECK(write_file(p, "bytes"));
	w = want_of(p);
	fd = targetfile__open(p, &w, &st);
	CHECK(fd >= 0);
	CHECK(pread(fd, buf, 5, 0) == 5 && !memcmp(buf, "bytes", 5));
	CHECK((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY);
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	CHECK(st.st_ino == w.ino);
	close(fd);
}

/* A FIFO is refused at once: nothing waits for a writer. */
static void test_fifo_refused(void)
{
	const struct targetfile_stats *s = targetfile__stats();
	char p[PATH_MAX];
	uint64_t before = s->not_regular;

	tpath(p, "fifo");
	CHECK(!mkfifo(p, 0644));
	alarm(5);		/* a hang fails the test rather than the suite */
	CHECK(targetfile__open(p, NULL, NULL) == -ENOEXEC);
	alarm(0);
	CHECK(s->not_regular == before + 1);
}

/* A device is not opened (O_PATH does not run its driver's open). */
static void test_device_refused(void)
{
	CHECK(targetfile__open("/dev/null", NULL, NULL) == -ENOEXEC);
	CHECK(targetfile__open("/dev/zero", NULL, NULL) == -ENOEXEC);
	CHECK(targetfile__open(tmpdir, NULL, NULL) == -ENOEXEC);
}

/* Links are refused as the last component and on the way, inside a
 * process's root too; only `follow` (an administrator's directory) takes
 * them. */
static void test_symlinks_refused(void)
{
	const struct targetfile_stats *s = targetfile__stats();
	char target[PATH_MAX], link[PATH_MAX], dir[PATH_MAX], via[PATH_MAX + 16];
	char rooted[PATH_MAX + 32];
	struct targetfile_want follow = { .follow = true };
	uint64_t before = s->symlink;
	int fd;

	tpath(target, "secret");
	tpath(link, "link");
	tpath(dir, "dirlink");
	CHECK(write_file(target, "secret"));
	CHECK(!symlink(target, link));
	CHECK(!symlink(tmpdir, dir));
	snprintf(via, sizeof(via), "%s/secret", dir);
	CHECK(targetfile__open(link, NULL, NULL) == -ELOOP);
	CHECK(targetfile__open(via, NULL, NULL) == -ELOOP);
	snprintf(rooted, sizeof(rooted), "/proc/%d/root%s", getpid(), link);
	CHECK(targetfile__open(rooted, NULL, NULL) == -ELOOP);
	CHECK(s->symlink >= before + 3);
	fd = targetfile__open(link, &follow, NULL);
	CHECK(fd >= 0);
	close(fd);
}

/* In a debug directory (`follow`), a link is followed only when root owns
 * it: a user's link there, as the last component or on the way, could
 * name a file only root may read. Root's links resolve as the kernel would
 * (relative, absolute, "..", and a link to a link). */
static void test_follow_only_roots_links(void)
{
	const struct targetfile_stats *s = targetfile__stats();
	struct targetfile_want follow = { .follow = true };
	char target[PATH_MAX], sub[PATH_MAX], rel[PATH_MAX], abs_[PATH_MAX];
	char chain[PATH_MAX], users[PATH_MAX], usersdir[PATH_MAX];
	char via[PATH_MAX + 16], loop[PATH_MAX];
	uint64_t before = s->untrusted_link;
	int fd;

	tpath(target, "debugfile");
	tpath(sub, "sub");
	CHECK(write_file(target, "debug"));
	CHECK(!mkdir(sub, 0755));
	tpath(rel, "sub/rel");
	tpath(abs_, "sub/abs");
	tpath(chain, "sub/chain");
	CHECK(!symlink("../debugfile", rel));
	CHECK(!symlink(target, abs_));
	CHECK(!symlink("./rel", chain));
	fd = targetfile__open(rel, &follow, NULL);
	CHECK(fd >= 0);
	close(fd);
	fd = targetfile__open(abs_, &follow, NULL);
	CHECK(fd >= 0);
	close(fd);
	fd = targetfile__open(chain, &follow, NULL);
	CHECK(fd >= 0);
	close(fd);
	CHECK(s->untrusted_link == before);

	/* The same links, made by a user. */
	tpath(users, "users");
	tpath(usersdir, "usersdir");
	CHECK(!symlink(target, users));
	CHECK(!lchown(users, 65534, 65534));
	CHECK(targetfile__open(users, &follow, NULL) == -ELOOP);
	CHECK(!symlink(sub, usersdir));
	CHECK(!lchown(usersdir, 65534, 65534));
	snprintf(via, sizeof(via), "%s/rel", usersdir);
	CHECK(targetfile__open(via, &follow, NULL) == -ELOOP);
	CHECK(s->untrusted_link == before + 2);

	/* A loop ends. */
	tpath(loop, "loop");
	CHECK(!symlink("loop", loop));
	CHECK(targetfile__open(loop, &follow, NULL) == -ELOOP);
}

/* A file that is not the mapping's (another inode at its path) is refused
 * before a byte of it is read. */
static void test_replaced_refused(void)
{
	const struct targetfile_stats *s = targetfile__stats();
	char a[PATH_MAX], b[PATH_MAX];
	struct targetfile_want w;
	uint64_t before = s->replaced;

	tpath(a, "a");
	tpath(b, "b");
	CHECK(write_file(a, "a") && write_file(b, "b"));
	w = want_of(a);
	CHECK(!rename(b, a));
	CHECK(targetfile__open(a, &w, NULL) == -ESTALE);
	CHECK(s->replaced == before + 1);
}

/* A path under /proc/PID/root resolves inside that root. */
static void test_rooted(void)
{
	char p[PATH_MAX], rooted[PATH_MAX + 32];
	int fd;

	tpath(p, "rooted");
	CHECK(write_file(p, "r"));
	snprintf(rooted, sizeof(rooted), "/proc/%d/root%s", getpid(), p);
	fd = targetfile__open(rooted, NULL, NULL);
	CHECK(fd >= 0);
	close(fd);
	CHECK(targetfile__open("relative/path", NULL, NULL) == -EINVAL);
}

/* Maps the 4-byte file p holding text, then puts a FIFO at its path: the
 * mapping (MAP_FAILED on failure) and the file's identity in *w. */
static void *map_then_fifo(const char *p, const char *text,
			   struct targetfile_want *w)
{
	void *m;
	int fd;

	if (!write_file(p, text))
		return MAP_FAILED;
	*w = want_of(p);
	fd = open(p, O_RDONLY);
	if (fd < 0)
		return MAP_FAILED;
	m = mmap(NULL, 4, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m != MAP_FAILED && (unlink(p) || mkfifo(p, 0644))) {
		munmap(m, 4);
		return MAP_FAILED;
	}
	return m;
}

/* The mapped file is found even when deleted and replaced at its path by a
 * FIFO, through /proc/PID/map_files (root here). */
static void test_mapped_deleted(void)
{
	char p[PATH_MAX], del[PATH_MAX + 16], buf[4];
	struct targetfile_want w;
	struct stat st;
	void *m;
	int fd;

	tpath(p, "mapped");
	m = map_then_fifo(p, "MAPD", &w);
	CHECK(m != MAP_FAILED);
	snprintf(del, sizeof(del), "%s (deleted)", p);
	CHECK(!mkfifo(del, 0644));
	alarm(5);
	fd = targetfile__open_mapped(getpid(), (uintptr_t)m,
				     (uintptr_t)m + sysconf(_SC_PAGESIZE), del,
				     w.dev, w.ino, NULL, 0);
	alarm(0);
	if (geteuid() == 0) {
		CHECK(fd >= 0);
		CHECK(!fstat(fd, &st) && st.st_ino == w.ino);
		CHECK(pread(fd, buf, 4, 0) == 4 && !memcmp(buf, "MAPD", 4));
		close(fd);
	} else {
		CHECK(fd == -ENOEXEC);	/* the FIFO at the path, refused */
	}
	munmap(m, 4);
}

/* A mapped file's status without opening it: the mapped file's even when
 * its path holds a FIFO now, and another file's inode is refused. */
static void test_stat_mapped(void)
{
	char p[PATH_MAX];
	struct targetfile_want w;
	uint64_t opened;
	struct stat st;
	uintptr_t lo;
	void *m;

	tpath(p, "statmapped");
	m = map_then_fifo(p, "STAT", &w);
	CHECK(m != MAP_FAILED);
	lo = (uintptr_t)m;
	opened = targetfile__stats()->opened;
	if (geteuid() == 0) {
		CHECK(targetfile__stat_mapped(getpid(), lo,
					      lo + sysconf(_SC_PAGESIZE), w.dev,
					      w.ino, &st) == 0);
		CHECK(st.st_ino == w.ino && st.st_size == 4);
		CHECK(targetfile__stat_mapped(getpid(), lo,
					      lo + sysconf(_SC_PAGESIZE), w.dev,
					      w.ino + 1, &st) == -ESTALE);
	}
	CHECK(targetfile__stats()->opened == opened);
	CHECK(targetfile__stat_mapped(getpid(), lo, lo, w.dev, w.ino, &st) ==
	      -EINVAL);
	munmap(m, 4);
}

/* ---- elfimage ---- */

static int copy_of(const char *src, const char *dst, off_t len)
{
	char cmd[2 * PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", src, dst);
	if (system(cmd))
		return -1;
	return len >= 0 ? truncate(dst, len) : 0;
}

static struct elfimage *image_of(const char *path, int *err)
{
	struct elfimage *im;
	struct stat st;
	int fd = targetfile__open(path, NULL, &st);

	if (fd < 0) {
		*err = -fd;
		return NULL;
	}
	im = elfimage__read(fd, st.st_size);
	*err = im ? 0 : errno;
	close(fd);
	return im;
}

/* A real binary: its CFI is there for libdw, other sections are not. */
static void test_image_cfi(void)
{
	char exe[PATH_MAX], copy[PATH_MAX];
	struct elfimage *im;
	Dwarf_CFI *cfi;
	Dwarf_Frame *frame = NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx, nobits = 0, text_bytes = 0;
	Elf *elf;
	int err;

	CHECK(check_read_exe(exe, sizeof(exe)));
	tpath(copy, "self");
	CHECK(!copy_of(exe, copy, -1));
	im = image_of(copy, &err);
	CHECK(im);
	elf = elfimage__elf(im);
	CHECK(elf && elf_kind(elf) == ELF_K_ELF);
	CHECK(!elf_getshdrstrndx(elf, &shstrndx));
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		CHECK(gelf_getshdr(scn, &sh));
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".text")) {
			nobits += sh.sh_type == SHT_NOBITS;
			text_bytes = sh.sh_size;
		}
	}
	CHECK(nobits == 1 && text_bytes > 0);
	/* Headers and CFI only: far less than the file. */
	CHECK(elfimage__bytes(im) < text_bytes);
	cfi = dwarf_getcfi_elf(elf);
	CHECK(cfi);
	/* This very function's frame, at its address in the file. */
	CHECK(!dwarf_cfi_addrframe(cfi, (uintptr_t)test_image_cfi -
				   (uintptr_t)&__executable_start, &frame) &&
	      frame);
	free(frame);
	dwarf_cfi_end(cfi);
	elf_end(elf);
	elfimage__put(im);
}

/* Cut short: the read is an error. Not ELF, or another machine's: refused. */
static void test_image_bad(void)
{
	char exe[PATH_MAX], p[PATH_MAX];
	int err;

	CHECK(check_read_exe(exe, sizeof(exe)));
	tpath(p, "cut");
	CHECK(!copy_of(exe, p, 4096));
	/* The size says more than the file has by the time it is read. */
	{
		struct stat st;
		int fd = open(exe, O_RDONLY);
		struct elfimage *im;

		CHECK(fd >= 0 && !fstat(fd, &st));
		close(fd);
		fd = open(p, O_RDONLY);
		CHECK(fd >= 0);
		im = elfimage__read(fd, st.st_size);
		err = errno;
		close(fd);
		CHECK(!im && (err == EIO || err == ENOEXEC));
	}
	tpath(p, "text");
	CHECK(write_file(p, "#!/bin/sh\nexit 0\n and some more bytes to be long "
			    "enough for an ELF header"));
	CHECK(!image_of(p, &err) && err == ENOEXEC);
	tpath(p, "empty");
	CHECK(write_file(p, ""));
	CHECK(!image_of(p, &err) && err == ENOEXEC);
	/* Program headers at an offset not 8-aligned (found by fuzzing): the
	 * image reads them in place, so it refuses them. */
	tpath(p, "misaligned");
	CHECK(!copy_of(exe, p, -1));
	{
		int fd = open(p, O_RDWR);
		uint64_t phoff;

		CHECK(fd >= 0 && pread(fd, &phoff, 8, 0x20) == 8);
		phoff += 2;
		CHECK(pwrite(fd, &phoff, 8, 0x20) == 8);
		close(fd);
	}
	CHECK(!image_of(p, &err) && err == ENOEXEC);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	elf_version(EV_CURRENT);
	signal(SIGALRM, SIG_DFL);
	RUN(test_regular_file);
	RUN(test_fifo_refused);
	RUN(test_device_refused);
	RUN(test_symlinks_refused);
	RUN(test_follow_only_roots_links);
	RUN(test_replaced_refused);
	RUN(test_rooted);
	RUN(test_mapped_deleted);
	RUN(test_stat_mapped);
	RUN(test_image_cfi);
	RUN(test_image_bad);
	check_remove_dir(tmpdir);
	CHECK_EXIT();
}
