// SPDX-License-Identifier: BSD-2-Clause
/* The kernel's CFI tables (cfiload.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cfiload.h"
#include "kernel/sampler.h"
#include "sample_event.h"
#include "unwind/cfitable.h"
#include "unwind/unwind.h"
#include "util/clock.h"
#include "util/hashmap.h"
#include "util/ranges.h"

/* A table no process uses any more is kept, in case one comes back,
 * until its space is wanted or IDLE_KEEP of them are kept; and at least
 * IDLE_GRACE_NS, because a walk that read a process's mappings just before
 * they were deleted may still be reading the table (BPF programs run for
 * microseconds). */
#define IDLE_GRACE_NS	(1000ull * 1000 * 1000)
#define IDLE_KEEP	256
/* ... and dropped at a sweep once unused this long, wanted or not: the
 * programs that pass through a host (a script's awk, grep, zcat) would
 * otherwise hold their space, and the mapped part of the arrays, for
 * good. */
#define IDLE_DROP_NS	(60ull * 1000 * 1000 * 1000)

/* A binary's table as written: its slot, the file address of its row
 * offset 0, and the space it takes; how many mappings of walked processes
 * name it. */
struct loaded {
	uint64_t key[2];	/* the binary's (dev, ino) */
	uint32_t slot;		/* TP_CFI_NO_TABLE: it has none, and is
				   remembered so, not built again */
	uint64_t base;
	uint32_t row, nrows, page, npages;	/* npages + 1 entries */
	uint32_t refs;
	uint64_t idle_ns;	/* when refs fell to 0 */
};

/* A walked process: the tables its entry in the kernel names, one per
 * mapping that has one. */
struct cfiproc {
	uint32_t n;
	struct loaded *ld[TP_CFI_MAPS];
};

struct cfiload {
	struct sampler *s;
	struct sampler_cfi t;		/* mapped on first use (rows set) */
	struct hashmap *bins;		/* (dev, ino) -> struct loaded * */
	struct hashmap *procs;		/* pid -> struct cfiproc * */
	struct ranges rows, pages, slots;	/* free space of the arrays */
	size_t idle;			/* loaded with refs 0 */
	uint64_t swept;			/* dropped unused for IDLE_DROP_NS */
	struct tp_cfi_proc scratch;
	struct unwind_cfi_map maps[TP_CFI_MAPS];
	struct loaded *uses[TP_CFI_MAPS];	/* by mapping, in a put */
	struct loaded *pinned[TP_CFI_MAPS];	/* held through a put */
	uint32_t npinned;
};

struct cfiload *cfiload__new(struct sampler *s)
{
	struct cfiload *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->s = s;
	l->bins = hashmap__new(0);
	l->procs = hashmap__new(0);
	if (!l->bins || !l->procs) {
		cfiload__free(l);
		return NULL;
	}
	return l;
}

void cfiload__free(struct cfiload *l)
{
	if (!l)
		return;
	hashmap__free_values(l->bins, free);
	hashmap__free_values(l->procs, free);
	ranges__free(&l->rows);
	ranges__free(&l->pages);
	ranges__free(&l->slots);
	free(l);
}

static void use(struct cfiload *l, struct loaded *ld)
{
	if (!ld->refs++)
		l->idle--;
}

static void unuse(struct cfiload *l, struct loaded *ld)
{
	if (--ld->refs)
		return;
	ld->idle_ns = clock__mono_ns();
	l->idle++;
}

/* Takes the space of t's rows, page index and slot into ld: from space
 * given back, or, if grow, from the top. 0 or -ENOSPC. */
static int take_space(struct cfiload *l, const struct cfitable *t,
		      struct loaded *ld, bool grow)
{
	if (ranges__take(&l->rows, t->nrows, grow, &ld->row))
		return -ENOSPC;
	if (ranges__take(&l->pages, t->npages + 1, grow, &ld->page)) {
		ranges__give(&l->rows, ld->row, t->nrows);
		return -ENOSPC;
	}
	if (ranges__take(&l->slots, 1, grow, &ld->slot)) {
		ranges__give(&l->rows, ld->row, t->nrows);
		ranges__give(&l->pages, ld->page, t->npages + 1);
		return -ENOSPC;
	}
	ld->nrows = t->nrows;
	ld->npages = t->npages;
	return 0;
}

