/* libtagprof: attach an immutable label set (query_id=q7 tenant=acme) and
 * an optional trace context to a thread for the duration of a task, so the
 * tagprof profiler can read them at sample time.
 *
 * Standards: the thread record is OpenTelemetry's thread context (OTEP 4947,
 * TLS symbol otel_thread_ctx_v1), the key names are published in the
 * process context (OTEP 4719, a mapping named OTEL_CTX).
 *
 * Usage:
 *	tagprof_labels *l = tagprof_labels_new();
 *	tagprof_labels_add(l, "query_id", "q7");
 *	tagprof_labels_add(l, "tenant", "acme");
 *	...
 *	const tagprof_labels *prev = tagprof_attach(l);   // task starts
 *	run_task();
 *	tagprof_attach(prev);                              // task ends
 *	...
 *	tagprof_labels_free(l);   // only once no thread has it attached
 *
 * Threads: a set is built by one thread (new, add, set_trace), then shared
 * read-only; any number of threads may attach the same set at once. The
 * process-wide key map is guarded by a mutex inside the library.
 *
 * Linking: `pkg-config --libs tagprof` for the shared library. With the
 * static library use `pkg-config --static --libs tagprof`: it adds
 * -Wl,--export-dynamic-symbol=otel_thread_ctx_v1 so that the TLS symbol
 * lands in the executable's .dynsym, where profilers look for it first
 * (without it they fall back to .symtab, lost if the binary is stripped).
 * Link only one copy of the library into a process (not the .a into one
 * module and the .so into another): each copy keeps its own key map.
 */
#ifndef TAGPROF_TAGPROF_H
#define TAGPROF_TAGPROF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TAGPROF_API __attribute__((visibility("default")))

typedef struct tagprof_labels tagprof_labels;

/* Publishes the process context with service.name = service_name (NULL:
 * the executable's name, also the default when this is never called).
 * Optional; may be called again to rename. 0 or -errno (-EINVAL for "",
 * -ENOSPC when the context would pass 60 KiB, -ENOMEM). */
TAGPROF_API int tagprof_process_init(const char *service_name);

/* A new, empty, unsealed set (no attributes, zero trace ids, valid).
 * NULL with errno set on failure. */
TAGPROF_API tagprof_labels *tagprof_labels_new(void);

/* Adds key=value. Both are copied; key is 1..255 bytes, value 0..255 bytes
 * (UTF-8, copied as given). Adding a key the set already holds replaces
 * its value in place (the OTEP lets the last one win; we keep only one).
 * The first time the process sees a key, the key is given the next index
 * of the process key map and the process context is republished.
 * Returns 0, or
 *	-EINVAL	l, key or value NULL; key empty; key or value over 255 bytes
 *	-EBUSY	the set has been attached (it is sealed for good)
 *	-ENOSPC	the record would pass 640 bytes, the key map holds 256 keys,
 *		or the process context would pass 60 KiB (profilers take
 *		64 KiB at most; the key names and the tag dictionary of
 *		tagprof_tag_name() share that room)
 *	-ENOMEM	the process context could not be published
 * On error the set is unchanged. */
TAGPROF_API int tagprof_labels_add(tagprof_labels *l, const char *key,
				   const char *value);

/* Sets the W3C trace context of the set. 0, -EINVAL (a NULL argument) or
 * -EBUSY (sealed). */
TAGPROF_API int tagprof_labels_set_trace(tagprof_labels *l,
					 const uint8_t trace_id[16],
					 const uint8_t span_id[8],
					 uint8_t trace_flags);

/* Frees a set; NULL is fine.
 *
 * !!! The set MUST NOT be attached to any thread when it is freed: the
 * !!! profiler reads it through that thread's otel_thread_ctx_v1 at any
 * !!! moment, and the attaching code will hand it back as "previous".
 * !!! Detach it (or restore the previous set) on every thread first. */
TAGPROF_API void tagprof_labels_free(tagprof_labels *l);

/* ---- Internals the inline tagprof_attach() needs. Not API: the layout
 * may change with the soname. ---- */

