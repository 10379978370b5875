// SPDX-License-Identifier: BSD-2-Clause
/* jitdump parsing and lookup (jitdump.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc/jitdump.h"
#include "util/grow.h"
#include "util/hashmap.h"
#include "util/sortedrange.h"
#include "util/utf8.h"

/* Record ids (the specification's section IV). */
enum {
	JIT_CODE_LOAD = 0,
	JIT_CODE_MOVE = 1,
	JIT_CODE_DEBUG_INFO = 2,
	JIT_CODE_CLOSE = 3,
	JIT_CODE_UNWINDING_INFO = 4,
};

/* The fixed parts, field by field as the specification lists them (64-bit
 * unless said). The file header: magic, version, total_size, elf_mach,
 * pad1, pid (32-bit); timestamp, flags. */
#define FILE_HEADER_SIZE	40
/* A record's header: id, total_size (32-bit); timestamp. */
#define RECORD_HEADER_SIZE	16
/* JIT_CODE_LOAD: pid, tid (32-bit); vma, code_addr, code_size,
 * code_index; then the name and the code. */
#define LOAD_FIXED		(RECORD_HEADER_SIZE + 40)
/* JIT_CODE_MOVE: pid, tid (32-bit); vma, old_code_addr, new_code_addr,
 * code_size, code_index. */
#define MOVE_FIXED		(RECORD_HEADER_SIZE + 48)
/* JIT_CODE_DEBUG_INFO: code_addr, nr_entry; then the entries, each
 * code_addr, line, discrim (32-bit) and a file name. */
#define DEBUG_FIXED		(RECORD_HEADER_SIZE + 16)
#define DEBUG_ENTRY_FIXED	16
/* JIT_CODE_UNWINDING_INFO: unwind_data_size, eh_frame_hdr_size,
 * mapped_size; then the table. */
#define UNWIND_FIXED		(RECORD_HEADER_SIZE + 24)

#define NONE UINT32_MAX
/* A debug entry's file name of this one byte is the file of the entry
 * before it (perf's tools/perf/util/jitdump.h, struct debug_entry). */
#define SAME_FILE 0xff
/* Codes whose validity one pass of end_reused computes: bounds the
 * pass's scratch memory (a few MiB), whatever the file holds. */
#define INDEX_SLICE (64u << 10)
/* Starts of older codes a lookup looks at for one that held the address
 * at an earlier time: bounds what a file of codes over codes costs. */
#define HISTORY_SCAN 256
/* A JIT may run code before the record that announces it is written
 * (perf's own agent writes it from a callback after the code is in
 * place): a sample this early is still the new code's, when no older
 * code held the address then. */
#define EARLY_NS (10ull * 1000 * 1000)
/* What the code_index map costs per code: its slot at 70% load and its
 * key's copy. */
#define MAP_BYTES 96
/* The size of an ELF64 header: perf's jitted ELF files put .text there. */
#define ELF_TEXT_OFFSET 0x40

struct jd_code {
	uint64_t start, end;
	uint64_t time;		/* of its load or move */
	uint64_t code_off;	/* of its bytes in the file */
	uint64_t index;		/* the JIT's code_index */
	uint64_t dbg_base;	/* the address its debug entries are for: its
				 * load's, before any move */
	uint32_t eh_frame;	/* EH frame bytes of the unwinding info before
				 * its load */
	uint32_t name;		/* into strs */
	uint32_t line0, nlines;	/* into lines, sorted by address */
	uint32_t ended_by;	/* the first code after it in the file over
				 * its memory, or its move; NONE: none yet */
};

struct jd_line {
	uint64_t addr;
	uint32_t line;
	uint32_t file;		/* into strs; NONE: none */
};

/* Codes by start, each with the greatest end up to it, so that a lookup
 * knows when no code further down can hold an address. */
struct jd_span {
	uint64_t start, maxend;
	uint32_t code;
};

/* Codes no later one ended: apart from each other, by start. */
struct jd_live {
	uint64_t start;
	uint32_t code;
};

#define INDEX_BYTES (sizeof(struct jd_span) + sizeof(struct jd_live))

struct jitdump {
	size_t max_bytes;
	uint64_t next;		/* file offset to parse from */
	bool have_header, swapped, arch_time;
	bool stopped;		/* nothing more is read */
	bool stopped_budget;	/* ... for the memory bound: jitdump__forget
				 * may make room */
	struct jd_code *codes;	/* in file order */
	size_t ncodes, codes_cap;
	size_t nindexed;	/* codes the spans and live hold */
	struct jd_line *lines;
	size_t nlines, lines_cap;
	char *strs;
	size_t strs_len, strs_cap;
	uint32_t last_file;	/* the file name added last, NONE */
	/* A debug info waiting for its code load: lines [debug_line0,
	 * nlines), for debug_addr. */
	bool debug_pending;
	uint64_t debug_addr;
	size_t debug_line0;
	uint32_t eh_pending;	/* ... and an unwinding info's size */
	struct hashmap *by_index;	/* code_index -> code, from the first
					 * move on */
	struct jd_span *spans;
	size_t nspans, spans_cap;
	struct jd_live *live;
	size_t nlive, live_cap;
};

