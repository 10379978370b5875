/* A sample record of this process resolved the way the agent resolves
 * one: its process, its frames named in the location table, its labels;
 * what a consumer of resolved samples gets. */
#include "check.h"
#include "capture/resolver.h"
#include "kernel/ksymbolizer.h"
#include "out/pprof.h"
#include "proc/proctable.h"
#include "capture/labels.h"
#include "proc/ctxwatch.h"
#include "sym/loctab.h"
#include "sym/symbolizer.h"
#include "unwind/unwind.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline, used)) int rs_leaf(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3;
}

__attribute__((noinline, used)) int rs_caller(int x)
{
	__asm__ volatile("" ::: "memory");
	return rs_leaf(x) + 1;
}

struct parts {
	struct resolver_parts x;
	struct ksymbolizer *ks;
	struct labels_stats labels;
};

static bool parts_new(struct parts *ps, bool service)
{
	memset(ps, 0, sizeof(*ps));
	ps->ks = ksymbolizer__new(false);
	ps->x.procs = proctable__new();
	ps->x.lt = loctab__new();
	ps->x.cw = ctxwatch__new(NULL, NULL);
	ps->x.labels = &ps->labels;
	ps->x.service_label = service;
	if (!ps->ks || !ps->x.procs || !ps->x.lt || !ps->x.cw)
		return false;
	ps->x.uw = unwinder__new(ps->x.procs, TP_UNWIND_FP);
	ps->x.sym = symbolizer__new(ps->x.procs, ps->ks, ps->x.lt);
	return ps->x.uw && ps->x.sym;
}

static void parts_free(struct parts *ps)
{
	symbolizer__free(ps->x.sym);
	unwinder__free(ps->x.uw);
	ctxwatch__free(ps->x.cw);
	loctab__free(ps->x.lt);
	proctable__free(ps->x.procs);
	ksymbolizer__free(ps->ks);
}

/* A sample record of this thread: three user frames, leaf first. */
static struct {
	struct tp_sample s;
	uint64_t frames[3];
} rec;

static struct raw_sample raw_self(void)
{
	memset(&rec, 0, sizeof(rec));
	rec.s.type = TP_REC_SAMPLE;
	rec.s.pid = getpid();
	rec.s.tid = gettid();
	rec.s.cpu = 3;
	rec.s.time_ns = 123456789;
	rec.s.period = 1000000;
	memcpy(rec.s.comm, "worker-7", 9);
	rec.s.user_depth = 3;
	rec.frames[0] = (uintptr_t)rs_leaf + 1;
	rec.frames[1] = (uintptr_t)rs_caller + 2;	/* a return address */
	rec.frames[2] = 0x11;				/* in no mapping */
	return (struct raw_sample){ .s = &rec.s, .ctx = (uint8_t *)(&rec.s + 1),
				    .frames = rec.frames };
}

static const char *frame_name(const struct resolved_sample *s, size_t i)
{
	const struct loctab_location *l = loctab__location_at(s->lt,
							      s->locs[i]);

	if (!l->nlines)
		return NULL;
	return loctab__function_at(s->lt,
				   loctab__lines(s->lt, l)[0].function)->name;
}

static const struct pprof_label *label(const struct resolved_sample *s,
				       const char *key)
{
	for (size_t i = 0; i < s->nlabels; i++)
		if (!strcmp(s->labels[i].key, key))
			return &s->labels[i];
	return NULL;
}

/* The executable's name, which the process label has (cut at 63). */
static bool exe_name(char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	const char *base;

	if (n <= 0)
		return false;
	path[n] = '\0';
	base = strrchr(path, '/');
	snprintf(buf, len, "%s", base ? base + 1 : path);
	return true;
}

static void check_resolved(bool service)
{
	struct raw_sample raw = raw_self();
	const struct resolved_sample *s;
	const struct pprof_label *l;
	struct resolver *r;
	struct parts ps;
	char exe[PATH_MAX];

	CHECK(exe_name(exe, sizeof(exe)));
	CHECK(parts_new(&ps, service));
	r = resolver__new(&ps.x);
	CHECK(r);
	s = resolver__sample(r, &raw);
	CHECK(s->pid == (uint32_t)getpid() && s->tid == (uint32_t)gettid());
	CHECK(s->cpu == 3 && s->time_ns == 123456789 && s->period == 1000000);
	CHECK(s->lt == ps.x.lt);
	CHECK(s->nlocs == 3);
	CHECK(!strcmp(frame_name(s, 0), "rs_leaf"));
	CHECK(!strcmp(frame_name(s, 1), "rs_caller"));
	/* Unmapped: its address and no invented name. */
	CHECK(loctab__location_at(s->lt, s->locs[2])->nlines == 0);
	CHECK(loctab__location_at(s->lt, s->locs[2])->mapping == 0);
	/* The leaf as it is, the callers one byte back. */
	CHECK(loctab__location_at(s->lt, s->locs[0])->address ==
	      (uintptr_t)rs_leaf + 1);
	CHECK(loctab__location_at(s->lt, s->locs[1])->address ==
	      (uintptr_t)rs_caller + 1);

	l = label(s, "process");
	CHECK(l && l->str && !strncmp(l->str, exe, 63));
	l = label(s, "thread_name");
	CHECK(l && l->str && !strcmp(l->str, "worker-7"));
	l = label(s, "pid");
	CHECK(l && !l->str && l->num == getpid());
	l = label(s, "tid");
	CHECK(l && l->num == gettid());
	l = label(s, "cpu");
	CHECK(l && l->num == 3 && !strcmp(l->num_unit, "cpu"));
	l = label(s, "service");
	/* Without a process context, the service is the executable. */
	CHECK(service ? l && !strncmp(l->str, exe, 63) : !l);
	CHECK(s->nlabels == (service ? 6u : 5u));

	/* Seen again: the same location ids. */
	CHECK(resolver__sample(r, &raw)->locs[1] ==
	      loctab__find_location(ps.x.lt,
				    loctab__location_at(ps.x.lt,
							s->locs[1])->mapping,
				    (uintptr_t)rs_caller + 1));
	resolver__free(r);
	parts_free(&ps);
}

static void test_resolved(void)
{
	check_resolved(false);
}

static void test_resolved_service(void)
{
	check_resolved(true);
}

int main(void)
{
	RUN(test_resolved);
	RUN(test_resolved_service);
	resolver__free(NULL);
	CHECK_EXIT();
}
