/* The jitdump reader: a valid file (loads, moves, debug info with the
 * "same file" form, unwinding info, close, unknown records), code memory
 * reused over time, both byte orders, every prefix of a file, bad input of
 * every kind the parser refuses, its bounds, reading on as the file grows,
 * lookups against a brute-force reference, and a process of its own whose
 * jitdump the process table finds and the symbolizer names frames by. */
#include "check.h"
#include "proc/jitdump.h"
#include "proc/proctable.h"
#include "kernel/ksymbolizer.h"
#include "sym/loctab.h"
#include "sym/symbolizer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define S 1000000000ull		/* a second in ns */

/* ---- a jitdump writer, from the specification's text
 * (tools/perf/Documentation/jitdump-specification.txt): each field in the
 * order and of the size the text lists, in the writer's byte order ---- */

struct jw {
	uint8_t *b;
	size_t len, cap;
	bool swap;		/* write the other byte order */
	size_t ends[64];	/* where each record (the header first) ends */
	size_t nends;
};

static void w_bytes(struct jw *w, const void *p, size_t n)
{
	if (w->len + n > w->cap) {
		w->cap = (w->len + n) * 2 + 4096;
		w->b = realloc(w->b, w->cap);
		if (!w->b)
			abort();
	}
	memcpy(w->b + w->len, p, n);
	w->len += n;
}

static void w32(struct jw *w, uint32_t v)
{
	if (w->swap)
		v = __builtin_bswap32(v);
	w_bytes(w, &v, sizeof(v));
}

static void w64(struct jw *w, uint64_t v)
{
	if (w->swap)
		v = __builtin_bswap64(v);
	w_bytes(w, &v, sizeof(v));
}

static void w_str(struct jw *w, const char *s)
{
	w_bytes(w, s, strlen(s) + 1);
}

static void w_fill(struct jw *w, uint8_t c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		w_bytes(w, &c, 1);
}

static void w_mark(struct jw *w)
{
	if (w->nends < 64)
		w->ends[w->nends++] = w->len;
}

static void w_patch32(struct jw *w, size_t at, uint32_t v)
{
	if (w->swap)
		v = __builtin_bswap32(v);
	memcpy(w->b + at, &v, sizeof(v));
}

static void w_patch64(struct jw *w, size_t at, uint64_t v)
{
	if (w->swap)
		v = __builtin_bswap64(v);
	memcpy(w->b + at, &v, sizeof(v));
}

/* III. the file header */
static void w_header(struct jw *w, uint64_t flags)
{
	w32(w, 0x4A695444);	/* magic: "JiTD" */
	w32(w, 1);		/* version */
	w32(w, 40);		/* total_size of the header */
	w32(w, 62);		/* elf_mach: EM_X86_64 */
	w32(w, 0);		/* pad1 */
	w32(w, 4242);		/* pid */
	w64(w, 1);		/* timestamp */
	w64(w, flags);
	w_mark(w);
}

/* IV. a record header; w_end sets its total_size. Returns where the
 * record starts. */
static size_t w_begin(struct jw *w, uint32_t id, uint64_t ts)
{
	size_t at = w->len;

	w32(w, id);
	w32(w, 0);		/* total_size, by w_end */
	w64(w, ts);
	return at;
}

static void w_end(struct jw *w, size_t at)
{
	w_patch32(w, at + 4, w->len - at);
	w_mark(w);
}

/* V. JIT_CODE_LOAD, its code size bytes of 0xc3; pad bytes of padding
 * between the name and the code (perf's agent aligns the code to 8).
 * Returns where its code is in the file. */
static size_t w_load_vma(struct jw *w, uint64_t ts, uint64_t vma,
			 uint64_t addr, uint64_t size, uint64_t index,
			 const char *name, size_t pad)
{
	size_t at = w_begin(w, 0, ts), code;

	w32(w, 4242);		/* pid */
	w32(w, 4243);		/* tid */
	w64(w, vma);		/* vma */
	w64(w, addr);		/* code_addr */
	w64(w, size);		/* code_size */
	w64(w, index);		/* code_index */
	w_str(w, name);
	w_fill(w, 0, pad);
	code = w->len;
	w_fill(w, 0xc3, size);
	w_end(w, at);
	return code;
}

static size_t w_load_pad(struct jw *w, uint64_t ts, uint64_t addr,
			 uint64_t size, uint64_t index, const char *name,
			 size_t pad)
{
	return w_load_vma(w, ts, addr, addr, size, index, name, pad);
}

static size_t w_load(struct jw *w, uint64_t ts, uint64_t addr, uint64_t size,
		     uint64_t index, const char *name)
{
	return w_load_pad(w, ts, addr, size, index, name, 0);
}

/* VI. JIT_CODE_MOVE */
static void w_move(struct jw *w, uint64_t ts, uint64_t old, uint64_t to,
		   uint64_t size, uint64_t index)
{
	size_t at = w_begin(w, 1, ts);

	w32(w, 4242);		/* pid */
	w32(w, 4243);		/* tid */
	w64(w, to);		/* vma */
	w64(w, old);		/* old_code_addr */
	w64(w, to);		/* new_code_addr */
	w64(w, size);		/* code_size */
	w64(w, index);		/* code_index */
	w_end(w, at);
}

/* VII. JIT_CODE_DEBUG_INFO; a NULL file is written "\xff": the file of
 * the entry before (perf's jitdump.h). */
struct entry {
	uint64_t addr;
	uint32_t line;
	const char *file;
};

static void w_debug(struct jw *w, uint64_t ts, uint64_t code_addr,
		    const struct entry *e, size_t n)
{
	size_t at = w_begin(w, 2, ts);

	w64(w, code_addr);
	w64(w, n);		/* nr_entry */
	for (size_t i = 0; i < n; i++) {
		w64(w, e[i].addr);
		w32(w, e[i].line);
		w32(w, 0);	/* discrim */
		w_str(w, e[i].file ? e[i].file : "\xff");
	}
	w_end(w, at);
}

/* VIII. JIT_CODE_CLOSE */
static void w_close(struct jw *w, uint64_t ts)
{
	w_end(w, w_begin(w, 3, ts));
}

/* IX. JIT_CODE_UNWINDING_INFO, its table data bytes of 0xee */
static void w_unwind(struct jw *w, uint64_t ts, uint64_t data, uint64_t hdr,
		     uint64_t mapped)
{
	size_t at = w_begin(w, 4, ts);

	w64(w, data);		/* unwind_data_size */
	w64(w, hdr);		/* eh_frame_hdr_size */
	w64(w, mapped);		/* mapped_size */
	w_fill(w, 0xee, data);
	w_end(w, at);
}

static void w_free(struct jw *w)
{
	free(w->b);
	memset(w, 0, sizeof(*w));
}

/* ---- checks ---- */


static struct jitdump *parse(const struct jw *w, struct jitdump_stats *st)
{
	return jitdump__parse(w->b, w->len, SIZE_MAX, st);
}

