/* Routines of known complexity, for the input-sensitive profiles of
 * `tagprof sizes` (issue 17; tests/e2e/sizes.sh, tests/bench/sizes.sh).
 * Each is an externally visible function that is never inlined, cloned or
 * specialised (noinline, and noipa under GCC), so that its symbol is the
 * code that runs; each is called with 24 distinct sizes, log-spaced over
 * two decades or more, CALLS (3) times per size:
 *
 *	routine			size			class	sizes
 *	linear_scan(a, n)	arg2			n	16 .. 1,000,000
 *	insertion_sort(a, n)	arg2 (reversed input)	n^2	10 .. 3,000
 *	merge_sort(v)		arg1->8 (v->len)	n log n	16 .. 100,000
 *	binary_search(a, n, k)	arg2			log n	16 .. 1,000,000
 *	str_tolower(s)		label:len		n^2	20 .. 40,000
 *	str_tolower_fixed(s)	label:len		n	20 .. 40,000
 *	rec_sum(a, n)		arg2			n	200 .. 10,000 at the
 *							top, 2 calls a size
 *
 *	struct vec { int *data; size_t len; }: len is at offset 8.
 *
 * The costs are shaped to stand above the probes' own (on a VM a uprobe
 * and its return cost some 8 us; their jitter is a few hundred ns), with
 * no cache effects to bend a line:
 *
 * linear_scan hashes its elements in a chain (about 1 ns each), bound by
 * the chain, not by memory bandwidth.
 *
 * str_tolower has strlen(s) in its loop condition, so each of its n steps
 * scans the whole string (glibc's vectorised strlen, about n/150 ns, on top
 * of some 5 ns for the character: CHAR_ITERS turns of the spin, standing
 * for a locale's case mapping; quadratic from about 800 bytes on); the
 * compiler cannot hoist it, as the loop writes s. str_tolower_fixed takes
 * the length once. Both run with a label set len=<strlen(s)> (and
 * op=tolower) attached to the thread around the call: the size the
 * application names.
 *
 * Each step of binary_search pays a fixed cost (STEP_ITERS turns of the
 * spin, some 350 ns, standing for an expensive comparison), so that log n
 * (4 to 20 steps) stands well above the noise of the probes.
 *
 * rec_sum splits its range in halves down to at most LEAF (128) elements,
 * each costing some 3.6 us (ELEM_ITERS turns): a top-level call of size n
 * makes about 2n/96 calls, each its own tuple (sizes n, n/2, n/4, ... down
 * to 65), each costing time linear in its size: the class is n. A call's
 * time includes its descendants' probes (their number is linear in its
 * size, too, but they are left out at the leaves): leaves of some 350 us
 * keep that to about 5% of the time.
 *
 * Before the first round, each routine is called once with size 0 (the
 * warm-up): the first probe hit in a process costs some 100 us more than
 * the others (the kernel maps the uprobes' trampoline page and sets up the
 * thread's uprobe state), and a size-0 tuple is left out of the fits.
 *
 * spin_inlined() is inlined everywhere (always_inline, static): its name is
 * in the DWARF (an inlined subroutine) and not in .symtab; the tests ask
 * tagprof to probe it and expect a refusal that says "inlined".
 *
 * usage:
 *	sizework all [ROUNDS]	the warm-up, then every routine, all its sizes,
 *				ROUNDS times (default 1), then exit
 *	sizework loop SECONDS	rounds until SECONDS have passed (for -p)
 *	sizework exit-mid [SECONDS]  rounds for SECONDS (default 1), then
 *				_exit(0) from inside exit_inside() (its entry
 *				has no return), in the middle of a round
 *	sizework bench N [ITERS]  N calls of work_1us(ITERS) (ITERS: calibrated
 *				to about 1 us when not given); prints
 *				"ns_per_call=X iters=I calls=N" on stdout
 *
 * stdout: nothing but the bench line (tagprof's summary shares it). stderr:
 * after each `all` or `loop` run, the truth, one line per routine:
 *	sizework: truth FUNC calls=N sizes=K min=A min1=A1 max=B spec=SPEC
 *		class=C
 * (calls: every call made, recursive ones and the warm-up's included;
 * sizes: distinct sizes of those calls, 0 included; min1 the smallest but
 * 0), then "sizework: done rounds=R seconds=S" (S: the rounds alone).
 * Natively a round takes about 0.6 s.
 * Exit 0; 2 on bad usage; 1 when an allocation or libtagprof fails, or a
 * routine computes a wrong result (a sort that does not sort). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <tagprof/tagprof.h>

/* A real, separate function at its symbol: not inlined, not cloned
 * (.constprop/.isra), not specialised on its arguments; `used` keeps it
 * even if a call were folded. clang does not clone external functions and
 * has no noipa. */
