// SPDX-License-Identifier: BSD-2-Clause
/* Frames to pprof locations. Every address but the leaf is a return
 * address: 1 is subtracted so a call that ends a function is attributed to
 * the caller's function, not the one after it. */
#include <stdio.h>
#include <stdlib.h>

#include "elfsym.h"
#include "kallsyms.h"
#include "pprof.h"
#include "procs.h"
#include "symbolize.h"

#define KERNEL_START 0xffff800000000000ull	/* x86-64 and arm64 */

struct symbolizer {
	struct procs *procs;
	struct kallsyms *ks;
	struct pprof *pp;
	uint64_t gen;			/* bumped per pprof */
	uint64_t kernel_mapping;	/* pprof id, for gen */
	uint64_t kernel_gen;
	struct symbolize_stats stats;
};

struct symbolizer *symbolizer__new(struct procs *procs, struct kallsyms *ks)
{
	struct symbolizer *z = calloc(1, sizeof(*z));

	if (!z)
		return NULL;
	z->procs = procs;
	z->ks = ks;
	return z;
}

void symbolizer__free(struct symbolizer *z)
{
	free(z);
}

void symbolizer__set_pprof(struct symbolizer *z, struct pprof *pp)
{
	z->pp = pp;
	z->gen++;
}

/* A location whose only line is a function called name. */
static uint64_t named_location(struct symbolizer *z, uint64_t mapping,
			       uint64_t addr, const char *name)
{
	uint64_t fn = pprof__function(z->pp, name, NULL, NULL);

	return fn ? pprof__location(z->pp, mapping, addr, &fn, NULL, 1) : 0;
}

static uint64_t kernel_mapping(struct symbolizer *z)
{
	if (z->kernel_gen != z->gen) {
		z->kernel_mapping = pprof__mapping(z->pp, KERNEL_START, ~0ull, 0,
						   "[kernel.kallsyms]", NULL);
		z->kernel_gen = z->gen;
	}
	return z->kernel_mapping;
}

static uint64_t kernel_location(struct symbolizer *z, uint64_t addr)
{
	uint64_t mapping = kernel_mapping(z), loc;
	const char *name = NULL;

	loc = pprof__find_location(z->pp, mapping, addr);
	if (loc)
		return loc;
	if (z->ks)
		name = kallsyms__lookup(z->ks, addr, NULL, NULL);
	if (!name) {
		z->stats.kernel_no_symbol++;
		name = "[kernel.kallsyms]";
	}
	return named_location(z, mapping, addr, name);
}

static uint64_t map_mapping(struct symbolizer *z, struct proc *p,
			    struct proc_map *m)
{
	const char *file = "[anon]", *build_id = NULL;
	struct elfsym *syms;

	if (m->pprof_gen == z->gen)
		return m->pprof_id;
	if (m->bin) {
		file = m->bin->path;
		syms = procs__binary_syms(z->procs, p, m->bin);
		build_id = syms ? elfsym__build_id(syms) : NULL;
	}
	m->pprof_id = pprof__mapping(z->pp, m->start, m->end, m->offset, file,
				     build_id);
	m->pprof_gen = z->gen;
	return m->pprof_id;
}

/* Name for a mapped address with no symbol: the file, or what the memory
 * is. Never a guess at a nearby symbol. */
static const char *fallback_name(struct proc_map *m, char *buf, size_t len)
{
	if (!m->bin)
		return "[anon]";
	if (m->bin->path[0] == '[')
		return m->bin->path;	/* [vdso], [vsyscall] */
	snprintf(buf, len, "[%s]", m->bin->name);
	return buf;
}

static uint64_t user_location(struct symbolizer *z, struct proc *p,
			      uint64_t addr)
{
	struct proc_map *m = p ? procs__find_map(z->procs, p, addr) : NULL;
	uint64_t mapping, loc, vaddr;
	const char *name = NULL;
	struct elfsym *syms;
	char buf[96];

	if (!m) {
		z->stats.unmapped++;
		loc = pprof__find_location(z->pp, 0, addr);
		return loc ? loc : named_location(z, 0, addr, "[unknown]");
	}
	mapping = map_mapping(z, p, m);
	loc = pprof__find_location(z->pp, mapping, addr);
	if (loc)
		return loc;
	syms = m->bin ? procs__binary_syms(z->procs, p, m->bin) : NULL;
	if (syms && !elfsym__offset_to_vaddr(syms, addr - m->start + m->offset,
					     &vaddr))
		name = elfsym__lookup(syms, vaddr, NULL);
	if (!name) {
		z->stats.no_symbol++;
		name = fallback_name(m, buf, sizeof(buf));
	}
	return named_location(z, mapping, addr, name);
}

size_t symbolizer__stack(struct symbolizer *z, struct proc *p,
			 const uint64_t *user, size_t nu,
			 const uint64_t *kern, size_t nk, uint64_t *locs)
{
	size_t n = 0;
	uint64_t loc;

	for (size_t i = 0; i < nk; i++) {
		loc = kernel_location(z, i ? kern[i] - 1 : kern[i]);
		if (loc)
			locs[n++] = loc;
	}
	/* The user leaf is only a leaf when the kernel did not interrupt a
	 * syscall: then user[0] is the instruction after the syscall, a
	 * return address like the others. */
	for (size_t i = 0; i < nu; i++) {
		loc = user_location(z, p, (i || nk) ? user[i] - 1 : user[i]);
		if (loc)
			locs[n++] = loc;
	}
	z->stats.kernel_frames += nk;
	z->stats.user_frames += nu;
	return n;
}

const struct symbolize_stats *symbolizer__stats(const struct symbolizer *z)
{
	return &z->stats;
}
