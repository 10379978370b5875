// SPDX-License-Identifier: BSD-2-Clause
/* Per-process thread-context discovery and process-context snapshots. */
#include <dirent.h>
#include <signal.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proc/codemap.h"
#include "proc/ctxsnap.h"
#include "proc/procctx.h"
#include "util/hashmap.h"
#include "util/clock.h"
#include "sample_event.h"
#include "proc/ctxwatch.h"
#include "proc/tlsloc.h"

#define OTEL_SYMBOL "otel_thread_ctx_v1"
#define CL_SYMBOL "custom_labels_current_set"
#define CL_ABI_SYMBOL "custom_labels_abi_version"
#define CL_ABI_VERSION 1

#define MS (1000ull * 1000)
#define EXEC_DELAY_NS (50 * MS)		/* let ld.so map the libraries */
#define RETRY_NS (200 * MS)		/* symbol defined, GOT not resolved yet */
#define MAX_RETRIES 10
#define RECHECK_FIRST_NS (500 * MS)	/* no symbol: look again later... */
#define RECHECK_STARTING_NS (50 * MS)	/* ...sooner while it starts... */
/* ...later for a process this old when first looked at: it is no more
 * likely to load a library now than at any other time... */
#define RECHECK_OLD_NS (32000 * MS)
/* ...backing off up to this. Reading every process's maps every half
 * minute was a fifth of a 19 Hz agent's CPU; a library that maps later
 * is looked for as soon as a sample runs code outside the maps known
 * (ctxwatch__maps_changed), and this back-off only finds one whose code
 * no sample has caught. */
#define RECHECK_MAX_NS (256000 * MS)
#define RECHECK_GROWN_NS (2000 * MS)	/* ...and within this of a map change */
/* A recheck backed off this far may run up to half its back-off late: at
 * a wake-up that comes anyway (samples, a window end), or at one timer
 * for all those due meanwhile. On time, the rechecks of a host's hundreds
 * of processes would wake the agent at every tick. */
#define RECHECK_LAZY_NS (4000 * MS)
#define REFRESH_SCAN_NS (10 * MS)	/* least time between key-map re-reads
					   that must scan /proc/PID/maps */
#define CTX_POLL_NS (1000 * MS)		/* process context changed? */
#define CTX_POLL_YOUNG_NS (100 * MS)	/* ...sooner while a process starts */
#define YOUNG_NS (3000 * MS)		/* how long "starts" lasts */

struct pctx {
	uint32_t pid;
	bool found;		/* reported, and in force */
	struct pctx_counted {	/* already in procs_found, tag_procs and
				   schema_unknown: each pid once, exec or not */
		bool found, tags, schema;
	} counted;
	int retries;
	uint64_t due_ns;	/* next discovery; 0 = none planned */
	uint64_t slack_ns;	/* how much later than due_ns it may run */
	uint64_t recheck_ns;	/* current back-off for processes without one */
	uint64_t looked_ns;	/* the last discovery */
	uint64_t started_ns;	/* its start or last exec (CLOCK_MONOTONIC);
				   0 = unknown */
	uint64_t found_ns;	/* when discovery first found something */
	struct tp_tls_loc otel, custom;	/* where its threads keep theirs */
	struct tlsloc_memo memo;	/* its modules without either */
	struct ctxsnap snap;	/* the process context as last read */
};

#define CODE_GONE_MAX	32

/* A process gone, and what its code regions attributed. */
struct code_gone {
	uint32_t pid;
	char svc[64];
	uint64_t all, hit, wall, whit;
};

/* Processes whose exit was seen, by pid and start: the ring buffer can
 * give a sample after its process's exit event (a thread sampled while
 * it still ran its own exit in the kernel, after the last one out sent
 * the event). Such a sample must not bring the process back, to be
 * discovered, and counted, a second time. */
#define EXITED_MAX 64

struct ctxwatch {
	struct hashmap *procs;	/* pid -> struct pctx * */
	struct code_gone gone[CODE_GONE_MAX];
	size_t ngone;
	struct exited {
		uint32_t pid;
		uint64_t start_boot_ns;
	} exited[EXITED_MAX];	/* a ring: the newest EXITED_MAX */
	size_t nexited;
	char code_levels[256];	/* of the first table that had levels */
	ctxwatch_report_fn report;
	void *report_arg;
	struct ctxwatch_stats stats;
};

