/* What signals do to tagprof: stop it, re-read its settings, or nothing. */
#ifndef TAGPROF_SIGNALS_H
#define TAGPROF_SIGNALS_H

#include <signal.h>

/* The signals of `record` and `agent`. SIGINT, SIGTERM and SIGXCPU (past
 * the soft RLIMIT_CPU the hard limit's SIGKILL follows, so there is still
 * time to write) raise *stop. SIGHUP raises *hup: the agent re-reads its
 * config; record passes stop again (the terminal is gone). Every other
 * signal whose default action ends the process, and that tagprof gives no
 * meaning, is ignored (the list is in signals.c). The handlers only set
 * the flag and write a byte to signals__wake_fd(), without SA_RESTART, so
 * the main loop's poll wakes (with EINTR, or on that fd when another
 * thread took the signal) and reads it. An ignored signal stays ignored
 * across exec: fork children before calling this. */
void signals__install(volatile sig_atomic_t *stop, volatile sig_atomic_t *hup);

/* sig raises *flag, as signals__install's signals do (e.g. SIGCHLD for
 * `record -- COMMAND`). */
void signals__flag(int sig, volatile sig_atomic_t *flag);

/* Readable once a handled signal arrived, until signals__drain(): a loop
 * that polls it with its other fds, and drains it before reading the
 * flags, sleeps as long as it likes and still sees every signal at once.
 * -1 before the first handler is installed (or without a pipe). */
int signals__wake_fd(void);
void signals__drain(void);

#endif
