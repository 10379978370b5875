/* A toy compiling query engine, for the end-to-end tests of issue 14
 * (tests/e2e/codegen.sh): it generates x86-64 machine code at run time, one
 * function per operator of a query, names each with the tagging
 * dictionary (tagprof_code_regions, one call per query), describes it in a jitdump file and its
 * "IR" in a text file, and runs it.
 *
 * The plan of query qN: one pipeline (pipeline=1) of three operators, each
 * its own generated function and its own region:
 *
 *	qN_p1_scan	Scan#1		reads a column, mixes each value, writes
 *					it out and sums it
 *	qN_p1_filter	Filter#2	compares each value of that column with a
 *					bound, appends the passing row numbers to a
 *					selection vector (branch-free)
 *	qN_p1_probe	HashJoin#3	for each selected row: hashes its key and
 *					calls ht_insert() (ordinary C below, not
 *					generated) through a register; r15 holds the
 *					operator's tag (3) for the call, the old value
 *					before and after it
 *
 * KNOWN WORK RATIO: each worker thread measures the CPU time of every
 * operator call (CLOCK_THREAD_CPUTIME_ID) and sizes the next call so that
 * the operators' cumulative CPU times stay at
 *
 *	Scan#1 50%   Filter#2 30%   HashJoin#3 20% (its calls to ht_insert
 *	included; ht_insert is most of it)
 *
 * of the time spent in operators: a feedback loop, not a calibration
 * guess, so the shares hold on any CPU and under any frequency. The loop
 * itself (a call per 32768 rows, a clock read per call, four calls or more
 * per 25 ms round) is the only code of a worker thread outside generated
 * code and ht_insert: well under 1% of its samples (0.1-0.3% seen on a
 * busy 2-CPU VM whose system calls are slow).
 *
 * Generated functions have a frame-pointer prologue (push rbp; mov rbp,rsp)
 * and the matching epilogue, so a frame-pointer walk from ht_insert finds
 * the probe function, and from there the worker.
 *
 * Modes (after the options):
 *	run SECONDS	compiles q1, declares the tags, spins --warmup seconds in
 *			C (so a profiler started with it knows it before the
 *			generated code runs), then --threads workers (named
 *			"jitworker") run q1 for SECONDS
 *	churn SECONDS	one worker compiles q1, q2, q3... in turn, into THE SAME
 *			code memory (written RW, then made RX), runs each for
 *			50-100 ms, drops its regions and logs "qN START_NS
 *			END_NS" (CLOCK_MONOTONIC): its code was live, and its
 *			regions registered, only inside [START_NS, END_NS]. The
 *			operators change places in the memory from one query to
 *			the next. The log's first line is "clock MONO_NS
 *			REAL_NS", both clocks read at one moment, to place
 *			CLOCK_MONOTONIC times on a pprof's wall-clock time_nanos
 *	hostile SECONDS	run, while the main thread registers regions that
 *			overlap each other (and the operators' regions) on
 *			purpose, over and over, and scribbles over the
 *			[anon:tagprof-code] table and the table's anchor
 *			(random bytes, absurd record sizes, counts and string
 *			ids, the anchor's size/used/table/gen), restoring them
 *			after 100 ms each time: the profiler reads a table
 *			rewritten under it. Prints the number of attacks to
 *			stderr.
 *
 * Options:
 *	--jitdump-dir DIR  where jit-PID.dump goes (default $JITDUMPDIR, else
 *			   /tmp); the file is mmap()ed PROT_READ|PROT_EXEC
 *			   MAP_PRIVATE, as perf's convention wants, so that
 *			   profilers find it in /proc/PID/maps
 *	--ir FILE	   the IR text (default DIR/jitengine-PID.ir): one line
 *			   per IR instruction; the jitdump's debug info maps
 *			   every instruction of the machine code to its line
 *	--log FILE	   churn's log (default stdout)
 *	--threads N	   run and hostile: worker threads (default 2)
 *	--warmup SECONDS   default 1
 *	--no-regions	   registers no code regions (a baseline for the
 *			   benchmark of their cost)
 *
 * The jitdump is written from the Linux kernel's
 * tools/perf/Documentation/jitdump-specification.txt (version 1 records):
 * the header, then per function a JIT_CODE_DEBUG_INFO record followed by
 * its JIT_CODE_LOAD (name, address, size, code index, the code bytes),
 * times on CLOCK_MONOTONIC, and a JIT_CODE_CLOSE at the end.
 *
 * Exit: 0; 1 on a failure (API, mmap, files), 2 on bad usage, 3 when the
 * tag register is not restored, 77 when not on x86-64. Built by GCC with
 * -ffixed-r15 -DTAGPROF_TAG_REG_RESERVED and libtagprof (see the Makefile).
 * GCC 12 drops leaf functions' frame pointers at -O2; KEEP_FRAME() makes
 * it set one up in ht_insert and warm_up. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <tagprof/tagprof.h>

#include "code_table.h"

#if !defined(__x86_64__)
int main(void)
{
	fprintf(stderr, "jitengine: x86-64 only\n");
	return 77;
}
#else

#define KEEP_FRAME()	__asm__ volatile("" : : "r"(__builtin_frame_address(0)))

/* ---- time ---- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void die(const char *what, int err)
{
	fprintf(stderr, "jitengine: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		die("calloc", ENOMEM);
	return p;
}

/* ---- the shared, precompiled code the probe calls ---- */

#define HT_SLOTS	8192		/* keys are reduced to 4096 values: */
#define KEY_MASK	4095		/* the table never fills */

struct ht {
	uint64_t keys[HT_SLOTS];	/* key + 1; 0: empty */
	uint64_t counts[HT_SLOTS];
};

/* A counting insert with linear probing. noipa: no clone, no inlining, so
 * the profile names it and its caller is the generated probe code. */
__attribute__((noipa)) void ht_insert(struct ht *ht, uint64_t key, uint64_t hash)
{
	uint64_t i = hash & (HT_SLOTS - 1);

	KEEP_FRAME();
	while (ht->keys[i] && ht->keys[i] != key + 1)
		i = (i + 1) & (HT_SLOTS - 1);
	ht->keys[i] = key + 1;
	ht->counts[i]++;
}

/* ---- a small x86-64 encoder ---- */

enum reg { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI,
	   R8, R9, R10, R11, R12, R13, R14, R15, NOREG = -1 };

/* ALU opcodes of the "r/m64, r64" form and the /digit of the imm forms. */
enum alu { ADD = 0x01, OR = 0x09, ADC = 0x11, AND = 0x21, SUB = 0x29,
	   XOR = 0x31, CMP = 0x39 };