struct ctxwatch *ctxwatch__new(ctxwatch_report_fn report, void *arg)
{
	struct ctxwatch *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->procs = hashmap__new(0);
	if (!t->procs) {
		free(t);
		return NULL;
	}
	t->report = report;
	t->report_arg = arg;
	return t;
}

static void pctx_free(void *ptr)
{
	struct pctx *p = ptr;

	if (!p)
		return;
	ctxsnap__clear(&p->snap);
	free(p);
}

void ctxwatch__free(struct ctxwatch *t)
{
	if (!t)
		return;
	hashmap__free_values(t->procs, pctx_free);
	free(t);
}

static struct pctx *lookup(struct ctxwatch *t, uint32_t pid)
{
	uint64_t v;

	return hashmap__get(t->procs, &pid, sizeof(pid), &v) ?
		       (struct pctx *)(uintptr_t)v : NULL;
}

static struct pctx *create(struct ctxwatch *t, uint32_t pid)
{
	struct pctx *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	if (hashmap__put(t->procs, &pid, sizeof(pid), (uintptr_t)p)) {
		free(p);
		return NULL;
	}
	return p;
}

/* Keeps the attribution counts of a process going away, for the window's
 * comments and the summary; the oldest of CODE_GONE_MAX give way. */
static void keep_code_counts(struct ctxwatch *t, const struct pctx *p)
{
	struct code_gone *g;

	if (!p->snap.code)
		return;
	if (t->ngone == CODE_GONE_MAX)
		memmove(t->gone, t->gone + 1, --t->ngone * sizeof(*t->gone));
	g = &t->gone[t->ngone++];
	g->pid = p->pid;
	snprintf(g->svc, sizeof(g->svc), "%s",
		 p->snap.ctx.service_name ? p->snap.ctx.service_name : "");
	codemap__counts(p->snap.code, &g->all, &g->hit, &g->wall, &g->whit);
	if (!t->code_levels[0])
		snprintf(t->code_levels, sizeof(t->code_levels), "%s",
			 codemap__level_order(p->snap.code));
}

static void drop(struct ctxwatch *t, uint32_t pid)
{
	uint64_t v;

	if (!hashmap__del(t->procs, &pid, sizeof(pid), &v))
		return;
	keep_code_counts(t, (struct pctx *)(uintptr_t)v);
	if (((struct pctx *)(uintptr_t)v)->found && t->report)
		t->report(t->report_arg, pid, NULL);
	pctx_free((struct pctx *)(uintptr_t)v);
}

static void publish(struct ctxwatch *t, struct pctx *p)
{
	const struct ctxwatch_found f = { &p->otel, &p->custom, &p->snap };

	if (t->report && !t->report(t->report_arg, p->pid, &f))
		p->found = true;
}

/* procctx__read, counting the payloads it refuses (each once: it reports
 * the same payload as unchanged afterwards). */
static int read_ctx(struct ctxwatch *t, struct pctx *p)
{
	int ret = procctx__read(p->pid, &p->snap.ctx);

	if (ret == -ELOOP)
		t->stats.ctx_refused++;
	else if (ret == -EBADMSG)
		t->stats.ctx_malformed++;
	return ret;
}

/* Adds 1 to *stat the first time only: the counters count processes. */
static void count_once(bool *done, uint64_t *stat)
{
	if (!*done)
		++*stat;
	*done = true;
}

/* A process whose context names another thread-context layout (Go's
 * go_pprof_labels_v1, a future v2) is not read as OTEP 4947 records: its
 * otel_thread_ctx_v1, if any, may hold something else. Counted once. */
static void check_schema(struct ctxwatch *t, struct pctx *p)
{
	if (ctxsnap__schema_known(&p->snap) || !p->otel.kind)
		return;
	memset(&p->otel, 0, sizeof(p->otel));
	count_once(&p->counted.schema, &t->stats.schema_unknown);
	if (p->found)
		publish(t, p);
}

static void load_tags(struct ctxwatch *t, struct pctx *p)
{
	tagdecl__load(&p->snap.tags, &p->snap.ctx);
	if (p->snap.tags.reg)
		count_once(&p->counted.tags, &t->stats.tag_procs);
}

