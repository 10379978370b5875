/* Whether libdw may be given a binary's .eh_frame.
 *
 * The unwinder hands every binary a CFI-walked process maps to libdw
 * (dwarf_getcfi_elf, dwarf_cfi_addrframe, libdwfl), and the binary is its
 * owner's. libdw runs an FDE's program into an array of registers that it
 * grows to the largest register number the program names, copies that
 * array at each DW_CFA_remember_state, and keeps every DWARF expression it
 * interprets. So a few bytes cost the agent gigabytes: DW_CFA_undefined
 * for register 264050040 made elfutils 0.188 realloc 2.1 GB
 * (tests/fuzz/corpus/cfi/libdw-regno-oom).
 *
 * Before libdw sees the bytes, every entry it could read is checked:
 * - the CIEs and FDEs a walk from the start reads, as libdw's own search
 *   does when there is no .eh_frame_hdr (dwarf_next_cfi, skipping an entry
 *   it cannot read);
 * - the FDEs .eh_frame_hdr's table names: each must be one of those;
 * - the CIE each FDE points to, read where it points.
 * Each CIE's augmentation must be one whose FDE layout is known ("" or
 * 'z' followed by L, P, R, S), and each program (the CIE's initial
 * instructions, the FDE's instructions) must hold only the DWARF 5 and GNU
 * opcodes, with every register under CFICHECK_REG_MAX, remember_state
 * nested at most CFICHECK_DEPTH_MAX deep and expressions of at most
 * CFICHECK_EXPR_MAX bytes (CFICHECK_EXPRS_MAX in all); and without a
 * search table, at most CFICHECK_SCAN_FDES_MAX FDEs. A binary that
 * fails keeps no CFI: its frames are walked by frame pointers. The system's
 * own binaries all pass (tests/unit/test_cficheck.c checks them, and
 * prints the largest values they use). */
#ifndef TAGPROF_CFICHECK_H
#define TAGPROF_CFICHECK_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/ehframehdr.h"

#define CFICHECK_REG_MAX	1023	/* x86-64 numbers go to 125 */
#define CFICHECK_DEPTH_MAX	16	/* remember_state nesting */
#define CFICHECK_EXPR_MAX	256	/* bytes of one expression */
#define CFICHECK_EXPRS_MAX	(256u << 10)	/* of all of them */
/* Without a search table libdw scans the .eh_frame and keeps every FDE it
 * passes (~100 bytes each): the binaries without one have none. */
#define CFICHECK_SCAN_FDES_MAX	4096

/* The largest values a check met, for the test over the system's files. */
struct cficheck_seen {
	uint64_t reg;
	uint32_t depth;
	uint64_t expr;
	uint64_t exprs;
	size_t cies, fdes;
};

/* Checks the .eh_frame at frame (len bytes, file address frame_vaddr) and
 * the search table hdr, as ehframehdr__read read it (NULL if there is
 * none, or if it is not one ehframehdr.h reads: then libdw must not be
 * given it either). NULL if libdw may read it, or why not. seen, if not
 * NULL, gets the largest values met. */
const char *cficheck__eh_frame(const uint8_t *frame, size_t len,
			       uint64_t frame_vaddr,
			       const struct ehframehdr *hdr,
			       struct cficheck_seen *seen);

#endif
