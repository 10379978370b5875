/* What the static workloads without a C library (ownwork, churnexec/spin.c)
 * need of the kernel: a raw x86-64 system call, the monotonic clock, exit,
 * and a _start that hands the initial stack (argc, then argv) to MAIN with
 * the frame pointer cleared, as the ABI asks, so that frame-pointer walks
 * end there. */
#ifndef TAGPROF_TESTS_NOLIBC_H
#define TAGPROF_TESTS_NOLIBC_H

#define SYS_EXIT_GROUP		231
#define SYS_CLOCK_GETTIME	228
#define CLOCK_MONOTONIC		1

struct timespec_ {
	long tv_sec, tv_nsec;
};

static long syscall2(long nr, long a, long b)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b)
			 : "rcx", "r11", "memory");
	return ret;
}

static unsigned long mono_ns(void)
{
	struct timespec_ ts = { 0, 0 };

	syscall2(SYS_CLOCK_GETTIME, CLOCK_MONOTONIC, (long)&ts);
	return (unsigned long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static __attribute__((noreturn)) void exit_group(int code)
{
	syscall2(SYS_EXIT_GROUP, code, 0);
	__builtin_unreachable();
}

/* _start as a function symbol with its size, so its frames are named. */
#define NOLIBC_START(MAIN)					\
	__asm__(".globl _start\n"				\
		".type _start, @function\n"			\
		"_start:\n"					\
		"	xor %ebp, %ebp\n"			\
		"	mov %rsp, %rdi\n"			\
		"	and $-16, %rsp\n"			\
		"	call " #MAIN "\n"			\
		"	hlt\n"					\
		".size _start, . - _start\n")

#endif
