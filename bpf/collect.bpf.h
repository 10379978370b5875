/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The sample collector: what every sampling entry program does once it
 * has fired, whatever fired it. An entry program is one line that names
 * its origin; what differs by origin (where the registers and the period
 * come from) is read through the origin here, so a new kind of sample is a
 * new origin and a thin program, not another branch in an existing one.
 *
 * Loading it is most of `record`'s start-up: the verifier checks each
 * instruction once for every distinct state that reaches it. Parts that
 * many paths reach are global functions here (sample_context,
 * sample_walk_fp, sample_walk_cfi, sample_copy_ustack; cfi_rule_at in
 * cfiwalk.bpf.h): a global function is checked once, for any arguments of
 * its types, and its callers only against those types, and what it
 * returns is an unknown the caller bounds. They take the perf_event
 * context and scalars only, since global functions take pointers to
 * memory from 5.12 on and the README's kernels start at 5.8, and find this
 * CPU's scratch themselves. That and the settings copy below halved the
 * instructions checked at every load, 15,083 to 7,754. */
#ifndef TAGPROF_COLLECT_BPF_H
#define TAGPROF_COLLECT_BPF_H

#include "maps.bpf.h"
#include "context.bpf.h"
#include "tag.bpf.h"
#include "ustack.bpf.h"
#include "cfiwalk.bpf.h"
#include "stackid.bpf.h"
#include "stages.bpf.h"

/* What fired the program. Only perf event samples exist yet; uprobes and
 * memory-access events would be the next. Kept in BPF: the record does not
 * carry it while there is only one. */
enum sample_origin {
	SAMPLE_PERF_EVENT,	/* a perf event overflowed (CPU clock, cycles, ...) */
};

/* The registers the program was handed: a perf_event context starts with
 * the sampled ones. */
static __always_inline bpf_user_pt_regs_t *origin_regs(void *ctx,
						       enum sample_origin origin)
{
	switch (origin) {
	case SAMPLE_PERF_EVENT:
		return &((struct bpf_perf_event_data *)ctx)->regs;
	}
	return ctx;
}

/* What the sample stands for: the events counted since the last one (ns
 * for cpu-clock). */
static __always_inline __u64 origin_period(void *ctx,
					   enum sample_origin origin)
{
	switch (origin) {
	case SAMPLE_PERF_EVENT:
		return ((struct bpf_perf_event_data *)ctx)->sample_period;
	}
	return 0;
}

/* Waking the reader for every record costs a context switch per sample on
 * a busy CPU, and one per exec or exit on an idle host: wake it for the
 * first record ring_wakeup_ns after the last wake-up, so that it sleeps
 * while nothing happens and still resolves samples within about that long
 * (while their processes live); and once a quarter of the buffer waits,
 * so that a full buffer never waits for the clock. The buffer is asked how
 * much waits only after this CPU wrote ring_check_bytes more (*unwoken;
 * NULL: not counted), not for every record: its positions live on cache
 * lines every CPU and the reader write. now: bpf_ktime_get_ns(); every_ns:
 * ring_wakeup_ns, or ring_probe_wakeup_ns for a record the reader should
 * see soon. Racing CPUs may both wake it: harmless. */
static __always_inline __u64 wakeup_flag(__u64 now, __u64 *unwoken,
					 __u64 bytes, __u64 every_ns)
{
	if (unwoken) {
		*unwoken += bytes;
		if (*unwoken > ring_check_bytes) {
			*unwoken = 0;
			if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
			    ring_wakeup_bytes) {
				last_wakeup_ns = now;
				return BPF_RB_FORCE_WAKEUP;
			}
		}
	}
	if (now - last_wakeup_ns < every_ns)
		return BPF_RB_NO_WAKEUP;
	last_wakeup_ns = now;
	if (unwoken)
		*unwoken = 0;
	return BPF_RB_FORCE_WAKEUP;
}

/* How long a record taken at now (the monotonic clock) of a process
 * started at start_ns (boot time) may wait to wake the reader: a young
 * process's probe briefly (wake_soon); any record of a process
 * that is not settled yet within ring_wakeup_ns, so that the reader reads
 * its maps while it lives; a settled process's within
 * ring_settled_wakeup_ns, so that on a host whose processes run on, the
 * reader sleeps longer. The process's age is asked only when a shorter
 * bound alone would wake the reader. */