/* Reads the process context again (read_ctx's result); a new payload
 * brings its tag declaration and its schema into force. */
static int refresh_ctx(struct ctxwatch *t, struct pctx *p)
{
	int ret;

	p->snap.read_ns = clock__mono_ns();
	ret = read_ctx(t, p);
	if (ret == 0) {
		load_tags(t, p);
		check_schema(t, p);
	}
	return ret;
}

/* custom-labels v1 is only read when the process says it speaks v1. */
static bool custom_abi_ok(uint32_t pid)
{
	uint32_t v = 0;

	return !tlsloc__read_symbol(pid, CL_ABI_SYMBOL, &v, sizeof(v)) &&
	       v == CL_ABI_VERSION;
}

/* A process that started or exec'd moments ago may be a sample away from
 * having its libraries: ld.so maps them after the program's first
 * instructions, and a sample taken before finds no symbol. */
static bool starting(const struct pctx *p)
{
	return p->started_ns && clock__mono_ns() - p->started_ns < YOUNG_NS;
}

/* The first back-off of a process without either symbol. */
static uint64_t first_recheck(const struct pctx *p)
{
	if (starting(p))
		return RECHECK_STARTING_NS;
	if (p->started_ns &&
	    clock__mono_ns() - p->started_ns >= RECHECK_OLD_NS)
		return RECHECK_OLD_NS;
	return RECHECK_FIRST_NS;
}

/* The first mapping that can hold the process context (tlsloc_maps_fn). */
static void note_ctx_mapping(const struct procfs_map *m, void *arg)
{
	uint64_t *addr = arg;

	if (!*addr)
		*addr = procctx__mapping(m);
}

/* Reads the process context where discover's walk of the maps (walk: its
 * result) saw its mapping; no mapping seen, nothing to read, and the maps
 * are not read again to find that out. */
static void discover_ctx(struct ctxwatch *t, struct pctx *p, int walk,
			 uint64_t addr)
{
	if (!walk && !p->snap.ctx.header_addr) {
		if (!addr) {
			p->snap.read_ns = clock__mono_ns();
			return;
		}
		p->snap.ctx.header_addr = addr;
	}
	refresh_ctx(t, p);
}

static void discover(struct ctxwatch *t, struct pctx *p)
{
	struct tlsloc_query q[2] = {
		{ .symbol = OTEL_SYMBOL, .loc = &p->otel },
		{ .symbol = CL_SYMBOL, .loc = &p->custom },
	};
	uint64_t ctx_addr = 0;
	int walk, r1, r2;

	p->due_ns = 0;
	p->slack_ns = 0;
	p->looked_ns = clock__mono_ns();
	memset(&p->otel, 0, sizeof(p->otel));
	memset(&p->custom, 0, sizeof(p->custom));
	/* Both symbols and the process context's mapping: one read of the
	 * maps, each file opened at most once. */
	walk = tlsloc__find_all(p->pid, q, 2, note_ctx_mapping, &ctx_addr,
				&p->memo);
	r1 = walk ? walk : q[0].err;
	r2 = walk ? walk : q[1].err;
	if (r2 == 0 && !custom_abi_ok(p->pid)) {
		memset(&p->custom, 0, sizeof(p->custom));
		r2 = -ENOENT;
	}
	/* The process context (keys and tag declaration) is looked for on
	 * its own, by its mapping's name: a program that only tags registers
	 * publishes it without any thread-context symbol (statically linked,
	 * the linker leaves that symbol out). */
	discover_ctx(t, p, walk, ctx_addr);
	check_schema(t, p);	/* also when read before, by a sample */
	if (r1 == 0 && !p->otel.kind)
		r1 = -ENOENT;	/* refused by its schema, counted there */
	if (r1 == 0 || r2 == 0 || p->snap.tags.reg) {
		if (!p->found_ns)
			p->found_ns = clock__mono_ns();
		publish(t, p);
		count_once(&p->counted.found, &t->stats.procs_found);
		return;
	}
	/* Defined but not resolved yet (lazy binding, dlopen underway; ld.so
	 * relocating a starting process: a sanitized one took over 200 ms,
	 * its first samples all unlabelled meanwhile). */
	if ((r1 == -EAGAIN || r2 == -EAGAIN) && p->retries++ < MAX_RETRIES) {
		p->due_ns = clock__mono_ns() +
			    (starting(p) ? RECHECK_STARTING_NS : RETRY_NS);
		return;
	}
	/* Not there (yet): a library with it may be dlopen()ed later. */
	if (r1 != -ESRCH && r2 != -ESRCH) {
		p->recheck_ns = p->recheck_ns ? p->recheck_ns * 2 :
						first_recheck(p);
		if (p->recheck_ns > RECHECK_MAX_NS)
			p->recheck_ns = RECHECK_MAX_NS;
		p->due_ns = clock__mono_ns() + p->recheck_ns;
		p->slack_ns = p->recheck_ns >= RECHECK_LAZY_NS ?
				      p->recheck_ns / 2 : 0;
	}
	/* Count real failures, not processes without the symbols or gone. */
	if ((r1 != -ENOENT && r1 != -ESRCH) || (r2 != -ENOENT && r2 != -ESRCH))
		t->stats.locate_failed++;
}

