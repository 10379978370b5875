/* A binary's CFI compiled into the table the kernel's CFI walk searches
 * (struct tp_cfi_row and the page index: sample_event.h,
 * bpf/cfiwalk.bpf.h).
 *
 * The FDEs are found through .eh_frame_hdr's sorted table, as a runtime
 * unwinder finds them; each FDE's rows come from libdw (cfirule.h), one
 * lookup per row, and consecutive rows with the same rule are merged. A
 * gap between FDEs gets a TP_CFI_NONE row: the walk steps such code by
 * frame pointers. */
#ifndef TAGPROF_CFITABLE_H
#define TAGPROF_CFITABLE_H

#include <stdint.h>

#include "sample_event.h"

struct bincache_entry;

struct cfitable {
	uint64_t base;		/* file address of row pc 0 (page-aligned) */
	struct tp_cfi_row *rows;
	uint32_t nrows;
	uint32_t *pages;	/* npages + 1 row indexes */
	uint32_t npages;
	uint32_t unsupported;	/* rows the kernel walk cannot follow */
};

/* Builds b's table into t. 0, or -errno: ENOENT no .eh_frame_hdr or no
 * CFI, ENOTSUP an .eh_frame_hdr encoding other than the one linkers
 * write, E2BIG over max_rows rows or a page with more than
 * TP_CFI_PAGE_ROWS, EINVAL a malformed header, ETIME the build took
 * over a second (a binary made to cost), ENOMEM. */
int cfitable__build(const struct bincache_entry *b, uint32_t max_rows,
		    struct cfitable *t);

/* The row in force at file address vaddr, as the kernel finds it (for
 * tests); NULL outside the table. */
const struct tp_cfi_row *cfitable__lookup(const struct cfitable *t,
					  uint64_t vaddr);

void cfitable__free(struct cfitable *t);	/* its arrays; accepts a zeroed one */

#endif
