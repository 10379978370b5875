/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The user stack walked by CFI in the kernel, for the processes `auto`
 * found frame pointers do not serve: no stack copy, no unwinding in the
 * agent, only the frames sent. The agent compiles each binary's .eh_frame
 * into a table of rows (src/unwind/cfitable.c: "from this pc on, the CFA is
 * rsp or rbp + N, the return address at CFA - 8, rbp saved at CFA + M or
 * unchanged") and gives each such process the list of its executable
 * mappings with their tables (struct tp_cfi_proc). A frame here is: find
 * the mapping of the pc (the last frame's first, then a binary search),
 * the rows of the pc's page (the page index), the row in force (a binary
 * search of at most TP_CFI_PAGE_ROWS rows), then one or two words of stack.
 * Code without CFI (JIT code, a gap between functions) is stepped by frame
 * pointers, as libdwfl does there. Each walk's end is counted by reason. */
#ifndef TAGPROF_CFIWALK_BPF_H
#define TAGPROF_CFIWALK_BPF_H

#include "maps.bpf.h"
#include "stackid.bpf.h"
#include "uregs.bpf.h"

#if defined(__TARGET_ARCH_x86)
#define HAVE_CFIWALK 1

/* fp_window.cflags */
#define CFI_BP_KNOWN	1	/* rbp holds the frame's value */
#define CFI_EXACT	2	/* pc is where the frame was interrupted (the
				   leaf, or past a signal frame), not a return
				   address: look its rule up at pc, not pc - 1 */

/* How a walk ended (fp_window.why), each a counter in tp_stats. */
enum cfi_end {
	CFI_END_OUTERMOST,	/* the outermost frame (or return address 0) */
	CFI_END_NO_MAP,		/* a pc no mapping of the process holds */
	CFI_END_LATER,		/* a mapping whose table is not built yet */
	CFI_END_UNSUPPORTED,	/* a rule the walk cannot follow */
	CFI_END_UNREADABLE,	/* stack memory or rbp not to be had */
	CFI_END_BAD_FRAME,	/* the caller's frame was not above */
	CFI_END_DEPTH,		/* TP_MAX_FRAMES frames */
};

/* The rt_sigframe the kernel builds for a handler (x86-64 ABI): when the
 * handler has returned into the trampoline, rsp points at its ucontext,
 * whose uc_mcontext (struct sigcontext) starts after uc_flags, uc_link and
 * uc_stack; in it, rbp, rsp and rip sit at these offsets. */
#define SIGFRAME_MCONTEXT	40
#define SIGCTX_BP		80
#define SIGCTX_SP		120
#define SIGCTX_IP		128

/* bpf_loop's callback context for one walk. */
struct cfi_walk {
	__u64 *frames;			/* TP_MAX_FRAMES of room */
	struct fp_window *w;		/* the state and the stack pages */
	const struct tp_cfi_proc *proc;
	struct tp_stats *st;
};

/* The 8 bytes at addr of the user stack: from the window's pages (read
 * from sp's page up, each when first needed, as the frame-pointer walk
 * reads them), else by a read of their own. */
static __always_inline bool stack_word(struct fp_window *w, __u64 addr,
				       __u64 *val)
{
	__u64 d = addr - w->base;	/* below base: huge */
	__u32 loaded = w->loaded;

	if (d < FP_WIN - 8) {
		if ((d + 7) / TP_PAGE_SIZE == loaded && !w->ended &&
		    loaded < FP_PAGES) {
			if (bpf_probe_read_user(w->b + loaded * TP_PAGE_SIZE,
						TP_PAGE_SIZE,
						(void *)(w->base +
							 loaded * TP_PAGE_SIZE)))
				w->ended = 1;
			else
				w->loaded = ++loaded;
		}
		if (d + 8 <= (__u64)loaded * TP_PAGE_SIZE) {
			*val = *(__u64 *)(w->b + d);
			return true;
		}
	}
	return !bpf_probe_read_user(val, sizeof(*val), (void *)addr);
}