static __always_inline __u64 wait_bound(__u64 now, __u64 start_ns,
					bool wake_soon)
{
	if (wake_soon)
		return ring_probe_wakeup_ns;
	if (ring_settled_wakeup_ns <= ring_wakeup_ns ||
	    now - last_wakeup_ns < ring_wakeup_ns)
		return ring_wakeup_ns;
	return bpf_ktime_get_boot_ns() - start_ns < TP_SETTLED_NS ?
		       ring_wakeup_ns : ring_settled_wakeup_ns;
}

static __always_inline bool wanted(__u32 pid)
{
	if (pid == 0 && !include_idle)
		return false;
	if (filter_pids && !bpf_map_lookup_elem(&pids, &pid))
		return false;
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroups, 0) != 1)
		return false;
	return true;
}

/* Depth in frames of a bpf_get_stack result, clamped so the verifier can
 * bound every offset derived from it. */
static __always_inline __u32 frames_of(long bytes)
{
	if (bytes <= 0)
		return 0;
	bytes /= sizeof(__u64);
	return bytes > TP_MAX_FRAMES ? TP_MAX_FRAMES : bytes;
}

/* The frames' place in scratch s: after the context. NULL if the
 * context's size is not one the scratch can hold (it cannot happen). */
static __always_inline __u64 *scratch_frames(struct scratch *s)
{
	__u32 pad = (s->hdr.ctx_size + 7) & ~7u;

	return pad > TP_CTX_SPACE ? NULL : (__u64 *)(s->ctx + pad);
}

/* The frame-pointer walk of this CPU's sample (ustack.bpf.h): its frames
 * into the scratch, their hash into s->uhash, the words at sp into the
 * header when the window has it. Returns the frames. Global: the verifier
 * checks the walk and its loop once, not once per path to it. */
__noinline long sample_walk_fp(struct bpf_perf_event_data *ctx)
{
#if HAVE_USTACK
	__u32 zero = 0, n;
	struct scratch *s = bpf_map_lookup_elem(&scratch_map, &zero);
	struct fp_window *w = bpf_map_lookup_elem(&fpwin_map, &zero);
	__u64 *frames;

	/* checked even where nothing calls it (no bpf_loop: no fp_walk) */
	if (!loop_helper || !s || !w || !(frames = scratch_frames(s)))
		return 0;
	n = walk_user_fp(&ctx->regs, frames, w);
	s->uhash = w->hash;
	if (sp_in_window(w, CTX_REG(&ctx->regs, sp), s->hdr.sp_words))
		s->hdr.ustack_flags = TP_USTACK_SP_WORD;
	return n;
#else
	return 0;
#endif
}

/* The CFI walk of this CPU's sample (cfiwalk.bpf.h), for a process whose
 * tables are loaded (for it, not an earlier process of its pid): frames
 * and hash as sample_walk_fp, the walk's flags into the header. Returns
 * the frames, 0 when it found none. Global, as sample_walk_fp. */
__noinline long sample_walk_cfi(struct bpf_perf_event_data *ctx)
{
#if HAVE_CFIWALK
	__u32 zero = 0, n;
	struct scratch *s = bpf_map_lookup_elem(&scratch_map, &zero);
	struct fp_window *w = bpf_map_lookup_elem(&fpwin_map, &zero);
	struct tp_stats *st = cpu_stats();
	const struct tp_cfi_proc *p;
	__u64 *frames;

	if (!loop_helper || !s || !w || !st || !(frames = scratch_frames(s)))
		return 0;
	p = bpf_map_lookup_elem(&cfi_procs, &s->hdr.pid);
	if (!p || p->start_ns != s->hdr.start_ns)
		return 0;
	n = walk_user_cfi(&ctx->regs, frames, w, p, st);
	if (n) {
		s->uhash = w->hash;
		s->hdr.ustack_flags = TP_USTACK_CFI |
			(w->why == CFI_END_LATER ? TP_USTACK_LATER : 0);
	}
	return n;
#else
	return 0;
#endif
}

/* A walk's frame count, bounded for the verifier, which knows nothing of
 * what a global function returns. The walks return a long: an int would
 * be sign-extended into a copy, and clang then bounds the copy and uses
 * the original. */
