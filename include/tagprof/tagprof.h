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
 * -ENOMEM). */
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
 *	-ENOSPC	the record would pass 640 bytes, or the key map holds 256 keys
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

#ifdef __cplusplus
}
#endif

#endif