/* What a lookup should find: NULL name for nothing. */
static bool finds(const struct jitdump *d, uint64_t addr, uint64_t t,
		  const char *name, const char *file, uint32_t line)
{
	struct jitdump_hit h;
	bool hit = jitdump__lookup(d, addr, t, &h);

	if (!name && !hit)
		return true;
	if (name && hit && !strcmp(h.name, name) &&
	    (file ? h.file && !strcmp(h.file, file) : !h.file) &&
	    h.line == line)
		return true;
	fprintf(stderr, "  %#llx at %.3f s: got %s %s:%u, want %s %s:%u\n",
		(unsigned long long)addr, t / 1e9, hit ? h.name : "nothing",
		hit && h.file ? h.file : "-", hit ? h.line : 0,
		name ? name : "nothing", file ? file : "-", line);
	return false;
}

static bool named(const struct jitdump *d, uint64_t addr, uint64_t t,
		  const char *name)
{
	struct jitdump_hit h;
	bool hit = jitdump__lookup(d, addr, t, &h);

	if (name ? hit && !strcmp(h.name, name) : !hit)
		return true;
	fprintf(stderr, "  %#llx at %.3f s: got %s, want %s\n",
		(unsigned long long)addr, t / 1e9, hit ? h.name : "nothing",
		name ? name : "nothing");
	return false;
}

/* The file of test_valid_file, and where its codes' bytes are. */
struct valid {
	struct jw w;
	size_t f1_code, f2_code;
};

static void write_valid(struct valid *v, bool swap)
{
	static const struct entry f1_lines[] = {
		{ 0x10000, 10, "a.js" },
		{ 0x10010, 11, NULL },		/* a.js again */
		{ 0x10040, 20, "b.js" },
	};
	static const struct entry f3_lines[] = {
		{ 0x50010, 7, NULL },		/* no file before it */
	};
	struct jw *w = &v->w;

	memset(v, 0, sizeof(*v));
	w->swap = swap;
	w_header(w, 0);
	w_debug(w, 1 * S, 0x10000, f1_lines, 3);
	w_unwind(w, 1 * S, 64, 16, 64);
	v->f1_code = w_load(w, 1 * S, 0x10000, 0x100, 1, "f1");
	/* perf's agent pads the name to align the code */
	v->f2_code = w_load_pad(w, 2 * S, 0x10100, 0x80, 2, "f2", 5);
	w_debug(w, 2 * S, 0x50000, f3_lines, 1);
	w_load(w, 2 * S, 0x50000, 0x40, 3, "f3");
	/* an id the specification does not have */
	w_end(w, w_begin(w, 99, 3 * S));
	w_move(w, 3 * S, 0x10000, 0x30000, 0x100, 1);
	w_close(w, 4 * S);
}

static void check_valid(const struct valid *v, const struct jitdump *d,
			const struct jitdump_stats *st)
{
	struct jitdump_hit h;

	CHECK(d);
	CHECK(st->records == 9 && st->loads == 3 && st->moves == 1);
	CHECK(st->debug_infos == 2 && st->debug_entries == 4);
	CHECK(st->unwind_infos == 1 && st->eh_frame_bytes == 48);
	CHECK(st->closes == 1 && st->unknown == 1);
	CHECK(!st->bad_records && !st->bad_names && !st->debug_unused);
	CHECK(!st->truncated && !st->broken && !st->full &&
	      !st->bad_header && !st->arch_time);
	CHECK(jitdump__count(d) == 4);	/* three loads and a move */

	CHECK(finds(d, 0x10000, 1500000000, "f1", "a.js", 10));
	CHECK(finds(d, 0x10015, 1500000000, "f1", "a.js", 11));	/* \xff */
	CHECK(finds(d, 0x10040, 1500000000, "f1", "b.js", 20));
	CHECK(finds(d, 0x100ff, 1500000000, "f1", "b.js", 20));
	CHECK(finds(d, 0x10100, 2500000000, "f2", NULL, 0));
	CHECK(finds(d, 0x1017f, 2500000000, "f2", NULL, 0));
	CHECK(named(d, 0x10180, 2500000000, NULL));	/* one past its end */
	CHECK(named(d, 0x0ffff, 2500000000, NULL));
	/* an address before its first debug entry has no line; the first
	 * entry's \xff has no file before it */
	CHECK(finds(d, 0x50000, 2500000000, "f3", NULL, 0));
	CHECK(finds(d, 0x50020, 2500000000, "f3", NULL, 7));
	/* moved at 3 s: gone from where it was, its lines with it */
	CHECK(named(d, 0x10010, 3500000000, NULL));
	CHECK(finds(d, 0x30015, 3500000000, "f1", "a.js", 11));
	CHECK(finds(d, 0x30040, 3500000000, "f1", "b.js", 20));
	CHECK(named(d, 0x30015, 2500000000, NULL));
	/* no time: the code there now */
	CHECK(named(d, 0x10010, 0, NULL));
	CHECK(named(d, 0x30010, 0, "f1"));
	CHECK(named(d, 0x10110, 0, "f2"));

	CHECK(jitdump__lookup(d, 0x10020, 1500000000, &h));
	CHECK(h.start == 0x10000 && h.end == 0x10100 && h.code_index == 1);
	CHECK(h.eh_frame_bytes == 48);
	CHECK(h.code_offset == v->f1_code);
	CHECK(v->w.b[h.code_offset] == 0xc3 &&
	      v->w.b[h.code_offset + 0xff] == 0xc3);
	CHECK(jitdump__lookup(d, 0x10100, 2500000000, &h));
	CHECK(h.code_offset == v->f2_code && h.eh_frame_bytes == 0);
	/* the moved code is the same bytes, at its new addresses */
	CHECK(jitdump__lookup(d, 0x30020, 3500000000, &h));
	CHECK(h.start == 0x30000 && h.end == 0x30100);
	CHECK(h.code_offset == v->f1_code);
}

static void test_valid_file(void)
{
	struct jitdump_stats st;
	struct jitdump *d;
	struct valid v;

	write_valid(&v, false);
	d = parse(&v.w, &st);
	check_valid(&v, d, &st);
	CHECK(!st.swapped);
	jitdump__free(d);
	w_free(&v.w);
}

/* A file of the other byte order reads the same. */
/* LLVM 14's PerfJITEventListener, as Debian's libLLVM writes it (seen in
 * a dump of tests/workloads/llvmjit): vma 0, and every debug entry 0x40
 * past the code, where .text starts in perf inject's ELF file. Read so;
 * a writer that gives vma keeps the specification's meaning. */