#define TAGPROF_RECORD_MAX	640	/* OTEP 4947 limit on the record */
#define TAGPROF_ATTRS_MAX	612	/* 640 - 28 bytes of header */

struct tagprof_labels {
	/* The OTEP 4947 record, byte-packed, native endian. It must stay at
	 * offset 0: the TLS slot holds the address of the set, and that
	 * address is the record's. */
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;			/* 1: readers may use the record */
	uint8_t trace_flags;
	uint16_t attrs_size;
	uint8_t attrs[TAGPROF_ATTRS_MAX]; /* [key_idx u8][len u8][bytes]... */

	/* Offset 640, its own cache line. Written once, by the first attach,
	 * then only read: threads attaching a shared set share the line. */
	uint8_t sealed;
	uint8_t reserved[7];
	/* Proves to tagprof__seal() that a record is one of ours: restoring a
	 * "previous" record written by another OTEP 4947 writer that shares
	 * the slot must never write into it. */
	uint64_t cookie;
} __attribute__((aligned(8)));

#ifndef __cplusplus
_Static_assert(offsetof(struct tagprof_labels, valid) == 24, "OTEP 4947");
_Static_assert(offsetof(struct tagprof_labels, attrs_size) == 26, "OTEP 4947");
_Static_assert(offsetof(struct tagprof_labels, attrs) == 28, "OTEP 4947");
_Static_assert(offsetof(struct tagprof_labels, sealed) == TAGPROF_RECORD_MAX,
	       "the record ends where the private part starts");
_Static_assert(offsetof(struct tagprof_labels, cookie) == TAGPROF_RECORD_MAX + 8,
	       "tagprof__seal reads 8 aligned bytes there");
#endif

/* The OTEP 4947 slot: the address of the current thread's record, or NULL.
 * Defined by libtagprof. */
extern __thread void *otel_thread_ctx_v1 TAGPROF_API;

/* Marks l as attached if it is one of our sets (out of line: runs once
 * per set, and for foreign records whose byte 640 is 0). */
TAGPROF_API void tagprof__seal(const tagprof_labels *l);

/* tagprof_attach() as a function, for callers that cannot use the inline
 * (FFI, dlsym). Same behaviour. */
TAGPROF_API const tagprof_labels *tagprof__attach(const tagprof_labels *l);

/* Makes l the calling thread's current label set and returns the previous
 * one (NULL if none); tagprof_attach(NULL) detaches. Restore by attaching
 * the returned value. Attaching seals l: later add/set_trace on it fail
 * with -EBUSY.
 *
 * Cost: the load of the old slot, a NULL test and a test of l's seal flag
 * (a read-only line once sealed), the store of the new slot. No syscall,
 * lock or allocation; async-signal-safe.
 *
 * The flag is read plainly, not atomically (GCC turns a relaxed atomic
 * byte load into two instructions): the only write that can race with it
 * is another thread's first attach of the same set storing the same 1,
 * and a stale 0 just calls tagprof__seal() again. The signal fence keeps
 * the compiler from sinking the set's construction below the store (the
 * profiler reads the record asynchronously, as a signal handler would);
 * it emits no instruction.
 *
 * Another OTEP 4947 writer may share the slot; its record can then come
 * back as "previous", and restoring it reads its bytes 640 (and, if that
 * is 0, 648-655): past the end of a 640-byte record, so such a record must
 * be followed by readable memory (heap blocks are). Nothing is written. */
static inline const tagprof_labels *tagprof_attach(const tagprof_labels *l)
{
	const tagprof_labels *prev = (const tagprof_labels *)otel_thread_ctx_v1;

	if (l && __builtin_expect(!l->sealed, 0))
		tagprof__seal(l);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	otel_thread_ctx_v1 = (void *)l;
	return prev;
}

