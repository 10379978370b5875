/* The process table on this process and a child it starts: entries by pid
 * and start time (a wrong start time is a reused pid), mapping lookups and
 * the re-read of the maps for an address mapped later, binaries shared
 * between processes, the symbols of a mapped file, a JIT perf map the
 * test writes, forget and sweep; and the memory budget: the executable
 * mappings and binary records of all processes stay within their share
 * of the bound, those that do not fit are counted, and a larger bound
 * keeps them all. */
#include "check.h"
#include "proc/perfmap.h"
#include "proc/proctable.h"
#include "util/clock.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define ADDR(f) ((uint64_t)(uintptr_t)(f))

__attribute__((noinline, used)) int pt_here(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

/* The start time the BPF side would report for pid: its /proc/PID/stat
 * starttime (clock ticks since boot) in ns; 0 if unknown. */
static uint64_t start_ns(pid_t pid)
{
	char path[64], buf[1024], *s;
	unsigned long long ticks = 0;
	long hz = sysconf(_SC_CLK_TCK);
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	s = strrchr(buf, ')');
	for (int i = 3; i <= 22 && s; i++)
		s = strchr(s + 1, ' ');
	if (!s || sscanf(s + 1, "%llu", &ticks) != 1 || hz <= 0)
		return 0;
	return ticks * (1000000000ull / (uint64_t)hz);
}

/* A new table and its counters. */
static struct proctable *new_table(const struct proctable_stats **st)
{
	struct proctable *t = proctable__new();

	*st = t ? proctable__stats(t) : NULL;
	return t;
}

/* This process and a child, with their start times: entries of their own,
 * sorted executable mappings, the binaries they share. */
static void test_self_and_child(void)
{
	const struct proctable_stats *st;
	struct proctable *t = new_table(&st);
	struct proc *p, *c;
	struct proc_map *m, *mc;
	pid_t child = check_start_sleeper();

	CHECK(t && child > 0);
	p = proctable__get(t, getpid(), start_ns(getpid()), "comm");
	CHECK(p && !p->stale && p->pid == (uint32_t)getpid());
	CHECK(!strcmp(p->exe, "test_proctable"));
	CHECK(p->nmaps >= 2 && p->maps_ver > 0);
	for (size_t i = 1; i < p->nmaps; i++)
		CHECK(p->maps[i - 1].end <= p->maps[i].start);
	/* The same entry for the same process. */
	CHECK(proctable__get(t, getpid(), start_ns(getpid()), "comm") == p);
	c = proctable__get(t, child, start_ns(child), "comm");
	CHECK(c && c != p && !c->stale && proctable__count(t) == 2);
	CHECK(st->procs_seen == 2 && st->pid_reused == 0);
	CHECK(c->maps_ver != p->maps_ver);
	/* A fork maps the same files: one binary record for both. */
	m = proctable__find_map(t, p, ADDR(pt_here), 0);
	mc = proctable__find_map(t, c, ADDR(pt_here), 0);
	CHECK(m && mc && m != mc && m->bin && m->bin == mc->bin);
	CHECK(m->bin->refs >= 2 && !strcmp(m->bin->name, "test_proctable"));
	CHECK(proctable__alive(t, child, c->start_ns));
	check_stop_child(child);
	proctable__free(t);
}

/* Lookups: this program's code in its own mapping, libc's in libc's, no
 * mapping for an address nothing maps; an executable anonymous mapping
 * made after the first read is found when the maps are read again. */
static void test_find_map(void)
{
	const struct proctable_stats *st;
	struct proctable *t = new_table(&st);
	struct proc_map *m;
	void *jit, *libc_fn;
	uint64_t ver;
	struct proc *p;

	CHECK(t);
	p = proctable__get(t, getpid(), 0, "comm");
	CHECK(p);
	m = proctable__find_map(t, p, ADDR(pt_here), 0);
	CHECK(m && m->start <= ADDR(pt_here) && ADDR(pt_here) < m->end);
	CHECK(m->bin && !m->anon_exec && m->hdr_start);
	CHECK(m->exe);		/* this program's own code */
	CHECK(proctable__map_at(p, ADDR(pt_here)) == m);
	/* libc's own getpid (the program's &getpid may be a PLT entry). */
	libc_fn = dlsym(RTLD_DEFAULT, "getpid");
	m = libc_fn ? proctable__find_map(t, p, ADDR(libc_fn), 0) : NULL;
	CHECK(m && m->bin && !strncmp(m->bin->name, "libc", 4));
	CHECK(!m->exe);
	CHECK(!proctable__map_at(p, 0x1000));
	ver = p->maps_ver;
	jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(jit != MAP_FAILED);
	CHECK(!proctable__map_at(p, ADDR(jit)));
	CHECK(!p->anon_exec);	/* no anonymous code in this program yet */
	/* Maps are re-read at most every 200 ms. */
	nanosleep(&(struct timespec){ 0, 250 * 1000 * 1000 }, NULL);
	m = proctable__find_map(t, p, ADDR(jit) + 8, 0);
	CHECK(m && m->anon_exec && !m->bin && st->maps_reloads == 1);
	CHECK(p->maps_ver != ver && p->anon_exec);
	munmap(jit, 4096);
	proctable__free(t);
}

/* Addresses nothing maps read the maps again half as often each time a
 * read finds none of them, and as often as before once one finds such an
 * address mapped. Only that read counts as the process having mapped more
 * (maps_grown: the context watcher looks for a loaded library then; a
 * chain of garbage addresses re-reads the maps every few seconds). */
static void test_reload_backoff(void)
{
	const struct proctable_stats *st;
	struct proctable *t = new_table(&st);
	struct timespec wait = { 0, 250 * 1000 * 1000 };
	struct proc *p;
	void *jit;

	CHECK(t);
	p = proctable__get(t, getpid(), 0, "comm");
	CHECK(p && proctable__find_map(t, p, ADDR(pt_here), 0));
	nanosleep(&wait, NULL);
	CHECK(!proctable__find_map(t, p, 0x1000, 0));	/* read: nothing */
	CHECK(st->maps_reloads == 1);
	nanosleep(&wait, NULL);
	/* 250 ms later: within the 400 ms it now waits. */
	CHECK(!proctable__find_map(t, p, 0x1000, 0));
	CHECK(st->maps_reloads == 1);
	nanosleep(&wait, NULL);
	CHECK(!proctable__find_map(t, p, 0x1000, 0));	/* 500 ms: read */
	CHECK(st->maps_reloads == 2 && p->maps_grown == 0);
	/* Now 800 ms; a mapping made meanwhile is found at the next read,
	 * and the wait is back to 200 ms. */
	jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(jit != MAP_FAILED);
	nanosleep(&(struct timespec){ 0, 850 * 1000 * 1000 }, NULL);
	CHECK(proctable__find_map(t, p, ADDR(jit), 0));
	CHECK(st->maps_reloads == 3 && p->maps_grown == 1);
	nanosleep(&wait, NULL);
	CHECK(!proctable__find_map(t, p, 0x1000, 0));
	CHECK(st->maps_reloads == 4 && p->maps_grown == 1);
	munmap(jit, 4096);
	proctable__free(t);
}

/* Code mapped after the maps were read, in a sample taken after the read,
 * is found 10 ms after the read, not 200 (a JIT's first code would go
 * unnamed that long); an address of a sample from before the read waits
 * the 200 ms; and once a read has come back empty, the back-off holds
 * for newer samples too. */
static void test_reload_new_code(void)
{
	const struct proctable_stats *st;
	struct proctable *t = new_table(&st);
	struct timespec wait = { 0, 20 * 1000 * 1000 };
	uint64_t before;
	struct proc *p;
	void *jit;

	CHECK(t);
	before = clock__mono_ns();
	p = proctable__get(t, getpid(), 0, "comm");
	CHECK(p && proctable__find_map(t, p, ADDR(pt_here), 0));
	jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(jit != MAP_FAILED);
	nanosleep(&wait, NULL);
	CHECK(!proctable__find_map(t, p, ADDR(jit), before));
	CHECK(st->maps_reloads == 0);
	CHECK(proctable__find_map(t, p, ADDR(jit), clock__mono_ns()));
	CHECK(st->maps_reloads == 1 && p->maps_grown == 1);
	/* A garbage address of a new sample: read once, then backed off. */
	nanosleep(&wait, NULL);
	CHECK(!proctable__find_map(t, p, 0x1000, clock__mono_ns()));
	CHECK(st->maps_reloads == 2);
	nanosleep(&wait, NULL);
	CHECK(!proctable__find_map(t, p, 0x1000, clock__mono_ns()));
	CHECK(st->maps_reloads == 2);
	munmap(jit, 4096);
	proctable__free(t);
}

/* A pid whose /proc entry started at another time than the sample says
 * belongs to a newer process: its entry is stale, with no maps, and the
 * right start time gets an entry of its own. */
static void test_pid_reuse(void)
{
	const struct proctable_stats *st;
	struct proctable *t = new_table(&st);
	uint64_t now = start_ns(getpid()), wrong = now + 10000000000ull;
	struct proc *p;

	CHECK(t && now);
	p = proctable__get(t, getpid(), wrong, "oldcomm");
	CHECK(p && p->stale && p->nmaps == 0 && st->pid_reused == 1);
	CHECK(!strcmp(p->exe, "oldcomm"));
	CHECK(!proctable__find_map(t, p, ADDR(pt_here), 0));
	CHECK(!proctable__jit_name(t, p, ADDR(pt_here)));
	CHECK(!proctable__alive(t, getpid(), wrong));
	CHECK(proctable__alive(t, getpid(), now));
	CHECK(proctable__alive(t, getpid(), 0));
	p = proctable__get(t, getpid(), now, "comm");
	CHECK(p && !p->stale && p->nmaps > 0 && proctable__count(t) == 1);
	CHECK(st->pid_reused == 1 && st->procs_seen == 2);
	proctable__free(t);
}

/* An exited process goes at the sweep, the living stay; a forgotten one
 * goes at once, and its binaries with the last process that maps them. */
static void test_forget_sweep(void)
{
	const struct proctable_stats *st;
	struct proctable *t = new_table(&st);
	pid_t child = check_start_sleeper();
	uint64_t cstart;
	struct proc *p;

	CHECK(t && child > 0);
	cstart = start_ns(child);
	p = proctable__get(t, getpid(), 0, "comm");
	CHECK(p && proctable__get(t, child, cstart, "comm"));
	CHECK(proctable__count(t) == 2);
	proctable__sweep(t);
	CHECK(proctable__count(t) == 2);
	check_stop_child(child);
	CHECK(!proctable__alive(t, child, cstart));
	proctable__sweep(t);
	CHECK(proctable__count(t) == 1);
	CHECK(proctable__get(t, getpid(), 0, "comm") == p);
	proctable__forget(t, getpid());
	CHECK(proctable__count(t) == 0 && st->maps_bytes > 0);
	proctable__forget(t, getpid());		/* not there: nothing */
	proctable__sweep(t);
	CHECK(st->maps_bytes == 0);
	proctable__free(t);
}

/* The symbols of this program's file, trusted by its build ID; none for
 * the vDSO, which is no file (and no failure). */
static void test_map_symfile(void)
{
	const struct proctable_stats *st;
	struct proctable *t = new_table(&st);
	struct proc_map *m, *vdso = NULL;
	struct proc *p;

	CHECK(t);
	p = proctable__get(t, getpid(), 0, "comm");
	CHECK(p);
	m = proctable__find_map(t, p, ADDR(pt_here), 0);
	CHECK(m && proctable__map_symfile(t, p, m));
	CHECK(m->bin->loaded && m->bin->load_err == 0 && m->bin->syms);
	CHECK(proctable__binary_syms(t, p, m->bin) == m->bin->syms);
	CHECK(proctable__map_symfile(t, p, m) == m->bin->sf);
	CHECK(st->elf_failed == 0 && st->build_id_mismatch == 0);
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].bin && !strcmp(p->maps[i].bin->path, "[vdso]"))
			vdso = &p->maps[i];
	if (vdso) {
		CHECK(!proctable__map_symfile(t, p, vdso));
		CHECK(vdso->bin->load_err == ENOENT && st->elf_failed == 0);
	}
	proctable__free(t);
}

