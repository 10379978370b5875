/* Records the BPF programs send to the agent over the ring buffer, and the
 * settings the agent passes in. Plain fixed-size types only: this header is
 * compiled for both the BPF target and the host. */
#ifndef TAGPROF_SAMPLE_EVENT_H
#define TAGPROF_SAMPLE_EVENT_H

#ifndef __VMLINUX_H__		/* BPF side: vmlinux.h has the types */
#include <linux/types.h>
#endif

#define TP_MAX_FRAMES	127	/* per stack; the kernel's perf_event_max_stack */
#define TP_COMM_LEN	16
#define TP_MAX_PIDS	8192	/* pid filter entries, children included */
#define TP_RINGBUF_BYTES (8u << 20)	/* default; the agent sizes it by rate */
#define TP_STACK_MAX	16384	/* user stack bytes a sample may carry */
#define TP_STACK_DEFAULT 8192
#define TP_PAGE_SIZE	4096

enum tp_rec_type {
	TP_REC_SAMPLE = 1,	/* struct tp_sample + frames */
	TP_REC_EXEC = 2,	/* struct tp_task_event: image replaced */
	TP_REC_EXIT = 3,	/* struct tp_task_event: last thread gone */
};

/* One CPU sample. Followed by ctx_size bytes of thread context (see enum
 * tp_ctx_kind) padded to a multiple of 8, then the frames, each a __u64
 * address, leaf first:
 *   - the user_depth user frames, unless stack_kind is TP_STACK_SEEN;
 *   - where kstack_kind is not TP_STACK_FRAMES (stack ids on, kern_depth
 *     not 0), the kernel frames' id, a __u64;
 *   - the kern_depth kernel frames, unless kstack_kind is TP_STACK_SEEN;
 * then, when ustack_flags has TP_USTACK_REGS, a struct tp_uregs and
 * stack_size bytes of the user stack from regs.sp up (for CFI unwinding in
 * the agent); neither kind is SEEN then. */
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
	__u16 ctx_size;		/* bytes of context blob after the header */
	__u8 ctx_kind;		/* enum tp_ctx_kind */
	__u8 tag_valid;		/* tag holds the declared register's value */
	__u64 tag;
	__u64 sp_words[2];	/* the 16 bytes at the user stack pointer:
				   the leaf's return address while it has no
				   frame, [0] before it pushes anything, [1]
				   after one push (rbp, before its mov) */
	__u16 stack_size;	/* user stack bytes after the registers */
	__u8 ustack_flags;	/* TP_USTACK_* */
	__u8 stack_kind;	/* enum tp_stack_kind */
	__u8 stack_gen;		/* the generation stack_id belongs to (low
				   8 bits of the agent's count) */
	__u8 kstack_kind;	/* the kernel frames': enum tp_stack_kind */
	__u8 mem;		/* a struct tp_mem ends the record: the
				   event is a memory-access one */
	__u8 pad;		/* spare: room for the sample's origin (enum
				   sample_origin, bpf/collect.bpf.h) once
				   there is more than one */
	__u64 stack_id;		/* names the user frames: see enum
				   tp_stack_kind */
};
_Static_assert(sizeof(struct tp_sample) == 104, "tp_sample layout");

/* A memory-access sample's data (-e page-faults, mem-loads, mem-stores),
 * after everything else in the record (unaligned there: copy it out).
 * Read by BPF from the kernel's sample data, each part only when the
 * kernel's flags say it filled it in. */
struct tp_mem {
	__u64 addr;		/* the data address; never 0 (those samples
				   are counted, not sent) */
	__u64 data_src;		/* union perf_mem_data_src, when
				   TP_MEM_DATA_SRC */
	__u32 weight;		/* the access's latency in cycles, when
				   TP_MEM_WEIGHT */
	__u32 flags;		/* enum tp_mem_flags */
};
_Static_assert(sizeof(struct tp_mem) == 24, "tp_mem layout");

/* PERF_MEM_NA of the uapi (op, level, snoop, lock and TLB all "not
 * available"), which vmlinux.h lacks: macros are not in BTF. The op is the
 * low 5 bits (PERF_MEM_OP_LOAD 2, PERF_MEM_OP_STORE 4). */
