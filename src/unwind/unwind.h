/* User stacks for samples (--unwind): the frame-pointer chain the kernel
 * walked, with the caller of a frameless leaf put back from the words at the
 * stack pointer; or a CFI unwind (libdw, .eh_frame) of the stack copy the
 * BPF program took; and, in `auto` mode, which processes get copies. */
#ifndef TAGPROF_UNWIND_H
#define TAGPROF_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/counter.h"

struct proctable;
struct proc;
struct tp_sample;
struct tp_uregs;

/* What unwinding did since the start: X(field, text) (util/counter.h). */
#define UNWIND_COUNTERS(X)						\
	X(copies, "stack copies")	/* samples that carried one */	\
	X(probes, "auto probes")	/* of them */			\
	/* samples whose user stack came from CFI */			\
	X(cfi_used, "stacks from CFI")					\
	/* CFI unwinds done with cached rules (the rest: libdwfl) */	\
	X(cfi_rules, "unwinds by cached rules")				\
	/* ... that libdwfl unwound otherwise (TAGPROF_UNWIND_VERIFY) */	\
	X(cfi_rules_differ, "differing from libdwfl")			\
	/* copies CFI could not unwind past the leaf */			\
	X(cfi_failed, "copies CFI could not unwind")			\
	X(fp_longer, "where frame pointers went deeper")		\
	/* frameless leaves given their caller back */			\
	X(leaf_recovered, "frameless leaf callers recovered")		\
	/* ... and those whose return address lies deeper than the 16	\
	 * bytes BPF sends (a leaf that pushed two words or more) */	\
	X(leaf_deep, "too deep to recover")	\
	/* processes marked for stack copies (auto) */			\
	X(marked, "processes marked for CFI")				\
	/* marked processes CFI stopped helping */			\
	X(unmarked, "unmarked")						\
	/* per-process CFI address spaces (libdwfl) */			\
	X(dwfl_built, "CFI address spaces built")			\
	X(dwfl_failed, "CFI address spaces that could not be built")	\
	/* binaries whose CFI is over ELFIMAGE_CFI_MAX (16 MiB), each	\
	   once (again after a cache reset) */				\
	X(cfi_too_big, "binaries over 16 MiB")				\
	/* binaries whose CFI libdw may not read (cficheck.h), each	\
	   once (again after a cache reset) */				\
	X(cfi_refused, "binaries with CFI refused")			\
	/* binary images all dropped (count, bytes) */			\
	X(bins_reset, "cache resets")					\
	/* `auto` marks put in force as CFI tables in the kernel */	\
	X(kcfi_procs, "processes walked by kernel CFI")			\
	X(kcfi_tables, "CFI tables built")				\
	/* binaries whose mappings the kernel steps by frame pointers */ \
	X(kcfi_no_table, "binaries without a CFI table")		\
	/* marks that fell back to stack copies: the tables' memory is	\
	   full, or the process has over TP_CFI_MAPS mappings */	\
	X(kcfi_refused, "kernel CFI refused, copies instead")		\
	X(kcfi_stacks, "stacks walked by kernel CFI")			\
	/* ... to a library without its table yet: the copy unwound here */ \
	X(kcfi_later, "completed from a copy")				\
	/* probes of those unwound by libdwfl too, to check them */	\
	X(kcfi_checked, "checked against libdwfl")			\
	X(kcfi_differs, "differing from libdwfl")			\
	/* ... shorter, for a mapping made after the kernel was given the	\
	   process's mappings (they are sent again) */			\
	X(kcfi_stale, "cut at a mapping made since")

struct unwind_stats {
	UNWIND_COUNTERS(COUNTER_FIELD)
};

struct unwinder;

/* mode: enum tp_unwind_mode. NULL on ENOMEM. */
struct unwinder *unwinder__new(struct proctable *procs, int mode);
/* >0: a line on stderr when `auto` marks or unmarks a process. */
void unwinder__set_verbose(struct unwinder *u, int verbose);
void unwinder__free(struct unwinder *u);	/* accepts NULL */

