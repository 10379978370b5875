/* Signals that would end tagprof by default but mean nothing to it. */
#ifndef TAGPROF_SIGNALS_H
#define TAGPROF_SIGNALS_H

/* Ignores every signal whose default action ends the process and that
 * neither `record` nor `agent` gives a meaning: SIGUSR1, SIGUSR2,
 * SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF, SIGIO (SIGPOLL), SIGSTKFLT,
 * SIGPWR, SIGXFSZ (a write past RLIMIT_FSIZE fails with EFBIG instead)
 * and the real-time signals SIGRTMIN..SIGRTMAX. The callers handle SIGINT,
 * SIGTERM, SIGHUP and SIGXCPU themselves. Left at their defaults: SIGKILL
 * and SIGSTOP (cannot be caught), SIGQUIT, SIGABRT, SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGTRAP and SIGSYS (faults, or a deliberate request for
 * a core dump), and glibc's own signals 32 and 33. An ignored signal
 * stays ignored across exec: fork children before calling this. */
void signals__ignore_unused(void);

#endif
