// SPDX-License-Identifier: BSD-2-Clause
/* Stacks by id, in two generations (see stacktab.h). */
#include "capture/stacktab.h"

#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"

#define DEFAULT_MAX_BYTES ((size_t)64 << 20)

struct stack_entry {
	uint64_t id;		/* the key (borrowed by the map) */
	uint32_t pid;
	uint16_t nu, nk;
	uint64_t frames[];
};

struct stacktab {
	struct hashmap *tab[2];	/* by generation parity */
	/* the last record's user and kernel frames, joined */
	uint64_t joined[2 * TP_MAX_FRAMES];
	size_t bytes[2];
	uint32_t gen;		/* the current generation */
	uint64_t gen_ns;	/* when it began; 0: no roll asked yet */
	size_t max_bytes;
};

static void clear(struct stacktab *t, int which)
{
	hashmap__free_values(t->tab[which], free);
	t->tab[which] = NULL;
	t->bytes[which] = 0;
}

struct stacktab *stacktab__new(size_t max_bytes)
{
	struct stacktab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->max_bytes = max_bytes ? max_bytes : DEFAULT_MAX_BYTES;
	t->tab[0] = hashmap__new(HASHMAP_BORROW_KEYS);
	t->tab[1] = hashmap__new(HASHMAP_BORROW_KEYS);
	if (!t->tab[0] || !t->tab[1]) {
		stacktab__free(t);
		return NULL;
	}
	return t;
}

void stacktab__free(struct stacktab *t)
{
	if (!t)
		return;
	clear(t, 0);
	clear(t, 1);
	free(t);
}

/* The table of the record's generation: the current one or the one
 * before; -1 for any other (a record older than the last roll). */
static int table_of(const struct stacktab *t, uint8_t gen)
{
	if (gen == (uint8_t)t->gen)
		return t->gen & 1;
	if (gen == (uint8_t)(t->gen - 1))
		return (t->gen - 1) & 1;
	return -1;
}

static size_t entry_size(size_t nframes)
{
	return sizeof(struct stack_entry) + nframes * sizeof(uint64_t);
}

/* The identity of one part of a record's stack: a user stack's belongs to
 * its pid, a kernel stack's (nu and pid 0) to every process. */
struct part {
	uint64_t id;
	uint32_t pid;
	uint16_t nu, nk;
};

/* Remembers a NEW part's frames. Failing is not an error here: a later
 * SEEN record of them is refused and counted. */
static void remember(struct stacktab *t, int which, const struct part *p,
		     const uint64_t *frames)
{
	size_t n = (size_t)p->nu + p->nk;
	struct stack_entry *e = malloc(entry_size(n));

	if (!e)
		return;
	e->id = p->id;
	e->pid = p->pid;
	e->nu = p->nu;
	e->nk = p->nk;
	memcpy(e->frames, frames, n * sizeof(uint64_t));
	if (hashmap__put(t->tab[which], &e->id, sizeof(e->id),
			 (uint64_t)(uintptr_t)e)) {
		free(e);
		return;
	}
	t->bytes[which] += entry_size(n);
}

/* A part's frames: a NEW part's, as sent (and remembered), a SEEN part's,
 * as remembered; NULL where the table has no such part. The id alone could
 * be shared by two stacks only by a 64-bit accident, but the pid and
 * depths are checked too, so that even then no process gets another's
 * frames. */
static const uint64_t *part_frames(struct stacktab *t, int which,
				   uint8_t kind, const struct part *p,
				   const uint64_t *sent)
{
	struct stack_entry *e;
	uint64_t v;

	if (kind == TP_STACK_NEW) {
		/* Kept once: other CPUs may send it whole too. An old
		 * generation's is of no use: no record of it follows. */
		if (which >= 0 &&
		    !hashmap__get(t->tab[which], &p->id, sizeof(p->id), NULL))
			remember(t, which, p, sent);
		return sent;
	}
	if (which < 0 ||
	    !hashmap__get(t->tab[which], &p->id, sizeof(p->id), &v))
		return NULL;
	e = (struct stack_entry *)(uintptr_t)v;
	if (e->pid != p->pid || e->nu != p->nu || e->nk != p->nk)
		return NULL;
	return e->frames;
}

bool stacktab__resolve(struct stacktab *t, struct raw_sample *rs)
{
	const struct tp_sample *s = rs->s;
	int which = table_of(t, s->stack_gen);
	struct part up = { s->stack_id, s->pid, s->user_depth, 0 };
	struct part kp = { rs->kstack_id, 0, 0, s->kern_depth };
	const uint64_t *u, *k;

	if (s->stack_kind == TP_STACK_FRAMES)
		return true;
	u = part_frames(t, which, s->stack_kind, &up, rs->uframes);
	if (!u)
		return false;
	if (s->kstack_kind == TP_STACK_FRAMES) {
		rs->frames = u;
		return true;
	}
	k = part_frames(t, which, s->kstack_kind, &kp, rs->kframes);
	if (!k)
		return false;
	memcpy(t->joined, u, s->user_depth * sizeof(uint64_t));
	memcpy(t->joined + s->user_depth, k, s->kern_depth * sizeof(uint64_t));
	rs->frames = t->joined;
	return true;
}

bool stacktab__roll(struct stacktab *t, uint64_t now_ns, uint32_t *gen)
{
	size_t cur = t->bytes[t->gen & 1];
	struct hashmap *m;

	if (!t->gen_ns)
		t->gen_ns = now_ns;
	/* Half the bound for the current generation: the previous one,
	 * which may still have records on their way, keeps the rest. */
	if (cur <= t->max_bytes / 2 &&
	    (!cur || now_ns - t->gen_ns < STACKTAB_AGE_NS))
		return false;
	m = hashmap__new(HASHMAP_BORROW_KEYS);
	if (!m)
		return false;
	t->gen++;
	t->gen_ns = now_ns;
	clear(t, t->gen & 1);
	t->tab[t->gen & 1] = m;
	*gen = t->gen;
	return true;
}

size_t stacktab__bytes(const struct stacktab *t)
{
	return t->bytes[0] + t->bytes[1];
}
