// SPDX-License-Identifier: BSD-2-Clause
/* x86-64 CFI rules packed for caching; see cfirule.h. The decoding follows
 * what dwarf_frame_cfa and dwarf_frame_register hand out (libdw.h): the
 * CFA as one DW_OP_bregx, a register saved at CFA + N as
 * DW_OP_call_frame_cfa plus an offset, "same value" as no operations and a
 * NULL pointer, "undefined" as no operations and ops_mem. */
#include <dwarf.h>
#include <stdlib.h>

#include "sample_event.h"
#include "unwind/cfirule.h"

enum { DW_RA = DW_RIP };	/* the return address's column */

/* Packed layout (bits): 2 valid, 3 end, 4-5 CFA register, 6-7 rbp rule,
 * 8 signal frame, 16-31 rbp offset (int16), 32-63 CFA offset (int32). A
 * PLT stub's CFA (CFA_PLT) is rsp + the CFA offset, plus 8 where the pc's
 * low 4 bits are at or above the rbp offset's value: the expression every
 * x86-64 linker writes for its lazy-binding stubs. */
#define R_VALID		(1ull << 2)
#define R_END		(1ull << 3)
#define R_CFA_SHIFT	4
#define R_BP_SHIFT	6
#define R_SIGNAL	(1ull << 8)
enum { CFA_RSP = 1, CFA_RBP = 2, CFA_PLT = 3 };
enum { BP_SAME = 0, BP_AT = 1, BP_UNDEF = 2 };

static uint64_t pack(unsigned cfa_reg, int32_t cfa_off, unsigned bp_rule,
		     int16_t bp_off, bool end)
{
	return R_VALID | (end ? R_END : 0) |
	       (uint64_t)cfa_reg << R_CFA_SHIFT |
	       (uint64_t)bp_rule << R_BP_SHIFT |
	       (uint64_t)(uint16_t)bp_off << 16 |
	       (uint64_t)(uint32_t)cfa_off << 32;
}

/* N of a "saved at CFA + N" rule; false for anything else (a value rule
 * ends in DW_OP_stack_value, which matches none of these). */
static bool at_cfa_plus(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (!nops || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 1) {
		*off = 0;
		return true;
	}
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;	/* libdw wraps negatives */
		return true;
	}
	if (nops == 3 && (ops[1].atom == DW_OP_consts ||
			  ops[1].atom == DW_OP_constu) &&
	    ops[2].atom == DW_OP_plus) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/* The caller's rsp must be the CFA: "value CFA + 0". */
static bool sp_is_cfa(Dwarf_Frame *f)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	if (dwarf_frame_register(f, DW_RSP, mem, &ops, &nops))
		return false;
	return nops == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	       ops[1].atom == DW_OP_stack_value;
}

/* The PLT stub expression: breg7 (rsp) + N; breg16 (rip) + 0; lit15; and;
 * litK; ge; lit3; shl; plus. Gives N and K. */
static bool plt_cfa(const Dwarf_Op *ops, size_t nops, int64_t *off,
		    unsigned *k)
{
	static const uint8_t tail[] = { DW_OP_and, 0, DW_OP_ge, DW_OP_lit3,
					DW_OP_shl, DW_OP_plus };

	if (nops != 9 || ops[0].atom != DW_OP_breg7 ||
	    ops[1].atom != DW_OP_breg16 || ops[1].number ||
	    ops[2].atom != DW_OP_lit15 || ops[4].atom < DW_OP_lit0 ||
	    ops[4].atom > DW_OP_lit15)
		return false;
	for (size_t i = 0; i < sizeof(tail); i++)
		if (tail[i] && ops[3 + i].atom != tail[i])
			return false;
	*off = (int64_t)ops[0].number;
	*k = ops[4].atom - DW_OP_lit0;
	return true;
}

static uint64_t decode(Dwarf_Frame *f)
{
	Dwarf_Op mem[3], *ops;
	Dwarf_Addr start, end;
	unsigned cfa_reg, bp_rule, plt_k;
	int64_t off, bp_off = 0;
	size_t nops;
	bool signal;

	if (dwarf_frame_info(f, &start, &end, &signal) != DW_RA)
		return CFIRULE_UNSUPPORTED;
	/* A signal trampoline's registers come from the signal frame, which
	 * the kernel lays out the same for every one (its CFI says so in
	 * expressions): the walk reads them there. */
	if (signal)
		return R_VALID | R_SIGNAL;
	/* Return address. */
	if (dwarf_frame_register(f, DW_RA, mem, &ops, &nops))
		return CFIRULE_UNSUPPORTED;
	if (!nops && ops == mem)
		return pack(0, 0, BP_UNDEF, 0, true);
	if (!at_cfa_plus(ops, nops, &off) || off != -8)
		return CFIRULE_UNSUPPORTED;
	/* CFA. */
	if (dwarf_frame_cfa(f, &ops, &nops))
		return CFIRULE_UNSUPPORTED;
	if (plt_cfa(ops, nops, &off, &plt_k))
		return off >= 0 && off <= INT32_MAX ?
			       pack(CFA_PLT, (int32_t)off, BP_SAME,
				    (int16_t)plt_k, false) :
			       CFIRULE_UNSUPPORTED;
	if (nops != 1 || ops[0].atom != DW_OP_bregx)
		return CFIRULE_UNSUPPORTED;
	if (ops[0].number == DW_RSP)
		cfa_reg = CFA_RSP;
	else if (ops[0].number == DW_RBP)
		cfa_reg = CFA_RBP;
	else
		return CFIRULE_UNSUPPORTED;
	off = (int64_t)ops[0].number2;
	if (off < INT32_MIN || off > INT32_MAX || !sp_is_cfa(f))
		return CFIRULE_UNSUPPORTED;
	/* rbp. */
	if (dwarf_frame_register(f, DW_RBP, mem, &ops, &nops))
		return CFIRULE_UNSUPPORTED;
	if (!nops)
		bp_rule = ops ? BP_UNDEF : BP_SAME;
	else if (at_cfa_plus(ops, nops, &bp_off) && bp_off >= INT16_MIN &&
		 bp_off <= INT16_MAX)
		bp_rule = BP_AT;
	else
		return CFIRULE_UNSUPPORTED;
	return pack(cfa_reg, (int32_t)off, bp_rule, (int16_t)bp_off, false);
}

