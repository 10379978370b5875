// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* tagprof sizes: each call of a probed function, measured from its entry
 * to its return and added to the tuple of its (function, input size), as
 * aprof keeps them (calls, min, max, sum, sum of squares), in a per-CPU
 * hash map the command reads at the end.
 *
 * Entry and return meet on a per-thread shadow stack. A frame is matched
 * to its return by the stack pointer, not by order alone: at a return the
 * stack pointer is the entry's plus the return address popped, so frames
 * left by a longjmp (whose returns never come) are recognised, dropped and
 * counted, and recursion pairs each level with its own frame. Calls deeper
 * than TP_SZ_DEPTH are not measured (counted), as the kernel itself stops
 * running return probes there.
 *
 * Two ways to attach, chosen by the command: a uprobe session (kernel
 * 6.13+), one program run at entry and at return whose entry can skip its
 * return half; or a uprobe and a uretprobe, where the return always runs
 * and finds no frame for a call the entry skipped. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sample_event.h"
#include "sizes_event.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the command before load. */
const volatile __u32 target_pid = 0;	/* the process measured (tgid) */
const volatile bool cost_counter = false; /* cost from sz_counter, not ns */
const volatile bool loop_helper = false; /* context.bpf.h */
/* x86-64: a return pops the return address the entry saw on the stack. */
#if defined(__TARGET_ARCH_x86)
#define RET_SP_ADJ 8
#else
#define RET_SP_ADJ 0
#endif

/* The rate guard (the command updates it while running): measure one
 * call in sample_every (1: all). */
__u32 sample_every = 1;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TP_SZ_MAX_FUNCS);
	__type(key, __u32);
	__type(value, struct tp_sz_func);
} sz_funcs SEC(".maps");

/* Sized by the command (TP_SZ_TUPLE_BYTES over the CPUs). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct tp_sz_key);
	__type(value, struct tp_sz_val);
} sz_tuples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TP_SZ_MAX_FUNCS);
	__type(key, __u32);
	__type(value, struct tp_sz_fstats);
} sz_fstats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tp_sz_stats);
} sz_stats SEC(".maps");

/* The per-CPU cost counter (--cost EVENT), one per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} sz_counter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TP_SZ_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct tp_sz_shadow);
} sz_shadows SEC(".maps");

/* A zeroed shadow stack to insert from (too big for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tp_sz_shadow);
} sz_blank SEC(".maps");

/* label: sizes. Where the target's threads keep their context, and the
 * index (OTEP 4947) or name (custom labels) of the key, set by the command
 * once discovery found them (filter_key_idx, filter_key). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tp_proc_cfg);
} sz_ctx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tp_stats);
} sz_ctxstats SEC(".maps");

struct ctx_blob {
	__u8 b[TP_CTX_SPACE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ctx_blob);
} sz_blob SEC(".maps");

#define stat_inc(st, name) ((st)->name++)
#include "context.bpf.h"

extern bool bpf_session_is_return(void) __ksym __weak;

/* libbpf 1.1's bpf_tracing.h stops at the fifth argument. */
#if defined(__TARGET_ARCH_x86)
#define ARG6(ctx) ((ctx)->r9)
#elif defined(__TARGET_ARCH_arm64)
#define ARG6(ctx) (((struct user_pt_regs *)(ctx))->regs[5])
#else
#define ARG6(ctx) 0
#endif

/* Argument n (1..6). All six are copied first: a switch over them the
 * compiler folds into one load at a computed context offset, which the
 * verifier refuses. */
static __always_inline __u64 arg_reg(struct pt_regs *ctx, __u32 n)
{
	__u64 a[8] = {
		PT_REGS_PARM1(ctx), PT_REGS_PARM2(ctx), PT_REGS_PARM3(ctx),
		PT_REGS_PARM4(ctx), PT_REGS_PARM5(ctx), ARG6(ctx),
	};

	return a[(n - 1) & 7];
}

/* A label's value as a decimal number: leading digits, at most 19 (a
 * u64 that cannot overflow). False when it does not start with one. */
static __always_inline bool parse_decimal(const __u8 *v, __u32 len, __u64 *out)
{
	__u64 n = 0;
	int i;

	for (i = 0; i < 19; i++) {
		if (i >= len || v[i] < '0' || v[i] > '9')
			break;
		n = n * 10 + (v[i] - '0');
	}
	*out = n;
	return i > 0;
}

