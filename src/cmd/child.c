/* COMMAND forked stopped before exec (child.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>

#include "cmd/child.h"

/* Forks COMMAND stopped before exec; it runs once released. A CLOEXEC
 * pipe reports a failed exec back to us. run() forks before
 * signals__install, so COMMAND keeps the dispositions tagprof was started
 * with (a nohup's ignored SIGHUP included), never our ignored ones. */
int child_start(char **argv, struct child *ch)
{
	int go[2], err[2];
	char b;

	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		return -errno;
	ch->pid = fork();
	if (ch->pid < 0)
		return -errno;
	if (ch->pid == 0) {
		int e;

		close(go[1]);
		close(err[0]);
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	ch->go_fd = go[1];
	ch->err_fd = err[0];
	return 0;
}


int child_release(struct child *ch)
{
	int e = 0;
	char b = 1;

	if (write(ch->go_fd, &b, 1) != 1)
		e = errno;
	close(ch->go_fd);
	ch->go_fd = -1;
	if (read(ch->err_fd, &e, sizeof(e)) != sizeof(e))
		e = 0;	/* EOF: exec succeeded */
	close(ch->err_fd);
	return e;
}

int child_exit_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 1;
}

