// SPDX-License-Identifier: BSD-2-Clause
/* User stacks: frame pointers with frameless leaves repaired (fpstack.h),
 * or CFI.
 *
 * CFI. For a sample with a stack copy, one Dwfl per process (its ELF
 * mappings reported as modules, opened through /proc/PID/root when first
 * needed; rebuilt when the maps change; the least recently used dropped
 * beyond MAX_DWFL, and all at every sweep) unwinds from the copied
 * registers, reading memory only from the copy.
 *
 * `auto`. BPF copies the stacks of processes marked here, and of one
 * sample in 64 of the others (one in 8 in a process's first 2 s): those
 * probes compare CFI with the frame pointers. CFI "helps" when it finds
 * frames the frame-pointer chain lacks: more than TAIL_SLACK frames past
 * their common prefix (on glibc, a sound frame-pointer chain stops below
 * __libc_start_main and _start, or clone3, which CFI adds: at most two). A
 * probe that helps marks the process; a marked process whose last
 * DEMOTE_WINDOW copies never helped is unmarked (back to probes). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "unwind/bincache.h"
#include "unwind/cfirule.h"
#include "unwind/cfistack.h"
#include "unwind/elfimage.h"
#include "unwind/fpstack.h"
#include "sym/elfsym.h"
#include "util/hashmap.h"
#include "proc/procfs.h"
#include "proc/proctable.h"
#include "sample_event.h"
#include "proc/targetfile.h"
#include "unwind/unwind.h"
#include "util/clock.h"

#define MAX_DWFL	32	/* processes with a CFI address space at once */
#define MAX_MARKED	1024	/* processes marked for copies at once */
#define TAIL_SLACK	2
#define DEMOTE_WINDOW	256

/* A module as find_elf must open it: the image of its file, shared with
 * the bin (a reference of its own, as the bin may be dropped first). */
struct mod {
	struct unwinder *u;
	struct elfimage *img;	/* NULL for the vDSO */
	uint64_t dev, ino, bias;
};

/* One process. */
struct uwproc {
	struct unwinder *u;
	uint32_t pid;
	uint64_t start_ns;
	/* auto */
	bool marked;
	uint32_t win_copies, win_helped;
	/* CFI */
	Dwfl *dwfl;
	bool dwfl_failed;
	const struct proc_map *maps;	/* what dwfl was built from */
	uint64_t maps_ns;
	uint64_t maps_sig;
	struct mod *mods;
	size_t nmods;
	uint64_t used;			/* LRU stamp */
	const struct unwind_sample *cur; /* the sample being unwound */
};

struct unwinder {
	struct proctable *procs;
	struct hashmap *marks;		/* pid -> wants copies (1) or not (0):
					   decided, not yet taken */
	int mode;
	int verbose;
	bool verify;			/* TAGPROF_UNWIND_VERIFY: rules vs dwfl */
	struct hashmap *procs_by_pid;	/* pid -> struct uwproc * */
	struct bincache *bins;
	size_t ndwfl, nmarked;
	uint64_t clock;			/* LRU */
	struct unwind_stats stats;
};

/* ---- CFI ---- */

static int find_debuginfo(Dwfl_Module *mod, void **userdata,
			  const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
	return -1;		/* .eh_frame is in the file itself */
}

