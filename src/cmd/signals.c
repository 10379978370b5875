// SPDX-License-Identifier: BSD-2-Clause
/* A signal sent by mistake (a `pkill -USR1` meant for another daemon, a
 * closed pipe on stderr, a log rotator's SIGUSR1) must not kill the root
 * agent and lose the window, nor a `record` and its file. SIG_IGN rather
 * than an empty handler: an ignored signal interrupts no system call, so
 * code that does not expect EINTR (libcurl, stdio) never sees one.
 *
 * The signals that do mean something only raise a flag, read by the
 * command's main loop: nothing else is safe in a handler.
 */
#include "cmd/signals.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <unistd.h>

/* Ignored: SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF, SIGIO
 * (SIGPOLL), SIGSTKFLT, SIGPWR, SIGXFSZ (a write past RLIMIT_FSIZE fails
 * with EFBIG instead) and the real-time signals SIGRTMIN..SIGRTMAX. Left
 * at their defaults: SIGKILL and SIGSTOP (cannot be caught), SIGQUIT,
 * SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP and SIGSYS (faults, or
 * a deliberate request for a core dump), and glibc's own signals 32 and
 * 33. */
static const int signals__unused[] = {
	SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF, SIGIO,
	SIGSTKFLT, SIGPWR, SIGXFSZ,
};

/* The flag each signal raises; set before its handler is installed. */
static volatile sig_atomic_t *signals__flags[NSIG];
/* A byte per signal (while there is room) wakes a poll on the read end,
 * whichever thread ran the handler and however close to the poll it came:
 * no EINTR race. */
static int signals__pipe[2] = { -1, -1 };

static void signals__on_signal(int sig)
{
	int saved = errno;
	ssize_t n;

	*signals__flags[sig] = 1;
	if (signals__pipe[1] >= 0) {
		n = write(signals__pipe[1], "", 1);	/* full: already awake */
		(void)n;
	}
	errno = saved;
}

int signals__wake_fd(void)
{
	return signals__pipe[0];
}

void signals__drain(void)
{
	char buf[64];

	if (signals__pipe[0] < 0)
		return;
	while (read(signals__pipe[0], buf, sizeof(buf)) > 0)
		;
}

void signals__flag(int sig, volatile sig_atomic_t *flag)
{
	struct sigaction sa = { 0 };

	if (signals__pipe[0] < 0 && pipe2(signals__pipe, O_NONBLOCK | O_CLOEXEC))
		signals__pipe[0] = signals__pipe[1] = -1;	/* EINTR only */
	signals__flags[sig] = flag;
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = signals__on_signal;	/* no SA_RESTART: poll must wake */
	sigaction(sig, &sa, NULL);
}

static void signals__ignore_unused(void)
{
	struct sigaction sa = { 0 };
	size_t i;
	int sig;

	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(signals__unused) / sizeof(signals__unused[0]);
	     i++)
		sigaction(signals__unused[i], &sa, NULL);
	for (sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaction(sig, &sa, NULL);
}

void signals__install(volatile sig_atomic_t *stop, volatile sig_atomic_t *hup)
{
	signals__flag(SIGINT, stop);
	signals__flag(SIGTERM, stop);
	signals__flag(SIGXCPU, stop);
	signals__flag(SIGHUP, hup);
	signals__ignore_unused();
}