/* CLOCK_MONOTONIC time of a CLOCK_BOOTTIME instant (0: unknown): the
 * clocks differ by the time the machine slept. */
static uint64_t boot_to_mono(uint64_t boot_ns)
{
	uint64_t mono_now = clock__mono_ns();
	uint64_t boot_now = clock__ns(CLOCK_BOOTTIME);

	if (!boot_ns || !boot_now)
		return 0;
	if (boot_ns > boot_now || boot_now - boot_ns > mono_now)
		return 0;
	return mono_now - (boot_now - boot_ns);
}

static bool seen_exit(const struct ctxwatch *t, uint32_t pid,
		   uint64_t start_boot_ns)
{
	if (!start_boot_ns)
		return false;
	for (size_t i = 0; i < EXITED_MAX; i++)
		if (t->exited[i].pid == pid &&
		    t->exited[i].start_boot_ns == start_boot_ns)
			return true;
	return false;
}

void ctxwatch__on_sample(struct ctxwatch *t, uint32_t pid,
			 uint64_t start_boot_ns)
{
	struct pctx *p;

	if (pid == 0 || lookup(t, pid) || seen_exit(t, pid, start_boot_ns))
		return;
	p = create(t, pid);
	if (!p)
		return;
	p->started_ns = boot_to_mono(start_boot_ns);
	discover(t, p);
}

void ctxwatch__maps_changed(struct ctxwatch *t, uint32_t pid)
{
	struct pctx *p = lookup(t, pid);
	/* Not sooner than this after the last look: a JIT keeps mapping. */
	uint64_t due = p ? p->looked_ns + RECHECK_GROWN_NS : 0;

	if (!p || p->found || (p->due_ns && p->due_ns <= due))
		return;
	p->retries = 0;
	p->recheck_ns = 0;
	p->due_ns = due;
	p->slack_ns = 0;
}

static struct pctx *schedule(struct ctxwatch *t, uint32_t pid,
			     uint64_t delay)
{
	struct pctx *p = lookup(t, pid);

	if (!p)
		p = create(t, pid);
	if (p && !p->found) {
		p->retries = 0;
		p->recheck_ns = 0;
		p->due_ns = clock__mono_ns() + delay;
		p->slack_ns = 0;
	}
	return p;
}

void ctxwatch__on_exec(struct ctxwatch *t, uint32_t pid)
{
	struct pctx *p = lookup(t, pid);
	struct pctx_counted counted;

	/* Only a process we track is looked at again at once: every exec on
	 * the machine would cost a discovery; others wait for a sample. */
	if (!p)
		return;
	counted = p->counted;
	drop(t, pid);		/* a new image: nothing found before holds */
	p = schedule(t, pid, EXEC_DELAY_NS);
	/* The counters count processes, not discoveries: a sample from
	 * before the exec, read after it, has often found the new image
	 * already (with -- COMMAND, always its first samples). */
	if (p) {
		p->counted = counted;
		p->started_ns = clock__mono_ns();
	}
}