static void test_llvm_debug_offset(void)
{
	const struct entry e[] = { { 0x7000 + 0x40, 2, "/tmp/hot.c" },
				   { 0x7000 + 0x55, 4, NULL },
				   { 0x7000 + 0x64, 6, NULL } };
	const struct entry spec[] = { { 0x9040, 7, "/tmp/v8.js" } };
	struct jitdump_stats st;
	struct jitdump *d;
	struct jw w = { 0 };

	w_header(&w, 0);
	w_debug(&w, 1000, 0x7000, e, 3);
	w_load_vma(&w, 1000, 0, 0x7000, 0x3c, 1, "hot_loop", 0);
	w_debug(&w, 1000, 0x9000, spec, 1);
	w_load(&w, 1000, 0x9000, 0x80, 2, "js_fn");
	d = parse(&w, &st);
	CHECK(d);
	CHECK(finds(d, 0x7000, 2000, "hot_loop", "/tmp/hot.c", 2));
	CHECK(finds(d, 0x7014, 2000, "hot_loop", "/tmp/hot.c", 2));
	CHECK(finds(d, 0x7015, 2000, "hot_loop", "/tmp/hot.c", 4));
	CHECK(finds(d, 0x703b, 2000, "hot_loop", "/tmp/hot.c", 6));
	CHECK(finds(d, 0x9000, 2000, "js_fn", NULL, 0));
	CHECK(finds(d, 0x9040, 2000, "js_fn", "/tmp/v8.js", 7));
	jitdump__free(d);
	w_free(&w);
}

static void test_swapped_order(void)
{
	struct jitdump_stats st;
	struct jitdump *d;
	struct valid v;

	write_valid(&v, true);
	CHECK(v.w.b[0] == 0x4A);	/* big-endian on a little-endian host */
	d = parse(&v.w, &st);
	check_valid(&v, d, &st);
	CHECK(st.swapped);
	jitdump__free(d);
	w_free(&v.w);
}

/* The file of test_reuse: code memory reused by later loads. */
static void write_reuse(struct jw *w, uint64_t flags)
{
	w_header(w, flags);
	w_load(w, 1 * S, 0x1000, 0x100, 1, "A");
	w_load(w, 1 * S, 0x2000, 0x100, 2, "C");
	w_load(w, 1 * S, 0x5000, 0x40, 3, "X1");
	w_load(w, 2 * S, 0x1000, 0x80, 4, "B");	/* over A's first half */
	w_load(w, 2 * S, 0x2080, 0x100, 5, "D");	/* over C's second */
	w_load(w, 2 * S, 0x5000, 0x40, 6, "X2");
	w_load(w, 3 * S, 0x5000, 0x40, 7, "X3");
	w_load(w, 5 * S, 0x3000, 0x40, 8, "E");
}

static void test_reuse(void)
{
	struct jitdump_stats st;
	struct jitdump *d;
	struct jw w = { 0 };

	write_reuse(&w, 0);
	d = parse(&w, &st);
	CHECK(d && st.loads == 8);
	CHECK(named(d, 0x1010, 1500000000, "A"));
	CHECK(named(d, 0x1010, 2500000000, "B"));
	/* A's memory was reused at 2 s: its rest is not A's after that */
	CHECK(named(d, 0x1090, 1500000000, "A"));
	CHECK(named(d, 0x1090, 2500000000, NULL));
	CHECK(named(d, 0x1010, 500000000, NULL));	/* before any */
	CHECK(named(d, 0x2010, 1500000000, "C"));
	CHECK(named(d, 0x2010, 2500000000, NULL));
	CHECK(named(d, 0x2090, 1500000000, "C"));
	CHECK(named(d, 0x2090, 2500000000, "D"));
	CHECK(named(d, 0x2170, 2500000000, "D"));
	CHECK(named(d, 0x5000, 1500000000, "X1"));
	CHECK(named(d, 0x5000, 2000000000, "X2"));	/* from its time on */
	CHECK(named(d, 0x5000, 2999999999, "X2"));
	CHECK(named(d, 0x5000, 3500000000, "X3"));
	/* code run just before its record was written is its own, when
	 * nothing held the address before; long before, it is not */
	CHECK(named(d, 0x3000, 5 * S - 1000000, "E"));
	CHECK(named(d, 0x3000, 4 * S, NULL));
	/* no time: the code there now, nothing where memory was freed */
	CHECK(named(d, 0x1010, 0, "B"));
	CHECK(named(d, 0x1090, 0, NULL));
	CHECK(named(d, 0x5010, 0, "X3"));
	jitdump__free(d);
	w_free(&w);
}

/* Times not CLOCK_MONOTONIC: ignored, the last load wins. */
static void test_arch_timestamp(void)
{
	struct jitdump_stats st;
	struct jitdump *d;
	struct jw w = { 0 };

	write_reuse(&w, JITDUMP_FLAGS_ARCH_TIMESTAMP);
	d = parse(&w, &st);
	CHECK(d && st.arch_time && st.loads == 8);
	CHECK(named(d, 0x1010, 1500000000, "B"));
	CHECK(named(d, 0x1090, 1500000000, NULL));
	CHECK(named(d, 0x5000, 1500000000, "X3"));
	CHECK(named(d, 0x3000, 1, "E"));
	jitdump__free(d);
	w_free(&w);
}

static bool is_end(const struct jw *w, size_t len)
{
	for (size_t i = 0; i < w->nends; i++)
		if (w->ends[i] == len)
			return true;
	return false;
}

/* Every prefix of a valid file, each in a buffer of its own size (a read
 * past it is one past the allocation): truncated unless it ends at a
 * record's end, never more than the whole file gives. */
static void test_every_prefix(void)
{
	struct jitdump_stats st;
	struct jitdump_hit h;
	struct jitdump *d;
	struct valid v;
	uint8_t *buf;

	write_valid(&v, false);
	for (size_t len = 0; len <= v.w.len; len++) {
		buf = malloc(len ? len : 1);
		CHECK(buf);
		memcpy(buf, v.w.b, len);
		d = jitdump__parse(buf, len, SIZE_MAX, &st);
		free(buf);
		CHECK(d);
		CHECK(st.truncated == (len && !is_end(&v.w, len)));
		CHECK(!st.bad_records && !st.bad_names && !st.bad_header);
		CHECK(jitdump__count(d) <= 4);
		jitdump__lookup(d, 0x10010, 1500000000, &h);
		if (len == v.w.len)
			check_valid(&v, d, &st);
		jitdump__free(d);
		CHECK(!check_case_failed);
	}
	w_free(&v.w);
}

/* The file as the JIT writes it, a byte at a time: read on from where
 * the last read stopped, it ends as the whole file parsed at once. */
static void test_read_on_as_it_grows(void)
{
	struct jitdump_stats st = { 0 };
	struct jitdump *d = jitdump__new(SIZE_MAX);
	struct valid v;
	uint64_t next;

	CHECK(d);
	write_valid(&v, false);
	for (size_t len = 1; len <= v.w.len; len++) {
		next = jitdump__next(d);
		CHECK(next <= len);
		if (next < len)
			jitdump__feed(d, v.w.b + next, len - next, len, &st);
		CHECK(jitdump__index(d) == 0);
		/* what is there is found as soon as its record is whole */
		if (len >= v.f1_code + 0x100)
			CHECK(named(d, 0x10010, 1500000000, "f1"));
	}
	CHECK(jitdump__next(d) == v.w.len);
	check_valid(&v, d, &st);
	jitdump__free(d);
	w_free(&v.w);
}