#define TP_MEM_SRC_NA	(1ull | 1ull << 5 | 1ull << 19 | 1ull << 24 | 1ull << 26)

enum tp_mem_flags {
	TP_MEM_DATA_SRC = 1,
	TP_MEM_WEIGHT = 2,
};

/* Whether a sample carries its user frames (stack_kind) and its kernel
 * frames (kstack_kind). The BPF side sends a stack's frames once, with an
 * id; after that, while it remembers having sent them, samples of the same
 * stack carry only the id (bpf/stackid.bpf.h). A user stack's id hashes
 * the pid, its depth and every frame with a secret seed, a kernel stack's
 * its depth and frames, both in the generation the agent last set: the
 * agent starts a new one when it forgets the stacks it was sent
 * (src/capture/stacktab.h). */
enum tp_stack_kind {
	TP_STACK_FRAMES = 0,	/* frames follow; no id (ids are off, or no
				   kernel frames) */
	TP_STACK_NEW = 1,	/* frames follow; remember them by their id */
	TP_STACK_SEEN = 2,	/* no frames: those sent under the id before */
};

enum tp_ustack_flags {
	TP_USTACK_SP_WORD = 1,	/* sp_words was read */
	TP_USTACK_REGS = 2,	/* tp_uregs and the stack copy follow the frames */
	TP_USTACK_PROBE = 4,	/* copied as an `auto` probe, not because the
				   process is marked (or the mode is dwarf) */
	TP_USTACK_SHORT = 8,	/* the stack ended before the requested size */
	TP_USTACK_CFI = 16,	/* the user frames were walked by CFI in the
				   kernel (bpf/cfiwalk.bpf.h), not by frame
				   pointers: no leaf to repair */
	TP_USTACK_LATER = 32,	/* ... and reached a mapping whose table is
				   not built yet (TP_CFI_LATER): the stack
				   is copied, for the agent to unwind and to
				   build the tables the stack passes through */
};

/* The user registers CFI unwinding starts from (x86-64): the interrupted
 * ones, or the ones saved at kernel entry when the kernel was running. */
struct tp_uregs {
	__u64 ip, sp, bp, bx, r12, r13, r14, r15;
};
_Static_assert(sizeof(struct tp_uregs) == 64, "tp_uregs layout");

/* How user stacks are walked (--unwind). */
enum tp_unwind_mode {
	TP_UNWIND_AUTO = 0,	/* frame pointers; CFI for processes that need it */
	TP_UNWIND_FP = 1,	/* frame pointers only */
	TP_UNWIND_DWARF = 2,	/* stack copy and CFI for every sample */
};

/* `auto` probes (bpf/ustack.bpf.h): one sample in TP_PROBE_EVERY of a
 * process copies its stack; during its first TP_YOUNG_NS, enough for about
 * TP_YOUNG_PROBES probes at the sampling rate (one in 8 where the rate is
 * not known), so that a short program is classified at any rate without
 * probing a fast one hundreds of times. */
#define TP_PROBE_EVERY		64
/* A process walked by CFI in the kernel is probed only to check the walk
 * against libdwfl: one sample in this many. */
#define TP_PROBE_EVERY_CFI	1024
#define TP_YOUNG_NS		(2ull * 1000 * 1000 * 1000)
/* A process this old is settled: its maps were read by the time its
 * records wait ring_settled_wakeup_ns (bpf/collect.bpf.h). */
#define TP_SETTLED_NS		(10ull * 1000 * 1000 * 1000)
/* A probe copies at most this much stack: enough to see the chain break
 * in the frames near the leaf, where it breaks (a libc function without
 * a frame), and to check the kernel's CFI walk that far. */
#define TP_PROBE_BYTES		2048
/* 64: the first probe comes after 1/64 of the young time on average
 * (31 ms), so that a process without frame pointers is walked by CFI
 * within its first tens of samples; 4 left a 5 s program's first 0.5 s of
 * stacks broken, 16 its first 0.2-0.4 s. A probe is an 8 KiB copy: 3% of
 * a young process's samples at any rate. */
