/* Kernel symbol names asked of the kernel (bpf/ksym.bpf.c) checked against
 * /proc/kallsyms: hundreds of vmlinux text symbols spread over the whole
 * kernel, aliases, batch limits, addresses no symbol covers, the
 * /proc/kallsyms fallback, and a sample's kernel frames resolved in the
 * order they were taken. */
#include "check.h"
#include "kernel/ksymbolizer.h"
#include "sym/loctab.h"
#include "sym/symbolizer.h"
#include "util/privs.h"
#include <linux/capability.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define PICK 512	/* symbols checked, spread evenly */

struct ksym_line {
	uint64_t addr;
	char name[128];
};

static struct ksym_line *syms;
static size_t nsyms;

static int cmp_addr(const void *a, const void *b)
{
	const struct ksym_line *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* vmlinux text symbols (t, T, w, W) of /proc/kallsyms, sorted. */
static int read_kallsyms(void)
{
	char line[1024], type, name[512];
	unsigned long long a;
	size_t cap = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %511s", &a, &type, name) != 3 ||
		    !strchr("tTwW", type) || strchr(line, '[') || !a ||
		    strlen(name) >= sizeof(syms->name))
			continue;
		if (nsyms == cap) {
			cap = cap ? cap * 2 : 4096;
			syms = realloc(syms, cap * sizeof(*syms));
			if (!syms)
				break;
		}
		syms[nsyms].addr = a;
		strcpy(syms[nsyms++].name, name);
	}
	fclose(f);
	if (!syms)
		return -1;
	qsort(syms, nsyms, sizeof(*syms), cmp_addr);
	return 0;
}

/* Whether name is one of the symbols at the address of syms[i]. */
static bool alias_of(size_t i, const char *name)
{
	size_t j = i;

	while (j > 0 && syms[j - 1].addr == syms[i].addr)
		j--;
	for (; j < nsyms && syms[j].addr == syms[i].addr; j++)
		if (!strcmp(syms[j].name, name))
			return true;
	return false;
}

/* Index of the next symbol at a higher address than syms[i], or nsyms. */
static size_t next_addr(size_t i)
{
	size_t j = i;

	while (j < nsyms && syms[j].addr == syms[i].addr)
		j++;
	return j;
}

/* Looks up PICK symbols (one byte into each) in batches of batch and
 * checks each answer against /proc/kallsyms; returns symbols checked. */
static size_t check_spread(struct ksymbolizer *k, size_t batch, int *bad)
{
	uint64_t addrs[KSYMBOLIZER_BATCH];
	size_t idx[KSYMBOLIZER_BATCH], n = 0, checked = 0, i, j, next;
	const char *names[KSYMBOLIZER_BATCH];

	for (i = 0; i < nsyms; i += nsyms / PICK + 1) {
		next = next_addr(i);
		/* The last text symbol's extent is not known. */
		if (next >= nsyms || syms[next].addr < syms[i].addr + 2)
			continue;
		idx[n] = i;
		addrs[n++] = syms[i].addr + 1;
		if (n < batch && i + nsyms / PICK + 1 < nsyms)
			continue;
		ksymbolizer__lookup(k, addrs, n, names);
		for (j = 0; j < n; j++, checked++) {
			if (names[j] && alias_of(idx[j], names[j]))
				continue;
			fprintf(stderr, "  %llx: got %s, want %s\n",
				(unsigned long long)addrs[j],
				names[j] ? names[j] : "(none)",
				syms[idx[j]].name);
			(*bad)++;
		}
		n = 0;
	}
	return checked;
}

static void test_names_match_kallsyms(void)
{
	struct ksymbolizer *k = ksymbolizer__new(true);
	int bad = 0;
	size_t checked;

	CHECK(k);
	/* Loaded at the first lookup, not at the start. */
	CHECK(!strcmp(ksymbolizer__source(k), "kernel (BPF %ps, not loaded yet)"));
	checked = check_spread(k, KSYMBOLIZER_BATCH, &bad);
	fprintf(stderr, "  %zu of %zu symbols checked, %d wrong\n", checked,
		nsyms, bad);
	CHECK(checked >= PICK / 2);
	CHECK(bad == 0);
	CHECK(ksymbolizer__stats(k)->lookups == checked);
	CHECK(ksymbolizer__stats(k)->bpf_batches >= checked / KSYMBOLIZER_BATCH);
	CHECK(ksymbolizer__stats(k)->bpf_failed == 0);
	CHECK(ksymbolizer__stats(k)->unnamed == 0);
	/* Still answered by the kernel, never by the file. */
	CHECK(!strcmp(ksymbolizer__source(k), "kernel (BPF %ps)"));
	ksymbolizer__free(k);
}