static void give_ranges(struct cfiload *l, struct loaded *ld)
{
	ranges__give(&l->rows, ld->row, ld->nrows);
	ranges__give(&l->pages, ld->page, ld->npages + 1);
	ranges__give(&l->slots, ld->slot, 1);
	ld->slot = TP_CFI_NO_TABLE;
}

/* Takes back a written table's space. */
static void give_space(struct cfiload *l, struct loaded *ld)
{
	if (ld->slot == TP_CFI_NO_TABLE)
		return;
	l->t.bins[ld->slot] = (struct tp_cfi_bin){ 0 };
	give_ranges(l, ld);
}

/* Forgets the tables no process has used for idle_ns, giving back their
 * space. Returns how many. */
static size_t drop_idle(struct cfiload *l, uint64_t idle_ns)
{
	uint64_t now = clock__mono_ns(), v;
	struct loaded **gone;
	size_t it = 0, n = 0;

	if (!l->idle)
		return 0;
	gone = malloc(l->idle * sizeof(*gone));
	if (!gone)
		return 0;
	while (n < l->idle && hashmap__next(l->bins, &it, NULL, NULL, &v)) {
		struct loaded *ld = (struct loaded *)(uintptr_t)v;

		if (!ld->refs && now - ld->idle_ns >= idle_ns)
			gone[n++] = ld;
	}
	for (size_t i = 0; i < n; i++) {
		give_space(l, gone[i]);
		hashmap__del(l->bins, gone[i]->key, sizeof(gone[i]->key), NULL);
		free(gone[i]);
	}
	l->idle -= n;
	free(gone);
	return n;
}

/* Writes t into the arrays: its rows, its page index, then the slot that
 * names them, so that a walk that finds the slot finds them whole. Space
 * given back is used before the arrays grow, and tables no process uses
 * are dropped for it first: the arrays are mapped up to the top of the
 * space handed out (sampler__cfi_fit), and that counts in the agent's
 * resident size. 0, -ENOSPC when t does not fit, or a mapping's -errno. */
static int write_table(struct cfiload *l, const struct cfitable *t,
		       struct loaded *ld)
{
	struct tp_cfi_bin *b;
	int err;

	err = take_space(l, t, ld, false);
	if (err && drop_idle(l, IDLE_GRACE_NS))
		err = take_space(l, t, ld, false);
	if (err)
		err = take_space(l, t, ld, true);
	if (err)
		return err;
	err = sampler__cfi_fit(l->s, l->rows.top, l->pages.top,
			       l->slots.top);
	if (err) {
		give_ranges(l, ld);	/* not mapped: nothing written */
		return err;
	}
	memcpy(&l->t.rows[ld->row], t->rows, t->nrows * sizeof(*t->rows));
	for (uint32_t i = 0; i <= t->npages; i++)
		l->t.pages[ld->page + i] = t->pages[i];
	b = &l->t.bins[ld->slot];
	b->row = ld->row;
	b->nrows = t->nrows;
	b->page = ld->page;
	b->npages = t->npages;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return 0;
}

/* m's binary's table if it was built before. */
static struct loaded *cached_table(struct cfiload *l,
				   const struct unwind_cfi_map *m)
{
	uint64_t v;

	if (!hashmap__get(l->bins, m->key, sizeof(m->key), &v))
		return NULL;
	return (struct loaded *)(uintptr_t)v;
}

/* Builds and writes the table of m's binary, which has none yet (not
 * cached_table): remembered, also when the binary turns out to have no
 * table, so it is not built again. 0 and *out, unused yet; -ENOSPC when
 * it does not fit, -ENOMEM. */