/* ==== Generated code: the tagging dictionary ====
 *
 * A code generator names the machine code it emitted and the components
 * that produced it, once, when a compilation ends:
 *
 *	static const char *const scan[] = {
 *		"pipeline=1", "operator=Scan#1", "query=q17" };
 *	static const char *const probe[] = {
 *		"pipeline=2", "operator=HashJoin#3", "query=q17" };
 *	struct tagprof_code_span spans[] = {
 *		{ scan_code, scan_len, "q17_p1_scan", scan, 3 },
 *		{ probe_code, probe_len, "q17_p2_probe", probe, 3 },
 *	};
 *	tagprof_code_regions(spans, 2);
 *	...run the code any number of times...
 *	tagprof_code_region_drop(scan_code);	// before freeing or reusing it
 *
 * Levels are "key=value", lowest level first (key 1..63 bytes of
 * [A-Za-z0-9_.-], value up to 255 bytes of UTF-8), at most 8; a name is
 * up to 511 bytes of UTF-8. The profiler labels a sample with the levels
 * of the innermost frame of its stack that lies in a region: key=value
 * labels, next to the thread's labels and register tags. Code called from
 * generated code (a shared, precompiled insert) is so split by its
 * caller; a register tag whose fields use the same keys does the same
 * without a stack walk, and the profiler counts the samples where the two
 * disagree.
 *
 * Regions are appended to a table in this process's memory that the
 * profiler follows (code_table.h): registering costs an append, not a
 * republish of the process context, and no system call once the table
 * exists. Register a compilation's regions in one call: they cost 16
 * bytes each in the table, plus their names and levels once per distinct
 * set, and one lock and one clock read in all. Registering code at the
 * start of a live region ends that region (as a drop would); code that
 * overlaps one elsewhere ends it for the profiler, which counts it.
 * Samples taken before keep the old region's levels.
 *
 * 0; -EINVAL when a span is bad (NULL start, len 0 or over 4 GiB - 1, a
 * level that is not key=value, too long, too many; nothing registered);
 * -ENOMEM or -ENOSPC (the table's 64 MiB are full of live regions), where
 * the regions of the call before the failure may be registered; or an
 * error of publishing the process context. */
struct tagprof_code_span {
	const void *start;		/* the code's first byte */
	size_t len;			/* its bytes */
	const char *name;		/* NULL: none */
	const char *const *levels;	/* nlevels "key=value", lowest first */
	size_t nlevels;
};

TAGPROF_API int tagprof_code_regions(const struct tagprof_code_span *spans,
				     size_t n);

/* One region: tagprof_code_regions() of one span. */
TAGPROF_API int tagprof_code_region(const void *start, size_t len,
				    const char *name,
				    const char *const levels[], size_t nlevels);

/* Ends the live region that starts at start: code freed or about to be
 * reused. 0, or -ENOENT when no live region starts there. */
TAGPROF_API int tagprof_code_region_drop(const void *start);