/* Loaded before the agent drops CAP_BPF and CAP_PERFMON, and still run
 * afterwards: a lookup with both out of the effective set. */
static void test_prepare_then_drop(void)
{
	struct ksymbolizer *k = ksymbolizer__new(true);
	struct privs saved, p;
	int bad = 0;

	CHECK(k);
	ksymbolizer__prepare(k);
	CHECK(!strcmp(ksymbolizer__source(k), "kernel (BPF %ps)"));
	CHECK(privs__get(&saved) == 0);
	p = saved;
	p.eff &= ~(PRIV(CAP_BPF) | PRIV(CAP_PERFMON) | PRIV(CAP_SYS_ADMIN) |
		   PRIV(CAP_SYSLOG));
	CHECK(privs__set(&p) == 0);
	if (ksymbolizer__works(k)) {
		CHECK(check_spread(k, KSYMBOLIZER_BATCH, &bad) >= PICK / 2);
		CHECK(bad == 0);
	} else {
		/* Kernels before 6.5 with unprivileged BPF disabled: the
		 * agent's probe sees the same and keeps CAP_BPF. */
		fprintf(stderr, "  the program does not run without CAP_BPF "
			"here\n");
	}
	CHECK(privs__set(&saved) == 0);
	CHECK(!strcmp(ksymbolizer__source(k), "kernel (BPF %ps)"));
	ksymbolizer__free(k);
}

static void test_odd_batches(void)
{
	struct ksymbolizer *k = ksymbolizer__new(true);
	int bad = 0;

	CHECK(k);
	CHECK(check_spread(k, 1, &bad) > 0);
	CHECK(check_spread(k, 7, &bad) > 0);
	CHECK(bad == 0);
	ksymbolizer__free(k);
}

/* More than a batch is cut to a batch; nothing past it is written. */
static void test_batch_limit(void)
{
	uint64_t addrs[KSYMBOLIZER_BATCH + 1];
	const char *names[KSYMBOLIZER_BATCH + 1];
	struct ksymbolizer *k = ksymbolizer__new(true);
	size_t i;

	CHECK(k);
	for (i = 0; i <= KSYMBOLIZER_BATCH; i++)
		addrs[i] = syms[nsyms / 2].addr + 1;
	names[KSYMBOLIZER_BATCH] = "untouched";
	ksymbolizer__lookup(k, addrs, KSYMBOLIZER_BATCH + 1, names);
	CHECK(!strcmp(names[KSYMBOLIZER_BATCH], "untouched"));
	for (i = 0; i < KSYMBOLIZER_BATCH; i++)
		CHECK(names[i] && alias_of(nsyms / 2, names[i]));
	CHECK(ksymbolizer__stats(k)->lookups == KSYMBOLIZER_BATCH);
	ksymbolizer__free(k);
}

/* User-space, non-canonical and unmapped kernel addresses have no name,
 * and each is counted. */
static void test_no_symbol(void)
{
	const uint64_t addrs[] = { 0, 0x401000, 0x7fffffffe000,
				   0xffffffffffff0000ull };
	const size_t n = sizeof(addrs) / sizeof(addrs[0]);
	const char *names[sizeof(addrs) / sizeof(addrs[0])];
	struct ksymbolizer *k = ksymbolizer__new(true);

	CHECK(k);
	ksymbolizer__lookup(k, addrs, n, names);
	for (size_t i = 0; i < n; i++)
		CHECK(names[i] == NULL);
	CHECK(ksymbolizer__stats(k)->unnamed == n);
	ksymbolizer__free(k);
}

/* Without the BPF program, /proc/kallsyms is read on the first lookup
 * and gives the same names. */
