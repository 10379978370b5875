// SPDX-License-Identifier: BSD-2-Clause
/* Symbol files shared by build ID, with their debug files and DWARF. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "sym/debuginfod.h"
#include "sym/elfsym.h"
#include "util/hashmap.h"
#include "sym/symfile.h"
#include "proc/targetfile.h"
#include "util/clock.h"
#include "util/grow.h"
#include "util/sort.h"

#define FRAMES_MAX 64

struct symfile {
	unsigned int refs;
	struct elfsym *bin;		/* the binary's own symbols */
	struct elfsym *dbg;		/* its debug file's, when stripped */
	char *dwarf_path;		/* the file holding the DWARF, or NULL */
	uint64_t dwarf_dev, dwarf_ino;	/* ... as it was when found */
	bool dwarf_follow;		/* found in a debug directory */
	struct dwarf_file *dw;		/* open, or NULL */
	uint64_t dw_bytes;
	uint64_t dw_opened_ns;		/* when dw was opened */
	uint64_t dw_retry_ns;		/* not opened again before then */
	uint64_t dw_errors_seen;
	bool dw_failed;			/* do not try to open it again... */
	bool dw_gone;			/* ...unless by another path: the
					   file is no longer at this one */
	uint64_t last_use;
	uint64_t sym_bytes;		/* what bin and dbg hold */
	uint64_t idle_since_ns;		/* when refs fell to 0 */
};

struct symcache {
	struct hashmap *files;		/* key -> struct symfile * */
	struct debuginfo_stats *st;
	uint64_t tick;
	uint64_t budget;		/* bytes of DWARF sections */
	uint64_t dw_restart_ns;		/* a handle's age when reopened */
	uint64_t sym_max;		/* one file's symbol tables */
	bool budget_set;		/* by TAGPROF_DWARF_MAX_MB */
	uint64_t dw_bytes;
	size_t dw_open;
	struct debuginfod *fetch;	/* NULL: no servers */
	uint64_t debug_gen;		/* debug files attached late */
	/* files no binary refers to (refs 0), kept for the next user */
	size_t idle;
	uint64_t idle_bytes;		/* their sym_bytes */
	struct symcache_keep keep;	/* and their bounds */
};

struct symcache *symcache__new(struct debuginfo_stats *stats)
{
	struct symcache *c = calloc(1, sizeof(*c));
	const char *env = getenv("TAGPROF_DWARF_MAX_MB");
	char *end;
	unsigned long long mb;

	if (!c)
		return NULL;
	c->files = hashmap__new(0);
	if (!c->files) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	c->st = stats;
	c->budget = SYMCACHE_DWARF_BUDGET;
	c->dw_restart_ns = SYMCACHE_DWARF_RESTART_NS;
	c->keep = (struct symcache_keep){ SYMCACHE_KEEP_NS, SYMCACHE_KEEP_FILES,
					  SYMCACHE_KEEP_BYTES };
	if (env && *env) {
		errno = 0;
		mb = strtoull(env, &end, 10);
		if (!errno && !*end && mb < (1ull << 40)) {
			c->budget = mb << 20;
			c->budget_set = true;
		}
	}
	return c;
}

void symcache__set_memory(struct symcache *c, uint64_t max_memory)
{
	if (!max_memory)
		return;
	c->sym_max = max_memory / SYMCACHE_SYMBOLS_SHARE;
	c->keep.bytes = max_memory / SYMCACHE_KEEP_SHARE;
	if (c->budget_set)
		return;
	c->budget = max_memory / SYMCACHE_DWARF_SHARE;
	if (c->budget > SYMCACHE_DWARF_BUDGET)
		c->budget = SYMCACHE_DWARF_BUDGET;
}

static void dwarf_close(struct symcache *c, struct symfile *sf)
{
	if (!sf->dw)
		return;
	dwarf_file__close(sf->dw);
	sf->dw = NULL;
	c->dw_bytes -= sf->dw_bytes;
	c->dw_open--;
	sf->dw_bytes = 0;
	sf->dw_errors_seen = 0;
}

