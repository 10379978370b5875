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
 * the flag, without SA_RESTART, so the main loop's poll wakes with EINTR
 * and reads it. An ignored signal stays ignored across exec: fork
 * children before calling this. */
void signals__install(volatile sig_atomic_t *stop, volatile sig_atomic_t *hup);

/* sig raises *flag, as signals__install's signals do (e.g. SIGCHLD for
 * `record -- COMMAND`). */
void signals__flag(int sig, volatile sig_atomic_t *flag);

#endif
