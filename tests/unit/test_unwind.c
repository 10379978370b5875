/* The unwinder's parts on this process and on inputs the test builds: the
 * --unwind options; the `auto` policy's marks; the binaries' cache; the
 * frameless-leaf repair of a frame-pointer chain; and a CFI unwind of a
 * stack copy made here, by the cached rules and by libdwfl, which must
 * agree. */
#include "check.h"
#include "proc/proctable.h"
#include "sample_event.h"
#include "unwind/autopolicy.h"
#include "unwind/bincache.h"
#include "unwind/cfirule.h"
#include "unwind/cfitable.h"
#include "unwind/cfistack.h"
#include "unwind/dwflspace.h"
#include "unwind/fpstack.h"
#include "unwind/mode.h"
#include "unwind/unwind.h"

#include <dlfcn.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

/* Three functions with hand-written CFI: a leaf that sets up no frame, one
 * that does (push %rbp; mov %rsp,%rbp), and a caller of the leaf with a
 * frame, whose call returns to uw_caller_ret. */
__asm__(".text\n"
	".globl uw_leaf\n.type uw_leaf,@function\n"
	"uw_leaf:\n.cfi_startproc\n"
	"nop\nnop\nret\n"
	".cfi_endproc\n.size uw_leaf, .-uw_leaf\n"
	".globl uw_framed\n.type uw_framed,@function\n"
	"uw_framed:\n.cfi_startproc\n"
	"push %rbp\n.cfi_def_cfa_offset 16\n.cfi_offset %rbp, -16\n"
	"mov %rsp, %rbp\n.cfi_def_cfa_register %rbp\n"
	"nop\npop %rbp\n.cfi_def_cfa %rsp, 8\nret\n"
	".cfi_endproc\n.size uw_framed, .-uw_framed\n"
	".globl uw_pushes2\n.type uw_pushes2,@function\n"
	"uw_pushes2:\n.cfi_startproc\n"
	"push %rbx\n.cfi_def_cfa_offset 16\n.cfi_offset %rbx, -16\n"
	"push %r12\n.cfi_def_cfa_offset 24\n.cfi_offset %r12, -24\n"
	"nop\npop %r12\n.cfi_def_cfa_offset 16\n"
	"pop %rbx\n.cfi_def_cfa_offset 8\nret\n"
	".cfi_endproc\n.size uw_pushes2, .-uw_pushes2\n"
	".globl uw_caller\n.type uw_caller,@function\n"
	"uw_caller:\n.cfi_startproc\n"
	"push %rbp\n.cfi_def_cfa_offset 16\n.cfi_offset %rbp, -16\n"
	"mov %rsp, %rbp\n.cfi_def_cfa_register %rbp\n"
	"call uw_leaf\n"
	".globl uw_caller_ret\nuw_caller_ret:\n"
	"pop %rbp\n.cfi_def_cfa %rsp, 8\nret\n"
	".cfi_endproc\n.size uw_caller, .-uw_caller\n");

void uw_leaf(void);
void uw_framed(void);
void uw_pushes2(void);
void uw_caller(void);
void uw_caller_ret(void);

#define ADDR(f) ((uint64_t)(uintptr_t)(f))

static void test_mode(void)
{
	CHECK(unwind_mode__parse("fp") == TP_UNWIND_FP);
	CHECK(unwind_mode__parse("dwarf") == TP_UNWIND_DWARF);
	CHECK(unwind_mode__parse("auto") == TP_UNWIND_AUTO);
	CHECK(unwind_mode__parse("DWARF") == -1 && unwind_mode__parse(NULL) == -1);
	CHECK(!strcmp(unwind_mode__name(TP_UNWIND_DWARF), "dwarf"));
	CHECK(!strcmp(unwind_mode__name(TP_UNWIND_FP), "fp"));
	CHECK(!strcmp(unwind_mode__name(TP_UNWIND_AUTO), "auto"));
	CHECK(unwind_mode__stack_bytes(0) == 0);
	CHECK(unwind_mode__stack_bytes(1) == 8);
	CHECK(unwind_mode__stack_bytes(4096) == 4096);
	CHECK(unwind_mode__stack_bytes(1ull << 40) == TP_STACK_MAX);
}

/* CFI helps when it has more than two frames the chain lacks past their
 * common prefix (glibc's _start and __libc_start_main). */
