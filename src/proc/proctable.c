// SPDX-License-Identifier: BSD-2-Clause
/* Process table: /proc/PID/maps per sampled process, binaries shared;
 * the files trusted for them are symtrust.c's, the JIT maps jitmap.c's. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/jitdumpfile.h"
#include "proc/jitmap.h"
#include "proc/procfs.h"
#include "proc/proctable.h"
#include "proc/symtrust.h"
#include "sym/elfsym.h"
#include "sym/symfile.h"
#include "util/clock.h"
#include "util/grow.h"
#include "util/hashmap.h"
#include "util/sortedrange.h"

/* An address outside every known mapping reads the maps again: a library
 * may have been loaded since. Not more often than RELOAD_MIN_NS, and while
 * reads keep finding nothing at such addresses (the frame-pointer chain of
 * code built without frame pointers is full of them), half as often each
 * time, down to once in RELOAD_MAX_NS: reading a process's maps is a few
 * hundred microseconds of system calls, not to be spent per sample.
 * A miss in a sample taken after the last read, while no read has come
 * back empty, is the common case of a process that mapped code after it
 * was first seen (a JIT's first code): that reads again after
 * RELOAD_NEW_NS, or the first 200 ms of the new code would go unnamed. */
#define RELOAD_NEW_NS (10ull * 1000 * 1000)
#define RELOAD_MIN_NS (200ull * 1000 * 1000)
#define RELOAD_MAX_NS (3200ull * 1000 * 1000)
#define MAX_MAPS 65536		/* bound on what one hostile maps file costs */
/* Shares of the memory bound (the agent's --max-memory): all perf maps
 * held, and one process's. */
#define PERFMAPS_SHARE		4	/* a quarter */
#define PERFMAP_PROC_SHARE	16
/* All processes' executable mappings: a process can have 65530 of them,
 * 3.5 MiB of entries, so a few dozen would fill any bound. */
#define MAPS_SHARE		4
/* record has no --max-memory: its budgets are those of this bound. */
#define RECORD_MEMORY		(512ull << 20)

struct proctable {
	struct hashmap *by_pid;		/* pid -> struct proc * */
	struct hashmap *binaries;	/* "dev:ino:path" -> struct binary * */
	struct symcache *symcache;	/* symbol files by build ID */
	uint64_t maps_ver;		/* last proc.maps_ver given out */
	bool keep_data;			/* every mapping too: proc.data */
	struct proctable_stats stats;
	long clk_tck;
};

struct proctable *proctable__new(void)
{
	struct proctable *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->by_pid = hashmap__new(0);
	t->binaries = hashmap__new(0);
	t->symcache = symcache__new(&t->stats.sym);
	t->clk_tck = sysconf(_SC_CLK_TCK);
	if (!t->by_pid || !t->binaries || !t->symcache || t->clk_tck <= 0) {
		proctable__free(t);
		errno = ENOMEM;
		return NULL;
	}
	proctable__set_memory(t, 0);
	return t;
}

void proctable__set_memory(struct proctable *t, uint64_t max_memory)
{
	if (!max_memory)
		max_memory = RECORD_MEMORY;
	t->stats.perfmaps_budget = max_memory / PERFMAPS_SHARE;
	t->stats.maps_budget = max_memory / MAPS_SHARE;
	symcache__set_memory(t->symcache, max_memory);
	t->stats.perfmap_proc_budget = max_memory / PERFMAP_PROC_SHARE;
}

/* What a binary's record costs: itself, its path and name, its key. */
static uint64_t binary_bytes(const char *path)
{
	return sizeof(struct binary) + 3 * (strlen(path) + 1) + 64;
}

static void binary_free(void *ptr)
{
	struct binary *b = ptr;

	if (!b)
		return;
	symcache__put(b->cache, b->sf);
	if (b->owner)
		b->owner->stats.maps_bytes -= binary_bytes(b->path);
	free(b->path);
	free(b->name);
	free(b);
}

