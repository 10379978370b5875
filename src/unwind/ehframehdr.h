/* .eh_frame_hdr's search table, read one way for the two that need it:
 * the kernel walk's table (cfitable.c) takes each FDE's initial location,
 * and the check of what libdw may read (cficheck.c) takes each FDE's
 * address.
 *
 * The layout is the LSB's (Linux Standard Base Core, "Exception Frame
 * Header"): version 1, the encodings of eh_frame_ptr, fde_count and the
 * table, then eh_frame_ptr, fde_count and fde_count pairs of (initial
 * location, FDE address), sorted by location. GNU ld, gold, lld and mold
 * all write the table as 4-byte signed offsets from the header's start
 * (DW_EH_PE_datarel | DW_EH_PE_sdata4); that is the one read here. */
#ifndef TAGPROF_EHFRAMEHDR_H
#define TAGPROF_EHFRAMEHDR_H

#include <stddef.h>
#include <stdint.h>

struct ehframehdr {
	const uint8_t *table;	/* n pairs of 4-byte words */
	size_t n;
	uint64_t vaddr;		/* the header's file address */
};

/* Reads the header at h (len bytes, at file address vaddr). 0, or
 * -EINVAL malformed (a count past the bytes), -ENOTSUP an encoding other
 * than the linkers', -ENOENT no entries. */
int ehframehdr__read(const uint8_t *h, size_t len, uint64_t vaddr,
		     struct ehframehdr *out);

/* Entry i's initial location and FDE address (file addresses). */
uint64_t ehframehdr__location(const struct ehframehdr *t, size_t i);
uint64_t ehframehdr__fde(const struct ehframehdr *t, size_t i);

#endif
