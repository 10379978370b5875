// SPDX-License-Identifier: BSD-2-Clause
/* What libdw may read of an .eh_frame (cficheck.h). The formats are
 * DWARF 5's section 6.4 (call frame information) and the LSB's .eh_frame
 * ("Exception Frames": the CIE augmentation and pointer encodings). */
#include <dwarf.h>
#include <elf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdw.h>

#include "unwind/cficheck.h"
#include "unwind/ehframehdr.h"
#include "util/grow.h"
#include "util/hashmap.h"

#define LEB_MAX		10	/* bytes of a 64-bit LEB128, as libdw reads */
#define ENC_OMIT	0xff
#define ENC_INDIRECT	0x80

/* The operands of the opcodes under 0x40, in order: r a register
 * (ULEB128), l a LEB128 (either sign), b a block (ULEB128 length, then as
 * many bytes: an expression), 1 2 4 8 so many bytes, a an address in the
 * CIE's FDE encoding. An opcode without an entry is unknown: libdw
 * refuses the program at it, and so does this check. */
static const char *const operands[0x40] = {
	[DW_CFA_nop] = "",
	[DW_CFA_set_loc] = "a",
	[DW_CFA_advance_loc1] = "1",
	[DW_CFA_advance_loc2] = "2",
	[DW_CFA_advance_loc4] = "4",
	[DW_CFA_offset_extended] = "rl",
	[DW_CFA_restore_extended] = "r",
	[DW_CFA_undefined] = "r",
	[DW_CFA_same_value] = "r",
	[DW_CFA_register] = "rr",
	[DW_CFA_remember_state] = "",
	[DW_CFA_restore_state] = "",
	[DW_CFA_def_cfa] = "rl",
	[DW_CFA_def_cfa_register] = "r",
	[DW_CFA_def_cfa_offset] = "l",
	[DW_CFA_def_cfa_expression] = "b",
	[DW_CFA_expression] = "rb",
	[DW_CFA_offset_extended_sf] = "rl",
	[DW_CFA_def_cfa_sf] = "rl",
	[DW_CFA_def_cfa_offset_sf] = "l",
	[DW_CFA_val_offset] = "rl",
	[DW_CFA_val_offset_sf] = "rl",
	[DW_CFA_val_expression] = "rb",
	[DW_CFA_MIPS_advance_loc8] = "8",
	[DW_CFA_GNU_window_save] = "",
	[DW_CFA_GNU_args_size] = "l",
	[DW_CFA_GNU_negative_offset_extended] = "rl",
};

/* What an FDE's layout takes from its CIE. */
struct cie {
	uint8_t loc_size;	/* bytes of initial location and range */
	bool sized;		/* 'z': FDEs carry their augmentation's length */
};

struct check {
	Elf_Data data;
	struct hashmap *cies;	/* offset -> struct cie, 1 + packed */
	uint64_t *fdes;		/* the walk's FDE offsets, ascending */
	size_t nfdes, cap;
	struct cficheck_seen seen;
};

/* 64-bit little-endian, as elfimage.h reads only those. */
static const unsigned char ident[EI_NIDENT] = {
	ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
	EV_CURRENT,
};

/* Skips a LEB128 of at most LEB_MAX bytes ending before end; its value
 * (unsigned) in *v. */
static bool leb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (unsigned i = 0; i < LEB_MAX && *p < end; i++) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* Bytes of a value in a pointer encoding's format, as libdw reads an FDE's
 * location with it (read_encoded_value); 0 for the formats refused here:
 * LEB128 ones, unknown ones, and aligned or indirect locations. */
static uint8_t loc_size(uint8_t enc)
{
	if ((enc & 0x70) > DW_EH_PE_funcrel || (enc & ENC_INDIRECT))
		return 0;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	}
	return 0;
}

/* Bytes libdw skips for a personality pointer in encoding enc
 * (encoded_value_size: the low 3 bits); 0 for the LEB128 and unknown
 * ones, refused here. */