static void symfile_free(struct symcache *c, struct symfile *sf)
{
	if (!sf)
		return;
	dwarf_close(c, sf);
	elfsym__free(sf->bin);
	elfsym__free(sf->dbg);
	free(sf->dwarf_path);
	free(sf);
}

void symcache__free(struct symcache *c)
{
	size_t it = 0;
	uint64_t v;

	if (!c)
		return;
	/* The worker first: a debug file it hands over is freed with it. */
	debuginfod__free(c->fetch);
	while (hashmap__next(c->files, &it, NULL, NULL, &v))
		symfile_free(c, (struct symfile *)(uintptr_t)v);
	hashmap__free(c->files);
	free(c);
}

int symcache__set_debuginfod(struct symcache *c, const char *urls, char *err,
			     size_t errlen)
{
	if (!debuginfod__urls(urls))
		return 0;
	c->fetch = debuginfod__new(debuginfod__urls(urls), c->sym_max, err,
				   errlen);
	return c->fetch ? 0 : -1;
}

/* What sf's symbol tables hold: its binary's and its debug file's. */
static uint64_t sym_bytes_of(const struct symfile *sf)
{
	return elfsym__bytes(sf->bin) + elfsym__bytes(sf->dbg);
}

/* sf's symbols changed: its count, and the unused files' if it is one. */
static void recount_bytes(struct symcache *c, struct symfile *sf)
{
	uint64_t bytes = sym_bytes_of(sf);

	if (!sf->refs)
		c->idle_bytes = c->idle_bytes - sf->sym_bytes + bytes;
	sf->sym_bytes = bytes;
}

/* Takes the debug file dbg, found at path, for sf: its symbols when sf is
 * stripped, its DWARF when sf has none. Owns dbg and path. follow: path
 * is in a host debug directory (debuginfo.h). */
static void use_debug_file(struct symfile *sf, struct elfsym *dbg, char *path,
			   bool follow)
{
	if (!elfsym__has_dwarf(sf->bin) && elfsym__has_dwarf(dbg)) {
		free(sf->dwarf_path);
		sf->dwarf_path = path;
		path = NULL;
		sf->dwarf_follow = follow;
		sf->dw_failed = false;
		elfsym__file_id(dbg, &sf->dwarf_dev, &sf->dwarf_ino);
	}
	free(path);
	/* Symbols of the debug file only matter for a stripped binary. */
	if (elfsym__has_symtab(sf->bin) && elfsym__count(sf->bin)) {
		elfsym__free(dbg);
		return;
	}
	elfsym__free(sf->dbg);
	sf->dbg = dbg;
}

/* Asks the servers for the debug file of build ID id, counting what could
 * not even be asked. */
static void ask_server(struct symcache *c, const char *id)
{
	int err = debuginfod__request(c->fetch, id);

	if (!err)
		c->st->fetch_asked++;
	else if (err != -EEXIST)
		c->st->fetch_not_asked++;
}

/* Loads the binary, finds its debug file when it lacks a symbol table or
 * DWARF, and notes where the DWARF is. */
