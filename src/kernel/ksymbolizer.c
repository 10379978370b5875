// SPDX-License-Identifier: BSD-2-Clause
/* Kernel symbol names, asked of the kernel where it can answer.
 *
 * bpf/ksym.bpf.c formats a batch of addresses with bpf_snprintf("%ps"),
 * i.e. the kernel's own kallsyms lookup: a few microseconds per batch, no
 * memory held here, and symbols of modules and BPF programs loaded since
 * start are found too. Reading /proc/kallsyms instead costs ~20 ms of CPU
 * (the kernel formats 100k+ lines) and ~5 MB to keep; it is the fallback
 * where the program does not load (kernel before 5.14, BPF syscall
 * programs or bpf_snprintf unavailable), and is read on first use only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel/kallsyms.h"
#include "ksym.skel.h"
#include "kernel/ksymbolizer.h"

struct ksymbolizer {
	struct ksym_bpf *skel;		/* NULL: not loaded, or failed */
	struct kallsyms *ks;		/* fallback, loaded on first use */
	bool use_bpf;			/* load the program on first use */
	bool kallsyms_tried;
	struct ksymbolizer_stats stats;
	char names[KSYMBOLIZER_BATCH][KSYMBOLIZER_NAME_LEN];
};

struct ksymbolizer *ksymbolizer__new(bool use_bpf)
{
	struct ksymbolizer *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	/* The program is loaded at the first lookup, not here: loading it
	 * costs a few ms of CPU, and a start should sample as soon as it
	 * can (many profiles have no kernel frame at all). */
	k->use_bpf = use_bpf;
	return k;
}

/* The BPF program, loaded once; a failure counts and leaves the file. */
static struct ksym_bpf *program(struct ksymbolizer *k)
{
	if (k->use_bpf) {
		k->use_bpf = false;
		k->skel = ksym_bpf__open_and_load();
		if (!k->skel)
			k->stats.bpf_failed++;
	}
	return k->skel;
}

void ksymbolizer__free(struct ksymbolizer *k)
{
	if (!k)
		return;
	ksym_bpf__destroy(k->skel);
	kallsyms__free(k->ks);
	free(k);
}

/* The fallback, loaded once; a failure is said once and then counted. */
static struct kallsyms *fallback(struct ksymbolizer *k)
{
	if (!k->kallsyms_tried) {
		k->kallsyms_tried = true;
		k->ks = kallsyms__load(NULL);
		if (!k->ks)
			fprintf(stderr, "tagprof: warning: kernel symbols "
				"unavailable (/proc/kallsyms: %s)\n",
				strerror(errno));
	}
	return k->ks;
}

/* Copies one name the kernel formatted: "0x..." means no symbol; a
 * module's symbol ends in " [module]", which is cut so names match the
 * kallsyms fallback's. The kernel NUL-terminates; that is not assumed. */
static const char *take_name(struct ksymbolizer *k, size_t i, const char *raw,
			     size_t len)
{
	char *out = k->names[i], *sp;
	size_t n = strnlen(raw, len < KSYMBOLIZER_NAME_LEN ? len : KSYMBOLIZER_NAME_LEN);

	if (n == KSYMBOLIZER_NAME_LEN)
		n--;
	memcpy(out, raw, n);
	out[n] = '\0';
	if (!n || strncmp(out, "0x", 2) == 0)
		return NULL;
	sp = strchr(out, ' ');
	if (sp)
		*sp = '\0';
	return out;
}

/* One batch through the BPF program; false if it could not run. */
static bool bpf_lookup(struct ksymbolizer *k, const uint64_t *addrs, size_t n,
		       const char **names)
{
	struct ksym_bpf__bss *bss = k->skel->bss;
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	size_t i;

	for (i = 0; i < n; i++)
		bss->addrs[i] = addrs[i];
	bss->count = n;
	if (bpf_prog_test_run_opts(bpf_program__fd(k->skel->progs.resolve),
				   &opts)) {
		k->stats.bpf_failed++;
		return false;
	}
	k->stats.bpf_batches++;
	for (i = 0; i < n; i++)
		names[i] = take_name(k, i, bss->names[i],
				     sizeof(bss->names[i]));
	return true;
}

void ksymbolizer__lookup(struct ksymbolizer *k, const uint64_t *addrs, size_t n,
		   const char **names)
{
	struct kallsyms *ks;
	size_t i;

	_Static_assert(KSYMBOLIZER_BATCH <=
		       sizeof(((struct ksym_bpf__bss *)0)->addrs) / sizeof(uint64_t),
		       "batch larger than the BPF program's");
	if (n > KSYMBOLIZER_BATCH)
		n = KSYMBOLIZER_BATCH;
	if (program(k) && bpf_lookup(k, addrs, n, names))
		goto count;
	if (k->skel) {
		/* It loaded but cannot run: use the file from now on. */
		ksym_bpf__destroy(k->skel);
		k->skel = NULL;
	}
	ks = fallback(k);
	for (i = 0; i < n; i++)
		names[i] = ks ? kallsyms__lookup(ks, addrs[i], NULL, NULL) :
				NULL;
count:
	for (i = 0; i < n; i++)
		k->stats.unnamed += !names[i];
	k->stats.lookups += n;
}

void ksymbolizer__prepare(struct ksymbolizer *k)
{
	/* Loading needs CAP_BPF and CAP_PERFMON, the file CAP_SYSLOG (the
	 * kernel decides what it shows by the opener's capabilities): both
	 * are gone after start-up. */
	if (program(k))
		return;
	fallback(k);
}

bool ksymbolizer__works(struct ksymbolizer *k)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	if (!k->skel)
		return true;	/* the file, read already */
	k->skel->bss->count = 0;
	return !bpf_prog_test_run_opts(bpf_program__fd(k->skel->progs.resolve),
				       &opts);
}

const char *ksymbolizer__source(const struct ksymbolizer *k)
{
	if (k->skel)
		return "kernel (BPF %ps)";
	if (k->use_bpf)
		return "kernel (BPF %ps, not loaded yet)";
	if (k->ks)
		return "/proc/kallsyms";
	return k->kallsyms_tried ? "none" : "/proc/kallsyms (not read yet)";
}

const struct ksymbolizer_stats *ksymbolizer__stats(const struct ksymbolizer *k)
{
	return &k->stats;
}
