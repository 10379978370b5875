// SPDX-License-Identifier: BSD-2-Clause
/* Reading memory-access profiles into the report (memory.h): the labels
 * addr, weight, data_object and the --by key of each sample, the lost
 * samples, and what the comments say of the event. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/memory.h"
#include "util/errbuf.h"
#include "util/grow.h"
#include "util/hashmap.h"

#define NO_OBJECT	"(no data_object)"
#define EVENT_COMMENT	"memory event:"
#define LDLAT_COMMENT	"ldlat:"

/* One input's string indices of the labels read, -1 where it has none. */
struct keys {
	int64_t addr, weight, object, by, pid;
	int col;		/* the value that counts samples */
	bool timed;		/* a per-sample profile: some sample has t */
};

static int64_t find_str(const struct pprofin *in, const char *s)
{
	for (size_t i = 0; i < in->pr->n_string_table; i++)
		if (!strcmp(in->pr->string_table[i], s))
			return (int64_t)i;
	return -1;
}

/* The sample type "samples", else the first; -1 without types. */
static int samples_column(const struct pprofin *in)
{
	const Perftools__Profiles__Profile *pr = in->pr;

	for (size_t i = 0; i < pr->n_sample_type; i++)
		if (!strcmp(pprofin__str(in, pr->sample_type[i]->type),
			    "samples"))
			return (int)i;
	return pr->n_sample_type ? 0 : -1;
}

static const Perftools__Profiles__Label *
label_of(const Perftools__Profiles__Sample *s, int64_t key)
{
	for (size_t i = 0; key >= 0 && i < s->n_label; i++)
		if (s->label[i]->key == key)
			return s->label[i];
	return NULL;
}

/* A numeric label's value in *v; false if s has none. */
static bool num_label(const Perftools__Profiles__Sample *s, int64_t key,
		      uint64_t *v)
{
	const Perftools__Profiles__Label *l = label_of(s, key);

	if (!l || l->str)
		return false;
	*v = (uint64_t)l->num;	/* kernel addresses are negative int64 */
	return true;
}

/* "memory event: NAME, period P" and "ldlat: N cycles", wherever in a
 * comment they are. */
static void read_comment(struct mem_event *ev, const char *c,
			 int64_t *period)
{
	const char *at = strstr(c, EVENT_COMMENT), *p;
	size_t n;

	if (at && !ev->from_comment) {
		at += strlen(EVENT_COMMENT);
		at += strspn(at, " ");
		n = strcspn(at, ", ");
		if (n && n < sizeof(ev->name)) {
			memcpy(ev->name, at, n);
			ev->name[n] = '\0';
			ev->from_comment = true;
		}
		p = strstr(at, "period ");
		if (p)
			*period = strtoll(p + strlen("period "), NULL, 10);
	}
	at = strstr(c, LDLAT_COMMENT);
	if (at && !ev->ldlat)
		ev->ldlat = strtoll(at + strlen(LDLAT_COMMENT), NULL, 10);
}

/* The event from the sample types where no comment names it: the first
 * type that is neither samples nor weight ([samples, page-faults]). */
static void event_from_types(struct mem_event *ev, const struct pprofin *in)
{
	const Perftools__Profiles__Profile *pr = in->pr;

	for (size_t i = 0; !*ev->name && i < pr->n_sample_type; i++) {
		const char *t = pprofin__str(in, pr->sample_type[i]->type);

		if (strcmp(t, "samples") && strcmp(t, "weight"))
			snprintf(ev->name, sizeof(ev->name), "%s", t);
	}
}

/* The event, period and ldlat of in; the first input's stay, another's
 * other period is noted. */
static void read_event(struct memrep *m, const struct pprofin *in)
{
	struct mem_event ev = { 0 };
	int64_t period = 0;

	for (size_t i = 0; i < in->pr->n_comment; i++)
		read_comment(&ev, pprofin__str(in, in->pr->comment[i]),
			     &period);
	event_from_types(&ev, in);
	ev.period = in->pr->period > 0 ? in->pr->period :
		    period > 0 ? period : 0;
	if (!m->cov.files) {
		m->ev = ev;
		return;
	}
	m->ev.periods_differ |= ev.period != m->ev.period;
	if (!*m->ev.name)
		snprintf(m->ev.name, sizeof(m->ev.name), "%s", ev.name);
	if (!m->ev.ldlat)
		m->ev.ldlat = ev.ldlat;
}

/* The value of s's label key as a string of the report, a number (a tag
 * field without a name) in decimal; none if s has no such label;
 * MEM_NONE on ENOMEM. */
static uint32_t value_of(struct memrep *m, const struct pprofin *in,
			 const Perftools__Profiles__Sample *s, int64_t key,
			 uint32_t none)
{
	const Perftools__Profiles__Label *l = label_of(s, key);
	char num[32];

	if (!l)
		return none;
	if (l->str)
		return memrep__intern(m, pprofin__str(in, l->str));
	snprintf(num, sizeof(num), "%" PRId64, l->num);
	return memrep__intern(m, num);
}

