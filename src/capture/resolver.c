// SPDX-License-Identifier: BSD-2-Clause
/* A sample's process, stack, symbols and labels. */
#include "capture/resolver.h"

#include <stdlib.h>
#include <string.h>

#include "out/pprof.h"
#include "proc/proctable.h"
#include "capture/datasrc.h"
#include "capture/labels.h"
#include "proc/codemap.h"
#include "proc/ctxwatch.h"
#include "sym/symbolizer.h"
#include "unwind/unwind.h"

#define MAX_LABELS 64

struct resolver {
	struct resolver_parts x;
	/* the last sample's, which the resolved sample points to */
	struct resolved_sample out;
	uint64_t user[TP_MAX_FRAMES];
	size_t nuser;			/* user frames unwound */
	uint32_t locs[SAMPLE_MAX_LOCS];
	struct pprof_label labels[MAX_LABELS];
	char comm[TP_COMM_LEN + 1], strs[8192];
	struct tp_mem mem;		/* a memory sample's, and its names */
	char data_object[512], data_src[96];
	enum data_object_kind data_kind;
};

struct resolver *resolver__new(const struct resolver_parts *parts)
{
	struct resolver *r = calloc(1, sizeof(*r));

	if (r)
		r->x = *parts;
	return r;
}

void resolver__free(struct resolver *r)
{
	free(r);
}

/* The service a sample belongs to: the process context's service.name,
 * else the executable's name. */
static const char *service_of(struct resolver *r, const struct proc *p,
			      uint32_t pid, const char *comm)
{
	const char *s = pid ? ctxwatch__service(r->x.cw, pid) : NULL;

	if (s && *s)
		return s;
	return p && p->exe[0] ? p->exe : comm;
}

/* The sample's frames as loctab ids: kernel, then user as unwound. */
static size_t frames(struct resolver *r, struct proc *p,
		     const struct raw_sample *rs)
{
	const struct tp_sample *s = rs->s;
	size_t nu;

	nu = unwinder__user_stack(r->x.uw, p, &(struct unwind_sample){
		.pid = s->pid, .tid = s->tid, .time_ns = s->time_ns,
		.fp = rs->frames,
		.nfp = s->user_depth, .in_kernel = s->kern_depth > 0,
		.has_sp_words = s->ustack_flags & TP_USTACK_SP_WORD,
		.sp_words = { s->sp_words[0], s->sp_words[1] },
		.probe = s->ustack_flags & TP_USTACK_PROBE,
		.cfi = s->ustack_flags & TP_USTACK_CFI,
		.later = s->ustack_flags & TP_USTACK_LATER,
		.regs = rs->regs, .stack = rs->stack,
		.stack_len = rs->regs ? s->stack_size : 0 }, r->user);
	r->nuser = nu;
	/* JIT code is named as it was at the sample's time. */
	return symbolizer__stack_at(r->x.sym, p, s->time_ns, r->user, nu,
				    rs->frames + s->user_depth, s->kern_depth,
				    r->locs);
}

/* Whether a user frame runs anonymous executable memory: code generated
 * at run time, which a code-region table may name. Asked per sample of
 * every process without a table, so a process with no anonymous code
 * (most of them) is answered without looking at its frames. */
static bool anon_frame(const struct proc *p, const uint64_t *user, size_t n)
{
	if (!p || !p->anon_exec)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct proc_map *m = proctable__map_at(p, user[i]);

		if (m && m->anon_exec)
			return true;
	}
	return false;
}

/* The levels of the code region the sample's stack runs in (*leaf: its
 * own code, not code it called), or NULL. A process with frames in
 * anonymous code and no table known yet has its context read again: it
 * may have published one since. */
static const struct code_levels *code_levels(struct resolver *r,
					     const struct proc *p,
					     const struct tp_sample *s,
					     bool *leaf)
{
	const struct code_region *reg;
	struct codemap *cm;

	if (!s->pid || !r->nuser)
		return NULL;
	cm = ctxwatch__codemap(r->x.cw, s->pid);
	if (!cm && anon_frame(p, r->user, r->nuser) &&
	    ctxwatch__refresh(r->x.cw, s->pid, s->time_ns, CTXSNAP_MISS_CODE))
		cm = ctxwatch__codemap(r->x.cw, s->pid);
	if (!cm)
		return NULL;
	reg = codemap__attribute(cm, r->user, r->nuser, s->time_ns, leaf,
				 r->x.code);
	return reg ? reg->levels : NULL;
}

