// SPDX-License-Identifier: BSD-2-Clause
/* CFI tables for the kernel's walk (cfitable.h). The FDEs are found through
 * .eh_frame_hdr's table (ehframehdr.h). */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <gelf.h>

#include "unwind/bincache.h"
#include "unwind/cfirule.h"
#include "unwind/cfitable.h"
#include "unwind/ehframehdr.h"
#include "util/clock.h"
#include "util/grow.h"

/* The binary is its owner's: its CFI may be made to cost. Each lookup
 * runs the FDE's program from its start, so an FDE of N rows costs N^2:
 * past FDE_ROWS_MAX rows (real ones have a few hundred at most: 472 in
 * perf, 88 in python3.11) the rest of the FDE is one row the walk cannot
 * follow, and a build that takes over BUILD_NS gives up. */
#define FDE_ROWS_MAX	2048
#define BUILD_NS	(1000ull * 1000 * 1000)

/* .eh_frame_hdr's bytes and file address. */
static int find_hdr(Elf *elf, const uint8_t **bytes, size_t *len,
		    uint64_t *vaddr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	Elf_Data *d;
	const char *name;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".eh_frame_hdr"))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size != sh.sh_size)
			return -ENOENT;
		*bytes = d->d_buf;
		*len = d->d_size;
		*vaddr = sh.sh_addr;
		return 0;
	}
	return -ENOENT;
}

/* The FDEs' initial locations (file addresses), sorted. */
static int fde_starts(const uint8_t *h, size_t len, uint64_t hdr_vaddr,
		      uint64_t **out, size_t *count)
{
	struct ehframehdr t;
	uint64_t *locs;
	int err;

	err = ehframehdr__read(h, len, hdr_vaddr, &t);
	if (err)
		return err;
	locs = malloc(t.n * sizeof(*locs));
	if (!locs)
		return -ENOMEM;
	for (size_t i = 0; i < t.n; i++) {
		locs[i] = ehframehdr__location(&t, i);
		if (i && locs[i] < locs[i - 1]) {	/* the table must be sorted */
			free(locs);
			return -EINVAL;
		}
	}
	*out = locs;
	*count = t.n;
	return 0;
}

static bool same_rule(const struct tp_cfi_row *a, const struct tp_cfi_row *b)
{
	return a->kind == b->kind && a->cfa == b->cfa && a->bp == b->bp;
}

/* Appends row r at file address at, unless the last row has its rule. */
static int add_row(struct cfitable *t, size_t *cap, uint32_t max_rows,
		   uint64_t at, struct tp_cfi_row r)
{
	if (at < t->base || at - t->base > UINT32_MAX)
		return -E2BIG;
	if (t->nrows && same_rule(&t->rows[t->nrows - 1], &r))
		return 0;
	if (t->nrows && t->rows[t->nrows - 1].pc == at - t->base) {
		t->rows[t->nrows - 1] = r;	/* an empty row before */
		t->rows[t->nrows - 1].pc = (uint32_t)(at - t->base);
		return 0;
	}
	if (t->nrows >= max_rows)
		return -E2BIG;
	if (grow__array(&t->rows, cap, t->nrows + 1, sizeof(*t->rows), 1024))
		return -ENOMEM;
	r.pc = (uint32_t)(at - t->base);
	if (TP_CFI_KIND(r.kind) == TP_CFI_UNSUPPORTED)
		t->unsupported++;
	t->rows[t->nrows++] = r;
	return 0;
}

/* The rows of the FDE at start, up to limit (the next FDE's start), then
 * a NONE row where it ends before that. */
