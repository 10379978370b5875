/* procfs: the /proc/PID/maps parser on recorded maps text (every kind of
 * line the kernel writes, and lines it does not), the remote-memory reader
 * on this process and on a child, and the path of a process's root. */
#include "check.h"
#include "proc/procfs.h"
#include "proc/targetfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

/* Recorded from a real process (a path with spaces and deleted files
 * added), with two lines no kernel writes: garbage, and a line cut before
 * its inode. */
static const char maps_text[] =
	"55d0def03000-55d0def05000 r--p 00000000 fe:00 247134                     /usr/bin/cat\n"
	"55d0def05000-55d0def0a000 r-xp 00002000 fe:00 247134                     /usr/bin/cat\n"
	"55d0f0ba9000-55d0f0bca000 rw-p 00000000 00:00 0                          [heap]\n"
	"7fdf8f8ba000-7fdf8f8dc000 rw-p 00000000 00:00 0 \n"
	"7fdf8f963000-7fdf8fab9000 r-xp 00026000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"this is not a maps line\n"
	"7fdf8fb00000-7fdf8fb01000 r-xp 00000000 fe:00\n"
	"7fdf8fb22000-7fdf8fb29000 r-xs 00001000 fe:01 99                         /opt/my app/lib x.so (deleted)\n"
	"7fdf8fb29000-7fdf8fb2a000 rw-s 00000000 00:01 2050                       /memfd:OTEL_CTX (deleted)\n"
	"7fdf8fb2a000-7fdf8fb2c000 rw-p 00000000 00:00 0                          [anon:OTEL_CTX]\n"
	"7ffd2b5e5000-7ffd2b606000 rw-p 00000000 00:00 0                          [stack]\n"
	"7ffd2b7c4000-7ffd2b7c6000 r-xp 00000000 00:00 0                          [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";

struct seen {
	struct procfs_map m[32];
	char path[32][256];
	size_t pathlen[32];
	size_t n;
	size_t stop_after;	/* 0: never */
};

static int collect(const struct procfs_map *m, void *arg)
{
	struct seen *s = arg;

	if (s->n < 32) {
		s->m[s->n] = *m;
		snprintf(s->path[s->n], sizeof(s->path[0]), "%s", m->path);
		s->pathlen[s->n] = strlen(m->path);
		s->m[s->n].path = s->path[s->n];
	}
	s->n++;
	return s->stop_after && s->n == s->stop_after ? 7 : 0;
}

static int parse_text(const char *text, struct seen *s)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	if (!f)
		return -errno;
	ret = procfs__parse_maps(f, collect, s);
	fclose(f);
	return ret;
}

static void test_maps_recorded(void)
{
	static struct seen s;
	const struct procfs_map *m = s.m;

	CHECK(parse_text(maps_text, &s) == 0);
	CHECK(s.n == 11);	/* 13 lines, 2 not maps lines */
	/* A file mapping, every field. */
	CHECK(m[1].start == 0x55d0def05000 && m[1].end == 0x55d0def0a000);
	CHECK(!strcmp(m[1].perms, "r-xp") && procfs_map__exec(&m[1]));
	CHECK(!procfs_map__exec(&m[0]));
	CHECK(m[1].offset == 0x2000 && m[1].ino == 247134);
	CHECK(m[1].dev == (0xfeull << 32 | 0x00));
	CHECK(!strcmp(m[1].path, "/usr/bin/cat"));
	/* Special and anonymous ones: no file, a name or none. */
	CHECK(!strcmp(m[2].path, "[heap]") && m[2].ino == 0);
	CHECK(!strcmp(m[3].path, "") && m[3].ino == 0);
	/* Spaces belong to the path, and so does " (deleted)". */
	CHECK(!strcmp(m[5].path, "/opt/my app/lib x.so (deleted)"));
	CHECK(m[5].dev == (0xfeull << 32 | 0x01) && m[5].offset == 0x1000);
	CHECK(!strcmp(m[6].path, "/memfd:OTEL_CTX (deleted)"));
	CHECK(!strcmp(m[7].path, "[anon:OTEL_CTX]"));
	CHECK(!strcmp(m[8].path, "[stack]"));
	CHECK(!strcmp(m[9].path, "[vdso]") && procfs_map__exec(&m[9]));
	/* The last line has no newline; the top of the address space. */
	CHECK(m[10].start == 0xffffffffff600000ull);
	CHECK(!strcmp(m[10].path, "[vsyscall]"));
	CHECK(!strcmp(m[10].perms, "--xp") && procfs_map__exec(&m[10]));
}

