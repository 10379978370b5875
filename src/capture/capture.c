// SPDX-License-Identifier: BSD-2-Clause
/* The sampling pipeline: ring-buffer records in (records.h), resolved
 * (resolver.h), handed to the consumers (sample.h), the pprof window
 * (out/pprofwin.h) among them, which give one pprof per window out. Here:
 * the wiring, the window, and the window's comments and the summary. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/capture.h"
#include "capture/labels.h"
#include "capture/proccfg.h"
#include "capture/records.h"
#include "capture/resolver.h"
#include "unwind/elfimage.h"
#include "kernel/ksymbolizer.h"
#include "proc/pbcheck.h"
#include "out/pprof.h"
#include "out/pprofwin.h"
#include "proc/ctxwatch.h"
#include "proc/proctable.h"
#include "sample_event.h"
#include "kernel/sampler.h"
#include "sym/loctab.h"
#include "sym/symbolizer.h"
#include "proc/targetfile.h"
#include "unwind/mode.h"
#include "unwind/unwind.h"
#include "util/clock.h"

struct capture {
	struct capture_opts o;
	struct sampler *sampler;
	struct proctable *procs;
	struct ksymbolizer *ks;
	struct symbolizer *sym;
	struct ctxwatch *cw;
	struct proccfg *cfg;		/* what BPF does per process */
	struct labels_stats labels;	/* since the start */
	struct unwinder *uw;
	struct resolver *res;
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
	/* this window */
	uint64_t win_samples, win_bad, win_dropped;
	uint64_t win_value;		/* sum of the samples' periods */
	int64_t win_real_ns;
	uint64_t win_mono_ns;
	struct tp_stats *last;		/* per-CPU counters at window start */
};

static struct pprofwin *new_pprofwin(const struct capture *c)
{
	struct pprofwin_opts po = {
		.sample_type = c->o.event.sample_type,
		.sample_unit = c->o.event.sample_unit,
		.period = c->o.period,
		.service_label = c->o.service_label,
	};

	if (!po.period && c->o.event.software_clock && c->o.freq)
		po.period = 1000000000ll / c->o.freq;
	return pprofwin__new(&po);
}

/* A checked sample: resolved and handed to every consumer, unless the
 * agent is over its memory limit. */
static void on_sample(struct capture *c, const struct raw_sample *rs)
{
	const struct resolved_sample *s;

	if (c->dropping) {
		c->win_dropped++;
		return;
	}
	s = resolver__sample(c->res, rs);
	for (size_t i = 0; i < c->nconsumers; i++)
		c->consumers[i].sample(c->consumers[i].ctx, s);
	c->samples++;
	c->win_samples++;
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
		on_sample(c, &rs);
		break;
	case RECORD_EXEC:
	case RECORD_EXIT:
		proctable__forget(c->procs, t->pid);
		unwinder__forget(c->uw, t->pid);
		if (kind == RECORD_EXEC)
			ctxwatch__on_exec(c->cw, t->pid);
		else
			ctxwatch__on_exit(c->cw, t->pid);
		break;
	case RECORD_MALFORMED:
		c->win_bad++;
	}
	proccfg__apply_marks(c->cfg, c->uw);
	return 0;
}