void ctxwatch__on_exit(struct ctxwatch *t, uint32_t pid,
		       uint64_t start_boot_ns)
{
	t->exited[t->nexited++ % EXITED_MAX] =
		(struct exited){ pid, start_boot_ns };
	drop(t, pid);
}

/* A process context changes when keys, tags or names are added: poll its
 * 32-byte header now and then (published_at tells), and apply what changed:
 * a tag declaration, or a --label/--tag filter that can now be resolved. */
static void poll_context(struct ctxwatch *t, struct pctx *p, uint64_t now)
{
	uint64_t every = now - p->found_ns < YOUNG_NS ? CTX_POLL_YOUNG_NS :
							CTX_POLL_NS;

	/* Processes with a context symbol may publish their process context
	 * (keys, tags) after we found them: look for it too, not only at a
	 * mapping already known. A starting process is looked at more often:
	 * that is when it declares what it has. */
	if ((!p->snap.ctx.header_addr && !p->found) ||
	    now - p->snap.read_ns < every)
		return;
	if (refresh_ctx(t, p) != 0)
		return;
	t->stats.ctx_refreshes++;
	if (!p->found && !p->snap.tags.reg)
		return;
	publish(t, p);
	count_once(&p->counted.found, &t->stats.procs_found);
}

int ctxwatch__tick(struct ctxwatch *t)
{
	uint64_t now = clock__mono_ns(), v, next = UINT64_MAX;
	size_t it = 0;
	struct pctx *p;

	while (hashmap__next(t->procs, &it, NULL, NULL, &v)) {
		p = (struct pctx *)(uintptr_t)v;
		if (p->due_ns && p->due_ns <= now)
			discover(t, p);
		poll_context(t, p, now);
		if (p->due_ns && p->due_ns + p->slack_ns < next)
			next = p->due_ns + p->slack_ns;
	}
	if (next == UINT64_MAX)
		return -1;
	return next <= now ? 0 : (int)((next - now) / MS) + 1;
}

