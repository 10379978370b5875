// SPDX-License-Identifier: BSD-2-Clause
/* The sampling pipeline: ring-buffer records in (records.h), resolved
 * (resolver.h), handed to the consumers (sample.h), the pprof window
 * (out/pprofwin.h) among them, which give one pprof per window out. Here:
 * the wiring and the window; what the window's comments and the summary
 * say is comments.c's, read from the counters gathered here. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/capture.h"
#include "capture/cfiload.h"
#include "capture/comments.h"
#include "capture/counters.h"
#include "capture/labels.h"
#include "capture/proccfg.h"
#include "capture/records.h"
#include "capture/resolver.h"
#include "capture/stacktab.h"
#include "kernel/ksymbolizer.h"
#include "out/pprof.h"
#include "out/pprofwin.h"
#include "sym/elfsym.h"
#include "proc/codemap.h"
#include "proc/ctxwatch.h"
#include "proc/proctable.h"
#include "sample_event.h"
#include "kernel/sampler.h"
#include "sym/loctab.h"
#include "sym/symbolizer.h"
#include "sym/symfile.h"
#include "proc/targetfile.h"
#include "unwind/unwind.h"
#include "util/clock.h"

#define DRAIN_BUDGETS 10	/* sampler__drain's, 100 ms each */

struct capture {
	struct capture_opts o;
	struct sampler *sampler;
	struct proctable *procs;
	struct ksymbolizer *ks;
	struct symbolizer *sym;
	struct ctxwatch *cw;
	struct proccfg *cfg;		/* what BPF does per process */
	struct labels_stats labels;	/* since the start */
	struct codemap_stats code;	/* since the start */
	struct unwinder *uw;
	struct resolver *res;
	struct stacktab *stacks;	/* frames sent once, by id */
	struct loctab *lt;		/* the current window's frames */
	struct pprofwin *pw;		/* the current window's pprof */
	struct sample_consumer consumers[CAPTURE_MAX_CONSUMERS];
	size_t nconsumers;
	int ncpus;
	int next_due_ms;		/* next context discovery, -1: none */
	bool dropping;
	/* since the start */
	uint64_t records, samples;
	uint64_t ring_bytes;		/* ring-buffer space of the records */
	struct capture_stats mem_total;	/* its mem_* counts */
	/* this window */
	struct capture_stats win;
	uint64_t win_value;		/* sum of the samples' periods */
	int64_t win_real_ns;
	uint64_t win_mono_ns;
	struct tp_stats *last;		/* per-CPU counters at window start */
	struct capture_cpu cpu;		/* this window's, if account_cpu */
};

static struct pprofwin *new_pprofwin(const struct capture *c)
{
	struct pprofwin_opts po = {
		.sample_type = c->o.event.sample_type,
		.sample_unit = c->o.event.sample_unit,
		.period = c->o.period,
		.service_label = c->o.service_label,
		.timeline = c->o.timeline,
		.memory = c->o.event.memory,
		.weight = c->o.event.mem_hw,
	};

	if (!po.period && c->o.event.software_clock && c->o.freq)
		po.period = 1000000000ll / c->o.freq;
	return pprofwin__new(&po);
}

static void count_data_object(struct capture *c, enum data_object_kind how)
{
	switch (how) {
	case DATA_OBJECT_SYMBOL:
		c->win.mem_symbol++;
		c->mem_total.mem_symbol++;
		break;
	case DATA_OBJECT_MAPPING:
		c->win.mem_mapping++;
		c->mem_total.mem_mapping++;
		break;
	case DATA_OBJECT_NONE:
		c->win.mem_unnamed++;
		c->mem_total.mem_unnamed++;
		break;
	}
}

/* A checked sample: resolved and handed to every consumer, unless the
 * agent is over its memory limit. */
