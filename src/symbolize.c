// SPDX-License-Identifier: BSD-2-Clause
/* Frames to pprof locations. Every address but the leaf is a return
 * address: 1 is subtracted so a call that ends a function is attributed to
 * the caller's function, not the one after it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "elfsym.h"
#include "kallsyms.h"
#include "pprof.h"
#include "procs.h"
#include "symbolize.h"
#include "symfile.h"
#include "utf8.h"

#define KERNEL_START 0xffff800000000000ull	/* x86-64 and arm64 */
#define MAX_INLINE 32		/* lines in one location */
#define NAME_MAX_BYTES 4096	/* of a name or file name, after UTF-8 fixes */

struct symbolizer {
	struct procs *procs;
	struct kallsyms *ks;
	struct pprof *pp;
	uint64_t gen;			/* bumped per pprof */
	uint64_t kernel_mapping;	/* pprof id, for gen */
	uint64_t kernel_gen;
	bool demangle;
	struct symbolize_stats stats;
	/* one frame's strings while its function is made */
	char raw[NAME_MAX_BYTES], name[DEMANGLE_MAX], file[NAME_MAX_BYTES];
};

static bool demangle_default = true;

void symbolize__set_demangle_default(bool on)
{
	demangle_default = on;
}

struct symbolizer *symbolizer__new(struct procs *procs, struct kallsyms *ks)
{
	struct symbolizer *z = calloc(1, sizeof(*z));

	if (!z)
		return NULL;
	z->procs = procs;
	z->ks = ks;
	z->demangle = demangle_default;
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
	struct symfile *sf;

	if (m->pprof_gen == z->gen)
		return m->pprof_id;
	if (m->bin) {
		file = m->bin->path;
		sf = procs__map_symfile(z->procs, p, m);
		build_id = sf ? symfile__build_id(sf) : NULL;
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
		return m->bin->path;	/* [vdso], [vsyscall] and [anon:name] */
	snprintf(buf, len, "[%s]", m->bin->name);
	return buf;
}

/* Memory a JIT may have named in its perf map: anonymous, memfd or named
 * anonymous (PR_SET_VMA_ANON_NAME) memory. */
static bool jit_memory(const struct proc_map *m)
{
	if (m->anon_exec)
		return true;
	return m->bin && (!strncmp(m->bin->path, "[anon:", 6) ||
			  !strncmp(m->bin->path, "/memfd:", 7));
}

/* A frame's function: name (demangled unless turned off) and system name
 * (the symbol as found), both made valid UTF-8. Fallback names like
 * "[libc.so.6]" are not symbols and get no system name. */
static uint64_t frame_function(struct symbolizer *z, const char *raw,
			       bool symbol, const char *file)
{
	const char *name;

	utf8__sanitize((const uint8_t *)raw, strnlen(raw, NAME_MAX_BYTES),
		       z->raw, sizeof(z->raw));
	name = z->raw;
	if (symbol && z->demangle &&
	    demangle__name(z->raw, z->name, sizeof(z->name)))
		name = z->name;
	if (file)
		utf8__sanitize((const uint8_t *)file,
			       strnlen(file, NAME_MAX_BYTES), z->file,
			       sizeof(z->file));
	return pprof__function(z->pp, name, symbol ? z->raw : NULL,
			       file ? z->file : NULL);
}

/* A binary that was found but is not trusted (replaced on disk), or is
 * corrupt. */
static bool untrusted(const struct proc_map *m)
{
	const struct binary *b = m->bin;

	if (!b || !b->loaded)
		return false;
	if (b->sf)
		return elfsym__damaged(b->syms);
	return b->load_err == ESTALE || b->load_err == ENOEXEC ||
	       b->load_err == EINVAL;
}

static uint64_t user_location(struct symbolizer *z, struct proc *p,
			      uint64_t addr)
{
	struct proc_map *m = p ? procs__find_map(z->procs, p, addr) : NULL;
	uint64_t mapping, loc, vaddr, fns[MAX_INLINE];
	int64_t lines[MAX_INLINE];
	struct symframe fr[MAX_INLINE];
	const char *fallback;
	struct symfile *sf;
	size_t n = 0, i;
	char buf[96];
	bool any_line = false;

	if (!m) {
		z->stats.unmapped++;
		loc = pprof__find_location(z->pp, 0, addr);
		return loc ? loc : named_location(z, 0, addr, "[unknown]");
	}
	mapping = map_mapping(z, p, m);
	loc = pprof__find_location(z->pp, mapping, addr);
	if (loc)
		return loc;
	sf = m->bin ? procs__map_symfile(z->procs, p, m) : NULL;
	if (sf && !symfile__offset_to_vaddr(sf, addr - m->start + m->offset,
					    &vaddr))
		n = symfile__lookup(procs__symcache(z->procs), sf, vaddr, fr,
				    MAX_INLINE);
	if (!n && jit_memory(m)) {
		fr[0] = (struct symframe){
			procs__jit_name(z->procs, p, addr), NULL, 0 };
		if (fr[0].name) {
			n = 1;
			z->stats.jit_named++;
		} else if (m->anon_exec) {
			z->stats.anon_unnamed++;
		}
	}
	fallback = fallback_name(m, buf, sizeof(buf));
	if (!n) {
		z->stats.no_symbol++;
		if (untrusted(m))
			z->stats.untrusted++;
		return named_location(z, mapping, addr, fallback);
	}
	for (i = 0; i < n; i++) {
		fns[i] = frame_function(z, fr[i].name ? fr[i].name : fallback,
					fr[i].name != NULL, fr[i].file);
		if (!fns[i])
			return 0;
		lines[i] = fr[i].line;
		any_line |= fr[i].file || fr[i].line;
	}
	if (any_line) {
		z->stats.with_lines++;
		pprof__mapping_set_info(z->pp, mapping, true, true, true);
	}
	z->stats.inlined += n - 1;
	return pprof__location(z->pp, mapping, addr, fns, lines, n);
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