static struct symfile *symfile_load(struct symcache *c,
				    const struct symfile_source *src)
{
	struct symfile *sf = calloc(1, sizeof(*sf));
	struct debug_target t = { 0 };
	struct elfsym *dbg;
	char *dbg_path = NULL;
	bool dbg_follow = false;
	uint64_t t0 = clock__mono_ns(), ms;
	const char *id;
	int err;

	if (!sf) {
		errno = ENOMEM;
		return NULL;
	}
	sf->bin = elfsym__open_fd(src->fd, c->sym_max);
	if (!sf->bin)
		goto fail;
	/* The file may have been replaced since its build ID was read. */
	id = elfsym__build_id(sf->bin);
	if (src->build_id && (!id || strcmp(id, src->build_id))) {
		errno = ESTALE;
		goto fail;
	}
	/* DWARF is opened when first needed: by path again, and only if it
	 * is still the file read now. */
	if (elfsym__has_dwarf(sf->bin)) {
		sf->dwarf_path = strdup(src->path);
		elfsym__file_id(sf->bin, &sf->dwarf_dev, &sf->dwarf_ino);
		if (!sf->dwarf_path)
			sf->dw_failed = true;
	}
	if (!elfsym__has_symtab(sf->bin) || !elfsym__has_dwarf(sf->bin)) {
		t.root = src->root;
		t.path = src->orig_path;
		t.build_id = id;
		t.debuglink = elfsym__debuglink(sf->bin, &t.crc);
		if (elfsym__debuglink_path(sf->bin))
			c->st->debug_link_path++;
		t.dev = src->dev;
		t.ino = src->ino;
		t.sym_max = c->sym_max;
		dbg = debuginfo__find(&t, &dbg_path, &dbg_follow, c->st);
		if (dbg)
			use_debug_file(sf, dbg, dbg_path, dbg_follow);
		else if (id && c->fetch)
			/* In the background; symcache__collect takes it. */
			ask_server(c, id);
		if (!dbg && !elfsym__has_symtab(sf->bin))
			c->st->debug_missing++;
	}
	if (elfsym__over_budget(sf->bin) || elfsym__over_budget(sf->dbg))
		c->st->symbols_over_budget++;
	/* Counted here, not by recount_bytes: refs is 0 until it is in the
	 * cache, but the file is not an unused one. */
	sf->sym_bytes = sym_bytes_of(sf);
	c->st->files++;
	ms = (clock__mono_ns() - t0) / 1000000;
	c->st->load_ms += ms;
	if (ms > c->st->load_max_ms)
		c->st->load_max_ms = ms;
	return sf;
fail:
	err = errno;
	symfile_free(c, sf);
	errno = err;
	return NULL;
}

/* A file no binary referred to is used again, or freed. */
static void leave_idle(struct symcache *c, const struct symfile *sf)
{
	c->idle--;
	c->idle_bytes -= sf->sym_bytes;
}

/* A file's own DWARF is opened by the path the file was found at: a
 * process's /proc/PID/map_files/..., which goes with that process. The
 * latest user's path is the one that still works when the DWARF is opened
 * (first needed, or again after it was closed for the budget). */
static void take_dwarf_path(struct symfile *sf,
			    const struct symfile_source *src)
{
	char *path;

	if (sf->dw || !sf->dwarf_path || !elfsym__has_dwarf(sf->bin) ||
	    (sf->dw_failed && !sf->dw_gone) || !strcmp(src->path, sf->dwarf_path))
		return;
	path = strdup(src->path);
	if (!path)
		return;
	free(sf->dwarf_path);
	sf->dwarf_path = path;
	sf->dwarf_dev = src->dev;
	sf->dwarf_ino = src->ino;
	sf->dw_failed = sf->dw_gone = false;
}

/* Cache key: the build ID, else the file itself. */
static int make_key(const struct symfile_source *src, char *key, size_t len)
{
	int n;

	if (src->build_id && *src->build_id)
		n = snprintf(key, len, "id:%s", src->build_id);
	else
		n = snprintf(key, len, "file:%" PRIx64 ":%" PRIu64, src->dev,
			     src->ino);
	return n > 0 && (size_t)n < len ? n : -ENAMETOOLONG;
}