static void on_sample(struct capture *c, const struct raw_sample *rs)
{
	const struct resolved_sample *s;

	if (c->dropping) {
		c->win.dropped++;
		return;
	}
	s = resolver__sample(c->res, rs);
	if (s->mem)
		count_data_object(c, resolver__data_kind(c->res));
	for (size_t i = 0; i < c->nconsumers; i++)
		c->consumers[i].sample(c->consumers[i].ctx, s);
	c->samples++;
	c->win.samples++;
	c->win_value += s->period;
}

/* Ring-buffer callback. */
static int on_record(void *ctx, const void *data, size_t size)
{
	struct capture *c = ctx;
	const struct tp_task_event *t = data;
	struct raw_sample rs;
	enum record_kind kind = records__parse(data, size, &rs);

	c->records++;
	/* Each record takes an 8-byte header and is padded to 8 bytes. */
	c->ring_bytes += 8 + ((size + 7) & ~(size_t)7);
	switch (kind) {
	case RECORD_SAMPLE:
		/* Before anything may drop the sample: a stack sent whole
		 * is remembered whatever becomes of its first sample. */
		if (!stacktab__resolve(c->stacks, &rs)) {
			c->win.unknown_stack++;
			break;
		}
		on_sample(c, &rs);
		break;
	case RECORD_EXEC:
	case RECORD_EXIT:
		proctable__forget(c->procs, t->pid);
		unwinder__forget(c->uw, t->pid);
		if (kind == RECORD_EXEC)
			ctxwatch__on_exec(c->cw, t->pid);
		else
			ctxwatch__on_exit(c->cw, t->pid, t->start_ns);
		break;
	case RECORD_MALFORMED:
		c->win.malformed++;
	}
	proccfg__apply_marks(c->cfg, c->uw);
	return 0;
}

/* The stack table's bound: a share of the agent's memory bound, like the
 * caches' budgets; record's own default when it has none. */
static size_t stack_bytes(uint64_t max_memory)
{
	return max_memory ? max_memory / 8 : 0;
}

static int setup(struct capture *c, const struct capture_opts *o)
{
	struct sample_consumer pc;
	char err[256];

	c->o = *o;
	/* Large blocks (perf maps, symbol tables, the window) always from
	 * mmap, so freeing them gives the memory back: glibc otherwise raises
	 * this threshold as big blocks are freed and serves them from the
	 * heap, where freed room stays in the process. */
	mallopt(M_MMAP_THRESHOLD, 256 << 10);
	/* Setting that threshold also pins the one for giving back the top
	 * of the heap at its 128 KiB default: a window's smaller blocks,
	 * freed at its end, then went back every time and were faulted in
	 * again by the next (about 15 us a page here; a third of a 19 Hz
	 * agent's faults). Up to HEAP_KEEP_BYTES stays; the agent gives back
	 * more at a window's end (trim_heap). */
	mallopt(M_TRIM_THRESHOLD, HEAP_KEEP_BYTES);
	c->ks = ksymbolizer__new(!getenv("TAGPROF_KALLSYMS"));
	c->procs = proctable__new();
	if (c->procs)
		proctable__set_memory(c->procs, o->max_memory);
	/* A memory-access event names data addresses: every mapping and
	 * the binaries' variables are kept, which no other profile needs. */
	if (c->procs && o->event.memory) {
		proctable__set_data_maps(c->procs, true);
		elfsym__set_data_objects(true);
	}
	if (c->procs &&
	    symcache__set_debuginfod(proctable__symcache(c->procs),
				     o->debuginfod_urls, err, sizeof(err)))
		/* Symbols are still read from the host: go on without. */
		fprintf(stderr, "tagprof: debuginfod: %s; debug files are not "
			"fetched\n", err);
	c->lt = loctab__new();
	c->sym = c->ks && c->lt ? symbolizer__new(c->procs, c->ks, c->lt) :
		 NULL;
	c->pw = new_pprofwin(c);
	c->cfg = proccfg__new(&o->filters);
	c->cw = c->cfg ? ctxwatch__new(proccfg__set_context, c->cfg) : NULL;
	c->uw = unwinder__new(c->procs, o->unwind);
	c->stacks = stacktab__new(stack_bytes(o->max_memory));
	if (!c->procs || !c->sym || !c->pw || !c->cw || !c->uw || !c->stacks)
		return -ENOMEM;
	c->res = resolver__new(&(struct resolver_parts){
		.procs = c->procs, .cw = c->cw, .labels = &c->labels, .code = &c->code, .uw = c->uw, .sym = c->sym,
		.lt = c->lt, .service_label = o->service_label });
	if (!c->res)
		return -ENOMEM;
	pc = pprofwin__consumer(c->pw);
	return capture__add_consumer(c, &pc);
}