/* Opens a module's file as its process sees it. libdwfl owns the Elf. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
		    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	struct mod *md = *userdata;

	(void)mod, (void)modname, (void)base, (void)file_name;
	if (!md)
		return -1;
	if (!md->img) {
		*elfp = bincache__vdso_open(md->u->bins);
		return -1;
	}
	/* The bin's image, read when the module was reported: no file is
	 * opened here, and libelf reads memory that cannot SIGBUS. */
	*elfp = elfimage__elf(md->img);
	return -1;
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl, (void)arg, (void)thread_argp;
	return 0;		/* only get_thread is used */
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl, (void)tid;
	*thread_argp = arg;
	return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			void *arg)
{
	uint64_t v;

	(void)dwfl;
	if (!cfistack__read_word((void *)((struct uwproc *)arg)->cur, addr,
				 &v))
		return false;
	*result = v;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct tp_uregs *r = ((struct uwproc *)arg)->cur->regs;
	Dwarf_Word bx = r->bx, bpsp[2] = { r->bp, r->sp },
		   hi[4] = { r->r12, r->r13, r->r14, r->r15 }, ip = r->ip;

	if (!dwfl_thread_state_registers(thread, DW_RBX, 1, &bx) ||
	    !dwfl_thread_state_registers(thread, DW_RBP, 2, bpsp) ||
	    !dwfl_thread_state_registers(thread, DW_R12, 4, hi) ||
	    !dwfl_thread_state_registers(thread, DW_RIP, 1, &ip))
		return false;
	dwfl_thread_state_register_pc(thread, ip);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static void dwfl_drop(struct uwproc *up)
{
	if (up->dwfl) {
		dwfl_end(up->dwfl);
		up->dwfl = NULL;
		up->u->ndwfl--;
	}
	/* After dwfl_end: libdwfl's Elf descriptors read the images. */
	for (size_t i = 0; i < up->nmods; i++)
		elfimage__put(up->mods[i].img);
	free(up->mods);
	up->mods = NULL;
	up->nmods = 0;
}

/* Frees the least recently used Dwfl when there are MAX_DWFL. */
static void dwfl_make_room(struct unwinder *u)
{
	struct uwproc *lru = NULL, *up;
	size_t it = 0;
	uint64_t v;

	if (u->ndwfl < MAX_DWFL)
		return;
	while (hashmap__next(u->procs_by_pid, &it, NULL, NULL, &v)) {
		up = (struct uwproc *)(uintptr_t)v;
		if (up->dwfl && (!lru || up->used < lru->used))
			lru = up;
	}
	if (lru)
		dwfl_drop(lru);
}

/* Reports one executable file mapping as a module. */
static void report_map(struct unwinder *u, struct uwproc *up, Dwfl *dwfl,
		       const struct proc_map *m)
{
	struct bincache_entry *b = bincache__get(u->bins, up->pid, m);
	struct mod *md = &up->mods[up->nmods];
	uint64_t bias, low, high;
	Dwfl_Module *mod;
	void **slot;

	if (!b || !bincache__map_bias(b, m->start, m->offset, &bias))
		return;
	low = bias + b->base_vaddr;
	high = bias + b->end_vaddr;
	/* A file mapped in pieces is one module. */
	for (size_t i = 0; i < up->nmods; i++)
		if (up->mods[i].dev == m->bin->dev &&
		    up->mods[i].ino == m->bin->ino && up->mods[i].bias == bias)
			return;
	md->u = u;
	md->bias = bias;
	md->dev = m->bin->dev;
	md->ino = m->bin->ino;
	md->img = elfimage__get(b->img);
	mod = dwfl_report_module(dwfl, m->bin->path, low, high);
	if (!mod || !dwfl_module_info(mod, &slot, NULL, NULL, NULL, NULL,
				      NULL, NULL)) {
		elfimage__put(md->img);
		return;
	}
	*slot = md;
	up->nmods++;
}

/* What the file mappings are: a Dwfl stays good while this is equal. */
static uint64_t maps_sig(const struct proc *p)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < p->nmaps; i++) {
		const struct proc_map *m = &p->maps[i];
		uint64_t f[5] = { m->start, m->end, m->offset,
				  m->bin ? m->bin->dev : 0,
				  m->bin ? m->bin->ino : 0 };

		h = (h ^ hashmap__hash(f, sizeof(f))) * 1099511628211ull;
	}
	return h ^ p->nmaps;
}

