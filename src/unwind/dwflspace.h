/* libdwfl address spaces: CFI unwinding of a sample's stack copy by
 * libdwfl, for stacks the cached rules cannot walk (cfistack.h) and to
 * check them (TAGPROF_UNWIND_VERIFY).
 *
 * One Dwfl per process: its ELF mappings reported as modules over the
 * images bincache.h read (no file is opened by libdwfl), rebuilt when the
 * maps change; the least recently used dropped beyond DWFLSPACE_MAX, and
 * all at every sweep. It unwinds from the copied registers, reading
 * memory only from the copy. */
#ifndef TAGPROF_DWFLSPACE_H
#define TAGPROF_DWFLSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

#define DWFLSPACE_MAX	32	/* processes with an address space at once */

struct bincache;
struct dwflspace;
struct dwflspace_mod;
struct proc;
struct proc_map;
struct unwind_sample;
struct unwind_stats;

/* All processes' address spaces: the binaries they read, the counters
 * (dwfl_built, dwfl_failed), and the ones built, for the bound. Set bins
 * and stats; the rest starts zeroed. */
struct dwflspaces {
	struct bincache *bins;
	struct unwind_stats *stats;
	struct dwflspace *built[DWFLSPACE_MAX];
	size_t nbuilt;
	uint64_t clock;			/* LRU */
};

/* One process's. Set all and pid; the rest starts zeroed. */
struct dwflspace {
	struct dwflspaces *all;
	uint32_t pid;
	Dwfl *dwfl;
	bool failed;			/* could not be built from these maps */
	const struct proc_map *maps;	/* what dwfl was built from */
	uint64_t maps_ns;
	uint64_t maps_sig;
	struct dwflspace_mod *mods;
	size_t nmods;
	uint64_t used;			/* LRU stamp */
	const struct unwind_sample *cur; /* the sample being unwound */
};

/* libdwfl's unwind of s's stack copy into out (TP_MAX_FRAMES entries),
 * p being the process of sp; 0 if none. s has registers. */
size_t dwflspace__unwind(struct dwflspace *sp, struct proc *p,
			 const struct unwind_sample *s, uint64_t *out);

/* Frees sp's Dwfl (not sp): the next unwind builds it again if the maps
 * changed. */
void dwflspace__drop(struct dwflspace *sp);
/* Frees sp's Dwfl and forgets what it was built from: the next unwind
 * builds it again. */
void dwflspace__reset(struct dwflspace *sp);

#endif