/* A memory sample's labels: data_object, what holds its address, and
 * data_src where the hardware said where it was served. Returns them. */
static size_t memory_labels(struct resolver *r, struct proc *p,
			    const struct raw_sample *rs,
			    struct pprof_label *labels)
{
	size_t nl = 0;

	r->mem = rs->mem;
	labels[nl++] = (struct pprof_label){ .key = "data_object",
		.str = proctable__data_object(r->x.procs, p, rs->mem.addr,
					      rs->s->time_ns, r->data_object,
					      sizeof(r->data_object),
					      &r->data_kind) };
	if (rs->mem.flags & TP_MEM_DATA_SRC)
		labels[nl++] = (struct pprof_label){ .key = "data_src",
			.str = datasrc__describe(rs->mem.data_src, r->data_src,
						 sizeof(r->data_src)) };
	return nl;
}

static size_t labels(struct resolver *r, struct proc *p,
		     const struct raw_sample *rs)
{
	const struct tp_sample *s = rs->s;
	struct pprof_label *labels = r->labels;
	const char *comm = r->comm;
	size_t nl = 0;
	bool leaf = false;
	const struct code_levels *code = code_levels(r, p, s, &leaf);

	labels[nl++] = (struct pprof_label){ .key = "process",
					     .str = p ? p->exe : comm };
	labels[nl++] = (struct pprof_label){ .key = "thread_name", .str = comm };
	labels[nl++] = (struct pprof_label){ .key = "pid", .num = s->pid };
	labels[nl++] = (struct pprof_label){ .key = "tid", .num = s->tid };
	labels[nl++] = (struct pprof_label){ .key = "cpu", .num = s->cpu,
					     .num_unit = "cpu" };
	nl += labels__resolve(r->x.cw, &(struct labels_sample){
		.pid = s->pid, .time_ns = s->time_ns, .kind = s->ctx_kind,
		.blob = rs->ctx, .size = s->ctx_size, .tag_valid = s->tag_valid,
		.tag = s->tag, .code = code, .code_leaf = leaf },
		&(struct labels_buf){
		labels + nl, MAX_LABELS - nl - 3, r->strs, sizeof(r->strs) },
		r->x.labels);
	if (rs->has_mem)
		nl += memory_labels(r, p, rs, labels + nl);
	/* The service name last (labels are sorted later): it may be the
	 * process context's, which labels__resolve can read again and so
	 * free (a use after free the sanitized suite found). */
	if (r->x.service_label)
		labels[nl++] = (struct pprof_label){
			.key = "service", .str = service_of(r, p, s->pid, comm) };
	return nl;
}

const struct resolved_sample *resolver__sample(struct resolver *r,
					       const struct raw_sample *rs)
{
	const struct tp_sample *s = rs->s;
	struct proc *p = NULL;
	uint32_t grown;

	memcpy(r->comm, s->comm, TP_COMM_LEN);
	r->comm[TP_COMM_LEN] = '\0';
	if (s->pid) {
		p = proctable__get(r->x.procs, s->pid, s->start_ns, r->comm);
		ctxwatch__on_sample(r->x.cw, s->pid, s->start_ns);
	}
	r->out = (struct resolved_sample){
		.pid = s->pid, .tid = s->tid, .cpu = s->cpu,
		.time_ns = s->time_ns, .period = s->period, .locs = r->locs,
		.lt = r->x.lt, .labels = r->labels };
	grown = p ? p->maps_grown : 0;
	r->out.nlocs = frames(r, p, rs);
	/* Its maps read again found an address they lacked: the code of a
	 * library it loaded since ran, which may define a context symbol. */
	if (p && p->maps_grown != grown)
		ctxwatch__maps_changed(r->x.cw, s->pid);
	r->out.nlabels = labels(r, p, rs);
	r->out.mem = rs->has_mem ? &r->mem : NULL;
	return &r->out;
}

enum data_object_kind resolver__data_kind(const struct resolver *r)
{
	return r->data_kind;
}
