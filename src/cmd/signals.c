// SPDX-License-Identifier: BSD-2-Clause
/* A signal sent by mistake (a `pkill -USR1` meant for another daemon, a
 * closed pipe on stderr, a log rotator's SIGUSR1) must not kill the root
 * agent and lose the window, nor a `record` and its file. SIG_IGN rather
 * than an empty handler: an ignored signal interrupts no system call, so
 * code that does not expect EINTR (libcurl, stdio) never sees one.
 */
#include "cmd/signals.h"

#include <signal.h>
#include <stddef.h>

static const int signals__unused[] = {
	SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF, SIGIO,
	SIGSTKFLT, SIGPWR, SIGXFSZ,
};

void signals__ignore_unused(void)
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