static int setup(struct capture *c, const struct capture_opts *o)
{
	struct sample_consumer pc;

	c->o = *o;
	/* Large blocks (perf maps, symbol tables, the window) always from
	 * mmap, so freeing them gives the memory back: glibc otherwise raises
	 * this threshold as big blocks are freed and serves them from the
	 * heap, where freed room stays in the process. */
	mallopt(M_MMAP_THRESHOLD, 256 << 10);
	c->ks = ksymbolizer__new(!getenv("TAGPROF_KALLSYMS"));
	c->procs = proctable__new();
	if (c->procs)
		proctable__set_memory(c->procs, o->max_memory);
	c->lt = loctab__new();
	c->sym = c->ks && c->lt ? symbolizer__new(c->procs, c->ks, c->lt) :
		 NULL;
	c->pw = new_pprofwin(c);
	c->cfg = proccfg__new(&o->filters);
	c->cw = c->cfg ? ctxwatch__new(proccfg__set_context, c->cfg) : NULL;
	c->uw = unwinder__new(c->procs, o->unwind);
	if (!c->procs || !c->sym || !c->pw || !c->cw || !c->uw)
		return -ENOMEM;
	c->res = resolver__new(&(struct resolver_parts){
		.procs = c->procs, .cw = c->cw, .labels = &c->labels, .uw = c->uw, .sym = c->sym,
		.lt = c->lt, .service_label = o->service_label });
	if (!c->res)
		return -ENOMEM;
	pc = pprofwin__consumer(c->pw);
	return capture__add_consumer(c, &pc);
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

void capture__poll(struct capture *c, int timeout_ms)
{
	/* Samples do not wake the reader: a discovery due sooner than the
	 * timeout shortens the wait, so it happens on time. */
	if (c->next_due_ms >= 0 && c->next_due_ms < timeout_ms)
		timeout_ms = c->next_due_ms;
	sampler__poll(c->sampler, timeout_ms);
	c->next_due_ms = ctxwatch__tick(c->cw);
}

void capture__stop(struct capture *c)
{
	sampler__stop(c->sampler);
}

/* ---- the window's comments and the end-of-run summary ---- */

static void comment(struct pprof *pp, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void comment(struct pprof *pp, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pprof__add_comment(pp, buf);
}

/* How user stacks were walked: this window's BPF counts, and the
 * agent's since the start. */
static void add_unwind_comment(struct capture *c, struct pprof *pp,
			       const struct tp_stats *st)
{
	const struct unwind_stats *us = unwinder__stats(c->uw);

	comment(pp, "unwind %s: %llu samples with a stack copy (%llu auto "
		"probes, %llu cut short by the stack's end), %llu copies "
		"failed; since start: %" PRIu64 " stacks from CFI, %" PRIu64
		" CFI unwinds by cached rules (%" PRIu64 " differing from "
		"libdwfl), %" PRIu64
		" copies CFI could not unwind, %" PRIu64 " where frame "
		"pointers went deeper, %" PRIu64 " frameless leaf callers "
		"recovered, %" PRIu64 " processes marked for CFI (%" PRIu64
		" unmarked)", unwind_mode__name(c->o.unwind),
		(unsigned long long)st->ustack_copied,
		(unsigned long long)st->ustack_probes,
		(unsigned long long)st->ustack_short,
		(unsigned long long)st->ustack_failed, us->cfi_used,
		us->cfi_rules, us->cfi_rules_differ, us->cfi_failed,
		us->fp_longer, us->leaf_recovered, us->marked,
		us->unmarked);
}

/* How the files that processes named were opened, and what was refused
 * (targetfile.h): an attack on the agent shows here. */
static void targetfile_comment(struct capture *c, struct pprof *pp)
{
	const struct targetfile_stats *fs = targetfile__stats();
	const struct unwind_stats *us = unwinder__stats(c->uw);
	const struct proctable_stats *ps = proctable__stats(c->procs);

	comment(pp, "target files since start: %" PRIu64 " opened (%" PRIu64
		" through /proc/PID/map_files, %" PRIu64 " times not "
		"permitted); refused: %" PRIu64 " symbolic links, %" PRIu64
		" not regular files (FIFO, device, socket), %" PRIu64
		" not the mapped file, %" PRIu64 " DWARF naming another file; "
		"%" PRIu64 " files with symbol tables over the memory budget; "
		"CFI: %" PRIu64 " binaries over %u MiB, %" PRIu64 " cache "
		"resets", fs->opened, fs->by_map_files, fs->map_files_denied,
		fs->symlink, fs->not_regular, fs->replaced,
		ps->sym.dwarf_external, ps->sym.symbols_over_budget,
		us->cfi_too_big, ELFIMAGE_CFI_MAX >> 20, us->bins_reset);
}

/* Every way this window lost or degraded data, counted. */
static void add_comments(struct capture *c, struct pprof *pp,
			 const struct tp_stats *st, const struct tp_stats *cpu)
{
	const struct symbolizer_stats *ss = symbolizer__stats(c->sym);
	const struct proctable_stats *ps = proctable__stats(c->procs);
	const struct ctxwatch_stats *ts = ctxwatch__stats(c->cw);
	const struct ksymbolizer_stats *ks = ksymbolizer__stats(c->ks);
	char refused[160];

	comment(pp, "tagprof " TAGPROF_VERSION);
	comment(pp, "event: %s", c->o.event.name);
	comment(pp, "samples: %" PRIu64 " received, %llu lost (ring buffer "
		"full), %" PRIu64 " malformed, %" PRIu64 " dropped over the "
		"memory limit", c->win_samples, (unsigned long long)st->lost,
		c->win_bad, c->win_dropped);
	for (int i = 0; i < c->ncpus; i++)
		if (cpu[i].lost)
			comment(pp, "lost on cpu %d: %llu", i,
				(unsigned long long)cpu[i].lost);
	comment(pp, "frames since start: %" PRIu64 " user (%" PRIu64
		" unmapped, %" PRIu64 " without symbol), %" PRIu64 " kernel (%"
		PRIu64 " without symbol; names from %s, %" PRIu64 " addresses "
		"asked, %" PRIu64 " BPF lookup failures)", ss->user_frames,
		ss->unmapped, ss->no_symbol, ss->kernel_frames,
		ss->kernel_no_symbol, ksymbolizer__source(c->ks), ks->lookups,
		ks->bpf_failed);
	comment(pp, "processes since start: %" PRIu64 " seen, %" PRIu64
		" maps unreadable, %" PRIu64 " maps kept in part over the "
		"memory budget (%" PRIu64 " KiB in all), %" PRIu64 " pid "
		"reused, %" PRIu64 " binaries unreadable; %llu user threads "
		"without user stack, %llu exec/exit events lost",
		ps->procs_seen, ps->maps_failed, ps->maps_over_budget,
		ps->maps_budget >> 10, ps->pid_reused, ps->elf_failed,
		(unsigned long long)st->no_user_stack,
		(unsigned long long)st->task_lost);
	comment(pp, "symbols since start: %" PRIu64 " locations with file:line"
		" (%" PRIu64 " inlined lines); %" PRIu64 " binaries corrupt, %"
		PRIu64 " build ID mismatch (replaced on disk), %" PRIu64
		" locations in them unsymbolized; JIT perf maps: %" PRIu64
		" read, %" PRIu64 " locations named, %" PRIu64 " anonymous "
		"unnamed, %" PRIu64 " garbage lines skipped, %" PRIu64
		" over the size limit, %" PRIu64 " refused (not a regular "
		"file, a link, another user's), %" PRIu64 " not read over the "
		"memory budget (%" PRIu64 " KiB a process, %" PRIu64 " KiB in "
		"all, %" PRIu64 " KiB held)", ss->with_lines,
		ss->inlined, ps->elf_corrupt, ps->build_id_mismatch,
		ss->untrusted, ps->perfmaps_read, ss->jit_named,
		ss->anon_unnamed, ps->perfmap_bad_lines, ps->perfmap_truncated,
		ps->perfmap_refused, ps->perfmap_over_budget,
		ps->perfmap_proc_budget >> 10, ps->perfmaps_budget >> 10,
		ps->perfmap_bytes >> 10);
	comment(pp, "debug info since start: %" PRIu64 " debug files by build "
		"ID, %" PRIu64 " by debuglink, %" PRIu64 " stripped binaries "
		"without; refused: %" PRIu64 " CRC mismatch, %" PRIu64
		" build ID mismatch, %" PRIu64 " unreadable or truncated; DWARF: %"
		PRIu64 " opened, %" PRIu64 " errors, %" PRIu64 " over the memory "
		"budget, %" PRIu64 " changed on disk", ps->sym.debug_by_build_id,
		ps->sym.debug_by_link, ps->sym.debug_missing,
		ps->sym.debug_crc_mismatch, ps->sym.debug_build_id_mismatch,
		ps->sym.debug_bad, ps->sym.dwarf_opened, ps->sym.dwarf_errors,
		ps->sym.dwarf_too_big, ps->sym.dwarf_changed);
	targetfile_comment(c, pp);
	comment(pp, "thread context: %llu samples with context, %" PRIu64
		" processes with context; failures: %llu TLS page not "
		"readable, %llu record unreadable, %llu invalid record, %llu "
		"oversize record, %llu torn record, %" PRIu64 " unknown key, %"
		PRIu64 " invalid UTF-8 replaced, %" PRIu64 " truncated, %"
		PRIu64 " location unresolved, %" PRIu64 " processes with a "
		"thread-context schema other than OTEP 4947's (not read); "
		"%llu samples dropped by --label",
		(unsigned long long)st->ctx_read, ts->procs_found,
		(unsigned long long)st->ctx_tls_unreadable,
		(unsigned long long)st->ctx_record_unreadable,
		(unsigned long long)st->ctx_invalid,
		(unsigned long long)st->ctx_oversize,
		(unsigned long long)st->ctx_torn, c->labels.unknown_key,
		c->labels.bad_utf8, c->labels.truncated, ts->locate_failed, ts->schema_unknown,
		(unsigned long long)st->label_filtered);
	capture__ctx_refusals(c, refused, sizeof(refused));
	comment(pp, "process context since start: %s", refused);
	comment(pp, "register tags: %llu samples with a tag, %" PRIu64
		" processes declared tags; %llu saved registers unreadable, %"
		PRIu64 " field values without a name; %llu samples dropped by "
		"--tag", (unsigned long long)st->tag_read, ts->tag_procs,
		(unsigned long long)st->tag_unreadable, c->labels.tag_unnamed,
		(unsigned long long)st->tag_filtered);
	add_unwind_comment(c, pp, st);
}

uint64_t capture__perfmaps_unread(const struct capture *c, char *buf,
				  size_t len)
{
	const struct proctable_stats *ps = proctable__stats(c->procs);

	snprintf(buf, len, "%" PRIu64 " not read over the memory budget (%"
		 PRIu64 " KiB a process, %" PRIu64 " KiB in all, shares of "
		 "the memory limit), %" PRIu64 " refused; those processes' "
		 "JIT frames are unnamed", ps->perfmap_over_budget,
		 ps->perfmap_proc_budget >> 10, ps->perfmaps_budget >> 10,
		 ps->perfmap_refused);
	return ps->perfmap_over_budget + ps->perfmap_refused;
}

uint64_t capture__ctx_refusals(const struct capture *c, char *buf, size_t len)
{
	const struct ctxwatch_stats *ts = ctxwatch__stats(c->cw);

	snprintf(buf, len, "%" PRIu64 " payloads refused unread (AnyValues "
		 "nested over %d deep or over %d fields), %" PRIu64
		 " decoded as neither a ProcessContext nor a Resource",
		 ts->ctx_refused, PBCHECK_MAX_ANY_DEPTH, PBCHECK_MAX_FIELDS,
		 ts->ctx_malformed);
	return ts->ctx_refused + ts->ctx_malformed;
}

void capture__print_summary(struct capture *c, uint64_t duration_ns)
{
	const struct ctxwatch_stats *ts = ctxwatch__stats(c->cw);
	unsigned long long fails;
	char refused[256];
	struct tp_stats st;

	sampler__stats(c->sampler, &st, NULL);
	fprintf(stderr,
		"tagprof: %.1f s, event %s, %" PRIu64 " samples, %llu lost, "
		"%" PRIu64 " processes\n", duration_ns / 1e9, c->o.event.name,
		c->samples, (unsigned long long)st.lost,
		proctable__stats(c->procs)->procs_seen);
	if (st.lost)
		fprintf(stderr, "tagprof: warning: %llu samples were lost "
			"because the ring buffer was full (see the profile's "
			"comments for the CPUs)\n", (unsigned long long)st.lost);
	if (!c->samples)
		fprintf(stderr, "tagprof: warning: no samples were collected\n");
	if (capture__perfmaps_unread(c, refused, sizeof(refused)))
		fprintf(stderr, "tagprof: JIT perf maps: %s\n", refused);
	fails = st.ctx_tls_unreadable + st.ctx_record_unreadable +
		st.ctx_invalid + st.ctx_oversize + st.ctx_torn;
	if (st.ctx_read || fails || ts->procs_found || ts->schema_unknown)
		fprintf(stderr, "tagprof: thread context: %llu samples "
			"labelled, %" PRIu64 " processes; %llu TLS unreadable, "
			"%llu record unreadable, %llu invalid, %llu oversize, "
			"%llu torn, %" PRIu64 " unknown key, %" PRIu64
			" unknown schema\n",
			(unsigned long long)st.ctx_read, ts->procs_found,
			(unsigned long long)st.ctx_tls_unreadable,
			(unsigned long long)st.ctx_record_unreadable,
			(unsigned long long)st.ctx_invalid,
			(unsigned long long)st.ctx_oversize,
			(unsigned long long)st.ctx_torn, c->labels.unknown_key,
			ts->schema_unknown);
	if (capture__ctx_refusals(c, refused, sizeof(refused)))
		fprintf(stderr, "tagprof: process context: %s\n", refused);
	if (c->o.filters.label_key)
		fprintf(stderr, "tagprof: --label %s=%s dropped %llu samples\n",
			c->o.filters.label_key, c->o.filters.label_val,
			(unsigned long long)st.label_filtered);
	if (st.tag_read || ts->tag_procs)
		fprintf(stderr, "tagprof: register tags: %llu samples tagged, %"
			PRIu64 " processes\n", (unsigned long long)st.tag_read,
			ts->tag_procs);
	{
		const struct unwind_stats *us = unwinder__stats(c->uw);

		fprintf(stderr, "tagprof: unwind %s: %llu stack copies (%llu "
			"probes), %" PRIu64 " stacks from CFI (%" PRIu64
			" unwinds by cached rules, %" PRIu64 " differing from "
			"libdwfl), %" PRIu64
			" frameless leaf callers recovered, %" PRIu64
			" processes marked for CFI; %.0f ring-buffer bytes per "
			"sample\n", unwind_mode__name(c->o.unwind),
			(unsigned long long)st.ustack_copied,
			(unsigned long long)st.ustack_probes, us->cfi_used,
			us->cfi_rules, us->cfi_rules_differ,
			us->leaf_recovered, us->marked,
			c->samples ? (double)c->ring_bytes / c->samples : 0.0);
	}
	if (c->o.filters.tag_field)
		fprintf(stderr, "tagprof: --tag %s=%s dropped %llu samples\n",
			c->o.filters.tag_field, c->o.filters.tag_name,
			(unsigned long long)st.tag_filtered);
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

struct pprof *capture__take(struct capture *c)
{
	struct tp_stats sum, *cpu = calloc(c->ncpus, sizeof(*cpu));
	uint64_t now = clock__ns(CLOCK_MONOTONIC);
	struct pprof *pp;

	if (!cpu || pprofwin__prepare(c->pw)) {
		free(cpu);
		return NULL;
	}
	window_stats(c, &sum, cpu);
	add_comments(c, pprofwin__pprof(c->pw), &sum, cpu);
	close_window(c, &(struct window_end){
		.start_real_ns = c->win_real_ns,
		.duration_ns = now - c->win_mono_ns,
		.samples = c->win_samples, .value = c->win_value,
		.dropped = c->win_dropped, .lost = sum.lost,
		.malformed = c->win_bad });
	pp = pprofwin__take(c->pw);	/* prepared: not NULL */
	/* per-CPU counters are cumulative: remember where this window ended */
	for (int i = 0; i < c->ncpus; i++) {
		__u64 *l = (__u64 *)&c->last[i];
		const __u64 *d = (const __u64 *)&cpu[i];

		for (size_t f = 0; f < sizeof(*cpu) / sizeof(__u64); f++)
			l[f] += d[f];
	}
	free(cpu);
	c->win_samples = c->win_bad = c->win_dropped = c->win_value = 0;
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
}

uint64_t capture__window_samples(const struct capture *c)
{
	return c->win_samples;
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

void capture__free(struct capture *c)
{
	if (!c)
		return;
	sampler__free(c->sampler);	/* before the tables its callback uses */
	ctxwatch__free(c->cw);
	resolver__free(c->res);
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