#define TP_YOUNG_PROBES		64

/* tp_proc_cfg.unwind: set by the agent in `auto` mode. */
enum tp_proc_unwind {
	TP_PROC_UNWIND_DEFAULT = 0,	/* frame pointers, and an occasional probe */
	TP_PROC_UNWIND_COPY = 1,	/* copy the stack on every sample */
	TP_PROC_UNWIND_CFI = 2,		/* walk it by CFI tables in the kernel */
};

/* CFI tables in the kernel (bpf/cfiwalk.bpf.h, built by
 * src/unwind/cfitable.c, loaded by src/capture/cfiload.c). A binary's
 * table is a sorted run of rows, each the unwind rule from its pc up to the
 * next row's, and a page index: for each 4 KiB page of the table's range,
 * the row in force at the page's start, so that a lookup searches only the
 * rows of one page. The bounds are the memory the kernel holds for them:
 * TP_CFI_ROWS * 8 + TP_CFI_PAGES * 8 + TP_CFI_BINS * 16 bytes (10 MiB), and
 * at most TP_CFI_PROCS processes of TP_CFI_MAPS mappings (4 KiB each),
 * allocated as processes are marked. */
#define TP_CFI_ROWS		(1u << 20)	/* rows of all tables */
#define TP_CFI_PAGES		(1u << 18)	/* page index entries */
#define TP_CFI_BINS		4096		/* tables */
#define TP_CFI_PROCS		1024		/* processes walked by CFI */
#define TP_CFI_MAPS		127		/* executable mappings each */
#define TP_CFI_PAGE_ROWS	1024		/* rows a page's search covers */
#define TP_CFI_NO_TABLE		0xffffffffu	/* tp_cfi_map.bin: no CFI */
/* tp_cfi_map.bin: a binary with CFI whose table is built when a stack
 * first passes through it (src/capture/cfiload.c): a process maps many
 * libraries its stacks never reach. */
#define TP_CFI_LATER		0xfffffffeu

/* tp_cfi_row.kind, low 4 bits: how the CFA (the caller's stack pointer) is
 * found; the return address is at CFA - 8 in every kind that has one. */
enum tp_cfi_kind {
	TP_CFI_NONE = 0,	/* no CFI covers the pc: frame pointers */
	TP_CFI_RSP = 1,		/* CFA = rsp + 8 * cfa */
	TP_CFI_RBP = 2,		/* CFA = rbp + 8 * cfa */
	TP_CFI_PLT = 3,		/* a PLT stub: CFA = rsp + 8 * cfa, plus 8
				   where (pc & 15) >= bp (the push ran) */
	TP_CFI_SIGNAL = 4,	/* a signal trampoline: the caller's
				   registers are in the signal frame at rsp */
	TP_CFI_END = 5,		/* the outermost frame: no caller */
	TP_CFI_UNSUPPORTED = 6,	/* a rule the walk cannot follow */
};
/* tp_cfi_row.kind, bits 4-5: how the caller's rbp is found. */
enum tp_cfi_bp {
	TP_CFI_BP_SAME = 0 << 4,	/* unchanged */
	TP_CFI_BP_AT = 1 << 4,		/* saved at CFA + 8 * bp */
	TP_CFI_BP_UNDEF = 2 << 4,	/* lost */
};
#define TP_CFI_KIND(k)	((k) & 15)
#define TP_CFI_BP(k)	((k) & (3 << 4))

struct tp_cfi_row {
	__u32 pc;	/* offset from the table's base */
	__u8 kind;	/* enum tp_cfi_kind | enum tp_cfi_bp */
	__s8 bp;
	__u16 cfa;
};
_Static_assert(sizeof(struct tp_cfi_row) == 8, "tp_cfi_row layout");

/* A table: rows [row, row + nrows) of the rows map, pages [page, page +
 * npages] of the page index (npages + 1 entries, each a row index relative
 * to row). */
struct tp_cfi_bin {
	__u32 row, nrows;
	__u32 page, npages;
};

