// SPDX-License-Identifier: BSD-2-Clause
/* Frame-pointer chains with frameless leaves repaired (fpstack.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "proc/procfs.h"
#include "proc/proctable.h"
#include "sample_event.h"
#include "sym/elfsym.h"
#include "unwind/bincache.h"
#include "unwind/cfirule.h"
#include "unwind/fpstack.h"
#include "unwind/unwind.h"
#include "util/hashmap.h"

enum prologue {
	PRO_UNKNOWN = 0,
	PRO_NOFRAME,		/* no push %rbp; mov %rsp,%rbp at the start */
	PRO_FRAME,		/* sets up rbp; push at offset 0 or 4 */
};

/* Where a leaf's return address is (leaf_ra_word). */
enum leaf_ra {
	LEAF_NONE = 0,		/* the frame-pointer walk has the caller */
	LEAF_WORD0 = 1,		/* ... in sp_words[0], then [1] */
	LEAF_DEEP = 3,		/* deeper than the words BPF sends */
};

/* Classifies the function at addr in the process, and where its push is.
 * Its code is read from the process's memory, which gives EFAULT where a
 * mapped file was cut short (reading the file could SIGBUS). */
static enum prologue read_prologue(uint32_t pid, uint64_t addr,
				   unsigned *push_at)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	uint8_t p[8];
	unsigned i = 0;

	if (procfs__read_mem((int)pid, addr, p, sizeof(p)))
		return PRO_UNKNOWN;
	if (!memcmp(p, endbr64, 4))
		i = 4;
	*push_at = i;
	/* push %rbp, then mov %rsp,%rbp (either encoding) */
	if (p[i] == 0x55 && p[i + 1] == 0x48 &&
	    ((p[i + 2] == 0x89 && p[i + 3] == 0xe5) ||
	     (p[i + 2] == 0x8b && p[i + 3] == 0xec)))
		return PRO_FRAME;
	return PRO_NOFRAME;
}

/* The CFA at vaddr as an offset from rsp: 8 when nothing is pushed yet
 * (the return address is the word at the stack pointer), 16 after one push,
 * and so on; 0 when the CFA is not rsp-based (rbp holds the function's own
 * frame); -1 when no CFI covers vaddr. *fn gets the start of the FDE's
 * range. */
static int cfa_sp_offset(const struct bincache_entry *b, uint64_t vaddr,
			 uint64_t *fn)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr start, end;
	Dwarf_Op *ops;
	size_t nops;
	int ret = -1;

	if (!b->cfi || dwarf_cfi_addrframe(b->cfi, vaddr, &frame) || !frame)
		return -1;
	if (dwarf_frame_info(frame, &start, &end, NULL) >= 0)
		*fn = start;
	if (!dwarf_frame_cfa(frame, &ops, &nops)) {
		ret = 0;
		if (nops == 1 && ops[0].atom == DW_OP_bregx &&
		    ops[0].number == DW_RSP && ops[0].number2 >= 8 &&
		    ops[0].number2 <= 4096 && !(ops[0].number2 & 7))
			ret = (int)ops[0].number2;
	}
	free(frame);
	return ret;
}

/* Where the return address of the leaf at vaddr is, when the frame-pointer
 * walk missed it: LEAF_WORD0 + i for the word i above the stack pointer,
 * LEAF_NONE when the walk has the caller.
 *
 * Where CFI covers vaddr it decides: an rsp-based CFA means rbp does not
 * hold the function's frame yet (or again: at its ret), so the walk went
 * from the caller's rbp to the caller's caller; the return address is at
 * CFA-8. A framed function between its push and its mov is CFA rsp+16,
 * which is why BPF sends two words. Without CFI, only the prologue tells:
 * no push %rbp at all, or the pc before it. */
static unsigned leaf_ra_word(struct proctable *procs, struct bincache *bins,
			     struct proc *p, struct proc_map *m,
			     struct bincache_entry *b, uint64_t vaddr)
{
	uint64_t fn = 0, bias, v;
	struct elfsym *syms;
	unsigned push_at = 0, where;
	enum prologue pro;
	int cfa;

	/* (A table is NULL once a start-over found no memory.) */
	if (b->pcs && hashmap__get(b->pcs, &vaddr, sizeof(vaddr), &v))
		return v - 1;
	cfa = cfa_sp_offset(b, vaddr, &fn);
	if (cfa >= 0) {
		where = !cfa ? LEAF_NONE :
			cfa <= 2 * 8 ? LEAF_WORD0 + cfa / 8 - 1 : LEAF_DEEP;
		bincache__remember(bins, &b->pcs, vaddr, where + 1);
		return where;
	}
	/* The function's entry: its symbol's start, or its FDE's where no
	 * symbol covers it (a stripped library's local functions). */
	syms = m->bin && !bincache__is_vdso(bins, b) ?
		       proctable__binary_syms(procs, p, m->bin) : NULL;
	if (syms && elfsym__lookup(syms, vaddr, &v) && v > fn)
		fn = v;		/* the closer one: an FDE may start later */
	where = LEAF_NONE;
	if (fn && bincache__map_bias(b, m->start, m->offset, &bias)) {
		if (b->fns && hashmap__get(b->fns, &fn, sizeof(fn), &v)) {
			pro = (v - 1) & 0xff;
			push_at = (v - 1) >> 8;
		} else {
			pro = read_prologue(p->pid, bias + fn, &push_at);
			bincache__remember(bins, &b->fns, fn,
					   ((uint64_t)push_at << 8 | pro) + 1);
		}
		if (pro == PRO_NOFRAME ||
		    (pro == PRO_FRAME && vaddr - fn <= push_at))
			where = LEAF_WORD0;
	}
	bincache__remember(bins, &b->pcs, vaddr, where + 1);
	return where;
}

size_t fpstack__walk(struct proctable *procs, struct bincache *bins,
		     struct unwind_stats *st, struct proc *p,
		     const struct unwind_sample *s, uint64_t *out)
{
	size_t n = s->nfp > TP_MAX_FRAMES ? TP_MAX_FRAMES : s->nfp, k;
	uint64_t pc, vaddr, ra;
	struct proc_map *m;
	struct bincache_entry *b;
	unsigned where;

	memcpy(out, s->fp, n * sizeof(*out));
	if (!n || !p || !s->has_sp_words || p->stale)
		return n;
	/* After a syscall fp[0] is a return address: its call is before. */
	pc = s->in_kernel ? s->fp[0] - 1 : s->fp[0];
	m = proctable__find_map(procs, p, pc, s->time_ns);
	if (!m || !m->bin)
		return n;
	b = bincache__get(bins, p->pid, m);
	if (!b ||
	    !bincache__off_to_vaddr(b, pc - m->start + m->offset, &vaddr))
		return n;
	where = leaf_ra_word(procs, bins, p, m, b, vaddr);
	if (where == LEAF_NONE)
		return n;
	if (where == LEAF_DEEP) {
		st->leaf_deep++;
		return n;
	}
	ra = s->sp_words[where - LEAF_WORD0];
	/* A plausible return address: in executable memory, and not what the
	 * walk found next anyway. */
	if (!proctable__map_at(p, ra) || (n > 1 && s->fp[1] == ra))
		return n;
	k = n < TP_MAX_FRAMES ? n : TP_MAX_FRAMES - 1;
	memmove(out + 2, out + 1, (k - 1) * sizeof(*out));
	out[1] = ra;
	st->leaf_recovered++;
	return k + 1;
}
