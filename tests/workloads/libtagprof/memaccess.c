/* Data addresses, for the page-fault sampling tests (tests/e2e/memory.sh,
 * tests/bench/memory.sh): two buffers read one page at a time, every read
 * a page fault, under the thread label query_id.
 *
 *	A  scan_buf, a global array in .bss (a data symbol in .symtab),
 *	   A_KIB KiB (default 8 MiB), page aligned
 *	B  an anonymous private mmap of 3 x A's size
 *
 *	phase a (query_id=a): PASSES passes over A, each reading its pages in
 *		address order (sequential scan)
 *	phase b (query_id=b): PASSES passes over B, each reading its pages in
 *		a random order (a fresh permutation per pass)
 *
 * Each read is of one byte at offset TOUCH_OFF (printed) of its page, and
 * the buffer is dropped (madvise MADV_DONTNEED) after every pass, so each
 * read of a pass faults: a read of a dropped private anonymous page maps
 * the shared zero page, one minor fault per page. Transparent huge pages
 * are turned off on both buffers (MADV_NOHUGEPAGE): a read fault would
 * otherwise map a huge zero page, one fault per 2 MiB.
 *
 * Faults split 1:3 between a and b: both phases make the same number of
 * passes and B has 3 times A's pages. (Equal sizes with 3 passes of B per
 * pass of A would give the split too; unequal sizes also make the working
 * set per object differ, 1:3, so a report that mixes the two objects up
 * shows it.) The passes of a phase are spread evenly over SECONDS: pass k
 * starts k * SECONDS / PASSES after the phase does (sleeping till then
 * when ahead), so each phase lasts about SECONDS (longer if a pass takes
 * longer than its share; the phase ends SECONDS after it started, or
 * when its last pass does if later). SECONDS 0: no pacing, every pass
 * right after the last (the benchmark's flat-out run).
 *
 * Before phase a, WARM_S seconds (default 1) without labels that read a
 * small scratch mapping every 10 ms (its faults are samples too): a
 * profiler that looks for a process's labels at its first sample, and
 * looks again only half a second later when that was too early, knows them
 * before phase a starts. The scratch mapping is unmapped afterwards.
 *
 * Prints on stdout, each line "NAME key=value...":
 *	buf name=A object=scan_buf addr=0x... bytes=N pages=N
 *	buf name=B object=anon addr=0x... bytes=N pages=N
 *	touch offset=N
 *	phase name=a query_id=a start_ns=N end_ns=N real_start_ns=N
 *		real_end_ns=N pass_ns=N passes=N touches=N minflt=N majflt=N
 *		cpu_ns=N
 *	phase name=b ...
 * start_ns and end_ns on CLOCK_MONOTONIC, real_* on CLOCK_REALTIME (as a
 * pprof's time_nanos); pass k starts pass_ns * k after start_ns (pass_ns
 * 0: unpaced, each right after the last); touches = passes x pages (page reads made); minflt
 * and majflt: getrusage(RUSAGE_SELF) deltas over the phase (faults taken),
 * cpu_ns its user + system CPU time (microsecond resolution).
 *
 * usage: memaccess SECONDS PASSES [A_KIB [WARM_S]]
 * Exit 0; 1 on a system call failure; 2 on bad usage; 4 when a phase's
 * minor faults are not its page reads (within 1% + 16): the kernel did not
 * fault once per read, and the truth printed would be wrong. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <tagprof/tagprof.h>

#define PAGE		4096UL
#define TOUCH_OFF	0x5a8UL		/* not 0: addresses are the byte read */
#define A_MAX_KIB	(64UL << 10)	/* scan_buf's size in .bss */
#define A_DEFAULT_KIB	(8UL << 10)
#define WARM_PAGES	16

/* The sequentially scanned buffer, A: a global (not static) array so that
 * its symbol is in .symtab as an object; page aligned so that none of it
 * shares a page with .data (file-backed, whose faults map file pages). Its
 * size is the largest A allowed; a run uses its first A_KIB KiB. */
char scan_buf[A_MAX_KIB << 10] __attribute__((aligned(4096)));

static volatile unsigned long sink;