/* ==== Register tags ====
 *
 * A program reserves one general-purpose register for its whole life and
 * keeps a tag in it; the profiler reads that register in every sample.
 * Code writes a tag before calling shared code and restores the previous
 * one afterwards:
 *
 *	uint64_t prev = tagprof_tag_swap(OP_JOIN);   // 2 instructions
 *	shared_insert(...);
 *	tagprof_tag_swap(prev);
 *
 * Several abstraction levels share the register as bit fields, declared
 * least significant first, and a dictionary names field values:
 *
 *	static const char *const fields[] = { "operator:16", "pipeline:16" };
 *	tagprof_tags_declare(TAGPROF_TAG_REG_NAME, fields, 2);
 *	tagprof_tag_name("operator", 3, "HashJoin");
 *
 * A sample taken with the register holding 0x00020003 is labelled
 * operator=HashJoin pipeline=2 (an unnamed value shows as its number).
 *
 * The register: r15 on x86-64, x28 on arm64. Another one may be chosen by
 * defining TAGPROF_TAG_REG to its bare name (-DTAGPROF_TAG_REG=r14, not
 * "r14") before including this header; the profiler can read r12-r15 and
 * rbx on x86-64, x19-x28 on arm64, and tagprof_tags_declare() must name
 * the same one (TAGPROF_TAG_REG_NAME is it, as a string).
 *
 * !!! tagprof_tag_swap() and tagprof_tag_get() exist only when the program
 * !!! defines TAGPROF_TAG_REG_RESERVED, which promises that EVERY
 * !!! translation unit of the program that may run while a tag is set is
 * !!! compiled with -ffixed-<reg> (-ffixed-r15, -ffixed-x28): the program's
 * !!! own files, and the libraries they call into, static or shared.
 * !!! `pkg-config --cflags tagprof-tags` gives both flags. Code compiled
 * !!! without the flag may use the register for its own values: the ABI
 * !!! makes it save and restore it (the register is callee-saved), so your
 * !!! tag is back once that code returns, but every sample taken WHILE it
 * !!! runs reads the foreign value and is labelled with garbage, and a
 * !!! callback it makes into your code finds that value in the register
 * !!! (so read-modify-write tags there keep garbage bits). The C library,
 * !!! built without the flag, is such code: samples in libc functions
 * !!! called from tagged code carry no trustworthy tag.
 * !!! The compiler cannot check the promise: GCC accepts any mix of
 * !!! flags silently and has no macro for -ffixed-<reg>. Clang cannot
 * !!! reserve x86-64 registers at all (it rejects -ffixed-r15): build
 * !!! tagged code with GCC there; clang is fine on arm64 (-ffixed-x28).
 * Without TAGPROF_TAG_REG_RESERVED, any use of the two functions is a
 * compile-time error that says so; the rest of this header is unaffected.
 *
 * The register holds whatever the C runtime left in it when main() and
 * each thread's start routine begin (on x86-64 glibc, a pointer): write
 * the untagged value there first, tagprof_tag_swap(0), or the code before
 * the first tag is labelled with garbage fields.
 *
 * The declaration and the dictionary are published in the OTEP 4719
 * process context (extra attributes tagprof.tag.register, tagprof.tag.fields
 * and tagprof.tag.names); a process that never calls tagprof_tags_declare()
 * gets no tag labels, whatever its register holds. A fork child inherits
 * the declaration but not the published context: one that keeps tagging
 * republishes it with tagprof_process_init(). */

#define TAGPROF__STR2(x)	#x
#define TAGPROF__STR(x)		TAGPROF__STR2(x)

#ifndef TAGPROF_TAG_REG
#if defined(__x86_64__)
#define TAGPROF_TAG_REG		r15
#elif defined(__aarch64__)
#define TAGPROF_TAG_REG		x28
#endif
#endif
#ifdef TAGPROF_TAG_REG
#define TAGPROF_TAG_REG_NAME	TAGPROF__STR(TAGPROF_TAG_REG)
#endif

/* Declares the tag register (reg: "r15", see above) and its bit fields,
 * least significant first, each "name:bits": name 1..63 characters of
 * [A-Za-z0-9_.], unique; bits 1..64 in decimal without leading zeros; at
 * most 8 fields of at most 64 bits in all (bits above them are ignored).
 * Publishes the declaration. May be called again: the new declaration
 * replaces the old one and empties the dictionary.
 * Returns 0, or
 *	-EINVAL	reg NULL or not one the profiler can read on this machine;
 *		fields NULL, nfields 0 or over 8, a field NULL or malformed,
 *		a duplicate name, more than 64 bits in all
 *	-ENOSPC	the process context would pass 60 KiB
 *	-ENOMEM
 * On error the previous declaration and dictionary stay. */
TAGPROF_API int tagprof_tags_declare(const char *reg, const char *const fields[],
				     size_t nfields);

/* Names a value of a declared field (name: 1..255 bytes of UTF-8, any
 * characters, copied). Entries
 * are appended to the published dictionary: naming a value again with
 * another name adds an entry that supersedes the earlier one for readers
 * (naming it again with the same name changes nothing). Any thread, any
 * time after tagprof_tags_declare(). Returns 0, or
 *	-EINVAL	no declaration yet; field NULL or not declared; value does
 *		not fit in the field's bits; name NULL, empty, over 255 bytes
 *		or not UTF-8
 *	-ENOSPC	the process context would pass 60 KiB (the dictionary and the
 *		label key map share it; see tagprof_labels_add())
 *	-ENOMEM */
