// SPDX-License-Identifier: BSD-2-Clause
/* User stacks: frame pointers with frameless leaves repaired (fpstack.h),
 * or CFI.
 *
 * CFI. A sample with a stack copy is unwound from the copied registers,
 * with the rules cached per binary (cfistack.h) or, where they do not
 * suffice, by libdwfl (dwflspace.h).
 *
 * `auto`. Which processes get their stacks copied on every sample is the
 * policy's (autopolicy.h), fed with what CFI found in each copy. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libelf.h>

#include "proc/proctable.h"
#include "sample_event.h"
#include "unwind/autopolicy.h"
#include "unwind/bincache.h"
#include "unwind/cfistack.h"
#include "unwind/cfitable.h"
#include "unwind/dwflspace.h"
#include "unwind/fpstack.h"
#include "unwind/unwind.h"
#include "util/clock.h"
#include "util/hashmap.h"

/* One process. */
struct uwproc {
	struct unwinder *u;
	uint32_t pid;
	uint64_t start_ns;
	struct automark mark;		/* auto */
	uint64_t cfi_maps_ver;		/* the maps the kernel's CFI walk
					   was given (unwinder__cfi_maps) */
	uint64_t cfi_sent_ns;		/* when (CLOCK_MONOTONIC) */
	bool cfi_walked;		/* counted in kcfi_procs */
	bool cfi_renewing;		/* asked for tables a walk reached */
	struct dwflspace space;		/* CFI by libdwfl */
};

struct unwinder {
	struct proctable *procs;
	int mode;
	int verbose;
	bool verify;			/* TAGPROF_UNWIND_VERIFY: rules vs dwfl */
	struct hashmap *procs_by_pid;	/* pid -> struct uwproc * */
	struct bincache *bins;
	struct dwflspaces spaces;
	struct autopolicy *policy;	/* auto */
	uint32_t self;			/* our own pid: never marked (auto) */
	struct unwind_stats stats;
};

/* ---- CFI ---- */

/* The CFI unwind of the sample's stack copy into out; 0 if none. With
 * TAGPROF_UNWIND_VERIFY set, libdwfl unwinds every stack as well and
 * stacks where the two differ are counted. */
static size_t cfi_stack(struct unwinder *u, struct uwproc *up, struct proc *p,
			const struct unwind_sample *s, uint64_t *out)
{
	uint64_t fast[TP_MAX_FRAMES];
	size_t nfast, n;

	/* A pc outside the maps read so far: re-read them (rate-limited). */
	proctable__find_map(u->procs, p, s->regs->ip, s->time_ns);
	nfast = cfistack__walk(u->bins, p, s, fast);
	if (nfast) {
		u->stats.cfi_rules++;
		if (!u->verify) {
			memcpy(out, fast, nfast * sizeof(*out));
			return nfast;
		}
	}
	n = dwflspace__unwind(&up->space, p, s, out);
	if (nfast && (n != nfast || memcmp(out, fast, n * sizeof(*out)))) {
		u->stats.cfi_rules_differ++;
		if (u->verbose)
			fprintf(stderr, "tagprof: unwind: pid %u: cached "
				"rules gave %zu frames, libdwfl %zu\n",
				s->pid, nfast, n);
	}
	return n;
}

/* ---- processes ---- */

size_t unwinder__take_marks(struct unwinder *u, struct unwind_mark *out,
			    size_t max)
{
	return autopolicy__take(u->policy, out, max);
}

/* pid's state, or NULL if the unwinder has none. */
static struct uwproc *uwproc_of(const struct unwinder *u, uint32_t pid)
{
	uint64_t v;

	return hashmap__get(u->procs_by_pid, &pid, sizeof(pid), &v) ?
		       (struct uwproc *)(uintptr_t)v : NULL;
}

void unwinder__mark_refused(struct unwinder *u, uint32_t pid, bool copy)
{
	struct uwproc *up = uwproc_of(u, pid);

	if (up)
		autopolicy__refused(u->policy, &up->mark, copy);
}

static void uwproc_free(void *ptr)
{
	struct uwproc *up = ptr;

	if (!up)
		return;
	dwflspace__drop(&up->space);
	autopolicy__forget(up->u->policy, up->pid, &up->mark);
	free(up);
}

static struct uwproc *uwproc_get(struct unwinder *u, const struct proc *p)
{
	uint32_t pid = p->pid;
	struct uwproc *up;
	uint64_t v;