/* The process's Dwfl, (re)built when its file mappings changed. */
static Dwfl *dwfl_for(struct unwinder *u, struct uwproc *up, struct proc *p)
{
	uint64_t sig;
	Dwfl *dwfl;

	up->used = ++u->clock;
	if (up->maps == p->maps && up->maps_ns == p->loaded_ns) {
		if (up->dwfl || up->dwfl_failed)
			return up->dwfl;
		sig = maps_sig(p);
	} else {
		/* Maps are re-read when an address is in none of them, which
		 * a wild frame pointer causes too: often nothing changed. */
		sig = maps_sig(p);
		up->maps = p->maps;
		up->maps_ns = p->loaded_ns;
		if ((up->dwfl || up->dwfl_failed) && sig == up->maps_sig)
			return up->dwfl;
	}
	dwfl_drop(up);
	dwfl_make_room(u);
	up->maps_sig = sig;
	up->dwfl_failed = true;
	up->mods = calloc(p->nmaps ? p->nmaps : 1, sizeof(*up->mods));
	dwfl = dwfl_begin(&dwfl_callbacks);
	if (!up->mods || !dwfl) {
		if (dwfl)
			dwfl_end(dwfl);
		u->stats.dwfl_failed++;
		return NULL;
	}
	dwfl_report_begin(dwfl);
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].bin)
			report_map(u, up, dwfl, &p->maps[i]);
	if (dwfl_report_end(dwfl, NULL, NULL) || !up->nmods ||
	    !dwfl_attach_state(dwfl, bincache__vdso_elf(u->bins), up->pid,
			       &thread_callbacks, up)) {
		dwfl_end(dwfl);
		u->stats.dwfl_failed++;
		return NULL;
	}
	up->dwfl = dwfl;
	up->dwfl_failed = false;
	u->ndwfl++;
	u->stats.dwfl_built++;
	return dwfl;
}

struct walk {
	uint64_t *out;
	size_t n;
};

