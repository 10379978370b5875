/* Spends its time in the kernel: small writes to /dev/null and getppid,
 * issued with the syscall instruction right here, so the user stack has no
 * frameless libc wrapper between the kernel and syscall_loop.
 * usage: syscalls SECONDS */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static long raw_syscall3(long nr, long a, long b, long c)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
#else
	return syscall(nr, a, b, c);
#endif
}

__attribute__((noinline)) void syscall_loop(int fd)
{
	char buf[64] = { 0 };

	for (int i = 0; i < 10000; i++) {
		if (raw_syscall3(SYS_write, fd, (long)buf, sizeof(buf)) < 0)
			exit(1);
		raw_syscall3(SYS_getppid, 0, 0, 0);
	}
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	int fd = open("/dev/null", O_WRONLY);
	struct timespec t0, t;

	if (fd < 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		syscall_loop(fd);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