/* Maps hold references on their binaries, so unused ones can be freed. */
static void unref_maps(struct proc_map *maps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (maps[i].bin && maps[i].bin->refs)
			maps[i].bin->refs--;
}

static void proc_free(void *ptr)
{
	struct proc *p = ptr;

	if (!p)
		return;
	unref_maps(p->maps, p->nmaps);
	free(p->maps);
	if (p->owner)
		p->owner->stats.maps_bytes -= p->nmaps * sizeof(*p->maps) +
					      p->data.bytes;
	datamaps__free(&p->data);
	jitmap__drop(&p->jitmap, p->owner ? &p->owner->stats : NULL);
	jitdumpfile__free(p->jitdump, p->owner ? &p->owner->stats : NULL);
	free(p);
}

void proctable__free(struct proctable *t)
{
	if (!t)
		return;
	hashmap__free_values(t->by_pid, proc_free);
	hashmap__free_values(t->binaries, binary_free);
	symcache__free(t->symcache);
	free(t);
}

/* Shared binary record for a mapped file; created on first sight. */
static struct binary *binary_get(struct proctable *t, const char *path,
				 uint64_t dev, uint64_t ino)
{
	char key[PATH_MAX + 64];
	struct binary *b;
	uint64_t v;
	int n;

	n = snprintf(key, sizeof(key), "%" PRIx64 ":%" PRIu64 ":%s", dev, ino,
		     path);
	if (n < 0 || (size_t)n >= sizeof(key))
		return NULL;
	if (hashmap__get(t->binaries, key, n, &v))
		return (struct binary *)(uintptr_t)v;
	/* A process can map thousands of files with long names: the record
	 * of each counts in the mappings' budget, with the mapping that
	 * asks for it. */
	if (t->stats.maps_bytes + binary_bytes(path) +
	    sizeof(struct proc_map) > t->stats.maps_budget) {
		t->stats.maps_over_budget++;
		return NULL;
	}

	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->path = strdup(path);
	b->dev = dev;
	b->ino = ino;
	b->cache = t->symcache;
	if (b->path) {
		const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		size_t len = strlen(base);

		if (path[0] == '/' &&
		    procfs__undeleted_len(base, len) < len) {
			b->deleted = true;
			len = procfs__undeleted_len(base, len);
		}
		b->name = strndup(base, len);
	}
	if (!b->path || !b->name ||
	    hashmap__put(t->binaries, key, n, (uintptr_t)b)) {
		binary_free(b);
		return NULL;
	}
	b->owner = t;
	t->stats.maps_bytes += binary_bytes(path);
	return b;
}

/* Where a file's offset 0 (its ELF header) is mapped: the mapping before
 * its executable one, in address order. */
struct hdr_map {
	uint64_t start, dev, ino;
	bool valid;
};

/* The file a process executes (procfs__exe_id). */
struct exe_id {
	uint64_t dev, ino;
	bool valid;
};

/* The mapping kept for one line of /proc/PID/maps, into m; false for
 * lines to skip. Notes mappings of file offset 0 in *hdr. */
static bool map_from_line(struct proctable *t, const struct procfs_map *pm,
			  struct proc_map *m, struct hdr_map *hdr,
			  const struct exe_id *exe)
{
	if (pm->offset == 0 && pm->ino && pm->end > pm->start)
		*hdr = (struct hdr_map){ pm->start, pm->dev, pm->ino, true };
	if (!procfs_map__exec(pm) || pm->end <= pm->start)
		return false;

	memset(m, 0, sizeof(*m));
	m->start = pm->start;
	m->end = pm->end;
	m->offset = pm->offset;
	if (*pm->path == '\0') {
		m->anon_exec = true;	/* JIT code, or anonymous text */
		return true;
	}
	/* " (deleted)" files are still mapped; symbols may be gone. A file
	 * with no record (out of budget or memory) is not kept: its frames
	 * are unmapped, not taken for anonymous memory. */
	m->bin = binary_get(t, pm->path, pm->dev, pm->ino);
	if (!m->bin)
		return false;
	if (hdr->valid && hdr->dev == pm->dev && hdr->ino == pm->ino)
		m->hdr_start = hdr->start;
	m->exe = exe->valid && exe->dev == pm->dev && exe->ino == pm->ino;
	return true;
}