static int on_frame(Dwfl_Frame *frame, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	/* The symbolizer takes 1 from every frame after the leaf, made for
	 * return addresses; an interrupted pc (below a signal frame) is
	 * exact, so it gets that 1 added. */
	if (w->n && activation)
		pc++;
	w->out[w->n++] = pc;
	return w->n < TP_MAX_FRAMES ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* libdwfl's unwind of the sample's stack copy into out; 0 if none. */
static size_t dwfl_stack(struct unwinder *u, struct uwproc *up,
			 struct proc *p, const struct unwind_sample *s,
			 uint64_t *out)
{
	struct walk w = { out, 0 };
	Dwfl *dwfl;

	dwfl = dwfl_for(u, up, p);
	if (!dwfl)
		return 0;
	up->cur = s;
	dwfl_getthread_frames(dwfl, s->tid ? (pid_t)s->tid : (pid_t)s->pid,
			      on_frame, &w);
	up->cur = NULL;
	return w.n;
}

/* The CFI unwind of the sample's stack copy into out; 0 if none. With
 * TAGPROF_UNWIND_VERIFY set, libdwfl unwinds every stack as well and
 * stacks where the two differ are counted. */
static size_t cfi_stack(struct unwinder *u, struct uwproc *up, struct proc *p,
			const struct unwind_sample *s, uint64_t *out)
{
	uint64_t fast[TP_MAX_FRAMES];
	size_t nfast, n;

	/* A pc outside the maps read so far: re-read them (rate-limited). */
	proctable__find_map(u->procs, p, s->regs->ip);
	nfast = cfistack__walk(u->bins, p, s, fast);
	if (nfast) {
		u->stats.cfi_rules++;
		if (!u->verify) {
			memcpy(out, fast, nfast * sizeof(*out));
			return nfast;
		}
	}
	n = dwfl_stack(u, up, p, s, out);
	if (nfast && (n != nfast || memcmp(out, fast, n * sizeof(*out)))) {
		u->stats.cfi_rules_differ++;
		if (u->verbose)
			fprintf(stderr, "tagprof: unwind: pid %u: cached "
				"rules gave %zu frames, libdwfl %zu\n",
				s->pid, nfast, n);
	}
	return n;
}

/* ---- processes and `auto` ---- */

/* Records that pid wants its stacks copied on every sample, or no longer,
 * for unwinder__take_marks: the latest word for a pid wins. */
static int note_mark(struct unwinder *u, uint32_t pid, bool copy)
{
	return hashmap__put(u->marks, &pid, sizeof(pid), copy);
}

size_t unwinder__take_marks(struct unwinder *u, struct unwind_mark *out,
			    size_t max)
{
	size_t it = 0, n = 0;
	const void *key;
	uint64_t v;

	while (n < max && hashmap__next(u->marks, &it, &key, NULL, &v))
		out[n++] = (struct unwind_mark){ *(const uint32_t *)key, v };
	for (size_t i = 0; i < n; i++)
		hashmap__del(u->marks, &out[i].pid, sizeof(out[i].pid), NULL);
	return n;
}

static void uwproc_free(void *ptr)
{
	struct uwproc *up = ptr;

	if (!up)
		return;
	dwfl_drop(up);
	if (up->marked) {
		note_mark(up->u, up->pid, false);
		up->u->nmarked--;
	}
	free(up);
}

static struct uwproc *uwproc_get(struct unwinder *u, const struct proc *p)
{
	uint32_t pid = p->pid;
	struct uwproc *up;
	uint64_t v;

	if (hashmap__get(u->procs_by_pid, &pid, sizeof(pid), &v)) {
		up = (struct uwproc *)(uintptr_t)v;
		if (up->start_ns == p->start_ns)
			return up;
		unwinder__forget(u, pid);	/* the pid was reused */
	}
	up = calloc(1, sizeof(*up));
	if (!up)
		return NULL;
	up->u = u;
	up->pid = pid;
	up->start_ns = p->start_ns;
	if (hashmap__put(u->procs_by_pid, &pid, sizeof(pid), (uintptr_t)up)) {
		free(up);
		return NULL;
	}
	return up;
}

static void set_marked(struct unwinder *u, struct uwproc *up, bool on)
{
	if (up->marked == on)
		return;
	if (on && u->nmarked >= MAX_MARKED)
		return;
	if (note_mark(u, up->pid, on))
		return;
	up->marked = on;
	up->win_copies = up->win_helped = 0;
	if (u->verbose)
		fprintf(stderr, "tagprof: unwind: pid %u %s\n", up->pid,
			on ? "needs CFI: its stacks are copied" :
			     "no longer helped by CFI: back to probes");
	if (on) {
		u->nmarked++;
		u->stats.marked++;
	} else {
		u->nmarked--;
		u->stats.unmarked++;
	}
}

void unwinder__mark_refused(struct unwinder *u, uint32_t pid, bool copy)
{
	struct uwproc *up;
	uint64_t v;

	if (!hashmap__get(u->procs_by_pid, &pid, sizeof(pid), &v))
		return;
	up = (struct uwproc *)(uintptr_t)v;
	if (up->marked != copy)
		return;
	/* Not in force: undo it, so that the next probe that helps asks
	 * again, and the counts say only what BPF does. */
	up->marked = !copy;
	if (copy) {
		u->nmarked--;
		u->stats.marked--;
	} else {
		u->nmarked++;
		u->stats.unmarked--;
	}
}

/* Whether CFI found frames the frame-pointer chain lacks (see the top). */
static bool cfi_helps(const uint64_t *fp, size_t nfp, const uint64_t *cfi,
		      size_t ncfi)
{
	size_t same = 0;

	while (same < nfp && same < ncfi && fp[same] == cfi[same])
		same++;
	return ncfi > same + TAIL_SLACK;
}

size_t unwinder__user_stack(struct unwinder *u, struct proc *p,
			    const struct unwind_sample *s, uint64_t *out)
{
	uint64_t cfi[TP_MAX_FRAMES];
	size_t nfp, ncfi;
	struct uwproc *up;
	bool helps;

	nfp = fpstack__walk(u->procs, u->bins, &u->stats, p, s, out);
	if (!s->regs || !p || p->stale || !p->nmaps)
		return nfp;
	u->stats.copies++;
	if (s->probe)
		u->stats.probes++;
	up = uwproc_get(u, p);
	ncfi = up ? cfi_stack(u, up, p, s, cfi) : 0;
	if (ncfi <= 1) {
		u->stats.cfi_failed++;
		return nfp;
	}
	helps = cfi_helps(out, nfp, cfi, ncfi);
	if (u->mode == TP_UNWIND_AUTO) {
		if (s->probe) {
			if (helps)
				set_marked(u, up, true);
		} else if (up->marked) {
			up->win_helped += helps;
			if (++up->win_copies >= DEMOTE_WINDOW) {
				if (!up->win_helped)
					set_marked(u, up, false);
				up->win_copies = up->win_helped = 0;
			}
		}
		/* A probe that does not help keeps the frame-pointer stack,
		 * like the process's other samples. */
		if (s->probe && !helps)
			return nfp;
	}
	/* Fewer frames, and none the chain lacks: the stack went on past the
	 * copy (or into code without CFI), and the chain is sound. Frames
	 * past a divergence, though, are the chain's guesses: CFI wins. */
	if (ncfi < nfp && !helps) {
		u->stats.fp_longer++;
		return nfp;
	}
	memcpy(out, cfi, ncfi * sizeof(*out));
	u->stats.cfi_used++;
	return ncfi;
}

/* ---- setup ---- */

struct unwinder *unwinder__new(struct proctable *procs, int mode)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	elf_version(EV_CURRENT);
	u->procs = procs;
	u->mode = mode;
	u->verify = getenv("TAGPROF_UNWIND_VERIFY") != NULL;
	u->procs_by_pid = hashmap__new(0);
	u->bins = bincache__new(&u->stats);
	u->marks = hashmap__new(0);
	if (!u->procs_by_pid || !u->bins || !u->marks) {
		unwinder__free(u);
		return NULL;
	}
	return u;
}