static __always_inline __u32 walked(long n)
{
	if (n <= 0)
		return 0;
	return n > TP_MAX_FRAMES ? TP_MAX_FRAMES : (__u32)n;
}

/* The user frames, leaf first, into frames (TP_MAX_FRAMES of room):
 * walked here when that gives what the kernel's walk would, else by it.
 * s->uhash: the frames folded (stackid.bpf.h), when stack ids are on. A
 * walk here also leaves the words at sp in the header when its window has
 * it. */
static __always_inline __u32 user_frames(void *ctx, bpf_user_pt_regs_t *regs,
					 struct task_struct *task,
					 const struct tp_proc_cfg *cfg,
					 struct scratch *s, __u64 *frames)
{
	__u32 n;

#if HAVE_CFIWALK
	if (unwind_mode == TP_UNWIND_AUTO && fp_walk &&
	    cfg->unwind == TP_PROC_UNWIND_CFI && no_uretprobe(task)) {
		n = walked(sample_walk_cfi(ctx));
		if (n)
			return n;
	}
#endif
#if HAVE_USTACK
	if (fp_walk && fp_walk_ok(regs, task)) {
		return walked(sample_walk_fp(ctx));
	}
#endif
	n = frames_of(bpf_get_stack(ctx, frames, TP_MAX_FRAMES * sizeof(__u64),
				    BPF_F_USER_STACK));
	if (stack_ids)
		s->uhash = fold_frames(0, frames, 0, n);
	return n;
}

/* The kernel frames: none when the sample interrupted user mode, where the
 * kernel's walk finds none either. */
static __always_inline __u32 kernel_frames(void *ctx,
					   bpf_user_pt_regs_t *regs,
					   __u64 *frames)
{
#if HAVE_USTACK
	if (in_user_mode(regs))
		return 0;
#endif
	return frames_of(bpf_get_stack(ctx, frames,
				       TP_MAX_FRAMES * sizeof(__u64), 0));
}

/* Not sent: copy_wanted's mark of a probe of a young process. Its answer
 * decides how the process's next samples are walked, so its record wakes
 * the reader soon (ring_probe_wakeup_ns), not within the second that any
 * record may wait: a process without frame pointers is walked by CFI
 * within tens of milliseconds of its first probe, in `record` and the
 * agent alike. Once a process is young, not once per sample of it. */
#define COPY_YOUNG_PROBE	0x100

/* Whether this sample copies the user stack (enum tp_ustack_flags, and
 * COPY_YOUNG_PROBE). walked: the user walk's flags. */
static __always_inline __u32 copy_wanted(__u32 unwind,
					 __u64 start_ns, __u32 walked)
{
	__u32 every, young = 0, r;

	if (unwind_mode == TP_UNWIND_DWARF || (walked & TP_USTACK_LATER))
		return TP_USTACK_REGS;
	if (unwind_mode != TP_UNWIND_AUTO)
		return 0;
	if (unwind == TP_PROC_UNWIND_COPY ||
	    (unwind == TP_PROC_UNWIND_CFI && cfi_check_all))
		return TP_USTACK_REGS;
	/* The draw comes first: a clock read costs about as much as the rest
	 * of this function here (tens of ns), and the process's age matters
	 * only to a draw that would probe at one of the two rates. */
	r = bpf_get_prandom_u32();
	if (unwind == TP_PROC_UNWIND_CFI) {
		every = TP_PROBE_EVERY_CFI;
	} else if (probe_every_young && r % probe_every_young &&
		   r % TP_PROBE_EVERY) {
		return 0;
	} else if (bpf_ktime_get_boot_ns() - start_ns < TP_YOUNG_NS) {
		every = probe_every_young;
		young = COPY_YOUNG_PROBE;
	} else {
		every = TP_PROBE_EVERY;
	}
	if (!every)		/* cannot happen: the agent sets it >= 1 */
		return 0;
	return r % every == 0 ? TP_USTACK_REGS | TP_USTACK_PROBE | young : 0;
}

/* The user registers and stack copy of the sample in this CPU's scratch,
 * after its frames (copy: copy_wanted's flags; want: the bytes to copy).
 * Returns the bytes added to the record. */
