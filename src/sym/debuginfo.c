// SPDX-License-Identifier: BSD-2-Clause
/* Debug files (build ID and .gnu_debuglink) and DWARF lookups with libdw.
 *
 * The DWARF of a file is indexed in two steps, both bounded: when it is
 * opened, the address ranges of its compile units; when an address first
 * falls in a compile unit, the ranges of that unit's functions. A lookup
 * then walks one function's DIE tree, down the lexical blocks and inlined
 * calls that hold the address, instead of the whole unit. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <zlib.h>

#include "sym/debuginfo.h"
#include "sym/elfsym.h"
#include "proc/targetfile.h"
#include "util/grow.h"
#include "util/sortedrange.h"

#define DEFAULT_DEBUG_DIRS	"/usr/lib/debug"
#define DEBUG_DIRS_MAX		16
#define SEEN_MAX		32	/* candidate files remembered */
#define CRC_FILE_MAX		(4ull << 30)
#define CU_RANGES_MAX		(4u << 20)
#define FN_RANGES_MAX		(1u << 20)	/* per compile unit */
#define NEST_MAX		16	/* namespaces and classes */
#define SCOPE_DEPTH_MAX		64	/* blocks and inlined calls */

/* ---- debug file search ---- */

const char *debuginfo__dirs(void)
{
	const char *env = getenv("TAGPROF_DEBUG_DIRS");

	return env && *env ? env : DEFAULT_DEBUG_DIRS;
}

