/* The frame-pointer chain the kernel walked, with the caller of a
 * frameless leaf put back.
 *
 * The kernel's frame-pointer walk starts from the interrupted pc and rbp.
 * A leaf that sets up no frame (glibc's memcpy, strlen, syscall wrappers),
 * and a framed one before its `mov %rsp,%rbp` or at its `ret`, leaves rbp
 * pointing at its caller's frame, so the walk goes on with the caller's
 * caller: the caller is lost. Its return address is then one of the two
 * words at the stack pointer, which BPF sends with every sample. Where
 * .eh_frame CFI covers the pc, it says which: an rsp-based CFA means the
 * frame is not set up, and the return address is at CFA-8 (rsp+8: the
 * first word; rsp+16, after the push of rbp: the second; deeper ones are
 * counted, not recovered). Without CFI, the prologue decides: no
 * `push %rbp; mov %rsp,%rbp` at all, or the pc before the push, gives the
 * first word. The word is put back only when it is an address in an
 * executable mapping and not the walk's next frame anyway. Decisions are
 * cached per pc and prologues per function, per binary (bincache.h). */
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
