/* Records the BPF programs send to the agent over the ring buffer, and the
 * settings the agent passes in. Plain fixed-size types only: this header is
 * compiled for both the BPF target and the host. */
#ifndef TAGPROF_SAMPLE_EVENT_H
#define TAGPROF_SAMPLE_EVENT_H

#define TP_MAX_FRAMES	127	/* per stack; the kernel's perf_event_max_stack */
#define TP_COMM_LEN	16
#define TP_MAX_PIDS	8192	/* pid filter entries, children included */
#define TP_RINGBUF_BYTES (8u << 20)

enum tp_rec_type {
	TP_REC_SAMPLE = 1,	/* struct tp_sample + frames */
	TP_REC_EXEC = 2,	/* struct tp_task_event: image replaced */
	TP_REC_EXIT = 3,	/* struct tp_task_event: last thread gone */
};

/* One CPU sample. Followed by user_depth user frames, then kern_depth
 * kernel frames, each a __u64 address, leaf first. */
struct tp_sample {
	__u32 type;
	__u32 pid;		/* thread group id */
	__u32 tid;
	__u32 cpu;
	__u64 time_ns;		/* CLOCK_MONOTONIC */
	__u64 period;		/* event count (ns for cpu-clock) this sample stands for */
	__u64 start_ns;		/* group leader's start_boottime: tells pid reuse apart */
	char comm[TP_COMM_LEN];
	__u16 user_depth;
	__u16 kern_depth;
	__u32 flags;
};
_Static_assert(sizeof(struct tp_sample) == 64, "tp_sample layout");

/* Process lifecycle events, so the agent drops stale maps at once. */
struct tp_task_event {
	__u32 type;
	__u32 pid;
	__u64 start_ns;
	char comm[TP_COMM_LEN];
};
_Static_assert(sizeof(struct tp_task_event) == 32, "tp_task_event layout");

/* Per-CPU counters, summed by the agent and shown in the summary. */
struct tp_stats {
	__u64 samples;		/* samples sent */
	__u64 lost;		/* ring buffer full: sample dropped */
	__u64 filtered;		/* dropped by pid/cgroup/idle filters */
	__u64 task_lost;	/* exec/exit events dropped */
	__u64 no_user_stack;	/* user thread sampled but no user frames */
};
_Static_assert(sizeof(struct tp_stats) == 40, "tp_stats layout");

#endif