enum cc { CC_B = 0x2, CC_AE = 0x3, CC_L = 0xc, CC_LE = 0xe };

struct mark {
	uint32_t off;		/* from here on, the code is IR line `line` */
	uint32_t line;
};

struct gen {
	uint8_t *code;		/* where the function goes (RW now) */
	size_t len, cap;
	struct mark marks[64];
	size_t nmarks;
	char ir[8192];		/* the function's IR lines */
	size_t irlen;
	uint32_t line;		/* file line of the next IR line */
};

static void b(struct gen *g, uint8_t x)
{
	if (g->len == g->cap)
		die("generated function too big", ENOSPC);
	g->code[g->len++] = x;
}

static void b32(struct gen *g, uint32_t x)
{
	for (int i = 0; i < 4; i++)
		b(g, (uint8_t)(x >> (8 * i)));
}

static void b64(struct gen *g, uint64_t x)
{
	for (int i = 0; i < 8; i++)
		b(g, (uint8_t)(x >> (8 * i)));
}

/* REX with W, and the high bits of reg, index and base (NOREG: 0). */
static void rex(struct gen *g, bool w, int reg, int index, int base)
{
	uint8_t r = 0x40 | (w << 3) | ((reg >= 8) << 2) | ((index >= 8) << 1) |
		    (base >= 8);

	if (r != 0x40)
		b(g, r);
}

static void modrm_rr(struct gen *g, int reg, int rm)
{
	b(g, 0xc0 | (reg & 7) << 3 | (rm & 7));
}

/* ModRM (+SIB, +displacement) for [base + index*8 + disp]. rsp and r12
 * as a base need a SIB byte; rbp and r13 need a displacement. */
static void modrm_mem(struct gen *g, int reg, int base, int index, int32_t disp)
{
	uint8_t mod = disp == 0 && (base & 7) != RBP ? 0 :
		      disp >= -128 && disp <= 127 ? 1 : 2;

	if (index == NOREG && (base & 7) != RSP) {
		b(g, mod << 6 | (reg & 7) << 3 | (base & 7));
	} else {
		b(g, mod << 6 | (reg & 7) << 3 | 4);
		b(g, (index == NOREG ? 0 : 3) << 6 |
		     (index == NOREG ? 4 : index & 7) << 3 | (base & 7));
	}
	if (mod == 1)
		b(g, (uint8_t)disp);
	else if (mod == 2)
		b32(g, (uint32_t)disp);
}

static void push(struct gen *g, int r)
{
	rex(g, false, NOREG, NOREG, r);
	b(g, 0x50 + (r & 7));
}

static void pop(struct gen *g, int r)
{
	rex(g, false, NOREG, NOREG, r);
	b(g, 0x58 + (r & 7));
}

static void mov_rr(struct gen *g, int dst, int src)	/* mov dst, src */
{
	rex(g, true, src, NOREG, dst);
	b(g, 0x89);
	modrm_rr(g, src, dst);
}

static void alu_rr(struct gen *g, enum alu op, int dst, int src)
{
	rex(g, true, src, NOREG, dst);
	b(g, op);
	modrm_rr(g, src, dst);
}

static void alu_ri(struct gen *g, enum alu op, int dst, int32_t imm)
{
	rex(g, true, NOREG, NOREG, dst);
	if (imm >= -128 && imm <= 127) {
		b(g, 0x83);
		modrm_rr(g, op >> 3, dst);
		b(g, (uint8_t)imm);
	} else {
		b(g, 0x81);
		modrm_rr(g, op >> 3, dst);
		b32(g, (uint32_t)imm);
	}
}

static void test_rr(struct gen *g, int a, int c)
{
	rex(g, true, c, NOREG, a);
	b(g, 0x85);
	modrm_rr(g, c, a);
}

/* mov dst, [base + index*8 + disp] */
static void load(struct gen *g, int dst, int base, int index, int32_t disp)
{
	rex(g, true, dst, index, base);
	b(g, 0x8b);
	modrm_mem(g, dst, base, index, disp);
}

/* mov [base + index*8 + disp], src */
static void store(struct gen *g, int base, int index, int32_t disp, int src)
{
	rex(g, true, src, index, base);
	b(g, 0x89);
	modrm_mem(g, src, base, index, disp);
}

static void mov_ri64(struct gen *g, int dst, uint64_t imm)	/* movabs */
{
	rex(g, true, NOREG, NOREG, dst);
	b(g, 0xb8 + (dst & 7));
	b64(g, imm);
}

static void mov_ri32(struct gen *g, int dst, int32_t imm)	/* sign-extended */
{
	rex(g, true, NOREG, NOREG, dst);
	b(g, 0xc7);
	modrm_rr(g, 0, dst);
	b32(g, (uint32_t)imm);
}

static void imul_rr(struct gen *g, int dst, int src)
{
	rex(g, true, dst, NOREG, src);
	b(g, 0x0f);
	b(g, 0xaf);
	modrm_rr(g, dst, src);
}

static void imul_rri(struct gen *g, int dst, int src, int32_t imm)
{
	rex(g, true, dst, NOREG, src);
	b(g, 0x69);
	modrm_rr(g, dst, src);
	b32(g, (uint32_t)imm);
}

/* shl (/4) or shr (/5) dst, n */
static void shift_ri(struct gen *g, int ext, int dst, uint8_t n)
{
	rex(g, true, NOREG, NOREG, dst);
	b(g, 0xc1);
	modrm_rr(g, ext, dst);
	b(g, n);
}

#define shl_ri(g, dst, n)	shift_ri(g, 4, dst, n)
#define shr_ri(g, dst, n)	shift_ri(g, 5, dst, n)

static void inc(struct gen *g, int r)
{
	rex(g, true, NOREG, NOREG, r);
	b(g, 0xff);
	modrm_rr(g, 0, r);
}

static void call_r(struct gen *g, int r)
{
	rex(g, false, NOREG, NOREG, r);
	b(g, 0xff);
	modrm_rr(g, 2, r);
}

/* jcc rel32 back to target. */
static void jcc(struct gen *g, enum cc cc, size_t target)
{
	b(g, 0x0f);
	b(g, 0x80 | cc);
	b32(g, (uint32_t)(int32_t)(target - (g->len + 4)));
}

/* A forward jcc: the offset of its rel32, for patch() once the target is
 * known. */

static size_t jcc_fwd(struct gen *g, enum cc cc)
{
	size_t at;

	b(g, 0x0f);
	b(g, 0x80 | cc);
	at = g->len;
	b32(g, 0);
	return at;
}

static void patch(struct gen *g, size_t at)
{
	int32_t rel = (int32_t)(g->len - (at + 4));

	memcpy(g->code + at, &rel, 4);
}