static uint8_t skip_size(uint8_t enc)
{
	switch (enc & 0x07) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
		return 8;
	case DW_EH_PE_udata4:
		return 4;
	case DW_EH_PE_udata2:
		return 2;
	}
	return 0;
}

static const char *note_reg(struct check *c, uint64_t reg)
{
	if (reg > CFICHECK_REG_MAX)
		return "a register number over 1023";
	if (reg > c->seen.reg)
		c->seen.reg = reg;
	return NULL;
}

/* One operand of kind k at *p. */
static const char *operand(struct check *c, char k, const uint8_t **p,
			   const uint8_t *end, uint8_t addr_size)
{
	uint64_t v;
	size_t n;

	switch (k) {
	case 'r':
		if (!leb(p, end, &v))
			return "a cut operand";
		return note_reg(c, v);
	case 'l':
		return leb(p, end, &v) ? NULL : "a cut operand";
	case 'b':
		if (!leb(p, end, &v) || v > (size_t)(end - *p))
			return "a cut expression";
		if (v > CFICHECK_EXPR_MAX)
			return "an expression over 256 bytes";
		c->seen.exprs += v;
		if (c->seen.exprs > CFICHECK_EXPRS_MAX)
			return "expressions over 256 KiB in all";
		if (v > c->seen.expr)
			c->seen.expr = v;
		*p += v;
		return NULL;
	case 'a':
		n = addr_size;
		break;
	default:
		n = (size_t)(k - '0');
	}
	if (!n)
		return "an address in an encoding not read here";
	if (n > (size_t)(end - *p))
		return "a cut operand";
	*p += n;
	return NULL;
}

/* A CIE's initial instructions or an FDE's instructions. */
static const char *program(struct check *c, const uint8_t *p,
			   const uint8_t *end, uint8_t addr_size)
{
	uint32_t depth = 0;
	const char *why, *ops;
	uint8_t op;
	uint64_t v;

	while (p < end) {
		op = *p++;
		switch (op >> 6) {
		case 1:		/* DW_CFA_advance_loc */
		case 3:		/* DW_CFA_restore: the register is under 64 */
			continue;
		case 2:		/* DW_CFA_offset */
			if (!leb(&p, end, &v))
				return "a cut operand";
			note_reg(c, op & 0x3f);
			continue;
		}
		ops = operands[op];
		if (!ops)
			return "an unknown opcode";
		if (op == DW_CFA_remember_state) {
			if (++depth > CFICHECK_DEPTH_MAX)
				return "remember_state nested over 16 deep";
			if (depth > c->seen.depth)
				c->seen.depth = depth;
		} else if (op == DW_CFA_restore_state && depth) {
			depth--;
		}
		for (; *ops; ops++) {
			why = operand(c, *ops, &p, end, addr_size);
			if (why)
				return why;
		}
	}
	return NULL;
}

/* Reads a CIE's augmentation as libdw does when it interns the CIE: the
 * FDE encoding ('R'), and whether FDEs carry a length ('z'). */
static const char *augmentation(const Dwarf_CIE *e, struct cie *out)
{
	const uint8_t *d = e->augmentation_data;
	const uint8_t *end = d + e->augmentation_data_size;
	uint8_t enc = DW_EH_PE_absptr;
	const char *a = e->augmentation;

	out->sized = a[0] == 'z';
	if (a[0] && !out->sized)
		return "an augmentation not read here";
	for (a += out->sized; *a; a++) {
		switch (*a) {
		case 'S':
			continue;
		case 'L':
		case 'R':
		case 'P':
			if (d >= end)
				return "a cut augmentation";
			if (*a == 'R')
				enc = *d;
			if (*a == 'P' && (!skip_size(*d) ||
					  skip_size(*d) > end - d - 1))
				return "a personality not read here";
			d += 1 + (*a == 'P' ? skip_size(*d) : 0);
			continue;
		}
		return "an augmentation not read here";
	}
	out->loc_size = loc_size(enc);
	if (!out->loc_size || enc == ENC_OMIT)
		return "an FDE encoding not read here";
	return NULL;
}