/* CRC-32 of the whole file open at fd, read with pread from its start. */
static int fd_crc(int fd, uint32_t *crc)
{
	unsigned char buf[1 << 16];
	uLong c = crc32(0, Z_NULL, 0);
	uint64_t total = 0;
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return -ENOEXEC;
	if ((uint64_t)st.st_size > CRC_FILE_MAX)
		return -EFBIG;
	while ((n = pread(fd, buf, sizeof(buf), (off_t)total)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c = crc32(c, buf, (uInt)n);
		total += n;
		if (total > CRC_FILE_MAX)
			return -EFBIG;
	}
	*crc = (uint32_t)c;
	return 0;
}

int debuginfo__file_crc(const char *path, uint32_t *crc)
{
	int fd, err;

	fd = targetfile__open(path, NULL, NULL);
	if (fd < 0)
		return fd;
	err = fd_crc(fd, crc);
	close(fd);
	return err;
}

enum how { BY_BUILD_ID, BY_LINK };

struct search {
	const struct debug_target *t;
	struct debuginfo_stats *st;
	struct { uint64_t dev, ino; } seen[SEEN_MAX];
	size_t nseen;
	struct elfsym *found;
	char *found_path;
	bool found_follow;
};

/* Whether this file was tried already (a path reached both through the
 * process's root and the host's, when they are one), else remembers it. */
static bool seen_before(struct search *s, const struct stat *st)
{
	uint64_t dev = targetfile__dev(st->st_dev);

	for (size_t i = 0; i < s->nseen; i++)
		if (s->seen[i].dev == dev && s->seen[i].ino == st->st_ino)
			return true;
	if (s->nseen < SEEN_MAX) {
		s->seen[s->nseen].dev = dev;
		s->seen[s->nseen].ino = st->st_ino;
		s->nseen++;
	}
	return false;
}

/* Tries one candidate path; true when it is accepted (search over).
 * follow: the path is in a debug directory of the host, which only its
 * administrator writes, so symbolic links there are followed (Fedora's
 * .build-id entries are links); never elsewhere (targetfile.h). */
static bool try_candidate(struct search *s, const char *path, enum how how,
			  bool follow)
{
	const struct debug_target *t = s->t;
	struct targetfile_want want = { .follow = follow };
	struct elfsym *e = NULL;
	const char *id;
	struct stat st;
	uint32_t crc;
	int fd;

	fd = targetfile__open(path, &want, &st);
	if (fd < 0)
		return false;
	if ((targetfile__dev(st.st_dev) == t->dev && st.st_ino == t->ino &&
	     t->ino) || seen_before(s, &st)) {
		close(fd);
		return false;
	}
	e = elfsym__open_fd(fd, t->sym_max);
	if (!e || elfsym__damaged(e) ||
	    (!elfsym__has_symtab(e) && !elfsym__has_dwarf(e))) {
		s->st->debug_bad++;
		goto refuse;
	}
	id = elfsym__build_id(e);
	if (t->build_id && (!id || strcmp(id, t->build_id))) {
		s->st->debug_build_id_mismatch++;
		goto refuse;
	}
	if (how == BY_LINK && (fd_crc(fd, &crc) || crc != t->crc)) {
		s->st->debug_crc_mismatch++;
		goto refuse;
	}
	s->found_path = strdup(path);
	if (!s->found_path)
		goto refuse;
	s->found = e;
	s->found_follow = follow;
	if (how == BY_BUILD_ID)
		s->st->debug_by_build_id++;
	else
		s->st->debug_by_link++;
	close(fd);
	return true;
refuse:
	elfsym__free(e);
	close(fd);
	return false;
}

/* Tries rel under the process's root, then under the host's. in_dir: rel
 * is in one of the debug directories (links followed on the host only). */
static bool try_rooted(struct search *s, const char *rel, enum how how,
		       bool in_dir)
{
	char path[PATH_MAX];
	int n;

	if (s->t->root) {
		n = snprintf(path, sizeof(path), "%s%s", s->t->root, rel);
		if (n > 0 && (size_t)n < sizeof(path) &&
		    try_candidate(s, path, how, false))
			return true;
	}
	return try_candidate(s, rel, how, in_dir);
}

/* The debug directories, split; returns how many. */
static size_t split_dirs(char *buf, size_t len, const char **dirs)
{
	size_t n = 0;
	char *save = NULL, *tok;

	snprintf(buf, len, "%s", debuginfo__dirs());
	for (tok = strtok_r(buf, ":", &save); tok && n < DEBUG_DIRS_MAX;
	     tok = strtok_r(NULL, ":", &save)) {
		size_t l = strlen(tok);

		while (l > 1 && tok[l - 1] == '/')
			tok[--l] = '\0';
		if (tok[0] == '/')	/* relative ones would depend on cwd */
			dirs[n++] = tok;
	}
	return n;
}

static bool search_build_id(struct search *s, const char **dirs, size_t nd)
{
	const char *id = s->t->build_id;
	char rel[PATH_MAX];
	int n;

	if (!id || strlen(id) < 3)
		return false;
	for (size_t i = 0; i < nd; i++) {
		n = snprintf(rel, sizeof(rel), "%s/.build-id/%.2s/%s.debug",
			     strcmp(dirs[i], "/") ? dirs[i] : "", id, id + 2);
		if (n > 0 && (size_t)n < sizeof(rel) &&
		    try_rooted(s, rel, BY_BUILD_ID, true))
			return true;
	}
	return false;
}

static bool search_link(struct search *s, const char **dirs, size_t nd)
{
	const char *link = s->t->debuglink, *slash;
	char dir[PATH_MAX], rel[PATH_MAX];
	size_t dlen;
	int n;

	if (!link || !s->t->path || s->t->path[0] != '/')
		return false;
	/* A debuglink is a file name (GNU tools write the debug file's
	 * basename). One with a '/' would be joined to the debug
	 * directories, where links are followed, and lead anywhere:
	 * /usr/lib/debug/usr/bin/../../../../etc/shadow (issue 15). */
	if (strchr(link, '/')) {
		s->st->debug_link_path++;
		return false;
	}
	slash = strrchr(s->t->path, '/');
	dlen = slash - s->t->path;	/* "" for a file in / */
	if (dlen >= sizeof(dir))
		return false;
	memcpy(dir, s->t->path, dlen);
	dir[dlen] = '\0';
	/* Beside the binary: a directory its owner may write. */
	n = snprintf(rel, sizeof(rel), "%s/%s", dir, link);
	if (n > 0 && (size_t)n < sizeof(rel) &&
	    try_rooted(s, rel, BY_LINK, false))
		return true;
	n = snprintf(rel, sizeof(rel), "%s/.debug/%s", dir, link);
	if (n > 0 && (size_t)n < sizeof(rel) &&
	    try_rooted(s, rel, BY_LINK, false))
		return true;
	for (size_t i = 0; i < nd; i++) {
		n = snprintf(rel, sizeof(rel), "%s%s/%s",
			     strcmp(dirs[i], "/") ? dirs[i] : "", dir, link);
		if (n > 0 && (size_t)n < sizeof(rel) &&
		    try_rooted(s, rel, BY_LINK, true))
			return true;
	}
	return false;
}

struct elfsym *debuginfo__find(const struct debug_target *t, char **path,
			       bool *in_debug_dir, struct debuginfo_stats *st)
{
	struct search s = { .t = t, .st = st };
	const char *dirs[DEBUG_DIRS_MAX];
	char buf[PATH_MAX];
	size_t nd = split_dirs(buf, sizeof(buf), dirs);

	*path = NULL;
	if (search_build_id(&s, dirs, nd) || search_link(&s, dirs, nd)) {
		*path = s.found_path;
		*in_debug_dir = s.found_follow;
		return s.found;
	}
	return NULL;
}

/* ---- DWARF ---- */

struct fn_range {
	uint64_t lo, hi;
	Dwarf_Off die;
};

struct cu_ent {
	Dwarf_Off off;
	struct fn_range *fns;
	uint32_t nfns;
	bool indexed;
};

struct cu_range {
	uint64_t lo, hi;
	uint32_t cu;
};

struct dwarf_file {
	int fd;
	Elf *elf;
	Dwarf *dw;
	struct cu_ent *cus;
	size_t ncus, cus_cap;
	struct cu_range *ranges;
	size_t nranges, ranges_cap;
	uint64_t errors;
};

/* Grows *arr (of elsize elements, grow.h) to hold need, from 64; false on
 * ENOMEM. */
static bool grow(void *arrp, size_t *cap, size_t need, size_t elsize)
{
	return !grow__array(arrp, cap, need, elsize, 64);
}

/* Uncompressed size of one compressed debug section, read from its
 * header with pread (libelf would read the whole section to tell). */
static uint64_t compressed_size(int fd, const GElf_Ehdr *eh,
				const GElf_Shdr *sh, const char *name)
{
	unsigned char b[24];
	uint64_t v = 0;
	bool native = eh->e_ident[EI_DATA] == ELFDATA2LSB;

	if (!strncmp(name, ".zdebug", 7)) {	/* "ZLIB" + 8 bytes BE */
		if (pread(fd, b, 12, sh->sh_offset) != 12 || memcmp(b, "ZLIB", 4))
			return sh->sh_size;
		for (int i = 4; i < 12; i++)
			v = v << 8 | b[i];
		return v;
	}
	if (!(sh->sh_flags & SHF_COMPRESSED) || !native)
		return sh->sh_size;
	if (eh->e_ident[EI_CLASS] == ELFCLASS64) {
		Elf64_Chdr c;

		if (pread(fd, &c, sizeof(c), sh->sh_offset) != sizeof(c))
			return sh->sh_size;
		return c.ch_size;
	} else {
		Elf32_Chdr c;

		if (pread(fd, &c, sizeof(c), sh->sh_offset) != sizeof(c))
			return sh->sh_size;
		return c.ch_size;
	}
}

/* Bytes the debug sections will take in memory. -ENODATA when there is
 * no .debug_info, -EINVAL when a section lies past the end of file. */
static int debug_bytes(int fd, Elf *elf, uint64_t file_size, uint64_t *total)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *name;
	bool info = false;

	*total = 0;
	if (!gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx))
		return -EINVAL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strncmp(name, ".debug_", 7) &&
			      strncmp(name, ".zdebug_", 8)))
			continue;
		if (sh.sh_offset > file_size || sh.sh_size > file_size - sh.sh_offset)
			return -EINVAL;
		if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"))
			info = sh.sh_size > 0;
		*total += sh.sh_size;
		if ((sh.sh_flags & SHF_COMPRESSED) || name[1] == 'z')
			*total += compressed_size(fd, &eh, &sh, name);
	}
	return info ? 0 : -ENODATA;
}