/* One executable mapping of a process: the table that covers it and where
 * the table's offset 0 lies in the process. */
struct tp_cfi_map {
	__u64 start, end;
	__u64 base;
	__u32 bin;	/* TP_CFI_NO_TABLE: walk by frame pointers;
			   TP_CFI_LATER: end the walk, copy the stack */
	__u32 pad;
};

/* A process's executable mappings, sorted by start. */
struct tp_cfi_proc {
	__u32 n;
	__u32 pad;
	__u64 start_ns;		/* the process's (tp_sample.start_ns) */
	struct tp_cfi_map m[TP_CFI_MAPS];
};

/* Process lifecycle events, so the agent drops stale maps at once. */
struct tp_task_event {
	__u32 type;
	__u32 pid;
	__u64 start_ns;
	char comm[TP_COMM_LEN];
};
_Static_assert(sizeof(struct tp_task_event) == 32, "tp_task_event layout");

/* Where a thread's context pointer lives, relative to its thread pointer
 * (fsbase on x86-64), found by the agent from the ELF file and the loader's
 * GOT entries (src/proc/tlsloc.c). */
enum tp_tls_kind {
	TP_TLS_NONE = 0,
	TP_TLS_STATIC = 1,	/* pointer at tp + tpoff (local-exec, initial-exec,
				   static TLSDESC) */
	TP_TLS_DTV = 2,		/* pointer at dtv[modid].val + offset, dtv at
				   tp + dtv_off (global-dynamic, dlopen) */
};

struct tp_tls_loc {
	__s64 tpoff;
	__u64 modid;
	__u64 offset;
	__u32 kind;		/* enum tp_tls_kind */
	__u32 dtv_off;		/* glibc x86-64: 8 */
};
_Static_assert(sizeof(struct tp_tls_loc) == 32, "tp_tls_loc layout");

/* OpenTelemetry thread context record (OTEP 4947). */
#define TP_OTEL_HDR_SIZE	28
#define TP_OTEL_ATTRS_MAX	612	/* 640-byte record */
/* custom-labels v1: labels copied per sample, and their bounds. */
#define TP_CL_MAX_LABELS	10
#define TP_CL_KEY_MAX		32
#define TP_CL_VAL_MAX		64
/* A custom label in a sample: [klen][key: KEY_MAX][vlen][value: VAL_MAX];
 * klen TP_CL_EMPTY marks a slot to skip. */
#define TP_CL_SLOT		(2 + TP_CL_KEY_MAX + TP_CL_VAL_MAX)
#define TP_CL_EMPTY		0xff
#define TP_CTX_SPACE		1024	/* largest context blob */
#define TP_FILTER_VAL_MAX	128	/* --label value bytes compared in BPF */

/* Per process, set by the agent once it has found the context symbols. */
struct tp_proc_cfg {
	struct tp_tls_loc otel;		/* otel_thread_ctx_v1 */
	struct tp_tls_loc custom;	/* custom_labels_current_set */
	/* --label KEY=VALUE: KEY's index in this process's key map, or
	 * TP_FILTER_NO_KEY when the process has no such key (cannot match) */
	__u32 filter_key_idx;
	__u32 filter_len;
	char filter_val[TP_FILTER_VAL_MAX];
	char filter_key[TP_CL_KEY_MAX];	/* custom labels name keys by string */
	__u32 filter_key_len;
	/* Register tags: which register (enum tp_tag_reg, 0 = none declared)
	 * and the --tag filter: keep samples where (tag & mask) == value. */
	__u32 tag_reg;
	__u64 tag_filter_mask;
	__u64 tag_filter_value;
	/* enum tp_proc_unwind: the unwinder's `auto` mark, which
	 * src/capture/proccfg.c keeps beside the settings above. */
	__u32 unwind;
	__u32 unwind_pad;
};
#define TP_FILTER_NO_KEY 0xffffffffu

/* Registers a tag may live in: callee-saved ones the BPF side can read
 * from the sample (user mode) or the saved user registers (kernel mode). */
