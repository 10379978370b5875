/* CFI unwinding of a sample's stack copy with the rules cached per binary
 * (cfirule.h, bincache.h): the same walk as libdwfl's, frame for frame,
 * at a few loads a frame once the rules are known. */
#ifndef TAGPROF_CFISTACK_H
#define TAGPROF_CFISTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bincache;
struct proc;
struct unwind_sample;

/* The walk of s's stack copy from its registers into out (TP_MAX_FRAMES
 * entries); 0 when some frame needs more than the cached rules describe
 * (no .eh_frame entry, a PLT stub, a signal frame): libdwfl then unwinds
 * the stack from the start. s has registers. */
size_t cfistack__walk(struct bincache *bins, struct proc *p,
		      const struct unwind_sample *s, uint64_t *out);

/* The 8 bytes at addr in the stack copy of the unwind_sample sample (a
 * cfirule_read_fn): memory is the stack copy and nothing else, for either
 * CFI unwinder. False outside the copy. */
bool cfistack__read_word(void *sample, uint64_t addr, uint64_t *val);

#endif