/* What a parse step did with the bytes at the file offset. */
enum step {
	DONE,		/* read the record (kept or skipped) */
	WAIT,		/* needs more bytes: of the buffer or of the file */
	STOP,		/* nothing more can be read */
	BAD,		/* refused the record, skipped by its size */
	BAD_NAME,	/* ... for a name without its NUL */
};

static uint32_t rd32(const struct jitdump *d, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return d->swapped ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const struct jitdump *d, const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return d->swapped ? __builtin_bswap64(v) : v;
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* ---- memory: every array within max_bytes ---- */

static size_t code_cost(const struct jitdump *d)
{
	/* A code's index entries are reserved with it. */
	return sizeof(struct jd_code) + INDEX_BYTES +
	       (d->by_index ? MAP_BYTES : 0);
}

/* What d holds, or has reserved for its index. */
static size_t committed(const struct jitdump *d)
{
	return sizeof(*d) + d->codes_cap * code_cost(d) +
	       d->lines_cap * sizeof(struct jd_line) + d->strs_cap;
}

/* Room in the array at arrp, *cap elements of elem bytes now, each of
 * which costs cost bytes of the bound, for need elements, at most
 * count_max. 0; -E2BIG over count_max; -ENOSPC over the memory bound;
 * -ENOMEM. */
static int grow(struct jitdump *d, void *arrp, size_t *cap, size_t need,
		size_t elem, size_t cost, size_t first, size_t count_max)
{
	size_t other = committed(d) - *cap * cost, max;
	int err;

	if (need > count_max)
		return -E2BIG;
	max = other < d->max_bytes ? (d->max_bytes - other) / cost : 0;
	if (max > count_max)
		max = count_max;
	if (need > max)
		return -ENOSPC;
	err = grow__array_max(arrp, cap, need, elem, first, max);
	return err == -E2BIG ? -ENOSPC : err;
}

/* Stops the parse at a bound: err says which. */
static enum step full(struct jitdump *d, struct jitdump_stats *st, int err)
{
	if (err == -E2BIG)
		st->full = true;
	else
		st->over_budget = d->stopped_budget = true;
	d->stopped = true;
	return STOP;
}

/* Adds len bytes of a name, made valid UTF-8, to strs; its offset in
 * *off. */
static int add_str(struct jitdump *d, const uint8_t *s, size_t len,
		   uint32_t *off, struct jitdump_stats *st)
{
	/* Each byte replaced can become three (U+FFFD). */
	char fixed[3 * JITDUMP_NAME_MAX];
	size_t n;
	int err;

	if (utf8__sanitize(s, len, fixed, sizeof(fixed)))
		st->names_fixed++;
	n = strlen(fixed) + 1;
	err = grow(d, &d->strs, &d->strs_cap, d->strs_len + n, 1, 1, 4096,
		   UINT32_MAX);
	if (err)
		return err;
	memcpy(d->strs + d->strs_len, fixed, n);
	*off = d->strs_len;
	d->strs_len += n;
	return 0;
}

/* A debug entry's file name, kept once for the entries in a row that
 * name it (whole records of them do). */
static int add_file(struct jitdump *d, const uint8_t *s, size_t len,
		    uint32_t *off, struct jitdump_stats *st)
{
	int err;

	if (!len) {
		*off = NONE;
		return 0;
	}
	/* Valid UTF-8 is kept as it is: the bytes compare. */
	if (d->last_file != NONE && strlen(d->strs + d->last_file) == len &&
	    !memcmp(d->strs + d->last_file, s, len)) {
		*off = d->last_file;
		return 0;
	}
	err = add_str(d, s, len, off, st);
	if (!err)
		d->last_file = *off;
	return err;
}

static int push_code(struct jitdump *d, const struct jd_code *c)
{
	uint32_t i = d->ncodes;
	int err;

	err = grow(d, &d->codes, &d->codes_cap, d->ncodes + 1,
		   sizeof(*d->codes), code_cost(d), 256, JITDUMP_CODES_MAX);
	if (err)
		return err;
	if (d->by_index && hashmap__put(d->by_index, &c->index,
					sizeof(c->index), i))
		return -ENOMEM;
	d->codes[d->ncodes++] = *c;
	return 0;
}

/* ---- the file header ---- */

static enum step parse_header(struct jitdump *d, const uint8_t *p,
			      size_t avail, uint64_t file_left,
			      struct jitdump_stats *st)
{
	uint32_t magic, version, size;
	uint64_t flags;

	if (avail < FILE_HEADER_SIZE)
		return WAIT;
	memcpy(&magic, p, sizeof(magic));
	/* The writer's order, whichever the reader's is: the magic says. */
	d->swapped = magic == __builtin_bswap32(JITDUMP_MAGIC);
	version = rd32(d, p + 4);
	size = rd32(d, p + 8);
	flags = rd64(d, p + 32);
	/* Flags unknown here may change what the records mean (perf
	 * refuses them too); a longer header has fields added at its end,
	 * skipped. */
	if ((magic != JITDUMP_MAGIC && !d->swapped) || !version ||
	    size < FILE_HEADER_SIZE || size > JITDUMP_HEADER_MAX ||
	    (flags & ~JITDUMP_FLAGS_ARCH_TIMESTAMP)) {
		st->bad_header = true;
		d->stopped = true;
		return STOP;
	}
	if (size > file_left)
		return WAIT;
	d->arch_time = flags & JITDUMP_FLAGS_ARCH_TIMESTAMP;
	st->swapped = d->swapped;
	st->arch_time = d->arch_time;
	d->have_header = true;
	d->next += size;
	return DONE;
}

/* ---- records ---- */

/* Lines of a debug info no code load took. */
static void drop_debug(struct jitdump *d)
{
	d->nlines = d->debug_line0;
	d->debug_pending = false;
}

/* The code a load record describes; its name the len bytes at name. */
static enum step add_load(struct jitdump *d, const uint8_t *p, uint32_t size,
			  uint64_t code_size, const uint8_t *name, size_t len,
			  struct jitdump_stats *st)
{
	uint64_t vma = rd64(d, p + 24), addr = rd64(d, p + 32);
	struct jd_code c = {
		.start = addr, .end = addr + code_size, .time = rd64(d, p + 8),
		.code_off = d->next + size - code_size,
		.index = rd64(d, p + 48), .dbg_base = addr,
		.eh_frame = d->eh_pending, .ended_by = NONE,
	};
	int err;

	d->eh_pending = 0;
	/* Its debug info came just before it (the specification asks it),
	 * for its address: perf takes it whatever its address. */
	if (d->debug_pending && d->debug_addr != addr && d->debug_addr != vma) {
		drop_debug(d);
		st->debug_unused++;
	}
	if (d->debug_pending) {
		c.line0 = d->debug_line0;
		c.nlines = d->nlines - d->debug_line0;
		d->debug_pending = false;
	}
	/* LLVM's PerfJITEventListener (Debian's LLVM 14) writes vma 0 and
	 * each debug entry's address ELF_TEXT_OFFSET past the code's: where
	 * .text starts in the ELF file `perf inject --jit` makes of a load.
	 * Its first entry, the function's first instruction, then lies at
	 * addr + ELF_TEXT_OFFSET; the specification's writers put it at
	 * addr and give vma. */
	if (!vma && c.nlines && d->lines[c.line0].addr == addr + ELF_TEXT_OFFSET)
		c.dbg_base = addr + ELF_TEXT_OFFSET;
	st->loads++;
	/* An empty function holds no address: nothing to keep. */
	if (!code_size) {
		if (c.nlines)
			d->nlines = c.line0;
		return DONE;
	}
	err = add_str(d, name, len, &c.name, st);
	if (!err)
		err = push_code(d, &c);
	return err ? full(d, st, err) : DONE;
}

static enum step code_load(struct jitdump *d, const uint8_t *p, size_t avail,
			   uint32_t size, struct jitdump_stats *st)
{
	uint64_t code_size, addr;
	const uint8_t *nul;
	size_t bound;

	/* At least the fields and a name's NUL. */
	if (size < LOAD_FIXED + 1)
		return BAD;
	if (avail < LOAD_FIXED)
		return WAIT;
	/* The code is the record's last bytes: it cannot be longer than
	 * what the record holds after the name's NUL. */
	code_size = rd64(d, p + 40);
	addr = rd64(d, p + 32);
	if (code_size > size - LOAD_FIXED - 1 || addr + code_size < addr)
		return BAD;
	bound = min_size(size - LOAD_FIXED - code_size, JITDUMP_NAME_MAX);
	if (avail < LOAD_FIXED + bound)
		return WAIT;
	nul = memchr(p + LOAD_FIXED, '\0', bound);
	if (!nul)
		return BAD_NAME;
	return add_load(d, p, size, code_size, p + LOAD_FIXED,
			nul - (p + LOAD_FIXED), st);
}

/* The code_index map, made at the first move: JITs that never move code
 * (most) do not pay for it. */
static int index_map(struct jitdump *d)
{
	size_t after;

	if (d->by_index)
		return 0;
	after = committed(d) + d->codes_cap * MAP_BYTES;
	if (after > d->max_bytes)
		return -ENOSPC;
	d->by_index = hashmap__new(0);
	if (!d->by_index)
		return -ENOMEM;
	/* Later codes of an index replace earlier ones: the last wins. */
	for (size_t i = 0; i < d->ncodes; i++)
		if (hashmap__put(d->by_index, &d->codes[i].index,
				 sizeof(d->codes[i].index), i))
			return -ENOMEM;
	return 0;
}

static enum step code_move(struct jitdump *d, const uint8_t *p, size_t avail,
			   uint32_t size, struct jitdump_stats *st)
{
	uint64_t old, to, code_size, index, v;
	struct jd_code c;
	uint32_t src;
	int err;

	if (size < MOVE_FIXED)
		return BAD;
	if (avail < MOVE_FIXED)
		return WAIT;
	old = rd64(d, p + 32);
	to = rd64(d, p + 40);
	code_size = rd64(d, p + 48);
	index = rd64(d, p + 56);
	err = index_map(d);
	if (err)
		return full(d, st, err);
	if (!hashmap__get(d->by_index, &index, sizeof(index), &v))
		return BAD;
	src = v;
	/* The code where it was, of the size it had (the specification:
	 * moved code keeps its size). */
	c = d->codes[src];
	if (c.start != old || c.end - c.start != code_size ||
	    to + code_size < to)
		return BAD;
	c.start = to;
	c.end = to + code_size;
	c.time = rd64(d, p + 8);
	c.ended_by = NONE;
	err = push_code(d, &c);
	if (err)
		return full(d, st, err);
	/* It left its old place when it moved, whatever comes there. */
	if (d->codes[src].ended_by > d->ncodes - 1)
		d->codes[src].ended_by = d->ncodes - 1;
	st->moves++;
	return DONE;
}

static int line_cmp(const void *pa, const void *pb)
{
	const struct jd_line *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return a->file < b->file ? -1 : a->file > b->file;
}

/* One debug entry at *pos of the record; *prev the file of the one
 * before. */
static enum step debug_entry(struct jitdump *d, const uint8_t *p,
			     uint32_t size, size_t *pos, uint32_t *prev,
			     struct jitdump_stats *st)
{
	const uint8_t *e = p + *pos, *name = e + DEBUG_ENTRY_FIXED, *nul;
	size_t len;
	uint32_t file;
	int err;

	if (size - *pos < DEBUG_ENTRY_FIXED + 1)
		return BAD;
	nul = memchr(name, '\0', min_size(size - *pos - DEBUG_ENTRY_FIXED,
					  JITDUMP_NAME_MAX));
	if (!nul)
		return BAD_NAME;
	len = nul - name;
	if (len == 1 && name[0] == SAME_FILE)
		file = *prev;
	else if ((err = add_file(d, name, len, &file, st)))
		return full(d, st, err);
	err = grow(d, &d->lines, &d->lines_cap, d->nlines + 1,
		   sizeof(*d->lines), sizeof(*d->lines), 256,
		   JITDUMP_LINES_MAX);
	if (err)
		return full(d, st, err);
	d->lines[d->nlines++] = (struct jd_line){
		.addr = rd64(d, e), .line = rd32(d, e + 8), .file = file };
	*prev = file;
	*pos += DEBUG_ENTRY_FIXED + len + 1;
	return DONE;
}

static enum step debug_info(struct jitdump *d, const uint8_t *p, size_t avail,
			    uint32_t size, struct jitdump_stats *st)
{
	uint32_t prev = NONE;
	size_t pos = DEBUG_FIXED, first;
	uint64_t nr;
	enum step r;

	if (size < DEBUG_FIXED || size > JITDUMP_RECORD_MAX)
		return BAD;
	if (avail < size)
		return WAIT;
	/* One debug info per code load: one not taken is lost. */
	if (d->debug_pending) {
		drop_debug(d);
		st->debug_unused++;
	}
	nr = rd64(d, p + 24);
	/* Each entry takes its fields and a NUL at least. Bytes after the
	 * last one are padding (perf reads by the count for that). */
	if (nr > (size - DEBUG_FIXED) / (DEBUG_ENTRY_FIXED + 1))
		return BAD;
	first = d->nlines;
	for (uint64_t i = 0; i < nr; i++) {
		r = debug_entry(d, p, size, &pos, &prev, st);
		if (r != DONE) {
			d->nlines = first;
			return r;
		}
	}
	/* By address, for the lookup of an address's entry. */
	if (d->nlines > first)
		qsort(d->lines + first, d->nlines - first, sizeof(*d->lines),
		      line_cmp);
	d->debug_pending = true;
	d->debug_addr = rd64(d, p + 16);
	d->debug_line0 = first;
	st->debug_infos++;
	st->debug_entries += nr;
	return DONE;
}

static enum step unwinding_info(struct jitdump *d, const uint8_t *p,
				size_t avail, uint32_t size,
				struct jitdump_stats *st)
{
	uint64_t data, hdr, mapped;

	if (size < UNWIND_FIXED)
		return BAD;
	if (avail < UNWIND_FIXED)
		return WAIT;
	data = rd64(d, p + 16);
	hdr = rd64(d, p + 24);
	mapped = rd64(d, p + 32);
	/* The table is in the record, its EH frame header first; what the
	 * process mapped of it is at most all of it. */
	if (data > size - UNWIND_FIXED || hdr > data || mapped > data)
		return BAD;
	st->unwind_infos++;
	st->eh_frame_bytes += data - hdr;
	d->eh_pending = data - hdr;
	return DONE;
}

static enum step parse_record(struct jitdump *d, const uint8_t *p,
			      size_t avail, uint64_t file_left,
			      struct jitdump_stats *st)
{
	uint32_t id, size;
	enum step r;

	if (avail < RECORD_HEADER_SIZE)
		return WAIT;
	id = rd32(d, p);
	size = rd32(d, p + 4);
	if (size < RECORD_HEADER_SIZE) {
		/* The next record is found by this size: none can be. */
		st->broken = true;
		st->bad_records++;
		d->stopped = true;
		return STOP;
	}
	/* Past what is ever read of a file: it can never be whole, and the
	 * records after it cannot be found. */
	if (d->next + size > JITDUMP_FILE_MAX) {
		st->broken = true;
		st->bad_records++;
		d->stopped = true;
		return STOP;
	}
	/* Not all written yet (the JIT appends as it goes), or cut. */
	if (size > file_left)
		return WAIT;
	switch (id) {
	case JIT_CODE_LOAD:
		r = code_load(d, p, avail, size, st);
		break;
	case JIT_CODE_MOVE:
		r = code_move(d, p, avail, size, st);
		break;
	case JIT_CODE_DEBUG_INFO:
		r = debug_info(d, p, avail, size, st);
		break;
	case JIT_CODE_UNWINDING_INFO:
		r = unwinding_info(d, p, avail, size, st);
		break;
	case JIT_CODE_CLOSE:
		st->closes++;
		r = DONE;
		break;
	default:
		st->unknown++;
		r = DONE;
		break;
	}
	if (r == WAIT || r == STOP)
		return r;
	if (r == BAD)
		st->bad_records++;
	else if (r == BAD_NAME)
		st->bad_names++;
	st->records++;
	d->next += size;
	return DONE;
}

uint64_t jitdump__feed(struct jitdump *d, const uint8_t *buf, size_t len,
		       uint64_t file_end, struct jitdump_stats *st)
{
	const uint64_t base = d->next;

	while (!d->stopped && d->next < file_end && d->next - base < len) {
		uint64_t at = d->next - base, left = file_end - d->next;
		/* Bytes of the buffer past the file's end are not its. */
		size_t avail = min_size(len - at, left);
		enum step r;

		if (d->have_header)
			r = parse_record(d, buf + at, avail, left, st);
		else
			r = parse_header(d, buf + at, avail, left, st);
		if (r == WAIT)
			break;
	}
	return d->next;
}

/* ---- the index: which code held an address when ---- */

/* Minimum of entry indexes over ranges of elementary segments: chmin on
 * a range, minimum of a range. A node's tag applies to its whole range
 * and is in its mn too; the tags above a range are on the paths from its
 * two ends to the root. */
struct segtree {
	uint32_t *mn, *tag;
	size_t size;		/* leaves, a power of two */
};

static void chmin(uint32_t *a, uint32_t v)
{
	if (v < *a)
		*a = v;
}

static void seg_update(struct segtree *t, size_t lo, size_t hi, uint32_t v)
{
	size_t l = lo + t->size, r = hi + t->size;

	for (; l < r; l >>= 1, r >>= 1) {
		if (l & 1) {
			chmin(&t->tag[l], v);
			chmin(&t->mn[l++], v);
		}
		if (r & 1) {
			chmin(&t->tag[--r], v);
			chmin(&t->mn[r], v);
		}
	}
	for (l = (lo + t->size) >> 1; l; l >>= 1)
		chmin(&t->mn[l], v);
	for (r = (hi - 1 + t->size) >> 1; r; r >>= 1)
		chmin(&t->mn[r], v);
}

static uint32_t seg_query(const struct segtree *t, size_t lo, size_t hi)
{
	size_t l = lo + t->size, r = hi + t->size;
	uint32_t v = NONE;

	for (; l < r; l >>= 1, r >>= 1) {
		if (l & 1)
			chmin(&v, t->mn[l++]);
		if (r & 1)
			chmin(&v, t->mn[--r]);
	}
	for (l = (lo + t->size) >> 1; l; l >>= 1)
		chmin(&v, t->tag[l]);
	for (r = (hi - 1 + t->size) >> 1; r; r >>= 1)
		chmin(&v, t->tag[r]);
	return v;
}

static int u64_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* How many of the n sorted values are below x. */
static size_t below(const uint64_t *v, size_t n, uint64_t x)
{
	return x ? sortedrange__upper(v, n, sizeof(*v), 0, x - 1) : 0;
}

/* Codes [from, to) and the older codes not yet ended: each ends at the
 * first code after it in the file over any of its memory, memory the JIT
 * reused. The rest of the old code is then no longer its either: it is
 * freed, or other code the file names later. */
static int end_reused(struct jitdump *d, size_t from, size_t to)
{
	size_t k = to - from, m = 0, lo, hi;
	struct segtree t = { 0 };
	uint64_t *at = malloc(2 * k * sizeof(*at));
	struct jd_code *c;
	int err = -ENOMEM;

	if (!at)
		return err;
	/* The ends of these codes cut the addresses into segments, each
	 * wholly in or out of each of them. */
	for (size_t i = from; i < to; i++) {
		at[m++] = d->codes[i].start;
		at[m++] = d->codes[i].end;
	}
	qsort(at, m, sizeof(*at), u64_cmp);
	k = 0;
	for (size_t i = 0; i < m; i++)
		if (!k || at[i] != at[k - 1])
			at[k++] = at[i];
	m = k;
	for (t.size = 1; t.size < m - 1; t.size <<= 1)
		;
	t.mn = malloc(2 * t.size * sizeof(*t.mn));
	t.tag = malloc(2 * t.size * sizeof(*t.tag));
	if (!t.mn || !t.tag)
		goto out;
	memset(t.mn, 0xff, 2 * t.size * sizeof(*t.mn));
	memset(t.tag, 0xff, 2 * t.size * sizeof(*t.tag));
	/* Last to first: the tree holds the codes after the one asked. */
	for (size_t i = to; i-- > from;) {
		c = &d->codes[i];
		lo = below(at, m, c->start);
		hi = below(at, m, c->end);
		chmin(&c->ended_by, seg_query(&t, lo, hi));
		seg_update(&t, lo, hi, i);
	}
	for (size_t i = 0; i < from; i++) {
		c = &d->codes[i];
		if (c->ended_by < from || c->end <= at[0] ||
		    c->start >= at[m - 1])
			continue;
		/* The segments it has any of. */
		lo = sortedrange__upper(at, m, sizeof(*at), 0, c->start);
		lo = lo ? lo - 1 : 0;
		hi = min_size(below(at, m, c->end), m - 1);
		if (lo < hi)
			chmin(&c->ended_by, seg_query(&t, lo, hi));
	}
	err = 0;
out:
	free(t.mn);
	free(t.tag);
	free(at);
	return err;
}

static int span_cmp(const void *pa, const void *pb)
{
	const struct jd_span *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->code < b->code ? -1 : a->code > b->code;
}

/* The spans of all codes: the new ones sorted, merged into the old. */
static int build_spans(struct jitdump *d)
{
	size_t k = d->ncodes - d->nindexed, i = 0, j = 0, n = 0;
	struct jd_span *add, *all;
	uint64_t maxend = 0;

	add = malloc(k * sizeof(*add));
	all = malloc(d->ncodes * sizeof(*all));
	if (!add || !all) {
		free(add);
		free(all);
		return -ENOMEM;
	}
	for (size_t c = 0; c < k; c++) {
		uint32_t i = d->nindexed + c;

		add[c] = (struct jd_span){ .start = d->codes[i].start,
					   .code = i };
	}
	qsort(add, k, sizeof(*add), span_cmp);
	/* Old codes come first in the file: before new ones of a start. */
	while (i < d->nspans || j < k) {
		if (j == k || (i < d->nspans &&
			       d->spans[i].start <= add[j].start))
			all[n] = d->spans[i++];
		else
			all[n] = add[j++];
		if (d->codes[all[n].code].end > maxend)
			maxend = d->codes[all[n].code].end;
		all[n++].maxend = maxend;
	}
	free(add);
	free(d->spans);
	d->spans = all;
	d->nspans = d->spans_cap = n;
	return 0;
}

static int build_live(struct jitdump *d)
{
	struct jd_live *live;
	size_t n = 0;

	for (size_t i = 0; i < d->nspans; i++)
		n += d->codes[d->spans[i].code].ended_by == NONE;
	live = malloc((n ? n : 1) * sizeof(*live));
	if (!live)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < d->nspans; i++)
		if (d->codes[d->spans[i].code].ended_by == NONE)
			live[n++] = (struct jd_live){ d->spans[i].start,
						      d->spans[i].code };
	free(d->live);
	d->live = live;
	d->nlive = d->live_cap = n;
	return 0;
}