/* The section after *scn, its header and its name ("" when unreadable);
 * false after the last. */
static bool next_section(Elf *elf, size_t shstrndx, Elf_Scn **scn,
			 GElf_Shdr *sh, const char **name)
{
	*scn = elf_nextscn(elf, *scn);
	if (!*scn)
		return false;
	if (!gelf_getshdr(*scn, sh)) {
		memset(sh, 0, sizeof(*sh));
		*name = "";
		return true;
	}
	*name = elf_strptr(elf, shstrndx, sh->sh_name);
	if (!*name)
		*name = "";
	return true;
}

/* Whether the DWARF refers to another file: a dwz supplementary file
 * (.gnu_debugaltlink, .debug_sup). libdw opens that file itself, by a path
 * the DWARF names, with a plain open and a mapping: only done for files in
 * the host's debug directories, which their administrator wrote. */
static bool refers_to_other_file(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return true;
	while (next_section(elf, shstrndx, &scn, &sh, &name))
		if (!strcmp(name, ".gnu_debugaltlink") ||
		    !strcmp(name, ".debug_sup"))
			return true;
	return false;
}

/* Whether the DWARF string sections end in NUL. libdw (0.188) runs strlen
 * on their strings without a bound, so a hostile file without the final
 * NUL would have it read past the section (found by fuzzing). libdw has
 * read (and decompressed) them already: this costs no I/O. */