/* The frame every generated function has: rbp chain for the unwinder,
 * then the callee-saved registers it uses (an even count, so that rsp
 * stays 16-byte aligned for calls). */
static void prologue(struct gen *g)
{
	push(g, RBP);
	mov_rr(g, RBP, RSP);
	push(g, RBX);
	push(g, R12);
	push(g, R13);
	push(g, R14);
}

static void epilogue(struct gen *g)
{
	pop(g, R14);
	pop(g, R13);
	pop(g, R12);
	pop(g, RBX);
	pop(g, RBP);
	b(g, 0xc3);
}

/* ---- the IR: one line per instruction; the code emitted after ir()
 * belongs to that line ---- */

static void ir_text(struct gen *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void ir_text(struct gen *g, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(g->ir + g->irlen, sizeof(g->ir) - g->irlen, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n + 1 >= sizeof(g->ir) - g->irlen)
		die("IR text too long", ENOSPC);
	g->irlen += (size_t)n;
	g->ir[g->irlen++] = '\n';
	g->ir[g->irlen] = 0;
	g->line++;
}

/* A line that is an instruction: the machine code that follows is its. */
#define ir(g, ...)							\
	do {								\
		if ((g)->nmarks == sizeof((g)->marks) / sizeof((g)->marks[0])) \
			die("too many IR lines", ENOSPC);		\
		(g)->marks[(g)->nmarks++] = (struct mark){		\
			.off = (uint32_t)(g)->len, .line = (g)->line };	\
		ir_text((g), __VA_ARGS__);				\
	} while (0)

/* ---- the operators' code generators ---- */

#define MIX_MUL		0x5bd1e995	/* scan's mixing constant */
#define GOLDEN		0x9e3779b97f4a7c15ull
#define FILTER_MASK	1023
#define FILTER_LIMIT	512		/* about half the rows pass */

/* i64 scan(const i64 *in, i64 *out, i64 n): out[i] = mix(in[i]); sum. */
static void gen_scan(struct gen *g, const char *name)
{
	size_t loop, to_exit;

	ir(g, "define i64 @%s(ptr %%in, ptr %%out, i64 %%n) {", name);
	prologue(g);
	ir_text(g, "entry:");
	ir(g, "  %%acc0 = add i64 0, 0");
	alu_rr(g, XOR, RAX, RAX);
	alu_rr(g, XOR, RCX, RCX);
	ir(g, "  %%empty = icmp sle i64 %%n, 0");
	test_rr(g, RDX, RDX);
	ir(g, "  br i1 %%empty, label %%exit, label %%loop");
	to_exit = jcc_fwd(g, CC_LE);
	ir_text(g, "loop:");
	ir_text(g, "  %%i = phi i64 [ 0, %%entry ], [ %%i.next, %%loop ]");
	ir_text(g, "  %%acc = phi i64 [ %%acc0, %%entry ], [ %%acc.next, %%loop ]");
	loop = g->len;
	ir(g, "  %%v = load i64, ptr %%in, i64 %%i");
	load(g, R8, RDI, RCX, 0);
	ir(g, "  %%m = mul i64 %%v, %d", MIX_MUL);
	imul_rri(g, R8, R8, MIX_MUL);
	ir(g, "  %%s = lshr i64 %%m, 17");
	mov_rr(g, R9, R8);
	shr_ri(g, R9, 17);
	ir(g, "  %%x = xor i64 %%m, %%s");
	alu_rr(g, XOR, R8, R9);
	ir(g, "  store i64 %%x, ptr %%out, i64 %%i");
	store(g, RSI, RCX, 0, R8);
	ir(g, "  %%acc.next = add i64 %%acc, %%x");
	alu_rr(g, ADD, RAX, R8);
	ir(g, "  %%i.next = add i64 %%i, 1");
	inc(g, RCX);
	ir(g, "  %%more = icmp slt i64 %%i.next, %%n");
	alu_rr(g, CMP, RCX, RDX);
	ir(g, "  br i1 %%more, label %%loop, label %%exit");
	jcc(g, CC_L, loop);
	ir_text(g, "exit:");
	patch(g, to_exit);
	ir(g, "  ret i64 %%acc");
	epilogue(g);
	ir_text(g, "}");
}

/* i64 filter(const i64 *col, i64 *sel, i64 n, i64 lim): the rows whose
 * low bits are below lim, their numbers appended to sel; their count. */
static void gen_filter(struct gen *g, const char *name)
{
	size_t loop, to_exit;

	ir(g, "define i64 @%s(ptr %%col, ptr %%sel, i64 %%n, i64 %%lim) {", name);
	prologue(g);
	ir_text(g, "entry:");
	ir(g, "  %%k0 = add i64 0, 0");
	alu_rr(g, XOR, RAX, RAX);
	alu_rr(g, XOR, R8, R8);
	ir(g, "  %%empty = icmp sle i64 %%n, 0");
	test_rr(g, RDX, RDX);
	ir(g, "  br i1 %%empty, label %%exit, label %%loop");
	to_exit = jcc_fwd(g, CC_LE);
	ir_text(g, "loop:");
	ir_text(g, "  %%i = phi i64 [ 0, %%entry ], [ %%i.next, %%loop ]");
	ir_text(g, "  %%k = phi i64 [ %%k0, %%entry ], [ %%k.next, %%loop ]");
	loop = g->len;
	ir(g, "  %%v = load i64, ptr %%col, i64 %%i");
	load(g, R9, RDI, R8, 0);
	ir(g, "  %%h = and i64 %%v, %d", FILTER_MASK);
	alu_ri(g, AND, R9, FILTER_MASK);
	ir(g, "  store i64 %%i, ptr %%sel, i64 %%k");
	store(g, RSI, RAX, 0, R8);
	ir(g, "  %%pass = icmp ult i64 %%h, %%lim");
	alu_rr(g, CMP, R9, RCX);
	ir(g, "  %%k.next = add i64 %%k, zext i1 %%pass");
	alu_ri(g, ADC, RAX, 0);
	ir(g, "  %%i.next = add i64 %%i, 1");
	inc(g, R8);
	ir(g, "  %%more = icmp slt i64 %%i.next, %%n");
	alu_rr(g, CMP, R8, RDX);
	ir(g, "  br i1 %%more, label %%loop, label %%exit");
	jcc(g, CC_L, loop);
	ir_text(g, "exit:");
	patch(g, to_exit);
	ir(g, "  ret i64 %%k");
	epilogue(g);
	ir_text(g, "}");
}

/* void probe(const i64 *col, const i64 *sel, i64 n, struct ht *ht): for
 * each selected row, ht_insert(ht, key, hash(key)) with the tag register
 * holding tag for the call. */
static void gen_probe(struct gen *g, const char *name, int32_t tag)
{
	size_t loop, to_exit;

	ir(g, "define void @%s(ptr %%col, ptr %%sel, i64 %%n, ptr %%ht) {", name);
	prologue(g);
	alu_ri(g, SUB, RSP, 16);	/* a slot for ht, rsp kept aligned */
	ir_text(g, "entry:");
	ir(g, "  %%ht.slot = alloca ptr");
	store(g, RBP, NOREG, -40, RCX);
	ir(g, "  %%tag.saved = call i64 @tagprof.tag.get()");
	mov_rr(g, R14, R15);
	ir(g, "  %%end = getelementptr i64, ptr %%sel, i64 %%n");
	mov_rr(g, RBX, RDI);
	mov_rr(g, R12, RSI);
	mov_rr(g, R13, RDX);
	shl_ri(g, R13, 3);
	alu_rr(g, ADD, R13, RSI);
	ir(g, "  %%empty = icmp uge ptr %%sel, %%end");
	alu_rr(g, CMP, R12, R13);
	ir(g, "  br i1 %%empty, label %%exit, label %%loop");
	to_exit = jcc_fwd(g, CC_AE);
	ir_text(g, "loop:");
	ir_text(g, "  %%p = phi ptr [ %%sel, %%entry ], [ %%p.next, %%loop ]");
	loop = g->len;
	ir(g, "  %%row = load i64, ptr %%p");
	load(g, RAX, R12, NOREG, 0);
	ir(g, "  %%v = load i64, ptr %%col, i64 %%row");
	load(g, RSI, RBX, RAX, 0);
	ir(g, "  %%key = and i64 %%v, %d", KEY_MASK);
	alu_ri(g, AND, RSI, KEY_MASK);
	ir(g, "  %%h0 = mul i64 %%key, %#llx", (unsigned long long)GOLDEN);
	mov_ri64(g, RDX, GOLDEN);
	imul_rr(g, RDX, RSI);
	ir(g, "  %%h1 = lshr i64 %%h0, 29");
	mov_rr(g, RAX, RDX);
	shr_ri(g, RAX, 29);
	ir(g, "  %%hash = xor i64 %%h0, %%h1");
	alu_rr(g, XOR, RDX, RAX);
	ir(g, "  call void @tagprof.tag.set(i64 %d)", tag);
	mov_ri32(g, R15, tag);
	ir(g, "  call void @ht_insert(ptr %%ht, i64 %%key, i64 %%hash)");
	load(g, RDI, RBP, NOREG, -40);
	mov_ri64(g, RAX, (uint64_t)(uintptr_t)ht_insert);
	call_r(g, RAX);
	ir(g, "  call void @tagprof.tag.set(i64 %%tag.saved)");
	mov_rr(g, R15, R14);
	ir(g, "  %%p.next = getelementptr i64, ptr %%p, i64 1");
	alu_ri(g, ADD, R12, 8);
	ir(g, "  %%more = icmp ult ptr %%p.next, %%end");
	alu_rr(g, CMP, R12, R13);
	ir(g, "  br i1 %%more, label %%loop, label %%exit");
	jcc(g, CC_B, loop);
	ir_text(g, "exit:");
	patch(g, to_exit);
	ir(g, "  ret void");
	alu_ri(g, ADD, RSP, 16);
	epilogue(g);
	ir_text(g, "}");
}

/* ---- the IR file ---- */

static FILE *ir_file;
static char ir_path[PATH_MAX];
static uint32_t ir_lines;		/* lines written so far */

static void ir_open(const char *path)
{
	ir_file = fopen(path, "w");
	if (!ir_file)
		die(path, errno);
	/* The debug info names it: absolute, so that pprof finds it from
	 * any directory. */
	if (!realpath(path, ir_path))
		die(path, errno);
}

static void ir_append(struct gen *g)
{
	if (fwrite(g->ir, 1, g->irlen, ir_file) != g->irlen || fflush(ir_file))
		die("writing the IR file", EIO);
	ir_lines = g->line - 1;
}

/* ---- jitdump: tools/perf/Documentation/jitdump-specification.txt ---- */

#define JITDUMP_MAGIC		0x4A695444	/* "JiTD", in native order */
#define JITDUMP_VERSION		1
#define JITDUMP_EM_X86_64	62		/* elf.h's EM_X86_64 */

enum { JIT_CODE_LOAD = 0, JIT_CODE_DEBUG_INFO = 2, JIT_CODE_CLOSE = 3 };

struct jd_header {
	uint32_t magic, version, total_size, elf_mach, pad1, pid;
	uint64_t timestamp, flags;
};

struct jd_rec {
	uint32_t id, total_size;
	uint64_t timestamp;
};

struct jd_load {		/* then the name with its NUL, then the code */
	struct jd_rec h;
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
};

struct jd_debug {		/* then nr_entry entries */
	struct jd_rec h;
	uint64_t code_addr, nr_entry;
};

struct jd_entry {		/* then the file name with its NUL */
	uint64_t code_addr;
	uint32_t line, discrim;
};

_Static_assert(sizeof(struct jd_header) == 40, "the spec's header has no padding");
_Static_assert(sizeof(struct jd_load) == 56, "nor the load record");
_Static_assert(sizeof(struct jd_debug) == 32 && sizeof(struct jd_entry) == 16,
	       "nor the debug record");

static int jd_fd = -1;
static uint64_t jd_index;		/* code_index: one per function compiled */

/* One write() per record: a reader that reads while the file grows sees
 * whole records, or a short tail it must leave for later. */
static void jd_write(const void *p, size_t n)
{
	if (write(jd_fd, p, n) != (ssize_t)n)
		die("writing the jitdump", errno ? errno : EIO);
}

static void jitdump_open(const char *dir)
{
	struct jd_header h = {
		.magic = JITDUMP_MAGIC, .version = JITDUMP_VERSION,
		.total_size = sizeof(h), .elf_mach = JITDUMP_EM_X86_64,
		.pid = (uint32_t)getpid(), .timestamp = mono_ns(),
	};
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	jd_fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
	if (jd_fd < 0)
		die(path, errno);
	jd_write(&h, sizeof(h));
	/* perf's convention: the runtime maps the file executable, so the
	 * mapping (and a PERF_RECORD_MMAP) names it; profilers find the dump
	 * through /proc/PID/maps. Never unmapped. */
	if (mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_EXEC,
		 MAP_PRIVATE, jd_fd, 0) == MAP_FAILED)
		die("mmap of the jitdump", errno);
}

