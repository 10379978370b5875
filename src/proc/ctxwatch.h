/* Thread context per process: finds where its threads keep their context
 * (OTEP 4947 otel_thread_ctx_v1, or custom-labels v1), reports it for the
 * BPF side (capture/proccfg.h), and keeps a snapshot of its process context (key names, tag declaration)
 * for label decoding (capture/labels.h), read again when the process
 * publishes another or a decode misses a name. */
#ifndef TAGPROF_CTXWATCH_H
#define TAGPROF_CTXWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proc/ctxsnap.h"
#include "proc/pbcheck.h"
#include "util/counter.h"

struct codemap_stats;
struct tp_tls_loc;

/* X(field, text) (util/counter.h). */
#define CTXWATCH_COUNTERS(X)						\
	/* processes with a context symbol */				\
	X(procs_found, "processes with context")			\
	/* processes whose threadlocal.schema_version names a layout	\
	 * tagprof does not read */					\
	X(schema_unknown, "unknown schema (processes with a "		\
	  "thread-context schema other than OTEP 4947's, not read)")	\
	/* process context re-read for a key a sample's decoding missed */ \
	X(key_refreshes, "re-reads for a key a sample missed")		\
	/* symbol defined, location unresolvable */			\
	X(locate_failed, "location unresolved")				\
	/* processes that declared register tags */			\
	X(tag_procs, "processes declared tags")				\
	/* process contexts re-read after a change (by the poll, or for	\
	 * a tag value name a decoding missed) */			\
	X(ctx_refreshes, "re-reads after a change")			\
	/* process-context payloads refused unread (pbcheck.h) */	\
	X(ctx_refused, "payloads refused unread (AnyValues nested over "	\
	  COUNTER_STR(PBCHECK_MAX_ANY_DEPTH) " deep or over "		\
	  COUNTER_STR(PBCHECK_MAX_FIELDS) " fields)")			\
	X(ctx_malformed, "decoded as neither a ProcessContext nor a "	\
	  "Resource")

struct ctxwatch_stats {
	CTXWATCH_COUNTERS(COUNTER_FIELD)
};

struct ctxwatch;

/* What discovery found in a process, for the BPF side: where its threads
 * keep their context (kind TP_TLS_NONE: not there), and its process
 * context, which names its keys and declares its register tags. */
struct ctxwatch_found {
	const struct tp_tls_loc *otel;		/* otel_thread_ctx_v1 */
	const struct tp_tls_loc *custom;	/* custom_labels_current_set */
	const struct ctxsnap *snap;
};

/* Where discovery reports what it found in pid, whenever that changes
 * (found NULL: pid is forgotten, and what was in force for it goes), at
 * once: a process's first sample is followed by others the BPF side
 * should already read the context of. Returns 0 when it is in force. */
typedef int (*ctxwatch_report_fn)(void *arg, uint32_t pid,
				  const struct ctxwatch_found *found);

/* report may be NULL: then nothing is in force. */
struct ctxwatch *ctxwatch__new(ctxwatch_report_fn report, void *arg);
void ctxwatch__free(struct ctxwatch *t);	/* accepts NULL */

/* Lifecycle hints from the ring buffer. A sampled process without a
 * context is looked at again with growing delays (0.5 s doubling to
 * 256 s; from 50 ms in its first 3 s, when ld.so may not have mapped its
 * libraries yet; from 32 s for a process 32 s old or more), which finds
 * libraries it dlopen()s later without hooking the dynamic linker (a
 * uprobe on ld.so breaks programs run under valgrind).
 * start_boot_ns: the sample's start_ns (0: unknown). */
void ctxwatch__on_sample(struct ctxwatch *t, uint32_t pid,
			 uint64_t start_boot_ns);
void ctxwatch__on_exec(struct ctxwatch *t, uint32_t pid);
/* The process mapped more since its maps were read (a sample ran code
 * outside them: a library it dlopen()ed, say): one without a context is
 * looked at again 2 s after its last look, or at once if that is past,
 * and its back-off starts over. */
void ctxwatch__maps_changed(struct ctxwatch *t, uint32_t pid);
/* The process pid started at start_boot_ns (the event's; 0: unknown)
 * exited: a sample of it that comes later does not bring it back. */
void ctxwatch__on_exit(struct ctxwatch *t, uint32_t pid,
		       uint64_t start_boot_ns);

/* Runs the discoveries that are due; call every ~100 ms. Returns the
 * milliseconds until the next one is due (a recheck backed off far may
 * wait up to half its back-off, so that many run at one wake-up), or -1
 * if none is planned. */
int ctxwatch__tick(struct ctxwatch *t);

/* Discovers every running process now (used with --label, whose in-kernel
 * filter drops samples of processes not yet configured). */
void ctxwatch__scan_all(struct ctxwatch *t);

/* The snapshot of pid's process context that labels decode against, or
 * NULL when pid is not watched. It stays valid until the next call that
 * may read or forget pid. */
const struct ctxsnap *ctxwatch__snapshot(struct ctxwatch *t, uint32_t pid);

/* Decoding a sample of pid taken at sample_ns (CLOCK_MONOTONIC) against
 * its snapshot missed a name (miss): reads the process context again,
 * unless the last read began after the sample (the name was not published
 * then, and writers publish names before they use them), or that read was
 * under 10 ms ago and had to scan /proc/PID/maps (its place not known yet:
 * a process that never publishes the name could ask forever). Returns true
 * when the snapshot changed, to decode again. */
bool ctxwatch__refresh(struct ctxwatch *t, uint32_t pid, uint64_t sample_ns,
		       enum ctxsnap_miss miss);

/* Reads the process context of pid, whose thread context was found, again
 * now, and reports it (as discovery does), so that a name it published
 * since is in force: for a caller that waits for one key (tagprof sizes'
 * label: size). Returns true when it was reported. */
bool ctxwatch__reread(struct ctxwatch *t, uint32_t pid);

/* The code-region table of pid, when its process context names one
 * (code_table.h): made on first use, kept with the snapshot. NULL when
 * none is known or on ENOMEM. */
struct codemap *ctxwatch__codemap(struct ctxwatch *t, uint32_t pid);

/* Reads again the code-region tables of the processes sampled in the last
 * second (codemap__tick): call after each wait for samples. */
void ctxwatch__code_tick(struct ctxwatch *t, struct codemap_stats *st);

/* "pid P (SERVICE): X% of N samples attributed" for each process with a
 * code-region table and samples, "; " between them, into buf, over the
 * window (window true: since the last reset, which it does) or since the
 * start. Returns how many processes it named. */
size_t ctxwatch__code_shares(struct ctxwatch *t, bool window, char *buf,
			     size_t len);

/* The level keys, outermost first ("query > operator > pipeline"), of
 * the first process with a table that had any; "" when none yet. */
const char *ctxwatch__code_levels(struct ctxwatch *t);

/* Forgets processes that are gone (their exit event may have been lost). */
void ctxwatch__sweep(struct ctxwatch *t);

/* The process's service.name from its process context, or NULL. */
const char *ctxwatch__service(struct ctxwatch *t, uint32_t pid);

const struct ctxwatch_stats *ctxwatch__stats(const struct ctxwatch *t);

#endif
