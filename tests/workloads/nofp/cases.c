/* The cases a CFI walk must get right, in code built without frame
 * pointers (GCC, like nofp_chain): usage: nofp_cases MODE SECONDS
 *   signal  a SIGPROF handler (every 2 ms of CPU) spins in sig_spin: its
 *           samples go sig_spin -> on_signal -> the signal trampoline ->
 *           the interrupted sig_loop -> main
 *   plt     plt_loop calls labs and ldiv in libc through the PLT
 *   jit     runs the nofp chain f1 -> f2 -> f3 for a second (`auto`
 *           marks it), then maps generated code with a frame pointer
 *           (jit_spin, named in /tmp/perf-PID.map), which jit_caller
 *           calls half the time: a mapping made after the mark
 *   deep    deep recursion, 200 frames, past the 127-frame cap
 *   mixed   fp_frame (built with a frame pointer: its CFA is rbp + 16)
 *           calls zero_bp, which saves rbp, zeroes it and calls spin:
 *           past zero_bp, rbp is only right where its CFI restores it
 *   late    the nofp chain for the first half (`auto` marks it with the
 *           tables its stacks need), then late_lib calls zlib's crc32,
 *           mapped from the start but reached only now: its table is
 *           built when a walk first reaches it
 * Every function noinline and no tail calls, so the chains are there. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <zlib.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE void spin(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

/* ---- signal ---- */
NOINLINE void sig_spin(void)
{
	volatile unsigned long local[4] = { 1, 2, 3, 4 };

	spin(2000000 + local[0]);
}

static void on_signal(int sig)
{
	(void)sig;
	sig_spin();
}

NOINLINE void sig_loop(double end)
{
	volatile unsigned long local[4] = { 1, 2, 3, 4 };

	while (now() < end)
		spin(1000 + local[1]);
}

static void run_signal(double end)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };

	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	sig_loop(end);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
}

/* ---- plt ---- */
NOINLINE void plt_loop(double end)
{
	volatile long v = 12345;

	while (now() < end)
		for (int i = 0; i < 100000; i++) {
			sink += labs(v - i);
			sink += ldiv(v, i | 1).quot;
		}
}

/* ---- jit ---- */
/* push %rbp; mov %rsp,%rbp; mov %rdi,%rcx; 1: dec %rcx; jnz 1b; pop %rbp;
 * ret: a loop of rdi turns in a function with a frame, as JITs emit. */
static const unsigned char jit_code[] = {
	0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf9, 0x48, 0xff, 0xc9,
	0x75, 0xfb, 0x5d, 0xc3,
};

NOINLINE void jit_caller(void (*fn)(unsigned long))
{
	volatile unsigned long local[4] = { 1, 2, 3, 4 };

	fn(2000000 + local[2]);
}

NOINLINE void f3(unsigned long n) { volatile unsigned long l = n; spin(l); }
NOINLINE void f2(unsigned long n) { volatile unsigned long l = n; f3(l); }
NOINLINE void f1(unsigned long n) { volatile unsigned long l = n; f2(l); }

static int run_jit(double end)
{
	char path[64];
	double first = now() + 1;
	void *code;
	FILE *f;

	while (now() < first && now() < end)
		f1(1000000);
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	memcpy(code, jit_code, sizeof(jit_code));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jit_spin\n", (unsigned long)code, sizeof(jit_code));
	fclose(f);
	while (now() < end) {
		jit_caller((void (*)(unsigned long))code);
		f1(1000000);
	}
	unlink(path);
	return 0;
}

/* ---- deep ---- */
NOINLINE unsigned long deep(int depth)
{
	volatile unsigned long local[2] = { (unsigned long)depth, 0 };

	if (depth <= 0) {
		spin(100000);
		return sink;
	}
	return deep(depth - 1) + local[0];
}

NOINLINE void deep_loop(double end)
{
	while (now() < end)
		sink += deep(200);
}

/* ---- mixed ---- */
NOINLINE void zero_bp(unsigned long n)
{
	/* rbp is clobbered: GCC saves it (CFI: at CFA - 16) and restores it */
	__asm__ volatile("xor %%ebp, %%ebp" ::: "rbp");
	spin(n);
}

__attribute__((noinline, optimize("no-omit-frame-pointer")))
void fp_frame(unsigned long n)
{
	volatile unsigned long local[4] = { n, n + 1, n + 2, n + 3 };

	zero_bp(local[0]);
	sink += local[3];
}

NOINLINE void mixed_loop(double end)
{
	while (now() < end)
		fp_frame(100000);
}

/* ---- late ---- */
NOINLINE void late_chain(unsigned long n)
{
	spin(n);
	sink++;
}

NOINLINE void late_lib(const unsigned char *buf, unsigned len)
{
	sink += crc32(0, buf, len);
}

NOINLINE void late_loop(double end)
{
	static unsigned char buf[1 << 16];
	double half = end - (end - now()) / 2;

	memset(buf, 0x5a, sizeof(buf));
	while (now() < half)
		late_chain(100000);
	while (now() < end)
		late_lib(buf, sizeof(buf));
}

int main(int argc, char **argv)
{
	double end;

	if (argc != 3) {
		fprintf(stderr, "usage: nofp_cases signal|plt|jit|deep|mixed|late SECONDS\n");
		return 2;
	}
	end = now() + atof(argv[2]);
	if (!strcmp(argv[1], "signal"))
		run_signal(end);
	else if (!strcmp(argv[1], "plt"))
		plt_loop(end);
	else if (!strcmp(argv[1], "jit"))
		return run_jit(end);
	else if (!strcmp(argv[1], "deep"))
		deep_loop(end);
	else if (!strcmp(argv[1], "mixed"))
		mixed_loop(end);
	else if (!strcmp(argv[1], "late"))
		late_loop(end);
	else
		return 2;
	return 0;
}