/* DEBUG_INFO for the function g generated, then its LOAD. */
static void jitdump_function(const struct gen *g, const char *name)
{
	size_t flen = strlen(ir_path) + 1, nlen = strlen(name) + 1;
	size_t dsize = sizeof(struct jd_debug) + g->nmarks * (sizeof(struct jd_entry) + flen);
	size_t lsize = sizeof(struct jd_load) + nlen + g->len;
	uint8_t *buf = xcalloc(1, dsize > lsize ? dsize : lsize), *p;
	uint64_t addr = (uint64_t)(uintptr_t)g->code;
	struct jd_debug d = {
		.h = { JIT_CODE_DEBUG_INFO, (uint32_t)dsize, mono_ns() },
		.code_addr = addr, .nr_entry = g->nmarks,
	};
	struct jd_load l = {
		.h = { JIT_CODE_LOAD, (uint32_t)lsize, 0 },
		.pid = (uint32_t)getpid(), .tid = (uint32_t)syscall(SYS_gettid),
		.vma = addr, .code_addr = addr, .code_size = g->len,
		.code_index = ++jd_index,
	};

	memcpy(buf, &d, sizeof(d));
	p = buf + sizeof(d);
	for (size_t i = 0; i < g->nmarks; i++) {
		struct jd_entry e = { addr + g->marks[i].off, g->marks[i].line, 0 };

		memcpy(p, &e, sizeof(e));
		memcpy(p + sizeof(e), ir_path, flen);
		p += sizeof(e) + flen;
	}
	jd_write(buf, dsize);
	l.h.timestamp = mono_ns();
	memcpy(buf, &l, sizeof(l));
	memcpy(buf + sizeof(l), name, nlen);
	memcpy(buf + sizeof(l) + nlen, g->code, g->len);
	jd_write(buf, lsize);
	free(buf);
}

