/* The stacks the BPF side sent whole, by id: what a record that names its
 * stack by id alone (TP_STACK_SEEN, include/sample_event.h) stands for.
 *
 * The BPF side sends a stack's frames once, with an id, and then only the
 * id for as long as it remembers having sent it; so every id a record
 * names was sent whole in an earlier record, and the table must keep every
 * stack it was sent. A record's user frames and kernel frames are named
 * apart, each by its own id. It is bounded all the same: once it holds
 * more than its bound, or its generation is a minute old, stacktab__roll
 * starts a new generation, which the
 * BPF side mixes into every id, so that each stack is sent whole once
 * more; the previous generation's stacks are kept one roll longer for the
 * records still on their way. An id the table does not have (a record of an older
 * generation, or one whose stack does not match its id's) is refused and
 * counted by the caller, never given another stack's frames. */
#ifndef TAGPROF_STACKTAB_H
#define TAGPROF_STACKTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/records.h"

struct stacktab;

/* max_bytes: the bound on the frames kept (0: 64 MiB). */
struct stacktab *stacktab__new(size_t max_bytes);
void stacktab__free(struct stacktab *t);	/* accepts NULL */

/* A sample record's frames, where it names them by id: each NEW part (the
 * user frames, the kernel frames) is remembered under its id (if memory
 * allows: else a later SEEN record of them is refused), each SEEN part is
 * looked up, and rs->frames is pointed at the user frames and kernel
 * frames, joined (valid until the next call or roll). False only for a
 * SEEN part whose id, in its generation, the table does not have for the
 * same pid and depth. */
bool stacktab__resolve(struct stacktab *t, struct raw_sample *rs);

/* When the current generation holds more than half the bound, or holds
 * anything and began STACKTAB_AGE_NS before now_ns (CLOCK_MONOTONIC; the
 * first call starts the clock): starts the next generation, forgets the
 * one before the current, and returns true with the new generation in
 * *gen (for sampler__set_stack_gen). The age keeps the table in step with
 * the stacks seen lately: at a low rate, or with processes coming and
 * going, it would fill to its bound only after many minutes, holding the
 * stacks of processes long gone. Each stack costs a full record once a
 * generation. */
#define STACKTAB_AGE_NS	(60ull * 1000000000)
bool stacktab__roll(struct stacktab *t, uint64_t now_ns, uint32_t *gen);

size_t stacktab__bytes(const struct stacktab *t);	/* frames kept */

#endif