static int fde_rows(Dwarf_CFI *cfi, struct cfitable *t, size_t *cap,
		    uint32_t max_rows, uint64_t start, uint64_t limit)
{
	static const struct tp_cfi_row none = { .kind = TP_CFI_NONE };
	static const struct tp_cfi_row cut = { .kind = TP_CFI_UNSUPPORTED };
	uint64_t at = start, s, e, rule;
	struct tp_cfi_row r;
	int err, k;

	for (k = 0; k < FDE_ROWS_MAX && at < limit; k++) {
		rule = cfirule__row(cfi, at, &s, &e);
		if (rule == CFIRULE_NO_CFI)
			break;
		cfirule__kernel_row(rule, &r);
		err = add_row(t, cap, max_rows, at, r);
		if (err)
			return err;
		at = e;
	}
	if (k == FDE_ROWS_MAX && at < limit &&
	    cfirule__row(cfi, at, &s, &e) != CFIRULE_NO_CFI) {
		/* the rest of the FDE, up to the next one's start */
		return add_row(t, cap, max_rows, at, cut);
	}
	return at < limit ? add_row(t, cap, max_rows, at, none) : 0;
}

/* pages[p]: the last row at or below page p's start; every page's search
 * must stay within TP_CFI_PAGE_ROWS rows. */
static int build_pages(struct cfitable *t)
{
	uint32_t last = t->rows[t->nrows - 1].pc, r = 0;

	t->npages = last / TP_PAGE_SIZE + 1;
	t->pages = malloc((t->npages + 1) * sizeof(*t->pages));
	if (!t->pages)
		return -ENOMEM;
	for (uint32_t p = 0; p <= t->npages; p++) {
		uint64_t at = (uint64_t)p * TP_PAGE_SIZE;

		while (r + 1 < t->nrows && t->rows[r + 1].pc <= at)
			r++;
		t->pages[p] = r;
		if (p && t->pages[p] - t->pages[p - 1] + 1 > TP_CFI_PAGE_ROWS)
			return -E2BIG;
	}
	return 0;
}

int cfitable__build(const struct bincache_entry *b, uint32_t max_rows,
		    struct cfitable *t)
{
	static const struct tp_cfi_row none = { .kind = TP_CFI_NONE };
	uint64_t *locs = NULL, hdr_vaddr;
	const uint8_t *hdr;
	size_t len, n = 0, cap = 0;
	uint64_t t0 = clock__mono_ns();
	int err;

	memset(t, 0, sizeof(*t));
	if (!b->cfi)
		return -ENOENT;
	err = find_hdr(b->elf, &hdr, &len, &hdr_vaddr);
	if (!err)
		err = fde_starts(hdr, len, hdr_vaddr, &locs, &n);
	if (!err && !n)
		err = -ENOENT;	/* (ehframehdr__read refuses it first) */
	if (err) {
		free(locs);
		return err;
	}
	t->base = locs[0] & ~(uint64_t)(TP_PAGE_SIZE - 1);
	/* A row at offset 0, so that every page has one in force. */
	err = add_row(t, &cap, max_rows, t->base, none);
	for (size_t i = 0; i < n && !err; i++) {
		err = fde_rows(b->cfi, t, &cap, max_rows, locs[i],
			       i + 1 < n ? locs[i + 1] : UINT64_MAX);
		if (!err && !(i % 256) && clock__mono_ns() - t0 > BUILD_NS)
			err = -ETIME;
	}
	free(locs);
	if (!err)
		err = build_pages(t);
	if (err)
		cfitable__free(t);
	return err;
}

const struct tp_cfi_row *cfitable__lookup(const struct cfitable *t,
					  uint64_t vaddr)
{
	uint64_t rel = vaddr - t->base;
	uint32_t lo, hi, mid;

	if (vaddr < t->base || rel / TP_PAGE_SIZE >= t->npages)
		return NULL;
	lo = t->pages[rel / TP_PAGE_SIZE];
	hi = t->pages[rel / TP_PAGE_SIZE + 1] + 1;
	while (hi - lo > 1) {
		mid = (lo + hi) / 2;
		if (t->rows[mid].pc <= rel)
			lo = mid;
		else
			hi = mid;
	}
	return &t->rows[lo];
}

void cfitable__free(struct cfitable *t)
{
	free(t->rows);
	free(t->pages);
	memset(t, 0, sizeof(*t));
}