/* The thread's label named in the process's sz_ctx entry, as a number. */
static __always_inline int read_label_size(__u64 *size)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct tp_proc_cfg *cfg;
	struct tp_sample hdr;
	struct ctx_blob *blob;
	struct tp_stats *st;
	__u32 zero = 0, off, len, pid = target_pid;

	cfg = bpf_map_lookup_elem(&sz_ctx, &pid);
	st = bpf_map_lookup_elem(&sz_ctxstats, &zero);
	blob = bpf_map_lookup_elem(&sz_blob, &zero);
	if (!cfg || !st || !blob)
		return -1;
	read_context(st, task, cfg, &hdr, blob->b, false);
	if (hdr.ctx_kind == TP_CTX_OTEL) {
		if (!otel_find(cfg, blob->b, hdr.ctx_size, &off, &len))
			return -1;
	} else if (hdr.ctx_kind == TP_CTX_CUSTOM) {
		if (!custom_find(cfg, blob->b, hdr.ctx_size, &off, &len))
			return -1;
	} else {
		return -1;
	}
	if (off > TP_CTX_SPACE - 24)
		return -1;
	return parse_decimal(blob->b + off, len, size) ? 0 : -1;
}

/* 0: *size read; -1: no such label; -2: the read faulted. */
static __always_inline int read_size(struct pt_regs *ctx,
				     const struct tp_sz_func *fn, __u64 *size)
{
	__u64 base, v = 0;

	if (fn->kind == TP_SZ_LABEL)
		return read_label_size(size);
	base = arg_reg(ctx, fn->arg);
	if (fn->kind == TP_SZ_ARG) {
		*size = base;
		return 0;
	}
	if (fn->width != 1 && fn->width != 2 && fn->width != 4 &&
	    fn->width != 8)
		return -2;
	/* little-endian: the low bytes of v */
	if (bpf_probe_read_user(&v, fn->width & 15, (void *)(base + fn->off)))
		return -2;
	*size = v;
	return 0;
}

/* Sizes above TP_SZ_EXACT: the lower bound of their log-linear bucket,
 * 2^TP_SZ_SUB_BITS buckets per power of two. */
static __always_inline __u64 size_bucket(__u64 n)
{
	__u32 msb = 0;

	if (n <= TP_SZ_EXACT)
		return n;
	if (n >> 32) { msb += 32; }
	if (n >> (msb + 16)) { msb += 16; }
	if (n >> (msb + 8)) { msb += 8; }
	if (n >> (msb + 4)) { msb += 4; }
	if (n >> (msb + 2)) { msb += 2; }
	if (n >> (msb + 1)) { msb += 1; }
	msb -= TP_SZ_SUB_BITS;
	return (n >> msb) << msb;
}

static __always_inline bool read_cost(struct tp_sz_stats *st, __u64 *v)
{
	struct bpf_perf_event_value pv;

	if (!cost_counter) {
		*v = bpf_ktime_get_ns();
		return true;
	}
	if (bpf_perf_event_read_value(&sz_counter, BPF_F_CURRENT_CPU, &pv,
				      sizeof(pv))) {
		st->counter_failed++;
		return false;
	}
	*v = pv.counter;
	return true;
}

static __always_inline struct tp_sz_shadow *thread_shadow(__u32 tid, bool make)
{
	struct tp_sz_shadow *s = bpf_map_lookup_elem(&sz_shadows, &tid);
	__u32 zero = 0;

	if (s || !make)
		return s;
	s = bpf_map_lookup_elem(&sz_blank, &zero);
	if (!s)
		return NULL;
	bpf_map_update_elem(&sz_shadows, &tid, s, BPF_NOEXIST);
	return bpf_map_lookup_elem(&sz_shadows, &tid);
}

/* The entry. Returns 0 to be called at the return (a session), 1 not. */
static __always_inline int on_entry(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), size, start;
	__u32 func = bpf_get_attach_cookie(ctx), zero = 0, d;
	struct tp_sz_fstats *fs;
	struct tp_sz_stats *st;
	struct tp_sz_func *fn;
	struct tp_sz_shadow *sh;
	int r;

	if ((id >> 32) != target_pid)
		return 1;
	fn = bpf_map_lookup_elem(&sz_funcs, &func);
	fs = bpf_map_lookup_elem(&sz_fstats, &func);
	st = bpf_map_lookup_elem(&sz_stats, &zero);
	if (!fn || !fs || !st)
		return 1;
	fs->seen++;
	/* Per CPU, so no two CPUs share the count; over many calls each CPU
	 * measures one in sample_every of its own. */
	if (sample_every > 1 && fs->seen % sample_every) {
		fs->sampled_out++;
		return 1;
	}
	r = read_size(ctx, fn, &size);
	if (r) {
		if (r == -1)
			fs->no_label++;
		else
			fs->size_faults++;
		return 1;
	}
	sh = thread_shadow((__u32)id, true);
	if (!sh) {
		st->no_thread_room++;
		return 1;
	}
	d = sh->depth;
	if (d >= TP_SZ_DEPTH) {
		fs->skipped_depth++;
		return 1;
	}
	if (!read_cost(st, &start))
		return 1;
	sh->f[d].sp = PT_REGS_SP(ctx);
	sh->f[d].size = size;
	sh->f[d].func = func;
	sh->f[d].cpu = bpf_get_smp_processor_id();
	sh->f[d].start = start;
	sh->depth = d + 1;
	return 0;
}