static bool env_is_zero(const char *name)
{
	const char *v = getenv(name);

	return v && !strcmp(v, "0");
}

static struct sampler *start_sampler(struct capture *c, char *err,
				     size_t errlen)
{
	struct sampler_opts so = { 0 };

	so.event = c->o.event;
	so.use_period = c->o.period != 0;
	so.freq = c->o.freq;
	so.period = c->o.period;
	so.pids = c->o.pids;
	so.npids = c->o.npids;
	so.follow_children = c->o.follow_children;
	so.cgroup = c->o.cgroup;
	so.include_idle = c->o.idle;
	so.filter_label = c->o.filters.label_key != NULL;
	so.filter_tag = c->o.filters.tag_field != NULL;
	so.unwind_mode = c->o.unwind;
	so.stack_bytes = c->o.stack_bytes;
	/* A reader that sleeps for a tick needs slack beyond it; the
	 * agent's sleeps longer while its processes run on: twice that long,
	 * so that a quarter of the ring (which wakes it) fills in about as
	 * long as the settled wait, records being about half the size the
	 * ring is sized for (src/kernel/sampler.c). */
	so.ring_seconds = !c->o.tick_ms ? 1 :
			  c->o.settled_wait_ms > 2000 ?
			  2 * c->o.settled_wait_ms / 1000 : 4;
	so.settled_wait_ms = c->o.settled_wait_ms;
	/* Parts of the BPF side that tests and benchmarks switch off, to
	 * compare: TAGPROF_STACK_IDS=0 sends every stack whole,
	 * TAGPROF_BPF_WALK=0 leaves the user walk to bpf_get_stack. */
	so.stack_ids = !env_is_zero("TAGPROF_STACK_IDS");
	so.fp_walk = !env_is_zero("TAGPROF_BPF_WALK");
	so.verbose = c->o.verbose;
	return sampler__start(&so, on_record, c, err, errlen);
}

struct capture *capture__start(const struct capture_opts *o, char *err,
			       size_t errlen)
{
	struct capture *c = calloc(1, sizeof(*c));

	if (!c || setup(c, o)) {
		snprintf(err, errlen, "out of memory");
		capture__free(c);
		return NULL;
	}
	c->sampler = start_sampler(c, err, errlen);
	if (!c->sampler) {
		capture__free(c);
		return NULL;
	}
	c->ncpus = sampler__ncpus(c->sampler);
	c->last = calloc(c->ncpus, sizeof(*c->last));
	if (!c->last) {
		snprintf(err, errlen, "out of memory");
		capture__free(c);
		return NULL;
	}
	proccfg__attach(c->cfg, c->sampler);
	unwinder__set_verbose(c->uw, o->verbose);
	/* The in-kernel --label/--tag filters drop samples of processes they
	 * have no settings for: configure every running process up front. */
	if (o->filters.label_key || o->filters.tag_field)
		ctxwatch__scan_all(c->cw);
	c->win_real_ns = clock__ns(CLOCK_REALTIME);
	c->win_mono_ns = clock__ns(CLOCK_MONOTONIC);
	c->next_due_ms = -1;
	return c;
}

void capture__prepare_drop(struct capture *c)
{
	ksymbolizer__prepare(c->ks);
}