/* The CIE at off, checked once (an FDE may point anywhere). */
static const char *cie_at(struct check *c, Dwarf_Off off, struct cie *out)
{
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	const char *why;
	uint64_t v;

	if (hashmap__get(c->cies, &off, sizeof(off), &v)) {
		out->loc_size = (uint8_t)(v >> 1);
		out->sized = v & 1;
		return NULL;
	}
	if (dwarf_next_cfi(ident, &c->data, true, off, &next, &e) ||
	    !dwarf_cfi_cie_p(&e))
		return "an FDE whose CIE is not one";
	why = augmentation(&e.cie, out);
	if (!why)
		why = program(c, e.cie.initial_instructions,
			      e.cie.initial_instructions_end, out->loc_size);
	if (why)
		return why;
	c->seen.cies++;
	v = (uint64_t)out->loc_size << 1 | out->sized;
	if (hashmap__put(c->cies, &off, sizeof(off), v))
		return "no memory";
	return NULL;
}

static const char *fde(struct check *c, const Dwarf_FDE *e)
{
	const uint8_t *p = e->start;
	const char *why;
	struct cie cie;
	uint64_t len;

	why = cie_at(c, e->CIE_pointer, &cie);
	if (why)
		return why;
	if ((size_t)(e->end - p) < 2u * cie.loc_size)
		return "a cut FDE";
	p += 2u * cie.loc_size;
	if (cie.sized) {
		if (!leb(&p, e->end, &len) || len > (size_t)(e->end - p))
			return "a cut FDE";
		p += len;
	}
	c->seen.fdes++;
	return program(c, p, e->end, cie.loc_size);
}

/* Every entry a walk from the start reads. An entry that cannot be read
 * but whose length can is skipped, as libdw skips it; one whose length
 * cannot ends the walk, as it ends libdw's. */
static const char *walk(struct check *c)
{
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	const char *why;
	int r;

	for (;;) {
		next = off;
		r = dwarf_next_cfi(ident, &c->data, true, off, &next, &e);
		if (r > 0 || (r < 0 && next == off))
			return NULL;
		if (r == 0 && dwarf_cfi_cie_p(&e)) {
			struct cie cie;

			why = cie_at(c, off, &cie);
		} else if (r == 0) {
			why = fde(c, &e.fde);
			if (!why && grow__array(&c->fdes, &c->cap,
						c->nfdes + 1,
						sizeof(*c->fdes), 1024))
				why = "no memory";
			if (!why)
				c->fdes[c->nfdes++] = off;
		} else {
			why = NULL;
		}
		if (why)
			return why;
		off = next;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The FDEs the search table names, which libdw reads where they are
 * said to be. */
static const char *table(struct check *c, uint64_t frame_vaddr,
			 const struct ehframehdr *t)
{
	uint64_t off;

	for (size_t i = 0; i < t->n; i++) {
		off = ehframehdr__fde(t, i) - frame_vaddr;
		if (!c->nfdes ||
		    !bsearch(&off, c->fdes, c->nfdes, sizeof(off), cmp_u64))
			return "an .eh_frame_hdr naming no FDE";
	}
	return NULL;
}

const char *cficheck__eh_frame(const uint8_t *frame, size_t len,
			       uint64_t frame_vaddr,
			       const struct ehframehdr *hdr,
			       struct cficheck_seen *seen)
{
	struct check c = {
		.data = { .d_buf = (void *)frame, .d_size = len,
			  .d_type = ELF_T_BYTE },
	};
	const char *why;

	c.cies = hashmap__new(0);
	if (!c.cies)
		return "no memory";
	why = walk(&c);
	if (!why && hdr)
		why = table(&c, frame_vaddr, hdr);
	else if (!why && c.seen.fdes > CFICHECK_SCAN_FDES_MAX)
		why = "over 4096 FDEs without a search table";
	if (seen)
		*seen = c.seen;
	hashmap__free(c.cies);
	free(c.fdes);
	return why;
}