struct symfile *symcache__get(struct symcache *c,
			      const struct symfile_source *src)
{
	struct symfile_source opened;
	char key[PATH_MAX + 96];
	struct symfile *sf;
	struct stat st;
	uint64_t v;
	int n, fd = -1;

	if (!src->ino) {
		/* A file by path alone: opened the one way (targetfile.h). */
		fd = targetfile__open(src->path, NULL, &st);
		if (fd < 0) {
			errno = -fd;
			return NULL;
		}
		opened = *src;
		opened.fd = fd;
		opened.dev = targetfile__dev(st.st_dev);
		opened.ino = st.st_ino;
		src = &opened;
	}
	n = make_key(src, key, sizeof(key));
	if (n < 0) {
		errno = -n;
		sf = NULL;
		goto out;
	}
	if (hashmap__get(c->files, key, n, &v)) {
		sf = (struct symfile *)(uintptr_t)v;
		if (!sf->refs++) {
			leave_idle(c, sf);
			c->st->unused_reused++;
		}
		c->st->shared++;
		take_dwarf_path(sf, src);
		goto out;
	}
	sf = symfile_load(c, src);
	if (sf && hashmap__put(c->files, key, n, (uintptr_t)sf)) {
		symfile_free(c, sf);
		sf = NULL;
		errno = ENOMEM;
	}
	if (sf)
		sf->refs = 1;
out:
	if (fd >= 0) {
		n = errno;
		close(fd);
		errno = n;
	}
	return sf;
}

void symcache__put(struct symcache *c, struct symfile *sf)
{
	if (sf && sf->refs && !--sf->refs) {
		sf->idle_since_ns = clock__mono_ns();
		c->idle++;
		c->idle_bytes += sf->sym_bytes;
	}
}

void symcache__set_keep(struct symcache *c, const struct symcache_keep *k)
{
	c->keep = *k;
}

/* An unused file, and its key, for the sweep. */
struct idle_file {
	struct symfile *sf;
	void *key;
	size_t len;
};

/* Longest unused first. */
static int idle_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct idle_file *)a)->sf->idle_since_ns;
	uint64_t y = ((const struct idle_file *)b)->sf->idle_since_ns;

	return x < y ? -1 : x > y;
}

/* The unused files with a copy of their keys (a map must not change while
 * it is iterated); fewer when memory runs out. */
static size_t collect_idle(struct symcache *c, struct idle_file **out)
{
	struct idle_file *v = NULL;
	size_t it = 0, n = 0, cap = 0, len;
	const void *key;
	uint64_t val;

	while (hashmap__next(c->files, &it, &key, &len, &val)) {
		struct symfile *sf = (struct symfile *)(uintptr_t)val;

		if (sf->refs)
			continue;
		if (grow__array(&v, &cap, n + 1, sizeof(*v), 16))
			break;
		v[n].key = malloc(len);
		if (!v[n].key)
			break;
		memcpy(v[n].key, key, len);
		v[n].len = len;
		v[n++].sf = sf;
	}
	*out = v;
	return n;
}

/* Whether the longest unused file goes: too old, or too many kept. */
static bool over_keep(const struct symcache *c, const struct symfile *oldest,
		      uint64_t now)
{
	return now - oldest->idle_since_ns >= c->keep.ns ||
	       c->idle > c->keep.files || c->idle_bytes > c->keep.bytes;
}

void symcache__set_dwarf_restart(struct symcache *c, uint64_t ns)
{
	c->dw_restart_ns = ns;
}

/* Closes the DWARF handles open for dw_restart_ns: the next lookup opens
 * them afresh, without the state libdw kept of the lookups before. */
static void restart_dwarf(struct symcache *c, uint64_t now)
{
	struct symfile *sf;
	size_t it = 0;
	uint64_t v;

	while (hashmap__next(c->files, &it, NULL, NULL, &v)) {
		sf = (struct symfile *)(uintptr_t)v;
		if (sf->dw && now - sf->dw_opened_ns >= c->dw_restart_ns) {
			dwarf_close(c, sf);
			c->st->dwarf_restarted++;
		}
	}
}

void symcache__sweep(struct symcache *c)
{
	uint64_t now = clock__mono_ns(), v;
	struct idle_file *idle;
	size_t n, i;

	restart_dwarf(c, now);
	n = collect_idle(c, &idle);
	sort__array(idle, n, sizeof(*idle), idle_cmp);
	for (i = 0; i < n && over_keep(c, idle[i].sf, now); i++) {
		if (!hashmap__del(c->files, idle[i].key, idle[i].len, &v))
			continue;
		leave_idle(c, idle[i].sf);
		symfile_free(c, idle[i].sf);
		c->st->unused_freed++;
	}
	for (i = 0; i < n; i++)
		free(idle[i].key);
	free(idle);
}

