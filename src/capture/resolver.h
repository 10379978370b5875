/* Resolves a checked sample record (capture/records.h) into what the
 * consumers get (capture/sample.h): its process from the process table,
 * its user stack unwound, its frames named in the location table, and
 * its labels: process, thread, pid, tid, cpu, service, and those of its
 * thread context, register tag and code region. */
#ifndef TAGPROF_RESOLVER_H
#define TAGPROF_RESOLVER_H

#include <stdbool.h>

#include "capture/records.h"
#include "capture/sample.h"
#include "proc/proctable.h"

struct proctable;
struct ctxwatch;
struct labels_stats;
struct codemap_stats;
struct unwinder;
struct symbolizer;

/* What resolving uses, borrowed: it must outlive the resolver. */
struct resolver_parts {
	struct proctable *procs;
	struct ctxwatch *cw;		/* process contexts, for labels */
	struct labels_stats *labels;	/* what decoding counted */
	struct codemap_stats *code;	/* what code regions counted */
	struct unwinder *uw;
	struct symbolizer *sym;		/* writes into lt */
	struct loctab *lt;
	bool service_label;		/* label samples with "service" */
};

struct resolver;

struct resolver *resolver__new(const struct resolver_parts *parts);
void resolver__free(struct resolver *r);	/* accepts NULL */

/* The resolved sample, valid with all it points to until the next call. */
const struct resolved_sample *resolver__sample(struct resolver *r,
					       const struct raw_sample *rs);

/* What named the last sample's data address (resolver__sample with a
 * memory sample only). */
enum data_object_kind resolver__data_kind(const struct resolver *r);

#endif
