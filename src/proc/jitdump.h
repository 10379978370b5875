/* perf's jitdump files (jit-PID.dump): the code a JIT compiled, where and
 * when, with its source lines. The format is the Linux kernel's
 * tools/perf/Documentation/jitdump-specification.txt: a file header, then
 * records, each a header (id, total size, timestamp) and its payload.
 * Runtimes (the JVM through perf's agent, V8 --perf-prof, .NET, Wasmtime)
 * append a JIT_CODE_LOAD record per function they compile, its
 * JIT_CODE_DEBUG_INFO and JIT_CODE_UNWINDING_INFO records before it.
 *
 * The file is written by the profiled process, which may be hostile: every
 * size is checked against the bytes there and against the bounds below,
 * and every record refused is counted. The parser reads a buffer only,
 * never past its end, and can go on where it stopped when the file grew:
 * the JIT appends, and only the new records are read again.
 *
 * What it gives is a lookup: the code load that covered an address at a
 * time, and the source line of the address in it. */
#ifndef TAGPROF_JITDUMP_H
#define TAGPROF_JITDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JITDUMP_MAGIC		0x4A695444u	/* "JiTD", the writer's order */
#define JITDUMP_FLAGS_ARCH_TIMESTAMP	1ull
#define JITDUMP_FILE_MAX	(256u << 20)	/* bytes read of one file */
#define JITDUMP_CODES_MAX	(1u << 20)	/* code loads and moves kept */
#define JITDUMP_LINES_MAX	(1u << 22)	/* debug entries kept */
#define JITDUMP_NAME_MAX	4096	/* of a name, its NUL included */
#define JITDUMP_HEADER_MAX	4096	/* of the file header */
/* The most a record's parse needs in the buffer at once: a debug info
 * record whole, the fixed fields and name of a code load (its code is
 * skipped). A debug info record larger than this is refused. */
#define JITDUMP_RECORD_MAX	(1u << 20)

/* Counts of one file's parse, summed over the calls that fed it. */
struct jitdump_stats {
	uint64_t records;	/* records read (all ids) */
	uint64_t loads;		/* JIT_CODE_LOAD records kept */
	uint64_t moves;		/* JIT_CODE_MOVE records kept */
	uint64_t debug_infos;	/* JIT_CODE_DEBUG_INFO records kept */
	uint64_t debug_entries;	/* ... the entries in them */
	uint64_t debug_unused;	/* debug infos no load of theirs followed */
	uint64_t unwind_infos;	/* JIT_CODE_UNWINDING_INFO records read */
	uint64_t eh_frame_bytes;	/* ... the EH frame bytes they hold */
	uint64_t closes;	/* JIT_CODE_CLOSE records */
	uint64_t unknown;	/* records of other ids, skipped */
	/* refused: shorter than their fields, sizes that do not add up (a
	 * code or unwinding table larger than its record, more debug entries
	 * than fit), a move of code never loaded, debug info over
	 * JITDUMP_RECORD_MAX */
	uint64_t bad_records;
	uint64_t bad_names;	/* refused: no NUL within JITDUMP_NAME_MAX */
	uint64_t names_fixed;	/* names whose invalid UTF-8 was replaced */
	bool bad_header;	/* not a jitdump this reads: nothing read */
	bool broken;		/* a record size under the record header's:
				 * the records after it cannot be found */
	bool truncated;		/* jitdump__parse: the buffer ends inside a
				 * record, or a record's size goes past it */
	bool full;		/* over JITDUMP_CODES_MAX or _LINES_MAX: the
				 * rest is not read */
	bool over_budget;	/* over the memory bound: the same */
	bool swapped;		/* written in the other byte order */
	bool arch_time;		/* JITDUMP_FLAGS_ARCH_TIMESTAMP: the times are
				 * not CLOCK_MONOTONIC, and are ignored */
};

struct jitdump;

/* What a code load says of an address. Strings are the jitdump's, valid
 * until it is fed again or freed. */
struct jitdump_hit {
	const char *name;	/* the function, valid UTF-8 */
	const char *file;	/* its debug info's source file, or NULL */
	uint32_t line;		/* ... and line, 0 when none */
	uint64_t start, end;	/* the code's addresses */
	uint64_t code_offset;	/* where its bytes are in the file */
	uint64_t code_index;	/* the JIT's id of the code */
	uint64_t eh_frame_bytes;	/* of the unwinding info before it */
};

/* An empty jitdump, to feed; what it holds (jitdump__bytes) stays within
 * max_bytes. NULL on ENOMEM. */
struct jitdump *jitdump__new(size_t max_bytes);

/* Changes the bound on what d holds: a later feed stops at it. */
void jitdump__set_max_bytes(struct jitdump *d, size_t max_bytes);

/* The file offset the next feed starts at: 0 for a new jitdump, then
 * just past the last record read (a record's code is not read, so this
 * may lie past the bytes fed). */
uint64_t jitdump__next(const struct jitdump *d);

/* Parses buf, len bytes of the file from offset jitdump__next(d), which
 * is file_end bytes long in all: the header first, then records, up to
 * the first one that is not whole in the file or whose fields are not
 * whole in buf. Counts into *st (not zeroed). Returns the new
 * jitdump__next: where to read from next time. Code read is not looked
 * up until jitdump__index. */
uint64_t jitdump__feed(struct jitdump *d, const uint8_t *buf, size_t len,
		       uint64_t file_end, struct jitdump_stats *st);

/* Makes the code fed so far visible to jitdump__lookup. 0 or -ENOMEM
 * (then lookups see the code indexed before). */
int jitdump__index(struct jitdump *d);

/* A whole file in one buffer: jitdump__new, __feed and __index. *st is
 * zeroed first. NULL only on ENOMEM. */
struct jitdump *jitdump__parse(const uint8_t *buf, size_t len,
			       size_t max_bytes, struct jitdump_stats *st);

/* The code load that held addr at time_ns (CLOCK_MONOTONIC, the clock the
 * specification asks for), and the source line of addr in it: true with
 * *hit filled, false when none did. time_ns 0, or a file whose times are
 * not CLOCK_MONOTONIC, asks for the code there now. */
bool jitdump__lookup(const struct jitdump *d, uint64_t addr,
		     uint64_t time_ns, struct jitdump_hit *hit);

/* Forgets the codes that ended before before_ns (CLOCK_MONOTONIC: later
 * code over their memory, or their move), which no sample can ask for
 * any more, with their lines and names: so a JIT that compiles for days
 * costs what its live code costs, not all it ever wrote. A parse stopped
 * at the memory bound goes on when this made room. Returns the bytes
 * given back; 0 when nothing could go (or on ENOMEM). */
size_t jitdump__forget(struct jitdump *d, uint64_t before_ns);

size_t jitdump__count(const struct jitdump *d);	/* codes kept */
size_t jitdump__bytes(const struct jitdump *d);	/* memory it holds */
void jitdump__free(struct jitdump *d);		/* accepts NULL */

#endif