static void jitdump_close(void)
{
	struct jd_rec r = { JIT_CODE_CLOSE, sizeof(r), mono_ns() };

	jd_write(&r, sizeof(r));
}

/* ---- queries: compile, register, drop ---- */

enum { SCAN, FILTER, PROBE, NOPS };

static const struct opdef {
	const char *suffix, *label, *tag_name;
	double share;		/* of the operators' CPU time */
} ops[NOPS] = {
	[SCAN] = { "scan", "operator=Scan#1", "Scan#1", 0.50 },
	[FILTER] = { "filter", "operator=Filter#2", "Filter#2", 0.30 },
	[PROBE] = { "probe", "operator=HashJoin#3", "HashJoin#3", 0.20 },
};

#define TAG_OF(op)	((op) + 1)	/* the operator's number */
#define SLOT		1024		/* code bytes per function, at most */
#define AREA		(NOPS * SLOT)
#define AREA_MAP	4096

struct query {
	unsigned n;			/* qN */
	uint8_t *fn[NOPS];
	size_t len[NOPS];
	char name[NOPS][32];
	char query_level[32];		/* "query=qN" */
};

static uint8_t *code_area;		/* all the code there is, reused */
static struct gen gens[NOPS];

/* Generates qN into the code area, each operator in slot (op + N - 1) % 3,
 * so that from one query to the next an address holds another operator;
 * writes its IR and jitdump records and registers its regions. */
static void compile(struct query *q, unsigned n)
{
	memset(q, 0, sizeof(*q));
	q->n = n;
	snprintf(q->query_level, sizeof(q->query_level), "query=q%u", n);
	if (mprotect(code_area, AREA_MAP, PROT_READ | PROT_WRITE))
		die("mprotect RW", errno);
	memset(code_area, 0xcc, AREA_MAP);	/* int3 between functions */
	for (int op = 0; op < NOPS; op++) {
		struct gen *g = &gens[op];

		memset(g, 0, sizeof(*g));
		g->code = code_area + ((op + n - 1) % NOPS) * SLOT;
		g->cap = SLOT;
		g->line = ir_lines + 1;
		snprintf(q->name[op], sizeof(q->name[op]), "q%u_p1_%s", n, ops[op].suffix);
		ir_text(g, "; query q%u, pipeline 1, %s", n, ops[op].tag_name);
		if (op == SCAN)
			gen_scan(g, q->name[op]);
		else if (op == FILTER)
			gen_filter(g, q->name[op]);
		else
			gen_probe(g, q->name[op], TAG_OF(op));
		ir_append(g);
		q->fn[op] = g->code;
		q->len[op] = g->len;
	}
	if (mprotect(code_area, AREA_MAP, PROT_READ | PROT_EXEC))
		die("mprotect RX", errno);
	for (int op = 0; op < NOPS; op++)
		jitdump_function(&gens[op], q->name[op]);
}

/* --no-regions: the same code, unregistered (tests/bench/code_regions.sh
 * compares the agent's cost per sample with and without). */
static bool no_regions;

/* A compilation's regions, in one call. */
static void register_query(const struct query *q)
{
	const char *levels[NOPS][3];
	struct tagprof_code_span spans[NOPS];
	int err;

	for (int op = 0; op < NOPS; op++) {
		levels[op][0] = "pipeline=1";
		levels[op][1] = ops[op].label;
		levels[op][2] = q->query_level;
		spans[op] = (struct tagprof_code_span){ q->fn[op], q->len[op],
							q->name[op], levels[op], 3 };
	}
	if (no_regions)
		return;
	err = tagprof_code_regions(spans, NOPS);
	if (err) {
		fprintf(stderr, "jitengine: q%u: ", q->n);
		die("tagprof_code_regions", err);
	}
}

static void drop_query(const struct query *q)
{
	for (int op = 0; op < NOPS && !no_regions; op++) {
		int err = tagprof_code_region_drop(q->fn[op]);

		if (err) {
			fprintf(stderr, "jitengine: %s: ", q->name[op]);
			die("tagprof_code_region_drop", err);
		}
	}
}

/* ---- workers ---- */

/* Few calls and few clock reads: the loop's own time is not attributed
 * (a CPU clock read is a system call, where the thread is often
 * preempted when the machine is busy). */
#define ROWS		32768		/* rows per call at most */
#define ROUND_NS	25e6		/* operator time per round */

typedef int64_t (*scan_fn)(const int64_t *in, int64_t *out, int64_t n);
typedef int64_t (*filter_fn)(const int64_t *col, int64_t *sel, int64_t n, int64_t lim);
typedef void (*probe_fn)(const int64_t *col, const int64_t *sel, int64_t n, struct ht *ht);

