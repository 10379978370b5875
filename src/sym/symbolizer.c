// SPDX-License-Identifier: BSD-2-Clause
/* Frames to location-table entries. Every address but the leaf is a
 * return address: 1 is subtracted so a call that ends a function is
 * attributed to the caller's function, not the one after it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/demangle.h"
#include "sym/elfsym.h"
#include "kernel/ksymbolizer.h"
#include "sample_event.h"
#include "proc/jitdump.h"
#include "proc/proctable.h"
#include "sym/loctab.h"
#include "sym/symbolizer.h"
#include "sym/symfile.h"
#include "util/utf8.h"

#define KERNEL_START 0xffff800000000000ull	/* x86-64 and arm64 */
#define NAME_MAX_BYTES 4096	/* of a name or file name, after UTF-8 fixes */

#define FRAME_CACHE_BITS 13

struct frame_slot {
	uint64_t ver, addr;
	uint32_t loc;			/* 0: empty */
};

struct symbolizer {
	struct proctable *procs;
	struct ksymbolizer *ks;
	struct loctab *lt;
	uint64_t gen;			/* the loctab's, the cache is for */
	uint32_t kernel_mapping;	/* loctab id, for kernel_gen */
	uint64_t kernel_gen;
	bool demangle;
	uint64_t debug_gen;		/* the symcache's, named late up to */
	struct symbolizer_stats stats;
	struct frame_slot *cache;	/* 1 << FRAME_CACHE_BITS slots */
	/* one frame's strings while its function is made */
	char raw[NAME_MAX_BYTES], name[DEMANGLE_MAX], file[NAME_MAX_BYTES];
};

static bool demangle_default = true;

/* Frame cache: (maps version, address) -> location id of the loctab's
 * generation, direct-mapped. A sample's 100+ frames are mostly addresses seen
 * before; one multiply and one compare each beats a map search and a hash
 * table probe. Kernel addresses use version 0 (procs count from 1). */
static size_t frame_slot(uint64_t ver, uint64_t addr)
{
	uint64_t h = (addr ^ (ver * 0xff51afd7ed558ccdull)) *
		     0x9e3779b97f4a7c15ull;

	return h >> (64 - FRAME_CACHE_BITS);
}

static uint32_t frame_cache_get(struct symbolizer *z, uint64_t ver,
				uint64_t addr)
{
	const struct frame_slot *s = &z->cache[frame_slot(ver, addr)];

	return s->loc && s->addr == addr && s->ver == ver ? s->loc : 0;
}

static void frame_cache_put(struct symbolizer *z, uint64_t ver,
			    uint64_t addr, uint32_t loc)
{
	z->cache[frame_slot(ver, addr)] = (struct frame_slot){ ver, addr, loc };
}

void symbolizer__set_demangle_default(bool on)
{
	demangle_default = on;
}

struct symbolizer *symbolizer__new(struct proctable *procs,
				   struct ksymbolizer *ks, struct loctab *lt)
{
	struct symbolizer *z = calloc(1, sizeof(*z));

	if (!z)
		return NULL;
	z->cache = calloc(1u << FRAME_CACHE_BITS, sizeof(*z->cache));
	if (!z->cache) {
		free(z);
		return NULL;
	}
	z->procs = procs;
	z->ks = ks;
	z->lt = lt;
	z->demangle = demangle_default;
	return z;
}

void symbolizer__free(struct symbolizer *z)
{
	if (z)
		free(z->cache);
	free(z);
}

/* Cached ids are of an older generation of the loctab: drop them. */
static void follow_loctab(struct symbolizer *z)
{
	if (z->gen == loctab__generation(z->lt))
		return;
	z->gen = loctab__generation(z->lt);
	memset(z->cache, 0, sizeof(*z->cache) << FRAME_CACHE_BITS);
}

/* A location whose only line is a function called name. */
static uint32_t named_location(struct symbolizer *z, uint32_t mapping,
			       uint64_t addr, const char *name)
{
	uint32_t fn = loctab__function(z->lt, name, NULL, NULL);

	return fn ? loctab__location(z->lt, mapping, addr, &fn, NULL, 1) : 0;
}

