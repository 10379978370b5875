/* Turns the raw addresses of one sample into location-table ids (loctab.h),
 * naming each new location once per generation of the table: user frames
 * through the process table and ELF symbols, kernel frames through the
 * kernel's own symbol lookup (ksymbolizer). */
#ifndef TAGPROF_SYMBOLIZER_H
#define TAGPROF_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/counter.h"

struct loctab;
struct proctable;
struct proc;
struct ksymbolizer;

/* Counted per location, i.e. per distinct address in a generation of the
 * loctab (a window), except the *_frames totals. */
#define SYMBOLIZER_COUNTERS(X)						\
	X(user_frames, "user")						\
	X(kernel_frames, "kernel")					\
	/* user address in no executable mapping */			\
	X(unmapped, "unmapped")						\
	X(no_symbol, "without symbol")	/* mapped, no symbol covers it */ \
	X(kernel_no_symbol, "without symbol")				\
	/* user locations with a source file:line */			\
	X(with_lines, "locations with file:line")			\
	/* inlined-function lines added to them */			\
	X(inlined, "inlined lines")					\
	/* anonymous code named by a JIT perf map */			\
	X(jit_named, "locations named")					\
	/* JIT code named by a jitdump's code load, before any perf map */ \
	X(jitdump_named, "locations named by jitdumps")			\
	/* anonymous code no perf map names */				\
	X(anon_unnamed, "anonymous unnamed")				\
	/* in binaries replaced on disk or corrupt */			\
	X(untrusted, "locations in them unsymbolized")			\
	/* unnamed locations named when a debug file came later */	\
	X(named_late, "named when their debug file came")

struct symbolizer_stats {
	SYMBOLIZER_COUNTERS(COUNTER_FIELD)
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
 * that cannot be given a location (out of memory) is left out. JIT code
 * is named as it was at time_ns, the sample's (CLOCK_MONOTONIC), when the
 * process's jitdump says what code was where when; symbolizer__stack
 * names it as it is now. */
size_t symbolizer__stack_at(struct symbolizer *z, struct proc *p,
			    uint64_t time_ns, const uint64_t *user, size_t nu,
			    const uint64_t *kern, size_t nk, uint32_t *locs);
size_t symbolizer__stack(struct symbolizer *z, struct proc *p,
			 const uint64_t *user, size_t nu,
			 const uint64_t *kern, size_t nk, uint32_t *locs);

/* Gives the symbol cache the debug files fetched meanwhile (never
 * waiting), and, when one came, names the unnamed locations of the
 * current window that it covers (loctab__name_location). */
void symbolizer__name_late(struct symbolizer *z);

const struct symbolizer_stats *symbolizer__stats(const struct symbolizer *z);

#endif