/* A binary search for the last entry at or below a key, one halving per
 * bpf_loop step: a loop of its own, its body checked once by the
 * verifier, where an unrolled search would be checked once per path. */
struct bsearch {
	const struct tp_cfi_proc *proc;	/* mappings: by start */
	__u32 row;			/* else rows from here: by pc */
	__u64 key;
	__u32 lo, hi;			/* the answer is in [lo, hi) */
	bool failed;
};

static int map_step(__u64 i, void *arg)
{
	struct bsearch *b = arg;
	__u32 mid = (b->lo + b->hi) / 2;

	barrier_var(mid);	/* the bound checked is the one used */
	if (b->hi - b->lo <= 1 || mid >= TP_CFI_MAPS)
		return 1;
	if (b->proc->m[mid].start <= b->key)
		b->lo = mid;
	else
		b->hi = mid;
	return 0;
}

static int row_step(__u64 i, void *arg)
{
	struct bsearch *b = arg;
	__u32 mid = (b->lo + b->hi) / 2, k = b->row + mid;
	struct tp_cfi_row *r;

	if (b->hi - b->lo <= 1)
		return 1;
	r = bpf_map_lookup_elem(&cfi_rows, &k);
	if (!r) {
		b->failed = true;
		return 1;
	}
	if (r->pc <= b->key)
		b->lo = mid;
	else
		b->hi = mid;
	return 0;
}

/* The index of p's mapping that holds pc, trying hint first; -1 if none. */
static __always_inline int cfi_map_of(const struct tp_cfi_proc *p, __u64 pc,
				      __u32 hint)
{
	struct bsearch b = { .proc = p, .key = pc };
	__u32 n = p->n;

	if (n > TP_CFI_MAPS)
		n = TP_CFI_MAPS;
	if (hint < n && pc >= p->m[hint].start && pc < p->m[hint].end)
		return hint;
	if (!n || pc < p->m[0].start)
		return -1;
	b.hi = n;
	bpf_loop(8, map_step, &b, 0);		/* 2^7 > TP_CFI_MAPS */
	if (b.lo >= TP_CFI_MAPS || pc >= p->m[b.lo].end)
		return -1;
	return b.lo;
}

/* The rule in force at rel (an offset from the table's base) in table
 * bin: a row's kind, bp and cfa packed as cfi_row_at unpacks them; a NONE
 * rule where the table has none. Global (collect.bpf.h says why). */
__noinline int cfi_rule_at(__u32 bin, __u64 rel)
{
	struct tp_cfi_bin *tb;
	struct bsearch b = { .key = rel };
	struct tp_cfi_row *r;
	__u32 k;
	__u64 *at;

	/* Checked even where nothing calls it: without bpf_loop, the walk
	 * is not loaded, but this is still checked on its own. */
	if (!loop_helper)
		return TP_CFI_NONE;
	tb = bpf_map_lookup_elem(&cfi_bins, &bin);
	if (!tb || (rel >> 12) >= tb->npages)
		return TP_CFI_NONE;
	k = tb->page + (__u32)(rel >> 12);
	at = bpf_map_lookup_elem(&cfi_pages, &k);
	if (!at)
		return TP_CFI_NONE;
	b.lo = *at;
	k++;
	at = bpf_map_lookup_elem(&cfi_pages, &k);
	if (!at)
		return TP_CFI_NONE;
	/* the row in force at the next page's start may begin in this one */
	b.hi = *at + 1;
	if (b.hi > tb->nrows)
		b.hi = tb->nrows;
	b.row = tb->row;
	bpf_loop(12, row_step, &b, 0);		/* 2^11 > TP_CFI_PAGE_ROWS */
	k = tb->row + b.lo;
	r = bpf_map_lookup_elem(&cfi_rows, &k);
	if (b.failed || !r || r->pc > rel || b.lo >= tb->nrows)
		return TP_CFI_NONE;
	return r->kind | (__u8)r->bp << 8 | (__u32)r->cfa << 16;
}

