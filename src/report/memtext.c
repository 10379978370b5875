// SPDX-License-Identifier: BSD-2-Clause
/* `tagprof report memory` as text for a terminal (memory.h). Every line
 * of numbers starts with a fixed name ("samples:", "skew:", ...) so that
 * scripts can pick them out. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/memory.h"
#include "util/sort.h"
#include "util/utf8.h"

/* Objects, --by values and address lines shown at most; the rest are
 * summed up in one line. */
#define TEXT_OBJECTS	32
#define TEXT_COMPS	16
#define LIST_ROWS	8	/* lines of a range in "buckets by address" */
#define BAR_W		40

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* s for a terminal: valid UTF-8, and control characters as \xNN, so that
 * a label from a target process stays on its line and cannot drive the
 * terminal. */
static void put_text(struct strbuf *b, const char *s)
{
	size_t n = strlen(s), cap = 3 * n + 1;
	char *v = malloc(cap);

	if (!v) {
		b->err = b->err ? b->err : -ENOMEM;
		return;
	}
	utf8__sanitize((const uint8_t *)s, n, v, cap);
	for (const unsigned char *c = (unsigned char *)v; *c; c++) {
		if (*c < 0x20 || *c == 0x7f)
			strbuf__printf(b, "\\x%02x", *c);
		else if (*c == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f)
			strbuf__printf(b, "\\x%02x", *++c);	/* C1 */
		else
			strbuf__add(b, (const char *)c, 1);
	}
	free(v);
}

/* A --by value: "KEY=VALUE", or "(no KEY)" for samples without it. */
static void put_comp(struct strbuf *b, const struct memrep *m, uint32_t comp)
{
	if (comp == MEM_NOVAL) {
		strbuf__puts(b, "(no ");
		put_text(b, m->by);
		strbuf__puts(b, ")");
		return;
	}
	put_text(b, m->by);
	strbuf__puts(b, "=");
	put_text(b, memrep__str(m, comp));
}

/* ---- coverage ---- */

static void text_event(struct strbuf *b, const struct memrep *m)
{
	const struct mem_event *ev = &m->ev;

	strbuf__puts(b, "  event                   ");
	if (*ev->name) {
		put_text(b, ev->name);
		strbuf__printf(b, " (%s)\n", ev->from_comment ?
			       "from the profile's comment" :
			       "from the sample types");
	} else {
		strbuf__puts(b, "not named by the profile\n");
	}
	if (ev->periods_differ)
		strbuf__puts(b, "  period                  differs between the "
			     "inputs: no estimates\n");
	else if (ev->period)
		strbuf__printf(b, "  period                  %" PRId64 " (each "
			       "sample stands for %" PRId64 " event%s)\n",
			       ev->period, ev->period,
			       ev->period == 1 ? "" : "s");
	else
		strbuf__puts(b, "  period                  not known: no "
			     "estimates\n");
	if (ev->ldlat)
		strbuf__printf(b, "  ldlat                   %" PRId64
			       " cycles\n", ev->ldlat);
}

static void text_coverage(struct strbuf *b, const struct memrep *m,
			  const struct memrep_out *o)
{
	const struct mem_coverage *c = &m->cov;
	char size[32];

	strbuf__printf(b, "coverage:\n  samples read            %" PRIu64
		       " (%d file%s)\n", c->read, c->files,
		       c->files == 1 ? "" : "s");
	strbuf__printf(b, "  lost                    %" PRIu64 " (untimed: "
		       "no time, address or labels; left out)\n", c->lost);
	strbuf__printf(b, "  kept                    %" PRIu64, c->kept);
	if (o->cut) {
		strbuf__puts(b, " (cut: ");
		put_text(b, o->cut);
		strbuf__puts(b, ")");
	}
	strbuf__printf(b, "\n  with an address         %" PRIu64 " (%.1f%% "
		       "of kept)\n", c->addr, pct(c->addr, c->kept));
	strbuf__printf(b, "  with a resolved object  %" PRIu64 " (%.1f%% of "
		       "kept; not: no data_object, [unmapped], [unknown])\n",
		       c->resolved, pct(c->resolved, c->kept));
	if (c->untimed)
		strbuf__printf(b, "  without a time          %" PRIu64 " (in "
			       "the counts, not in a heatmap)\n", c->untimed);
	text_event(b, m);
	strbuf__printf(b, "  bucket                  %s\n",
		       mem__size_text(m->bucket, size, sizeof(size)));
	if (m->t0 <= m->t1)
		strbuf__printf(b, "  time                    %.3f s to "
			       "%.3f s\n", m->t0 / 1e9, m->t1 / 1e9);
	if (m->by) {
		strbuf__puts(b, "  by                      ");
		put_text(b, m->by);
		strbuf__printf(b, ": %zu value%s; %" PRIu64 " samples with an "
			       "address have it (%.1f%%)\n", m->ncomps,
			       m->ncomps == 1 ? "" : "s", c->with_by,
			       pct(c->with_by, c->addr));
	}
}

