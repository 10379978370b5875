/* COMMAND of `record -- COMMAND` and `sizes -- COMMAND`: forked stopped
 * before its exec, so that what measures it is in place when it starts. */
#ifndef TAGPROF_CHILD_H
#define TAGPROF_CHILD_H

#include <sys/types.h>

struct child {
	pid_t pid;
	int go_fd;	/* write a byte: exec */
	int err_fd;	/* read: errno of a failed exec, or EOF */
};

/* Forks argv, which waits for child_release. Returns 0 or -errno. */
int child_start(char **argv, struct child *ch);
/* Lets the child exec; returns 0 or the errno of its failed exec. */
int child_release(struct child *ch);
/* A wait status as a shell's exit status (128 + signal). */
int child_exit_status(int wstatus);

#endif
