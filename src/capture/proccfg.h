/* What BPF does per process (the proc_cfg map, struct tp_proc_cfg): the one
 * owner of those values, which the map mirrors. It is fed what the agent
 * observed: where a process's threads keep their context and its process
 * context (ctxwatch's findings, against which the --label and --tag
 * filters are resolved), and which processes want their stacks copied
 * (the unwinder's `auto` marks). */
#ifndef TAGPROF_PROCCFG_H
#define TAGPROF_PROCCFG_H

#include <stdbool.h>
#include <stdint.h>

struct ctxwatch_found;
struct sampler;
struct tp_proc_cfg;
struct unwinder;

/* The --label and --tag filters; NULL members when not given. */
struct proccfg_filters {
	const char *label_key, *label_val;
	const char *tag_field, *tag_name;
};

struct proccfg;

struct proccfg *proccfg__new(const struct proccfg_filters *f);
/* From now on the values go to s's map too (those held so far at once).
 * Without a sampler they are only held. */
void proccfg__attach(struct proccfg *c, struct sampler *s);
void proccfg__free(struct proccfg *c);		/* accepts NULL */

/* ctxwatch's report (ctxwatch_report_fn; arg is the proccfg): pid's
 * context location, with the filters resolved against its process
 * context; found NULL: pid's entry goes. Returns 0 when in force, or
 * -errno (the previous value stays). */
int proccfg__set_context(void *arg, uint32_t pid,
			 const struct ctxwatch_found *found);

/* How pid's user stacks are walked (enum tp_proc_unwind: `auto` marks
 * it for stack copies or the kernel's CFI walk, or unmarks it); its other
 * settings stay. An entry that held nothing else goes. */
int proccfg__set_unwind(struct proccfg *c, uint32_t pid, int how);

/* Applies the marks the unwinder decided on since the last call
 * (unwinder__take_marks): a marked process is walked by CFI tables in the
 * kernel (cfiload.h) where they can be had for it, else its stacks are
 * copied. Call after each record, so that a mark is
 * in force before the next sample is handled. */
void proccfg__apply_marks(struct proccfg *c, struct unwinder *u);

/* At a window's end: tables long unused go (cfiload__sweep). */
void proccfg__sweep(struct proccfg *c);

/* The kernel's CFI tables (cfiload__usage); zeros without them. */
struct cfiload_usage;
void proccfg__cfi_usage(const struct proccfg *c, struct cfiload_usage *out);

/* The value held for pid, or NULL: what the map holds once attached. */
const struct tp_proc_cfg *proccfg__get(const struct proccfg *c, uint32_t pid);

#endif
