/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Where a sample's BPF time goes: built with -DTP_STAGE_TIMES (BPF_DEFS,
 * tests/bench/bpf_stages.sh), the collector adds each stage's nanoseconds
 * to a per-CPU counter. Off, the marks compile to nothing. The clock reads
 * cost a little themselves; compare stages, not the sum with run_time_ns. */
#ifndef TAGPROF_STAGES_BPF_H
#define TAGPROF_STAGES_BPF_H

enum stage {
	STAGE_FILTER,	/* pid/cgroup filters, tag, context */
	STAGE_IDS,	/* ids, time, comm */
	STAGE_USTACK,	/* the user frames */
	STAGE_KSTACK,	/* the kernel frames */
	STAGE_EXTRAS,	/* stack copy or the words at sp */
	STAGE_STACKID,	/* hashing the stack, the sent-stacks slot */
	STAGE_OUTPUT,	/* into the ring buffer */
	STAGE_SAMPLES,	/* not a stage: the samples that went through all */
	STAGE_N,
};

#ifdef TP_STAGE_TIMES
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAGE_N);
	__type(key, __u32);
	__type(value, __u64);
} stage_ns SEC(".maps");

static __always_inline void stage_add(__u32 stage, __u64 v)
{
	__u64 *c = bpf_map_lookup_elem(&stage_ns, &stage);

	if (c)
		*c += v;
}

/* Opens the timing of one sample: a local clock the marks advance. */
#define STAGES_BEGIN()	__u64 stage_t = bpf_ktime_get_ns()
#define STAGE_END(s)							\
	do {								\
		__u64 now = bpf_ktime_get_ns();				\
		stage_add(s, now - stage_t);				\
		stage_t = now;						\
	} while (0)
#define STAGES_DONE()	stage_add(STAGE_SAMPLES, 1)
#else
#define STAGES_BEGIN()	do { } while (0)
#define STAGE_END(s)	do { } while (0)
#define STAGES_DONE()	do { } while (0)
#endif

#endif