/* ---- views ---- */

/* Whether estimates can be given: one known period. */
static bool estimates(const struct memrep *m)
{
	return m->ev.period > 0 && !m->ev.periods_differ;
}

static void text_working_set(struct strbuf *b, const struct memrep *m,
			     const struct mem_ws_point *ws, size_t n,
			     uint64_t touched)
{
	char size[32];

	strbuf__puts(b, "working set:\n   samples>=  est.accesses>=     "
		     "buckets             bytes  size        share\n");
	for (size_t i = 0; i < n; i++) {
		uint64_t bytes = ws[i].buckets << m->shift;

		strbuf__printf(b, "  %10" PRIu64 "  ", ws[i].k);
		if (estimates(m))
			strbuf__printf(b, "%14" PRIu64, ws[i].k *
				       (uint64_t)m->ev.period);
		else
			strbuf__printf(b, "%14s", "n/a");
		strbuf__printf(b, "  %10" PRIu64 "  %16" PRIu64 "  %-10s "
			       "%5.1f%%\n", ws[i].buckets, bytes,
			       mem__size_text(bytes, size, sizeof(size)),
			       pct(ws[i].buckets, touched));
	}
}

static void text_estimate_note(struct strbuf *b, const struct memrep *m)
{
	char size[32];

	mem__size_text(m->bucket, size, sizeof(size));
	if (!estimates(m)) {
		strbuf__puts(b, "  (no estimate: the sampling period is not "
			     "known or differs between the inputs)\n");
		return;
	}
	strbuf__printf(b, "  (estimate: each sample stands for the %" PRId64
		       " events of its period, so a bucket with c samples had "
		       "about c x %" PRId64 " accesses (faults, for a fault "
		       "event); this assumes the events between samples went "
		       "where the samples did. A touched bucket counts whole "
		       "(%s), and buckets no sample hit are missed.)\n",
		       m->ev.period, m->ev.period, size);
}

/* The skew, and the top buckets by samples. */
static void text_skew(struct strbuf *b, const struct memrep *m,
		      const struct mem_set *st)
{
	const struct mem_skew *k = &st->skew;

	strbuf__printf(b, "skew: top 1%% of buckets (%zu) hold %.1f%% of "
		       "samples; top 10%% (%zu) hold %.1f%%\n", k->top1_n,
		       pct(k->top1, k->total), k->top10_n,
		       pct(k->top10, k->total));
	strbuf__puts(b, "top buckets:\n");
	for (size_t i = 0; i < k->ntop; i++)
		strbuf__printf(b, "  0x%016" PRIx64 "  %10" PRIu64
			       "  %5.1f%%\n", k->top[i].idx << m->shift,
			       k->top[i].n, pct(k->top[i].n, k->total));
}

/* The samples of panel p's buckets [from, to] (indices). */
static uint64_t samples_in(const struct mem_set *st, const struct mem_panel *p,
			   uint64_t from, uint64_t to, uint64_t *touched)
{
	uint64_t n = 0;

	*touched = 0;
	for (size_t i = p->b0; i < p->b0 + p->nb; i++)
		if (st->b[i].idx >= from && st->b[i].idx <= to) {
			n += st->b[i].n;
			(*touched)++;
		}
	return n;
}

/* A range of the set in LIST_ROWS lines at most: each line's samples in
 * n, its buckets touched in touched; the lines. */
static uint64_t panel_lines(const struct mem_set *st, const struct mem_panel *p,
			    uint64_t *n, uint64_t *touched)
{
	uint64_t per_row, rows;

	mem_panel__rows(p, LIST_ROWS, &per_row, &rows);
	for (uint64_t r = 0; r < rows; r++) {
		uint64_t from = p->first + r * per_row;
		uint64_t to = r + 1 == rows ? p->last : from + per_row - 1;

		n[r] = samples_in(st, p, from, to, &touched[r]);
	}
	return rows;
}

/* A range's lines: address range, buckets touched of all, samples, and
 * a bar, max (the set's fullest line) the longest. */