static bool strings_terminated(Elf *elf)
{
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while (next_section(elf, shstrndx, &scn, &sh, &name)) {
		if (sh.sh_type == SHT_NOBITS ||
		    (strcmp(name, ".debug_str") &&
		     strcmp(name, ".debug_line_str") &&
		     strcmp(name, ".zdebug_str") &&
		     strcmp(name, ".zdebug_line_str")))
			continue;
		data = elf_getdata(scn, NULL);
		if (data && data->d_size &&
		    (!data->d_buf || ((const char *)data->d_buf)[data->d_size - 1]))
			return false;
	}
	return true;
}

static int add_cu_range(struct dwarf_file *d, uint64_t lo, uint64_t hi,
			uint32_t cu)
{
	if (d->nranges >= CU_RANGES_MAX)
		return -E2BIG;
	if (!grow(&d->ranges, &d->ranges_cap, d->nranges + 1, sizeof(*d->ranges)))
		return -ENOMEM;
	d->ranges[d->nranges++] = (struct cu_range){ lo, hi, cu };
	return 0;
}

static int cu_range_cmp(const void *pa, const void *pb)
{
	const struct cu_range *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return (a->hi > b->hi) - (a->hi < b->hi);
}

/* Every compile unit and its address ranges. */
static int index_cus(struct dwarf_file *d)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	Dwarf_Addr base, lo, hi;
	Dwarf_Half version;
	uint8_t type;
	ptrdiff_t off;
	int r, err;

	/* No split-unit DIE asked for: libdw would open the .dwo file the
	 * DWARF names, a path its writer chose. */
	while ((r = dwarf_get_units(d->dw, cu, &cu, &version, &type, &cudie,
				    NULL)) == 0) {
		if (type != DW_UT_compile || dwarf_tag(&cudie) != DW_TAG_compile_unit)
			continue;
		if (!grow(&d->cus, &d->cus_cap, d->ncus + 1, sizeof(*d->cus)))
			return -ENOMEM;
		d->cus[d->ncus] = (struct cu_ent){ .off = dwarf_dieoffset(&cudie) };
		off = 0;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue;
			err = add_cu_range(d, lo, hi, d->ncus);
			if (err == -E2BIG)
				break;
			if (err)
				return err;
		}
		if (off < 0)
			d->errors++;
		d->ncus++;
	}
	if (r < 0)
		d->errors++;
	if (d->nranges)
		qsort(d->ranges, d->nranges, sizeof(*d->ranges), cu_range_cmp);
	return 0;
}

int dwarf_file__open(const char *path, const struct targetfile_want *want,
		     uint64_t max_bytes, struct dwarf_file **out,
		     uint64_t *bytes)
{
	struct dwarf_file *d;
	struct stat st;
	int err;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->fd = targetfile__open(path, want, &st);
	if (d->fd < 0) {
		err = d->fd;
		goto cleanup;
	}
	/* ELF_C_READ: sections are read with pread, never mapped. */
	d->elf = elf_begin(d->fd, ELF_C_READ, NULL);
	if (!d->elf || elf_kind(d->elf) != ELF_K_ELF) {
		err = -EINVAL;
		goto cleanup;
	}
	err = debug_bytes(d->fd, d->elf, st.st_size, bytes);
	if (err)
		goto cleanup;
	if (*bytes > max_bytes) {
		err = -E2BIG;
		goto cleanup;
	}
	if ((!want || !want->follow) && refers_to_other_file(d->elf)) {
		err = -EXDEV;
		goto cleanup;
	}
	d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
	if (!d->dw || !strings_terminated(d->elf)) {
		err = -EINVAL;
		goto cleanup;
	}
	err = index_cus(d);
	if (err)
		goto cleanup;
	*out = d;
	return 0;
cleanup:
	dwarf_file__close(d);
	return err;
}

