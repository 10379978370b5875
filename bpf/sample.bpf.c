// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The sampler's entry programs. A perf_event program on every CPU hands
 * each sample to the collector (collect.bpf.h), which turns it into a
 * ring-buffer record with ids, time, comm and both stacks. Tracepoints on
 * exec and exit tell the agent when a pid's memory map goes stale. They are
 * raw tracepoints, not tp_btf: attaching a tp_btf program makes libbpf parse
 * the whole kernel BTF (tens of ms at every start), while CO-RE alone can
 * make do with the cut-down copy src/kernel/btfcut.c keeps. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sample_event.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "maps.bpf.h"
#include "collect.bpf.h"

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	return collect_sample(ctx, SAMPLE_PERF_EVENT);
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
	/* An exec brings a new image, whose maps the reader should read
	 * soon; an exit only frees what the reader held, which can wait. */
	bpf_ringbuf_submit(e, wakeup_flag(bpf_ktime_get_ns(), NULL, 0,
					  type == TP_REC_EXEC ? ring_wakeup_ns :
					  ring_settled_wakeup_ns));
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *task)
{
	send_task_event(task, TP_REC_EXEC);
	return 0;
}

/* Fires per thread; only the last thread out ends the process. */
SEC("raw_tp/sched_process_exit")
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
SEC("raw_tp/sched_process_fork")
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