int jitdump__index(struct jitdump *d)
{
	size_t to;

	if (d->nindexed == d->ncodes)
		return 0;
	for (size_t from = d->nindexed; from < d->ncodes; from = to) {
		to = min_size(from + INDEX_SLICE, d->ncodes);
		if (end_reused(d, from, to))
			return -ENOMEM;
	}
	/* Codes added end older ones (reuse, moves): live is made again. */
	if (build_spans(d) || build_live(d))
		return -ENOMEM;
	d->nindexed = d->ncodes;
	return 0;
}

/* ---- lookup ---- */

static bool valid_at(const struct jitdump *d, const struct jd_code *c,
		     uint64_t t)
{
	return c->time <= t && (c->ended_by == NONE ||
				t < d->codes[c->ended_by].time);
}

/* Of the spans [lo, hi), all of one start and in file order, the last
 * loaded by t; hi when none was. */
static size_t last_by(const struct jitdump *d, size_t lo, size_t hi,
		      uint64_t t)
{
	size_t first = lo, end = hi;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->codes[d->spans[mid].code].time <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > first ? lo - 1 : end;
}

/* The code that held addr at t, looked for among all codes there; NULL
 * when none did (or none within HISTORY_SCAN starts below it). Of the
 * codes of one start, only the last loaded by t can have held it then:
 * it ended the others, which overlap it. So memory reused again and
 * again costs a binary search per start, not a look at every code. */