/* A sample's user side as the BPF program sent it. regs and stack are
 * NULL when it copied no stack. */
struct unwind_sample {
	uint32_t pid, tid;
	uint64_t time_ns;	/* when it was taken (CLOCK_MONOTONIC) */
	const uint64_t *fp;	/* frame-pointer chain, leaf first */
	size_t nfp;
	bool in_kernel;		/* kernel frames too: fp[0] is a return
				   address (after a syscall), not the leaf */
	bool has_sp_words;
	uint64_t sp_words[2];	/* the 16 bytes at the user stack pointer */
	bool probe;		/* the copy is an `auto` probe */
	bool cfi;		/* fp holds the kernel's CFI walk, not a
				   frame-pointer chain */
	bool later;		/* ... which ended at a mapping whose table
				   was not built yet; regs and stack hold a
				   copy to unwind here */
	const struct tp_uregs *regs;
	const uint8_t *stack;
	size_t stack_len;
};

/* Writes the sample's user frames into out (TP_MAX_FRAMES entries), leaf
 * first, in the symbolizer's convention (every frame after the leaf is a
 * return address). p may be NULL (then fp is copied as is). Returns the
 * number written. */
size_t unwinder__user_stack(struct unwinder *u, struct proc *p,
			    const struct unwind_sample *s, uint64_t *out);

/* What `auto` decided since the last call: pid wants its stacks copied on
 * every sample (copy), or no longer. At most max into out; returns how
 * many. The owner of the BPF settings (capture/proccfg.h) applies them. */
struct unwind_mark {
	uint32_t pid;
	bool copy;
};
size_t unwinder__take_marks(struct unwinder *u, struct unwind_mark *out,
			    size_t max);
/* The owner could not put a mark taken from here in force (the BPF map is
 * full): pid goes back to its state before it, and a later probe that
 * helps asks again. */
void unwinder__mark_refused(struct unwinder *u, uint32_t pid, bool copy);

/* The kernel's CFI walk (bpf/cfiwalk.bpf.h) for a marked process: its
 * executable mappings, each with the binary whose table covers it (NULL:
 * none; the walk steps it by frame pointers) and the binary's load bias. */
struct unwind_cfi_map {
	uint64_t start, end, bias;
	struct bincache_entry *bin;	/* valid until the next call here */
	uint64_t key[2];		/* the binary's (device, inode) */
	/* which table to build first: the mappings of the binary in all
	 * processes known (libc's: nearly every one), and whether the
	 * process executes it */
	uint32_t shared;
	bool exe;
	/* its table is wanted now: the executable, or a binary some stack
	 * passed through; the others' are built when a walk reaches them
	 * (TP_CFI_LATER) */
	bool wanted;
};
/* pid's mappings, at most max into out, and its start time; -1 if the
 * process is not known, or has more than max. Remembers the maps it gave,
 * so that a CFI sample after they changed renews the mark (the owner then
 * calls again). */
long unwinder__cfi_maps(struct unwinder *u, uint32_t pid, uint64_t *start_ns,
			struct unwind_cfi_map *out, size_t max);
struct cfitable;
/* Builds b's kernel table (cfitable.h) into t: 0, or -errno. */
int unwinder__cfi_table(struct unwinder *u, struct bincache_entry *b,
			struct cfitable *t);
/* What became of a mark for kernel CFI: in force, or refused (the process
 * gets copies instead). */
void unwinder__cfi_result(struct unwinder *u, uint32_t pid, bool in_force);

/* The pid exec'd or exited: its cached state goes. */
void unwinder__forget(struct unwinder *u, uint32_t pid);
/* Frees the state of processes that are gone, the CFI caches, and the
 * binaries no walk asked for in two minutes (bincache__sweep). */
void unwinder__sweep(struct unwinder *u);
/* The binaries read for unwinding: how many, their images' bytes, the
 * answers cached. */
void unwinder__bins_usage(const struct unwinder *u, size_t *bins,
			  size_t *bytes, size_t *answers);

const struct unwind_stats *unwinder__stats(const struct unwinder *u);
int unwinder__mode(const struct unwinder *u);

#endif