/* The header: anything this reader does not read is refused whole. */
static void test_bad_header(void)
{
	struct { size_t at; int bytes; uint64_t v; } cases[] = {
		{ 0, 4, 0x4A695445 },		/* magic */
		{ 4, 4, 0 },			/* version */
		{ 8, 4, 39 },			/* total_size under 40 */
		{ 8, 4, JITDUMP_HEADER_MAX + 1 },
		{ 32, 8, 2 },			/* a flag unknown here */
		{ 32, 8, 1ull << 63 },
	};
	struct jitdump_stats st;
	struct jitdump *d;
	struct jw w;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&w, 0, sizeof(w));
		w_header(&w, 0);
		w_load(&w, S, 0x1000, 0x10, 1, "f");
		if (cases[i].bytes == 4)
			w_patch32(&w, cases[i].at, cases[i].v);
		else
			w_patch64(&w, cases[i].at, cases[i].v);
		d = parse(&w, &st);
		CHECK(d && st.bad_header && !st.records);
		CHECK(jitdump__count(d) == 0 && named(d, 0x1000, 0, NULL));
		jitdump__free(d);
		w_free(&w);
	}

	/* A longer header: its fields after ours are skipped. */
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	w_fill(&w, 0xaa, 24);
	w_patch32(&w, 8, 64);
	w_load(&w, S, 0x1000, 0x10, 1, "f");
	d = parse(&w, &st);
	CHECK(d && !st.bad_header && st.loads == 1 && named(d, 0x1000, 0, "f"));
	jitdump__free(d);
	/* ... but not past the end of the file */
	w.len = 50;
	d = parse(&w, &st);
	CHECK(d && st.truncated && !st.records);
	jitdump__free(d);
	w_free(&w);
}

/* One bad record, then a good load: the bad one refused and counted,
 * the good one read (framing holds). */
enum bad { BAD_REC, BAD_NAME_ };

static void check_one_bad(struct jw *w, enum bad kind, const char *what)
{
	struct jitdump_stats st;
	struct jitdump *d;

	w_load(w, 5 * S, 0x9000, 0x10, 99, "good");
	d = parse(w, &st);
	if (!d || (kind == BAD_REC ? st.bad_records != 1 || st.bad_names :
				     st.bad_names != 1 || st.bad_records) ||
	    st.truncated || !named(d, 0x9000, 6 * S, "good")) {
		fprintf(stderr, "  %s: %llu bad records, %llu bad names\n",
			what, (unsigned long long)st.bad_records,
			(unsigned long long)st.bad_names);
		check_case_failed = 1;
	}
	jitdump__free(d);
	w_free(w);
}

static void test_bad_records(void)
{
	char long_name[JITDUMP_NAME_MAX + 10];
	struct entry e = { 0x1000, 1, "x.js" };
	struct jitdump_stats st;
	struct jitdump *d;
	struct jw w;
	size_t at;

	/* a load shorter than its fields */
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	at = w_begin(&w, 0, S);
	w_fill(&w, 0, 30);
	w_end(&w, at);
	check_one_bad(&w, BAD_REC, "short load");

	/* code larger than its record (no room for the name's NUL) */
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	at = w.len;
	w_load(&w, S, 0x1000, 0x10, 1, "f");
	w_patch64(&w, at + 40, 0x10 + 2);
	check_one_bad(&w, BAD_REC, "code over its record");

	/* an absurd code size */
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	at = w.len;
	w_load(&w, S, 0x1000, 0x10, 1, "f");
	w_patch64(&w, at + 40, 1ull << 62);
	check_one_bad(&w, BAD_REC, "absurd code size");

	/* code that wraps around the address space */
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	w_load(&w, S, UINT64_MAX - 7, 0x10, 1, "f");
	check_one_bad(&w, BAD_REC, "wrapping code");

	/* a name without its NUL */
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	at = w.len;
	w_load(&w, S, 0x1000, 0, 1, "abcd");
	w.b[w.len - 1] = 'e';
	check_one_bad(&w, BAD_NAME_, "name without NUL");

	/* a name longer than the bound */
	memset(&w, 0, sizeof(w));
	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	w_header(&w, 0);
	w_load(&w, S, 0x1000, 0x10, 1, long_name);
	check_one_bad(&w, BAD_NAME_, "name over the bound");

	/* debug info: more entries than the record can hold */
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	at = w.len;
	w_debug(&w, S, 0x1000, &e, 1);
	w_patch64(&w, at + 24, UINT64_MAX);
	check_one_bad(&w, BAD_REC, "debug entries count");
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	at = w.len;
	w_debug(&w, S, 0x1000, &e, 1);
	w_patch64(&w, at + 24, 2);
	check_one_bad(&w, BAD_REC, "debug entries past the record");

	/* a debug entry's file name without its NUL */
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	w_debug(&w, S, 0x1000, &e, 1);
	w.b[w.len - 1] = 's';
	check_one_bad(&w, BAD_NAME_, "debug file without NUL");

	/* a debug info over JITDUMP_RECORD_MAX */
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	at = w.len;
	w_debug(&w, S, 0x1000, &e, 1);
	w_fill(&w, 0, JITDUMP_RECORD_MAX);
	w_end(&w, at);
	check_one_bad(&w, BAD_REC, "debug info over the bound");

	/* moves: of code never loaded, from elsewhere, of another size */
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	w_move(&w, S, 0x1000, 0x2000, 0x10, 7);
	check_one_bad(&w, BAD_REC, "move of unknown code");
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	w_load(&w, S, 0x1000, 0x10, 7, "m");
	w_move(&w, 2 * S, 0x1004, 0x2000, 0x10, 7);
	check_one_bad(&w, BAD_REC, "move from elsewhere");
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	w_load(&w, S, 0x1000, 0x10, 7, "m");
	w_move(&w, 2 * S, 0x1000, 0x2000, 0x20, 7);
	check_one_bad(&w, BAD_REC, "move of another size");

	/* unwinding info whose sizes do not add up */
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	at = w.len;
	w_unwind(&w, S, 16, 8, 16);
	w_patch64(&w, at + 16, 17);
	check_one_bad(&w, BAD_REC, "unwind table over its record");
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	w_unwind(&w, S, 16, 17, 16);
	check_one_bad(&w, BAD_REC, "EH frame header over the table");
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	w_unwind(&w, S, 16, 8, 1ull << 40);
	check_one_bad(&w, BAD_REC, "mapped over the table");
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	at = w_begin(&w, 4, S);
	w_fill(&w, 0, 8);
	w_end(&w, at);
	check_one_bad(&w, BAD_REC, "short unwinding info");

	/* a record size under the record header's: nothing after it */
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	w_load(&w, S, 0x1000, 0x10, 1, "kept");
	at = w_begin(&w, 0, S);
	w_patch32(&w, at + 4, 15);
	w_load(&w, S, 0x2000, 0x10, 2, "lost");
	d = parse(&w, &st);
	CHECK(d && st.broken && st.bad_records == 1 && st.loads == 1);
	CHECK(named(d, 0x1000, 0, "kept") && named(d, 0x2000, 0, NULL));
	jitdump__free(d);
	w_free(&w);

	/* a record size past the end of the file */
	memset(&w, 0, sizeof(w));
	w_header(&w, 0);
	w_load(&w, S, 0x1000, 0x10, 1, "kept");
	at = w.len;
	w_load(&w, S, 0x2000, 0x10, 2, "cut");
	w_patch32(&w, at + 4, w.len - at + 1);
	d = parse(&w, &st);
	CHECK(d && st.truncated && st.loads == 1 && !st.bad_records);
	CHECK(named(d, 0x1000, 0, "kept") && named(d, 0x2000, 0, NULL));
	jitdump__free(d);
	w_free(&w);
}

