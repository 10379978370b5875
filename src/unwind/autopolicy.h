/* `--unwind auto`: which processes get their stacks copied on every
 * sample.
 *
 * BPF copies the stacks of processes marked here, and of one sample in 64
 * of the others (more in a process's first 2 s: TP_YOUNG_PROBES in
 * sample_event.h): those probes compare
 * CFI with the frame pointers. CFI "helps" when it finds frames the
 * frame-pointer chain lacks: more than TAIL_SLACK frames past their common
 * prefix (on glibc, a sound frame-pointer chain stops below
 * __libc_start_main and _start, or clone3, which CFI adds: at most two). A
 * probe that helps marks the process; a marked process whose last
 * DEMOTE_WINDOW copies never helped is unmarked (back to probes). The
 * policy decides; the owner of the BPF settings (capture/proccfg.h) takes
 * the decisions and puts them in force. */
#ifndef TAGPROF_AUTOPOLICY_H
#define TAGPROF_AUTOPOLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct autopolicy;
struct unwind_mark;
struct unwind_stats;

/* One process's standing; starts zeroed (not marked). */
struct automark {
	bool marked;
	uint32_t win_copies, win_helped;	/* copies since the last
						   decision, and how many
						   CFI helped */
};

/* Counts in st (marked, unmarked). NULL on ENOMEM. */
struct autopolicy *autopolicy__new(struct unwind_stats *st);
/* >0: a line on stderr when a process is marked or unmarked. */
void autopolicy__set_verbose(struct autopolicy *a, int verbose);
void autopolicy__free(struct autopolicy *a);	/* accepts NULL */

/* Whether CFI found frames the frame-pointer chain lacks: nfp frames of
 * fp against ncfi of cfi, leaf first. */
bool autopolicy__cfi_helps(const uint64_t *fp, size_t nfp,
			   const uint64_t *cfi, size_t ncfi);

/* CFI unwound a copy of pid's stack (m its standing): a probe, or a
 * sample of a marked process; helps as autopolicy__cfi_helps said. */
void autopolicy__observe(struct autopolicy *a, uint32_t pid,
			 struct automark *m, bool probe, bool helps);

/* pid (standing m) is marked and what its mark stands on changed (its
 * mappings): the mark is decided again, to be put in force anew. */
void autopolicy__renew(struct autopolicy *a, uint32_t pid,
		       const struct automark *m);

/* The decisions since the last call, at most max into out: see
 * unwinder__take_marks. */
size_t autopolicy__take(struct autopolicy *a, struct unwind_mark *out,
			size_t max);
/* A decision taken could not be put in force: m goes back to its state
 * before it. */
void autopolicy__refused(struct autopolicy *a, struct automark *m,
			 bool copy);
/* pid (standing m) is gone: a mark it held is taken back. */
void autopolicy__forget(struct autopolicy *a, uint32_t pid,
			struct automark *m);

#endif