static void text_panel(struct strbuf *b, const struct memrep *m,
		       const struct mem_set *st, const struct mem_panel *p,
		       uint64_t max)
{
	uint64_t per_row, rows, n[LIST_ROWS], touched[LIST_ROWS];
	char range[96];

	mem_panel__rows(p, LIST_ROWS, &per_row, &rows);
	panel_lines(st, p, n, touched);
	for (uint64_t r = 0; r < rows; r++) {
		uint64_t from = p->first + r * per_row;
		uint64_t to = r + 1 == rows ? p->last : from + per_row - 1;
		int bar = (int)((n[r] * BAR_W + max - 1) / max);

		strbuf__printf(b, "  %-48s %8" PRIu64 "/%-8" PRIu64 " %10"
			       PRIu64 " %5.1f%% %.*s\n",
			       mem__range_text(from, to, m->shift, range,
					       sizeof(range)),
			       touched[r], to - from + 1, n[r],
			       pct(n[r], st->samples), bar,
			       "########################################");
	}
}

/* The drawn ranges' lines (as the page's panels), the rest summed. */
static void text_listing(struct strbuf *b, const struct memrep *m,
			 const struct mem_set *st)
{
	uint64_t rest = 0, rest_n = 0, max = 1, n[LIST_ROWS], t[LIST_ROWS];

	for (size_t i = 0; i < st->np; i++)
		for (uint64_t r = st->p[i].drawn ?
			     panel_lines(st, &st->p[i], n, t) : 0; r-- > 0;)
			max = n[r] > max ? n[r] : max;
	strbuf__puts(b, "buckets by address (range, buckets touched/all, "
		     "samples, share):\n");
	for (size_t i = 0; i < st->np; i++) {
		if (st->p[i].drawn) {
			text_panel(b, m, st, &st->p[i], max);
			continue;
		}
		rest++;
		rest_n += st->p[i].samples;
	}
	if (rest)
		strbuf__printf(b, "  (%" PRIu64 " more ranges, %" PRIu64
			       " samples, %.1f%%: apart from those above by "
			       "gaps)\n", rest, rest_n,
			       pct(rest_n, st->samples));
}

static void text_latency(struct strbuf *b, const struct mem_set *st,
			 uint64_t all, const char *of_what)
{
	if (!st->weighted) {
		strbuf__puts(b, "latency: n/a (no sample has a weight)\n");
		return;
	}
	strbuf__printf(b, "latency: %" PRIu64 " cycles (%.1f%% of %s), %.1f "
		       "per sample with a weight (%" PRIu64 ")\n", st->weight,
		       pct(st->weight, all), of_what, (double)st->weight /
		       (double)st->weighted, st->weighted);
}

/* The views of one set, in text: its samples (a share of of, what
 * of_what says), its latency (of latency), range, skew, buckets by
 * address and working set. */
static void text_set(struct strbuf *b, const struct memrep *m,
		     const struct mem_set *st, uint64_t of, const char *of_what,
		     uint64_t latency)
{
	const struct mem_obj *o = &m->objs[st->obj];
	char range[96], size[32];

	strbuf__printf(b, "samples: %" PRIu64 " (%.1f%% of %s)%s\n",
		       st->samples, pct(st->samples, of), of_what,
		       o->pids && st->comp == MEM_NONE ?
		       "; from several processes, each with its own "
		       "addresses" : "");
	text_latency(b, st, latency, st->comp == MEM_NONE ? "all" :
		     "the object's");
	strbuf__printf(b, "range: %s in %zu panel%s\n",
		       mem__range_text(st->b[0].idx, st->b[st->nb - 1].idx,
				       m->shift, range, sizeof(range)),
		       st->np, st->np == 1 ? "" : "s");
	strbuf__printf(b, "touched: %zu buckets (%s)\n", st->nb,
		       mem__size_text((uint64_t)st->nb << m->shift, size,
				      sizeof(size)));
	text_skew(b, m, st);
	text_listing(b, m, st);
	text_working_set(b, m, st->ws, st->nws, st->nb);
}

/* ---- --by ---- */

/* name: NULL for c's value. */
static void text_comp_row(struct strbuf *b, const struct memrep *m,
			  const struct mem_set *c, const struct mem_set *all,
			  const char *name)
{
	strbuf__puts(b, "  ");
	if (name)
		strbuf__puts(b, name);
	else
		put_comp(b, m, c->comp);
	strbuf__printf(b, "  %" PRIu64 " %.1f%%", c->samples,
		       pct(c->samples, all->samples));
	if (all->weighted)
		strbuf__printf(b, "  %" PRIu64 " %.1f%%\n", c->weight,
			       pct(c->weight, all->weight));
	else
		strbuf__puts(b, "  n/a\n");
}