/* The valid file with random bytes changed, thousands of times: parsed
 * whatever it says, looked up, within its buffer (this test runs under
 * the sanitizers too). */
static void test_random_bytes(void)
{
	struct jitdump_stats st;
	struct jitdump_hit h;
	struct jitdump *d;
	struct valid v;
	uint8_t *buf;

	write_valid(&v, false);
	buf = malloc(v.w.len);
	CHECK(buf);
	for (int round = 0; round < 20000; round++) {
		memcpy(buf, v.w.b, v.w.len);
		for (int k = 1 + check_rnd(4); k; k--) {
			size_t at = check_rnd(v.w.len);

			/* a byte, or a size field's worth */
			if (check_rnd(2))
				buf[at] = check_rnd(256);
			else if (at + 4 <= v.w.len)
				memset(buf + at, check_rnd(2) ? 0xff : 0, 4);
		}
		d = jitdump__parse(buf, v.w.len, 1 << 20, &st);
		CHECK(d);
		for (uint64_t a = 0x10000; a < 0x10200; a += 0x40)
			jitdump__lookup(d, a, check_rnd(2) ? 0 : 1500000000, &h);
		CHECK(jitdump__bytes(d) <= 1 << 20);
		jitdump__free(d);
	}
	free(buf);
	w_free(&v.w);
}

/* Names that are not UTF-8 are made so; debug info not for the load
 * that follows is not given to it. */
static void test_names_and_unused_debug(void)
{
	struct entry e = { 0x7000, 3, "o\xc0k.js" };
	struct jitdump_stats st;
	struct jitdump *d;
	struct jw w = { 0 };

	w_header(&w, 0);
	w_load(&w, S, 0x1000, 0x10, 1, "f\xff\xfeo");
	w_debug(&w, S, 0x7000, &e, 1);	/* for code at 0x7000 */
	w_load(&w, S, 0x2000, 0x10, 2, "g");
	w_debug(&w, S, 0x7000, &e, 1);
	w_debug(&w, S, 0x7000, &e, 1);	/* the one before never used */
	w_load(&w, S, 0x7000, 0x10, 3, "h");
	d = parse(&w, &st);
	/* the name, and the file in each of the three debug infos */
	CHECK(d && st.names_fixed == 4 && st.debug_unused == 2);
	CHECK(finds(d, 0x1000, 0, "f\xef\xbf\xbd\xef\xbf\xbdo", NULL, 0));
	CHECK(finds(d, 0x2000, 0, "g", NULL, 0));
	CHECK(finds(d, 0x7004, 0, "h", "o\xef\xbf\xbdk.js", 3));
	jitdump__free(d);
	w_free(&w);
}

/* JITDUMP_CODES_MAX codes are kept, then the parse stops. */
static void test_codes_bound(void)
{
	struct jitdump_stats st;
	struct jitdump *d;
	struct jw w = { 0 };

	w_header(&w, 0);
	for (uint64_t i = 0; i < JITDUMP_CODES_MAX + 3; i++)
		w_load(&w, S, 0x100000 + 16 * i, 16, i, "c");
	d = parse(&w, &st);
	CHECK(d && st.full && !st.over_budget);
	CHECK(jitdump__count(d) == JITDUMP_CODES_MAX);
	CHECK(named(d, 0x100000 + 16 * (JITDUMP_CODES_MAX - 1ull), 0, "c"));
	CHECK(named(d, 0x100000 + 16ull * JITDUMP_CODES_MAX, 0, NULL));
	jitdump__free(d);
	w_free(&w);
}

/* A JIT that compiles query after query into the same memory, each with
 * its lines, and once moves a function: fed as it grows, with the codes
 * that ended over a second before forgotten as it goes, the dump holds
 * what is live (and the last second), within a bound the whole file
 * would overflow; the names it gives are right, and a time whose code
 * was forgotten gets no name rather than a wrong one. A parse stopped at
 * the bound goes on once forgetting made room. */
static void test_forget_ended(void)
{
	const uint64_t q0 = 10 * S, step = S / 100, n = 3000;
	struct jitdump_stats st = { 0 };
	struct jitdump *d = jitdump__new(256 << 10);
	struct entry e[3];
	char name[32], file[32];
	struct jw w = { 0 };
	uint64_t next, t = q0;
	size_t peak = 0;

	CHECK(d);
	w_header(&w, 0);
	w_load(&w, q0, 0x500000, 64, 1, "mover");
	for (uint64_t q = 0; q < n; q++) {
		t = q0 + q * step;
		snprintf(name, sizeof(name), "q%llu", (unsigned long long)q);
		snprintf(file, sizeof(file), "/ir/q%llu.ir", (unsigned long long)q);
		for (int k = 0; k < 3; k++)
			e[k] = (struct entry){ 0x400000 + 32 * k, 10 + k,
					       k ? NULL : file };
		w_debug(&w, t, 0x400000, e, 3);
		w_load(&w, t, 0x400000, 96, 100 + q, name);
		if (q == n / 2)
			w_move(&w, t, 0x500000, 0x600000, 64, 1);
		if (q % 100 == 99) {
			next = jitdump__next(d);
			jitdump__feed(d, w.b + next, w.len - next, w.len, &st);
			CHECK(!st.over_budget && !st.bad_records);
			jitdump__forget(d, t - S);
			if (jitdump__bytes(d) > peak)
				peak = jitdump__bytes(d);
		}
	}
	CHECK(jitdump__index(d) == 0 && jitdump__next(d) == w.len);
	CHECK(st.loads == n + 1 && st.moves == 1);
	/* the last second's 100 queries, the mover, and its move */
	CHECK(jitdump__count(d) <= 103);
	CHECK(finds(d, 0x400000 + 40, t, "q2999", "/ir/q2999.ir", 11));
	CHECK(finds(d, 0x400000 + 70, t - S / 2, "q2949", "/ir/q2949.ir", 12));
	CHECK(finds(d, 0x400000 + 5, q0 + 100 * step, NULL, NULL, 0));
	CHECK(named(d, 0x600010, t, "mover") && named(d, 0x500010, t, NULL));
	CHECK(peak < (256 << 10));
	jitdump__free(d);

	/* Stopped at a bound too small for the whole file: forgetting lets
	 * it go on to the end. */
	d = jitdump__new(64 << 10);
	memset(&st, 0, sizeof(st));
	CHECK(d);
	jitdump__feed(d, w.b, w.len, w.len, &st);
	CHECK(st.over_budget && jitdump__next(d) < w.len);
	for (int i = 0; i < 200 && jitdump__next(d) < w.len; i++) {
		CHECK(jitdump__forget(d, t - S) > 0 || i == 0);
		next = jitdump__next(d);
		jitdump__feed(d, w.b + next, w.len - next, w.len, &st);
	}
	CHECK(jitdump__next(d) == w.len && jitdump__index(d) == 0);
	CHECK(finds(d, 0x400000 + 40, t, "q2999", "/ir/q2999.ir", 11));
	jitdump__free(d);
	w_free(&w);
}