struct worker {
	pthread_t th;
	uint64_t seed;
	uint64_t deadline;		/* CLOCK_MONOTONIC ns */
	const struct query *q;		/* run, hostile */
	FILE *log;			/* churn */
	int64_t in[ROWS], out[ROWS], sel[ROWS + 1];
	struct ht ht;
	double spent[NOPS];		/* CPU ns in each operator */
	double cost[NOPS];		/* CPU ns per row, recent */
	uint64_t sink;		/* wraps: only keeps the work from being dropped */
};

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void run_op(struct worker *w, const struct query *q, int op, uint64_t rows)
{
	while (rows) {
		int64_t n = rows < ROWS ? (int64_t)rows : ROWS;

		if (op == SCAN)
			w->sink += ((scan_fn)(void *)q->fn[op])(w->in, w->out, n);
		else if (op == FILTER)
			w->sink += ((filter_fn)(void *)q->fn[op])(w->out, w->sel, n,
								  FILTER_LIMIT);
		else
			((probe_fn)(void *)q->fn[op])(w->out, w->sel, n, &w->ht);
		rows -= (uint64_t)n;
	}
}

/* Runs op over rows rows, timed from *clock (the thread's CPU time when
 * the previous one ended) to its end, stored there: one clock read per
 * operator call. */
static void timed_op(struct worker *w, const struct query *q, int op, uint64_t rows,
		     uint64_t *clock)
{
	uint64_t t0 = *clock;
	double dt, c;

	run_op(w, q, op, rows);
	*clock = cpu_ns();
	dt = (double)(*clock - t0);
	w->spent[op] += dt;
	c = dt / (double)rows;
	/* Slow to fall: a cost read too low sizes the next call too long,
	 * an error the rounds left may not have the time to even out. */
	w->cost[op] = !w->cost[op] ? c : c > w->cost[op] ? 0.75 * w->cost[op] + 0.25 * c :
		      0.95 * w->cost[op] + 0.05 * c;
	if (w->cost[op] <= 0.01)
		w->cost[op] = 0.01;
}

/* Runs q until `until`, in rounds of ROUND_NS of operator time: each
 * operator gets the rows that bring its cumulative share back to its
 * target (at least a quarter, at most four times its share of a round). */
static void run_query(struct worker *w, const struct query *q, uint64_t until)
{
	uint64_t clock = cpu_ns();

	for (int op = 0; op < NOPS; op++)
		if (!w->cost[op])
			timed_op(w, q, op, 4096, &clock);
	while (mono_ns() < until) {
		double total = w->spent[SCAN] + w->spent[FILTER] + w->spent[PROBE];

		for (int op = 0; op < NOPS; op++) {
			double share = ops[op].share;
			double want = share * (total + ROUND_NS) - w->spent[op];
			double lo = share * ROUND_NS / 4, hi = share * ROUND_NS * 4;

			want = want < lo ? lo : want > hi ? hi : want;
			timed_op(w, q, op, (uint64_t)(want / w->cost[op]) + 1, &clock);
		}
	}
}

static void worker_init(struct worker *w, uint64_t seed)
{
	w->seed = seed | 1;
	for (int i = 0; i < ROWS; i++) {
		w->in[i] = (int64_t)xorshift(&w->seed);
		w->sel[i] = i;
	}
	w->sel[ROWS] = 0;
}

static void check_tag(void)
{
	if (tagprof_tag_get() != 0) {
		fprintf(stderr, "jitengine: the tag register holds %#llx after the work\n",
			(unsigned long long)tagprof_tag_get());
		exit(3);
	}
}

/* What the worker measured: for the test's log. */
static void report_shares(const struct worker *w, int i)
{
	double total = w->spent[SCAN] + w->spent[FILTER] + w->spent[PROBE];

	fprintf(stderr, "jitengine: worker %d: %.3f s in operators: Scan#1 %.1f%%, "
		"Filter#2 %.1f%%, HashJoin#3 %.1f%%\n", i, total / 1e9,
		100 * w->spent[SCAN] / total, 100 * w->spent[FILTER] / total,
		100 * w->spent[PROBE] / total);
}

static void *run_worker(void *arg)
{
	struct worker *w = arg;

	/* What the C runtime left in the register is no tag. */
	tagprof_tag_swap(0);
	pthread_setname_np(pthread_self(), "jitworker");
	run_query(w, w->q, w->deadline);
	check_tag();
	return NULL;
}

/* churn: q1 is compiled (by main) and live; then each query runs for
 * 50-100 ms, is dropped, and the next one is compiled into the same
 * memory. */
static struct query churn_q;
static uint64_t churn_start;

static void *churn_worker(void *arg)
{
	struct worker *w = arg;
	struct query *q = &churn_q;
	uint64_t start = churn_start, end;

	tagprof_tag_swap(0);
	pthread_setname_np(pthread_self(), "jitworker");
	for (;;) {
		uint64_t until = mono_ns() + 50000000 + xorshift(&w->seed) % 50000001;

		run_query(w, q, until < w->deadline ? until : w->deadline);
		drop_query(q);
		end = mono_ns();
		fprintf(w->log, "q%u %" PRIu64 " %" PRIu64 "\n", q->n, start, end);
		fflush(w->log);
		if (end >= w->deadline)
			break;
		start = mono_ns();
		compile(q, q->n + 1);
		register_query(q);
	}
	check_tag();
	return NULL;
}

/* ---- hostile: overlapping regions, and a table rewritten under the
 * profiler ---- */

struct span {
	uint8_t *start;
	size_t size;
};

/* Finds the mappings of /proc/self/maps that `want` accepts. */
static size_t find_maps(bool (*want)(const char *line, const struct span *prev,
				     const struct span *s),
			struct span *out, size_t max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	struct span prev = { 0 };
	char line[512];
	size_t n = 0;

	if (!f)
		die("/proc/self/maps", errno);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		struct span s;

		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		s = (struct span){ (uint8_t *)lo, hi - lo };
		if (n < max && want(line, &prev, &s))
			out[n++] = s;
		/* a file mapping's .bss may go on in the anonymous mapping
		 * right after it: remember the file ones */
		if (strchr(line, '/'))
			prev = s;
		else if (prev.start + prev.size != s.start)
			prev = (struct span){ 0 };
	}
	fclose(f);
	return n;
}

static bool is_table(const char *line, const struct span *prev, const struct span *s)
{
	(void)prev;
	(void)s;
	return strstr(line, "[anon:tagprof-code]") != NULL;
}

/* Writable data of a file, or the anonymous mapping that follows it. */
static bool is_data(const char *line, const struct span *prev, const struct span *s)
{
	const char *perms = strchr(line, ' ');

	if (!perms || strncmp(perms + 1, "rw", 2))
		return false;
	return strchr(line, '/') || (prev->start && prev->start + prev->size == s->start &&
				     !strchr(line, '['));
}