	if (hashmap__get(u->procs_by_pid, &pid, sizeof(pid), &v)) {
		up = (struct uwproc *)(uintptr_t)v;
		if (up->start_ns == p->start_ns)
			return up;
		unwinder__forget(u, pid);	/* the pid was reused */
	}
	up = calloc(1, sizeof(*up));
	if (!up)
		return NULL;
	up->u = u;
	up->pid = pid;
	up->start_ns = p->start_ns;
	up->space.all = &u->spaces;
	up->space.pid = pid;
	if (hashmap__put(u->procs_by_pid, &pid, sizeof(pid), (uintptr_t)up)) {
		free(up);
		return NULL;
	}
	return up;
}

/* -v: where the kernel's walk and libdwfl's part. */
static void say_difference(const struct unwind_sample *s, const uint64_t *cfi,
			   size_t n)
{
	size_t i = 0;

	while (i < n && i < s->nfp && cfi[i] == s->fp[i])
		i++;
	fprintf(stderr, "tagprof: unwind: pid %u: kernel CFI gave %zu frames, "
		"libdwfl %zu; frame %zu: %#" PRIx64 " against %#" PRIx64 "\n",
		s->pid, s->nfp, n, i, i < s->nfp ? s->fp[i] : 0,
		i < n ? cfi[i] : 0);
}

/* Marks the binaries the stack passes through as wanted in the kernel's
 * CFI tables. Returns whether one was not before. */
static bool want_tables(struct unwinder *u, struct proc *p,
			const uint64_t *pcs, size_t n)
{
	const struct proc_map *m, *last = NULL;
	struct bincache_entry *b;
	bool more = false;

	for (size_t i = 0; i < n; i++) {
		/* every frame after the leaf is a return address */
		m = proctable__map_at(p, i ? pcs[i] - 1 : pcs[i]);
		if (!m || m == last || !m->bin)
			continue;
		last = m;
		b = bincache__get(u->bins, p->pid, m);
		if (b && b->cfi && !b->cfi_wanted) {
			b->cfi_wanted = true;
			more = true;
		}
	}
	return more;
}

/* The CFI unwind of the sample's stack copy into out, counted: 0 when it
 * finds no caller. */
static size_t copy_stack(struct unwinder *u, struct uwproc *up,
			 struct proc *p, const struct unwind_sample *s,
			 uint64_t *out)
{
	size_t n;

	u->stats.copies++;
	n = up ? cfi_stack(u, up, p, s, out) : 0;
	if (n <= 1) {
		u->stats.cfi_failed++;
		return 0;
	}
	return n;
}

/* A walk that reached a mapping whose table was not built yet: the copy
 * that came with it is unwound here, and the binaries its stack passes
 * through are put in the kernel (the mark is renewed), once per put: the
 * samples taken before it went in come with the same flag. A copy came
 * (kernel_cfi_stack checks). */
static size_t later_stack(struct unwinder *u, struct uwproc *up,
			  struct proc *p, const struct unwind_sample *s,
			  uint64_t *out)
{
	size_t n = copy_stack(u, up, p, s, out);

	if (!n) {
		memcpy(out, s->fp, s->nfp * sizeof(*out));
		return s->nfp;
	}
	u->stats.kcfi_later++;
	if ((want_tables(u, p, out, n) || s->time_ns >= up->cfi_sent_ns) &&
	    !up->cfi_renewing) {
		up->cfi_renewing = true;
		autopolicy__renew(u->policy, up->pid, &up->mark);
	}
	return n;
}

/* A stack the kernel walked by CFI: as it came. Its process's mappings
 * changed since the walk was given them: the mark is renewed, so that the
 * new ones reach the kernel. A probe (a copy came too) is unwound by
 * libdwfl as well, which checks the kernel's walk: libdwfl's stack must be
 * the kernel's, or where the copy ended first, the start of it. */