void dwarf_file__close(struct dwarf_file *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->ncus; i++)
		free(d->cus[i].fns);
	free(d->cus);
	free(d->ranges);
	if (d->dw)
		dwarf_end(d->dw);
	if (d->elf)
		elf_end(d->elf);
	if (d->fd >= 0)
		close(d->fd);
	free(d);
}

uint64_t dwarf_file__errors(const struct dwarf_file *d)
{
	return d ? d->errors : 0;
}

struct fn_vec {
	struct fn_range *v;
	size_t n, cap;
	bool full;
};

static void add_fn(struct dwarf_file *d, struct fn_vec *v, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while (!v->full && (off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		if (v->n >= FN_RANGES_MAX ||
		    !grow(&v->v, &v->cap, v->n + 1, sizeof(*v->v))) {
			v->full = true;
			break;
		}
		v->v[v->n++] = (struct fn_range){ lo, hi, dwarf_dieoffset(die) };
	}
	if (off < 0)
		d->errors++;
}

/* Functions with code among parent's children, and inside namespaces and
 * classes (C++ and Rust nest definitions there). */
static void index_fns(struct dwarf_file *d, struct fn_vec *v,
		      Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;
	int r;

	if (depth > NEST_MAX)
		return;
	r = dwarf_child(parent, &child);
	if (r < 0)
		d->errors++;
	if (r)
		return;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			add_fn(d, v, &child);
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_interface_type:
			index_fns(d, v, &child, depth + 1);
			break;
		default:
			break;
		}
	} while (!v->full && (r = dwarf_siblingof(&child, &child)) == 0);
	if (r < 0)
		d->errors++;
}

static int fn_cmp(const void *pa, const void *pb)
{
	const struct fn_range *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return (a->hi > b->hi) - (a->hi < b->hi);
}

static void index_cu(struct dwarf_file *d, struct cu_ent *cu)
{
	struct fn_vec v = { 0 };
	Dwarf_Die cudie;

	cu->indexed = true;
	if (!dwarf_offdie(d->dw, cu->off, &cudie)) {
		d->errors++;
		return;
	}
	index_fns(d, &v, &cudie, 0);
	if (v.n)
		qsort(v.v, v.n, sizeof(*v.v), fn_cmp);
	cu->fns = v.v;
	cu->nfns = v.n;
}

/* The compile unit holding addr, by its ranges, else by .debug_aranges. */
static struct cu_ent *find_cu(struct dwarf_file *d, uint64_t addr)
{
	size_t lo, hi, i;
	Dwarf_Die cudie;
	Dwarf_Off off;