/* One line at a time, as the parser sees it. */
static void test_maps_line(void)
{
	struct procfs_map m;
	char line[256];

	snprintf(line, sizeof(line), "1000-2000 r-xp 0 08:01 5 /bin/x\n");
	CHECK(procfs__parse_maps_line(line, &m));
	CHECK(m.start == 0x1000 && m.end == 0x2000);
	CHECK(m.dev == (8ull << 32 | 1) && m.ino == 5);
	CHECK(!strcmp(m.path, "/bin/x"));	/* newline cut */
	/* No path and no blank after the inode: an empty path. */
	snprintf(line, sizeof(line), "1000-2000 rw-p 0 00:00 0");
	CHECK(procfs__parse_maps_line(line, &m) && !strcmp(m.path, ""));
	snprintf(line, sizeof(line), "1000-2000 rw-p 0 00:00 0\n");
	CHECK(procfs__parse_maps_line(line, &m) && !strcmp(m.path, ""));
	/* The kernel's padding before the path; blanks inside it kept. */
	snprintf(line, sizeof(line), "7f00a000-7f00b000 r-xp 00001000 fd:1a "
		 "123456                   /lib/x y (deleted)\n");
	CHECK(procfs__parse_maps_line(line, &m));
	CHECK(m.start == 0x7f00a000 && m.end == 0x7f00b000 &&
	      m.offset == 0x1000 && !strcmp(m.perms, "r-xp"));
	CHECK(m.dev == (0xfdull << 32 | 0x1a) && m.ino == 123456);
	CHECK(!strcmp(m.path, "/lib/x y (deleted)"));
	/* Numbers that do not fit, or run into the next field. */
	snprintf(line, sizeof(line), "10000000000000000-2000 r-xp 0 08:01 5 /x");
	CHECK(!procfs__parse_maps_line(line, &m));
	snprintf(line, sizeof(line), "1000-2000 r-xp 0 100000000:01 5 /x");
	CHECK(!procfs__parse_maps_line(line, &m));
	snprintf(line, sizeof(line), "1000-2000 r-xp 0 08:01 5x /x");
	CHECK(!procfs__parse_maps_line(line, &m));
	/* Not maps lines: empty, cut short, not hexadecimal. */
	snprintf(line, sizeof(line), "\n");
	CHECK(!procfs__parse_maps_line(line, &m));
	snprintf(line, sizeof(line), "1000-2000 r-xp 0 08:01");
	CHECK(!procfs__parse_maps_line(line, &m));
	snprintf(line, sizeof(line), "1000-zz r-xp 0 08:01 5 /bin/x");
	CHECK(!procfs__parse_maps_line(line, &m));
	/* Over-long permissions are cut to what fits, and the line refused:
	 * the rest no longer parses. */
	snprintf(line, sizeof(line), "1000-2000 r-xpr-xpr-xp 0 08:01 5 /x");
	CHECK(!procfs__parse_maps_line(line, &m));
}

/* A line longer than any buffer is read whole: its path intact, and no
 * piece of it taken for a line of its own. */
