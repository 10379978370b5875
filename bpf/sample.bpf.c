// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* CPU sampler: one perf_event program on every CPU turns each sample into a
 * ring-buffer record with ids, time, comm and both stacks. Tracepoints on
 * exec and exit tell the agent when a pid's memory map goes stale. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sample_event.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "maps.bpf.h"
#include "context.bpf.h"
#include "tag.bpf.h"
#include "ustack.bpf.h"

/* Waking the reader for every sample costs a context switch per sample on
 * a busy CPU: wake it only once a quarter of the buffer waits. The reader
 * also drains the buffer after every poll timeout on its own. */
static __always_inline __u64 wakeup_flag(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
			       ring_wakeup_bytes ?
		       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
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

/* Whether this sample copies the user stack (enum tp_ustack_flags). */
static __always_inline __u32 copy_wanted(const struct tp_proc_cfg *cfg,
					 __u64 start_ns)
{
	__u32 every;

	if (unwind_mode == TP_UNWIND_DWARF)
		return TP_USTACK_REGS;
	if (unwind_mode != TP_UNWIND_AUTO)
		return 0;
	if (cfg && cfg->unwind == TP_PROC_UNWIND_COPY)
		return TP_USTACK_REGS;
	every = bpf_ktime_get_boot_ns() - start_ns < YOUNG_NS ?
			PROBE_EVERY_YOUNG : PROBE_EVERY;
	return bpf_get_prandom_u32() % every == 0 ?
		       TP_USTACK_REGS | TP_USTACK_PROBE : 0;
}

/* After the frames at tail: the user registers and stack copy, when this
 * sample takes one; and always the word at the user stack pointer. Returns
 * the bytes added to the record. */
static __always_inline __u32 user_extras(struct bpf_perf_event_data *ctx,
					 struct tp_stats *st,
					 const struct tp_proc_cfg *cfg,
					 struct scratch *s, __u64 *tail)
{
#if HAVE_USTACK
	struct tp_uregs *r = (struct tp_uregs *)tail;
	__u32 copy = copy_wanted(cfg, s->hdr.start_ns), len;
	__u64 sp;
	bool is_short;

	if (copy) {
		if (!read_uregs(&ctx->regs, r)) {
			stat_inc(st, ustack_failed);
			return 0;
		}
		len = read_ustack(r->sp, (__u8 *)(r + 1), stack_bytes,
				  &is_short);
		if (len >= sizeof(__u64)) {
			s->hdr.sp_word = *(__u64 *)(r + 1);
			s->hdr.ustack_flags = TP_USTACK_SP_WORD | copy |
					      (is_short ? TP_USTACK_SHORT : 0);
			s->hdr.stack_size = len;
			stat_inc(st, ustack_copied);
			if (copy & TP_USTACK_PROBE)
				stat_inc(st, ustack_probes);
			if (is_short)
				stat_inc(st, ustack_short);
			return sizeof(*r) + len;
		}
		stat_inc(st, ustack_failed);
		return 0;
	}
	sp = read_usp(&ctx->regs);
	if (sp && !bpf_probe_read_user(&s->hdr.sp_word, sizeof(__u64),
				       (void *)sp))
		s->hdr.ustack_flags = TP_USTACK_SP_WORD;
#endif
	return 0;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, zero = 0, nu, nk, pad;
	struct tp_stats *st = cpu_stats();
	struct task_struct *task;
	struct tp_proc_cfg *cfg;
	struct scratch *s;
	__u64 *frames;
	__u64 size;

	if (!st)
		return 0;
	if (!wanted(pid)) {
		stat_inc(st, filtered);
		return 0;
	}
	s = bpf_map_lookup_elem(&scratch_map, &zero);
	if (!s)
		return 0;

	task = (struct task_struct *)bpf_get_current_task();
	cfg = bpf_map_lookup_elem(&proc_cfg, &pid);
	/* Tag and context first: --tag and --label drop a sample before the
	 * stack walks. Only a process that declared tags gets them read. */
	s->hdr.tag = 0;
	s->hdr.tag_valid = 0;
	if (cfg && cfg->tag_reg && BPF_CORE_READ(task, mm)) {
		if (read_tag(&ctx->regs, cfg->tag_reg, &s->hdr.tag)) {
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
	if (!read_context(st, task, cfg, &s->hdr, s->ctx, filter_label)) {
		stat_inc(st, label_filtered);
		return 0;
	}
	s->hdr.type = TP_REC_SAMPLE;
	s->hdr.pid = pid;
	s->hdr.tid = (__u32)id;
	s->hdr.cpu = bpf_get_smp_processor_id();
	s->hdr.time_ns = bpf_ktime_get_ns();
	s->hdr.period = ctx->sample_period;
	s->hdr.start_ns = BPF_CORE_READ(task, group_leader, start_boottime);
	bpf_get_current_comm(s->hdr.comm, sizeof(s->hdr.comm));

	pad = (s->hdr.ctx_size + 7) & ~7u;
	if (pad > TP_CTX_SPACE)		/* cannot happen; bounds the offset */
		return 0;
	frames = (__u64 *)(s->ctx + pad);

	/* Kernel threads (no mm) have no user stack to ask for. */
	nu = 0;
	if (BPF_CORE_READ(task, mm)) {
		nu = frames_of(bpf_get_stack(ctx, frames,
					     TP_MAX_FRAMES * sizeof(__u64),
					     BPF_F_USER_STACK));
		if (!nu)
			stat_inc(st, no_user_stack);
	}
	nk = frames_of(bpf_get_stack(ctx, &frames[nu],
				     TP_MAX_FRAMES * sizeof(__u64), 0));
	s->hdr.user_depth = nu;
	s->hdr.kern_depth = nk;

	size = sizeof(s->hdr) + pad + (nu + nk) * sizeof(__u64);
	s->hdr.ustack_flags = 0;
	s->hdr.stack_size = 0;
	if (HAVE_USTACK && BPF_CORE_READ(task, mm))
		size += user_extras(ctx, st, cfg, s, &frames[nu + nk]);
	if (size > sizeof(*s))	/* cannot happen; tells the verifier the bound */
		return 0;
	/* A probe wakes the reader: the sooner `auto` sees that a process
	 * needs CFI, the fewer of its stacks stay broken. */
	if (bpf_ringbuf_output(&events, s, size,
			       s->hdr.ustack_flags & TP_USTACK_PROBE ?
				       BPF_RB_FORCE_WAKEUP : wakeup_flag()))
		stat_inc(st, lost);
	else
		stat_inc(st, samples);
	return 0;
}

static __always_inline void send_task_event(struct task_struct *task,
					    __u32 type)
{
	struct tp_task_event *e;
	struct tp_stats *st;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		st = cpu_stats();
		if (st)
			stat_inc(st, task_lost);
		return;
	}
	e->type = type;
	e->pid = BPF_CORE_READ(task, tgid);
	e->start_ns = BPF_CORE_READ(task, group_leader, start_boottime);
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	bpf_ringbuf_submit(e, 0);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *task)
{
	send_task_event(task, TP_REC_EXEC);
	return 0;
}

/* Fires per thread; only the last thread out ends the process. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task)
{
	__u32 pid = BPF_CORE_READ(task, tgid);

	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	if (follow_children)
		bpf_map_delete_elem(&pids, &pid);
	send_task_event(task, TP_REC_EXIT);
	return 0;
}

/* With -- COMMAND, processes the command forks are profiled too. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = BPF_CORE_READ(parent, tgid);
	__u32 cpid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (!follow_children || cpid == ppid)
		return 0;
	if (bpf_map_lookup_elem(&pids, &ppid))
		bpf_map_update_elem(&pids, &cpid, &one, BPF_NOEXIST);
	return 0;
}
