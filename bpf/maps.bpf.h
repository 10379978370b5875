/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the sampler's programs share with each other and with the agent:
 * the settings the agent fixes before load (.rodata) and every map, in one
 * place, so that a new entry program sees the same ones and the agent's
 * skeleton names stay put (src/kernel/sampler.c). */
#ifndef TAGPROF_MAPS_BPF_H
#define TAGPROF_MAPS_BPF_H

/* Set by the agent between open and load. */
const volatile bool filter_pids = false;	/* only pids in `pids` */
const volatile bool follow_children = false;	/* new processes of a pid in `pids` join it */
const volatile bool filter_cgroup = false;	/* only tasks under cgroups[0] */
const volatile bool include_idle = false;	/* keep pid 0 (the idle task) */
const volatile bool filter_label = false;	/* --label: only matching contexts */
const volatile bool filter_tag = false;		/* --tag: only matching tags */
const volatile __u64 ring_wakeup_bytes = TP_RINGBUF_BYTES / 4;
const volatile __u64 ring_check_bytes = TP_RINGBUF_BYTES / 8;	/* per CPU */
const volatile __u64 ring_wakeup_ns = 1000000000;	/* records wake the reader at most this often */
const volatile __u64 ring_probe_wakeup_ns = 10000000;	/* young probes: this often (collect.bpf.h) */
const volatile __u64 ring_settled_wakeup_ns = 1000000000;	/* settled processes' records, exits */
const volatile __u32 unwind_mode = TP_UNWIND_AUTO;	/* --unwind */
const volatile __u32 stack_bytes = TP_STACK_DEFAULT;	/* --stack-bytes */
const volatile __u32 probe_every_young = 8;	/* ustack.bpf.h; by the rate */
/* The kernel has bpf_loop (5.17+): loops that would otherwise be checked
 * by the verifier once per round run in it. */
const volatile bool loop_helper = false;
/* The frame-pointer walk of ustack.bpf.h runs in bpf_loop; where the
 * kernel lacks it, bpf_get_stack walks the user stack. */
const volatile bool fp_walk = false;
/* Stack ids (stackid.bpf.h): on where the agent keeps the stacks it was
 * sent, and bpf_loop exists to hash them; the seed is secret, so no
 * process can make two of its stacks share an id on purpose. */
const volatile bool stack_ids = false;
/* TAGPROF_UNWIND_VERIFY: every sample of a process walked by CFI in the
 * kernel copies its stack too, so that the agent checks every walk
 * against libdwfl (tests). */
const volatile bool cfi_check_all = false;
const volatile __u64 stack_seed = 0;
/* A memory-access event (-e page-faults, mem-loads, mem-stores): samples
 * carry a struct tp_mem. mem_op: IBS, which tags any op: keep only the
 * samples whose data source says this PERF_MEM_OP_* (0: keep all). */
const volatile bool mem_sampling = false;
const volatile __u32 mem_op = 0;

/* The agent's stack generation: a new one makes every CPU send each stack
 * again, after the agent forgot the ones it had (tp_sample.stack_gen). */
__u32 stack_gen = 0;

/* When records last woke the reader (bpf_ktime_get_ns; collect.bpf.h). */
__u64 last_wakeup_ns = 0;

/* Records to the agent: samples and task events (enum tp_rec_type). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, TP_RINGBUF_BYTES);
} events SEC(".maps");

/* -p and -- COMMAND: the processes to keep, children included. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TP_MAX_PIDS);
	__type(key, __u32);
	__type(value, __u8);
} pids SEC(".maps");

/* --cgroup: the one cgroup whose tasks are kept. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroups SEC(".maps");

/* Per-CPU counters, summed by the agent. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tp_stats);
} stats SEC(".maps");

/* This CPU's counters. Fetched once per program run and passed down, so a
 * counter costs one add, not a map lookup. */
static __always_inline struct tp_stats *cpu_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stats, &zero);
}

/* Every counter goes up here, named as in struct tp_stats. Per CPU, so a
 * plain add: no other CPU writes these. */
#define stat_inc(st, name) ((st)->name++)

/* A whole record is too big for the 512-byte BPF stack: build it here.
 * The context blob goes first; the frames follow it, 8-byte aligned, then
 * the user registers and stack copy, if any. The members after ctx only
 * reserve room: what follows the blob starts right after its padding. */