/* Sample s, which has an address, into the report. */
static int add_one(struct memrep *m, const struct pprofin *in,
		   const Perftools__Profiles__Sample *s, const struct keys *k,
		   struct mem_sample *ms)
{
	uint32_t name = value_of(m, in, s, k->object, MEM_NOVAL);
	uint64_t pid = 0;

	if (name == MEM_NOVAL)
		name = memrep__intern(m, NO_OBJECT);
	ms->comp = m->by ? value_of(m, in, s, k->by, MEM_NOVAL) : MEM_NONE;
	num_label(s, k->pid, &pid);
	ms->obj = name == MEM_NONE ? MEM_NONE : memrep__object(m, name, pid);
	if (ms->obj == MEM_NONE || (m->by && ms->comp == MEM_NONE))
		return -ENOMEM;
	ms->has_weight = num_label(s, k->weight, &ms->weight);
	m->cov.addr += ms->n;
	m->cov.resolved += m->objs[ms->obj].resolved ? ms->n : 0;
	m->cov.untimed += ms->t_ns == MEM_NO_TIME ? ms->n : 0;
	m->cov.with_by += m->by && ms->comp != MEM_NOVAL ? ms->n : 0;
	return memrep__add_sample(m, ms);
}

/* Sample s, without an address: counted by its data object. */
static int count_noaddr(struct memrep *m, const struct pprofin *in,
			const Perftools__Profiles__Sample *s,
			const struct keys *k, uint32_t n)
{
	uint32_t name = value_of(m, in, s, k->object, MEM_NOVAL);
	uint64_t at;

	if (name == MEM_NOVAL)
		name = memrep__intern(m, NO_OBJECT);
	if (name == MEM_NONE)
		return -ENOMEM;
	if (hashmap__get(m->noaddr_ix, &name, sizeof(name), &at)) {
		m->noaddr[at].n += n;
		return 0;
	}
	if (grow__array(&m->noaddr, &m->capnoaddr, m->nnoaddr + 1,
			sizeof(*m->noaddr), 16) ||
	    hashmap__put(m->noaddr_ix, &name, sizeof(name), m->nnoaddr))
		return -ENOMEM;
	m->noaddr[m->nnoaddr++] = (struct mem_count){ name, n };
	return 0;
}

/* The samples sample s stands for: its samples value, at least 0. */
static uint32_t count_of(const Perftools__Profiles__Sample *s, int col)
{
	int64_t v;

	if (col < 0 || (size_t)col >= s->n_value)
		return 1;
	v = s->value[col];
	return v <= 0 ? 0 : v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static int add_sample(struct memrep *m, const struct pprofin *in,
		      const Perftools__Profiles__Sample *s,
		      const struct merge_cut *cut, const struct keys *k,
		      int64_t base)
{
	struct mem_sample ms = { .n = count_of(s, k->col) };
	bool has_addr = num_label(s, k->addr, &ms.addr);
	int64_t t;

	if (!ms.n)
		return 0;
	/* a time that does not fit from the report's start is none */
	if (pprofin__sample_time(in, s, &t) ||
	    __builtin_add_overflow(base, t, &ms.t_ns) || ms.t_ns == MEM_NO_TIME)
		ms.t_ns = MEM_NO_TIME;
	m->cov.read += ms.n;
	/* a per-sample profile's lost samples: one Sample without a time
	 * and an address, whatever labels the cut asks for */
	if (k->timed && ms.t_ns == MEM_NO_TIME && !has_addr) {
		m->cov.lost += ms.n;
		return 0;
	}
	if (!merge_cut__keeps(cut, in, s, &m->counts.untimed))
		return 0;
	m->cov.kept += ms.n;
	return has_addr ? add_one(m, in, s, k, &ms) :
			  count_noaddr(m, in, s, k, ms.n);
}

/* Whether any sample of in has an address; whether any has a time. */
static bool any_addr(const struct pprofin *in, int64_t key)
{
	uint64_t a;

	for (size_t i = 0; key >= 0 && i < in->pr->n_sample; i++)
		if (num_label(in->pr->sample[i], key, &a))
			return true;
	return false;
}

int memrep__add(struct memrep *m, const struct pprofin *in,
		const struct merge_cut *cut, int64_t base, bool *has_addr,
		char *err, size_t errlen)
{
	const Perftools__Profiles__Profile *pr = in->pr;
	struct keys k = {
		.addr = find_str(in, "addr"),
		.weight = find_str(in, "weight"),
		.object = find_str(in, "data_object"),
		.pid = find_str(in, "pid"),
		.by = m->by ? find_str(in, m->by) : -1,
		.col = samples_column(in),
	};
	int ret;

	k.timed = pprofin__has_times(in);
	read_event(m, in);
	m->cov.files++;
	*has_addr = any_addr(in, k.addr);
	m->cov.files_addr += *has_addr;
	for (size_t i = 0; i < pr->n_sample; i++) {
		ret = add_sample(m, in, pr->sample[i], cut, &k,
				 pr->time_nanos - base);
		if (ret) {
			errbuf__set(err, errlen, "%s", strerror(-ret));
			return ret;
		}
	}
	/* in samples, as the coverage counts them */
	m->counts.samples = m->cov.read;
	m->counts.kept = m->cov.kept;
	return 0;
}