static const struct jd_code *held_at(const struct jitdump *d, uint64_t addr,
				     uint64_t t)
{
	const struct jd_span *s;
	const struct jd_code *c;
	size_t i, lo, j;

	if (!d->nspans)
		return NULL;
	i = SORTEDRANGE_UPPER(d->spans, d->nspans, start, addr);
	for (size_t k = 0; i > 0 && k < HISTORY_SCAN; k++, i = lo) {
		s = &d->spans[i - 1];
		if (s->maxend <= addr)
			break;
		lo = s->start ? SORTEDRANGE_UPPER(d->spans, i, start,
						  s->start - 1) : 0;
		j = last_by(d, lo, i, t);
		if (j == i)
			continue;
		c = &d->codes[d->spans[j].code];
		if (addr < c->end && valid_at(d, c, t))
			return c;
	}
	return NULL;
}

static void fill_hit(const struct jitdump *d, const struct jd_code *c,
		     uint64_t addr, struct jitdump_hit *hit)
{
	const struct jd_line *lines, *ln = NULL;

	if (c->nlines) {
		lines = d->lines + c->line0;
		ln = SORTEDRANGE_FLOOR(lines, c->nlines, addr,
				       addr - c->start + c->dbg_base);
	}
	*hit = (struct jitdump_hit){
		.name = d->strs + c->name,
		.file = ln && ln->file != NONE ? d->strs + ln->file : NULL,
		.line = ln ? ln->line : 0,
		.start = c->start, .end = c->end, .code_offset = c->code_off,
		.code_index = c->index, .eh_frame_bytes = c->eh_frame,
	};
}