/* A read of the maps under way. */
struct maps_load {
	struct proctable *t;
	struct proc_map *maps;
	size_t n, cap;
	size_t old;		/* bytes the maps it replaces count */
	struct hdr_map hdr;
	struct exe_id exe;
	struct data_maps data;	/* with keep_data */
	bool data_full;		/* ... over the budget: no more of them */
};

/* Every mapping, for naming data addresses: counted in the same budget
 * as the executable ones. The first that does not fit ends the list, and
 * the addresses past it are named by the executable mappings alone. */
static void keep_data_map(struct maps_load *l, const struct procfs_map *pm)
{
	struct proctable *t = l->t;
	uint64_t before = l->data.bytes, most = datamaps__cost(pm);

	if (t->stats.maps_bytes - l->old + most > t->stats.maps_budget ||
	    datamaps__add(&l->data, pm, MAX_MAPS)) {
		t->stats.maps_over_budget++;
		l->data_full = true;
		return;
	}
	t->stats.maps_bytes += l->data.bytes - before;
}

/* Mappings are counted as they are kept, with the binary records they
 * create, so this process gets the room the others leave: 1 stops at the
 * bound. */
static int keep_map(const struct procfs_map *pm, void *arg)
{
	struct maps_load *l = arg;
	struct proctable *t = l->t;

	if (l->n == MAX_MAPS || t->stats.maps_bytes - l->old +
	    sizeof(*l->maps) > t->stats.maps_budget) {
		t->stats.maps_over_budget++;
		return 1;
	}
	if (grow__array_max(&l->maps, &l->cap, l->n + 1, sizeof(*l->maps),
			    32, MAX_MAPS))
		return 1;
	if (map_from_line(t, pm, &l->maps[l->n], &l->hdr, &l->exe)) {
		l->n++;
		t->stats.maps_bytes += sizeof(*l->maps);
	}
	if (t->keep_data && !l->data_full)
		keep_data_map(l, pm);
	return 0;
}

static int load_maps(struct proctable *t, struct proc *p)
{
	struct maps_load l = { .t = t, .old = p->nmaps * sizeof(*p->maps) +
						 p->data.bytes };
	struct proc_map *maps, *tmp;
	size_t n, cap;
	FILE *f;

	f = procfs__open_maps(p->pid);
	p->loaded_ns = clock__mono_ns();
	if (!f) {
		t->stats.maps_failed++;
		return -errno;
	}
	/* Its executable's mappings are known by the file (dev, ino), not
	 * by a path, which may name another file by now. */
	l.exe.valid = procfs__exe_id(p->pid, &l.exe.dev, &l.exe.ino);
	/* A read error ends the list: what was read is kept. */
	procfs__parse_maps(f, keep_map, &l);
	fclose(f);
	maps = l.maps;
	n = l.n;
	cap = l.cap;
	/* The room doubling left is given back: what is counted is held. */
	if (n < cap && n && (tmp = realloc(maps, n * sizeof(*maps))))
		maps = tmp;
	/* /proc/PID/maps lists mappings in address order already. */
	p->anon_exec = false;
	for (size_t i = 0; i < n; i++) {
		if (maps[i].bin)
			maps[i].bin->refs++;
		p->anon_exec |= maps[i].anon_exec;
	}
	unref_maps(p->maps, p->nmaps);
	free(p->maps);
	datamaps__free(&p->data);
	t->stats.maps_bytes -= l.old;
	p->maps = maps;
	p->nmaps = n;
	p->data = l.data;
	p->maps_ver = ++t->maps_ver;
	return 0;
}