static __always_inline void add_tuple(struct tp_sz_fstats *fs, __u32 func,
				      __u64 size, __u64 cost)
{
	struct tp_sz_key k = { .func = func, .size = size_bucket(size) };
	struct tp_sz_val *v, blank = {};
	__u64 c2, sq;

	v = bpf_map_lookup_elem(&sz_tuples, &k);
	if (!v) {
		/* fails with E2BIG when the map is full */
		bpf_map_update_elem(&sz_tuples, &k, &blank, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&sz_tuples, &k);
		if (!v) {
			fs->dropped++;
			return;
		}
	}
	/* Squares of costs over 2^32 (4.3 s) would overflow: they count as
	 * 2^32, which only such calls' spread can notice. */
	c2 = cost > 0xffffffffull ? 0xffffffffull : cost;
	sq = c2 * c2;
	v->size_sum += size;
	v->sum += cost;
	/* Another CPU made the entry: this CPU's value starts zeroed. */
	if (cost < v->min || !v->calls)
		v->min = cost;
	if (cost > v->max)
		v->max = cost;
	v->calls++;
	v->sq_lo += sq;
	if (v->sq_lo < sq)
		v->sq_hi++;
	fs->measured++;
}

/* The return: pairs it with its frame by the stack pointer. */
static __always_inline void on_return(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), sp = PT_REGS_SP(ctx);
	__u32 func = bpf_get_attach_cookie(ctx), zero = 0, d, tid = id, cpu;
	__u64 now = 0, size, start;
	struct tp_sz_fstats *fs;
	struct tp_sz_stats *st;
	struct tp_sz_shadow *sh;
	struct tp_sz_frame *f;
	bool now_ok;

	if ((id >> 32) != target_pid)
		return;
	fs = bpf_map_lookup_elem(&sz_fstats, &func);
	st = bpf_map_lookup_elem(&sz_stats, &zero);
	if (!fs || !st)
		return;
	/* first, so that the cost holds as little of this program as the
	 * entry's, which reads its start last */
	now_ok = read_cost(st, &now);
	sh = thread_shadow(tid, false);
	if (!sh)
		return;
	/* Frames deeper than this return's (a longjmp skipped their
	 * returns) go first. */
	for (int i = 0; i < TP_SZ_DEPTH; i++) {
		d = sh->depth;
		if (d == 0 || d > TP_SZ_DEPTH)
			break;
		f = &sh->f[(d - 1) & (TP_SZ_DEPTH - 1)];
		if (f->sp + RET_SP_ADJ >= sp)
			break;
		sh->depth = d - 1;
		st->lost_frames++;
	}
	d = sh->depth;
	if (d == 0 || d > TP_SZ_DEPTH) {
		st->unmatched_returns++;
		return;
	}
	f = &sh->f[(d - 1) & (TP_SZ_DEPTH - 1)];
	if (f->sp + RET_SP_ADJ != sp || f->func != func) {
		/* an entry that was not pushed (skipped, or before the
		 * probe was attached) */
		st->unmatched_returns++;
		return;
	}
	sh->depth = d - 1;
	size = f->size;
	start = f->start;
	cpu = f->cpu;
	/* Outside every probed call: the thread's stack goes, so that the
	 * map holds only threads inside one (TP_SZ_MAX_THREADS at once).
	 * The frame was copied first: a deleted element can be reused. */
	if (d == 1)
		bpf_map_delete_elem(&sz_shadows, &tid);
	if (!now_ok)
		return;
	if (cost_counter && cpu != bpf_get_smp_processor_id()) {
		fs->migrated++;
		return;
	}
	add_tuple(fs, func, size, now - start);
}

/* A uprobe session: the command sets the attach type before load (libbpf
 * 1.1 does not know the section name). */
SEC("uprobe")
int sz_session(struct pt_regs *ctx)
{
	if (!bpf_session_is_return())
		return on_entry(ctx);
	on_return(ctx);
	return 0;
}

SEC("uprobe")
int sz_entry(struct pt_regs *ctx)
{
	on_entry(ctx);
	return 0;
}

SEC("uretprobe")
int sz_return(struct pt_regs *ctx)
{
	on_return(ctx);
	return 0;
}