/* Counts how a fetch ended. */
static void count_outcome(struct debuginfo_stats *st,
			  enum debuginfod_outcome o)
{
	switch (o) {
	case DEBUGINFOD_FETCHED:
		st->fetch_fetched++;
		break;
	case DEBUGINFOD_NOT_FOUND:
		st->fetch_not_found++;
		break;
	case DEBUGINFOD_TIMED_OUT:
		st->fetch_timed_out++;
		break;
	case DEBUGINFOD_REFUSED:
		st->fetch_refused++;
		break;
	case DEBUGINFOD_FAILED:
		st->fetch_failed++;
		break;
	case DEBUGINFOD_ABANDONED:
		break;
	}
}

/* The cached file of build ID id, or NULL. */
static struct symfile *find_build_id(const struct symcache *c, const char *id)
{
	char key[DEBUGINFOD_ID_MAX + 8];
	uint64_t v;
	int n = snprintf(key, sizeof(key), "id:%s", id);

	if (n < 0 || (size_t)n >= sizeof(key) ||
	    !hashmap__get(c->files, key, n, &v))
		return NULL;
	return (struct symfile *)(uintptr_t)v;
}

size_t symcache__collect(struct symcache *c)
{
	struct debuginfod_result r;
	struct symfile *sf;
	size_t n = 0;

	while (c->fetch && debuginfod__take(c->fetch, &r)) {
		count_outcome(c->st, r.outcome);
		sf = r.syms ? find_build_id(c, r.build_id) : NULL;
		/* Swept meanwhile, or named another way since. */
		if (sf && !symfile__has_debug_file(sf)) {
			use_debug_file(sf, r.syms, r.path, false);
			recount_bytes(c, sf);
			r.syms = NULL;
			r.path = NULL;
			n++;
		}
		debuginfod_result__free(&r);
	}
	c->debug_gen += n;
	return n;
}

uint64_t symcache__debug_gen(const struct symcache *c)
{
	return c->debug_gen;
}

struct symfile *symcache__find(const struct symcache *c, const char *build_id)
{
	return build_id ? find_build_id(c, build_id) : NULL;
}

size_t symcache__count(const struct symcache *c)
{
	return hashmap__size(c->files);
}

size_t symcache__unused(const struct symcache *c, uint64_t *bytes)
{
	if (bytes)
		*bytes = c->idle_bytes;
	return c->idle;
}

uint64_t symcache__dwarf_bytes(const struct symcache *c)
{
	return c->dw_bytes;
}

struct elfsym *symfile__elfsym(const struct symfile *sf)
{
	return sf ? sf->bin : NULL;
}

const char *symfile__build_id(const struct symfile *sf)
{
	return sf ? elfsym__build_id(sf->bin) : NULL;
}

int symfile__offset_to_vaddr(const struct symfile *sf, uint64_t file_offset,
			     uint64_t *vaddr)
{
	return sf ? elfsym__offset_to_vaddr(sf->bin, file_offset, vaddr) :
		    -ENOENT;
}

bool symfile__has_dwarf(const struct symfile *sf)
{
	return sf && sf->dwarf_path && !sf->dw_failed;
}

bool symfile__has_debug_file(const struct symfile *sf)
{
	return sf && (sf->dbg || (sf->dwarf_path && !elfsym__has_dwarf(sf->bin)));
}

/* Closes the least recently used handle other than keep, among those open
 * for SYMCACHE_DWARF_MIN_OPEN_NS; false if none. A younger handle stays:
 * two files in use whose DWARF together passes the budget would otherwise
 * close and read each other again at each new address (a sanitized agent
 * profiling itself read 115 MB in 2 s, its CPU all spent on it). */