/* A location no symbol names: its mapping and address, and no line. A
 * made-up function ("[prog]") would hide the address from whoever can
 * name it later: pprof, a server with the binary, a debug file that
 * arrives after the window (symbolizer__name_late). */
static uint32_t unnamed_location(struct symbolizer *z, uint32_t mapping,
				 uint64_t addr)
{
	return loctab__location(z->lt, mapping, addr, NULL, NULL, 0);
}

static uint32_t kernel_mapping(struct symbolizer *z)
{
	if (z->kernel_gen != z->gen) {
		z->kernel_mapping = loctab__mapping(z->lt, KERNEL_START,
						    ~0ull, 0,
						    "[kernel.kallsyms]", NULL);
		z->kernel_gen = z->gen;
	}
	return z->kernel_mapping;
}

/* Names the kernel frames missing[0..n) (indexes into kern/locs) in one
 * lookup and gives each its location. */
static void name_kernel_frames(struct symbolizer *z, uint32_t mapping,
			       const uint64_t *addrs, const size_t *missing,
			       size_t n, uint32_t *locs)
{
	const char *names[KSYMBOLIZER_BATCH];
	uint64_t batch[KSYMBOLIZER_BATCH];
	size_t i;

	for (i = 0; i < n; i++)
		batch[i] = addrs[missing[i]];
	ksymbolizer__lookup(z->ks, batch, n, names);
	for (i = 0; i < n; i++) {
		/* A recursive stack repeats an address: the second is
		 * found, not added again. */
		if (names[i]) {
			locs[missing[i]] = named_location(z, mapping,
							  batch[i], names[i]);
		} else {
			z->stats.kernel_no_symbol++;
			locs[missing[i]] = unnamed_location(z, mapping,
							    batch[i]);
		}
		if (locs[missing[i]])
			frame_cache_put(z, 0, batch[i], locs[missing[i]]);
	}
}

/* Locations of nk kernel frames (0 where none could be made), asking
 * the kernel symbol source once per batch of new addresses, not once per
 * frame. addrs gets the return-address-adjusted frames. */
static void kernel_locations(struct symbolizer *z, const uint64_t *kern,
			     size_t nk, uint64_t *addrs, uint32_t *locs)
{
	uint32_t mapping = kernel_mapping(z);
	size_t missing[KSYMBOLIZER_BATCH], nm = 0;

	for (size_t i = 0; i < nk; i++) {
		addrs[i] = i ? kern[i] - 1 : kern[i];
		locs[i] = frame_cache_get(z, 0, addrs[i]);
		if (!locs[i])
			locs[i] = loctab__find_location(z->lt, mapping,
							addrs[i]);
		if (!locs[i])
			missing[nm++] = i;
		else
			frame_cache_put(z, 0, addrs[i], locs[i]);
		if (nm == KSYMBOLIZER_BATCH || (nm && i + 1 == nk)) {
			name_kernel_frames(z, mapping, addrs, missing, nm,
					   locs);
			nm = 0;
		}
	}
}

static uint32_t map_mapping(struct symbolizer *z, struct proc *p,
			    struct proc_map *m)
{
	const char *file = "[anon]", *build_id = NULL;
	struct symfile *sf;

