/* The binaries the unwinder reads, by device and inode: each one's load
 * segments, its image (headers and .eh_frame: elfimage.h) with the libelf
 * and libdw views of it, and what was worked out from them per address
 * (CFI rules, frameless-leaf decisions, prologues), so that each is worked
 * out once. The vDSO is our own, the image the kernel maps into every
 * 64-bit process.
 *
 * This is not proctable.h's struct binary, nor hung off it, because the
 * two have other identities, lifetimes and budgets:
 * - A struct binary is one per (device, inode, path as the maps show it):
 *   the same file under two names (a hard link, another mount namespace's
 *   path, " (deleted)" once it was replaced) is two records, and would be
 *   two images read and analysed; here it is one entry.
 * - A struct binary goes at the process table's sweep once no process in
 *   the table maps it; an entry here outlives the processes, so a binary
 *   run again and again (a build's compilers) is read and analysed once,
 *   and one that could not be read waits its retry delay.
 * - The entries have a budget of their own (BINCACHE_MAX, _BYTES_MAX of
 *   images, _ENTRIES_MAX of cached answers; a binary's CFI is at most
 *   ELFIMAGE_CFI_MAX) and all go at once when it is reached (bins_reset),
 *   apart from the process table's maps budget; and one no walk asked for
 *   in BINCACHE_KEEP_NS goes at a sweep, and the answers of the others
 *   start over every BINCACHE_ANSWERS_NS. Hanging them off the
 *   table's records would make the table free unwinder state at its sweep
 *   and the unwinder walk the table to reset: the process layer calling
 *   back into the unwinder.
 * Nothing outside the unwinder keeps an entry (libdwfl's modules hold
 * references to the images, not entries), so a reset is safe. */
#ifndef TAGPROF_BINCACHE_H
#define TAGPROF_BINCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#define BINCACHE_MAX_LOADS	16	/* PT_LOAD segments kept per binary */

struct bincache;
struct elfimage;
struct hashmap;
struct proc_map;
struct unwind_stats;

struct bincache_load {
	uint64_t vaddr, offset, filesz, memsz;
};

/* One ELF file: its segments, its bytes (prologues) and CFI, for the leaf
 * decisions; and where libdwfl places it. */
struct bincache_entry {
	uint64_t dev, ino;
	bool ok;
	uint64_t failed_ns;	/* when it last could not be read */
	uint64_t used_ns;	/* when a walk last asked for it */
	uint64_t answers_ns;	/* when its answers started */
	bool too_big;		/* its CFI is over ELFIMAGE_CFI_MAX: counted */
	struct elfimage *img;	/* headers and CFI; NULL for the vDSO */
	Elf *elf;		/* over img */
	struct bincache_load loads[BINCACHE_MAX_LOADS];
	size_t nloads;
	uint64_t base_vaddr;	/* first PT_LOAD's p_vaddr & -p_align */
	uint64_t end_vaddr;	/* highest p_vaddr + p_memsz */
	Dwarf_CFI *cfi;		/* .eh_frame, or NULL */
	struct hashmap *rules;	/* vaddr -> packed cfirule */
	struct hashmap *pcs;	/* vaddr -> leaf decision + 1 */
	struct hashmap *fns;	/* function vaddr -> prologue class + 1 */
	/* a stack of a process walked by kernel CFI passed through it:
	 * its table is built (unwind.h, unwind_cfi_map.wanted) */
	bool cfi_wanted;
};

/* Counts in st (cfi_too_big, bins_reset). Reads our own vDSO. NULL on
 * ENOMEM. elf_version must have been called. */
struct bincache *bincache__new(struct unwind_stats *st);
void bincache__free(struct bincache *c);	/* accepts NULL */

/* An entry no walk asked for this long goes at the unwinder's sweep:
 * binaries pass through a host (a script's tools, a build's compilers),
 * and each holds its image, libdw's CFI state (which grows with the
 * addresses looked up) and its cached answers until the bounds start all
 * over. One run again and again within this is still read once. */
#define BINCACHE_KEEP_NS	(120ull * 1000 * 1000 * 1000)
/* ... and the answers of one kept start over this often, with libdw's
 * state behind them (it keeps every FDE and CIE it read): they then hold
 * the addresses sampled lately, not every address since the binary was
 * first read (libc's, in a long run, up to the bounds). */
#define BINCACHE_ANSWERS_NS	(120ull * 1000 * 1000 * 1000)

/* Frees the entries no walk asked for in keep_ns, and starts over the
 * answers older than answers_ns of the others. Not during a walk: the
 * entries it holds would go. */
void bincache__sweep(struct bincache *c, uint64_t keep_ns,
		     uint64_t answers_ns);
/* Binaries held, their images' bytes, and the answers cached. */
void bincache__usage(const struct bincache *c, size_t *bins, size_t *bytes,
		     size_t *answers);

/* The analysed binary behind a mapping of process pid, read through the
 * mapping on first use (targetfile.h); NULL if it cannot be read. */
struct bincache_entry *bincache__get(struct bincache *c, uint32_t pid,
				     const struct proc_map *m);

/* Whether b is our vDSO, which no symbol table describes. */
bool bincache__is_vdso(const struct bincache *c,
		       const struct bincache_entry *b);
/* A new libelf descriptor over our vDSO (libdwfl's module for every
 * process's), or NULL. */
Elf *bincache__vdso_open(const struct bincache *c);
/* Our vDSO's descriptor, which tells dwfl_attach_state the arch; NULL if
 * it could not be read. Owned by c. */
Elf *bincache__vdso_elf(const struct bincache *c);

/* Reads the segments of the 64-bit x86-64 ELF b->elf into b (loads,
 * base_vaddr, end_vaddr); false when it is not one or has none. */
bool bincache__read_loads(struct bincache_entry *b);

/* The file's virtual address of file offset off, in its segments. */
bool bincache__off_to_vaddr(const struct bincache_entry *b, uint64_t off,
			    uint64_t *vaddr);
/* Load bias of the file in a mapping (start, file offset). */
bool bincache__map_bias(const struct bincache_entry *b, uint64_t start,
			uint64_t off, uint64_t *bias);

/* The CFI rule (cfirule.h) at vaddr of b, cached. */
uint64_t bincache__rule(struct bincache *c, struct bincache_entry *b,
			uint64_t vaddr);
/* Caches key -> val in one of b's tables (&b->pcs, &b->fns, &b->rules),
 * within the cache's bounds. */
void bincache__remember(struct bincache *c, struct hashmap **m, uint64_t key,
			uint64_t val);

#endif
