/* Bad jitdumps for the profiler (tests/e2e/codegen.sh): copies a GIVEN
 * file (written by tests/jitdump_write.py, valid or not) to
 * DIR/jit-PID.dump, maps it PROT_READ|PROT_EXEC MAP_PRIVATE as perf's
 * convention wants (so profilers find it in /proc/PID/maps), then spins
 * for SECONDS in code it generates at CODE_ADDR, the address
 * jitdump_write.py's records name by default.
 *
 * Unless --verbatim, the pid of the file's header and of its JIT_CODE_LOAD
 * records becomes this process's (the writer cannot know it): the records
 * are walked while their sizes stay inside the file, so a bad record stops
 * the walk and everything from it on is copied as it is.
 *
 * --sparse N (issue 15): the copy is then extended to N bytes, a hole.
 * --existing: FILE is not read; it prints "jitdump_map: pid N" and maps
 * DIR/jit-PID.dump once someone else has put it there (10 s at most), as
 * it is, read-only: another user's file, in tests/e2e/hostile_jitdump.sh.
 *
 * usage: jitdump_map [--dir DIR] [--verbatim] [--sparse N] [--existing]
 *                    FILE SECONDS
 * DIR defaults to $JITDUMPDIR, else /tmp. Exits 0; 1 on a failure; 2 on
 * bad usage; 77 when not on x86-64. The dump is left in place: a profiler
 * may read it after the process is gone. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define CODE_ADDR	0x200000000000ul
#define JITDUMP_MAGIC	0x4A695444
#define HEADER_SIZE	40
#define HEADER_PID	20	/* offset of the header's pid */
#define RECORD_SIZE	16	/* id, total_size, timestamp */
#define JIT_CODE_LOAD	0

/* push rbp; mov rbp,rsp; 1: dec rdi; jnz 1b; pop rbp; ret: a frame, so
 * that its caller is found by the frame-pointer walk. */
static const unsigned char spin[] = {
	0x55, 0x48, 0x89, 0xe5, 0x48, 0xff, 0xcf, 0x75, 0xfb, 0x5d, 0xc3,
};

static void die(const char *what)
{
	fprintf(stderr, "jitdump_map: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf;
	size_t got = 0;

	if (fd < 0 || fstat(fd, &st))
		die(path);
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		die("malloc");
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0)
			die(path);
		got += (size_t)n;
	}
	close(fd);
	*len = got;
	return buf;
}

static void set_pid(unsigned char *b, size_t len)
{
	uint32_t magic, pid = (uint32_t)getpid(), hsize, id, size;

	if (len < HEADER_SIZE)
		return;
	memcpy(&magic, b, 4);
	if (magic != JITDUMP_MAGIC)
		return;
	memcpy(b + HEADER_PID, &pid, 4);
	memcpy(&hsize, b + 8, 4);
	for (size_t o = hsize; o <= len && len - o >= RECORD_SIZE; o += size) {
		memcpy(&id, b + o, 4);
		memcpy(&size, b + o + 4, 4);
		if (size < RECORD_SIZE || size > len - o)
			break;
		if (id == JIT_CODE_LOAD && size >= RECORD_SIZE + 8) {
			memcpy(b + o + RECORD_SIZE, &pid, 4);		/* pid */
			memcpy(b + o + RECORD_SIZE + 4, &pid, 4);	/* tid */
		}
	}
}

int main(int argc, char **argv)
{
	const char *dir = getenv("JITDUMPDIR");
	int verbatim = 0, existing = 0, i = 1, fd;
	long long sparse = 0;
	char path[4096];
	unsigned char *b;
	size_t len;
	double secs;
	void (*fn)(unsigned long);
	struct timespec t0, t;
	void *code;

	if (!dir || !*dir)
		dir = "/tmp";
	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--verbatim"))
			verbatim = 1;
		else if (!strcmp(argv[i], "--sparse") && i + 1 < argc)
			sparse = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--existing"))
			existing = 1;
		else
			break;
	}
	if (argc - i != 2 || (secs = atof(argv[i + 1])) <= 0) {
		fprintf(stderr, "usage: jitdump_map [--dir DIR] [--verbatim] [--sparse N] [--existing] FILE SECONDS\n");
		return 2;
	}
#if !defined(__x86_64__)
	fprintf(stderr, "jitdump_map: x86-64 only\n");
	return 77;
#endif
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	if (existing) {
		printf("jitdump_map: pid %d\n", (int)getpid());
		fflush(stdout);
		for (int w = 0; w < 100 && access(path, F_OK); w++)
			usleep(100000);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			die(path);
		b = NULL;
	} else {
		b = read_file(argv[i], &len);
		if (!verbatim)
			set_pid(b, len);
		fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, b, len) != (ssize_t)len)
			die(path);
		if (sparse > 0 && ftruncate(fd, sparse))
			die("ftruncate");
	}
	if (mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_EXEC,
		 MAP_PRIVATE, fd, 0) == MAP_FAILED)
		die("mmap of the jitdump");
	free(b);

	code = mmap((void *)CODE_ADDR, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (code == MAP_FAILED || code != (void *)CODE_ADDR)
		die("mmap at CODE_ADDR");
	memset(code, 0xcc, 4096);
	memcpy(code, spin, sizeof(spin));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		die("mprotect");
	fn = (void (*)(unsigned long))code;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		fn(1000000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