enum tp_tag_reg {
	TP_TAG_NONE = 0,
	/* x86-64 */
	TP_TAG_RBX = 1, TP_TAG_R12, TP_TAG_R13, TP_TAG_R14, TP_TAG_R15,
	/* arm64: x19..x28 */
	TP_TAG_X19 = 16, TP_TAG_X28 = TP_TAG_X19 + 9,
};

/* What a sample's context blob holds (tp_sample.ctx_kind). */
enum tp_ctx_kind {
	TP_CTX_NONE = 0,
	TP_CTX_OTEL = 1,	/* 28-byte OTEP 4947 header + attrs */
	TP_CTX_CUSTOM = 2,	/* TP_CL_SLOT-byte slots, one per label */
};

/* Per-CPU counters, summed by the agent and shown in the profile's comments
 * and the summary: X(field, text), text as they show it after the number
 * (src/util/counter.h). The BPF programs and the agent share the struct:
 * every field a __u64, in this order. */
#define TP_STATS_COUNTERS(X)						\
	X(samples, "sent by BPF")	/* samples sent */		\
	X(lost, "lost (ring buffer full)")	/* sample dropped */	\
	X(filtered, "filtered out in BPF (pid, cgroup, idle)")		\
	X(task_lost, "exec/exit events lost")				\
	/* a user thread sampled but no user frames */			\
	X(no_user_stack, "user threads without user stack")		\
	/* TLS slot (or DTV) could not be read */			\
	X(ctx_tls_unreadable, "TLS page not readable")			\
	/* context pointer into unmapped memory */			\
	X(ctx_record_unreadable, "record unreadable")			\
	/* valid != 1 (detached, or being rewritten) */			\
	X(ctx_invalid, "invalid record")				\
	X(ctx_oversize, "oversize record")	/* over TP_OTEL_ATTRS_MAX */ \
	/* the record changed while it was being read */		\
	X(ctx_torn, "torn record")					\
	X(ctx_read, "samples with context")				\
	X(label_filtered, "samples dropped by --label")			\
	X(tag_read, "samples tagged")	/* carry a register tag */	\
	/* saved user registers unreadable */				\
	X(tag_unreadable, "saved registers unreadable")			\
	X(tag_filtered, "samples dropped by --tag")			\
	X(ustack_copied, "samples with a stack copy")			\
	X(ustack_probes, "auto probes")		/* of the copies */	\
	/* copies cut short by the end of the stack */			\
	X(ustack_short, "cut short by the stack's end")			\
	/* stack or saved registers unreadable */			\
	X(ustack_failed, "copies failed")				\
	/* frames not sent: the agent has them under the id sent */	\
	X(stack_seen, "stacks sent as an id")				\
	X(kstack_seen, "kernel stacks sent as an id")			\
	/* user stacks walked by CFI in the kernel, and how each ended */ \
	X(cfi_walks, "stacks walked by kernel CFI")			\
	X(cfi_end, "reached the outermost frame")			\
	X(cfi_fp_frames, "frames without CFI, by frame pointers")	\
	X(cfi_no_map, "ended at a pc no table mapping holds")		\
	/* ... at a library whose table is not built yet: copied */	\
	X(cfi_later, "ended at a table not built yet")			\
	X(cfi_unsupported, "ended at a rule the kernel walk lacks")	\
	X(cfi_unreadable, "ended at unreadable stack memory")		\
	X(cfi_bad_frame, "ended at a frame that went down the stack")	\
	X(cfi_depth, "cut at the frame cap")				\
	/* memory-access events: samples the kernel gave no data	\
	 * address, and IBS ops that were not the loads (or stores)	\
	 * asked for; neither is sent */				\
	X(mem_no_addr, "samples without a data address")		\
	X(mem_other_op, "IBS samples of other ops")

#define TP_STATS_FIELD(field, text)	__u64 field;
struct tp_stats {
	TP_STATS_COUNTERS(TP_STATS_FIELD)
};
#undef TP_STATS_FIELD
_Static_assert(sizeof(struct tp_stats) == 256, "tp_stats layout");

#endif