static int build_table(struct cfiload *l, struct unwinder *u,
		       const struct unwind_cfi_map *m, struct loaded **out)
{
	struct loaded *ld;
	struct cfitable t;
	int err;

	ld = calloc(1, sizeof(*ld));
	if (!ld)
		return -ENOMEM;
	memcpy(ld->key, m->key, sizeof(ld->key));
	ld->slot = TP_CFI_NO_TABLE;
	if (!unwinder__cfi_table(u, m->bin, &t)) {
		err = write_table(l, &t, ld);
		ld->base = t.base;
		cfitable__free(&t);
		if (err) {
			free(ld);
			return err;
		}
	}
	if (hashmap__put(l->bins, ld->key, sizeof(ld->key), (uintptr_t)ld)) {
		give_space(l, ld);
		free(ld);
		return -ENOMEM;
	}
	ld->idle_ns = clock__mono_ns();
	l->idle++;
	*out = ld;
	return 0;
}

/* Writes pid's mappings p into the kernel, n of them, naming the tables
 * uses[0..n) (NULL where none), and counts them as used by pid in place
 * of what it named before. 0 or -errno. */
static int write_proc(struct cfiload *l, uint32_t pid,
		      const struct tp_cfi_proc *p, long n)
{
	struct cfiproc *rec;
	uint64_t v;
	int err;

	/* Recorded before the kernel has the entry: cfiload__drop then
	 * finds it whatever happens next. */
	if (hashmap__get(l->procs, &pid, sizeof(pid), &v)) {
		rec = (struct cfiproc *)(uintptr_t)v;
	} else {
		rec = calloc(1, sizeof(*rec));
		if (!rec)
			return -ENOMEM;
		if (hashmap__put(l->procs, &pid, sizeof(pid), (uintptr_t)rec)) {
			free(rec);
			return -ENOMEM;
		}
	}
	err = sampler__write_cfi_proc(l->s, pid, p);
	if (err)
		return err;
	for (long i = 0; i < n; i++)
		if (l->uses[i])
			use(l, l->uses[i]);
	for (uint32_t i = 0; i < rec->n; i++)
		unuse(l, rec->ld[i]);
	rec->n = 0;
	for (long i = 0; i < n; i++)
		if (l->uses[i])
			rec->ld[rec->n++] = l->uses[i];
	return 0;
}

/* Whether mapping a's table is wanted before b's: a binary more
 * processes map first (libc, the loader), then the executable, then by
 * address. */
static bool before(const struct unwind_cfi_map *a,
		   const struct unwind_cfi_map *b)
{
	if (a->shared != b->shared)
		return a->shared > b->shared;
	if (a->exe != b->exe)
		return a->exe;
	return a->start < b->start;
}

/* order[0..n): the mappings' indexes, the table wanted first first. */
static void build_order(const struct unwind_cfi_map *maps, long n,
			uint8_t *order)
{
	for (long i = 0; i < n; i++) {
		long j = i;

		for (; j > 0 && before(&maps[i], &maps[order[j - 1]]); j--)
			order[j] = order[j - 1];
		order[j] = (uint8_t)i;
	}
}

/* Holds ld through a put, so that a table built meanwhile does not take
 * its space (drop_idle) before the process's entry names it. */
static void pin(struct cfiload *l, struct loaded *ld)
{
	use(l, ld);
	l->pinned[l->npinned++] = ld;
}

/* Writes pid's mappings and builds the tables wanted that are missing
 * (cfiload__put), all that it uses pinned. */
