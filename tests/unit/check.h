/* Minimal unit-test support. Each case prints one line that tests/run.sh
 * counts: "PASS name", "FAIL name: why" or "SKIP name: why". */
#ifndef TAGPROF_CHECK_H
#define TAGPROF_CHECK_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

static int check_failed_total;
static int check_case_failed;

/* Fails the current case with the condition and location, and returns. */
#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "  %s:%d: CHECK(%s) failed\n",     \
				__FILE__, __LINE__, #cond);                \
			check_case_failed = 1;                             \
			return;                                            \
		}                                                          \
	} while (0)

#define RUN(fn)                                                            \
	do {                                                               \
		check_case_failed = 0;                                     \
		fn();                                                      \
		if (check_case_failed) {                                   \
			printf("FAIL %s: see stderr\n", #fn);              \
			check_failed_total++;                              \
		} else {                                                   \
			printf("PASS %s\n", #fn);                          \
		}                                                          \
		fflush(stdout);                                            \
	} while (0)

#define SKIP(fn, why) printf("SKIP %s: %s\n", #fn, why)

#define CHECK_EXIT() return check_failed_total ? 1 : 0

/* /proc/self/exe's target, NUL-terminated (readlink does not). */
static inline bool check_read_exe(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

/* Removes a test's temporary directory and all in it (rm -rf), saying so
 * on stderr if it cannot. */
static inline void check_remove_dir(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
}

/* A child that sleeps until killed: a process the test can look at. */
static inline pid_t check_start_sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

/* A number in [0, n), from xorshift64: the same sequence every run, so a
 * randomized case fails the same way again. */
static inline uint64_t check_rnd(uint64_t n)
{
	static uint64_t state = 88172645463325252ull;

	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state % n;
}

/* Kills and reaps a child (pid <= 0: none). */
static inline void check_stop_child(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

#endif