/* Forgetting changes no answer for the times after the codes it keeps
 * were loaded, also in a file whose times are out of order (threads
 * write it): here B ends A at 105 s, and C, written after B but stamped
 * 102 s, ends B (and not A). A stays (it ended after the cut at 103 s),
 * and so must B, which tells when A ended: else A would look live, and
 * name 0x1010 from 105 s on. (Before 105 s the answers of such a file are the lookup's
 * guess, which assumes the times of one start in file order.) */
static void test_forget_same_answers(void)
{
	const uint64_t at[] = { 0x1010, 0x1038, 0x1049, 0x2000, 0x2008 };
	const char *before[5 * 16];
	struct jitdump_stats st;
	struct jitdump_hit h;
	struct jitdump *d;
	struct jw w = { 0 };
	size_t k = 0;

	w_header(&w, 0);
	w_load(&w, 90 * S, 0x1000, 64, 1, "old");
	w_load(&w, 95 * S, 0x1000, 64, 2, "older_end");
	w_load(&w, 100 * S, 0x1000, 64, 3, "A");
	w_load(&w, 105 * S, 0x1030, 32, 4, "B");
	w_load(&w, 102 * S, 0x1048, 8, 5, "C");
	w_load(&w, 101 * S, 0x2000, 16, 6, "D");
	d = parse(&w, &st);
	CHECK(d);
	for (uint64_t t = 105 * S; t < 121 * S; t += S)
		for (size_t i = 0; i < 5; i++)
			before[k++] = jitdump__lookup(d, at[i], t, &h) ?
					      strdup(h.name) : NULL;
	CHECK(jitdump__forget(d, 103 * S) > 0);
	CHECK(jitdump__count(d) < 6);
	k = 0;
	for (uint64_t t = 105 * S; t < 121 * S; t += S)
		for (size_t i = 0; i < 5; i++, k++) {
			bool hit = jitdump__lookup(d, at[i], t, &h);

			CHECK(hit == !!before[k] &&
			      (!hit || !strcmp(h.name, before[k])));
			free((void *)before[k]);
		}
	jitdump__free(d);
	w_free(&w);
}

/* JITDUMP_LINES_MAX debug entries are kept, then the parse stops. */
static void test_lines_bound(void)
{
	const size_t per = 50000;	/* 900 KB records, under the bound */
	struct entry *e = calloc(per, sizeof(*e));
	struct jitdump_stats st;
	struct jitdump *d;
	struct jw w = { 0 };
	uint64_t i;

	CHECK(e);
	for (size_t k = 0; k < per; k++)
		e[k] = (struct entry){ 0x1000 + k, k + 1, k ? NULL : "f" };
	w_header(&w, 0);
	for (i = 0; i * per <= JITDUMP_LINES_MAX; i++) {
		w_debug(&w, S, 0x1000, e, per);
		w_load(&w, S, 0x1000, per, i, "c");
	}
	free(e);
	d = parse(&w, &st);
	CHECK(d && st.full);
	CHECK(st.debug_entries == (JITDUMP_LINES_MAX / per) * per);
	CHECK(jitdump__count(d) == JITDUMP_LINES_MAX / per);
	CHECK(finds(d, 0x1000 + 5, 0, "c", "f", 6));
	jitdump__free(d);
	w_free(&w);
}

/* What it holds stays within its memory bound; it stops there, and what
 * it kept is found. */
static void test_memory_bound(void)
{
	const size_t max = 256 << 10;
	struct jitdump_stats st;
	struct jitdump *d;
	struct jw w = { 0 };

	w_header(&w, 0);
	for (uint64_t i = 0; i < 100000; i++)
		w_load(&w, S, 0x100000 + 16 * i, 16, i, "code");
	d = jitdump__parse(w.b, w.len, max, &st);
	CHECK(d && st.over_budget && !st.full);
	CHECK(jitdump__bytes(d) <= max);
	CHECK(jitdump__count(d) > 1000 && jitdump__count(d) < 100000);
	CHECK(named(d, 0x100000, 0, "code"));
	jitdump__free(d);
	/* too small even for itself: nothing kept, nothing read */
	d = jitdump__parse(w.b, w.len, 100, &st);
	CHECK(d && st.over_budget && jitdump__count(d) == 0);
	jitdump__free(d);
	w_free(&w);
}

/* ---- lookups against a brute-force reference ---- */

struct ref_code {
	uint64_t start, end, time, t_end;
	char name[16];
};

/* The code valid at t (time 0: valid now) over addr, by the rule: a code
 * holds its memory from its time until the first code after it in the
 * file that overlaps any of it, or its move. */
static const struct ref_code *ref_at(const struct ref_code *c, size_t n,
				     uint64_t addr, uint64_t t)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].start <= addr && addr < c[i].end &&
		    (t ? c[i].time <= t && t < c[i].t_end :
			 c[i].t_end == UINT64_MAX))
			return &c[i];
	return NULL;
}

static bool agrees(const struct jitdump *d, const struct ref_code *c,
		   size_t n, uint64_t addr, uint64_t t)
{
	const struct ref_code *want = ref_at(c, n, addr, t);

	return named(d, addr, t, want ? want->name : NULL);
}

/* Random codes over a small range, loads and moves, one a second: the
 * overlaps of every shape. Read whole, and read on in random pieces. */