/* The row in force at rel in table bin, its pc left out. */
static __always_inline struct tp_cfi_row cfi_row_at(__u32 bin, __u64 rel)
{
	__u32 rule = cfi_rule_at(bin, rel);
	struct tp_cfi_row row = { .kind = rule & 0xff, .bp = (__s8)(rule >> 8),
				  .cfa = rule >> 16 };

	return row;
}

/* One frame: records pc, then finds its caller's pc, sp and rbp by the
 * rule in force. False when the walk ends (w->why says why). */
static __always_inline bool cfi_frame(struct cfi_walk *c, struct fp_window *w)
{
	__u64 pc = w->pc, sp = w->sp, bp = w->fp, look, cfa, ra, v;
	__u32 n = w->n, flags = w->cflags, kind;
	struct tp_cfi_row row = { .kind = TP_CFI_NONE };
	int mi;

	if (n >= TP_MAX_FRAMES) {
		w->why = CFI_END_DEPTH;
		return false;
	}
	look = flags & CFI_EXACT ? pc : pc - 1;
	mi = cfi_map_of(c->proc, look, w->hint);
	if (mi >= 0 && mi < TP_CFI_MAPS) {
		w->hint = mi;
		if (c->proc->m[mi].bin >= TP_CFI_LATER)	/* or NO_TABLE */
			row.kind = TP_CFI_NONE;
		else
			row = cfi_row_at(c->proc->m[mi].bin,
					 look - c->proc->m[mi].base);
	}
	kind = TP_CFI_KIND(row.kind);
	/* The symbolizer takes 1 from every frame after the leaf, made for
	 * return addresses. An exact pc (one a signal interrupted) and a
	 * signal trampoline's start (where a handler returns to, not after a
	 * call) go out 1 higher, so that it lands on them, as libdwfl's
	 * activation frames do (src/unwind/dwflspace.c). */
	v = n && ((flags & CFI_EXACT) || kind == TP_CFI_SIGNAL) ? pc + 1 : pc;
	c->frames[n] = v;
	w->hash = mix64(w->hash, v);
	w->n = n + 1;
	if (mi < 0 || mi >= TP_CFI_MAPS) {
		w->why = CFI_END_NO_MAP;
		return false;
	}
	if (c->proc->m[mi].bin == TP_CFI_LATER) {
		w->why = CFI_END_LATER;
		return false;
	}
	switch (kind) {
	case TP_CFI_NONE:	/* frame pointers: {caller's rbp, return} at rbp */
		if (!(flags & CFI_BP_KNOWN) || bp < sp) {
			w->why = CFI_END_UNREADABLE;
			return false;
		}
		stat_inc(c->st, cfi_fp_frames);
		cfa = bp + 16;
		break;
	case TP_CFI_RSP:
		cfa = sp + 8 * (__u64)row.cfa;
		break;
	case TP_CFI_RBP:
		if (!(flags & CFI_BP_KNOWN)) {
			w->why = CFI_END_UNREADABLE;
			return false;
		}
		cfa = bp + 8 * (__u64)row.cfa;
		break;
	case TP_CFI_PLT:
		cfa = sp + 8 * (__u64)row.cfa + ((pc & 15) >= (__u8)row.bp ? 8 : 0);
		break;
	case TP_CFI_SIGNAL:	/* the interrupted registers, from the frame */
		cfa = sp + SIGFRAME_MCONTEXT;
		if (!stack_word(w, cfa + SIGCTX_IP, &ra) ||
		    !stack_word(w, cfa + SIGCTX_SP, &v)) {
			w->why = CFI_END_UNREADABLE;
			return false;
		}
		w->cflags = CFI_EXACT;
		if (stack_word(w, cfa + SIGCTX_BP, &bp)) {
			w->fp = bp;
			w->cflags |= CFI_BP_KNOWN;
		}
		w->pc = ra;
		w->sp = v;
		if (!ra)
			w->why = CFI_END_OUTERMOST;
		return ra != 0;
	case TP_CFI_END:
		w->why = CFI_END_OUTERMOST;
		return false;
	default:
		w->why = CFI_END_UNSUPPORTED;
		return false;
	}
	if (cfa <= sp) {	/* a caller's frame lies above its callee's */
		w->why = CFI_END_BAD_FRAME;
		return false;
	}
	if (!stack_word(w, cfa - 8, &ra)) {
		w->why = CFI_END_UNREADABLE;
		return false;
	}
	if (kind == TP_CFI_NONE) {
		if (stack_word(w, bp, &v))
			w->fp = v;
		else
			flags &= ~CFI_BP_KNOWN;
	} else if (TP_CFI_BP(row.kind) == TP_CFI_BP_AT) {
		if (stack_word(w, cfa + 8 * (__s64)row.bp, &v))
			w->fp = v;
		else
			flags &= ~CFI_BP_KNOWN;
	} else if (TP_CFI_BP(row.kind) == TP_CFI_BP_UNDEF) {
		flags &= ~CFI_BP_KNOWN;
	}
	w->cflags = flags & ~CFI_EXACT;
	w->pc = ra;
	w->sp = cfa;
	if (!ra) {		/* where libdwfl ends too */
		w->why = CFI_END_OUTERMOST;
		return false;
	}
	return true;
}