void ctxwatch__scan_all(struct ctxwatch *t)
{
	struct dirent *d;
	char *end;
	long pid;
	DIR *dir = opendir("/proc");

	if (!dir)
		return;
	while ((d = readdir(dir))) {
		pid = strtol(d->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		ctxwatch__on_sample(t, pid, 0);
	}
	closedir(dir);
}

/* Whether a name that a sample taken at sample_ns needs, and the snapshot
 * lacks, calls for reading the process context again (ctxwatch__refresh):
 * so no sample loses a label to a context read a moment too early. */
static bool reread_due(const struct pctx *p, uint64_t sample_ns)
{
	if (sample_ns < p->snap.read_ns)
		return false;
	return p->snap.ctx.header_addr ||
	       clock__mono_ns() - p->snap.read_ns >= REFRESH_SCAN_NS;
}

bool ctxwatch__refresh(struct ctxwatch *t, uint32_t pid, uint64_t sample_ns,
		       enum ctxsnap_miss miss)
{
	struct pctx *p = lookup(t, pid);

	if (!p || !miss || !reread_due(p, sample_ns))
		return false;
	if (miss == CTXSNAP_MISS_KEY)
		t->stats.key_refreshes++;
	if (refresh_ctx(t, p) != 0)
		return false;
	if (miss == CTXSNAP_MISS_TAG)
		t->stats.ctx_refreshes++;
	return true;
}

bool ctxwatch__reread(struct ctxwatch *t, uint32_t pid)
{
	struct pctx *p = lookup(t, pid);

	if (!p || !p->found || refresh_ctx(t, p) != 0)
		return false;
	t->stats.ctx_refreshes++;
	publish(t, p);
	return true;
}

struct codemap *ctxwatch__codemap(struct ctxwatch *t, uint32_t pid)
{
	struct pctx *p = lookup(t, pid);
	const struct procctx_attr *a;

	if (!p)
		return NULL;
	if (p->snap.code)
		return p->snap.code;
	a = procctx__attr(&p->snap.ctx, TP_CODE_ATTR);
	if (!a || a->str || a->list || a->num <= 0)
		return NULL;
	p->snap.code = codemap__new(pid, (uint64_t)a->num);
	return p->snap.code;
}

/* How often a sampled process's table is read when nothing else reads it:
 * what it drops is known within this, so few of the samples resolved
 * after it exits are left unverified. */
#define CODE_TICK_NS (20ull * 1000 * 1000)

void ctxwatch__code_tick(struct ctxwatch *t, struct codemap_stats *st)
{
	uint64_t now = clock__mono_ns(), v;
	size_t iter = 0;

	while (hashmap__next(t->procs, &iter, NULL, NULL, &v)) {
		struct pctx *p = (struct pctx *)(uintptr_t)v;

		if (p->snap.code)
			codemap__tick(p->snap.code, now, CODE_TICK_NS, st);
	}
}

/* One process's attribution counts, as code_shares() prints them. */
static size_t share_text(char *buf, size_t len, bool first, uint32_t pid,
			 const char *svc, uint64_t n, uint64_t k)
{
	int w;

	if (!n || !len)
		return 0;
	w = snprintf(buf, len, "%spid %u%s%s%s: %.1f%% of %" PRIu64
		     " samples attributed", first ? "" : "; ", pid,
		     svc && *svc ? " (" : "", svc && *svc ? svc : "",
		     svc && *svc ? ")" : "", 100.0 * k / n, n);
	return w < 0 ? 0 : (size_t)w < len ? (size_t)w : len - 1;
}

size_t ctxwatch__code_shares(struct ctxwatch *t, bool window, char *buf,
			     size_t len)
{
	uint64_t all, hit, wall, whit;
	size_t iter = 0, named = 0, off = 0, w;
	uint64_t v;

	if (len)
		buf[0] = '\0';
	while (hashmap__next(t->procs, &iter, NULL, NULL, &v)) {
		struct pctx *p = (struct pctx *)(uintptr_t)v;

		if (!p->snap.code)
			continue;
		codemap__counts(p->snap.code, &all, &hit, &wall, &whit);
		if (window)
			codemap__window_reset(p->snap.code);
		w = share_text(buf + off, len - off, !named, p->pid,
			       p->snap.ctx.service_name, window ? wall : all,
			       window ? whit : hit);
		off += w;
		named += w > 0;
	}
	/* Processes gone since: record's one window ends after its command
	 * exited. */
	for (size_t i = 0; i < t->ngone; i++) {
		struct code_gone *g = &t->gone[i];

		w = share_text(buf + off, len - off, !named, g->pid, g->svc,
			       window ? g->wall : g->all,
			       window ? g->whit : g->hit);
		if (window)
			g->wall = g->whit = 0;
		off += w;
		named += w > 0;
	}
	return named;
}

const char *ctxwatch__code_levels(struct ctxwatch *t)
{
	size_t iter = 0;
	uint64_t v;

	/* Latched: the processes that had them may be gone by the time a
	 * window's comments are written. */
	while (!t->code_levels[0] &&
	       hashmap__next(t->procs, &iter, NULL, NULL, &v)) {
		struct pctx *p = (struct pctx *)(uintptr_t)v;

		if (p->snap.code)
			snprintf(t->code_levels, sizeof(t->code_levels), "%s",
				 codemap__level_order(p->snap.code));
	}
	return t->code_levels;
}

const struct ctxsnap *ctxwatch__snapshot(struct ctxwatch *t, uint32_t pid)
{
	struct pctx *p = lookup(t, pid);

	return p ? &p->snap : NULL;
}

void ctxwatch__sweep(struct ctxwatch *t)
{
	uint32_t gone[256];
	size_t it = 0, n = 0;
	uint64_t v;

	/* A few hundred at a time: the next sweep takes the rest. */
	while (n < 256 && hashmap__next(t->procs, &it, NULL, NULL, &v)) {
		const struct pctx *p = (const struct pctx *)(uintptr_t)v;

		if (kill(p->pid, 0) && errno == ESRCH)
			gone[n++] = p->pid;
	}
	for (size_t i = 0; i < n; i++)
		drop(t, gone[i]);
}

const char *ctxwatch__service(struct ctxwatch *t, uint32_t pid)
{
	struct pctx *p = lookup(t, pid);

	return p ? p->snap.ctx.service_name : NULL;
}

const struct ctxwatch_stats *ctxwatch__stats(const struct ctxwatch *t)
{
	return &t->stats;
}