bool jitdump__lookup(const struct jitdump *d, uint64_t addr,
		     uint64_t time_ns, struct jitdump_hit *hit)
{
	const struct jd_code *now = NULL, *c;
	const struct jd_live *l;
	bool timed;

	if (!d)
		return false;
	/* A file with ARCH_TIMESTAMP has times of a clock of the CPU (the
	 * TSC) the agent does not convert: they are ignored there, and the
	 * last code loaded over an address names it. */
	timed = time_ns && !d->arch_time;
	l = d->nlive ? SORTEDRANGE_FLOOR(d->live, d->nlive, start, addr) :
		       NULL;
	if (l && addr < d->codes[l->code].end)
		now = &d->codes[l->code];
	if (now && (!timed || now->time <= time_ns))
		c = now;
	else if (!timed)
		c = NULL;
	else if (!(c = held_at(d, addr, time_ns)) && now &&
		 now->time - time_ns <= EARLY_NS)
		c = now;
	if (!c)
		return false;
	fill_hit(d, c, addr, hit);
	return true;
}

/* ---- forgetting ---- */

/* Which codes stay: those live, or ended at or after before_ns (a sample
 * may still ask for them), and the codes that ended those (their times
 * say when the kept ones ended). A file whose times are not the samples'
 * clock is only looked up for the code there now. Returns how many. */