bool capture__bpf_works(void *ctx)
{
	struct capture *c = ctx;

	return sampler__maps_work(c->sampler) && ksymbolizer__works(c->ks);
}

/* Keeps the stack table within its bound: a new generation, which the BPF
 * side starts using at once. */
static void roll_stacks(struct capture *c)
{
	uint32_t gen;

	if (stacktab__roll(c->stacks, clock__mono_ns(), &gen))
		sampler__set_stack_gen(c->sampler, gen);
}

/* What follows each wait: stack generations, due discoveries, names of
 * frames whose debug files came. */
static void tick(struct capture *c)
{
	roll_stacks(c);
	c->next_due_ms = ctxwatch__tick(c->cw);
	ctxwatch__code_tick(c->cw, &c->code);
	symbolizer__name_late(c->sym);
}

void capture__poll(struct capture *c, int timeout_ms, int wake_fd)
{
	int due = c->next_due_ms;
	uint64_t t0, t1, t2, t3;

	/* Few samples wake the reader: a discovery due sooner than the
	 * timeout shortens the wait, so it happens on time, or at the next
	 * tick: discoveries due in the meantime run together. */
	if (due >= 0 && due < c->o.tick_ms)
		due = c->o.tick_ms;
	if (due >= 0 && due < timeout_ms)
		timeout_ms = due;
	if (!c->o.account_cpu) {
		sampler__poll(c->sampler, timeout_ms, wake_fd);
		tick(c);
		return;
	}
	t0 = clock__ns(CLOCK_THREAD_CPUTIME_ID);
	sampler__wait(c->sampler, timeout_ms, wake_fd);
	t1 = clock__ns(CLOCK_THREAD_CPUTIME_ID);
	sampler__consume(c->sampler);
	t2 = clock__ns(CLOCK_THREAD_CPUTIME_ID);
	tick(c);
	t3 = clock__ns(CLOCK_THREAD_CPUTIME_ID);
	c->cpu.wait_ns += t1 - t0;
	c->cpu.read_ns += t2 - t1;
	c->cpu.tick_ns += t3 - t2;
	c->cpu.wakeups++;
}

struct capture_cpu capture__take_cpu(struct capture *c)
{
	struct capture_cpu cpu = c->cpu;

	c->cpu = (struct capture_cpu){ 0 };
	return cpu;
}

void capture__stop(struct capture *c)
{
	sampler__stop(c->sampler);
	symbolizer__name_late(c->sym);	/* the summary counts them */
}

/* ---- the window's comments and the end-of-run summary ---- */

/* Where the comments and the summary read each group's counters; tp and
 * cs: the window's or the totals. */
static struct counter_values values_of(const struct capture *c,
				       const struct tp_stats *tp,
				       const struct capture_stats *cs)
{
	const struct proctable_stats *ps = proctable__stats(c->procs);

	return (struct counter_values){ .group = {
		[CG_TP] = tp,
		[CG_CAPTURE] = cs,
		[CG_PROCTABLE] = ps,
		[CG_DEBUGINFO] = &ps->sym,
		[CG_SYMBOLIZER] = symbolizer__stats(c->sym),
		[CG_KSYMBOLIZER] = ksymbolizer__stats(c->ks),
		[CG_TARGETFILE] = targetfile__stats(),
		[CG_CTXWATCH] = ctxwatch__stats(c->cw),
		[CG_LABELS] = &c->labels,
		[CG_UNWIND] = unwinder__stats(c->uw),
		[CG_CODEMAP] = &c->code,
	} };
}

static struct comments_in comments_in(const struct capture *c,
				      const struct tp_stats *tp,
				      const struct capture_stats *cs)
{
	return (struct comments_in){
		.v = values_of(c, tp, cs),
		.event = c->o.event.name,
		.freq = c->o.freq,
		.period = c->o.period,
		.unwind = c->o.unwind,
		.ksym_source = ksymbolizer__source(c->ks),
		.code_levels = ctxwatch__code_levels(c->cw),
		.filters = &c->o.filters,
		.memory = c->o.event.memory,
		.ldlat = c->o.event.ldlat,
	};
}