uint64_t cfirule__row(Dwarf_CFI *cfi, uint64_t vaddr, uint64_t *start,
		      uint64_t *end)
{
	Dwarf_Frame *f = NULL;
	Dwarf_Addr s, e;
	uint64_t rule;

	if (!cfi || dwarf_cfi_addrframe(cfi, vaddr, &f) || !f)
		return CFIRULE_NO_CFI;
	rule = decode(f);
	if (dwarf_frame_info(f, &s, &e, NULL) < 0 || s > vaddr || e <= vaddr)
		s = vaddr, e = vaddr + 1;	/* cannot happen: one address */
	free(f);
	*start = s;
	*end = e;
	return rule;
}

uint64_t cfirule__at(Dwarf_CFI *cfi, uint64_t vaddr)
{
	uint64_t start, end;

	return cfirule__row(cfi, vaddr, &start, &end);
}

bool cfirule__usable(uint64_t rule)
{
	return (rule & R_VALID) && !(rule & R_SIGNAL) &&
	       ((rule >> R_CFA_SHIFT) & 3) != CFA_PLT;
}

/* Offsets in 8-byte units, as the kernel's rows hold them. */
static bool in_units(int64_t off, int64_t lo, int64_t hi, int64_t *units)
{
	if (off % 8 || off / 8 < lo || off / 8 > hi)
		return false;
	*units = off / 8;
	return true;
}

void cfirule__kernel_row(uint64_t rule, struct tp_cfi_row *row)
{
	unsigned cfa_reg = (rule >> R_CFA_SHIFT) & 3;
	unsigned bp_rule = (rule >> R_BP_SHIFT) & 3;
	int64_t cfa_off = (int32_t)(uint32_t)(rule >> 32);
	int64_t bp_off = (int16_t)(uint16_t)(rule >> 16), cfa, bp = 0;
	static const uint8_t kinds[] = { [CFA_RSP] = TP_CFI_RSP,
					 [CFA_RBP] = TP_CFI_RBP,
					 [CFA_PLT] = TP_CFI_PLT };
	static const uint8_t bps[] = { [BP_SAME] = TP_CFI_BP_SAME,
				       [BP_AT] = TP_CFI_BP_AT,
				       [BP_UNDEF] = TP_CFI_BP_UNDEF };

	row->cfa = 0;
	row->bp = 0;
	if (rule == CFIRULE_NO_CFI) {
		row->kind = TP_CFI_NONE;
		return;
	}
	row->kind = TP_CFI_UNSUPPORTED;
	if (!(rule & R_VALID))
		return;
	if (rule & R_SIGNAL) {
		row->kind = TP_CFI_SIGNAL;
		return;
	}
	if (rule & R_END) {
		row->kind = TP_CFI_END;
		return;
	}
	if (!cfa_reg || bp_rule > BP_UNDEF || !in_units(cfa_off, 0, UINT16_MAX, &cfa))
		return;
	if (cfa_reg == CFA_PLT)
		bp = bp_off;		/* the threshold, not an offset */
	else if (bp_rule == BP_AT && !in_units(bp_off, INT8_MIN, INT8_MAX, &bp))
		return;
	row->kind = kinds[cfa_reg] | (cfa_reg == CFA_PLT ? 0 : bps[bp_rule]);
	row->cfa = (uint16_t)cfa;
	row->bp = (int8_t)bp;
}

enum cfirule_step cfirule__step(uint64_t rule, struct cfiregs *r,
				cfirule_read_fn read, void *arg)
{
	unsigned cfa_reg = (rule >> R_CFA_SHIFT) & 3;
	unsigned bp_rule = (rule >> R_BP_SHIFT) & 3;
	int64_t cfa_off = (int32_t)(uint32_t)(rule >> 32);
	int64_t bp_off = (int16_t)(uint16_t)(rule >> 16);
	uint64_t cfa, ra, bp;

	if (rule & R_END)
		return CFIRULE_END;
	if (cfa_reg == CFA_RBP && !r->bp_known)
		return CFIRULE_STOP;
	cfa = (cfa_reg == CFA_RBP ? r->bp : r->sp) + (uint64_t)cfa_off;
	if (!read(arg, cfa - 8, &ra))
		return CFIRULE_STOP;
	if (bp_rule == BP_AT)
		r->bp_known = read(arg, cfa + (uint64_t)bp_off, &bp) &&
			      (r->bp = bp, true);
	else if (bp_rule == BP_UNDEF)
		r->bp_known = false;
	r->pc = ra;
	r->sp = cfa;
	return CFIRULE_CALLER;
}