static size_t mark_kept(const struct jitdump *d, uint64_t before_ns,
			bool *keep)
{
	size_t n = 0;

	for (size_t i = 0; i < d->ncodes; i++) {
		const struct jd_code *c = &d->codes[i];

		keep[i] = keep[i] || c->ended_by == NONE ||
			  (!d->arch_time &&
			   d->codes[c->ended_by].time >= before_ns);
		/* An ender comes later in the file: marked before it is
		 * reached. */
		if (keep[i] && c->ended_by != NONE)
			keep[c->ended_by] = true;
		n += keep[i];
	}
	return n;
}

/* Copies the string at off of d->strs into out (at *len), once: seen maps
 * old offsets to new. NONE stays NONE. */
static int copy_str(const struct jitdump *d, uint32_t *off, char *out,
		    size_t *len, struct hashmap *seen)
{
	uint64_t v;
	size_t n;

	if (*off == NONE)
		return 0;
	if (hashmap__get(seen, off, sizeof(*off), &v)) {
		*off = (uint32_t)v;
		return 0;
	}
	n = strlen(d->strs + *off) + 1;
	memcpy(out + *len, d->strs + *off, n);
	if (hashmap__put(seen, off, sizeof(*off), *len))
		return -ENOMEM;
	*off = (uint32_t)*len;
	*len += n;
	return 0;
}