static void test_cfi_helps(void)
{
	uint64_t fp[3] = { 1, 2, 3 }, cfi[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint64_t other[4] = { 1, 9, 10, 11 };

	CHECK(!autopolicy__cfi_helps(fp, 3, cfi, 3));
	CHECK(!autopolicy__cfi_helps(fp, 3, cfi, 5));	/* two more */
	CHECK(autopolicy__cfi_helps(fp, 3, cfi, 6));	/* three more */
	CHECK(!autopolicy__cfi_helps(fp, 3, cfi, 2));
	/* Diverging after the leaf: three frames the chain does not have. */
	CHECK(autopolicy__cfi_helps(fp, 3, other, 4));
	CHECK(!autopolicy__cfi_helps(fp, 3, other, 3));
}

static size_t take(struct autopolicy *a, struct unwind_mark *m)
{
	return autopolicy__take(a, m, 8);
}

/* A probe that helps marks its process; a marked process is unmarked
 * after 256 copies none of which helped; the decisions are taken once. */
static void test_auto_marks(void)
{
	struct unwind_stats st = { 0 };
	struct autopolicy *a = autopolicy__new(&st);
	struct automark m = { 0 }, other = { 0 };
	struct unwind_mark got[8];

	CHECK(a);
	autopolicy__observe(a, 10, &m, true, false);
	CHECK(!m.marked && take(a, got) == 0);
	autopolicy__observe(a, 10, &m, true, true);
	CHECK(m.marked && st.marked == 1);
	CHECK(take(a, got) == 1 && got[0].pid == 10 && got[0].copy);
	CHECK(take(a, got) == 0);
	autopolicy__observe(a, 10, &m, true, true);	/* marked already */
	CHECK(take(a, got) == 0 && st.marked == 1);
	/* A window in which one copy helped keeps the mark. */
	autopolicy__observe(a, 10, &m, false, true);
	for (int i = 1; i < 256; i++)
		autopolicy__observe(a, 10, &m, false, false);
	CHECK(m.marked && m.win_copies == 0 && take(a, got) == 0);
	for (int i = 0; i < 255; i++)
		autopolicy__observe(a, 10, &m, false, false);
	CHECK(m.marked);
	autopolicy__observe(a, 10, &m, false, false);
	CHECK(!m.marked && st.unmarked == 1);
	CHECK(take(a, got) == 1 && got[0].pid == 10 && !got[0].copy);
	/* Samples of a process that is not marked change nothing. */
	autopolicy__observe(a, 11, &other, false, true);
	CHECK(!other.marked && take(a, got) == 0);
	autopolicy__free(a);
}

/* A mark the BPF side could not take is undone, and asked again by the
 * next probe that helps; a process that goes takes its mark back. */
static void test_auto_refused_forget(void)
{
	struct unwind_stats st = { 0 };
	struct autopolicy *a = autopolicy__new(&st);
	struct automark m = { 0 };
	struct unwind_mark got[8];

	CHECK(a);
	autopolicy__observe(a, 20, &m, true, true);
	CHECK(take(a, got) == 1);
	autopolicy__refused(a, &m, false);	/* not what was decided */
	CHECK(m.marked && st.marked == 1);
	autopolicy__refused(a, &m, true);
	CHECK(!m.marked && st.marked == 0);
	autopolicy__observe(a, 20, &m, true, true);
	CHECK(m.marked && st.marked == 1);
	CHECK(take(a, got) == 1 && got[0].copy);
	autopolicy__forget(a, 20, &m);
	CHECK(take(a, got) == 1 && got[0].pid == 20 && !got[0].copy);
	CHECK(st.unmarked == 0);	/* gone, not unhelped */
	autopolicy__free(a);
}

/* At most 1024 processes are marked at once; one that goes makes room. */
static void test_auto_bound(void)
{
	static struct automark m[1025];
	struct unwind_stats st = { 0 };
	struct autopolicy *a = autopolicy__new(&st);
	struct unwind_mark got[8];

	CHECK(a);
	memset(m, 0, sizeof(m));
	for (uint32_t i = 0; i < 1025; i++)
		autopolicy__observe(a, 1000 + i, &m[i], true, true);
	CHECK(m[1023].marked && !m[1024].marked && st.marked == 1024);
	autopolicy__forget(a, 1000, &m[0]);
	autopolicy__observe(a, 2024, &m[1024], true, true);
	CHECK(m[1024].marked && st.marked == 1025);
	while (take(a, got))
		;
	autopolicy__free(a);
}

struct self {
	struct proctable *t;
	struct proc *p;
	struct unwind_stats st;
	struct bincache *bins;
};

static bool self_open(struct self *s)
{
	memset(s, 0, sizeof(*s));
	elf_version(EV_CURRENT);
	s->t = proctable__new();
	s->p = s->t ? proctable__get(s->t, getpid(), 0, "test_unwind") : NULL;
	s->bins = bincache__new(&s->st);
	return s->p && s->bins;
}

static void self_close(struct self *s)
{
	bincache__free(s->bins);
	proctable__free(s->t);
}

/* This test's own executable, analysed: its file offsets and addresses
 * agree with where it is mapped, its CFI gives rules, and a second look
 * finds the same entry. */
static void test_bincache_self(void)
{
	struct self s;
	struct proc_map *m;
	struct bincache_entry *b;
	uint64_t bias, vaddr;

	CHECK(self_open(&s));
	m = proctable__find_map(s.t, s.p, ADDR(uw_leaf), 0);
	CHECK(m && m->bin);
	b = bincache__get(s.bins, getpid(), m);
	CHECK(b && b->ok && b->cfi && b->img);
	CHECK(bincache__get(s.bins, getpid(), m) == b);
	CHECK(!bincache__is_vdso(s.bins, b));
	CHECK(bincache__map_bias(b, m->start, m->offset, &bias));
	CHECK(bincache__off_to_vaddr(b, ADDR(uw_leaf) - m->start + m->offset,
				     &vaddr));
	CHECK(bias + vaddr == ADDR(uw_leaf));
	CHECK(cfirule__usable(bincache__rule(s.bins, b, vaddr)));
	CHECK(bincache__rule(s.bins, b, vaddr) ==
	      cfirule__at(b->cfi, vaddr));
	CHECK(s.st.cfi_too_big == 0 && s.st.bins_reset == 0);
	self_close(&s);
}

/* A sweep frees the entries no walk asked for within its keep time, and
 * their bytes and answers leave the counts; the others stay, their
 * answers started over when older than the sweep's bound. */
static void test_bincache_sweep(void)
{
	size_t bins, bytes, answers;
	struct bincache_entry *b;
	struct proc_map *m;
	struct self s;
	uint64_t vaddr;

	CHECK(self_open(&s));
	m = proctable__find_map(s.t, s.p, ADDR(uw_leaf), 0);
	CHECK(m && m->bin);
	b = bincache__get(s.bins, getpid(), m);
	CHECK(b && b->ok);
	CHECK(bincache__off_to_vaddr(b, ADDR(uw_leaf) - m->start + m->offset,
				     &vaddr));
	bincache__rule(s.bins, b, vaddr);
	bincache__usage(s.bins, &bins, &bytes, &answers);
	CHECK(bins == 1 && bytes > 0 && answers == 1);
	/* Asked just now: kept, with its answers. */
	bincache__sweep(s.bins, BINCACHE_KEEP_NS, BINCACHE_ANSWERS_NS);
	bincache__usage(s.bins, &bins, &bytes, &answers);
	CHECK(bins == 1 && bytes > 0 && answers == 1);
	/* Kept, its answers started over; they come back the same. */
	bincache__sweep(s.bins, BINCACHE_KEEP_NS, 0);
	bincache__usage(s.bins, &bins, &bytes, &answers);
	CHECK(bins == 1 && bytes > 0 && answers == 0);
	CHECK(b->cfi && bincache__rule(s.bins, b, vaddr) ==
			cfirule__at(b->cfi, vaddr));
	CHECK(cfirule__usable(bincache__rule(s.bins, b, vaddr)));
	bincache__usage(s.bins, &bins, &bytes, &answers);
	CHECK(answers == 1);
	bincache__sweep(s.bins, 0, 0);
	bincache__usage(s.bins, &bins, &bytes, &answers);
	CHECK(bins == 0 && bytes == 0 && answers == 0);
	/* Asked again, it is read again. */
	b = bincache__get(s.bins, getpid(), m);
	CHECK(b && b->ok && b->cfi);
	bincache__usage(s.bins, &bins, &bytes, &answers);
	CHECK(bins == 1 && bytes > 0);
	self_close(&s);
}

/* The kernel's walk from a frameless leaf skips its caller: the word at
 * the stack pointer puts it back, or the one above it after a push. From a
 * function with its frame set up, it does not. */
static void test_fpstack_leaf(void)
{
	uint64_t fp[2] = { ADDR(uw_leaf) + 1, 0x1000 }, out[TP_MAX_FRAMES];
	struct unwind_sample smp = {
		.pid = getpid(), .tid = getpid(), .fp = fp, .nfp = 2,
		.has_sp_words = true, .sp_words = { ADDR(uw_caller_ret), 0 },
	};
	struct self s;
	size_t n;

	CHECK(self_open(&s));
	n = fpstack__walk(s.t, s.bins, &s.st, s.p, &smp, out);
	CHECK(n == 3 && out[0] == fp[0] && out[1] == ADDR(uw_caller_ret) &&
	      out[2] == fp[1]);
	CHECK(s.st.leaf_recovered == 1);
	/* Without the word, or without the process: the chain as it is. */
	smp.has_sp_words = false;
	CHECK(fpstack__walk(s.t, s.bins, &s.st, s.p, &smp, out) == 2);
	CHECK(fpstack__walk(s.t, s.bins, &s.st, NULL, &smp, out) == 2);
	smp.has_sp_words = true;
	/* A word that is no code address is no caller. */
	smp.sp_words[0] = 8;
	CHECK(fpstack__walk(s.t, s.bins, &s.st, s.p, &smp, out) == 2);
	/* uw_framed after its mov: rbp is its own frame, the walk is sound. */
	fp[0] = ADDR(uw_framed) + 4;
	smp.sp_words[0] = ADDR(uw_caller_ret);
	CHECK(fpstack__walk(s.t, s.bins, &s.st, s.p, &smp, out) == 2);
	/* ... but before its push, it is a leaf without a frame yet. */
	fp[0] = ADDR(uw_framed);
	CHECK(fpstack__walk(s.t, s.bins, &s.st, s.p, &smp, out) == 3);
	CHECK(s.st.leaf_recovered == 2);
	/* Between its push and its mov (CFA rsp+16) the return address is
	 * the second word: the first is the saved rbp. */
	fp[0] = ADDR(uw_framed) + 1;
	smp.sp_words[0] = 0x1000;
	smp.sp_words[1] = ADDR(uw_caller_ret);
	n = fpstack__walk(s.t, s.bins, &s.st, s.p, &smp, out);
	CHECK(n == 3 && out[1] == ADDR(uw_caller_ret) && out[2] == fp[1]);
	/* At its ret, after the pop (CFA rsp+8 again): the first word. */
	fp[0] = ADDR(uw_framed) + 6;
	smp.sp_words[0] = ADDR(uw_caller_ret);
	smp.sp_words[1] = 0;
	n = fpstack__walk(s.t, s.bins, &s.st, s.p, &smp, out);
	CHECK(n == 3 && out[1] == ADDR(uw_caller_ret));
	CHECK(s.st.leaf_recovered == 4 && s.st.leaf_deep == 0);
	/* Two pushes deep (CFA rsp+24): beyond the words sent, counted. */
	fp[0] = ADDR(uw_pushes2) + 3;
	smp.sp_words[1] = ADDR(uw_caller_ret);
	CHECK(fpstack__walk(s.t, s.bins, &s.st, s.p, &smp, out) == 2);
	CHECK(s.st.leaf_recovered == 4 && s.st.leaf_deep == 1);
	self_close(&s);
}

/* A stack copy as BPF would send it, stopped in uw_leaf called from
 * uw_caller, whose caller's return address is 0 (the end): the cached
 * rules and libdwfl both find the two frames. */
static void test_cfi_walks_agree(void)
{
	const uint64_t sp = 0x7ff000001000ull;
	uint64_t stack[8] = { 0 }, out[TP_MAX_FRAMES], out2[TP_MAX_FRAMES];
	struct tp_uregs regs = { .ip = ADDR(uw_leaf) + 1, .sp = sp,
				 .bp = sp + 16 };
	struct unwind_sample smp = {
		.pid = getpid(), .tid = getpid(), .regs = &regs,
		.stack = (const uint8_t *)stack, .stack_len = sizeof(stack),
	};
	struct dwflspaces all = { 0 };
	struct dwflspace sp1 = { 0 };
	struct self s;
	uint64_t w;
	size_t n;

	stack[0] = ADDR(uw_caller_ret);	/* the leaf's return address */
	stack[2] = 0;			/* uw_caller's saved rbp, at bp */
	stack[3] = 0;			/* ... and return address: none */
	CHECK(cfistack__read_word(&smp, sp, &w) && w == stack[0]);
	CHECK(!cfistack__read_word(&smp, sp - 8, &w));
	CHECK(!cfistack__read_word(&smp, sp + sizeof(stack) - 4, &w));
	CHECK(self_open(&s));
	n = cfistack__walk(s.bins, s.p, &smp, out);
	CHECK(n == 2 && out[0] == regs.ip && out[1] == ADDR(uw_caller_ret));
	all.bins = s.bins;
	all.stats = &s.st;
	sp1.all = &all;
	sp1.pid = getpid();
	CHECK(dwflspace__unwind(&sp1, s.p, &smp, out2) == n);
	CHECK(!memcmp(out, out2, n * sizeof(*out)));
	CHECK(s.st.dwfl_built == 1 && all.nbuilt == 1);
	/* Built once for the same maps; dropped at a reset. */
	CHECK(dwflspace__unwind(&sp1, s.p, &smp, out2) == n);
	CHECK(s.st.dwfl_built == 1);
	dwflspace__reset(&sp1);
	CHECK(all.nbuilt == 0 && !sp1.dwfl);
	dwflspace__drop(&sp1);
	self_close(&s);
}

/* The kernel's table for b says at vaddr what libdw says there. */
static bool table_agrees(const struct cfitable *t, struct bincache_entry *b,
			 uint64_t vaddr)
{
	const struct tp_cfi_row *r = cfitable__lookup(t, vaddr);
	struct tp_cfi_row want;

	cfirule__kernel_row(cfirule__at(b->cfi, vaddr), &want);
	if (r && r->kind == want.kind && r->cfa == want.cfa &&
	    r->bp == want.bp)
		return true;
	if (!r && want.kind == TP_CFI_NONE)
		return true;
	fprintf(stderr, "  at %#lx: table %d/%d/%d, libdw %d/%d/%d\n",
		(unsigned long)vaddr, r ? r->kind : -1, r ? r->cfa : -1,
		r ? r->bp : -1, want.kind, want.cfa, want.bp);
	return false;
}

/* The CFI table of a binary, checked against libdw at every row's start
 * and the byte before it, and at every 5th byte of the covered range:
 * libc (no frame pointers, a signal trampoline) and this test (its lazy
 * PLT, whose CFA is the linkers' expression: rsp + 8, plus 8 from the
 * stub's 11th byte on). */
static void check_table_of(struct self *s, uint64_t addr, bool want_signal,
			   bool want_plt)
{
	struct proc_map *m = proctable__find_map(s->t, s->p, addr, 0);
	struct bincache_entry *b = m ? bincache__get(s->bins, getpid(), m) : NULL;
	struct cfitable t;
	uint64_t end;
	bool signal = false, plt = false;

	CHECK(b && b->cfi);
	CHECK(cfitable__build(b, TP_CFI_ROWS, &t) == 0);
	CHECK(t.nrows > 2 && t.npages > 0 && t.pages[t.npages] == t.nrows - 1);
	for (uint32_t i = 1; i < t.nrows; i++) {
		CHECK(t.rows[i].pc > t.rows[i - 1].pc);
		CHECK(table_agrees(&t, b, t.base + t.rows[i].pc));
		CHECK(table_agrees(&t, b, t.base + t.rows[i].pc - 1));
		signal |= TP_CFI_KIND(t.rows[i].kind) == TP_CFI_SIGNAL;
		plt |= TP_CFI_KIND(t.rows[i].kind) == TP_CFI_PLT &&
		       t.rows[i].cfa == 1 && t.rows[i].bp == 11;
	}
	end = t.base + t.rows[t.nrows - 1].pc + 64;
	for (uint64_t v = t.base; v < end; v += 5)
		CHECK(table_agrees(&t, b, v));
	CHECK(signal == want_signal);
	CHECK(plt || !want_plt);
	cfitable__free(&t);
}

static void test_cfitable(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *in_libc = libc ? dlsym(libc, "sigaction") : NULL;
	struct self s;

	/* libc's own sigaction, asked of libc: &sigaction is the sanitizer
	 * runtime's interceptor in a sanitized build, another library
	 * (no signal trampoline there). */
	CHECK(in_libc);
	CHECK(self_open(&s));
	check_table_of(&s, ADDR(uw_leaf), false, true);
	check_table_of(&s, (uint64_t)(uintptr_t)in_libc, true, false);
	self_close(&s);
	dlclose(libc);
}

int main(void)
{
	RUN(test_mode);
	RUN(test_cfi_helps);
	RUN(test_auto_marks);
	RUN(test_auto_refused_forget);
	RUN(test_auto_bound);
	RUN(test_bincache_self);
	RUN(test_bincache_sweep);
	RUN(test_fpstack_leaf);
	RUN(test_cfi_walks_agree);
	RUN(test_cfitable);
	CHECK_EXIT();
}