#if defined(__GNUC__) && !defined(__clang__)
#define ROUTINE __attribute__((noinline, noipa, used))
#else
#define ROUTINE __attribute__((noinline, used))
#endif
/* Memory may have changed: calls on the same arguments are not merged. */
#define BARRIER() __asm__ __volatile__("" ::: "memory")

#define CALLS		3	/* calls per size */
#define REC_CALLS	2	/* rec_sum's top-level calls per size */
#define NSIZES		24	/* distinct sizes per routine */
#define LEAF		128	/* rec_sum's largest leaf */
#define STEP_ITERS	300	/* spin turns per binary_search step */
#define CHAR_ITERS	4	/* spin turns per str_tolower character */
#define ELEM_ITERS	3000	/* spin turns per rec_sum element */
#define MAX_N		1000000
#define MERGE_MAX	100000
#define STR_MAX		40000

struct vec {
	int *data;
	size_t len;
};

static volatile uint64_t sink;

/* The spin: a dependent multiply-add chain, a few cycles a turn. Inlined
 * into every caller (a test probes it and must be told it is inlined). */
static inline __attribute__((always_inline)) uint64_t spin_inlined(uint64_t x, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ __volatile__("" : "+r"(x));
	}
	return x;
}

/* ---- the routines ---- */

/* A hash of a[0..n), each element's step chained on the last (a multiply
 * and an add, a few cycles): bound by that chain, not by memory bandwidth,
 * whose limits past the caches would bend a vectorised sum's line. */
ROUTINE long linear_scan(const int *a, size_t n)
{
	unsigned long s = 0;

	for (size_t i = 0; i < n; i++)
		s = s * 31 + (unsigned long)a[i];
	return (long)s;
}

ROUTINE void insertion_sort(int *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		int x = a[i];
		size_t j = i;

		while (j > 0 && a[j - 1] > x) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = x;
	}
}

static int *merge_tmp;

/* merge_sort's recursive helper (not one of the measured routines). */
static void merge_rec(int *a, size_t n, int *tmp)
{
	size_t h = n / 2, i = 0, j = h, k = 0;

	if (n < 2)
		return;
	merge_rec(a, h, tmp);
	merge_rec(a + h, n - h, tmp);
	while (i < h && j < n)
		tmp[k++] = a[j] < a[i] ? a[j++] : a[i++];
	while (i < h)
		tmp[k++] = a[i++];
	while (j < n)
		tmp[k++] = a[j++];
	memcpy(a, tmp, n * sizeof(*a));
}

ROUTINE void merge_sort(struct vec *v)
{
	merge_rec(v->data, v->len, merge_tmp);
}