static void die(const char *what)
{
	fprintf(stderr, "memaccess: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void sleep_until(uint64_t mono_ns)
{
	struct timespec t = { (time_t)(mono_ns / 1000000000ull),
			      (long)(mono_ns % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

static void drop(char *p, size_t bytes)
{
	if (madvise(p, bytes, MADV_DONTNEED))
		die("madvise(MADV_DONTNEED)");
}

static void no_huge_pages(char *p, size_t bytes)
{
	/* EINVAL: a kernel without THP, where there is nothing to turn off */
	if (madvise(p, bytes, MADV_NOHUGEPAGE) && errno != EINVAL)
		die("madvise(MADV_NOHUGEPAGE)");
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

/* The page reads of the two phases, not inlined: their samples' stacks
 * name them. Not instrumented by ASan (a sanitized build): its checks
 * would read the shadow of each page, and fault on it, beside the page. */
#define PAGE_READS __attribute__((noinline, no_sanitize("address")))

PAGE_READS static void scan_pass(char *p, size_t pages)
{
	unsigned long s = 0;

	for (size_t i = 0; i < pages; i++)
		s += *(volatile char *)(p + i * PAGE + TOUCH_OFF);
	sink += s;
}

PAGE_READS static void random_pass(char *p, uint32_t *perm, size_t pages)
{
	unsigned long s = 0;

	for (size_t i = pages - 1; i > 0; i--) {	/* Fisher-Yates */
		size_t j = next_rand() % (i + 1);
		uint32_t x = perm[i];

		perm[i] = perm[j];
		perm[j] = x;
	}
	for (size_t i = 0; i < pages; i++)
		s += *(volatile char *)(p + perm[i] * PAGE + TOUCH_OFF);
	sink += s;
}

/* The faults taken so far, and the CPU time used (user + system, ns). */
static void faults(long *minflt, long *majflt, uint64_t *cpu_ns)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		die("getrusage");
	*minflt = ru.ru_minflt;
	*majflt = ru.ru_majflt;
	*cpu_ns = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
		  (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

struct phase {
	const char *name;
	char *buf;
	size_t pages;
	uint32_t *perm;		/* NULL: sequential */
};

/* Runs one phase under query_id=NAME; prints its line. 0, or 4 when the
 * faults taken are not the page reads made. */
static int run_phase(const struct phase *ph, double secs, unsigned long passes)
{
	tagprof_labels *l = tagprof_labels_new();
	const tagprof_labels *prev;
	uint64_t start, end, rstart, rend, step = (uint64_t)(secs * 1e9 / (double)passes);
	unsigned long long touches = (unsigned long long)passes * ph->pages;
	long min0, maj0, min1, maj1;
	uint64_t cpu0, cpu1;
	int err;

	if (!l)
		die("tagprof_labels_new");
	err = tagprof_labels_add(l, "query_id", ph->name);
	if (err) {
		errno = -err;
		die("tagprof_labels_add");
	}
	prev = tagprof_attach(l);
	faults(&min0, &maj0, &cpu0);
	rstart = clock_ns(CLOCK_REALTIME);
	start = clock_ns(CLOCK_MONOTONIC);
	for (unsigned long k = 0; k < passes; k++) {
		if (step)
			sleep_until(start + k * step);
		if (ph->perm)
			random_pass(ph->buf, ph->perm, ph->pages);
		else
			scan_pass(ph->buf, ph->pages);
		drop(ph->buf, ph->pages * PAGE);
	}
	if (step)	/* the phase lasts SECONDS, unless its passes took longer */
		sleep_until(start + passes * step);
	end = clock_ns(CLOCK_MONOTONIC);
	rend = clock_ns(CLOCK_REALTIME);
	faults(&min1, &maj1, &cpu1);
	tagprof_attach(prev);
	tagprof_labels_free(l);
	printf("phase name=%s query_id=%s start_ns=%llu end_ns=%llu real_start_ns=%llu "
	       "real_end_ns=%llu pass_ns=%llu passes=%lu touches=%llu minflt=%ld majflt=%ld "
	       "cpu_ns=%llu\n",
	       ph->name, ph->name, (unsigned long long)start, (unsigned long long)end,
	       (unsigned long long)rstart, (unsigned long long)rend,
	       (unsigned long long)step, passes, touches,
	       min1 - min0, maj1 - maj0, (unsigned long long)(cpu1 - cpu0));
	fflush(stdout);
	if ((unsigned long long)(min1 - min0 + maj1 - maj0) > touches + touches / 100 + 16 ||
	    (unsigned long long)(min1 - min0) + touches / 100 + 16 < touches) {
		fprintf(stderr, "memaccess: phase %s: %ld minor faults for %llu page reads\n",
			ph->name, min1 - min0, touches);
		return 4;
	}
	return 0;
}

/* Unlabelled faults for WARM_S seconds, one small pass every 10 ms. */
static void warm_up(double secs)
{
	size_t bytes = WARM_PAGES * PAGE;
	char *w = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t end = clock_ns(CLOCK_MONOTONIC) + (uint64_t)(secs * 1e9);

	if (w == MAP_FAILED)
		die("mmap");
	no_huge_pages(w, bytes);
	while (clock_ns(CLOCK_MONOTONIC) < end) {
		scan_pass(w, WARM_PAGES);
		drop(w, bytes);
		usleep(10000);
	}
	munmap(w, bytes);
}

int main(int argc, char **argv)
{
	double secs, warm = 1.0;
	unsigned long passes, a_kib = A_DEFAULT_KIB;
	size_t a_bytes, b_bytes, a_pages, b_pages;
	struct phase pa, pb;
	uint32_t *perm;
	char *b, *end;
	int err, rc;

	if (argc < 3 || argc > 5)
		goto usage;
	secs = strtod(argv[1], &end);
	if (*end || !(secs >= 0) || secs > 3600)
		goto usage;
	passes = strtoul(argv[2], &end, 10);
	if (*end || passes < 1 || passes > 1000000)
		goto usage;
	if (argc > 3) {
		a_kib = strtoul(argv[3], &end, 10);
		if (*end || a_kib < 4 || a_kib % 4 || a_kib > A_MAX_KIB)
			goto usage;
	}
	if (argc > 4) {
		warm = strtod(argv[4], &end);
		if (*end || !(warm >= 0) || warm > 60)
			goto usage;
	}
	err = tagprof_process_init("memaccess");
	if (err) {
		errno = -err;
		die("tagprof_process_init");
	}

	a_bytes = a_kib << 10;
	a_pages = a_bytes / PAGE;
	b_pages = 3 * a_pages;
	b_bytes = b_pages * PAGE;
	b = mmap(NULL, b_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED)
		die("mmap");
	no_huge_pages(scan_buf, sizeof(scan_buf));
	no_huge_pages(b, b_bytes);
	/* the permutation's own pages fault now, not in phase b */
	perm = malloc(b_pages * sizeof(*perm));
	if (!perm)
		die("malloc");
	for (size_t i = 0; i < b_pages; i++)
		perm[i] = (uint32_t)i;
	/* neither buffer holds a page at the start of its phase */
	drop(scan_buf, sizeof(scan_buf));
	drop(b, b_bytes);

	printf("buf name=A object=scan_buf addr=%p bytes=%zu pages=%zu\n",
	       (void *)scan_buf, a_bytes, a_pages);
	printf("buf name=B object=anon addr=%p bytes=%zu pages=%zu\n",
	       (void *)b, b_bytes, b_pages);
	printf("touch offset=%lu\n", TOUCH_OFF);
	fflush(stdout);

	warm_up(warm);
	pa = (struct phase){ "a", scan_buf, a_pages, NULL };
	pb = (struct phase){ "b", b, b_pages, perm };
	rc = run_phase(&pa, secs, passes);
	err = run_phase(&pb, secs, passes);
	free(perm);
	munmap(b, b_bytes);
	return rc ? rc : err;

usage:
	fprintf(stderr, "usage: memaccess SECONDS PASSES [A_KIB [WARM_S]]\n"
		"  SECONDS per phase (0: no pacing), PASSES per phase, A_KIB: A's size\n"
		"  in KiB (multiple of 4, at most %lu; B is 3 times it), WARM_S: seconds\n"
		"  of unlabelled warm-up (default 1)\n", A_MAX_KIB);
	return 2;
}
