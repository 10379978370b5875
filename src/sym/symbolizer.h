/* Turns the raw addresses of one sample into location-table ids (loctab.h),
 * naming each new location once per generation of the table: user frames
 * through the process table and ELF symbols, kernel frames through the
 * kernel's own symbol lookup (ksymbolizer). */
#ifndef TAGPROF_SYMBOLIZER_H
#define TAGPROF_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct loctab;
struct proctable;
struct proc;
struct ksymbolizer;

/* Counted per location, i.e. per distinct address in a generation of the
 * loctab (a window), except the *_frames totals. */
struct symbolizer_stats {
	uint64_t user_frames, kernel_frames;
	uint64_t unmapped;	/* user address in no executable mapping */
	uint64_t no_symbol;	/* mapped, but no symbol covers it */
	uint64_t kernel_no_symbol;
	uint64_t with_lines;	/* user locations with a source file:line */
	uint64_t inlined;	/* inlined-function lines added to them */
	uint64_t jit_named;	/* anonymous code named by a JIT perf map */
	uint64_t anon_unnamed;	/* anonymous code no perf map names */
	uint64_t untrusted;	/* in binaries replaced on disk or corrupt */
};

struct symbolizer;

/* Whether symbolizers created from now on demangle C++ and Rust names
 * (the default; `--no-demangle` turns it off). Function names are then
 * the demangled ones and system_name the symbol; off, both are the
 * symbol. */
void symbolizer__set_demangle_default(bool on);

/* Resolved frames go into lt. ks names kernel frames. Both are borrowed
 * and must outlive the symbolizer. After loctab__reset, ids it cached
 * (frames, mappings) are dropped on its next stack. */
struct symbolizer *symbolizer__new(struct proctable *procs,
				   struct ksymbolizer *ks, struct loctab *lt);
void symbolizer__free(struct symbolizer *z);	/* accepts NULL */

/* Writes the loctab location ids of kernel then user frames (each leaf
 * first) into locs, which must hold nk + nu entries. p may be NULL when
 * only kernel frames are present. Returns the number written; a frame
 * that cannot be given a location (out of memory) is left out. */
size_t symbolizer__stack(struct symbolizer *z, struct proc *p,
			 const uint64_t *user, size_t nu,
			 const uint64_t *kern, size_t nk, uint32_t *locs);

const struct symbolizer_stats *symbolizer__stats(const struct symbolizer *z);

#endif
