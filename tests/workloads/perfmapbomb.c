/* The perf map attack (issue 10, case 4): NPROC processes each run a tiny
 * JIT loop and rewrite their /tmp/perf-PID.map every half second with
 * ENTRIES 64-byte lines (1M entries: 64 MiB), the one line naming the real
 * code last, so whoever wants that name must read the whole file. Each
 * rewrite is a new file renamed over the old one (a new inode, size and
 * time every time). The maps are removed at exit, and on SIGTERM.
 * usage: perfmapbomb SECONDS [NPROC [ENTRIES]]
 *        (exits 77 when not on x86-64) */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define LINE 64
#define BASE 0x100000000000ul	/* below any mapping here */
#define NPROC_MAX 64

static const unsigned char code[] = {
	0x48, 0xff, 0xcf,	/* loop: dec %rdi */
	0x75, 0xfb,		/*       jnz loop */
	0xc3,			/*       ret */
};

typedef void (*spin_fn)(unsigned long);

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Writes the map to a temporary name and renames it into place. */
static void write_map(const char *text, size_t len)
{
	char path[64], tmp[80];
	size_t done = 0;
	ssize_t r;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	while (done < len) {
		r = fwrite(text + done, 1, len - done, f);
		if (r <= 0)
			break;
		done += r;
	}
	fclose(f);
	rename(tmp, path);
}

static void child(double secs, spin_fn fn, const char *text, size_t len)
{
	char path[64];
	double t0 = now(), last = -1;

	while (!stop && now() - t0 < secs) {
		if (now() - last >= 0.5) {
			write_map(text, len);
			last = now();
		}
		fn(2000000);
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	int nproc = argc > 2 ? atoi(argv[2]) : 4;
	long entries = argc > 3 ? atol(argv[3]) : 1l << 20;
	struct sigaction sa = { 0 };
	pid_t pids[NPROC_MAX];
	size_t len;
	char *text;
	void *p;
	int i;

#if !defined(__x86_64__)
	(void)secs;
	(void)nproc;
	(void)entries;
	(void)pids;
	(void)sa;
	(void)len;
	(void)text;
	(void)p;
	(void)i;
	(void)child;
	fprintf(stderr, "perfmapbomb: x86-64 only\n");
	return 77;
#else
	if (nproc < 1 || nproc > NPROC_MAX || entries < 1) {
		fprintf(stderr, "usage: perfmapbomb SECONDS [NPROC [ENTRIES]]\n");
		return 2;
	}
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memset(p, 0xcc, 4096);	/* int3 everywhere else */
	memcpy(p, code, sizeof(code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 1;
	/* The text, made once and shared by the children. */
	len = (size_t)entries * LINE;
	text = malloc(len + 1);
	if (!text)
		return 1;
	for (i = 0; i < entries - 1; i++)
		snprintf(text + (size_t)i * LINE, LINE + 1,
			 "%012lx 40 attacker_function_%-29d\n",
			 BASE + (unsigned long)LINE * i, i);
	snprintf(text + (size_t)(entries - 1) * LINE, LINE + 1,
		 "%012lx %-2zx %-47s\n", (unsigned long)p, sizeof(code),
		 "perfmapbomb_jit_loop");
	/* No SA_RESTART: the wait for the children must see the signal. */
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	for (i = 0; i < nproc; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			child(secs, (spin_fn)p, text, len);
			_exit(0);
		}
	}
	/* SIGTERM to this process ends the children too. */
	for (i = 0; i < nproc; i++)
		while (pids[i] > 0 && waitpid(pids[i], NULL, 0) < 0 &&
		       errno == EINTR)
			for (int j = 0; j < nproc; j++)
				if (pids[j] > 0)
					kill(pids[j], SIGTERM);
	return 0;
#endif
}