static void test_maps_long_line(void)
{
	static struct seen s;
	size_t plen = 100000, len;
	char *text, *p;

	text = malloc(plen + 256);
	CHECK(text);
	len = (size_t)sprintf(text, "1000-2000 r-xp 0 08:01 5 /");
	p = text + len;
	/* Inside the long path, text that looks like a maps line. */
	memset(p, 'a', plen);
	memcpy(p + 600, "\t3000-4000 r-xp 0 08:01 6 /fake", 31);
	p[plen] = '\0';
	strcat(text, "\n5000-6000 r--p 0 08:01 7 /next\n");
	s.n = 0;
	CHECK(parse_text(text, &s) == 0);
	CHECK(s.n == 2);
	CHECK(s.m[0].start == 0x1000 && s.m[1].start == 0x5000);
	CHECK(s.pathlen[0] == plen + 1 && !strncmp(s.path[0], "/aaa", 4));
	CHECK(!strcmp(s.path[1], "/next"));
	free(text);
}

/* The callback stops the walk, and what it returned is the walk's. */
static void test_maps_stop(void)
{
	static struct seen s;

	s.stop_after = 3;
	CHECK(parse_text(maps_text, &s) == 7);
	CHECK(s.n == 3);
	/* Empty text: no call. */
	s.n = 0;
	s.stop_after = 0;
	CHECK(parse_text("", &s) == 0 && s.n == 0);
}

struct find_addr {
	uint64_t addr;
	bool found, exec;
};

static int holds(const struct procfs_map *m, void *arg)
{
	struct find_addr *a = arg;

	if (a->addr < m->start || a->addr >= m->end)
		return 0;
	a->found = true;
	a->exec = procfs_map__exec(m);
	return 1;
}

/* The /proc wrapper on this process: its code is mapped executable, its
 * data not; a pid no process has cannot be read. */
static void test_maps_proc(void)
{
	struct find_addr code = { (uintptr_t)&test_maps_proc };
	struct find_addr data = { (uintptr_t)&maps_text };
	struct find_addr self = { (uintptr_t)&test_maps_proc };

	CHECK(procfs__read_maps(getpid(), holds, &code) == 1);
	CHECK(code.found && code.exec);
	CHECK(procfs__read_maps(getpid(), holds, &data) == 1);
	CHECK(data.found && !data.exec);
	CHECK(procfs__read_maps(PROCFS_SELF, holds, &self) == 1 && self.exec);
	CHECK(procfs__read_maps(INT_MAX, holds, &self) == -ENOENT);
	CHECK(!procfs__open_maps(0) && errno == ENOENT);
}

static volatile uint64_t value = 0x1111;

/* A page that is mapped, and the one after it, which is not. */
static char *edge_page(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	munmap(p + pg, pg);
	memset(p, 'e', pg);
	return p;
}

/* This process: all of it or -EFAULT, never a part. */
static void test_mem_self(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t v = 0;
	char buf[16], *p = edge_page();

	CHECK(p);
	CHECK(!procfs__read_mem(getpid(), (uintptr_t)&value, &v, sizeof(v)));
	CHECK(v == 0x1111);
	CHECK(procfs__read_mem(getpid(), (uintptr_t)p + pg - 16, buf, 16) == 0);
	CHECK(buf[0] == 'e' && buf[15] == 'e');
	/* Across the end of the mapping, and past it. */
	CHECK(procfs__read_mem(getpid(), (uintptr_t)p + pg - 8, buf, 16) ==
	      -EFAULT);
	CHECK(procfs__read_mem(getpid(), (uintptr_t)p + pg, buf, 8) == -EFAULT);
	CHECK(procfs__read_mem(getpid(), 0, buf, 8) == -EFAULT);
	munmap(p, pg);
	/* No such process. */
	CHECK(procfs__read_mem(INT_MAX, (uintptr_t)&value, &v, sizeof(v)) ==
	      -ESRCH);
}

/* Another process: a child's copy of value, which it changed; once it is
 * gone, -ESRCH. */