TAGPROF_API int tagprof_tag_name(const char *field, uint64_t value, const char *name);

#if defined(TAGPROF_TAG_REG_RESERVED)

#if defined(__clang__) && defined(__x86_64__)
#error "clang cannot reserve x86-64 registers (-ffixed-r15 is GCC-only); build tagged code with GCC"
#endif
#if !defined(__x86_64__) && !defined(__aarch64__)
#error "tagprof register tags support x86-64 and arm64 only"
#endif

#define TAGPROF__TAG_REG_ASM	"%%" TAGPROF_TAG_REG_NAME
#if defined(__aarch64__)
#undef TAGPROF__TAG_REG_ASM
#define TAGPROF__TAG_REG_ASM	TAGPROF_TAG_REG_NAME
#endif

/* Writes tag into the register and returns what it held: two register
 * moves, no call, no memory access; async-signal-safe. The register is not
 * listed as clobbered (the compiler never allocates it). The "memory"
 * clobber is a compiler barrier only (no instruction): memory accesses
 * and calls stay on their side of the swap, so their samples carry the
 * right tag. */
static inline uint64_t tagprof_tag_swap(uint64_t tag)
{
	uint64_t prev;

#if defined(__x86_64__)
	__asm__ volatile("mov " TAGPROF__TAG_REG_ASM ", %0\n\t"
			 "mov %1, " TAGPROF__TAG_REG_ASM
			 : "=&r"(prev) : "r"(tag) : "memory");
#else
	__asm__ volatile("mov %0, " TAGPROF__TAG_REG_ASM "\n\t"
			 "mov " TAGPROF__TAG_REG_ASM ", %1"
			 : "=&r"(prev) : "r"(tag) : "memory");
#endif
	return prev;
}

/* The register's current value: one move. */
static inline uint64_t tagprof_tag_get(void)
{
	uint64_t v;

#if defined(__x86_64__)
	__asm__ volatile("mov " TAGPROF__TAG_REG_ASM ", %0" : "=r"(v));
#else
	__asm__ volatile("mov %0, " TAGPROF__TAG_REG_ASM : "=r"(v));
#endif
	return v;
}

#else /* !TAGPROF_TAG_REG_RESERVED */

/* Declared only, so that any use fails to compile, with this message:
 * "unavailable" (GCC 12+, clang) rejects every use; older GCC's "error"
 * rejects every call that survives optimization. */
#ifdef TAGPROF_TAG_REG_NAME
#define TAGPROF__TAG_MSG(fn)	fn " needs the whole program built with -ffixed-" \
	TAGPROF_TAG_REG_NAME " and -DTAGPROF_TAG_REG_RESERVED (see tagprof.h)"
#else
#define TAGPROF__TAG_MSG(fn)	fn " needs the whole program built with -ffixed-<reg>" \
	" and -DTAGPROF_TAG_REG_RESERVED; x86-64 and arm64 only (see tagprof.h)"
#endif
#if defined(__has_attribute)
#if __has_attribute(unavailable)
#define TAGPROF__TAG_UNAVAILABLE(fn)	__attribute__((unavailable(TAGPROF__TAG_MSG(fn))))
#endif
#endif
#ifndef TAGPROF__TAG_UNAVAILABLE
#define TAGPROF__TAG_UNAVAILABLE(fn)	__attribute__((error(TAGPROF__TAG_MSG(fn))))
#endif

uint64_t tagprof_tag_swap(uint64_t tag) TAGPROF__TAG_UNAVAILABLE("tagprof_tag_swap");
uint64_t tagprof_tag_get(void) TAGPROF__TAG_UNAVAILABLE("tagprof_tag_get");

#endif /* TAGPROF_TAG_REG_RESERVED */

#ifdef __cplusplus
}
#endif

#endif
