/* Thread context per process: finds where its threads keep their context
 * (OTEP 4947 otel_thread_ctx_v1, or custom-labels v1), reads its process
 * context (key names), tells the BPF side, and turns the context blob of a
 * sample into pprof labels. */
#ifndef TAGPROF_CTXWATCH_H
#define TAGPROF_CTXWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sampler;
struct pprof_label;

struct ctxwatch_stats {
	uint64_t procs_found;	/* processes with a context symbol */
	uint64_t unknown_key;	/* attribute whose key index is not in the map */
	uint64_t schema_unknown; /* processes whose threadlocal.schema_version
				    names a layout tagprof does not read */
	uint64_t bad_utf8;	/* labels with invalid UTF-8 replaced */
	uint64_t truncated;	/* blobs that ended inside an attribute */
	uint64_t key_refreshes;	/* process context re-read for a key */
	uint64_t locate_failed;	/* symbol defined, location unresolvable */
	uint64_t tag_procs;	/* processes that declared register tags */
	uint64_t tag_unnamed;	/* tag field values without a name */
	uint64_t ctx_refreshes;	/* process contexts re-read after a change */
	uint64_t ctx_refused;	/* process-context payloads refused unread:
				   nested too deep or too many fields */
	uint64_t ctx_malformed;	/* ...decoded as neither form: not a
				   ProcessContext, not a Resource */
};

struct ctxwatch;

/* The --label and --tag filters; NULL members when not given. */
struct ctxwatch_filters {
	const char *label_key, *label_val;
	const char *tag_field, *tag_name;
};

/* The sampler is where per-process settings go; it may be set later with
 * ctxwatch__attach. */
struct ctxwatch *ctxwatch__new(const struct ctxwatch_filters *f);
void ctxwatch__attach(struct ctxwatch *t, struct sampler *s);
void ctxwatch__free(struct ctxwatch *t);	/* accepts NULL */

/* Lifecycle hints from the ring buffer. A sampled process without a
 * context is looked at again with growing delays (0.5 s doubling to 32 s;
 * from 50 ms in its first 3 s, when ld.so may not have mapped its
 * libraries yet), which finds libraries it dlopen()s later without hooking
 * the dynamic linker (a uprobe on ld.so breaks programs run under
 * valgrind). start_boot_ns: the sample's start_ns (0: unknown). */
void ctxwatch__on_sample(struct ctxwatch *t, uint32_t pid,
			 uint64_t start_boot_ns);
void ctxwatch__on_exec(struct ctxwatch *t, uint32_t pid);
void ctxwatch__on_exit(struct ctxwatch *t, uint32_t pid);

/* Runs the discoveries that are due; call every ~100 ms. Returns the
 * milliseconds until the next one is due, or -1 if none is planned. */
int ctxwatch__tick(struct ctxwatch *t);

/* Discovers every running process now (used with --label, whose in-kernel
 * filter drops samples of processes not yet configured). */
void ctxwatch__scan_all(struct ctxwatch *t);

/* What a sample carries for its thread. */
struct ctxwatch_sample {
	uint32_t pid;
	uint64_t time_ns;	/* when it was taken, CLOCK_MONOTONIC */
	unsigned kind;		/* enum tp_ctx_kind */
	const uint8_t *blob;
	size_t size;
	bool tag_valid;
	uint64_t tag;
};

/* Appends the labels of a sample's context and register tag to out (at
 * most max), with their strings in buf. Returns the number appended.
 * Names: tagprof's own labels win; an application key equal to one is
 * reported as "label:<key>", and a tag field equal to either as
 * "tag:<field>". */
size_t ctxwatch__labels(struct ctxwatch *t, const struct ctxwatch_sample *s,
			struct pprof_label *out, size_t max, char *buf,
			size_t buflen);

/* Forgets processes that are gone (their exit event may have been lost). */
void ctxwatch__sweep(struct ctxwatch *t);

/* The process's service.name from its process context, or NULL. */
const char *ctxwatch__service(struct ctxwatch *t, uint32_t pid);

const struct ctxwatch_stats *ctxwatch__stats(const struct ctxwatch *t);

#endif