static void add_comment(void *pp, const char *line)
{
	pprof__add_comment(pp, line);
}

uint64_t capture__perfmaps_unread(const struct capture *c, char *buf,
				  size_t len)
{
	struct counter_values v = values_of(c, NULL, NULL);

	return comments__perfmaps_unread(&v, buf, len);
}

uint64_t capture__ctx_refusals(const struct capture *c, char *buf, size_t len)
{
	struct counter_values v = values_of(c, NULL, NULL);

	return comments__ctx_refusals(&v, buf, len);
}

void capture__print_summary(struct capture *c, uint64_t duration_ns)
{
	struct capture_stats total = c->mem_total;
	struct comments_in in;
	struct tp_stats st;
	char shares[COMMENTS_SHARES_LEN];

	total.samples = c->samples;
	sampler__stats(c->sampler, &st, NULL);
	in = comments_in(c, &st, &total);
	ctxwatch__code_shares(c->cw, false, shares, sizeof(shares));
	in.code_shares = shares;
	in.duration_ns = duration_ns;
	in.ring_bytes = c->ring_bytes;
	comments__summary(&in, stderr);
}

/* ---- the window ---- */

/* This window's BPF counters: now minus what they were at its start. */
static void window_stats(struct capture *c, struct tp_stats *sum,
			 struct tp_stats *per_cpu)
{
	struct tp_stats total;
	const __u64 *old;
	__u64 *cur;

	sampler__stats(c->sampler, &total, per_cpu);
	memset(sum, 0, sizeof(*sum));
	for (int i = 0; i < c->ncpus; i++) {
		cur = (__u64 *)&per_cpu[i];
		old = (const __u64 *)&c->last[i];
		for (size_t f = 0; f < sizeof(*sum) / sizeof(__u64); f++) {
			cur[f] -= old[f];
			((__u64 *)sum)[f] += cur[f];
		}
	}
}

/* Tells every consumer the window ends, then forgets its frames. */
static void close_window(struct capture *c, const struct window_end *e)
{
	for (size_t i = 0; i < c->nconsumers; i++)
		c->consumers[i].window_close(c->consumers[i].ctx, e);
	loctab__reset(c->lt);
}

void capture__drain(struct capture *c)
{
	sampler__drain(c->sampler, DRAIN_BUDGETS);
}

struct pprof *capture__take(struct capture *c)
{
	struct tp_stats sum, *cpu = calloc(c->ncpus, sizeof(*cpu));
	uint64_t now = clock__ns(CLOCK_MONOTONIC);
	struct comments_in in;
	struct pprof *pp;
	char shares[COMMENTS_SHARES_LEN];

	if (!cpu || pprofwin__prepare(c->pw)) {
		free(cpu);
		return NULL;
	}
	/* Debug files fetched since the last poll name this window too. */
	symbolizer__name_late(c->sym);
	window_stats(c, &sum, cpu);
	in = comments_in(c, &sum, &c->win);
	in.per_cpu = cpu;
	in.ncpus = c->ncpus;
	in.duration_ns = now - c->win_mono_ns;
	ctxwatch__code_shares(c->cw, true, shares, sizeof(shares));
	in.code_shares = shares;
	comments__window(&in, add_comment, pprofwin__pprof(c->pw));
	close_window(c, &(struct window_end){
		.start_real_ns = c->win_real_ns,
		.start_mono_ns = c->win_mono_ns,
		.duration_ns = now - c->win_mono_ns,
		.samples = c->win.samples, .value = c->win_value,
		.dropped = c->win.dropped, .lost = sum.lost,
		.malformed = c->win.malformed,
		.unknown_stack = c->win.unknown_stack, .lt = c->lt });
	pp = pprofwin__take(c->pw);	/* prepared: not NULL */
	/* per-CPU counters are cumulative: remember where this window ended */
	for (int i = 0; i < c->ncpus; i++) {
		__u64 *l = (__u64 *)&c->last[i];
		const __u64 *d = (const __u64 *)&cpu[i];

		for (size_t f = 0; f < sizeof(*cpu) / sizeof(__u64); f++)
			l[f] += d[f];
	}
	free(cpu);
	c->win = (struct capture_stats){ 0 };
	c->win_value = 0;
	c->win_real_ns = clock__ns(CLOCK_REALTIME);
	c->win_mono_ns = now;
	return pp;
}