static void test_random_reference(void)
{
	enum { N = 3000 };
	struct ref_code *c = calloc(N, sizeof(*c));
	uint64_t *index = calloc(N, sizeof(*index));
	struct jitdump_stats st = { 0 };
	struct jitdump *d, *inc;
	struct jw w = { 0 };
	size_t n = 0;

	CHECK(c && index);
	w_header(&w, 0);
	for (uint64_t t = 1; n < N; t++) {
		struct ref_code *x = &c[n];
		size_t src = n ? check_rnd(n) : 0;

		x->time = t * S;
		x->t_end = UINT64_MAX;
		if (n && check_rnd(8) == 0 && c[src].t_end == UINT64_MAX) {
			/* moved: its name and size, elsewhere */
			uint64_t size = c[src].end - c[src].start;

			x->start = 0x100000 + check_rnd(0x10000);
			x->end = x->start + size;
			memcpy(x->name, c[src].name, sizeof(x->name));
			index[n] = index[src];
			c[src].t_end = x->time;
			w_move(&w, x->time, c[src].start, x->start, size,
			       index[n]);
		} else {
			x->start = 0x100000 + check_rnd(0x10000);
			x->end = x->start + 1 + check_rnd(512);
			snprintf(x->name, sizeof(x->name), "c%zu", n);
			index[n] = n;
			w_load(&w, x->time, x->start, x->end - x->start, n,
			       x->name);
		}
		for (size_t i = 0; i < n; i++)
			if (c[i].t_end == UINT64_MAX && c[i].start < x->end &&
			    x->start < c[i].end)
				c[i].t_end = x->time;
		n++;
	}
	d = parse(&w, &st);
	CHECK(d && !st.bad_records && st.loads + st.moves == N);

	inc = jitdump__new(SIZE_MAX);
	CHECK(inc);
	memset(&st, 0, sizeof(st));
	for (size_t len = 0; len < w.len;) {
		uint64_t next = jitdump__next(inc);

		len += 1 + check_rnd(20000);
		if (len > w.len)
			len = w.len;
		if (next < len)
			jitdump__feed(inc, w.b + next, len - next, len, &st);
		CHECK(jitdump__index(inc) == 0);
	}
	CHECK(st.loads + st.moves == N);

	for (int q = 0; q < 20000; q++) {
		uint64_t addr = 0x100000 + check_rnd(0x10000 + 512);
		uint64_t t = q % 10 ? (1 + check_rnd(N + 2)) * S + S / 2 : 0;

		CHECK(agrees(d, c, n, addr, t));
		CHECK(agrees(inc, c, n, addr, t));
	}
	jitdump__free(d);
	jitdump__free(inc);
	free(c);
	free(index);
	w_free(&w);
}

/* More codes than one pass of the index takes: slots reused again and
 * again, some codes over three slots. */
static void test_many_codes_reference(void)
{
	enum { N = 150000, SLOTS = 1000, SLOT = 0x40 };
	struct ref_code *c = calloc(N, sizeof(*c));
	uint32_t *last = malloc(SLOTS * sizeof(*last));
	struct jitdump_stats st;
	struct jitdump *d;
	struct jw w = { 0 };

	CHECK(c && last);
	memset(last, 0xff, SLOTS * sizeof(*last));
	w_header(&w, 0);
	for (size_t i = 0; i < N; i++) {
		size_t slot = (i * 7919) % (SLOTS - 2);
		size_t width = i % 17 ? 1 : 3;

		c[i].start = 0x400000 + slot * SLOT;
		c[i].end = c[i].start + width * SLOT;
		c[i].time = (i + 1) * S;
		c[i].t_end = UINT64_MAX;
		snprintf(c[i].name, sizeof(c[i].name), "m%zu", i);
		for (size_t s = slot; s < slot + width; s++) {
			if (last[s] != UINT32_MAX &&
			    c[last[s]].t_end == UINT64_MAX)
				c[last[s]].t_end = c[i].time;
			last[s] = i;
		}
		w_load(&w, c[i].time, c[i].start, width * SLOT, i, c[i].name);
	}
	d = parse(&w, &st);
	CHECK(d && jitdump__count(d) == N);
	for (int q = 0; q < 3000; q++) {
		uint64_t addr = 0x400000 + check_rnd(SLOTS * SLOT);
		/* recent times (a profile's samples), and any: an address
		 * reused a hundred times since is still looked up */
		uint64_t t = q % 3 ? (N - check_rnd(2000)) * S + S / 2 :
				     (1 + check_rnd(N)) * S + S / 2;

		CHECK(agrees(d, c, N, addr, q % 7 ? t : 0));
	}
	jitdump__free(d);
	free(c);
	free(last);
	w_free(&w);
}

/* ---- a process's jitdump, found and read by the process table ---- */

static char tmpdir[] = "/tmp/tagprof-jitdump.XXXXXX";

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * S + ts.tv_nsec;
}

static bool append(const char *path, const struct jw *w, size_t from)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, w->b + from, w->len - from) == (ssize_t)(w->len - from);
	return !close(fd) && ok;
}

/* The function, file and line of location loc's first line. */
static bool loc_is(const struct loctab *lt, uint32_t loc, const char *fn,
		   const char *file, int32_t line)
{
	const struct loctab_location *l;
	const struct loctab_function *f;
	const struct loctab_line *ln;

	if (!loc)
		return false;
	l = loctab__location_at(lt, loc);
	if (l->nlines != 1)
		return false;
	ln = loctab__lines(lt, l);
	f = loctab__function_at(lt, ln->function);
	if (!strcmp(f->name, fn) && (file ? f->file && !strcmp(f->file, file) :
					    !f->file) && ln->line == line)
		return true;
	fprintf(stderr, "  got %s %s:%d, want %s %s:%d\n", f->name,
		f->file ? f->file : "-", ln->line, fn, file ? file : "-",
		line);
	return false;
}

struct self {
	char path[PATH_MAX];
	uint8_t *code;		/* anonymous executable memory: the JIT's */
	void *marker;		/* the jitdump file, mapped as perf asks */
	struct proctable *t;
	struct ksymbolizer *ks;
	struct loctab *lt;
	struct symbolizer *z;
	struct proc *p;
};

static void self_end(struct self *s)
{
	symbolizer__free(s->z);
	loctab__free(s->lt);
	ksymbolizer__free(s->ks);
	proctable__free(s->t);
	if (s->marker && s->marker != MAP_FAILED)
		munmap(s->marker, 4096);
	if (s->code && s->code != MAP_FAILED)
		munmap(s->code, 2 * 4096);
	unlink(s->path);
}

/* Maps the code memory and the jitdump (written first with w), then makes
 * the process table that reads them. false when this system does not
 * let a file in /tmp be mapped executable. */
static bool self_start(struct self *s, const struct jw *w)
{
	int fd;

	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "%s/jit-%d.dump", tmpdir,
		 (int)getpid());
	if (!append(s->path, w, 0))
		return false;
	fd = open(s->path, O_RDONLY);
	if (fd < 0)
		return false;
	s->marker = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd,
			 0);
	close(fd);
	s->code = mmap(NULL, 2 * 4096, PROT_READ | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->marker == MAP_FAILED || s->code == MAP_FAILED)
		return false;
	s->t = proctable__new();
	s->ks = ksymbolizer__new(false);
	s->lt = loctab__new();
	s->z = s->t && s->ks && s->lt ? symbolizer__new(s->t, s->ks, s->lt) :
	       NULL;
	s->p = s->z ? proctable__get(s->t, getpid(), 0, "test_jitdump") : NULL;
	return s->p;
}

static uint32_t frame_at(struct self *s, uint64_t addr, uint64_t t)
{
	uint32_t loc = 0;

	/* A leaf frame: its address as it is. */
	symbolizer__stack_at(s->z, s->p, t, &addr, 1, NULL, 0, &loc);
	return loc;
}

/* The code's frames get the code load's name and the debug info's file
 * and line, before the perf map's; memory the JIT reused later, after the
 * file grew, names the new code from its time on, the old before, in the
 * same window. */
