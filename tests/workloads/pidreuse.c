/* Runs reuse_a, then makes reuse_b start with the same pid, by steering
 * /proc/sys/kernel/ns_last_pid (needs root). Prints the reused pid. Both
 * run without address-space randomization, so each binary is mapped at the
 * same address: reuse_b's code then lies inside what was reuse_a's
 * mapping, and read with reuse_a's memory map it names reuse_a's
 * functions instead of looking unmapped (and making the map be read again).
 * usage: pidreuse DIR SECONDS   (DIR holds reuse_a and reuse_b) */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/personality.h>
#include <sys/wait.h>

static pid_t run(const char *dir, const char *prog, const char *secs)
{
	char path[4096];
	pid_t pid = fork();

	if (pid == 0) {
		snprintf(path, sizeof(path), "%s/%s", dir, prog);
		execl(path, prog, secs, (char *)NULL);
		_exit(127);
	}
	return pid;
}

int main(int argc, char **argv)
{
	pid_t a;
	int st;

	if (argc < 3)
		return 2;
	/* Inherited by the children and kept across their exec. */
	if (personality(ADDR_NO_RANDOMIZE) < 0)
		return 6;
	a = run(argv[1], "reuse_a", argv[2]);
	waitpid(a, &st, 0);
	/* Fork until a child gets a's pid; that child execs reuse_b. */
	for (int tries = 0; tries < 200; tries++) {
		FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
		pid_t b;

		if (!f)
			return 3;
		fprintf(f, "%d", a - 1);
		fclose(f);
		b = fork();
		if (b == 0) {
			char path[4096];

			if (getpid() != a)
				_exit(0);
			snprintf(path, sizeof(path), "%s/reuse_b", argv[1]);
			execl(path, "reuse_b", argv[2], (char *)NULL);
			_exit(127);
		}
		waitpid(b, &st, 0);
		if (b == a) {
			printf("%d\n", a);
			return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 4;
		}
	}
	fprintf(stderr, "pidreuse: could not get pid %d again\n", a);
	return 5;
}