/* Start time of /proc/PID in clock ticks since boot, or 0 if unknown. */
static uint64_t proc_start_ticks(uint32_t pid)
{
	char path[64], buf[1024], *s;
	unsigned long long ticks = 0;
	ssize_t n;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* comm may hold spaces and ')': fields resume after the last ')'. */
	s = strrchr(buf, ')');
	if (!s)
		return 0;
	/* After ')' come fields 3..; starttime is field 22. */
	for (i = 3; i <= 22 && s; i++)
		s = strchr(s + 1, ' ');
	if (s && sscanf(s + 1, "%llu", &ticks) != 1)
		ticks = 0;
	return ticks;
}

static void read_exe_name(struct proc *p, const char *comm)
{
	char path[64], target[PATH_MAX], *base;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/exe", p->pid);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0) {		/* kernel thread, or already gone */
		snprintf(p->exe, sizeof(p->exe), "%s", comm ? comm : "");
		return;
	}
	target[n] = '\0';
	target[procfs__undeleted_len(target, n)] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	/* Executable names longer than the label field are cut, on purpose. */
	memcpy(p->exe, base, strnlen(base, sizeof(p->exe) - 1));
	p->exe[strnlen(base, sizeof(p->exe) - 1)] = '\0';
}

static struct proc *proc_create(struct proctable *t, uint32_t pid,
				uint64_t start_ns, const char *comm)
{
	struct proc *p = calloc(1, sizeof(*p));
	uint64_t ticks;

	if (!p)
		return NULL;
	p->owner = t;
	p->pid = pid;
	p->start_ns = start_ns;
	t->stats.procs_seen++;

	/* The BPF side saw start_ns; if /proc/PID started at another time, it
	 * is a newer process that reused the pid: its maps are not ours. */
	ticks = proc_start_ticks(pid);
	if (ticks && start_ns &&
	    ticks != start_ns / (1000000000ull / (uint64_t)t->clk_tck)) {
		p->stale = true;
		t->stats.pid_reused++;
		snprintf(p->exe, sizeof(p->exe), "%s", comm ? comm : "");
		return p;
	}
	read_exe_name(p, comm);
	load_maps(t, p);
	/* A process that exits between the two reads above leaves p with
	 * whatever was read; its samples keep their addresses either way. */
	return p;
}

struct proc *proctable__get(struct proctable *t, uint32_t pid, uint64_t start_ns,
			const char *comm)
{
	struct proc *p;
	uint64_t v;

	if (hashmap__get(t->by_pid, &pid, sizeof(pid), &v)) {
		p = (struct proc *)(uintptr_t)v;
		if (p->start_ns == start_ns)
			return p;
		/* Missed the exit event (lost, or before we started). */
		proctable__forget(t, pid);
	}
	p = proc_create(t, pid, start_ns, comm);
	if (!p)
		return NULL;
	if (hashmap__put(t->by_pid, &pid, sizeof(pid), (uintptr_t)p)) {
		proc_free(p);
		return NULL;
	}
	return p;
}

void proctable__forget(struct proctable *t, uint32_t pid)
{
	uint64_t v;

	if (hashmap__del(t->by_pid, &pid, sizeof(pid), &v))
		proc_free((struct proc *)(uintptr_t)v);
}

/* The maps do not overlap: the one starting last at or below addr is the
 * only one that can hold it. */
struct proc_map *proctable__map_at(const struct proc *p, uint64_t addr)
{
	struct proc_map *m = SORTEDRANGE_FLOOR(p->maps, p->nmaps, start, addr);

	return m && addr < m->end ? m : NULL;
}

void proctable__set_data_maps(struct proctable *t, bool on)
{
	t->keep_data = on;
}

static uint64_t reload_interval(const struct proc *p)
{
	return p->reload_ns ? p->reload_ns : RELOAD_MIN_NS;
}