	if (m->loctab_gen == z->gen)
		return m->loctab_id;
	if (m->bin) {
		file = m->bin->path;
		sf = proctable__map_symfile(z->procs, p, m);
		build_id = sf ? symfile__build_id(sf) : NULL;
	}
	m->loctab_id = loctab__mapping(z->lt, m->start, m->end, m->offset, file,
				       build_id);
	if (m->exe)
		loctab__mapping_set_exe(z->lt, m->loctab_id);
	m->loctab_gen = z->gen;
	return m->loctab_id;
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
 * (the symbol as found), both made valid UTF-8. A DWARF line that no
 * function covers (hand-written assembly) has the empty name: pprof then
 * shows its file:line. */
static uint32_t frame_function(struct symbolizer *z, const char *raw,
			       const char *file)
{
	bool symbol = raw != NULL;
	const char *name;

	if (!raw)
		raw = "";
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
	return loctab__function(z->lt, name, symbol ? z->raw : NULL,
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

/* The frames of addr, an address of mapping in symbol file sf (mapped
 * there as m maps it, at its runtime start and file offset), as function
 * ids and lines in fns and lines; returns how many, 0 when nothing names
 * it (or on ENOMEM). */
static size_t name_frames(struct symbolizer *z, struct symfile *sf,
			  uint32_t mapping, uint64_t start, uint64_t offset,
			  uint64_t addr, uint32_t *fns, int32_t *lines)
{
	struct symframe fr[LOCTAB_MAX_LINES];
	bool any_line = false;
	uint64_t vaddr;
	size_t n = 0, i;

	if (sf && !symfile__offset_to_vaddr(sf, addr - start + offset, &vaddr))
		n = symfile__lookup(proctable__symcache(z->procs), sf, vaddr, fr,
				    LOCTAB_MAX_LINES);
	for (i = 0; i < n; i++) {
		fns[i] = frame_function(z, fr[i].name, fr[i].file);
		if (!fns[i])
			return 0;
		lines[i] = fr[i].line;
		any_line |= fr[i].file || fr[i].line;
	}
	if (any_line) {
		z->stats.with_lines++;
		loctab__mapping_set_info(z->lt, mapping, true, true, true);
	}
	if (n)
		z->stats.inlined += n - 1;
	return n;
}

/* JIT code that a code load of the process's jitdump names at time_ns.
 * Its location is in a mapping of that code alone (its addresses, the
 * jitdump file, the offset of the code's bytes in it), as perf inject
 * makes an ELF file of each code load: code memory the JIT reused is
 * then another location in the same window, never named after the old
 * code. Its function is the load's name, with the source file and line
 * that its debug info gives the address. 0 when the jitdump names no
 * code there then; *has says whether the process has a jitdump. */
static uint32_t jitdump_location(struct symbolizer *z, struct proc *p,
				 uint64_t addr, uint64_t time_ns, bool *has)
{
	uint32_t mapping, loc, fn;
	struct jitdump_hit h;
	const char *path;
	int32_t line;
	int r;

	r = proctable__jitdump(z->procs, p, addr, time_ns, &h, &path);
	*has = r >= 0;
	if (r != 1)
		return 0;
	mapping = loctab__mapping(z->lt, h.start, h.end, h.code_offset, path,
				  NULL);
	if (!mapping)
		return 0;
	loc = loctab__find_location(z->lt, mapping, addr);
	if (loc)
		return loc;
	fn = frame_function(z, h.name, h.file);
	if (!fn)
		return 0;
	line = h.line <= INT32_MAX ? (int32_t)h.line : 0;
	if (h.file || line) {
		z->stats.with_lines++;
		loctab__mapping_set_info(z->lt, mapping, h.file != NULL,
					 line != 0, false);
	}
	z->stats.jitdump_named++;
	return loctab__location(z->lt, mapping, addr, &fn, &line, 1);
}

/* The location of an address in mapping m of process p, at time_ns;
 * *cacheable false when it may be another at another time. */
static uint32_t mapped_location(struct symbolizer *z, struct proc *p,
				struct proc_map *m, uint64_t addr,
				uint64_t time_ns, bool *cacheable)
{
	uint32_t mapping, loc, fns[LOCTAB_MAX_LINES];
	int32_t lines[LOCTAB_MAX_LINES];
	struct symfile *sf;
	const char *jit;
	bool jitdump;
	size_t n;

	/* A jitdump names JIT code first: a perf map has a name for an
	 * address, the jitdump the code there at the sample's time, and its
	 * file and line. What it says of an address changes as the JIT
	 * reuses memory and appends to the file, so none of the process's
	 * JIT frames are cached by address. */
	if (jit_memory(m)) {
		loc = jitdump_location(z, p, addr, time_ns, &jitdump);
		*cacheable = !jitdump;
		if (loc)
			return loc;
	}
	mapping = map_mapping(z, p, m);
	loc = loctab__find_location(z->lt, mapping, addr);
	if (loc)
		return loc;
	sf = m->bin ? proctable__map_symfile(z->procs, p, m) : NULL;
	n = name_frames(z, sf, mapping, m->start, m->offset, addr, fns, lines);
	if (!n && jit_memory(m)) {
		jit = proctable__jit_name(z->procs, p, addr);
		if (jit) {
			fns[0] = frame_function(z, jit, NULL);
			lines[0] = 0;
			n = fns[0] ? 1 : 0;
			z->stats.jit_named++;
		} else if (m->anon_exec) {
			z->stats.anon_unnamed++;
		}
	}
	if (!n) {
		z->stats.no_symbol++;
		if (untrusted(m))
			z->stats.untrusted++;
		return unnamed_location(z, mapping, addr);
	}
	return loctab__location(z->lt, mapping, addr, fns, lines, n);
}

void symbolizer__name_late(struct symbolizer *z)
{
	struct symcache *c = proctable__symcache(z->procs);
	uint32_t fns[LOCTAB_MAX_LINES];
	int32_t lines[LOCTAB_MAX_LINES];
	const struct loctab_location *l;
	const struct loctab_mapping *m;
	size_t n, nlocs;

	symcache__collect(c);
	if (z->debug_gen == symcache__debug_gen(c))
		return;
	z->debug_gen = symcache__debug_gen(c);
	follow_loctab(z);
	nlocs = loctab__nlocations(z->lt);
	for (uint32_t id = 1; id <= nlocs; id++) {
		l = loctab__location_at(z->lt, id);
		if (l->nlines || !l->mapping)
			continue;
		m = loctab__mapping_at(z->lt, l->mapping);
		n = name_frames(z, symcache__find(c, m->build_id), l->mapping,
				m->start, m->offset, l->address, fns, lines);
		if (n && !loctab__name_location(z->lt, id, fns, lines, n))
			z->stats.named_late++;
	}
}

static uint32_t user_location(struct symbolizer *z, struct proc *p,
			      uint64_t addr, uint64_t time_ns)
{
	bool cacheable = true;
	struct proc_map *m;
	uint32_t loc;

	if (p && (loc = frame_cache_get(z, p->maps_ver, addr)))
		return loc;
	m = p ? proctable__find_map(z->procs, p, addr, time_ns) : NULL;
	if (!m) {
		/* Not cached: a later sample may find it after a reload. */
		z->stats.unmapped++;
		loc = loctab__find_location(z->lt, 0, addr);
		return loc ? loc : unnamed_location(z, 0, addr);
	}
	loc = mapped_location(z, p, m, addr, time_ns, &cacheable);
	if (loc && cacheable)	/* the maps may have been reread meanwhile */
		frame_cache_put(z, p->maps_ver, addr, loc);
	return loc;
}

size_t symbolizer__stack_at(struct symbolizer *z, struct proc *p,
			    uint64_t time_ns, const uint64_t *user, size_t nu,
			    const uint64_t *kern, size_t nk, uint32_t *locs)
{
	uint32_t klocs[TP_MAX_FRAMES], loc;
	uint64_t kaddrs[TP_MAX_FRAMES];
	size_t n = 0;

	follow_loctab(z);
	if (nk > TP_MAX_FRAMES)
		nk = TP_MAX_FRAMES;
	kernel_locations(z, kern, nk, kaddrs, klocs);
	for (size_t i = 0; i < nk; i++)
		if (klocs[i])
			locs[n++] = klocs[i];
	/* The user leaf is only a leaf when the kernel did not interrupt a
	 * syscall: then user[0] is the instruction after the syscall, a
	 * return address like the others. */
	for (size_t i = 0; i < nu; i++) {
		loc = user_location(z, p, (i || nk) ? user[i] - 1 : user[i],
				    time_ns);
		if (loc)
			locs[n++] = loc;
	}
	z->stats.kernel_frames += nk;
	z->stats.user_frames += nu;
	return n;
}

size_t symbolizer__stack(struct symbolizer *z, struct proc *p,
			 const uint64_t *user, size_t nu,
			 const uint64_t *kern, size_t nk, uint32_t *locs)
{
	return symbolizer__stack_at(z, p, 0, user, nu, kern, nk, locs);
}

const struct symbolizer_stats *symbolizer__stats(const struct symbolizer *z)
{
	return &z->stats;
}