void unwinder__set_verbose(struct unwinder *u, int verbose)
{
	u->verbose = verbose;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	hashmap__free_values(u->procs_by_pid, uwproc_free);
	hashmap__free(u->marks);	/* after the processes: they note
					   their unmarks */
	bincache__free(u->bins);
	free(u);
}

void unwinder__forget(struct unwinder *u, uint32_t pid)
{
	uint64_t v;

	if (hashmap__del(u->procs_by_pid, &pid, sizeof(pid), &v))
		uwproc_free((void *)(uintptr_t)v);
}

void unwinder__sweep(struct unwinder *u)
{
	uint32_t gone[256];
	size_t it = 0, n = 0;
	struct uwproc *up;
	uint64_t v;

	/* A few hundred at a time; the rest go at the next sweep. libdw's
	 * caches grow with the code unwound through: every Dwfl starts
	 * afresh after a sweep, which bounds them to a window's worth. */
	while (hashmap__next(u->procs_by_pid, &it, NULL, NULL, &v)) {
		up = (struct uwproc *)(uintptr_t)v;
		dwfl_drop(up);
		up->dwfl_failed = false;
		up->maps = NULL;
		if (n < sizeof(gone) / sizeof(gone[0]) &&
		    !proctable__alive(u->procs, up->pid, up->start_ns))
			gone[n++] = up->pid;
	}
	for (size_t i = 0; i < n; i++)
		unwinder__forget(u, gone[i]);
}

const struct unwind_stats *unwinder__stats(const struct unwinder *u)
{
	return &u->stats;
}

int unwinder__mode(const struct unwinder *u)
{
	return u->mode;
}
