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
	size_t bytes[2];
	uint32_t gen;		/* the current generation */
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

/* Remembers a NEW record's frames. Failing is not an error here: a later
 * SEEN record of them is refused and counted. */
static void remember(struct stacktab *t, int which, const struct raw_sample *rs)
{
	const struct tp_sample *s = rs->s;
	size_t n = (size_t)s->user_depth + s->kern_depth;
	struct stack_entry *e = malloc(entry_size(n));

	if (!e)
		return;
	e->id = s->stack_id;
	e->pid = s->pid;
	e->nu = s->user_depth;
	e->nk = s->kern_depth;
	memcpy(e->frames, rs->frames, n * sizeof(uint64_t));
	if (hashmap__put(t->tab[which], &e->id, sizeof(e->id),
			 (uint64_t)(uintptr_t)e)) {
		free(e);
		return;
	}
	t->bytes[which] += entry_size(n);
}

/* Whether the entry is the one the record means: the id alone could be
 * shared by two stacks only by a 64-bit accident, but the pid and depths
 * are checked too, so that even then no process gets another's frames. */
static bool same_stack(const struct stack_entry *e, const struct tp_sample *s)
{
	return e->pid == s->pid && e->nu == s->user_depth &&
	       e->nk == s->kern_depth;
}

bool stacktab__resolve(struct stacktab *t, struct raw_sample *rs)
{
	const struct tp_sample *s = rs->s;
	int which = table_of(t, s->stack_gen);
	struct stack_entry *e;
	uint64_t v;

	switch (s->stack_kind) {
	case TP_STACK_NEW:
		/* Kept once: other CPUs send it whole too. An old
		 * generation's is of no use: no record of it follows. */
		if (which >= 0 && !hashmap__get(t->tab[which], &s->stack_id,
						sizeof(s->stack_id), NULL))
			remember(t, which, rs);
		return true;
	case TP_STACK_SEEN:
		if (which < 0 || !hashmap__get(t->tab[which], &s->stack_id,
					       sizeof(s->stack_id), &v))
			return false;
		e = (struct stack_entry *)(uintptr_t)v;
		if (!same_stack(e, s))
			return false;
		rs->frames = e->frames;
		return true;
	default:
		return true;
	}
}

bool stacktab__roll(struct stacktab *t, uint32_t *gen)
{
	struct hashmap *m;

	/* Half the bound for the current generation: the previous one,
	 * which may still have records on their way, keeps the rest. */
	if (t->bytes[t->gen & 1] <= t->max_bytes / 2)
		return false;
	m = hashmap__new(HASHMAP_BORROW_KEYS);
	if (!m)
		return false;
	t->gen++;
	clear(t, t->gen & 1);
	t->tab[t->gen & 1] = m;
	*gen = t->gen;
	return true;
}

size_t stacktab__bytes(const struct stacktab *t)
{
	return t->bytes[0] + t->bytes[1];
}