static size_t kernel_cfi_stack(struct unwinder *u, struct proc *p,
			       const struct unwind_sample *s, uint64_t *out)
{
	struct uwproc *up = p && !p->stale ? uwproc_get(u, p) : NULL;
	uint64_t cfi[TP_MAX_FRAMES];
	bool stale;
	size_t n;

	memcpy(out, s->fp, s->nfp * sizeof(*out));
	u->stats.kcfi_stacks++;
	if (!up)
		return s->nfp;
	/* A walk that ended at a pc in none of the mappings it was given
	 * (a library loaded since): the maps are read again (rate-bounded),
	 * and the new ones go to the kernel at once. */
	stale = up->cfi_maps_ver != p->maps_ver ||
		s->time_ns < up->cfi_sent_ns;	/* walked by older ones */
	if (s->nfp && !proctable__map_at(p, s->fp[s->nfp - 1])) {
		proctable__find_map(u->procs, p, s->fp[s->nfp - 1], s->time_ns);
		stale = true;
	}
	if (up->cfi_maps_ver != p->maps_ver)
		autopolicy__renew(u->policy, up->pid, &up->mark);
	if (!s->regs || !p->nmaps)
		return s->nfp;
	if (s->later)
		return later_stack(u, up, p, s, out);
	u->stats.copies++;
	u->stats.probes += s->probe;
	n = dwflspace__unwind(&up->space, p, s, cfi);
	u->stats.kcfi_checked++;
	if (n > s->nfp || memcmp(cfi, s->fp, n * sizeof(*cfi))) {
		if (stale) {	/* the kernel did not have the mapping yet */
			u->stats.kcfi_stale++;
			return s->nfp;
		}
		u->stats.kcfi_differs++;
		if (u->verbose)
			say_difference(s, cfi, n);
	}
	return s->nfp;
}

long unwinder__cfi_maps(struct unwinder *u, uint32_t pid, uint64_t *start_ns,
			struct unwind_cfi_map *out, size_t max)
{
	struct uwproc *up = uwproc_of(u, pid);
	struct proc *p;
	size_t n = 0;

	if (!up)
		return -1;
	p = proctable__get(u->procs, pid, up->start_ns, NULL);
	if (!p || p->stale || !p->nmaps || p->nmaps > max)
		return -1;
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct proc_map *m = &p->maps[i];
		struct bincache_entry *b = m->bin ?
			bincache__get(u->bins, pid, m) : NULL;
		struct unwind_cfi_map *o = &out[n++];

		*o = (struct unwind_cfi_map){ .start = m->start, .end = m->end,
					      .shared = m->bin ? m->bin->refs : 0,
					      .exe = m->exe };
		if (b && b->cfi &&
		    bincache__map_bias(b, m->start, m->offset, &o->bias)) {
			o->bin = b;
			o->key[0] = b->dev;
			o->key[1] = b->ino;
			o->wanted = m->exe || b->cfi_wanted;
		}
	}
	up->cfi_maps_ver = p->maps_ver;
	up->cfi_sent_ns = clock__mono_ns();
	*start_ns = up->start_ns;
	return (long)n;
}

int unwinder__cfi_table(struct unwinder *u, struct bincache_entry *b,
			struct cfitable *t)
{
	int err = cfitable__build(b, TP_CFI_ROWS, t);

	if (err)
		u->stats.kcfi_no_table++;
	else
		u->stats.kcfi_tables++;
	return err;
}

void unwinder__cfi_result(struct unwinder *u, uint32_t pid, bool in_force)
{
	struct uwproc *up = uwproc_of(u, pid);

	/* The tables went in one by one, the walk on from the first: a
	 * stack walked before the last may differ from libdwfl's for want
	 * of one, which is no difference (kernel_cfi_stack). */
	if (in_force && up)
		up->cfi_sent_ns = clock__mono_ns();
	if (up)
		up->cfi_renewing = false;
	/* A renewal (new mappings) is no new process. */
	if (in_force && up && up->cfi_walked)
		return;
	if (up)
		up->cfi_walked = in_force;
	if (in_force)
		u->stats.kcfi_procs++;
	else
		u->stats.kcfi_refused++;
	if (u->verbose)
		fprintf(stderr, "tagprof: unwind: pid %u: %s\n", pid,
			in_force ? "walked by CFI tables in the kernel" :
				   "its CFI tables could not be put in the "
				   "kernel: stacks copied");
}