static void test_mem_child(void)
{
	int ready[2], hold[2], status;
	uint64_t v = 0;
	char c;
	pid_t pid;

	CHECK(pipe(ready) == 0 && pipe(hold) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		value = 0xc0ffee;
		close(ready[0]);
		close(hold[1]);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		/* Until the parent closes its end. */
		_exit(read(hold[0], &c, 1) == 0 ? 0 : 1);
	}
	close(ready[1]);
	close(hold[0]);
	CHECK(read(ready[0], &c, 1) == 1);
	CHECK(procfs__read_mem(pid, (uintptr_t)&value, &v, sizeof(v)) == 0);
	CHECK(v == 0xc0ffee && value == 0x1111);
	close(hold[1]);
	close(ready[0]);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	CHECK(procfs__read_mem(pid, (uintptr_t)&value, &v, sizeof(v)) ==
	      -ESRCH);
}

/* In a child where process_vm_readv is refused (a seccomp filter, as some
 * sandboxes have), reads go through /proc/PID/mem, with the same results.
 * The child's exit status numbers the check that failed. */
static int mem_fallback_child(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv,
			 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(insns) / sizeof(insns[0]), insns };
	long pg = sysconf(_SC_PAGESIZE);
	struct iovec local, remote;
	char buf[16], *p = edge_page();
	uint64_t v = 0;

	if (!p)
		return 1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return 77;
	local = (struct iovec){ &v, sizeof(v) };
	remote = (struct iovec){ (void *)&value, sizeof(v) };
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != -1 ||
	    errno != EPERM)
		return 2;
	value = 0xfa11;
	if (procfs__read_mem(getpid(), (uintptr_t)&value, &v, sizeof(v)) ||
	    v != 0xfa11)
		return 3;
	if (procfs__read_mem(getpid(), (uintptr_t)p + pg - 8, buf, 16) !=
	    -EFAULT)
		return 4;
	if (procfs__read_mem(getpid(), (uintptr_t)p + pg - 16, buf, 16) ||
	    buf[0] != 'e')
		return 5;
	if (procfs__read_mem(getpid(), UINT64_MAX - 7, buf, 8) != -EFAULT)
		return 6;
	return 0;
}

static void test_mem_fallback(void)
{
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0)
		_exit(mem_fallback_child());
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		fprintf(stderr, "  no seccomp here: fallback not tried\n");
	else if (WEXITSTATUS(status))
		fprintf(stderr, "  child failed check %d\n",
			WEXITSTATUS(status));
	CHECK(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 77);
}

/* The agent's name for a path inside a process's root. */
/* The suffix the kernel gives a replaced file's path: dropped at the end
 * only, and never the whole name. */
static void test_undeleted_len(void)
{
	static const char a[] = "/usr/bin/x (deleted)";
	static const char b[] = "/usr/bin/x (deleted) y";

	CHECK(procfs__undeleted_len(a, strlen(a)) == strlen("/usr/bin/x"));
	CHECK(procfs__undeleted_len(b, strlen(b)) == strlen(b));
	CHECK(procfs__undeleted_len(" (deleted)", 10) == 10);
	CHECK(procfs__undeleted_len("x (deleted)", 11) == 1);
	CHECK(procfs__undeleted_len("/lib/libc.so.6", 14) == 14);
	/* only the first len bytes count */
	CHECK(procfs__undeleted_len(a, strlen(a) - 1) == strlen(a) - 1);
}

static void test_root_path(void)
{
	char buf[64], want[64];
	const char *del = "/opt/lib x.so (deleted)";

	snprintf(want, sizeof(want), "/proc/%d/root/usr/bin/cat", getpid());
	CHECK(procfs__root_path(buf, sizeof(buf), getpid(), "/usr/bin/cat",
				12));
	CHECK(!strcmp(buf, want));
	/* The first len bytes only: a deleted file's name without the
	 * suffix maps adds. */
	CHECK(procfs__root_path(buf, sizeof(buf), 42, del, strlen(del) - 10));
	CHECK(!strcmp(buf, "/proc/42/root/opt/lib x.so"));
	CHECK(procfs__root_path(buf, sizeof(buf), 42, "", 0));
	CHECK(!strcmp(buf, "/proc/42/root"));
	/* What does not fit is refused, not cut. */
	CHECK(!procfs__root_path(buf, 14, 42, "/a", 2));
	CHECK(procfs__root_path(buf, 16, 42, "/a", 2));
}