static int put_pinned(struct cfiload *l, struct unwinder *u, uint32_t pid)
{
	struct tp_cfi_proc *p = &l->scratch;
	uint8_t order[TP_CFI_MAPS];
	bool done[TP_CFI_MAPS];
	struct loaded *ld;
	uint64_t start_ns;
	long n;
	int err;

	_Static_assert(TP_CFI_MAPS <= 256, "order holds a byte per mapping");
	n = unwinder__cfi_maps(u, pid, &start_ns, l->maps, TP_CFI_MAPS);
	if (n < 0)
		return -ESRCH;
	p->start_ns = start_ns;
	p->n = n;
	/* The tables built before (for another process, or before the
	 * mappings changed) first: they cost nothing. */
	for (long i = 0; i < n; i++) {
		ld = l->maps[i].bin ? cached_table(l, &l->maps[i]) : NULL;
		done[i] = !l->maps[i].bin || ld;
		l->uses[i] = ld;
		if (ld)
			pin(l, ld);
		p->m[i] = (struct tp_cfi_map){
			.start = l->maps[i].start, .end = l->maps[i].end,
			.base = l->maps[i].bias + (ld ? ld->base : 0),
			.bin = ld ? ld->slot : TP_CFI_NO_TABLE };
	}
	/* A table takes milliseconds to build (libc's 8 here, a big
	 * server's tens): the process is walked from the first one in,
	 * and each new one goes in as soon as it is built; the mappings
	 * still without one are stepped by frame pointers. Only the
	 * tables wanted are built: perf, say, maps 30 libraries, 130 ms of
	 * tables, and its stacks pass through 2. A walk that reaches one
	 * of the others ends there, and its sample copies the stack: the
	 * agent unwinds that, and asks for the tables it passed through. */
	build_order(l->maps, n, order);
	for (long k = 0; k < n; k++) {
		long i = order[k];

		if (done[i])
			continue;
		if (!l->maps[i].wanted) {
			p->m[i].bin = TP_CFI_LATER;
			continue;
		}
		/* A binary mapped in pieces: built for an earlier one. */
		ld = cached_table(l, &l->maps[i]);
		if (!ld) {
			err = build_table(l, u, &l->maps[i], &ld);
			if (err)
				return err;
		}
		pin(l, ld);
		l->uses[i] = ld;
		p->m[i].base = l->maps[i].bias + ld->base;
		p->m[i].bin = ld->slot;
		if (k + 1 < n) {
			err = write_proc(l, pid, p, n);
			if (err)
				return err;
		}
	}
	return write_proc(l, pid, p, n);
}

int cfiload__put(struct cfiload *l, struct unwinder *u, uint32_t pid)
{
	int err;

	if (!l->t.rows) {
		err = sampler__cfi_tables(l->s, &l->t);
		if (err)
			return err;
		ranges__init(&l->rows, l->t.max_rows);
		ranges__init(&l->pages, l->t.max_pages);
		ranges__init(&l->slots, l->t.max_bins);
	}
	l->npinned = 0;
	err = put_pinned(l, u, pid);
	while (l->npinned)
		unuse(l, l->pinned[--l->npinned]);
	if (l->idle > IDLE_KEEP)
		drop_idle(l, IDLE_GRACE_NS);
	return err;
}

void cfiload__drop(struct cfiload *l, uint32_t pid)
{
	struct cfiproc *rec;
	uint64_t v;

	if (!hashmap__del(l->procs, &pid, sizeof(pid), &v))
		return;
	sampler__delete_cfi_proc(l->s, pid);
	rec = (struct cfiproc *)(uintptr_t)v;
	for (uint32_t i = 0; i < rec->n; i++)
		unuse(l, rec->ld[i]);
	free(rec);
	if (l->idle > IDLE_KEEP)
		drop_idle(l, IDLE_GRACE_NS);
}

void cfiload__sweep(struct cfiload *l)
{
	if (!l->t.rows)
		return;
	l->swept += drop_idle(l, IDLE_DROP_NS);
	/* The mapping follows the tops down too (failing, it stays). */
	sampler__cfi_fit(l->s, l->rows.top, l->pages.top, l->slots.top);
}

void cfiload__usage(const struct cfiload *l, struct cfiload_usage *out)
{
	size_t it = 0;
	uint64_t v;

	*out = (struct cfiload_usage){
		.rows = l->rows.top - ranges__free_below_top(&l->rows),
		.rows_top = l->rows.top,
		.swept = l->swept,
		.mapped = sampler__cfi_mapped(l->s) };
	while (hashmap__next(l->bins, &it, NULL, NULL, &v)) {
		const struct loaded *ld = (const struct loaded *)(uintptr_t)v;

		if (ld->slot == TP_CFI_NO_TABLE)
			continue;
		out->tables++;
		out->unused += !ld->refs;
	}
}