size_t unwinder__user_stack(struct unwinder *u, struct proc *p,
			    const struct unwind_sample *s, uint64_t *out)
{
	uint64_t cfi[TP_MAX_FRAMES];
	size_t nfp, ncfi;
	struct uwproc *up;
	bool helps;

	if (s->cfi)
		return kernel_cfi_stack(u, p, s, out);
	nfp = fpstack__walk(u->procs, u->bins, &u->stats, p, s, out);
	if (!s->regs || !p || p->stale || !p->nmaps)
		return nfp;
	if (s->probe)
		u->stats.probes++;
	/* The agent's own stacks keep their frame-pointer chain: marking
	 * it would build tables for its libraries whenever it is sampled at
	 * work, which is mostly while building others' tables, and those
	 * tables, in use while it runs, would hold up the top of the
	 * kernel's CFI arrays (and their mapping) for good. */
	if (u->mode == TP_UNWIND_AUTO && p->pid == u->self)
		return nfp;
	up = uwproc_get(u, p);
	ncfi = copy_stack(u, up, p, s, cfi);
	if (!ncfi)
		return nfp;
	helps = autopolicy__cfi_helps(out, nfp, cfi, ncfi);
	if (u->mode == TP_UNWIND_AUTO) {
		if (helps)	/* its tables go in with the mark */
			want_tables(u, p, cfi, ncfi);
		autopolicy__observe(u->policy, up->pid, &up->mark, s->probe,
				    helps);
		/* A probe that does not help keeps the frame-pointer stack,
		 * like the process's other samples. */
		if (s->probe && !helps)
			return nfp;
	}
	/* Fewer frames, and none the chain lacks: the stack went on past the
	 * copy (or into code without CFI), and the chain is sound. Frames
	 * past a divergence, though, are the chain's guesses: CFI wins. */
	if (ncfi < nfp && !helps) {
		u->stats.fp_longer++;
		return nfp;
	}
	memcpy(out, cfi, ncfi * sizeof(*out));
	u->stats.cfi_used++;
	return ncfi;
}

/* ---- setup ---- */

struct unwinder *unwinder__new(struct proctable *procs, int mode)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	elf_version(EV_CURRENT);
	u->procs = procs;
	u->mode = mode;
	u->self = (uint32_t)getpid();
	u->verify = getenv("TAGPROF_UNWIND_VERIFY") != NULL;
	u->procs_by_pid = hashmap__new(0);
	u->bins = bincache__new(&u->stats);
	u->spaces.bins = u->bins;
	u->spaces.stats = &u->stats;
	u->policy = autopolicy__new(&u->stats);
	if (!u->procs_by_pid || !u->bins || !u->policy) {
		unwinder__free(u);
		return NULL;
	}
	return u;
}

void unwinder__set_verbose(struct unwinder *u, int verbose)
{
	u->verbose = verbose;
	autopolicy__set_verbose(u->policy, verbose);
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	hashmap__free_values(u->procs_by_pid, uwproc_free);
	autopolicy__free(u->policy);	/* after the processes: they note
					   their unmarks */
	bincache__free(u->bins);
	free(u);
}

void unwinder__forget(struct unwinder *u, uint32_t pid)
{
	uint64_t v;

	if (hashmap__del(u->procs_by_pid, &pid, sizeof(pid), &v))
		uwproc_free((void *)(uintptr_t)v);
}

void unwinder__sweep(struct unwinder *u)
{
	uint32_t gone[256];
	size_t it = 0, n = 0;
	struct uwproc *up;
	uint64_t v;

	/* A few hundred at a time; the rest go at the next sweep. libdw's
	 * caches grow with the code unwound through: every Dwfl starts
	 * afresh after a sweep, which bounds them to a window's worth. */
	while (hashmap__next(u->procs_by_pid, &it, NULL, NULL, &v)) {
		up = (struct uwproc *)(uintptr_t)v;
		dwflspace__reset(&up->space);
		if (n < sizeof(gone) / sizeof(gone[0]) &&
		    !proctable__alive(u->procs, up->pid, up->start_ns))
			gone[n++] = up->pid;
	}
	for (size_t i = 0; i < n; i++)
		unwinder__forget(u, gone[i]);
	bincache__sweep(u->bins, BINCACHE_KEEP_NS, BINCACHE_ANSWERS_NS);
}

void unwinder__bins_usage(const struct unwinder *u, size_t *bins,
			  size_t *bytes, size_t *answers)
{
	bincache__usage(u->bins, bins, bytes, answers);
}

const struct unwind_stats *unwinder__stats(const struct unwinder *u)
{
	return &u->stats;
}

int unwinder__mode(const struct unwinder *u)
{
	return u->mode;
}
