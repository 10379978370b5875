// SPDX-License-Identifier: BSD-2-Clause
/* libdwfl address spaces (dwflspace.h). */
#include <stdlib.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "proc/proctable.h"
#include "sample_event.h"
#include "unwind/bincache.h"
#include "unwind/cfirule.h"
#include "unwind/cfistack.h"
#include "unwind/dwflspace.h"
#include "unwind/elfimage.h"
#include "unwind/unwind.h"
#include "util/hashmap.h"

/* A module as find_elf must open it: the image of its file, shared with
 * the bincache entry (a reference of its own, as the entry may be dropped
 * first). */
struct dwflspace_mod {
	struct bincache *bins;	/* for the vDSO */
	struct elfimage *img;	/* NULL for the vDSO */
	uint64_t dev, ino, bias;
};

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
	struct dwflspace_mod *md = *userdata;

	(void)mod, (void)modname, (void)base, (void)file_name;
	if (!md)
		return -1;
	if (!md->img) {
		*elfp = bincache__vdso_open(md->bins);
		return -1;
	}
	/* The binary's image, read when the module was reported: no file is
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
	const struct dwflspace *sp = arg;
	uint64_t v;

	(void)dwfl;
	if (!cfistack__read_word((void *)sp->cur, addr, &v))
		return false;
	*result = v;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct tp_uregs *r = ((struct dwflspace *)arg)->cur->regs;
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

/* Takes sp off the list of those built. */
static void unlist(struct dwflspace *sp)
{
	struct dwflspaces *all = sp->all;

	for (size_t i = 0; i < all->nbuilt; i++)
		if (all->built[i] == sp) {
			all->built[i] = all->built[--all->nbuilt];
			return;
		}
}

void dwflspace__drop(struct dwflspace *sp)
{
	if (sp->dwfl) {
		dwfl_end(sp->dwfl);
		sp->dwfl = NULL;
		unlist(sp);
	}
	/* After dwfl_end: libdwfl's Elf descriptors read the images. */
	for (size_t i = 0; i < sp->nmods; i++)
		elfimage__put(sp->mods[i].img);
	free(sp->mods);
	sp->mods = NULL;
	sp->nmods = 0;
}

/* Frees the least recently used Dwfl when there are DWFLSPACE_MAX. */
static void make_room(struct dwflspaces *all)
{
	struct dwflspace *lru = NULL;

	if (all->nbuilt < DWFLSPACE_MAX)
		return;
	for (size_t i = 0; i < all->nbuilt; i++)
		if (!lru || all->built[i]->used < lru->used)
			lru = all->built[i];
	if (lru)
		dwflspace__drop(lru);
}

/* Reports one executable file mapping as a module. */
static void report_map(struct dwflspace *sp, Dwfl *dwfl,
		       const struct proc_map *m)
{
	struct bincache_entry *b = bincache__get(sp->all->bins, sp->pid, m);
	struct dwflspace_mod *md = &sp->mods[sp->nmods];
	uint64_t bias, low, high;
	Dwfl_Module *mod;
	void **slot;

	if (!b || !bincache__map_bias(b, m->start, m->offset, &bias))
		return;
	low = bias + b->base_vaddr;
	high = bias + b->end_vaddr;
	/* A file mapped in pieces is one module. */
	for (size_t i = 0; i < sp->nmods; i++)
		if (sp->mods[i].dev == m->bin->dev &&
		    sp->mods[i].ino == m->bin->ino && sp->mods[i].bias == bias)
			return;
	md->bins = sp->all->bins;
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
	sp->nmods++;
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
static Dwfl *dwfl_for(struct dwflspace *sp, struct proc *p)
{
	uint64_t sig;
	Dwfl *dwfl;

	sp->used = ++sp->all->clock;
	if (sp->maps == p->maps && sp->maps_ns == p->loaded_ns) {
		if (sp->dwfl || sp->failed)
			return sp->dwfl;
		sig = maps_sig(p);
	} else {
		/* Maps are re-read when an address is in none of them, which
		 * a wild frame pointer causes too: often nothing changed. */
		sig = maps_sig(p);
		sp->maps = p->maps;
		sp->maps_ns = p->loaded_ns;
		if ((sp->dwfl || sp->failed) && sig == sp->maps_sig)
			return sp->dwfl;
	}
	dwflspace__drop(sp);
	make_room(sp->all);
	sp->maps_sig = sig;
	sp->failed = true;
	sp->mods = calloc(p->nmaps ? p->nmaps : 1, sizeof(*sp->mods));
	dwfl = dwfl_begin(&dwfl_callbacks);
	if (!sp->mods || !dwfl) {
		if (dwfl)
			dwfl_end(dwfl);
		sp->all->stats->dwfl_failed++;
		return NULL;
	}
	dwfl_report_begin(dwfl);
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].bin)
			report_map(sp, dwfl, &p->maps[i]);
	if (dwfl_report_end(dwfl, NULL, NULL) || !sp->nmods ||
	    !dwfl_attach_state(dwfl, bincache__vdso_elf(sp->all->bins),
			       sp->pid, &thread_callbacks, sp)) {
		dwfl_end(dwfl);
		sp->all->stats->dwfl_failed++;
		return NULL;
	}
	sp->dwfl = dwfl;
	sp->failed = false;
	sp->all->built[sp->all->nbuilt++] = sp;
	sp->all->stats->dwfl_built++;
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

size_t dwflspace__unwind(struct dwflspace *sp, struct proc *p,
			 const struct unwind_sample *s, uint64_t *out)
{
	struct walk w = { out, 0 };
	Dwfl *dwfl;

	dwfl = dwfl_for(sp, p);
	if (!dwfl)
		return 0;
	sp->cur = s;
	dwfl_getthread_frames(dwfl, s->tid ? (pid_t)s->tid : (pid_t)s->pid,
			      on_frame, &w);
	sp->cur = NULL;
	return w.n;
}

void dwflspace__reset(struct dwflspace *sp)
{
	dwflspace__drop(sp);
	sp->failed = false;
	sp->maps = NULL;
}
