// SPDX-License-Identifier: BSD-2-Clause
/* The `auto` unwinding policy (autopolicy.h). */
#include <stdio.h>
#include <stdlib.h>

#include "unwind/autopolicy.h"
#include "unwind/unwind.h"
#include "util/hashmap.h"

#define MAX_MARKED	1024	/* processes marked for copies at once */
#define TAIL_SLACK	2
#define DEMOTE_WINDOW	256

struct autopolicy {
	struct hashmap *marks;		/* pid -> wants copies (1) or not (0):
					   decided, not yet taken */
	size_t nmarked;
	int verbose;
	struct unwind_stats *stats;
};

struct autopolicy *autopolicy__new(struct unwind_stats *st)
{
	struct autopolicy *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->stats = st;
	a->marks = hashmap__new(0);
	if (!a->marks) {
		free(a);
		return NULL;
	}
	return a;
}

void autopolicy__set_verbose(struct autopolicy *a, int verbose)
{
	a->verbose = verbose;
}

void autopolicy__free(struct autopolicy *a)
{
	if (!a)
		return;
	hashmap__free(a->marks);
	free(a);
}

bool autopolicy__cfi_helps(const uint64_t *fp, size_t nfp,
			   const uint64_t *cfi, size_t ncfi)
{
	size_t same = 0;

	while (same < nfp && same < ncfi && fp[same] == cfi[same])
		same++;
	return ncfi > same + TAIL_SLACK;
}

/* Records that pid wants its stacks copied on every sample, or no longer,
 * for autopolicy__take: the latest word for a pid wins. */
static int note_mark(struct autopolicy *a, uint32_t pid, bool copy)
{
	return hashmap__put(a->marks, &pid, sizeof(pid), copy);
}

static void set_marked(struct autopolicy *a, uint32_t pid,
		       struct automark *m, bool on)
{
	if (m->marked == on)
		return;
	if (on && a->nmarked >= MAX_MARKED)
		return;
	if (note_mark(a, pid, on))
		return;
	m->marked = on;
	m->win_copies = m->win_helped = 0;
	if (a->verbose)
		fprintf(stderr, "tagprof: unwind: pid %u %s\n", pid,
			on ? "needs CFI" :
			     "no longer helped by CFI: back to probes");
	if (on) {
		a->nmarked++;
		a->stats->marked++;
	} else {
		a->nmarked--;
		a->stats->unmarked++;
	}
}

void autopolicy__observe(struct autopolicy *a, uint32_t pid,
			 struct automark *m, bool probe, bool helps)
{
	if (probe) {
		if (helps)
			set_marked(a, pid, m, true);
	} else if (m->marked) {
		m->win_helped += helps;
		if (++m->win_copies >= DEMOTE_WINDOW) {
			if (!m->win_helped)
				set_marked(a, pid, m, false);
			m->win_copies = m->win_helped = 0;
		}
	}
}

void autopolicy__renew(struct autopolicy *a, uint32_t pid,
		       const struct automark *m)
{
	if (m->marked)
		note_mark(a, pid, true);
}

size_t autopolicy__take(struct autopolicy *a, struct unwind_mark *out,
			size_t max)
{
	size_t it = 0, n = 0;
	const void *key;
	uint64_t v;

	/* Called after every record: an empty table is not scanned (its
	 * slots stay allocated once a mark has grown it). */
	if (!hashmap__size(a->marks))
		return 0;
	while (n < max && hashmap__next(a->marks, &it, &key, NULL, &v))
		out[n++] = (struct unwind_mark){ *(const uint32_t *)key, v };
	for (size_t i = 0; i < n; i++)
		hashmap__del(a->marks, &out[i].pid, sizeof(out[i].pid), NULL);
	return n;
}

void autopolicy__refused(struct autopolicy *a, struct automark *m, bool copy)
{
	if (m->marked != copy)
		return;
	/* Not in force: undo it, so that the next probe that helps asks
	 * again, and the counts say only what BPF does. */
	m->marked = !copy;
	if (copy) {
		a->nmarked--;
		a->stats->marked--;
	} else {
		a->nmarked++;
		a->stats->unmarked--;
	}
}

void autopolicy__forget(struct autopolicy *a, uint32_t pid,
			struct automark *m)
{
	if (!m->marked)
		return;
	note_mark(a, pid, false);
	a->nmarked--;
}
