// SPDX-License-Identifier: BSD-2-Clause
/* The window's comments and the end-of-run summary: which counters each
 * line shows, in what order. What a counter says is in its list. */
#include <inttypes.h>
#include <stdio.h>

#include "capture/capture.h"
#include "capture/comments.h"
#include "capture/labels.h"
#include "capture/proccfg.h"
#include "kernel/ksymbolizer.h"
#include "proc/codemap.h"
#include "proc/ctxwatch.h"
#include "proc/proctable.h"
#include "proc/targetfile.h"
#include "sample_event.h"
#include "sym/debuginfo.h"
#include "sym/symbolizer.h"
#include "unwind/elfimage.h"
#include "unwind/mode.h"
#include "unwind/unwind.h"

_Static_assert(ELFIMAGE_CFI_MAX == 16u << 20,
	       "cfi_too_big's text (unwind.h) names the limit");

/* A line's counters: NAME_refs; the line: NAME. */
#define LINE(name)							\
	static const struct counter_line name = COUNTER_LINE(name##_refs)

/* ---- the window's comments: every counter of every list ---- */

static const struct counter_ref samples_refs[] = {
	COUNTER(CAPTURE, samples),
	COUNTER(TP, lost),
	COUNTER(CAPTURE, malformed),
	COUNTER(CAPTURE, unknown_stack),
	COUNTER(CAPTURE, dropped),
	COUNTER_PART(NULL, TP, samples),
	COUNTER_SUB(TP, stack_seen),
	COUNTER_SUB(TP, kstack_seen),
	COUNTER(TP, filtered),
};
LINE(samples);

static const struct counter_ref frames_refs[] = {
	COUNTER(SYMBOLIZER, user_frames),
	COUNTER_SUB(SYMBOLIZER, unmapped),
	COUNTER_SUB(SYMBOLIZER, no_symbol),
	COUNTER(SYMBOLIZER, kernel_frames),
	COUNTER_SUB(SYMBOLIZER, kernel_no_symbol),
};
LINE(frames);

static const struct counter_ref kernel_names_refs[] = {
	COUNTER(KSYMBOLIZER, lookups),
	COUNTER_SUB(KSYMBOLIZER, unnamed),
	COUNTER(KSYMBOLIZER, bpf_batches),
	COUNTER(KSYMBOLIZER, bpf_failed),
};
LINE(kernel_names);

static const struct counter_ref processes_refs[] = {
	COUNTER(PROCTABLE, procs_seen),
	COUNTER(PROCTABLE, maps_failed),
	COUNTER(PROCTABLE, maps_over_budget),
	COUNTER_SUB(PROCTABLE, maps_budget),
	COUNTER_SUB(PROCTABLE, maps_bytes),
	COUNTER(PROCTABLE, maps_reloads),
	COUNTER(PROCTABLE, pid_reused),
	COUNTER(PROCTABLE, elf_failed),
	COUNTER_PART(NULL, TP, no_user_stack),
	COUNTER(TP, task_lost),
};
LINE(processes);

static const struct counter_ref symbols_refs[] = {
	COUNTER(SYMBOLIZER, with_lines),
	COUNTER_SUB(SYMBOLIZER, inlined),
	COUNTER_PART(NULL, PROCTABLE, elf_corrupt),
	COUNTER(PROCTABLE, build_id_mismatch),
	COUNTER(SYMBOLIZER, untrusted),
	COUNTER_PART("JIT perf maps", PROCTABLE, perfmaps_read),
	COUNTER(SYMBOLIZER, jit_named),
	COUNTER(SYMBOLIZER, anon_unnamed),
	COUNTER(PROCTABLE, perfmap_bad_lines),
	COUNTER(PROCTABLE, perfmap_truncated),
	COUNTER(PROCTABLE, perfmap_refused),
	COUNTER(PROCTABLE, perfmap_over_budget),
	COUNTER_SUB(PROCTABLE, perfmap_proc_budget),
	COUNTER_SUB(PROCTABLE, perfmaps_budget),
	COUNTER_SUB(PROCTABLE, perfmap_bytes),
	COUNTER_PART("jitdumps", PROCTABLE, jitdumps_read),
	COUNTER(SYMBOLIZER, jitdump_named),
	COUNTER(PROCTABLE, jitdump_records),
	COUNTER_SUB(PROCTABLE, jitdump_loads),
	COUNTER_SUB(PROCTABLE, jitdump_debug_entries),
	COUNTER_SUB(PROCTABLE, jitdump_unwind_infos),
	COUNTER(PROCTABLE, jitdump_bad_records),
	COUNTER(PROCTABLE, jitdump_names_fixed),
	COUNTER(PROCTABLE, jitdump_truncated),
	COUNTER(PROCTABLE, jitdump_refused),
	COUNTER(PROCTABLE, jitdump_over_budget),
	COUNTER_SUB(PROCTABLE, jitdump_bytes),
};
LINE(symbols);

static const struct counter_ref debug_info_refs[] = {
	COUNTER(DEBUGINFO, debug_by_build_id),
	COUNTER(DEBUGINFO, debug_by_link),
	COUNTER(DEBUGINFO, debug_missing),
	COUNTER_PART("refused", DEBUGINFO, debug_crc_mismatch),
	COUNTER(DEBUGINFO, debug_build_id_mismatch),
	COUNTER(DEBUGINFO, debug_bad),
	COUNTER(DEBUGINFO, debug_link_path),
	COUNTER_PART("DWARF", DEBUGINFO, dwarf_opened),
	COUNTER(DEBUGINFO, dwarf_errors),
	COUNTER(DEBUGINFO, dwarf_too_big),
	COUNTER(DEBUGINFO, dwarf_evicted),
	COUNTER(DEBUGINFO, dwarf_deferred),
	COUNTER(DEBUGINFO, dwarf_restarted),
	COUNTER(DEBUGINFO, dwarf_changed),
	COUNTER_PART(NULL, DEBUGINFO, files),
	COUNTER_SUB(DEBUGINFO, load_ms),
	COUNTER_SUB(DEBUGINFO, load_max_ms),
	COUNTER(DEBUGINFO, shared),
	COUNTER_SUB(DEBUGINFO, unused_reused),
	COUNTER(DEBUGINFO, unused_freed),
};
LINE(debug_info);

/* Debug files asked of debuginfod servers (sym/debuginfod.h); record's
 * summary shows the line too, when any was asked. */
static const struct counter_ref debuginfod_refs[] = {
	COUNTER(DEBUGINFO, fetch_asked),
	COUNTER(DEBUGINFO, fetch_fetched),
	COUNTER(DEBUGINFO, fetch_not_found),
	COUNTER(DEBUGINFO, fetch_timed_out),
	COUNTER(DEBUGINFO, fetch_refused),
	COUNTER(DEBUGINFO, fetch_failed),
	COUNTER(DEBUGINFO, fetch_not_asked),
	COUNTER(SYMBOLIZER, named_late),
};
LINE(debuginfod);

/* How the files that processes named were opened, and what was refused
 * (targetfile.h): an attack on the agent shows here. */
static const struct counter_ref target_files_refs[] = {
	COUNTER(TARGETFILE, opened),
	COUNTER_SUB(TARGETFILE, by_map_files),
	COUNTER_SUB(TARGETFILE, map_files_denied),
	COUNTER_PART("refused", TARGETFILE, symlink),
	COUNTER_SUB(TARGETFILE, untrusted_link),
	COUNTER(TARGETFILE, not_regular),
	COUNTER(TARGETFILE, replaced),
	COUNTER(DEBUGINFO, dwarf_external),
	COUNTER_PART(NULL, DEBUGINFO, symbols_over_budget),
	COUNTER_PART("CFI", UNWIND, cfi_too_big),
	COUNTER(UNWIND, cfi_refused),
	COUNTER(UNWIND, bins_reset),
};
LINE(target_files);

static const struct counter_ref thread_context_refs[] = {
	COUNTER(TP, ctx_read),
	COUNTER(CTXWATCH, procs_found),
	COUNTER_PART("failures", TP, ctx_tls_unreadable),
	COUNTER(TP, ctx_record_unreadable),
	COUNTER(TP, ctx_invalid),
	COUNTER(TP, ctx_oversize),
	COUNTER(TP, ctx_torn),
	COUNTER(LABELS, unknown_key),
	COUNTER(LABELS, bad_utf8),
	COUNTER(LABELS, truncated),
	COUNTER(CTXWATCH, locate_failed),
	COUNTER(CTXWATCH, schema_unknown),
	COUNTER_PART(NULL, TP, label_filtered),
};
LINE(thread_context);

/* Refusals first: the agent logs them alone (comments__ctx_refusals). */
static const struct counter_ref process_context_refs[] = {
	COUNTER(CTXWATCH, ctx_refused),
	COUNTER(CTXWATCH, ctx_malformed),
	COUNTER_PART(NULL, CTXWATCH, ctx_refreshes),
	COUNTER(CTXWATCH, key_refreshes),
};
LINE(process_context);

static const struct counter_ref code_regions_refs[] = {
	COUNTER(CODEMAP, tables),
	COUNTER(CODEMAP, added),
	COUNTER(CODEMAP, dropped),
	COUNTER(CODEMAP, overlapped),
	COUNTER_PART(NULL, CODEMAP, samples),
	COUNTER_SUB(CODEMAP, attributed),
	COUNTER(CODEMAP, unverified),
	COUNTER(LABELS, code_tag_mismatch),
	COUNTER_PART("failures", CODEMAP, bad_records),
	COUNTER(CODEMAP, torn_reads),
	COUNTER(CODEMAP, unreadable),
	COUNTER(CODEMAP, over_budget),
};
LINE(code_regions);

static const struct counter_ref register_tags_refs[] = {
	COUNTER(TP, tag_read),
	COUNTER(CTXWATCH, tag_procs),
	COUNTER_PART(NULL, TP, tag_unreadable),
	COUNTER(LABELS, tag_unnamed),
	COUNTER_PART(NULL, TP, tag_filtered),
};
LINE(register_tags);

/* How user stacks were walked: this window's BPF counts, and the agent's
 * since the start. */
static const struct counter_ref unwind_refs[] = {
	COUNTER(TP, ustack_copied),
	COUNTER_SUB(TP, ustack_probes),
	COUNTER_SUB(TP, ustack_short),
	COUNTER(TP, ustack_failed),
	COUNTER_PART("since start", UNWIND, cfi_used),
	COUNTER(UNWIND, cfi_rules),
	COUNTER_SUB(UNWIND, cfi_rules_differ),
	COUNTER(UNWIND, cfi_failed),
	COUNTER(UNWIND, fp_longer),
	COUNTER(UNWIND, leaf_recovered),
	COUNTER_SUB(UNWIND, leaf_deep),
	COUNTER(UNWIND, marked),
	COUNTER_SUB(UNWIND, unmarked),
	COUNTER(UNWIND, copies),
	COUNTER_SUB(UNWIND, probes),
	COUNTER(UNWIND, dwfl_built),
	COUNTER(UNWIND, dwfl_failed),
};
LINE(unwind);

/* The kernel's CFI walk: this window's walks and how they ended (BPF),
 * and the agent's tables and checks since the start. */
static const struct counter_ref kernel_cfi_refs[] = {
	COUNTER(TP, cfi_walks),
	COUNTER_SUB(TP, cfi_end),
	COUNTER_SUB(TP, cfi_no_map),
	COUNTER_SUB(TP, cfi_later),
	COUNTER_SUB(TP, cfi_unsupported),
	COUNTER_SUB(TP, cfi_unreadable),
	COUNTER_SUB(TP, cfi_bad_frame),
	COUNTER_SUB(TP, cfi_depth),
	COUNTER(TP, cfi_fp_frames),
	COUNTER_PART("since start", UNWIND, kcfi_procs),
	COUNTER(UNWIND, kcfi_refused),
	COUNTER(UNWIND, kcfi_tables),
	COUNTER(UNWIND, kcfi_no_table),
	COUNTER(UNWIND, kcfi_stacks),
	COUNTER_SUB(UNWIND, kcfi_later),
	COUNTER_SUB(UNWIND, kcfi_checked),
	COUNTER_SUB(UNWIND, kcfi_differs),
	COUNTER_SUB(UNWIND, kcfi_stale),
};
LINE(kernel_cfi);

/* What named the data addresses of memory-access samples, and the
 * samples BPF did not send for want of one. */
static const struct counter_ref memory_refs[] = {
	COUNTER(CAPTURE, mem_symbol),
	COUNTER(CAPTURE, mem_mapping),
	COUNTER(CAPTURE, mem_unnamed),
	COUNTER(TP, mem_no_addr),
	COUNTER(TP, mem_other_op),
};
LINE(memory);

/* ---- the window's problems: what went wrong, each counter on its own
 * ---- */

/* Counts of what was lost, refused or left unnamed: shown on the first
 * screen of a report, and only those not zero. */
static const struct counter_ref problems_refs[] = {
	COUNTER_WITH("samples", TP, lost, NULL),
	COUNTER_WITH("samples", CAPTURE, dropped, NULL),
	COUNTER_WITH("sample records", CAPTURE, malformed, NULL),
	COUNTER_WITH("samples", CAPTURE, unknown_stack, NULL),
	COUNTER_WITH(NULL, TP, task_lost, NULL),
	COUNTER_WITH("samples of", TP, no_user_stack, NULL),
	COUNTER_WITH("process", PROCTABLE, maps_failed, NULL),
	COUNTER_WITH("process", PROCTABLE, maps_over_budget, NULL),
	COUNTER_WITH(NULL, PROCTABLE, elf_failed, NULL),
	COUNTER_WITH(NULL, PROCTABLE, elf_corrupt, NULL),
	COUNTER_WITH("binaries with a", PROCTABLE, build_id_mismatch, NULL),
	COUNTER_WITH(NULL, DEBUGINFO, debug_missing, "debug info"),
	COUNTER_WITH("debug files refused for", DEBUGINFO,
		     debug_crc_mismatch, NULL),
	COUNTER_WITH("debug files refused for", DEBUGINFO,
		     debug_build_id_mismatch, NULL),
	COUNTER_WITH("debug files", DEBUGINFO, debug_bad, NULL),
	COUNTER_WITH(NULL, DEBUGINFO, debug_link_path, "refused"),
	COUNTER_WITH("DWARF", DEBUGINFO, dwarf_errors, NULL),
	COUNTER_WITH(NULL, DEBUGINFO, dwarf_external, "refused"),
	COUNTER_WITH(NULL, DEBUGINFO, symbols_over_budget, NULL),
	COUNTER_WITH("debuginfod fetches", DEBUGINFO, fetch_timed_out, NULL),
	COUNTER_WITH("debuginfod files", DEBUGINFO, fetch_refused, NULL),
	COUNTER_WITH("debuginfod fetches", DEBUGINFO, fetch_failed, NULL),
	COUNTER_WITH("debuginfod fetches", DEBUGINFO, fetch_not_asked, NULL),
	COUNTER_WITH("user frames", SYMBOLIZER, unmapped, NULL),
	COUNTER_WITH("user frames", SYMBOLIZER, no_symbol, NULL),
	COUNTER_WITH("kernel frames", SYMBOLIZER, kernel_no_symbol, NULL),
	COUNTER_WITH(NULL, SYMBOLIZER, anon_unnamed, "code locations"),
	COUNTER_WITH("JIT perf map", PROCTABLE, perfmap_bad_lines, NULL),
	COUNTER_WITH("JIT perf maps", PROCTABLE, perfmap_truncated, NULL),
	COUNTER_WITH("JIT perf maps", PROCTABLE, perfmap_refused, NULL),
	COUNTER_WITH("JIT perf maps", PROCTABLE, perfmap_over_budget, NULL),
	COUNTER_WITH("jitdump", PROCTABLE, jitdump_bad_records, NULL),
	COUNTER_WITH("jitdumps", PROCTABLE, jitdump_truncated, NULL),
	COUNTER_WITH("jitdumps", PROCTABLE, jitdump_refused, NULL),
	COUNTER_WITH("jitdumps", PROCTABLE, jitdump_over_budget, NULL),
	COUNTER_WITH(NULL, TARGETFILE, symlink, "refused"),
	COUNTER_WITH(NULL, TARGETFILE, not_regular, "refused"),
	COUNTER_WITH("files refused as", TARGETFILE, replaced, NULL),
	COUNTER_WITH("thread context", TP, ctx_tls_unreadable, NULL),
	COUNTER_WITH("thread context", TP, ctx_record_unreadable, NULL),
	COUNTER_WITH("thread context", TP, ctx_oversize, NULL),
	COUNTER_WITH("thread context", TP, ctx_torn, NULL),
	COUNTER_WITH("thread context", CTXWATCH, locate_failed, NULL),
	COUNTER_WITH("thread context", CTXWATCH, schema_unknown, NULL),
	COUNTER_WITH("labels with an", LABELS, unknown_key, NULL),
	COUNTER_WITH("labels with", LABELS, bad_utf8, NULL),
	COUNTER_WITH("label sets", LABELS, truncated, NULL),
	COUNTER_WITH("process context", CTXWATCH, ctx_refused, NULL),
	COUNTER_WITH("process context payloads", CTXWATCH, ctx_malformed,
		     NULL),
	COUNTER_WITH(NULL, TP, tag_unreadable, "(register tags)"),
	COUNTER_WITH("register tag", LABELS, tag_unnamed, NULL),
	COUNTER_WITH("code-region table", CODEMAP, bad_records, NULL),
	COUNTER_WITH("code-region", CODEMAP, unreadable, NULL),
	COUNTER_WITH("code", CODEMAP, over_budget, "(regions)"),
	COUNTER_WITH("user stack", TP, ustack_failed, NULL),
	COUNTER_WITH("stack", UNWIND, cfi_failed, NULL),
	COUNTER_WITH(NULL, UNWIND, dwfl_failed, NULL),
	COUNTER_WITH(NULL, UNWIND, cfi_refused, NULL),
	COUNTER_WITH(NULL, UNWIND, cfi_too_big, "of CFI"),
};
static const struct counter_line problems =
	COUNTER_LINE_NONZERO(problems_refs);

/* ---- the summary's and the agent's log's: a few of them ---- */

static const struct counter_ref perfmaps_unread_refs[] = {
	COUNTER(PROCTABLE, perfmap_over_budget),
	COUNTER_SUB(PROCTABLE, perfmap_proc_budget),
	COUNTER_SUB(PROCTABLE, perfmaps_budget),
	COUNTER(PROCTABLE, perfmap_refused),
};
LINE(perfmaps_unread);

/* What JIT code the jitdumps named, and what they refused. */
static const struct counter_ref jitdumps_summary_refs[] = {
	COUNTER(PROCTABLE, jitdumps_read),
	COUNTER(SYMBOLIZER, jitdump_named),
	COUNTER(PROCTABLE, jitdump_loads),
	COUNTER(PROCTABLE, jitdump_debug_entries),
	COUNTER(PROCTABLE, jitdump_bad_records),
	COUNTER(PROCTABLE, jitdump_truncated),
	COUNTER(PROCTABLE, jitdump_refused),
	COUNTER(PROCTABLE, jitdump_over_budget),
};
LINE(jitdumps_summary);

static const struct counter_ref ctx_refusals_refs[] = {
	COUNTER(CTXWATCH, ctx_refused),
	COUNTER(CTXWATCH, ctx_malformed),
};
LINE(ctx_refusals);

static const struct counter_ref thread_context_summary_refs[] = {
	COUNTER(TP, ctx_read),
	COUNTER(CTXWATCH, procs_found),
	COUNTER_PART(NULL, TP, ctx_tls_unreadable),
	COUNTER(TP, ctx_record_unreadable),
	COUNTER(TP, ctx_invalid),
	COUNTER(TP, ctx_oversize),
	COUNTER(TP, ctx_torn),
	COUNTER(LABELS, unknown_key),
	COUNTER(CTXWATCH, schema_unknown),
};
LINE(thread_context_summary);

static const struct counter_ref register_tags_summary_refs[] = {
	COUNTER(TP, tag_read),
	COUNTER(CTXWATCH, tag_procs),
};
LINE(register_tags_summary);

static const struct counter_ref unwind_summary_refs[] = {
	COUNTER(TP, ustack_copied),
	COUNTER_SUB(TP, ustack_probes),
	COUNTER(UNWIND, cfi_used),
	COUNTER_SUB(UNWIND, cfi_rules),
	COUNTER_SUB(UNWIND, cfi_rules_differ),
	COUNTER(UNWIND, leaf_recovered),
	COUNTER(UNWIND, marked),
};
LINE(unwind_summary);

static const struct counter_ref kernel_cfi_summary_refs[] = {
	COUNTER(TP, cfi_walks),
	COUNTER_SUB(TP, cfi_end),
	COUNTER(UNWIND, kcfi_procs),
	COUNTER(UNWIND, kcfi_refused),
	COUNTER(UNWIND, kcfi_checked),
	COUNTER_SUB(UNWIND, kcfi_differs),
	COUNTER_SUB(UNWIND, kcfi_stale),
};
LINE(kernel_cfi_summary);

#define LINE_LEN	2048	/* the longest line, numbers at 20 digits, fits */
#define PROBLEMS_LEN	4096	/* the problems line, all of them at 20 */

/* Where the window's full lines go: each prefixed COMMENTS_FULL. */
struct emitter {
	void (*emit)(void *ctx, const char *line);
	void *ctx;
	const struct counter_values *v;
};

static void emit_full(const struct emitter *e, const char *line)
{
	char full[LINE_LEN + sizeof(COMMENTS_FULL)];

	snprintf(full, sizeof(full), COMMENTS_FULL "%s", line);
	e->emit(e->ctx, full);
}

static void emit_line(const struct emitter *e, const char *title,
		      const struct counter_line *l)
{
	char line[LINE_LEN];

	counters__render(line, sizeof(line), title, l, e->v);
	emit_full(e, line);
}

/* "tagprof VERSION: EVENT at N Hz, D s": what the window is. */
static void emit_what(const struct comments_in *in,
		      void (*emit)(void *ctx, const char *line), void *ctx)
{
	char line[LINE_LEN], rate[64];

	if (in->period)
		snprintf(rate, sizeof(rate), "every %" PRIu64 " events",
			 in->period);
	else
		snprintf(rate, sizeof(rate), "at %" PRIu64 " Hz", in->freq);
	snprintf(line, sizeof(line), "tagprof " TAGPROF_VERSION ": %s %s, "
		 "%.1f s", in->event, rate, in->duration_ns / 1e9);
	emit(ctx, line);
}

/* A memory-access profile's coverage, for `tagprof report memory`: the
 * event and its rate, the load-latency threshold, what named the
 * addresses. */
static void emit_memory(const struct comments_in *in,
			const struct emitter *e)
{
	char line[LINE_LEN];

	if (in->period)
		snprintf(line, sizeof(line), "memory event: %s, period %" PRIu64,
			 in->event, in->period);
	else
		snprintf(line, sizeof(line), "memory event: %s, at %" PRIu64
			 " Hz", in->event, in->freq);
	e->emit(e->ctx, line);
	if (in->ldlat) {
		snprintf(line, sizeof(line), "ldlat: %u cycles", in->ldlat);
		e->emit(e->ctx, line);
	}
	counters__render(line, sizeof(line), "memory", &memory, e->v);
	e->emit(e->ctx, line);
}

void comments__window(const struct comments_in *in,
		      void (*emit)(void *ctx, const char *line), void *ctx)
{
	const struct emitter e = { emit, ctx, &in->v };
	char title[128], line[PROBLEMS_LEN];

	/* Report headers show the comments that do not start with '#'
	 * (pprof's own rule): what was recorded, and what went wrong. */
	emit_what(in, emit, ctx);
	if (counters__sum(&problems, &in->v)) {
		counters__render(line, sizeof(line), "problems", &problems,
				 &in->v);
		emit(ctx, line);
	}
	/* The tagging dictionary's result, and the nesting `tagprof report
	 * plan` builds its tree from. */
	if (in->code_levels && *in->code_levels) {
		snprintf(line, sizeof(line), "code levels: %s", in->code_levels);
		emit(ctx, line);
	}
	if (in->code_shares && *in->code_shares) {
		snprintf(line, sizeof(line), "code regions: %s", in->code_shares);
		emit(ctx, line);
	}
	if (in->memory)
		emit_memory(in, &e);
	/* Every counter, for `go tool pprof -comments` and record -v. */
	emit_full(&e, "tagprof " TAGPROF_VERSION);
	snprintf(title, sizeof(title), "event: %s", in->event);
	emit_full(&e, title);
	emit_line(&e, "samples", &samples);
	for (int i = 0; i < in->ncpus; i++) {
		if (!in->per_cpu[i].lost)
			continue;
		snprintf(title, sizeof(title), "lost on cpu %d: %llu", i,
			 (unsigned long long)in->per_cpu[i].lost);
		emit_full(&e, title);
	}
	emit_line(&e, "frames since start", &frames);
	snprintf(title, sizeof(title), "kernel names since start, from %s",
		 in->ksym_source);
	emit_line(&e, title, &kernel_names);
	emit_line(&e, "processes since start", &processes);
	emit_line(&e, "symbols since start", &symbols);
	emit_line(&e, "debug info since start", &debug_info);
	emit_line(&e, "debuginfod since start", &debuginfod);
	emit_line(&e, "target files since start", &target_files);
	emit_line(&e, "thread context", &thread_context);
	emit_line(&e, "process context since start", &process_context);
	emit_line(&e, "register tags", &register_tags);
	emit_line(&e, "code regions since start", &code_regions);
	snprintf(title, sizeof(title), "unwind %s",
		 unwind_mode__name(in->unwind));
	emit_line(&e, title, &unwind);
	emit_line(&e, "kernel CFI", &kernel_cfi);
	emit_line(&e, "memory", &memory);
}

uint64_t comments__perfmaps_unread(const struct counter_values *v, char *buf,
				   size_t len)
{
	int n = counters__render(buf, len, NULL, &perfmaps_unread, v);

	if (n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - n, "; those processes' JIT frames are "
			 "unnamed");
	return counters__sum(&perfmaps_unread, v);
}

uint64_t comments__ctx_refusals(const struct counter_values *v, char *buf,
				size_t len)
{
	counters__render(buf, len, NULL, &ctx_refusals, v);
	return counters__sum(&ctx_refusals, v);
}

/* "tagprof: TITLE: ..." on f, then tail. */
static void summary_line(FILE *f, const char *title,
			 const struct counter_line *l,
			 const struct counter_values *v, const char *tail)
{
	char line[LINE_LEN];

	counters__render(line, sizeof(line), title, l, v);
	fprintf(f, "tagprof: %s%s\n", line, tail);
}

void comments__summary(const struct comments_in *in, FILE *f)
{
	const struct tp_stats *st = in->v.group[CG_TP];
	const struct capture_stats *cs = in->v.group[CG_CAPTURE];
	const struct proctable_stats *ps = in->v.group[CG_PROCTABLE];
	const struct proccfg_filters *flt = in->filters;
	char buf[LINE_LEN], title[64];

	fprintf(f, "tagprof: %.1f s, event %s, %" PRIu64 " samples, %llu "
		"lost, %" PRIu64 " processes\n", in->duration_ns / 1e9,
		in->event, cs->samples, (unsigned long long)st->lost,
		ps->procs_seen);
	if (st->lost)
		fprintf(f, "tagprof: warning: %llu samples were lost because "
			"the ring buffer was full (see the profile's comments "
			"for the CPUs)\n", (unsigned long long)st->lost);
	if (!cs->samples)
		fprintf(f, "tagprof: warning: no samples were collected\n");
	if (comments__perfmaps_unread(&in->v, buf, sizeof(buf)))
		fprintf(f, "tagprof: JIT perf maps: %s\n", buf);
	if (counters__sum(&jitdumps_summary, &in->v))
		summary_line(f, "jitdumps", &jitdumps_summary, &in->v, "");
	if (counters__sum(&debuginfod, &in->v))
		summary_line(f, "debuginfod", &debuginfod, &in->v, "");
	if (in->memory)
		summary_line(f, "memory", &memory, &in->v, "");
	if (counters__sum(&thread_context_summary, &in->v))
		summary_line(f, "thread context", &thread_context_summary,
			     &in->v, "");
	if (comments__ctx_refusals(&in->v, buf, sizeof(buf)))
		fprintf(f, "tagprof: process context: %s\n", buf);
	if (flt->label_key)
		fprintf(f, "tagprof: --label %s=%s dropped %llu samples\n",
			flt->label_key, flt->label_val,
			(unsigned long long)st->label_filtered);
	if (in->code_shares && *in->code_shares) {
		fprintf(f, "tagprof: code regions: %s\n", in->code_shares);
		summary_line(f, "code regions", &code_regions, &in->v, "");
	}
	if (counters__sum(&register_tags_summary, &in->v))
		summary_line(f, "register tags", &register_tags_summary,
			     &in->v, "");
	snprintf(title, sizeof(title), "unwind %s",
		 unwind_mode__name(in->unwind));
	snprintf(buf, sizeof(buf), "; %.0f ring-buffer bytes per sample",
		 cs->samples ? (double)in->ring_bytes / cs->samples : 0.0);
	summary_line(f, title, &unwind_summary, &in->v, buf);
	if (counters__sum(&kernel_cfi_summary, &in->v))
		summary_line(f, "kernel CFI", &kernel_cfi_summary, &in->v, "");
	if (flt->tag_field)
		fprintf(f, "tagprof: --tag %s=%s dropped %llu samples\n",
			flt->tag_field, flt->tag_name,
			(unsigned long long)st->tag_filtered);
}