__noinline int sample_copy_ustack(struct bpf_perf_event_data *ctx, __u32 copy,
				  __u64 want)
{
#if HAVE_USTACK
	__u32 zero = 0, nu, nk, kslot, len;
	struct scratch *s = bpf_map_lookup_elem(&scratch_map, &zero);
	struct tp_stats *st = cpu_stats();
	struct tp_uregs *r;
	bool is_short;

	__u64 *frames;

	/* Arguments come unknown in all 64 bits: bound want as a u64. */
	if (!s || !st || want > TP_STACK_MAX || !(frames = scratch_frames(s)))
		return 0;
	nu = s->hdr.user_depth;
	nk = s->hdr.kern_depth;
	if (nu > TP_MAX_FRAMES || nk > TP_MAX_FRAMES)
		return 0;
	kslot = stack_ids && nk ? 1 : 0;
	r = (struct tp_uregs *)(frames + nu + kslot + nk);
	if (!read_uregs(&ctx->regs, r)) {
		stat_inc(st, ustack_failed);
		return 0;
	}
	len = read_ustack(r->sp, (__u8 *)(r + 1), want, &is_short);
	if (len < sizeof(__u64)) {
		stat_inc(st, ustack_failed);
		return 0;
	}
	s->hdr.sp_words[0] = *(__u64 *)(r + 1);
	s->hdr.sp_words[1] = len >= 2 * sizeof(__u64) ?
				     *((__u64 *)(r + 1) + 1) : 0;
	/* a CFI walk's flags stay: the copy checks it, or completes it */
	s->hdr.ustack_flags = (s->hdr.ustack_flags &
			       (TP_USTACK_CFI | TP_USTACK_LATER)) |
			      TP_USTACK_SP_WORD | (copy & ~COPY_YOUNG_PROBE) |
			      (is_short ? TP_USTACK_SHORT : 0);
	s->wake_soon = copy & COPY_YOUNG_PROBE;
	s->hdr.stack_size = len;
	stat_inc(st, ustack_copied);
	if (copy & TP_USTACK_PROBE)
		stat_inc(st, ustack_probes);
	if (is_short)
		stat_inc(st, ustack_short);
	return sizeof(*r) + len;
#else
	return 0;
#endif
}

/* After the frames: the user registers and stack copy, when this sample
 * takes one; and always the 16 bytes at the user stack pointer, unless the
 * walk took it from its window already. Returns the bytes added to the
 * record. */
static __always_inline __u32 user_extras(struct bpf_perf_event_data *ctx,
					 __u32 unwind, struct scratch *s)
{
#if HAVE_USTACK
	__u32 copy = copy_wanted(unwind, s->hdr.start_ns, s->hdr.ustack_flags);
	__u64 sp;

	/* A probe asks only whether CFI finds frames the chain lacks, or
	 * checks the kernel's walk: the top of the stack answers, at a
	 * quarter of the bytes. */
	if (copy)
		return sample_copy_ustack(ctx, copy,
					  copy & TP_USTACK_PROBE &&
					  stack_bytes > TP_PROBE_BYTES ?
					  TP_PROBE_BYTES : stack_bytes);
	/* A CFI walk has no leaf to repair: its flag stays, no word read. */
	if (s->hdr.ustack_flags & (TP_USTACK_SP_WORD | TP_USTACK_CFI))
		return 0;
	sp = read_usp(&ctx->regs);
	if (sp && !bpf_probe_read_user(s->hdr.sp_words,
				       sizeof(s->hdr.sp_words), (void *)sp))
		s->hdr.ustack_flags = TP_USTACK_SP_WORD;
#endif
	return 0;
}

/* The context (context.bpf.h) of the sample in this CPU's scratch, by the
 * copy of its process's settings there. False when --label drops it. */
__noinline int sample_context(void)
{
	__u32 zero = 0;
	struct scratch *s = bpf_map_lookup_elem(&scratch_map, &zero);
	struct tp_stats *st = cpu_stats();

	if (!s || !st)
		return 0;
	return read_context(st, (struct task_struct *)bpf_get_current_task(),
			    &s->cfg, &s->hdr, s->ctx, filter_label);
}

/* The data address, source and weight of this CPU's sample, into its
 * scratch: read from the kernel's sample data behind the context, each
 * only when the sample's flags say the kernel filled it in (before 6.1
 * there are no flags, and perf_sample_data_init set all three). False for
 * a sample to drop: no address (counted), or an IBS op of another kind.
 * Global, as sample_walk_fp: checked once. */