/* The kept codes' lines and strings into new arrays (moves share their
 * source's: copied once). */
static int copy_kept(struct jitdump *d, const bool *keep,
		     struct jd_code *codes, uint32_t *to)
{
	struct hashmap *lines_at = hashmap__new(0), *strs_at = hashmap__new(0);
	struct jd_line *lines = malloc((d->nlines ? d->nlines : 1) *
				       sizeof(*lines));
	char *strs = malloc(d->strs_len ? d->strs_len : 1);
	size_t nl = 0, ns = 0, k = 0;
	int err = -ENOMEM;
	uint64_t v;

	if (!lines_at || !strs_at || !lines || !strs)
		goto out;
	for (size_t i = 0; i < d->ncodes; i++)
		to[i] = keep[i] ? k++ : NONE;
	err = 0;
	for (size_t i = 0, j = 0; i < d->ncodes && !err; i++) {
		struct jd_code c = d->codes[i];

		if (!keep[i])
			continue;
		c.ended_by = c.ended_by == NONE ? NONE : to[c.ended_by];
		err = copy_str(d, &c.name, strs, &ns, strs_at);
		if (c.nlines && !err) {
			if (hashmap__get(lines_at, &c.line0, sizeof(c.line0),
					 &v)) {
				c.line0 = (uint32_t)v;
			} else {
				err = hashmap__put(lines_at, &c.line0,
						   sizeof(c.line0), nl);
				for (uint32_t l = 0; l < c.nlines && !err; l++) {
					lines[nl + l] = d->lines[c.line0 + l];
					err = copy_str(d, &lines[nl + l].file,
						       strs, &ns, strs_at);
				}
				c.line0 = (uint32_t)nl;
				nl += c.nlines;
			}
		}
		codes[j++] = c;
	}
	if (err)
		goto out;
	free(d->lines);
	free(d->strs);
	d->lines = lines;
	d->nlines = d->lines_cap = nl;
	d->strs = strs;
	d->strs_len = d->strs_cap = ns;
	lines = NULL;
	strs = NULL;
out:
	free(lines);
	free(strs);
	hashmap__free(lines_at);
	hashmap__free(strs_at);
	return err;
}