/* How long after the last read a miss at time_ns may read again. */
static uint64_t miss_interval(const struct proc *p, uint64_t time_ns)
{
	if (time_ns > p->loaded_ns && reload_interval(p) <= RELOAD_MIN_NS)
		return RELOAD_NEW_NS;
	return reload_interval(p);
}

/* The maps read again for an address at time_ns that none held, when the
 * last read is old enough: true when they were. */
static bool reload_for_miss(struct proctable *t, struct proc *p,
			    uint64_t time_ns)
{
	if (clock__mono_ns() - p->loaded_ns < miss_interval(p, time_ns))
		return false;
	t->stats.maps_reloads++;
	return load_maps(t, p) == 0;
}

/* After reload_for_miss: found, the process did map more; not found,
 * back off. */
static void reload_found(struct proc *p, bool found)
{
	p->reload_ns = found ? RELOAD_MIN_NS : reload_interval(p) * 2;
	if (found)
		p->maps_grown++;
	if (p->reload_ns > RELOAD_MAX_NS)
		p->reload_ns = RELOAD_MAX_NS;
}

struct proc_map *proctable__find_map(struct proctable *t, struct proc *p,
				 uint64_t addr, uint64_t time_ns)
{
	struct proc_map *m;

	if (p->stale)
		return NULL;
	m = proctable__map_at(p, addr);
	if (m || !reload_for_miss(t, p, time_ns))
		return m;
	m = proctable__map_at(p, addr);
	reload_found(p, m);
	return m;
}

/* The variable of the file dm maps (or whose .bss it is) that holds addr,
 * through the executable mapping of the same file that says where its
 * ELF header is: "NAME (BINARY)" into buf, or NULL. */
static const char *data_symbol(struct proctable *t, struct proc *p,
			       const struct data_map *dm, uint64_t addr,
			       char *buf, size_t len)
{
	const struct proc_map *m = NULL;
	const struct elfsym *syms;
	uint64_t base, vaddr;
	const char *name;

	for (size_t i = 0; i < p->nmaps && !m; i++)
		if (p->maps[i].bin && p->maps[i].hdr_start &&
		    p->maps[i].bin->dev == dm->dev &&
		    p->maps[i].bin->ino == dm->ino)
			m = &p->maps[i];
	if (!m || !(syms = proctable__binary_syms(t, p, m->bin)) ||
	    elfsym__offset_to_vaddr(syms, 0, &base))
		return NULL;
	/* The header's address less its link-time one is the load bias. */
	vaddr = addr - m->hdr_start + base;
	name = elfsym__lookup_data(syms, vaddr, NULL, NULL);
	if (!name)
		return NULL;
	snprintf(buf, len, "%s (%s)", name, m->bin->name);
	return buf;
}

/* Where the kernel's half of the address space starts (x86-64, arm64). */
#define KERNEL_HALF	0xffff800000000000ull

const char *proctable__data_object(struct proctable *t, struct proc *p,
				   uint64_t addr, uint64_t time_ns, char *buf,
				   size_t len, enum data_object_kind *how)
{
	const struct data_map *dm = NULL;

	*how = DATA_OBJECT_NONE;
	if (addr >= KERNEL_HALF)
		return "[kernel]";
	if (p && !p->stale) {
		dm = datamaps__at(&p->data, addr);
		if (!dm && reload_for_miss(t, p, time_ns)) {
			dm = datamaps__at(&p->data, addr);
			reload_found(p, dm);
		}
	}
	if (!dm)
		return "[unmapped]";
	if (dm->ino && data_symbol(t, p, dm, addr, buf, len)) {
		*how = DATA_OBJECT_SYMBOL;
		return buf;
	}
	*how = DATA_OBJECT_MAPPING;
	return datamaps__name(dm);
}

struct symfile *proctable__map_symfile(struct proctable *t,
				      const struct proc *p, struct proc_map *m)
{
	return symtrust__map_symfile(&t->stats, p, m);
}