/* Each value's share of the object's samples and latency. */
static void text_shares(struct strbuf *b, const struct memrep *m,
			const struct mem_obj *o)
{
	const struct mem_set *all = &m->sets[o->set];
	uint64_t rest = 0, rest_w = 0;
	char more[48];

	strbuf__puts(b, "by ");
	put_text(b, m->by);
	strbuf__puts(b, " (value, samples and share, latency in cycles and "
		     "share):\n");
	for (size_t i = 0; i < o->ncomps; i++) {
		const struct mem_set *c = &m->sets[o->comp0 + i];

		if (i < TEXT_COMPS) {
			text_comp_row(b, m, c, all, NULL);
			continue;
		}
		rest += c->samples;
		rest_w += c->weight;
	}
	snprintf(more, sizeof(more), "(%zu more values)",
		 o->ncomps - TEXT_COMPS);
	if (o->ncomps > TEXT_COMPS)
		text_comp_row(b, m, &(struct mem_set){ .samples = rest,
			.weight = rest_w }, all, more);
}

static void text_object(struct strbuf *b, const struct memrep *m,
			const struct mem_obj *o)
{
	const struct mem_set *all = &m->sets[o->set];

	strbuf__puts(b, "\n== object ");
	put_text(b, memrep__str(m, o->name));
	strbuf__puts(b, "\n");
	text_set(b, m, all, m->cov.addr, "those with an address", m->weight);
	if (!m->by)
		return;
	text_shares(b, m, o);
	for (size_t i = 0; i < o->ncomps && i < TEXT_COMPS; i++) {
		const struct mem_set *c = &m->sets[o->comp0 + i];

		strbuf__puts(b, "\n== object ");
		put_text(b, memrep__str(m, o->name));
		strbuf__puts(b, ", ");
		put_comp(b, m, c->comp);
		strbuf__puts(b, "\n");
		text_set(b, m, c, all->samples, "the object's", all->weight);
	}
}

int memrep__write_text(const struct memrep *m, const struct memrep_out *o,
		       struct strbuf *b)
{
	uint64_t rest = 0;
	char size[32];

	strbuf__puts(b, "tagprof report memory: ");
	put_text(b, o->title);
	strbuf__puts(b, "\n");
	text_coverage(b, m, o);
	strbuf__printf(b, "\n== all objects: %zu object%s, %" PRIu64
		       " buckets touched (%s)\n", m->nobjs,
		       m->nobjs == 1 ? "" : "s", m->buckets_all,
		       mem__size_text(m->buckets_all << m->shift, size,
				      sizeof(size)));
	text_working_set(b, m, m->ws, m->nws, m->buckets_all);
	text_estimate_note(b, m);
	for (size_t i = 0; i < m->nobjs; i++) {
		if (i < TEXT_OBJECTS)
			text_object(b, m, &m->objs[i]);
		else
			rest += m->objs[i].samples;
	}
	if (m->nobjs > TEXT_OBJECTS)
		strbuf__printf(b, "\n(%zu more objects: %" PRIu64 " samples, "
			       "%.1f%%)\n", m->nobjs - TEXT_OBJECTS, rest,
			       pct(rest, m->cov.addr));
	return b->err;
}

static int count_desc(const void *a, const void *b, void *arg)
{
	const struct memrep *m = arg;
	const struct mem_count *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(memrep__str(m, x->name), memrep__str(m, y->name));
}

int memrep__write_noaddr(const struct memrep *m, size_t max,
			 struct strbuf *b)
{
	struct mem_count *c = malloc((m->nnoaddr + 1) * sizeof(*c));
	uint64_t all = 0, rest = 0;

	if (!c)
		return -ENOMEM;
	memcpy(c, m->noaddr, m->nnoaddr * sizeof(*c));
	sort__array_r(c, m->nnoaddr, sizeof(*c), count_desc, (void *)m);
	for (size_t i = 0; i < m->nnoaddr; i++)
		all += c[i].n;
	for (size_t i = 0; i < m->nnoaddr; i++) {
		if (i >= max) {
			rest += c[i].n;
			continue;
		}
		strbuf__printf(b, "  %10" PRIu64 " %5.1f%%  ", c[i].n,
			       pct(c[i].n, all));
		put_text(b, memrep__str(m, c[i].name));
		strbuf__puts(b, "\n");
	}
	if (m->nnoaddr > max)
		strbuf__printf(b, "  %10" PRIu64 " %5.1f%%  (%zu more "
			       "objects)\n", rest, pct(rest, all),
			       m->nnoaddr - max);
	free(c);
	return b->err;
}
