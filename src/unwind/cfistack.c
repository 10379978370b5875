// SPDX-License-Identifier: BSD-2-Clause
/* CFI walks with cached rules (cfistack.h). */
#include <string.h>

#include "proc/proctable.h"
#include "sample_event.h"
#include "unwind/bincache.h"
#include "unwind/cfirule.h"
#include "unwind/cfistack.h"
#include "unwind/unwind.h"

bool cfistack__read_word(void *sample, uint64_t addr, uint64_t *val)
{
	const struct unwind_sample *s = sample;
	uint64_t sp;

	if (!s || !s->regs)
		return false;
	sp = s->regs->sp;
	if (addr < sp || s->stack_len < sizeof(*val) ||
	    addr - sp > s->stack_len - sizeof(*val))
		return false;
	memcpy(val, s->stack + (addr - sp), sizeof(*val));
	return true;
}

/* A caller's rule is looked up at its return address - 1, as a call may
 * end its function. */
size_t cfistack__walk(struct bincache *bins, struct proc *p,
		      const struct unwind_sample *s, uint64_t *out)
{
	struct cfiregs r = { s->regs->ip, s->regs->sp, s->regs->bp, true };
	const struct proc_map *m = NULL;
	struct bincache_entry *b = NULL;
	uint64_t bias = 0, look, rule;
	size_t n = 0;

	for (;;) {
		out[n++] = r.pc;
		if (n == TP_MAX_FRAMES)
			return n;
		look = n > 1 ? r.pc - 1 : r.pc;
		if (!m || look < m->start || look >= m->end) {
			m = proctable__map_at(p, look);
			b = m && m->bin ? bincache__get(bins, p->pid, m) : NULL;
			if (!b || !b->cfi ||
			    !bincache__map_bias(b, m->start, m->offset, &bias))
				return 0;
		}
		rule = bincache__rule(bins, b, look - bias);
		if (!cfirule__usable(rule))
			return 0;
		if (cfirule__step(rule, &r, cfistack__read_word, (void *)s) !=
		    CFIRULE_CALLER || !r.pc)
			return n;	/* where libdwfl ends too */
	}
}