/* A record's frames: the user stack's and the kernel's, and between them
 * the kernel stack's id when stack ids are on (stackid.bpf.h). */
#define FRAME_SLOTS	(2 * TP_MAX_FRAMES + 1)

struct scratch {
	struct tp_sample hdr;
	__u8 ctx[TP_CTX_SPACE];
	/* user frames, the kernel stack's id (with stack ids), kernel frames */
	__u64 frames[FRAME_SLOTS];
	struct tp_uregs uregs;
	__u8 ustack[TP_STACK_MAX];
	/* room for a memory sample's struct tp_mem after the longest record */
	__u8 mem_room[sizeof(struct tp_mem)];
	struct tp_mem mem;	/* not sent from here: the sample's, before it
				   is put after the record (collect.bpf.h) */
	/* not sent: this CPU's bytes since it last asked how much waits */
	__u64 unwoken;
	__u64 size;		/* the record's (collect_sample) */
	__u64 kstack_id;	/* the kernel frames' id (stackid.bpf.h) */
	__u32 wake_soon;	/* a young process's probe (collect.bpf.h) */
	__u64 uhash;		/* the user frames, folded (collect.bpf.h) */
	struct tp_proc_cfg cfg;	/* the process's settings, copied (collect.bpf.h) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch_map SEC(".maps");

/* The user stack pages the frame-pointer walk reads (walk_user_fp, in
 * ustack.bpf.h). A per-CPU value holds at most 32 KiB. */
#define FP_PAGES	7
#define FP_WIN		(FP_PAGES * TP_PAGE_SIZE)

struct fp_window {
	/* The walk's state lives here, not on the stack: read back from a
	 * map, the verifier knows it only by its bounds, the same for every
	 * step, and so checks the step once instead of once per frame. */
	__u64 base;		/* user address of b[0]: sp's page */
	__u64 fp;		/* the next pair's address */
	__u32 n;		/* frames so far */
	__u32 loaded;		/* pages of b read */
	__u32 ended;		/* a page could not be read: read no more */
	__u32 pad;
	__u64 hash;		/* the frames so far, folded (stackid.bpf.h) */
	/* The CFI walk's registers besides fp (its rbp), cfiwalk.bpf.h. */
	__u64 pc, sp;
	__u32 cflags;		/* CFI_BP_KNOWN, CFI_EXACT */
	__u32 hint;		/* the mapping the last frame was in */
	__u32 why;		/* how the CFI walk ended (enum cfi_end) */
	__u32 pad2;
	__u8 b[FP_WIN + 16];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fp_window);
} fpwin_map SEC(".maps");

/* The ids of the stacks sent with their frames, in slot id % STACK_SLOTS:
 * one way, so a newer stack displaces an older one, which is then sent
 * whole once more. Shared by every CPU, so that a stack is sent whole once
 * rather than once per CPU, and one table of 512 KiB serves any number of
 * CPUs. Sound without locks: a slot is written only after its record is in
 * the ring buffer, so a record that another CPU then sends as an id lies
 * behind it there, and the agent reads records in that order; an 8-byte
 * store is never seen half done. */
#define STACK_SLOTS	(1u << 16)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, STACK_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} sent_map SEC(".maps");

/* The CFI tables (sample_event.h, struct tp_cfi_row and its kin),
 * written by the agent through mappings of the arrays; one entry each
 * where the mode never walks by CFI (the agent sets the sizes). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TP_CFI_ROWS);
	__type(key, __u32);
	__type(value, struct tp_cfi_row);
} cfi_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TP_CFI_PAGES);
	__type(key, __u32);
	__type(value, __u64);	/* an array's values are 8 bytes apart */
} cfi_pages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TP_CFI_BINS);
	__type(key, __u32);
	__type(value, struct tp_cfi_bin);
} cfi_bins SEC(".maps");

/* The executable mappings of each process the agent marked for CFI. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TP_CFI_PROCS);
	__type(key, __u32);
	__type(value, struct tp_cfi_proc);
} cfi_procs SEC(".maps");

/* Per process, written by the agent: where its thread context lives, the
 * --label and --tag filters, and how its user stacks are walked. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TP_MAX_PIDS);
	__type(key, __u32);
	__type(value, struct tp_proc_cfg);
} proc_cfg SEC(".maps");

#endif
