// SPDX-License-Identifier: BSD-2-Clause
/* x86-64 CFI rules packed for caching; see cfirule.h. The decoding follows
 * what dwarf_frame_cfa and dwarf_frame_register hand out (libdw.h): the
 * CFA as one DW_OP_bregx, a register saved at CFA + N as
 * DW_OP_call_frame_cfa plus an offset, "same value" as no operations and a
 * NULL pointer, "undefined" as no operations and ops_mem. */
#include <dwarf.h>
#include <stdlib.h>

#include "unwind/cfirule.h"

enum { DW_RA = DW_RIP };	/* the return address's column */

/* Packed layout (bits): 2 valid, 3 end, 4-5 CFA register, 6-7 rbp rule,
 * 16-31 rbp offset (int16), 32-63 CFA offset (int32). */
#define R_VALID		(1ull << 2)
#define R_END		(1ull << 3)
#define R_CFA_SHIFT	4
#define R_BP_SHIFT	6
enum { CFA_RSP = 1, CFA_RBP = 2 };
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

static uint64_t decode(Dwarf_Frame *f)
{
	Dwarf_Op mem[3], *ops;
	Dwarf_Addr start, end;
	unsigned cfa_reg, bp_rule;
	int64_t off, bp_off = 0;
	size_t nops;
	bool signal;

	if (dwarf_frame_info(f, &start, &end, &signal) != DW_RA || signal)
		return CFIRULE_UNSUPPORTED;
	/* Return address. */
	if (dwarf_frame_register(f, DW_RA, mem, &ops, &nops))
		return CFIRULE_UNSUPPORTED;
	if (!nops && ops == mem)
		return pack(0, 0, BP_UNDEF, 0, true);
	if (!at_cfa_plus(ops, nops, &off) || off != -8)
		return CFIRULE_UNSUPPORTED;
	/* CFA. */
	if (dwarf_frame_cfa(f, &ops, &nops) || nops != 1 ||
	    ops[0].atom != DW_OP_bregx)
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

uint64_t cfirule__at(Dwarf_CFI *cfi, uint64_t vaddr)
{
	Dwarf_Frame *f = NULL;
	uint64_t rule;

	if (!cfi || dwarf_cfi_addrframe(cfi, vaddr, &f) || !f)
		return CFIRULE_NO_CFI;
	rule = decode(f);
	free(f);
	return rule;
}

bool cfirule__usable(uint64_t rule)
{
	return rule & R_VALID;
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
