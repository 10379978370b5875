/* Unit tests for src/cmd/signals.c: which signal raises which flag, what
 * is ignored and what is left at its default. Real signals, raised at
 * this process. */
#include "cmd/signals.h"
#include "check.h"

#include <poll.h>
#include <pthread.h>
#include <string.h>

static volatile sig_atomic_t stop, hup, child;

static void clear(void)
{
	stop = hup = child = 0;
}

static int handler_is(int sig, void (*h)(int))
{
	struct sigaction sa;

	return sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == h;
}

/* A caught signal must interrupt system calls (poll, read) rather than
 * restart them, or the main loop would not see the flag in time. */
static int caught_without_restart(int sig)
{
	struct sigaction sa;

	return sigaction(sig, NULL, &sa) == 0 &&
	       sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN &&
	       !(sa.sa_flags & SA_RESTART);
}

/* The agent's form: SIGHUP has a flag of its own. */
static void test_stop_and_hup(void)
{
	static const int stops[] = { SIGINT, SIGTERM, SIGXCPU };

	signals__install(&stop, &hup);
	for (size_t i = 0; i < 3; i++) {
		clear();
		CHECK(caught_without_restart(stops[i]));
		CHECK(raise(stops[i]) == 0);
		CHECK(stop == 1 && hup == 0);
	}
	clear();
	CHECK(caught_without_restart(SIGHUP));
	CHECK(raise(SIGHUP) == 0);
	CHECK(hup == 1 && stop == 0);
}

/* record's form: SIGHUP stops too; SIGCHLD raises a flag of its own. */
static void test_hup_stops_and_child(void)
{
	signals__install(&stop, &stop);
	clear();
	CHECK(raise(SIGHUP) == 0);
	CHECK(stop == 1);
	signals__flag(SIGCHLD, &child);
	clear();
	CHECK(caught_without_restart(SIGCHLD));
	CHECK(raise(SIGCHLD) == 0);
	CHECK(child == 1 && stop == 0);
}

static void test_unused_ignored(void)
{
	static const int ignored[] = {
		SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF, SIGIO,
		SIGSTKFLT, SIGPWR, SIGXFSZ,
	};
	static const int kept[] = {
		SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP,
		SIGSYS,
	};

	/* A shell starts background jobs with SIGQUIT ignored: what is
	 * checked is what install leaves, not what it inherited. */
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		signal(kept[i], SIG_DFL);
	signals__install(&stop, &hup);
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		CHECK(handler_is(ignored[i], SIG_IGN));
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		CHECK(handler_is(sig, SIG_IGN));
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		CHECK(handler_is(kept[i], SIG_DFL));
	/* Still alive after each, and no flag raised. */
	clear();
	CHECK(raise(SIGUSR1) == 0 && raise(SIGPIPE) == 0 &&
	      raise(SIGRTMAX) == 0);
	CHECK(stop == 0 && hup == 0);
}

static int readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

/* Unblocked in this thread only: it takes the signal. */
static void *send_term(void *arg)
{
	sigset_t term;

	(void)arg;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_UNBLOCK, &term, NULL);
	pthread_kill(pthread_self(), SIGTERM);
	return NULL;
}

/* The agent sleeps in poll for seconds: a signal must wake it through the
 * fd, even one that another thread takes (no EINTR in the main thread),
 * and the fd is quiet again once drained. */
static void test_wake_fd(void)
{
	pthread_t th;
	sigset_t block, old;

	signals__install(&stop, &hup);
	CHECK(signals__wake_fd() >= 0);
	signals__drain();
	CHECK(!readable(signals__wake_fd(), 0));
	clear();
	CHECK(raise(SIGHUP) == 0);
	CHECK(hup == 1 && readable(signals__wake_fd(), 0));
	signals__drain();
	CHECK(!readable(signals__wake_fd(), 0));
	/* Blocked here, so the other thread's handler runs. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	clear();
	CHECK(pthread_create(&th, NULL, send_term, NULL) == 0);
	CHECK(readable(signals__wake_fd(), 5000));
	pthread_join(th, NULL);
	CHECK(stop == 1);
	signals__drain();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int main(void)
{
	RUN(test_stop_and_hup);
	RUN(test_hup_stops_and_child);
	RUN(test_unused_ignored);
	RUN(test_wake_fd);
	CHECK_EXIT();
}