static bool evict_one(struct symcache *c, const struct symfile *keep,
		      uint64_t now)
{
	struct symfile *lru = NULL, *sf;
	size_t it = 0;
	uint64_t v;

	while (hashmap__next(c->files, &it, NULL, NULL, &v)) {
		sf = (struct symfile *)(uintptr_t)v;
		if (sf->dw && sf != keep &&
		    now - sf->dw_opened_ns >= SYMCACHE_DWARF_MIN_OPEN_NS &&
		    (!lru || sf->last_use < lru->last_use))
			lru = sf;
	}
	if (!lru)
		return false;
	dwarf_close(c, lru);
	c->st->dwarf_evicted++;
	return true;
}

static bool over_budget(const struct symcache *c)
{
	return c->dw_bytes > c->budget || c->dw_open > SYMCACHE_DWARF_OPEN_MAX;
}

static void dwarf_open(struct symcache *c, struct symfile *sf)
{
	uint64_t bytes = 0, now = clock__mono_ns();
	int err;

	if (!c->budget) {
		sf->dw_failed = true;
		return;
	}
	if (now < sf->dw_retry_ns) {
		c->st->dwarf_deferred++;
		return;
	}
	err = dwarf_file__open(sf->dwarf_path, &(struct targetfile_want){
				.dev = sf->dwarf_dev, .ino = sf->dwarf_ino,
				.follow = sf->dwarf_follow },
			       c->budget, &sf->dw, &bytes);
	if (err) {
		sf->dw_failed = true;
		sf->dw_gone = err == -ENOENT || err == -ESTALE;
		if (err == -E2BIG)
			c->st->dwarf_too_big++;
		else if (err == -ESTALE)
			c->st->dwarf_changed++;
		else if (err == -EXDEV)
			c->st->dwarf_external++;
		else if (err != -ENOENT && err != -ENOMEM)
			c->st->dwarf_errors++;
		return;
	}
	c->st->dwarf_opened++;
	sf->dw_bytes = bytes;
	sf->dw_opened_ns = now;
	c->dw_bytes += bytes;
	c->dw_open++;
	while (over_budget(c) && evict_one(c, sf, now))
		;
	if (!over_budget(c))
		return;
	/* The others were opened just now: this one waits its turn, named
	 * by its symbols alone meanwhile. */
	dwarf_close(c, sf);
	sf->dw_retry_ns = now + SYMCACHE_DWARF_MIN_OPEN_NS;
	c->st->dwarf_deferred++;
}

size_t symfile__lookup(struct symcache *c, struct symfile *sf, uint64_t vaddr,
		       struct symframe *out, size_t max)
{
	struct dwframe f[FRAMES_MAX];
	const char *name = NULL;
	size_t n = 0, i;
	uint64_t errs;

	if (!sf || !max)
		return 0;
	sf->last_use = ++c->tick;
	if (sf->dbg)
		name = elfsym__lookup(sf->dbg, vaddr, NULL);
	if (!name)
		name = elfsym__lookup(sf->bin, vaddr, NULL);
	if (sf->dwarf_path && !sf->dw_failed && !sf->dw)
		dwarf_open(c, sf);
	if (sf->dw) {
		n = dwarf_file__lookup(sf->dw, vaddr, f,
				       max < FRAMES_MAX ? max : FRAMES_MAX);
		errs = dwarf_file__errors(sf->dw);
		if (errs > sf->dw_errors_seen) {
			c->st->dwarf_errors += errs - sf->dw_errors_seen;
			sf->dw_errors_seen = errs;
		}
	}
	for (i = 0; i < n; i++)
		out[i] = (struct symframe){ f[i].name, f[i].file, f[i].line };
	if (!n) {
		if (!name)
			return 0;
		out[0] = (struct symframe){ name, NULL, 0 };
		return 1;
	}
	/* The function holding the code is named as without DWARF. */
	if (name)
		out[n - 1].name = name;
	return n;
}
