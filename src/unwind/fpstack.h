/* The frame-pointer chain the kernel walked, with the caller of a
 * frameless leaf put back.
 *
 * The kernel's frame-pointer walk starts from the interrupted pc and rbp.
 * A leaf that sets up no frame (glibc's memcpy, strlen, syscall wrappers)
 * leaves rbp pointing at its caller's frame, so the walk goes on with the
 * caller's caller: the caller is lost. Its return address is then the word
 * at the stack pointer, which BPF sends with every sample. It is put back
 * when the leaf's function has no `push %rbp; mov %rsp,%rbp` prologue (or
 * the pc is before that push), when the .eh_frame CFI at the pc agrees
 * that the return address is at the stack pointer (CFA = rsp+8: nothing
 * pushed yet, so it is not a saved register), and when the word is an
 * address in an executable mapping. Decisions are cached per pc and
 * prologues per function, per binary (bincache.h). */
#ifndef TAGPROF_FPSTACK_H
#define TAGPROF_FPSTACK_H

#include <stddef.h>
#include <stdint.h>

struct bincache;
struct proc;
struct proctable;
struct unwind_sample;
struct unwind_stats;

/* The sample's frame-pointer chain into out (TP_MAX_FRAMES entries), with
 * a frameless leaf's caller (counted in st->leaf_recovered). p may be
 * NULL: the chain as it is. Returns the number of frames. */
size_t fpstack__walk(struct proctable *procs, struct bincache *bins,
		     struct unwind_stats *st, struct proc *p,
		     const struct unwind_sample *s, uint64_t *out);

#endif