size_t jitdump__forget(struct jitdump *d, uint64_t before_ns)
{
	size_t before = committed(d), n;
	struct jd_code *codes = NULL;
	uint32_t *to = NULL;
	bool *keep = NULL;

	/* Lines waiting for their load point into the array as it is. */
	if (!d->ncodes || d->debug_pending || jitdump__index(d))
		return 0;
	keep = calloc(d->ncodes, sizeof(*keep));
	to = malloc(d->ncodes * sizeof(*to));
	if (!keep || !to)
		goto out;
	n = mark_kept(d, before_ns, keep);
	if (n == d->ncodes)
		goto out;
	codes = malloc((n ? n : 1) * sizeof(*codes));
	if (!codes || copy_kept(d, keep, codes, to))
		goto out;
	free(d->codes);
	d->codes = codes;
	d->ncodes = d->codes_cap = n;
	codes = NULL;
	d->last_file = NONE;
	/* The index anew: spans, live and which code ended which. */
	free(d->spans);
	free(d->live);
	d->spans = NULL;
	d->live = NULL;
	d->nspans = d->spans_cap = d->nlive = d->live_cap = 0;
	d->nindexed = 0;
	/* The next move makes the code_index map again. */
	hashmap__free(d->by_index);
	d->by_index = NULL;
	jitdump__index(d);
	if (committed(d) < before && d->stopped_budget)
		d->stopped = d->stopped_budget = false;
out:
	free(codes);
	free(to);
	free(keep);
	return before > committed(d) ? before - committed(d) : 0;
}

/* ---- life ---- */

struct jitdump *jitdump__new(size_t max_bytes)
{
	struct jitdump *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->max_bytes = max_bytes;
	d->last_file = NONE;
	return d;
}

void jitdump__set_max_bytes(struct jitdump *d, size_t max_bytes)
{
	d->max_bytes = max_bytes;
}

uint64_t jitdump__next(const struct jitdump *d)
{
	return d->next;
}

struct jitdump *jitdump__parse(const uint8_t *buf, size_t len,
			       size_t max_bytes, struct jitdump_stats *st)
{
	struct jitdump *d = jitdump__new(max_bytes);

	memset(st, 0, sizeof(*st));
	if (!d)
		return NULL;
	if (jitdump__feed(d, buf, len, len, st) < len && !d->stopped)
		st->truncated = true;
	if (jitdump__index(d)) {
		jitdump__free(d);
		return NULL;
	}
	return d;
}

size_t jitdump__count(const struct jitdump *d)
{
	return d ? d->ncodes : 0;
}

size_t jitdump__bytes(const struct jitdump *d)
{
	return d ? committed(d) : 0;
}

void jitdump__free(struct jitdump *d)
{
	if (!d)
		return;
	hashmap__free(d->by_index);
	free(d->codes);
	free(d->lines);
	free(d->strs);
	free(d->spans);
	free(d->live);
	free(d);
}