/* The executable's identity is the file's, as maps shows it: the
 * program's own text mapping has it; a process gone has none. */
static int exe_text(const struct procfs_map *m, void *arg)
{
	const uint64_t *id = arg;

	return procfs_map__exec(m) && m->dev == id[0] && m->ino == id[1];
}

static void test_exe_id(void)
{
	uint64_t id[2] = { 0, 0 };
	struct stat st;
	pid_t child;

	CHECK(procfs__exe_id(getpid(), &id[0], &id[1]));
	CHECK(!stat("/proc/self/exe", &st) && st.st_ino == id[1]);
	CHECK(procfs__read_maps(getpid(), exe_text, id) == 1);
	CHECK(procfs__exe_id(PROCFS_SELF, &id[0], &id[1]) && id[1] == st.st_ino);
	child = fork();
	if (child == 0)
		_exit(0);
	CHECK(child > 0);
	waitpid(child, NULL, 0);
	CHECK(!procfs__exe_id(child, &id[0], &id[1]));
}

/* Opened through the root path, a file is the process's own, and a link
 * on the way is refused, as targetfile refuses any: one pointing out of
 * the root, one to a file inside it, one in the directories above. */
static void test_root_open(void)
{
	char dir[] = "/tmp/tagprof-procfs.XXXXXX";
	char p[PATH_MAX], rp[PATH_MAX + 64], buf[8] = "";
	int fd;

	CHECK(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/file", dir);
	fd = open(p, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0 && write(fd, "inside", 6) == 6 && !close(fd));
	snprintf(p, sizeof(p), "%s/out", dir);
	CHECK(!symlink("/etc/hostname", p));
	snprintf(p, sizeof(p), "%s/in", dir);
	CHECK(!symlink("file", p));
	snprintf(p, sizeof(p), "%s/dirlink", dir);
	CHECK(!symlink(dir, p));

	snprintf(p, sizeof(p), "%s/file", dir);
	CHECK(procfs__root_path(rp, sizeof(rp), getpid(), p, strlen(p)));
	fd = targetfile__open(rp, NULL, NULL);
	CHECK(fd >= 0 && read(fd, buf, 6) == 6 && !strncmp(buf, "inside", 6));
	close(fd);
	snprintf(p, sizeof(p), "%s/out", dir);
	CHECK(procfs__root_path(rp, sizeof(rp), getpid(), p, strlen(p)));
	CHECK(targetfile__open(rp, NULL, NULL) == -ELOOP);
	snprintf(p, sizeof(p), "%s/in", dir);
	CHECK(procfs__root_path(rp, sizeof(rp), getpid(), p, strlen(p)));
	CHECK(targetfile__open(rp, NULL, NULL) == -ELOOP);
	snprintf(p, sizeof(p), "%s/dirlink/file", dir);
	CHECK(procfs__root_path(rp, sizeof(rp), getpid(), p, strlen(p)));
	CHECK(targetfile__open(rp, NULL, NULL) == -ELOOP);
	check_remove_dir(dir);
}

int main(void)
{
	RUN(test_maps_recorded);
	RUN(test_maps_line);
	RUN(test_maps_long_line);
	RUN(test_maps_stop);
	RUN(test_maps_proc);
	RUN(test_mem_self);
	RUN(test_mem_child);
	RUN(test_mem_fallback);
	RUN(test_undeleted_len);
	RUN(test_root_path);
	RUN(test_exe_id);
	RUN(test_root_open);
	CHECK_EXIT();
}
