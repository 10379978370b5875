// SPDX-License-Identifier: BSD-2-Clause
/* User stacks: frame pointers with frameless leaves repaired (fpstack.h),
 * or CFI.
 *
 * CFI. A sample with a stack copy is unwound from the copied registers,
 * with the rules cached per binary (cfistack.h) or, where they do not
 * suffice, by libdwfl (dwflspace.h).
 *
 * `auto`. BPF copies the stacks of processes marked here, and of one
 * sample in 64 of the others (one in 8 in a process's first 2 s): those
 * probes compare CFI with the frame pointers. CFI "helps" when it finds
 * frames the frame-pointer chain lacks: more than TAIL_SLACK frames past
 * their common prefix (on glibc, a sound frame-pointer chain stops below
 * __libc_start_main and _start, or clone3, which CFI adds: at most two). A
 * probe that helps marks the process; a marked process whose last
 * DEMOTE_WINDOW copies never helped is unmarked (back to probes). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "unwind/bincache.h"
#include "unwind/cfirule.h"
#include "unwind/cfistack.h"
#include "unwind/dwflspace.h"
#include "unwind/elfimage.h"
#include "unwind/fpstack.h"
#include "sym/elfsym.h"
#include "util/hashmap.h"
#include "proc/procfs.h"
#include "proc/proctable.h"
#include "sample_event.h"
#include "proc/targetfile.h"
#include "unwind/unwind.h"
#include "util/clock.h"

#define MAX_MARKED	1024	/* processes marked for copies at once */
#define TAIL_SLACK	2
#define DEMOTE_WINDOW	256

/* One process. */
struct uwproc {
	struct unwinder *u;
	uint32_t pid;
	uint64_t start_ns;
	/* auto */
	bool marked;
	uint32_t win_copies, win_helped;
	struct dwflspace space;		/* CFI by libdwfl */
};

struct unwinder {
	struct proctable *procs;
	struct hashmap *marks;		/* pid -> wants copies (1) or not (0):
					   decided, not yet taken */
	int mode;
	int verbose;
	bool verify;			/* TAGPROF_UNWIND_VERIFY: rules vs dwfl */
	struct hashmap *procs_by_pid;	/* pid -> struct uwproc * */
	struct bincache *bins;
	struct dwflspaces spaces;
	size_t nmarked;
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
	proctable__find_map(u->procs, p, s->regs->ip);
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

/* ---- processes and `auto` ---- */

/* Records that pid wants its stacks copied on every sample, or no longer,
 * for unwinder__take_marks: the latest word for a pid wins. */
static int note_mark(struct unwinder *u, uint32_t pid, bool copy)
{
	return hashmap__put(u->marks, &pid, sizeof(pid), copy);
}

size_t unwinder__take_marks(struct unwinder *u, struct unwind_mark *out,
			    size_t max)
{
	size_t it = 0, n = 0;
	const void *key;
	uint64_t v;

	while (n < max && hashmap__next(u->marks, &it, &key, NULL, &v))
		out[n++] = (struct unwind_mark){ *(const uint32_t *)key, v };
	for (size_t i = 0; i < n; i++)
		hashmap__del(u->marks, &out[i].pid, sizeof(out[i].pid), NULL);
	return n;
}

static void uwproc_free(void *ptr)
{
	struct uwproc *up = ptr;

	if (!up)
		return;
	dwflspace__drop(&up->space);
	if (up->marked) {
		note_mark(up->u, up->pid, false);
		up->u->nmarked--;
	}
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

static void set_marked(struct unwinder *u, struct uwproc *up, bool on)
{
	if (up->marked == on)
		return;
	if (on && u->nmarked >= MAX_MARKED)
		return;
	if (note_mark(u, up->pid, on))
		return;
	up->marked = on;
	up->win_copies = up->win_helped = 0;
	if (u->verbose)
		fprintf(stderr, "tagprof: unwind: pid %u %s\n", up->pid,
			on ? "needs CFI: its stacks are copied" :
			     "no longer helped by CFI: back to probes");
	if (on) {
		u->nmarked++;
		u->stats.marked++;
	} else {
		u->nmarked--;
		u->stats.unmarked++;
	}
}

void unwinder__mark_refused(struct unwinder *u, uint32_t pid, bool copy)
{
	struct uwproc *up;
	uint64_t v;

	if (!hashmap__get(u->procs_by_pid, &pid, sizeof(pid), &v))
		return;
	up = (struct uwproc *)(uintptr_t)v;
	if (up->marked != copy)
		return;
	/* Not in force: undo it, so that the next probe that helps asks
	 * again, and the counts say only what BPF does. */
	up->marked = !copy;
	if (copy) {
		u->nmarked--;
		u->stats.marked--;
	} else {
		u->nmarked++;
		u->stats.unmarked--;
	}
}

/* Whether CFI found frames the frame-pointer chain lacks (see the top). */
static bool cfi_helps(const uint64_t *fp, size_t nfp, const uint64_t *cfi,
		      size_t ncfi)
{
	size_t same = 0;

	while (same < nfp && same < ncfi && fp[same] == cfi[same])
		same++;
	return ncfi > same + TAIL_SLACK;
}

size_t unwinder__user_stack(struct unwinder *u, struct proc *p,
			    const struct unwind_sample *s, uint64_t *out)
{
	uint64_t cfi[TP_MAX_FRAMES];
	size_t nfp, ncfi;
	struct uwproc *up;
	bool helps;

	nfp = fpstack__walk(u->procs, u->bins, &u->stats, p, s, out);
	if (!s->regs || !p || p->stale || !p->nmaps)
		return nfp;
	u->stats.copies++;
	if (s->probe)
		u->stats.probes++;
	up = uwproc_get(u, p);
	ncfi = up ? cfi_stack(u, up, p, s, cfi) : 0;
	if (ncfi <= 1) {
		u->stats.cfi_failed++;
		return nfp;
	}
	helps = cfi_helps(out, nfp, cfi, ncfi);
	if (u->mode == TP_UNWIND_AUTO) {
		if (s->probe) {
			if (helps)
				set_marked(u, up, true);
		} else if (up->marked) {
			up->win_helped += helps;
			if (++up->win_copies >= DEMOTE_WINDOW) {
				if (!up->win_helped)
					set_marked(u, up, false);
				up->win_copies = up->win_helped = 0;
			}
		}
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
	u->verify = getenv("TAGPROF_UNWIND_VERIFY") != NULL;
	u->procs_by_pid = hashmap__new(0);
	u->bins = bincache__new(&u->stats);
	u->spaces.bins = u->bins;
	u->spaces.stats = &u->stats;
	u->marks = hashmap__new(0);
	if (!u->procs_by_pid || !u->bins || !u->marks) {
		unwinder__free(u);
		return NULL;
	}
	return u;
}

void unwinder__set_verbose(struct unwinder *u, int verbose)
{
	u->verbose = verbose;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	hashmap__free_values(u->procs_by_pid, uwproc_free);
	hashmap__free(u->marks);	/* after the processes: they note
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
}

const struct unwind_stats *unwinder__stats(const struct unwinder *u)
{
	return &u->stats;
}

int unwinder__mode(const struct unwinder *u)
{
	return u->mode;
}