__noinline int sample_mem(struct bpf_perf_event_data *ctx)
{
	struct bpf_perf_event_data_kern *k = (void *)ctx;
	__u32 zero = 0;
	struct scratch *s = bpf_map_lookup_elem(&scratch_map, &zero);
	struct tp_stats *st = cpu_stats();
	struct perf_sample_data *d = NULL;
	__u64 flags = ~0ull, src = 0;

	if (!s || !st)
		return 0;
	__builtin_memset(&s->mem, 0, sizeof(s->mem));
	bpf_probe_read_kernel(&d, sizeof(d), &k->data);
	if (!d)
		return 0;
	if (bpf_core_field_exists(d->sample_flags))
		flags = BPF_CORE_READ(d, sample_flags);
	if (flags & PERF_SAMPLE_ADDR)
		s->mem.addr = BPF_CORE_READ(d, addr);
	if (!s->mem.addr) {
		stat_inc(st, mem_no_addr);
		return 0;
	}
	if (flags & PERF_SAMPLE_DATA_SRC) {
		src = BPF_CORE_READ(d, data_src.val);
		/* PERF_MEM_NA: the pre-6.1 default, nothing known */
		if (src != TP_MEM_SRC_NA) {
			s->mem.data_src = src;
			s->mem.flags |= TP_MEM_DATA_SRC;
		}
	}
	if (mem_op && (s->mem.flags & TP_MEM_DATA_SRC) &&
	    !(src & mem_op)) {
		stat_inc(st, mem_other_op);
		return 0;
	}
	if (flags & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
		/* the low 32 bits: the latency in either layout */
		s->mem.weight = (__u32)BPF_CORE_READ(d, weight.full);
		if (s->mem.weight)
			s->mem.flags |= TP_MEM_WEIGHT;
	}
	return 1;
}

/* Turns one sample of the current thread into a record: filters, tag,
 * context, ids, both stacks and the user extras, then the ring buffer.
 * Every entry program calls it with its own origin. */