int capture__add_consumer(struct capture *c, const struct sample_consumer *sc)
{
	if (c->nconsumers == CAPTURE_MAX_CONSUMERS)
		return -ENOSPC;
	c->consumers[c->nconsumers++] = *sc;
	return 0;
}

void capture__set_dropping(struct capture *c, bool drop)
{
	c->dropping = drop;
}

void capture__sweep(struct capture *c)
{
	unwinder__sweep(c->uw);
	proctable__sweep(c->procs);
	ctxwatch__sweep(c->cw);
	proccfg__apply_marks(c->cfg, c->uw);
	proccfg__sweep(c->cfg);
}

uint64_t capture__window_samples(const struct capture *c)
{
	return c->win.samples;
}

uint64_t capture__total_samples(const struct capture *c)
{
	return c->samples;
}

uint64_t capture__total_lost(struct capture *c)
{
	struct tp_stats st;

	sampler__stats(c->sampler, &st, NULL);
	return st.lost;
}

size_t capture__processes(const struct capture *c)
{
	return proctable__count(c->procs);
}

void capture__describe_caches(struct capture *c, char *buf, size_t len)
{
	struct symcache *sc = proctable__symcache(c->procs);
	uint64_t unused_bytes = 0;
	size_t unused = symcache__unused(sc, &unused_bytes);
	const struct proctable_stats *ps = proctable__stats(c->procs);
	size_t bins, bin_bytes, answers;
	struct cfiload_usage cu;

	proccfg__cfi_usage(c->cfg, &cu);
	unwinder__bins_usage(c->uw, &bins, &bin_bytes, &answers);
	snprintf(buf, len, "%zu processes; symbol files: %zu held, %zu unused "
		 "(%" PRIu64 " KiB of symbols), %" PRIu64 " KiB of DWARF; "
		 "perf maps %" PRIu64 " KiB, jitdumps %" PRIu64 " KiB; "
		 "unwinder: %zu binaries (%zu KiB of images), %zu answers; "
		 "stack table: %zu KiB; kernel CFI: %zu tables (%zu unused, "
		 "%" PRIu64 " dropped unused for a minute), "
		 "%" PRIu64 " rows in use, top at %" PRIu64 " (%" PRIu64
		 " KiB mapped)",
		 proctable__count(c->procs), symcache__count(sc), unused,
		 unused_bytes >> 10, symcache__dwarf_bytes(sc) >> 10,
		 ps->perfmap_bytes >> 10, ps->jitdump_bytes >> 10, bins,
		 bin_bytes >> 10, answers,
		 stacktab__bytes(c->stacks) >> 10, cu.tables, cu.unused,
		 cu.swept, cu.rows, cu.rows_top, cu.mapped >> 10);
}

void capture__free(struct capture *c)
{
	if (!c)
		return;
	sampler__free(c->sampler);	/* before the tables its callback uses */
	ctxwatch__free(c->cw);
	resolver__free(c->res);
	stacktab__free(c->stacks);
	unwinder__free(c->uw);
	proccfg__free(c->cfg);
	pprofwin__free(c->pw);
	symbolizer__free(c->sym);
	loctab__free(c->lt);
	proctable__free(c->procs);
	ksymbolizer__free(c->ks);
	free(c->last);
	free(c);
}
