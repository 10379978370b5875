/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What tagprof sizes' BPF programs (bpf/sizes.bpf.c) share with the
 * command (src/cmd/sizes.c): the per-function settings, the tuple maps'
 * keys and values, and the counters. Input-sensitive profiles: each call
 * of a probed function is measured (cost between entry and return) and
 * added to the tuple of its (function, input size). */
#ifndef TAGPROF_SIZES_EVENT_H
#define TAGPROF_SIZES_EVENT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define TP_SZ_MAX_FUNCS		64	/* --func options */
/* The shadow stack's depth: the kernel's own limit on nested return
 * probes (MAX_URETPROBE_DEPTH). A deeper call is not measured. */
#define TP_SZ_DEPTH		64
#define TP_SZ_EXACT		1024	/* sizes kept exactly up to here */
#define TP_SZ_SUB_BITS		4	/* above: 16 buckets per power of two */
/* Threads inside a probed call at once (a shadow stack each, 2 KiB). */
#define TP_SZ_MAX_THREADS	1024
/* All the maps together stay under this: the command gives the tuple map
 * what the others leave, by the number of CPUs (a tuple holds one value
 * per CPU). */
#define TP_SZ_MAP_BYTES		(16u << 20)

/* How a function's size is read at its entry (--size). */
enum tp_sz_kind {
	TP_SZ_ARG = 0,		/* argN, an integer argument register */
	TP_SZ_FIELD,		/* *(uW *)(argN + off), read from user memory */
	TP_SZ_LABEL,		/* the thread's label KEY, a decimal number */
};

struct tp_sz_func {
	__u32 kind;		/* enum tp_sz_kind */
	__u32 arg;		/* 1..6 */
	__u32 width;		/* TP_SZ_FIELD: 1, 2, 4 or 8 bytes */
	__u32 pad;
	__u64 off;		/* TP_SZ_FIELD: byte offset from argN */
};

struct tp_sz_key {
	__u32 func;		/* index of --func */
	__u32 pad;
	__u64 size;		/* exact, or the bucket's lower bound */
};

/* A thread's shadow stack (the sz_shadows hash, by thread id): the probed
 * calls it is inside, outermost first. */
struct tp_sz_frame {
	__u64 sp;		/* the stack pointer at entry */
	__u64 start;		/* ns, or the counter */
	__u64 size;
	__u32 func;
	__u32 cpu;		/* counter cost: where it was read */
};

struct tp_sz_shadow {
	__u32 depth;
	__u32 pad;
	struct tp_sz_frame f[TP_SZ_DEPTH];
};

/* Per CPU: the command sums calls, sums and squares and combines min and
 * max over CPUs. */
struct tp_sz_val {
	__u64 calls;
	__u64 size_sum;
	__u64 min, max;
	__u64 sum;
	__u64 sq_lo, sq_hi;	/* sum of squared costs, 128 bits */
	__u64 pad;
};

/* Per function and CPU (the sz_fstats array, index func). */
struct tp_sz_fstats {
	__u64 seen;		/* entries of the target process */
	__u64 measured;		/* calls added to a tuple */
	__u64 skipped_depth;	/* the shadow stack was full */
	__u64 sampled_out;	/* the rate guard skipped it */
	__u64 size_faults;	/* the size could not be read */
	__u64 no_label;		/* label: the thread had no such label */
	__u64 dropped;		/* the tuple map was full */
	__u64 migrated;		/* counter cost: returned on another CPU */
};

/* Per CPU, for the whole run (the sz_stats array). */
struct tp_sz_stats {
	__u64 no_thread_room;	/* TP_SZ_MAX_THREADS shadow stacks in use */
	__u64 unmatched_returns; /* a return without its entry's frame */
	__u64 lost_frames;	/* frames whose return never came (longjmp) */
	__u64 counter_failed;	/* the cost counter could not be read */
};
/* The thread context's counters (label: sizes) are the sampler's, in a
 * struct tp_stats of their own (the sz_ctxstats array). */

#endif