static __always_inline int collect_sample(void *ctx, enum sample_origin origin)
{
	bpf_user_pt_regs_t *regs = origin_regs(ctx, origin);
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, zero = 0, nu, nk, pad;
	struct tp_stats *st = cpu_stats();
	struct task_struct *task;
	struct tp_proc_cfg *cfg;
	struct scratch *s;
	__u64 *frames;
	__u64 size;
	__u32 kslot, fbytes, extra;
	bool has_mm;
	STAGES_BEGIN();

	if (!st)
		return 0;
	if (!wanted(pid)) {
		stat_inc(st, filtered);
		return 0;
	}
	s = bpf_map_lookup_elem(&scratch_map, &zero);
	if (!s)
		return 0;

	/* bpf_get_current_task, not _btf (5.11+): the README's kernels. */
	task = (struct task_struct *)bpf_get_current_task();
	has_mm = BPF_CORE_READ(task, mm) != NULL;
	/* A copy, zeroed for a process without settings: the settings are
	 * then one pointer on every path. A pointer that is NULL on some
	 * paths and a map value on others made the verifier check all that
	 * follows twice. */
	cfg = bpf_map_lookup_elem(&proc_cfg, &pid);
	if (cfg)
		s->cfg = *cfg;
	else
		__builtin_memset(&s->cfg, 0, sizeof(s->cfg));
	cfg = &s->cfg;
	/* Tag and context first: --tag and --label drop a sample before the
	 * stack walks. Only a process that declared tags gets them read. */
	s->hdr.tag = 0;
	s->hdr.tag_valid = 0;
	if (cfg->tag_reg && has_mm) {
		if (read_tag(regs, cfg->tag_reg, &s->hdr.tag)) {
			s->hdr.tag_valid = 1;
			stat_inc(st, tag_read);
		} else {
			stat_inc(st, tag_unreadable);
		}
	}
	if (filter_tag && (!s->hdr.tag_valid ||
			   (s->hdr.tag & cfg->tag_filter_mask) !=
				   cfg->tag_filter_value)) {
		stat_inc(st, tag_filtered);
		return 0;
	}
	if (!sample_context()) {
		stat_inc(st, label_filtered);
		return 0;
	}
	if (mem_sampling && !sample_mem(ctx))
		return 0;
	STAGE_END(STAGE_FILTER);
	s->hdr.type = TP_REC_SAMPLE;
	s->hdr.pid = pid;
	s->hdr.tid = (__u32)id;
	s->hdr.cpu = bpf_get_smp_processor_id();
	s->hdr.time_ns = bpf_ktime_get_ns();
	s->hdr.period = origin_period(ctx, origin);
	s->hdr.start_ns = BPF_CORE_READ(task, group_leader, start_boottime);
	bpf_get_current_comm(s->hdr.comm, sizeof(s->hdr.comm));

	pad = (s->hdr.ctx_size + 7) & ~7u;
	if (pad > TP_CTX_SPACE)		/* cannot happen; bounds the offset */
		return 0;
	frames = (__u64 *)(s->ctx + pad);
	STAGE_END(STAGE_IDS);

	/* Kernel threads (no mm) have no user stack to ask for. */
	nu = 0;
	s->hdr.ustack_flags = 0;
	s->uhash = 0;
	if (has_mm) {
		nu = user_frames(ctx, regs, task, cfg, s, frames);
		if (!nu)
			stat_inc(st, no_user_stack);
	}
	STAGE_END(STAGE_USTACK);
	/* With stack ids, one slot between the two takes the kernel's id. */
	nk = kernel_frames(ctx, regs, &frames[nu + (stack_ids ? 1 : 0)]);
	STAGE_END(STAGE_KSTACK);
	s->hdr.user_depth = nu;
	s->hdr.kern_depth = nk;
	/* Read back for the same reason as the size below: the walks that
	 * got here differ, what follows need not be checked once per walk. */
	nu = *(volatile __u16 *)&s->hdr.user_depth;
	nk = *(volatile __u16 *)&s->hdr.kern_depth;
	if (nu > TP_MAX_FRAMES || nk > TP_MAX_FRAMES)
		return 0;

	kslot = stack_ids && nk ? 1 : 0;
	fbytes = (nu + kslot + nk) * sizeof(__u64);
	extra = 0;
	s->hdr.stack_size = 0;
	s->wake_soon = 0;
	if (HAVE_USTACK && has_mm)
		extra = user_extras(ctx, cfg->unwind, s);
	STAGE_END(STAGE_EXTRAS);
	s->hdr.stack_kind = TP_STACK_FRAMES;
	s->hdr.kstack_kind = TP_STACK_FRAMES;
	s->hdr.stack_id = 0;
	if (stack_ids)
		fbytes = name_stacks(s, frames, s->uhash, nu, nk);
	size = sizeof(s->hdr) + pad + fbytes + extra;
	/* Through the scratch value and back: read from a map, the size is
	 * known to the verifier only by the bound checked next, the same on
	 * every path that led here, so it checks what follows once rather
	 * than once per path (thousands of instructions at every load). */
	s->size = size;
	size = *(volatile __u64 *)&s->size;
	if (size > sizeof(*s))	/* cannot happen; tells the verifier the bound */
		return 0;
	s->hdr.mem = 0;
	if (mem_sampling) {
		/* after the longest record there is mem_room */
		if (size > offsetof(struct scratch, mem_room))
			return 0;
		__builtin_memcpy((__u8 *)s + size, &s->mem, sizeof(s->mem));
		size += sizeof(s->mem);
		s->hdr.mem = 1;
	}
	STAGE_END(STAGE_STACKID);
	if (bpf_ringbuf_output(&events, s, size,
			       wakeup_flag(s->hdr.time_ns, &s->unwoken, size,
					   wait_bound(s->hdr.time_ns,
						      s->hdr.start_ns,
						      s->wake_soon)))) {
		stat_inc(st, lost);
		return 0;
	}
	STAGE_END(STAGE_OUTPUT);
	STAGES_DONE();
	stat_inc(st, samples);
	if (s->hdr.stack_kind == TP_STACK_NEW)
		mark_sent(s->hdr.stack_id);
	else if (s->hdr.stack_kind == TP_STACK_SEEN)
		stat_inc(st, stack_seen);
	if (s->hdr.kstack_kind == TP_STACK_NEW)
		mark_sent(s->kstack_id);
	else if (s->hdr.kstack_kind == TP_STACK_SEEN)
		stat_inc(st, kstack_seen);
	return 0;
}

#endif