/* libtagprof's anchor: a static of the library, found by its magic. */
static struct tp_code_anchor *find_anchor(void)
{
	struct span spans[64];
	size_t n = find_maps(is_data, spans, 64);

	for (size_t i = 0; i < n; i++)
		for (size_t o = 0; o + sizeof(struct tp_code_anchor) <= spans[i].size; o += 8) {
			struct tp_code_anchor *a = (void *)(spans[i].start + o);

			if (!memcmp(a->magic, TP_CODE_MAGIC, sizeof(a->magic)) &&
			    a->version == TP_CODE_VERSION &&
			    a->anchor_size == sizeof(*a) && a->table)
				return a;
		}
	return NULL;
}

static bool is_rw(const char *line, const struct span *prev, const struct span *s)
{
	const char *perms = strchr(line, ' ');

	(void)prev;
	(void)s;
	return perms && !strncmp(perms + 1, "rw", 2);
}

/* The table: the [anon:tagprof-code] mapping the anchor names, else the
 * last such mapping; where the kernel does not name anonymous mappings
 * (CONFIG_ANON_VMA_NAME off), the mapping that holds the anchor's table
 * address, from there on. */
static bool find_table(const struct tp_code_anchor *a, struct span *t)
{
	struct span spans[1024];
	size_t n = find_maps(is_table, spans, 16);

	for (size_t i = 0; a && i < n; i++)
		if ((uintptr_t)spans[i].start <= a->table &&
		    a->table < (uintptr_t)spans[i].start + spans[i].size) {
			*t = spans[i];
			return true;
		}
	if (n) {
		*t = spans[n - 1];
		return true;
	}
	n = a ? find_maps(is_rw, spans, 1024) : 0;
	for (size_t i = 0; i < n; i++) {
		uintptr_t lo = (uintptr_t)spans[i].start, hi = lo + spans[i].size;

		if (lo <= a->table && a->table < hi) {
			*t = (struct span){ (uint8_t *)(uintptr_t)a->table,
					    hi - a->table };
			return true;
		}
	}
	return false;
}

/* A record of the table at random, walking the sizes while they are sane:
 * its offset, or SIZE_MAX. */
static size_t pick_record(const struct span *t, size_t used, uint64_t *rnd)
{
	size_t offs[256], n = 0;

	for (size_t o = 0; o + sizeof(struct tp_code_rec) <= used && n < 256;) {
		const struct tp_code_rec *r = (const void *)(t->start + o);

		if (r->size < sizeof(*r) || r->size % 8 || r->size > used - o)
			break;
		offs[n++] = o;
		o += r->size;
	}
	return n ? offs[xorshift(rnd) % n] : SIZE_MAX;
}

static const uint32_t absurd32[] = { 0, 4, 7, 9, 0xffffffff, 0x80000000, 1u << 30 };
static const uint64_t absurd64[] = { 0, 1, 0xffffffffffffffffull, 0x8000000000000000ull,
				     0xfffffffffffff000ull, 1ull << 40, 0x10 };

#define PICK(a, rnd)	((a)[xorshift(rnd) % (sizeof(a) / sizeof((a)[0]))])

/* One attack on the table (and its anchor); what it did, for the log. */
static const char *attack(struct tp_code_anchor *a, const struct span *t, size_t used,
			  uint64_t *rnd)
{
	size_t o = pick_record(t, used, rnd);
	struct tp_code_rec *r = o == SIZE_MAX ? NULL : (void *)(t->start + o);

	switch (xorshift(rnd) % 9) {
	case 0: {			/* random bytes anywhere in the records */
		size_t n = 1 + xorshift(rnd) % 64, at = used ? xorshift(rnd) % used : 0;

		for (size_t i = 0; i < n && at + i < t->size; i++)
			t->start[at + i] = (uint8_t)xorshift(rnd);
		return "random bytes";
	}
	case 1:				/* a record's size */
		if (!r)
			return "none";
		r->size = PICK(absurd32, rnd);
		return "record size";
	case 2:				/* its kind and count */
		if (!r)
			return "none";
		r->kind = (uint16_t)xorshift(rnd);
		r->count = 0xffff;
		return "record kind";
	case 3:				/* words of a record's body: ranges,
					 * times, string and region ids */
		if (!r || r->size <= sizeof(*r))
			return "none";
		for (int i = 0; i < 3; i++) {
			size_t w = (r->size - sizeof(*r)) / 8;
			uint64_t v = PICK(absurd64, rnd);

			if (w)
				memcpy((uint8_t *)(r + 1) + 8 * (xorshift(rnd) % w), &v, 8);
		}
		return "record body";
	case 4:				/* a string's length past its record */
		if (!r || r->kind != TP_CODE_REC_STR)
			return "none";
		r->count = (uint16_t)(r->size + xorshift(rnd) % 60000);
		return "string length";
	case 5: {			/* records again, past `used`: the same
					 * ids and regions twice, overlapping */
		size_t n = 0;

		if (!r || !a)
			return "none";
		while (n + r->size <= 4096 && used + n + r->size <= t->size && n < 1024) {
			memcpy(t->start + used + n, r, r->size);
			n += r->size;
		}
		__atomic_store_n(&a->used, used + n, __ATOMIC_RELEASE);
		return "records repeated";
	}
	case 6:				/* records past `used`, then used moved */
		if (used + 256 > t->size || !a)
			return "none";
		for (size_t i = 0; i < 256; i++)
			t->start[used + i] = (uint8_t)xorshift(rnd);
		__atomic_store_n(&a->used, used + 8 * (1 + xorshift(rnd) % 32), __ATOMIC_RELEASE);
		return "garbage appended";
	case 7:				/* the anchor's numbers */
		if (!a)
			return "none";
		switch (xorshift(rnd) % 6) {
		case 0: a->used = a->size + 8; break;
		case 1: a->used = PICK(absurd64, rnd); break;
		case 2: a->size = PICK(absurd64, rnd); break;
		case 3: a->table = PICK(absurd64, rnd); break;
		case 4: a->version = (uint32_t)xorshift(rnd); break;
		default: a->anchor_size = PICK(absurd32, rnd); break;
		}
		return "anchor";
	default:			/* a table switch that never ends */
		if (!a)
			return "none";
		__atomic_store_n(&a->gen, a->gen | 1, __ATOMIC_RELEASE);
		return "gen odd";
	}
}