	/* First range with lo > addr. */
	lo = SORTEDRANGE_UPPER(d->ranges, d->nranges, lo, addr);
	for (i = lo; i > 0 && lo - i < 8; i--)
		if (addr < d->ranges[i - 1].hi)
			return &d->cus[d->ranges[i - 1].cu];
	if (!dwarf_addrdie(d->dw, addr, &cudie))
		return NULL;
	off = dwarf_dieoffset(&cudie);
	lo = 0;
	hi = d->ncus;
	while (lo < hi) {	/* units are listed in offset order */
		size_t mid = lo + (hi - lo) / 2;

		if (d->cus[mid].off == off)
			return &d->cus[mid];
		if (d->cus[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static const struct fn_range *find_fn(const struct cu_ent *cu, uint64_t addr)
{
	const struct fn_range *best = NULL;
	size_t lo, i;

	lo = SORTEDRANGE_UPPER(cu->fns, cu->nfns, lo, addr);
	/* The innermost (shortest) range holding addr, among a few. */
	for (i = lo; i > 0 && lo - i < 8; i--) {
		const struct fn_range *f = &cu->fns[i - 1];

		if (addr < f->hi && (!best || f->hi - f->lo < best->hi - best->lo))
			best = f;
	}
	return best;
}

static bool has_pc_attrs(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
}

/* Walks down from parent through the scopes holding addr, appending each
 * inlined call to chain. Blocks without addresses are looked into. */
static void descend(struct dwarf_file *d, Dwarf_Die *parent, uint64_t addr,
		    Dwarf_Die *chain, size_t *n, size_t max, int depth)
{
	Dwarf_Die child;
	int r, tag;

	if (depth > SCOPE_DEPTH_MAX)
		return;
	r = dwarf_child(parent, &child);
	if (r < 0)
		d->errors++;
	if (r)
		return;
	do {
		tag = dwarf_tag(&child);
		if (tag != DW_TAG_inlined_subroutine &&
		    tag != DW_TAG_lexical_block && tag != DW_TAG_try_block &&
		    tag != DW_TAG_catch_block && tag != DW_TAG_with_stmt)
			continue;
		if (tag == DW_TAG_lexical_block && !has_pc_attrs(&child)) {
			size_t before = *n;

			descend(d, &child, addr, chain, n, max, depth + 1);
			if (*n != before)
				return;
			continue;
		}
		if (dwarf_haspc(&child, addr) != 1)
			continue;
		if (tag == DW_TAG_inlined_subroutine && *n < max)
			chain[(*n)++] = child;
		descend(d, &child, addr, chain, n, max, depth + 1);
		return;
	} while ((r = dwarf_siblingof(&child, &child)) == 0);
	if (r < 0)
		d->errors++;
}

/* The name to show for a function DIE: its linkage (mangled) name, else
 * its name, through abstract origins and specifications. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *s;

	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	     dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a)) &&
	    (s = dwarf_formstring(&a)) && *s)
		return s;
	if (dwarf_attr_integrate(die, DW_AT_name, &a) &&
	    (s = dwarf_formstring(&a)) && *s)
		return s;
	return NULL;
}

/* File and line an inlined call was made from. */
static void call_site(Dwarf_Die *inl, Dwarf_Files *files, size_t nfiles,
		      struct dwframe *f)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	f->file = NULL;
	f->line = 0;
	if (dwarf_attr(inl, DW_AT_call_file, &a) && !dwarf_formudata(&a, &w) &&
	    files && w < nfiles)
		f->file = dwarf_filesrc(files, w, NULL, NULL);
	if (dwarf_attr(inl, DW_AT_call_line, &a) && !dwarf_formudata(&a, &w) &&
	    w <= INT32_MAX)
		f->line = (int)w;
}

size_t dwarf_file__lookup(struct dwarf_file *d, uint64_t vaddr,
			  struct dwframe *out, size_t max)
{
	Dwarf_Die chain[SCOPE_DEPTH_MAX], cudie, fn;
	const struct fn_range *fr;
	Dwarf_Files *files = NULL;
	struct cu_ent *cu;
	Dwarf_Line *line;
	size_t n = 0, nfiles = 0, k;
	int lineno;

	if (!d || !max)
		return 0;
	cu = find_cu(d, vaddr);
	if (!cu || !dwarf_offdie(d->dw, cu->off, &cudie))
		return 0;
	if (!cu->indexed)
		index_cu(d, cu);
	fr = find_fn(cu, vaddr);
	if (fr && dwarf_offdie(d->dw, fr->die, &fn)) {
		chain[n++] = fn;
		descend(d, &fn, vaddr, chain, &n, SCOPE_DEPTH_MAX, 0);
	}
	/* Innermost first: the address's own line, then each call site. */
	memset(&out[0], 0, sizeof(out[0]));
	line = dwarf_getsrc_die(&cudie, vaddr);
	if (line) {
		out[0].file = dwarf_linesrc(line, NULL, NULL);
		if (!dwarf_lineno(line, &lineno) && lineno > 0)
			out[0].line = lineno;
	}
	if (!n)
		return out[0].file ? 1 : 0;
	out[0].name = die_name(&chain[n - 1]);
	if (n > 1 && dwarf_getsrcfiles(&cudie, &files, &nfiles))
		files = NULL;
	/* Deeper than max: the innermost max - 1 frames and the function
	 * that holds them all. */
	for (k = 1; k < n && k < max; k++) {
		size_t callee = (k == max - 1) ? 1 : n - k;

		out[k].name = die_name(&chain[callee - 1]);
		call_site(&chain[callee], files, nfiles, &out[k]);
	}
	return k;
}