struct elfsym *proctable__binary_syms(struct proctable *t, const struct proc *p,
				  struct binary *b)
{
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].bin == b) {
			proctable__map_symfile(t, p, &p->maps[i]);
			return b->syms;
		}
	return b->loaded ? b->syms : NULL;
}

struct symcache *proctable__symcache(struct proctable *t)
{
	return t->symcache;
}

const char *proctable__jit_name(struct proctable *t, struct proc *p,
				uint64_t addr)
{
	if (p->stale)
		return NULL;
	return jitmap__name(&p->jitmap, &t->stats, p->pid, addr);
}

int proctable__jitdump(struct proctable *t, struct proc *p, uint64_t addr,
		       uint64_t time_ns, struct jitdump_hit *hit,
		       const char **path)
{
	if (p->stale)
		return -ENOENT;
	return jitdumpfile__lookup(&p->jitdump, &t->stats, p, addr, time_ns,
				   hit, path);
}

/* Whether pid still names the process that started at start_ns. */
static bool alive(const struct proctable *t, uint32_t pid, uint64_t start_ns)
{
	uint64_t ticks = proc_start_ticks(pid);

	if (!ticks)
		return false;
	return !start_ns ||
	       ticks == start_ns / (1000000000ull / (uint64_t)t->clk_tck);
}

bool proctable__alive(const struct proctable *t, uint32_t pid, uint64_t start_ns)
{
	return alive(t, pid, start_ns);
}

/* Keys of the entries of m whose value fails keep(), to delete after an
 * iteration (a map must not change while it is iterated). */
static size_t collect(struct hashmap *m, bool (*drop)(struct proctable *, uint64_t),
		      struct proctable *t, void ***keys)
{
	size_t it = 0, n = 0, cap = 0, len;
	const void *key;
	uint64_t v;

	*keys = NULL;
	while (hashmap__next(m, &it, &key, &len, &v)) {
		if (!drop(t, v))
			continue;
		if (grow__array(keys, &cap, n + 1, sizeof(**keys), 16))
			break;
		(*keys)[n] = malloc(len + sizeof(size_t));
		if (!(*keys)[n])
			break;
		memcpy((*keys)[n], &len, sizeof(size_t));
		memcpy((char *)(*keys)[n] + sizeof(size_t), key, len);
		n++;
	}
	return n;
}

static bool proc_gone(struct proctable *t, uint64_t v)
{
	const struct proc *p = (const struct proc *)(uintptr_t)v;

	return !alive(t, p->pid, p->start_ns);
}

static bool binary_unused(struct proctable *t, uint64_t v)
{
	(void)t;
	return ((const struct binary *)(uintptr_t)v)->refs == 0;
}

static void drop_all(struct hashmap *m, void **keys, size_t n,
		     void (*free_value)(void *))
{
	uint64_t v;
	size_t len;

	for (size_t i = 0; i < n; i++) {
		memcpy(&len, keys[i], sizeof(size_t));
		if (hashmap__del(m, (char *)keys[i] + sizeof(size_t), len, &v))
			free_value((void *)(uintptr_t)v);
		free(keys[i]);
	}
	free(keys);
}

void proctable__sweep(struct proctable *t)
{
	void **keys;
	size_t n;

	/* Processes first: they hold the binaries' references. */
	n = collect(t->by_pid, proc_gone, t, &keys);
	drop_all(t->by_pid, keys, n, proc_free);
	n = collect(t->binaries, binary_unused, t, &keys);
	drop_all(t->binaries, keys, n, binary_free);
	/* Then the symbol files no binary uses any more. */
	symcache__sweep(t->symcache);
}

size_t proctable__count(const struct proctable *t)
{
	return hashmap__size(t->by_pid);
}

const struct proctable_stats *proctable__stats(const struct proctable *t)
{
	return &t->stats;
}