static void test_kallsyms_fallback(void)
{
	struct ksymbolizer *k = ksymbolizer__new(false);
	int bad = 0;

	CHECK(k);
	CHECK(!strcmp(ksymbolizer__source(k), "/proc/kallsyms (not read yet)"));
	CHECK(check_spread(k, KSYMBOLIZER_BATCH, &bad) >= PICK / 2);
	CHECK(bad == 0);
	CHECK(!strcmp(ksymbolizer__source(k), "/proc/kallsyms"));
	CHECK(ksymbolizer__stats(k)->bpf_batches == 0);
	ksymbolizer__free(k);
}

/* The name of the function of a location's first line. */
static const char *fn_name(const struct loctab *lt, uint32_t loc)
{
	const struct loctab_location *l = loctab__location_at(lt, loc);

	if (l->nlines < 1)
		return NULL;
	return loctab__function_at(lt, loctab__lines(lt, l)[0].function)->name;
}

/* A sample of four kernel frames (leaf first, as BPF takes them) over two
 * user frames, symbolized the way the agent does: the sample's locations
 * are the kernel frames leaf first, then the user frames, leaf first.
 * The kernel leaf is where the CPU was; the frames above it are return
 * addresses, looked up one byte back. */
static void test_stack_order(void)
{
	const uint64_t user[2] = { 0x401234, 0x405678 };
	uint64_t kern[4], want[6];
	uint32_t locs[6];
	size_t idx[4], n = 0, i, got;
	struct ksymbolizer *k = ksymbolizer__new(false);
	struct loctab *lt = loctab__new();
	struct symbolizer *z = lt ? symbolizer__new(NULL, k, lt) : NULL;

	CHECK(k && lt && z);
	/* Four symbols with room for an address one byte in, far apart. */
	for (i = nsyms / 8; i < nsyms && n < 4; i += nsyms / 5) {
		size_t next = next_addr(i);

		if (next >= nsyms || syms[next].addr < syms[i].addr + 2)
			continue;
		idx[n] = i;
		kern[n] = syms[i].addr + 1;
		want[n] = n ? kern[n] - 1 : kern[n];
		n++;
	}
	CHECK(n == 4);
	want[4] = user[0] - 1;	/* after a syscall, a return address too */
	want[5] = user[1] - 1;
	got = symbolizer__stack(z, NULL, user, 2, kern, 4, locs);
	CHECK(got == 6);
	for (i = 0; i < 6; i++) {
		const struct loctab_location *l = locs[i] &&
			locs[i] <= loctab__nlocations(lt) ?
			loctab__location_at(lt, locs[i]) : NULL;
		/* The user frames are unmapped: no lines, no name. */
		const char *name = l && l->nlines ? fn_name(lt, locs[i]) :
				   NULL;
		bool ok = l && l->address == want[i] &&
			  (i < 4 ? name && alias_of(idx[i], name) : !name);

		if (!ok)
			fprintf(stderr, "  frame %zu: %#llx %s, want %#llx %s\n",
				i, l ? (unsigned long long)l->address : 0ull,
				name ? name : "(none)",
				(unsigned long long)want[i],
				i < 4 ? syms[idx[i]].name : "(none)");
		CHECK(ok);
	}
	symbolizer__free(z);
	loctab__free(lt);
	ksymbolizer__free(k);
}

/* BPF syscall programs (what the lookup runs as) came in Linux 5.14. */
static bool kernel_before_5_14(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major < 5 || (major == 5 && minor < 14);
}

int main(void)
{
	const char *why = NULL;

	if (geteuid() != 0)
		why = "not root";
	else if (read_kallsyms() || nsyms < 1000)
		why = "/proc/kallsyms unreadable or addresses hidden";
	if (why) {
		SKIP(test_names_match_kallsyms, why);
		SKIP(test_kallsyms_fallback, why);
		SKIP(test_stack_order, why);
		CHECK_EXIT();
	}
	if (kernel_before_5_14()) {
		why = "kernel before 5.14: no BPF syscall programs";
		SKIP(test_names_match_kallsyms, why);
		SKIP(test_odd_batches, why);
		SKIP(test_batch_limit, why);
		SKIP(test_no_symbol, why);
	} else {
		RUN(test_names_match_kallsyms);
		RUN(test_prepare_then_drop);
		RUN(test_odd_batches);
		RUN(test_batch_limit);
		RUN(test_no_symbol);
	}
	RUN(test_kallsyms_fallback);
	RUN(test_stack_order);
	free(syms);
	CHECK_EXIT();
}