static void test_process_jitdump(void)
{
	struct entry lines[] = { { 0, 3, "q1.sql" }, { 0, 9, NULL } };
	const struct proctable_stats *ps;
	const struct loctab_mapping *m;
	struct self s;
	struct jw w = { 0 };
	uint64_t code, t0, t1, t2;
	uint32_t a, b, c;
	size_t code_off, grown;
	FILE *f;
	char map[64];

	t0 = mono_ns();
	w_header(&w, 0);
	/* the code's addresses are known once it is mapped: written after */
	if (!self_start(&s, &w)) {
		self_end(&s);
		w_free(&w);
		CHECK(0);
	}
	code = (uintptr_t)s.code;
	lines[0].addr = code + 0x100;
	lines[1].addr = code + 0x120;
	w.len = w.nends = 0;
	w_debug(&w, t0, code + 0x100, lines, 2);
	code_off = w_load(&w, t0, code + 0x100, 0x80, 1, "query_1_filter");
	/* a perf map names the same code: the jitdump comes first */
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(map, "w");
	CHECK(f);
	fprintf(f, "%llx 10 from_perf_map\n%llx 10 only_in_perf_map\n",
		(unsigned long long)code + 0x100,
		(unsigned long long)code + 0x800);
	CHECK(fclose(f) == 0);
	CHECK(append(s.path, &w, 0));
	code_off += 40;		/* after the header written first */

	a = frame_at(&s, code + 0x124, t0 + 1000);
	CHECK(loc_is(s.lt, a, "query_1_filter", "q1.sql", 9));
	m = loctab__mapping_at(s.lt, loctab__location_at(s.lt, a)->mapping);
	CHECK(!strcmp(m->file, s.path));
	CHECK(m->start == code + 0x100 && m->limit == code + 0x180);
	CHECK(m->offset == code_off);
	CHECK(m->has_filenames && m->has_line_numbers);
	CHECK(loc_is(s.lt, frame_at(&s, code + 0x100, t0 + 1000),
		     "query_1_filter", "q1.sql", 3));
	/* what the jitdump does not name, the perf map still does */
	CHECK(loc_is(s.lt, frame_at(&s, code + 0x804, t0 + 1000),
		     "only_in_perf_map", NULL, 0));
	ps = proctable__stats(s.t);
	CHECK(ps->jitdumps_read == 1 && ps->jitdump_loads == 1);
	CHECK(ps->jitdump_debug_entries == 2 && ps->jitdump_records == 2);
	CHECK(ps->jitdump_bytes > 0 && !ps->jitdump_refused);
	CHECK(symbolizer__stats(s.z)->jitdump_named == 2);

	/* The JIT reuses the memory for other code, and appends. */
	usleep(2000);
	t1 = mono_ns();
	grown = w.len;
	w_load(&w, t1, code + 0x100, 0x40, 2, "query_2_join");
	CHECK(append(s.path, &w, grown));
	/* A sample from before the last look: what was read then names it,
	 * the file is not read again. */
	CHECK(loc_is(s.lt, frame_at(&s, code + 0x104, t0 + 2000),
		     "query_1_filter", "q1.sql", 3));
	CHECK(ps->jitdump_loads == 1);
	/* One taken after it may run code loaded since: the file is looked
	 * at again, and read on. */
	usleep(2000);
	b = frame_at(&s, code + 0x104, mono_ns());
	CHECK(loc_is(s.lt, b, "query_2_join", NULL, 0));
	c = frame_at(&s, code + 0x104, t1 - 1000);
	CHECK(loc_is(s.lt, c, "query_1_filter", "q1.sql", 3));
	CHECK(b != c);
	/* the old code's other half is not the old code's any more */
	CHECK(!loctab__location_at(s.lt, frame_at(&s, code + 0x150,
						   t1 + 1000))->nlines);
	CHECK(ps->jitdump_loads == 2 && ps->jitdump_records == 3);
	/* A look, and at once (well within the 1 ms a rate limit once
	 * waited) the memory reused again: a sample taken since is the new
	 * code's. */
	CHECK(loc_is(s.lt, frame_at(&s, code + 0x104, mono_ns()),
		     "query_2_join", NULL, 0));
	t2 = mono_ns();
	grown = w.len;
	w_load(&w, t2, code + 0x100, 0x40, 3, "query_3_sort");
	CHECK(append(s.path, &w, grown));
	CHECK(loc_is(s.lt, frame_at(&s, code + 0x108, mono_ns()),
		     "query_3_sort", NULL, 0));

	/* The next window: the same names again. */
	loctab__reset(s.lt);
	CHECK(loc_is(s.lt, frame_at(&s, code + 0x124, t0 + 1000),
		     "query_1_filter", "q1.sql", 9));
	unlink(map);
	self_end(&s);
	w_free(&w);
}

/* A jitdump of another user is refused, and counted; one this process
 * maps but of another pid is not its own. */
static void test_process_jitdump_refused(void)
{
	const struct proctable_stats *ps;
	struct jitdump_hit h;
	const char *path;
	struct self s;
	struct jw w = { 0 };

	w_header(&w, 0);
	w_load(&w, 1, 0x1000, 0x10, 1, "f");
	if (!self_start(&s, &w)) {
		self_end(&s);
		w_free(&w);
		CHECK(0);
	}
	CHECK(chown(s.path, 65534, 65534) == 0);
	CHECK(proctable__jitdump(s.t, s.p, 0x1000, 0, &h, &path) == -ENOENT);
	ps = proctable__stats(s.t);
	CHECK(ps->jitdump_refused == 1 && !ps->jitdumps_read);
	CHECK(proctable__jitdump(s.t, s.p, 0x1000, 0, &h, &path) == -ENOENT);
	CHECK(ps->jitdump_refused == 1);
	self_end(&s);
	w_free(&w);
}

/* Whether a file of tmpdir can be mapped executable (not on a noexec
 * mount). */
static bool exec_maps(void)
{
	char path[PATH_MAX];
	void *p = MAP_FAILED;
	int fd;

	snprintf(path, sizeof(path), "%s/probe", tmpdir);
	fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd >= 0 && !ftruncate(fd, 4096))
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (fd >= 0)
		close(fd);
	unlink(path);
	if (p == MAP_FAILED)
		return false;
	munmap(p, 4096);
	return true;
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_valid_file);
	RUN(test_swapped_order);
	RUN(test_llvm_debug_offset);
	RUN(test_reuse);
	RUN(test_arch_timestamp);
	RUN(test_every_prefix);
	RUN(test_read_on_as_it_grows);
	RUN(test_bad_header);
	RUN(test_bad_records);
	RUN(test_random_bytes);
	RUN(test_names_and_unused_debug);
	RUN(test_codes_bound);
	RUN(test_lines_bound);
	RUN(test_memory_bound);
	RUN(test_random_reference);
	RUN(test_many_codes_reference);
	RUN(test_forget_ended);
	RUN(test_forget_same_answers);
	if (exec_maps()) {
		RUN(test_process_jitdump);
		if (!geteuid())
			RUN(test_process_jitdump_refused);
		else
			SKIP(test_process_jitdump_refused, "needs root");
	} else {
		SKIP(test_process_jitdump, "/tmp is mounted noexec");
		SKIP(test_process_jitdump_refused, "/tmp is mounted noexec");
	}
	check_remove_dir(tmpdir);
	CHECK_EXIT();
}