/* This process's JIT perf map, written here: its names, its bytes counted
 * while the process has it; over the budget, not read and counted once. */
static void test_jit_map(void)
{
	char path[64];
	const struct proctable_stats *st;
	struct proctable *t = new_table(&st);
	const char *name;
	struct proc *p;
	FILE *f;

	CHECK(t);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	CHECK(f);
	fprintf(f, "7f0000001000 100 jitted_one\n"
		   "not a line\n"
		   "7f0000002000 80 jitted two\n");
	for (int i = 0; i < 200; i++)	/* about 6 KiB */
		fprintf(f, "%x 10 padding_%d\n", 0x10000000 + i * 16, i);
	fclose(f);
	p = proctable__get(t, getpid(), 0, "comm");
	CHECK(p);
	name = proctable__jit_name(t, p, 0x7f0000001010);
	CHECK(name && !strcmp(name, "jitted_one"));
	name = proctable__jit_name(t, p, 0x7f0000002004);
	CHECK(name && !strcmp(name, "jitted two"));
	CHECK(!proctable__jit_name(t, p, 0x7f0000003000));
	CHECK(st->perfmaps_read == 1 && st->perfmap_bad_lines == 1);
	CHECK(st->perfmap_bytes > 0 && st->perfmap_bytes <= st->perfmaps_budget);
	CHECK(st->perfmap_over_budget == 0 && st->perfmap_refused == 0);
	proctable__forget(t, getpid());
	CHECK(st->perfmap_bytes == 0);
	/* 64 KiB in all: 4 KiB for one process's map, less than the file. */
	proctable__set_memory(t, 64 << 10);
	CHECK(st->perfmap_proc_budget == 4096);
	p = proctable__get(t, getpid(), 0, "comm");
	CHECK(p && !proctable__jit_name(t, p, 0x7f0000001010));
	CHECK(st->perfmap_over_budget == 1 && st->perfmap_bytes == 0);
	CHECK(st->perfmaps_read == 1);
	unlink(path);
	proctable__free(t);
}

