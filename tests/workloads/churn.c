/* Process and thread churn for tests/e2e/churn.sh and tests/bench/soak.sh:
 * short processes at PROCS per second and short threads at THREADS per
 * second for SECONDS. The processes are a mix, cheapest first:
 *   - clone(CLONE_VM | CLONE_VFORK) children that exit at once (no copy of
 *     the address space; the parent waits for the exit, so one stack does);
 *   - fork() children that exit at once (every 4th);
 *   - every EXEC_EVERY-th: vfork() + exec of churn_a or churn_b (in turn,
 *     from DIR), which spin SPIN_MS ms in alpha_spin or beta_spin, one
 *     address in both (see churnexec/spin.c). These run from a thread of
 *     their own: once a churn_a has exited, it steers the next pid to
 *     churn_a's through /proc/sys/kernel/ns_last_pid (as root) before it
 *     starts the churn_b, so that churn_b often gets the very pid churn_a
 *     had, a millisecond after it was freed (the other spawns race for it;
 *     the pairs that got it are counted). A low kernel.pid_max makes pids
 *     come round again too.
 * Children are reaped by the kernel (SIGCHLD ignored). Each kind is paced
 * by its own clock; the rates it got are printed at the end on stdout:
 *   churn: SECS s procs P/s (clone C/s fork F/s exec E/s) threads T/s failed N
 *          reused R
 * usage: churn SECONDS PROCS THREADS DIR [EXEC_EVERY [SPIN_MS]] */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double secs, thread_rate, exec_rate;
static atomic_ulong threads_made, failed, nexec, reused;
static char path_a[4096], path_b[4096];
static const char *spin_ms = "5";

static void *thread_exit(void *arg)
{
	return arg;
}

/* Short threads at thread_rate, detached: they exit at once. */
static void *thread_churn(void *arg)
{
	double t0 = now(), t;
	pthread_attr_t a;
	pthread_t th;

	(void)arg;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 64 * 1024);
	while ((t = now() - t0) < secs) {
		if (threads_made >= t * thread_rate) {
			usleep(500);
			continue;
		}
		if (pthread_create(&th, &a, thread_exit, NULL))
			failed++;
		else
			threads_made++;
	}
	return NULL;
}

static pid_t spawn(const char *path)
{
	pid_t pid = vfork();

	if (pid == 0) {
		execl(path, strrchr(path, '/') + 1, spin_ms, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		failed++;
	else
		nexec++;
	return pid;
}

/* Waits (up to 2 s) for pid to be gone: reaped by the kernel. */
static void wait_gone(pid_t pid)
{
	for (int i = 0; i < 2000 && kill(pid, 0) == 0; i++)
		usleep(1000);
}

/* Pairs churn_a, churn_b, at exec_rate processes a second: churn_b on the
 * pid churn_a had, when the race for it is won. */
static void *exec_churn(void *arg)
{
	double t0 = now(), t;

	(void)arg;
	while ((t = now() - t0) < secs) {
		pid_t a, b;
		FILE *f;

		if (nexec >= t * exec_rate) {
			usleep(500);
			continue;
		}
		a = spawn(path_a);
		if (a < 0)
			continue;
		wait_gone(a);
		f = fopen("/proc/sys/kernel/ns_last_pid", "w");
		if (f) {
			fprintf(f, "%d", (int)a - 1);
			fclose(f);
		}
		b = spawn(path_b);
		if (b == a)
			reused++;
		if (b > 0)
			wait_gone(b);
	}
	return NULL;
}

static int clone_child(void *arg)
{
	(void)arg;
	_exit(0);
}

int main(int argc, char **argv)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	unsigned long nclone = 0, nfork = 0, n = 0;
	unsigned long exec_every = 20;
	double rate, t0, t;
	pthread_t th, te;

	if (argc < 5) {
		fprintf(stderr, "usage: churn SECONDS PROCS THREADS DIR [EXEC_EVERY [SPIN_MS]]\n");
		return 2;
	}
	secs = atof(argv[1]);
	rate = atof(argv[2]);
	thread_rate = atof(argv[3]);
	snprintf(path_a, sizeof(path_a), "%s/churn_a", argv[4]);
	snprintf(path_b, sizeof(path_b), "%s/churn_b", argv[4]);
	if (argc > 5 && atol(argv[5]) > 0)
		exec_every = atol(argv[5]);
	if (argc > 6)
		spin_ms = argv[6];
	if (access(path_a, X_OK) || access(path_b, X_OK)) {
		fprintf(stderr, "churn: no churn_a/churn_b in %s\n", argv[4]);
		return 2;
	}
	signal(SIGCHLD, SIG_IGN);
	if (thread_rate > 0 && pthread_create(&th, NULL, thread_churn, NULL))
		return 3;
	/* The exec'ing thread takes its share of the processes. */
	exec_rate = rate / exec_every;
	rate -= exec_rate;
	if (exec_rate > 0 && pthread_create(&te, NULL, exec_churn, NULL))
		return 3;
	t0 = now();
	while ((t = now() - t0) < secs) {
		pid_t pid;

		if (n >= t * rate) {
			usleep(200);
			continue;
		}
		n++;
		if (n % 4 == 1) {
			pid = fork();
			if (pid == 0)
				_exit(0);
			if (pid > 0)
				nfork++;
		} else {
			pid = clone(clone_child, stack + sizeof(stack),
				    CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
			if (pid > 0)
				nclone++;
		}
		if (pid < 0)
			failed++;
	}
	t = now() - t0;
	if (thread_rate > 0)
		pthread_join(th, NULL);
	if (exec_rate > 0)
		pthread_join(te, NULL);
	printf("churn: %.1f s procs %.0f/s (clone %.0f/s fork %.0f/s exec %.0f/s) threads %.0f/s failed %lu reused %lu\n",
	       t, (nclone + nfork + nexec) / t, nclone / t, nfork / t, nexec / t,
	       threads_made / t, (unsigned long)failed, (unsigned long)reused);
	return 0;
}
