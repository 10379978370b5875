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
#include "util/hashmap.h"

struct cfiload {
	struct sampler *s;
	struct sampler_cfi t;		/* mapped on first use (rows set) */
	struct hashmap *bins;		/* (dev, ino) -> bin slot */
	struct hashmap *procs;		/* pids written */
	uint32_t rows, pages, nbins;	/* used so far */
	struct tp_cfi_proc scratch;
	struct unwind_cfi_map maps[TP_CFI_MAPS];
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
	hashmap__free(l->procs);
	free(l);
}

/* Takes back all the tables' space: only while no process is walked by
 * CFI, so no walk reads them. */
static void reset_tables(struct cfiload *l)
{
	hashmap__free_values(l->bins, free);
	l->bins = hashmap__new(0);
	l->rows = l->pages = l->nbins = 0;
}

/* Writes t into the arrays: its rows, its page index, then the slot that
 * names them, so that a walk that finds the slot finds them whole. The
 * arrays are mapped as far as they are used (sampler__cfi_fit). 0,
 * -ENOSPC when t does not fit, or a mapping's -errno. */
static int write_table(struct cfiload *l, const struct cfitable *t,
		       uint32_t *slot)
{
	struct tp_cfi_bin *b;

	int err;

	if (l->nbins >= l->t.max_bins || t->nrows > l->t.max_rows - l->rows ||
	    t->npages + 1 > l->t.max_pages - l->pages)
		return -ENOSPC;
	err = sampler__cfi_fit(l->s, l->rows + t->nrows,
			       l->pages + t->npages + 1, l->nbins + 1);
	if (err)
		return err;
	memcpy(&l->t.rows[l->rows], t->rows, t->nrows * sizeof(*t->rows));
	for (uint32_t i = 0; i <= t->npages; i++)
		l->t.pages[l->pages + i] = t->pages[i];
	b = &l->t.bins[l->nbins];
	b->row = l->rows;
	b->nrows = t->nrows;
	b->page = l->pages;
	b->npages = t->npages;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	*slot = l->nbins++;
	l->rows += t->nrows;
	l->pages += t->npages + 1;
	return 0;
}

/* A binary's table as written: its slot, and the file address of its row
 * offset 0. */
struct loaded {
	uint32_t slot;		/* TP_CFI_NO_TABLE: it has none, and is
				   remembered so, not built again */
	uint64_t base;
};

/* Whether m's binary's table was built before: then *out is it. */
static bool cached_table(struct cfiload *l, const struct unwind_cfi_map *m,
			 struct loaded *out)
{
	uint64_t v;

	if (!l->bins || !hashmap__get(l->bins, m->key, sizeof(m->key), &v))
		return false;
	*out = *(struct loaded *)(uintptr_t)v;
	return true;
}

/* Builds and writes the table of m's binary, which has none yet (not
 * cached_table): remembered, also when the binary turns out to have no
 * table, so it is not built again. -ENOSPC when it does not fit, -ENOMEM. */
static int build_table(struct cfiload *l, struct unwinder *u,
		       const struct unwind_cfi_map *m, struct loaded *out)
{
	struct loaded *ld;
	struct cfitable t;
	int err;

	if (!l->bins)		/* a reset could not make a new one */
		return -ENOMEM;
	ld = calloc(1, sizeof(*ld));
	if (!ld)
		return -ENOMEM;
	ld->slot = TP_CFI_NO_TABLE;
	if (!unwinder__cfi_table(u, m->bin, &t)) {
		err = write_table(l, &t, &ld->slot);
		ld->base = t.base;
		cfitable__free(&t);
		if (err) {
			free(ld);
			return err;
		}
	}
	if (hashmap__put(l->bins, m->key, sizeof(m->key), (uintptr_t)ld)) {
		free(ld);	/* written, but not remembered: space lost */
		return -ENOMEM;
	}
	*out = *ld;
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

int cfiload__put(struct cfiload *l, struct unwinder *u, uint32_t pid)
{
	struct tp_cfi_proc *p = &l->scratch;
	uint8_t order[TP_CFI_MAPS];
	bool done[TP_CFI_MAPS];
	struct loaded ld;
	uint64_t start_ns;
	long n;
	int err;

	_Static_assert(TP_CFI_MAPS <= 256, "order holds a byte per mapping");
	if (!l->t.rows) {
		err = sampler__cfi_tables(l->s, &l->t);
		if (err)
			return err;
	}
	n = unwinder__cfi_maps(u, pid, &start_ns, l->maps, TP_CFI_MAPS);
	if (n < 0)
		return -ESRCH;
	p->start_ns = start_ns;
	p->n = n;
	/* The tables built before (for another process, or before the
	 * mappings changed) first: they cost nothing. */
	for (long i = 0; i < n; i++) {
		ld = (struct loaded){ .slot = TP_CFI_NO_TABLE };
		done[i] = !l->maps[i].bin || cached_table(l, &l->maps[i], &ld);
		p->m[i] = (struct tp_cfi_map){
			.start = l->maps[i].start, .end = l->maps[i].end,
			.base = l->maps[i].bias + ld.base, .bin = ld.slot };
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
		err = build_table(l, u, &l->maps[i], &ld);
		if (err)
			return err;
		p->m[i].base = l->maps[i].bias + ld.base;
		p->m[i].bin = ld.slot;
		if (k + 1 < n) {
			err = sampler__write_cfi_proc(l->s, pid, p);
			if (err)
				return err;
		}
	}
	err = sampler__write_cfi_proc(l->s, pid, p);
	if (err)
		return err;
	return hashmap__put(l->procs, &pid, sizeof(pid), 1) ? -ENOMEM : 0;
}

void cfiload__drop(struct cfiload *l, uint32_t pid)
{
	if (!hashmap__del(l->procs, &pid, sizeof(pid), NULL))
		return;
	sampler__delete_cfi_proc(l->s, pid);
	if (!hashmap__size(l->procs) && l->rows > l->t.max_rows / 2)
		reset_tables(l);
}