/* This test program maps itself, libc and the loader, executable. */
static void test_maps_budget(void)
{
	const struct proctable_stats *st;
	struct proctable *t = new_table(&st);
	struct proc *p;
	size_t all;

	CHECK(t);
	p = proctable__get(t, getpid(), 0, "test_proctable");
	CHECK(p && p->nmaps >= 2 && st->maps_over_budget == 0);
	all = p->nmaps;
	CHECK(st->maps_bytes > 0 && st->maps_bytes <= st->maps_budget);
	/* The binaries go with the last process that maps them. */
	proctable__forget(t, getpid());
	CHECK(st->maps_bytes > 0);
	proctable__sweep(t);
	CHECK(st->maps_bytes == 0);
	/* A bound of 2 KiB: 512 bytes for every mapping, not enough for all
	 * of ours with their binaries' records. */
	proctable__set_memory(t, 2048);
	p = proctable__get(t, getpid(), 0, "test_proctable");
	CHECK(p && p->nmaps < all && st->maps_over_budget > 0);
	CHECK(st->maps_bytes <= st->maps_budget);
	proctable__forget(t, getpid());
	proctable__sweep(t);
	CHECK(st->maps_bytes == 0);
	proctable__free(t);
}

int main(void)
{
	RUN(test_self_and_child);
	RUN(test_find_map);
	RUN(test_reload_backoff);
	RUN(test_reload_new_code);
	RUN(test_pid_reuse);
	RUN(test_forget_sweep);
	RUN(test_map_symfile);
	RUN(test_jit_map);
	RUN(test_maps_budget);
	CHECK_EXIT();
}