static int cfi_step(__u64 i, void *arg)
{
	struct cfi_walk *c = arg;

	return cfi_frame(c, c->w) ? 0 : 1;
}

/* Counts how the walk ended. */
static __always_inline void cfi_count_end(struct tp_stats *st, __u32 why)
{
	switch (why) {
	case CFI_END_OUTERMOST:
		stat_inc(st, cfi_end);
		break;
	case CFI_END_NO_MAP:
		stat_inc(st, cfi_no_map);
		break;
	case CFI_END_LATER:
		stat_inc(st, cfi_later);
		break;
	case CFI_END_UNSUPPORTED:
		stat_inc(st, cfi_unsupported);
		break;
	case CFI_END_UNREADABLE:
		stat_inc(st, cfi_unreadable);
		break;
	case CFI_END_BAD_FRAME:
		stat_inc(st, cfi_bad_frame);
		break;
	default:
		stat_inc(st, cfi_depth);
	}
}

/* Fills frames (TP_MAX_FRAMES of room) with the walk of process p's user
 * stack from the user registers; returns the frames found (0: the
 * registers cannot be had), which w->hash holds folded. */
static __always_inline __u32 walk_user_cfi(bpf_user_pt_regs_t *regs,
					   __u64 *frames, struct fp_window *w,
					   const struct tp_cfi_proc *p,
					   struct tp_stats *st)
{
	struct cfi_walk c = { .frames = frames, .w = w, .proc = p,
			      .st = st };
	struct uregs_at at;
	__u32 n;

	if (!find_user_regs(regs, &at))
		return 0;
	w->pc = USER_REG(&at, ip);
	w->sp = USER_REG(&at, sp);
	w->fp = USER_REG(&at, bp);
	w->base = w->sp & ~(__u64)(TP_PAGE_SIZE - 1);
	w->cflags = CFI_BP_KNOWN | CFI_EXACT;
	w->hint = 0;
	w->why = CFI_END_DEPTH;
	w->n = 0;
	w->loaded = 0;
	w->ended = 0;
	w->hash = 0;
	bpf_loop(TP_MAX_FRAMES + 1, cfi_step, &c, 0);
	stat_inc(st, cfi_walks);
	cfi_count_end(st, w->why);
	n = w->n;
	return n > TP_MAX_FRAMES ? TP_MAX_FRAMES : n;
}

#else
#define HAVE_CFIWALK 0
#endif

#endif