static void sleep_ns(uint64_t ns)
{
	struct timespec t = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* Regions over regions: one over all three functions, one straddling two,
 * one a byte long inside the scan, then the operators again (each new one
 * ends the live ones it overlaps). */
static unsigned overlap_all(const struct query *q)
{
	static const char *const all[] = { "operator=Overlap#9", "query=hostile" };
	static const char *const odd[] = { "pipeline=9", "operator=Straddle#8", "query=hostile" };
	int err;

	err = tagprof_code_region(code_area, AREA, "hostile_all", all, 2);
	if (!err)
		err = tagprof_code_region(code_area + SLOT / 2, SLOT, "hostile_straddle", odd, 3);
	if (!err)
		err = tagprof_code_region(q->fn[SCAN] + 8, 1, NULL, odd, 3);
	if (err)
		die("tagprof_code_region (overlapping)", err);
	register_query(q);
	return 4;
}

static void hostile(const struct query *q, uint64_t deadline)
{
	uint64_t rnd = mono_ns() | 1;
	unsigned attacks = 0, overlaps = 0, misses = 0;
	struct tp_code_anchor *a = find_anchor(), saved;
	uint8_t *copy = NULL;

	if (!a)
		fprintf(stderr, "jitengine: hostile: no anchor found; the table only\n");
	while (mono_ns() < deadline) {
		struct span t;
		size_t used, keep;

		overlaps += overlap_all(q);
		/* re-read every time: a compaction may have moved the table */
		if (!find_table(a, &t)) {
			misses++;
			sleep_ns(100000000);
			continue;
		}
		used = a ? a->used : t.size;
		if (used > t.size)
			used = t.size;
		keep = used + 4096 < t.size ? used + 4096 : t.size;
		copy = realloc(copy, keep);
		if (!copy)
			die("realloc", ENOMEM);
		memcpy(copy, t.start, keep);
		if (a)
			saved = *a;
		for (int i = 0; i < 3; i++) {
			const char *what = attack(a, &t, used, &rnd);

			attacks += strcmp(what, "none") != 0;
		}
		sleep_ns(100000000);
		/* restored before the library writes again: it appends after
		 * its own count of bytes and sets the anchor from its own
		 * state, so nothing here misleads it */
		memcpy(t.start, copy, keep);
		if (a)
			*a = saved;
		sleep_ns(100000000);
	}
	free(copy);
	fprintf(stderr, "jitengine: hostile: %u attacks, %u overlapping registrations%s\n",
		attacks, overlaps, misses ? ", table not found at times" : "");
}

/* ---- main ---- */

/* Untagged C work, no generated code: a profiler that started with the
 * process finds it, its context and its code table meanwhile. */
__attribute__((noipa)) void warm_up(double secs)
{
	uint64_t end = mono_ns() + (uint64_t)(secs * 1e9);
	volatile uint64_t x = 0;

	KEEP_FRAME();
	while (mono_ns() < end)
		for (int i = 0; i < 10000; i++)
			x += (uint64_t)i;
}

static void declare_tags(void)
{
	static const char *const fields[] = { "operator:16" };
	int err = tagprof_tags_declare(TAGPROF_TAG_REG_NAME, fields, 1);

	for (int op = 0; !err && op < NOPS; op++)
		err = tagprof_tag_name("operator", TAG_OF(op), ops[op].tag_name);
	if (err)
		die("declaring the tags", err);
}

static void usage(void)
{
	fprintf(stderr, "usage: jitengine [--jitdump-dir DIR] [--ir FILE] [--log FILE] "
		"[--threads N] [--warmup SECONDS] [--no-regions] run|churn|hostile SECONDS\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "jitdump-dir", required_argument, NULL, 'd' },
		{ "ir", required_argument, NULL, 'i' },
		{ "log", required_argument, NULL, 'l' },
		{ "threads", required_argument, NULL, 't' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "no-regions", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = getenv("JITDUMPDIR"), *ir = NULL, *logpath = NULL, *mode;
	char irbuf[PATH_MAX];
	double secs, warmup = 1.0;
	int nthreads = 2, c, err;
	struct worker **w;
	struct query q1;
	uint64_t deadline;
	FILE *log = stdout;

	tagprof_tag_swap(0);
	if (!dir || !*dir)
		dir = "/tmp";
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': dir = optarg; break;
		case 'i': ir = optarg; break;
		case 'l': logpath = optarg; break;
		case 't': nthreads = atoi(optarg); break;
		case 'w': warmup = atof(optarg); break;
		case 'n': no_regions = true; break;
		default: usage();
		}
	}
	if (argc - optind != 2 || (secs = atof(argv[optind + 1])) <= 0 ||
	    nthreads < 1 || nthreads > 64 || warmup < 0)
		usage();
	mode = argv[optind];
	if (strcmp(mode, "run") && strcmp(mode, "churn") && strcmp(mode, "hostile"))
		usage();
	if (!ir) {
		snprintf(irbuf, sizeof(irbuf), "%s/jitengine-%d.ir", dir, (int)getpid());
		ir = irbuf;
	}
	if (logpath && !(log = fopen(logpath, "w")))
		die(logpath, errno);

	err = tagprof_process_init("jitengine");
	if (err)
		die("tagprof_process_init", err);
	declare_tags();
	code_area = mmap(NULL, AREA_MAP, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code_area == MAP_FAILED)
		die("mmap of the code area", errno);
	ir_open(ir);
	jitdump_open(dir);

	if (!strcmp(mode, "churn")) {
		uint64_t m0 = mono_ns(), real = clock_ns(CLOCK_REALTIME), m1 = mono_ns();

		nthreads = 1;
		fprintf(log, "clock %" PRIu64 " %" PRIu64 "\n", m0 + (m1 - m0) / 2, real);
		fflush(log);
		churn_start = mono_ns();
		compile(&churn_q, 1);
		register_query(&churn_q);
	} else {
		compile(&q1, 1);
		register_query(&q1);
	}
	warm_up(warmup);

	deadline = mono_ns() + (uint64_t)(secs * 1e9);
	w = xcalloc((size_t)nthreads, sizeof(*w));
	for (int i = 0; i < nthreads; i++) {
		w[i] = xcalloc(1, sizeof(*w[i]));
		worker_init(w[i], 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1));
		w[i]->deadline = deadline;
		w[i]->q = &q1;
		w[i]->log = log;
		err = pthread_create(&w[i]->th, NULL,
				     strcmp(mode, "churn") ? run_worker : churn_worker, w[i]);
		if (err)
			die("pthread_create", err);
	}
	if (!strcmp(mode, "hostile"))
		hostile(&q1, deadline);
	for (int i = 0; i < nthreads; i++) {
		pthread_join(w[i]->th, NULL);
		report_shares(w[i], i);
		free(w[i]);
	}
	free(w);
	jitdump_close();
	if (log != stdout)
		fclose(log);
	check_tag();
	return 0;
}

#endif /* __x86_64__ */