/* The index of key in the ascending a[0..n), or -1. */
ROUTINE long binary_search(const int *a, size_t n, int key)
{
	size_t lo = 0, hi = n;
	uint64_t x = (uint64_t)key;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		x = spin_inlined(x, STEP_ITERS);	/* the step's fixed cost */
		if (a[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	sink += x;
	return lo < n && a[lo] == key ? (long)lo : -1;
}

/* One character to lower case, at a fixed cost of some 5 ns: CHAR_ITERS
 * turns of the spin, chained from one character to the next through *h
 * (standing for a locale's case mapping). The fixed function's linear cost
 * then stands above the probes' noise from a few hundred bytes on, and
 * neither loop is vectorised. */
static inline char lower(char c, uint64_t *h)
{
	*h = spin_inlined(*h ^ (unsigned char)c, CHAR_ITERS);
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* The bug: strlen(s) in the condition, once per character. The loop writes
 * s, so the compiler cannot know that the length stays. */
ROUTINE void str_tolower(char *s)
{
	uint64_t h = 0;

	for (size_t i = 0; i < strlen(s); i++)
		s[i] = lower(s[i], &h);
	sink += h;
}

ROUTINE void str_tolower_fixed(char *s)
{
	size_t n = strlen(s);
	uint64_t h = 0;

	for (size_t i = 0; i < n; i++)
		s[i] = lower(s[i], &h);
	sink += h;
}

ROUTINE long rec_sum(const int *a, size_t n)
{
	long s = 0;
	size_t h;

	if (n <= LEAF) {
		uint64_t x = (uint64_t)n;

		for (size_t i = 0; i < n; i++) {
			s += a[i];
			x = spin_inlined(x, ELEM_ITERS);	/* the element's cost */
		}
		sink += x;
		return s;
	}
	h = n / 2;
	s = rec_sum(a, h);
	s += rec_sum(a + h, n - h);
	__asm__ __volatile__("" : "+r"(s));	/* no tail recursion */
	return s;
}

/* About 1 us of work per call at the calibrated ITERS (the benchmark's
 * routine). */
ROUTINE uint64_t work_1us(unsigned iters)
{
	return spin_inlined(iters, iters);
}

/* Ends the process from inside a (probed) function: an entry that never
 * returns. */
ROUTINE void exit_inside(size_t n)
{
	fflush(NULL);
	sink += (uint64_t)n;
	_exit(0);
}

/* ---- the driver ---- */

static int *sorted;		/* 0, 2, 4, ...: linear_scan, binary_search, rec_sum */
static int *work;		/* sort input */
static int *randoms;		/* merge_sort's input, copied into work (call c
				 * of a size from randoms + c) */
static char *str;		/* str_tolower's input */
static double deadline;		/* exit-mid: exit_inside() once passed (0: never) */
static int failed;

enum { F_LINEAR, F_INSERTION, F_MERGE, F_BSEARCH, F_TOLOWER, F_TOLOWER_FIXED,
       F_REC, NFUNCS };

static const struct {
	const char *name, *spec, *class;
	size_t lo, hi;
} funcs[NFUNCS] = {
	[F_LINEAR] = { "linear_scan", "arg2", "n", 16, MAX_N },
	[F_INSERTION] = { "insertion_sort", "arg2", "n^2", 10, 3000 },
	[F_MERGE] = { "merge_sort", "arg1->8", "n_log_n", 16, MERGE_MAX },
	[F_BSEARCH] = { "binary_search", "arg2", "log_n", 16, MAX_N },
	[F_TOLOWER] = { "str_tolower", "label:len", "n^2", 20, STR_MAX },
	[F_TOLOWER_FIXED] = { "str_tolower_fixed", "label:len", "n", 20, STR_MAX },
	[F_REC] = { "rec_sum", "arg2", "n", 200, 10000 },
};

static size_t sizes[NFUNCS][NSIZES];

/* The truth: calls made and the distinct sizes seen, per routine. */
#define SEEN_MAX 4096
static struct {
	unsigned long long calls;
	size_t nseen, seen[SEEN_MAX];
} truth[NFUNCS];

static void saw(int f, size_t n)
{
	size_t i;

	truth[f].calls++;
	for (i = 0; i < truth[f].nseen; i++)
		if (truth[f].seen[i] == n)
			return;
	if (truth[f].nseen < SEEN_MAX)
		truth[f].seen[truth[f].nseen++] = n;
}

static void die(const char *what)
{
	fprintf(stderr, "sizework: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *xmalloc(size_t bytes)
{
	void *p = malloc(bytes);

	if (!p)
		die("malloc");
	return p;
}

/* K distinct integers from lo to hi, log-spaced (rounded, each at least
 * one more than the last). */
static void logspace(size_t *out, size_t k, size_t lo, size_t hi)
{
	double r = (double)hi / (double)lo;

	for (size_t i = 0; i < k; i++) {
		double v = (double)lo * pow(r, (double)i / (double)(k - 1));
		size_t n = (size_t)(v + 0.5);

		if (i && n <= out[i - 1])
			n = out[i - 1] + 1;
		out[i] = n;
	}
	out[k - 1] = hi > out[k - 2] ? hi : out[k - 2] + 1;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

/* A label set len=N op=tolower per str_tolower size, built once; len=0
 * for the warm-up. */
static tagprof_labels *len_labels[NSIZES], *len0_label;

static void make_labels(void)
{
	char v[32];
	int err;

	err = tagprof_process_init("sizework");
	if (err)
		goto fail;
	len0_label = tagprof_labels_new();
	if (!len0_label)
		die("tagprof_labels_new");
	err = tagprof_labels_add(len0_label, "len", "0");
	if (!err)
		err = tagprof_labels_add(len0_label, "op", "tolower");
	if (err)
		goto fail;
	for (size_t i = 0; i < NSIZES; i++) {
		len_labels[i] = tagprof_labels_new();
		if (!len_labels[i])
			die("tagprof_labels_new");
		snprintf(v, sizeof(v), "%zu", sizes[F_TOLOWER][i]);
		err = tagprof_labels_add(len_labels[i], "len", v);
		if (!err)
			err = tagprof_labels_add(len_labels[i], "op", "tolower");
		if (err)
			goto fail;
	}
	return;
fail:
	errno = -err;
	die("libtagprof");
}

static void setup(void)
{
	for (int f = 0; f < NFUNCS; f++)
		logspace(sizes[f], NSIZES, funcs[f].lo, funcs[f].hi);
	sorted = xmalloc(MAX_N * sizeof(*sorted));
	work = xmalloc(MAX_N * sizeof(*work));
	randoms = xmalloc((MERGE_MAX + CALLS) * sizeof(*randoms));
	merge_tmp = xmalloc(MERGE_MAX * sizeof(*merge_tmp));
	str = xmalloc(STR_MAX + 1);
	for (size_t i = 0; i < MAX_N; i++)
		sorted[i] = 2 * (int)i;
	for (size_t i = 0; i < MERGE_MAX + CALLS; i++)
		randoms[i] = (int)(next_rand() % 1000000007u);
	/* every page touched now, not in the first measured call */
	memset(work, 0, MAX_N * sizeof(*work));
	memset(merge_tmp, 0, MERGE_MAX * sizeof(*merge_tmp));
	make_labels();
}

static void check_sorted(const char *who, const int *a, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (a[i - 1] > a[i]) {
			fprintf(stderr, "sizework: %s(%zu) did not sort\n", who, n);
			failed = 1;
			return;
		}
}

static void maybe_exit(size_t n)
{
	if (deadline > 0 && now() >= deadline)
		exit_inside(n);
}

/* One round: every routine, every size, CALLS calls each. */
static void round_once(void)
{
	size_t n;

	for (int i = 0; i < NSIZES; i++)
		for (int c = 0; c < CALLS; c++) {
			n = sizes[F_LINEAR][i];
			sink += (uint64_t)linear_scan(sorted, n);
			BARRIER();
			saw(F_LINEAR, n);
		}
	maybe_exit(1);

	for (int i = 0; i < NSIZES; i++)
		for (int c = 0; c < CALLS; c++) {
			n = sizes[F_INSERTION][i];
			for (size_t k = 0; k < n; k++)
				work[k] = (int)(n - k);	/* reversed: the worst case */
			insertion_sort(work, n);
			BARRIER();
			saw(F_INSERTION, n);
			if (c == 0)
				check_sorted("insertion_sort", work, n);
		}
	maybe_exit(2);

	for (int i = 0; i < NSIZES; i++)
		for (int c = 0; c < CALLS; c++) {
			struct vec v = { work, sizes[F_MERGE][i] };

			memcpy(work, randoms + c, v.len * sizeof(*work));
			merge_sort(&v);
			BARRIER();
			saw(F_MERGE, v.len);
			if (c == 0)
				check_sorted("merge_sort", work, v.len);
		}
	maybe_exit(3);

	for (int i = 0; i < NSIZES; i++)
		for (int c = 0; c < CALLS; c++) {
			n = sizes[F_BSEARCH][i];
			int key = 2 * (int)(next_rand() % n);

			if (binary_search(sorted, n, key) != key / 2) {
				fprintf(stderr, "sizework: binary_search(%zu, %d) is wrong\n", n, key);
				failed = 1;
			}
			BARRIER();
			saw(F_BSEARCH, n);
		}
	maybe_exit(4);

	for (int fixed = 0; fixed < 2; fixed++) {
		int f = fixed ? F_TOLOWER_FIXED : F_TOLOWER;

		for (int i = 0; i < NSIZES; i++)
			for (int c = 0; c < CALLS; c++) {
				const tagprof_labels *prev;

				n = sizes[f][i];
				for (size_t k = 0; k < n; k++)
					str[k] = (char)('A' + k % 26);
				str[n] = 0;
				prev = tagprof_attach(len_labels[i]);
				if (fixed)
					str_tolower_fixed(str);
				else
					str_tolower(str);
				BARRIER();
				tagprof_attach(prev);
				saw(f, n);
				if (str[0] != 'a' || str[n - 1] != (char)('a' + (n - 1) % 26)) {
					fprintf(stderr, "sizework: %s(%zu) is wrong\n", funcs[f].name, n);
					failed = 1;
				}
			}
		maybe_exit(5);
	}

	for (int i = 0; i < NSIZES; i++)
		for (int c = 0; c < REC_CALLS; c++) {
			n = sizes[F_REC][i];
			long want = (long)n * (long)(n - 1);	/* sum of 2i */

			if (rec_sum(sorted, n) != want) {
				fprintf(stderr, "sizework: rec_sum(%zu) is wrong\n", n);
				failed = 1;
			}
			BARRIER();
			/* the calls rec_sum made, as it makes them */
			size_t stack[64], sp = 0;

			stack[sp++] = n;
			while (sp) {
				size_t m = stack[--sp];

				saw(F_REC, m);
				if (m > LEAF) {
					stack[sp++] = m - m / 2;
					stack[sp++] = m / 2;
				}
			}
		}
	maybe_exit(6);
}

/* One call of each routine with size 0, before the first round: the first
 * probe hit in a process costs some 100 us more than the others (the
 * kernel maps the uprobes' trampoline page and sets up the thread's
 * uprobe state), and a size-0 tuple is left out of the fits (its size has
 * no logarithm). Counted in the truth like every call. */
static void warm_up(void)
{
	static char empty[1];
	struct vec v = { work, 0 };
	const tagprof_labels *prev;

	sink += (uint64_t)linear_scan(sorted, 0);
	saw(F_LINEAR, 0);
	insertion_sort(work, 0);
	saw(F_INSERTION, 0);
	merge_sort(&v);
	saw(F_MERGE, 0);
	sink += (uint64_t)binary_search(sorted, 0, 0);
	saw(F_BSEARCH, 0);
	prev = tagprof_attach(len0_label);
	str_tolower(empty);
	saw(F_TOLOWER, 0);
	str_tolower_fixed(empty);
	saw(F_TOLOWER_FIXED, 0);
	tagprof_attach(prev);
	sink += (uint64_t)rec_sum(sorted, 0);
	saw(F_REC, 0);
	BARRIER();
}

static void print_truth(unsigned long rounds, double secs)
{
	for (int f = 0; f < NFUNCS; f++) {
		size_t lo = SIZE_MAX, lo1 = SIZE_MAX, hi = 0;

		for (size_t i = 0; i < truth[f].nseen; i++) {
			size_t n = truth[f].seen[i];

			if (n < lo)
				lo = n;
			if (n && n < lo1)
				lo1 = n;
			if (n > hi)
				hi = n;
		}
		fprintf(stderr, "sizework: truth %s calls=%llu sizes=%zu%s min=%zu min1=%zu "
			"max=%zu spec=%s class=%s\n", funcs[f].name, truth[f].calls,
			truth[f].nseen, truth[f].nseen == SEEN_MAX ? "+" : "", lo, lo1, hi,
			funcs[f].spec, funcs[f].class);
	}
	fprintf(stderr, "sizework: done rounds=%lu seconds=%.3f\n", rounds, secs);
}

/* Turns of spin_inlined() that take about 1 us here. */
static unsigned calibrate(void)
{
	unsigned iters = 1000;

	for (;;) {
		double t0 = now();
		uint64_t x = 1;

		for (int k = 0; k < 100; k++)
			x = spin_inlined(x, iters);
		sink += x;
		double us = (now() - t0) * 1e6 / 100;
		if (us >= 50 || iters >= (1u << 30))
			return (unsigned)((double)iters / us + 0.5) ?: 1;
		iters *= 4;
	}
}

static int bench(unsigned long n, unsigned iters)
{
	double t0, t1;

	if (!iters)
		iters = calibrate();
	for (unsigned long i = 0; i < n / 100 + 1; i++)	/* warm up */
		sink += work_1us(iters);
	t0 = now();
	for (unsigned long i = 0; i < n; i++) {
		sink += work_1us(iters);
		BARRIER();
	}
	t1 = now();
	printf("ns_per_call=%.1f iters=%u calls=%lu\n", (t1 - t0) * 1e9 / (double)n, iters, n);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: sizework all [ROUNDS] | loop SECONDS | exit-mid [SECONDS] |"
		" bench N [ITERS]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	unsigned long rounds = 0, want_rounds = 1;
	double secs = 0, t0;
	char *end;

	if (!strcmp(mode, "bench")) {
		unsigned long n, iters = 0;

		if (argc < 3 || argc > 4)
			return usage();
		n = strtoul(argv[2], &end, 10);
		if (*end || !n)
			return usage();
		if (argc > 3) {
			iters = strtoul(argv[3], &end, 10);
			if (*end || !iters || iters > (1ul << 30))
				return usage();
		}
		return bench(n, (unsigned)iters);
	}
	if (!strcmp(mode, "all")) {
		if (argc > 3)
			return usage();
		if (argc > 2) {
			want_rounds = strtoul(argv[2], &end, 10);
			if (*end || !want_rounds)
				return usage();
		}
	} else if (!strcmp(mode, "loop") || !strcmp(mode, "exit-mid")) {
		if (argc > 3 || (argc < 3 && !strcmp(mode, "loop")))
			return usage();
		secs = 1;
		if (argc > 2) {
			secs = strtod(argv[2], &end);
			if (*end || !(secs > 0) || secs > 86400)
				return usage();
		}
	} else {
		return usage();
	}

	setup();
	warm_up();
	t0 = now();
	if (!strcmp(mode, "exit-mid"))
		deadline = t0 + secs;
	do {
		round_once();
		rounds++;
	} while (secs > 0 ? now() - t0 < secs || deadline > 0 : rounds < want_rounds);
	print_truth(rounds, now() - t0);
	return failed;
}
