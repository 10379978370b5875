/* Where a thread-local variable of another process lives, worked out from
 * the defining ELF module (its symbol and dynamic relocations) and from
 * the values the dynamic loader wrote into that module's GOT.
 *
 * x86-64 glibc uses TLS variant II: the static TLS blocks (the executable's
 * and those of the libraries loaded at startup, plus dlopen'd ones that fit
 * the surplus) lie just below the thread pointer, so a variable in one of
 * them is at tp + tpoff with tpoff < 0. Every module's block is also
 * reachable through the DTV: tcbhead_t.dtv at tp + 8 points at 16-byte
 * dtv_t entries, entry modid holding the block's address.
 *
 * glibc only. musl also keeps the DTV pointer at tp + 8, but its DTV
 * entries are bare 8-byte pointers and it lays out static TLS its own way;
 * telling the two apart (PT_INTERP, or which libc is mapped) and handling
 * musl is left for later.
 *
 * The agent runs as root and reads the files and memory of processes that
 * may be hostile. Files are opened without side effects and only when they
 * are the mapped file, read with pread (a truncated file must not SIGBUS
 * us), and every size, index and value read is bounded before use: a
 * process can at worst confuse where its own context is read from.
 */
#include "proc/procfs.h"
#include "proc/targetfile.h"
#include "proc/tlsloc.h"
#include "util/hashmap.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TLSLOC_DTV_OFF		8	/* glibc x86-64: offsetof(tcbhead_t, dtv) */
/* Bounds on values read from files and processes. Real static TLS areas
 * are kilobytes, module ids count dlopen'd libraries with TLS. */
#define TLSLOC_TPOFF_MAX	(1ll << 32)
#define TLSLOC_OFFSET_MAX	(1ull << 32)
#define TLSLOC_MODID_MAX	(1u << 20)
#define TLSLOC_ALIGN_MAX	(1u << 20)
/* Matching relocations tried per module: a hostile file could list
 * millions, each costing a read of the process. */
#define TLSLOC_TRIES_MAX	64

/* The consecutive mappings of one file: a loaded module. */
struct tlsloc__mod {
	uint64_t lo;		/* its mappings span [lo, hi) */
	uint64_t hi;
	uint64_t first_end;	/* the lowest one is [lo, first_end), */
	uint64_t first_off;	/* at this file offset */
	uint64_t last_off;
	uint64_t ino;
	uint64_t dev;
	bool exec;
	char path[PATH_MAX];	/* "" when none (anonymous, too long) */
};

/* Called for each module with an executable mapping: 0 goes on, anything
 * else stops the walk and is returned. */
typedef int (*tlsloc__mod_fn)(int pid, const struct tlsloc__mod *mod,
			      void *arg);

/* A file and a symbol it does not define (see tlsloc__known_absent). */
struct tlsloc__absent {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
	uint64_t symbol;	/* hash of the name, and whether TLS */
	bool used;
};

/* An ELF file open for reading. */
struct tlsloc__elf {
	int fd;
	Elf *elf;		/* NULL until read (tlsloc__elf_read) */
	GElf_Ehdr ehdr;
	uint64_t size;		/* of the file */
	struct stat st;		/* its identity and change times */
};

/* ---- mappings ---- */

/* The mapped file's path; NULL for [heap], [vdso] and anonymous memory,
 * which have no file behind them. */
static const char *tlsloc__file(const struct procfs_map *m)
{
	return m->path[0] == '/' && m->ino ? m->path : NULL;
}

/* Whether m continues mod: the same file, further into it. */
static bool tlsloc__same_module(const struct tlsloc__mod *mod,
				const struct procfs_map *m)
{
	return mod->path[0] && tlsloc__file(m) && m->ino == mod->ino &&
	       m->dev == mod->dev &&
	       m->start >= mod->hi && m->offset >= mod->last_off &&
	       !strcmp(m->path, mod->path);
}

static void tlsloc__mod_begin(struct tlsloc__mod *mod,
			      const struct procfs_map *m)
{
	mod->path[0] = '\0';
	if (!tlsloc__file(m) || strlen(m->path) >= sizeof(mod->path))
		return;
	strcpy(mod->path, m->path);
	mod->lo = m->start;
	mod->hi = m->end;
	mod->first_end = m->end;
	mod->first_off = m->offset;
	mod->last_off = m->offset;
	mod->ino = m->ino;
	mod->dev = m->dev;
	mod->exec = procfs_map__exec(m);
}

static void tlsloc__mod_extend(struct tlsloc__mod *mod,
			       const struct procfs_map *m)
{
	mod->hi = m->end;
	mod->last_off = m->offset;
	mod->exec |= procfs_map__exec(m);
}

/* Only modules with code can be ones the loader loaded. */
static int tlsloc__mod_done(int pid, const struct tlsloc__mod *mod,
			    tlsloc__mod_fn fn, void *arg)
{
	if (!mod->path[0] || !mod->exec)
		return 0;
	return fn(pid, mod, arg);
}

/* A walk of the modules of a process, mapping by mapping. */
struct tlsloc__walk {
	int pid;
	tlsloc__mod_fn fn;
	void *arg;
	struct tlsloc__mod mod;	/* the one being gathered */
};

static int tlsloc__on_map(const struct procfs_map *m, void *arg)
{
	struct tlsloc__walk *w = arg;
	int err;

	if (m->start >= m->end)
		return 0;
	if (tlsloc__same_module(&w->mod, m)) {
		tlsloc__mod_extend(&w->mod, m);
		return 0;
	}
	err = tlsloc__mod_done(w->pid, &w->mod, w->fn, w->arg);
	if (err)
		return err;
	tlsloc__mod_begin(&w->mod, m);
	return 0;
}

/* Reads the maps, each line to on_line (tlsloc__on_map, or a callback
 * that ends there), which gathers modules for fn. */
static int tlsloc__walk_modules(int pid, procfs_maps_fn on_line,
				tlsloc__mod_fn fn, void *arg)
{
	struct tlsloc__walk *w;
	FILE *f = NULL;
	int err;

	w = calloc(1, sizeof(*w));
	if (!w) {
		err = -ENOMEM;
		goto cleanup;
	}
	w->pid = pid;
	w->fn = fn;
	w->arg = arg;
	f = procfs__open_maps(pid);
	if (!f) {
		err = errno == ENOENT ? -ESRCH : -errno;
		goto cleanup;
	}
	err = procfs__parse_maps(f, on_line, w);
	if (err)
		goto cleanup;
	/* A partial list would turn into a wrong -ENOENT. */
	if (ferror(f)) {
		err = errno == ESRCH ? -ESRCH : -EIO;
		goto cleanup;
	}
	err = tlsloc__mod_done(pid, &w->mod, fn, arg);
cleanup:
	if (f)
		fclose(f);
	free(w);
	return err;
}

static int tlsloc__for_each_module(int pid, tlsloc__mod_fn fn, void *arg)
{
	return tlsloc__walk_modules(pid, tlsloc__on_map, fn, arg);
}

/* ---- files ---- */

/* The mapped file itself (targetfile.h): map_files, else the path as the
 * process sees it, else the host's, only while it is the mapped inode. */
static int tlsloc__open_mod(int pid, const struct tlsloc__mod *mod)
{
	return targetfile__open_mapped((uint32_t)pid, mod->lo, mod->first_end,
				       mod->path,
				       mod->dev,
				       mod->ino, NULL, 0);
}

static void tlsloc__elf_close(struct tlsloc__elf *m)
{
	if (m->elf)
		elf_end(m->elf);
	if (m->fd >= 0)
		close(m->fd);
	m->elf = NULL;
	m->fd = -1;
}

/* ---- files known not to define a symbol ----
 *
 * Every process maps the C library, the loader and a few more, and most
 * define none of the context symbols; looking again in each new process
 * read their symbol tables over and over (most of record -a's CPU on a
 * busy host). A file is known by its identity and change times, so a file
 * rewritten in place is looked at again. Sets of a few ways, so that the
 * few libraries of one process seldom push each other out: a file pushed
 * out is only opened again. Used from the capture thread only. */
#define TLSLOC_ABSENT_WAYS	4
#define TLSLOC_ABSENT_SETS	256

static struct tlsloc__absent tlsloc__absent[TLSLOC_ABSENT_SETS]
					   [TLSLOC_ABSENT_WAYS];
static uint8_t tlsloc__absent_next[TLSLOC_ABSENT_SETS];	/* way to reuse */

static uint64_t tlsloc__symbol_key(const char *name, bool tls)
{
	return hashmap__hash(name, strlen(name)) ^ tls;
}

static struct tlsloc__absent tlsloc__absent_key(const struct stat *st,
						const char *name, bool tls)
{
	return (struct tlsloc__absent){
		.dev = st->st_dev, .ino = st->st_ino,
		.size = (uint64_t)st->st_size,
		.mtime_ns = st->st_mtim.tv_sec * 1000000000ll + st->st_mtim.tv_nsec,
		.ctime_ns = st->st_ctim.tv_sec * 1000000000ll + st->st_ctim.tv_nsec,
		.symbol = tlsloc__symbol_key(name, tls), .used = true };
}

static size_t tlsloc__absent_set(const struct tlsloc__absent *k)
{
	uint64_t h = (k->dev * 31 + k->ino) * 0x9e3779b97f4a7c15ull ^ k->symbol;

	return (h >> 32) % TLSLOC_ABSENT_SETS;
}

/* The same file and symbol, whatever its change times. */
static bool tlsloc__absent_same(const struct tlsloc__absent *a,
				const struct tlsloc__absent *k)
{
	return a->used && a->dev == k->dev && a->ino == k->ino &&
	       a->symbol == k->symbol;
}

static bool tlsloc__known_absent(const struct tlsloc__absent *k)
{
	const struct tlsloc__absent *set = tlsloc__absent[tlsloc__absent_set(k)];

	for (size_t w = 0; w < TLSLOC_ABSENT_WAYS; w++)
		if (tlsloc__absent_same(&set[w], k))
			return set[w].size == k->size &&
			       set[w].mtime_ns == k->mtime_ns &&
			       set[w].ctime_ns == k->ctime_ns;
	return false;
}

/* Replaces the file's older entry, else a free way, else the ways in turn. */
static void tlsloc__note_absent(const struct tlsloc__absent *k)
{
	size_t s = tlsloc__absent_set(k), w;
	struct tlsloc__absent *set = tlsloc__absent[s];

	for (w = 0; w < TLSLOC_ABSENT_WAYS; w++)
		if (tlsloc__absent_same(&set[w], k) || !set[w].used)
			break;
	if (w == TLSLOC_ABSENT_WAYS)
		w = tlsloc__absent_next[s]++ % TLSLOC_ABSENT_WAYS;
	set[w] = *k;
}

/* Whether the file of status st is known not to define symbol. */
static bool tlsloc__absent_in(const struct stat *st, const char *symbol,
			      bool tls)
{
	struct tlsloc__absent k = tlsloc__absent_key(st, symbol, tls);

	return tlsloc__known_absent(&k);
}

static void tlsloc__note_absent_in(const struct tlsloc__elf *m,
				   const char *symbol, bool tls)
{
	struct tlsloc__absent k = tlsloc__absent_key(&m->st, symbol, tls);

	tlsloc__note_absent(&k);
}

/* Whether the module's file is known not to define symbol, from its status
 * alone (targetfile__stat_mapped): nothing opened, nothing read. Every new
 * process maps the same few libraries; opening each of them once per
 * process and symbol was most of the agent's context discovery. */
static bool tlsloc__mod_known_absent(int pid, const struct tlsloc__mod *mod,
				     const char *symbol, bool tls)
{
	struct stat st;

	return !targetfile__stat_mapped((uint32_t)pid, mod->lo,
					mod->first_end, mod->dev, mod->ino,
					&st) &&
	       tlsloc__absent_in(&st, symbol, tls);
}

/* Opens the module's file (its ELF is read by tlsloc__elf_read). */
static int tlsloc__elf_open(int pid, const struct tlsloc__mod *mod,
			    struct tlsloc__elf *m)
{
	int err;

	memset(m, 0, sizeof(*m));
	m->fd = tlsloc__open_mod(pid, mod);
	if (m->fd < 0) {
		err = m->fd;
		goto cleanup;
	}
	if (fstat(m->fd, &m->st) != 0) {
		err = -errno;
		goto cleanup;
	}
	m->size = m->st.st_size;
	return 0;
cleanup:
	tlsloc__elf_close(m);
	return err;
}

/* Reads the ELF header of the open file, once. */
static int tlsloc__elf_read(struct tlsloc__elf *m)
{
	if (m->elf)
		return 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	/* pread, not mmap: the file's owner could truncate it under us. */
	m->elf = elf_begin(m->fd, ELF_C_READ, NULL);
	if (!m->elf || elf_kind(m->elf) != ELF_K_ELF ||
	    !gelf_getehdr(m->elf, &m->ehdr)) {
		if (m->elf)
			elf_end(m->elf);
		m->elf = NULL;
		return -ENOEXEC;
	}
	return 0;
}

/* A section's data, if it lies within the file and holds entries of type
 * t; *n is their count (gelf_get* bound each index again). */
static Elf_Data *tlsloc__sec_data(const struct tlsloc__elf *m, Elf_Scn *scn,
				  const GElf_Shdr *sh, Elf_Type t, size_t *n)
{
	size_t ent = gelf_fsize(m->elf, t, 1, EV_CURRENT);

	if (!ent || sh->sh_entsize != ent || sh->sh_type == SHT_NOBITS ||
	    sh->sh_offset > m->size || sh->sh_size > m->size - sh->sh_offset)
		return NULL;
	*n = sh->sh_size / ent;
	return elf_getdata(scn, NULL);
}

/* Defined, and of the kind asked for: a TLS variable or a data object. */
static bool tlsloc__sym_wanted(const GElf_Sym *s, bool tls)
{
	int type = GELF_ST_TYPE(s->st_info);

	/* Absolute values are not relocated with the module. */
	if (s->st_shndx == SHN_UNDEF || s->st_shndx == SHN_ABS ||
	    s->st_shndx == SHN_COMMON)
		return false;
	if (tls)
		return type == STT_TLS;
	return type == STT_OBJECT || type == STT_NOTYPE;
}

/* The first wanted symbol named name in a table of type sec_type; *tab is
 * that table's section index, *ndx the symbol's index in it. */
static int tlsloc__sym_in(const struct tlsloc__elf *m, Elf64_Word sec_type,
			  const char *name, bool tls, GElf_Sym *sym,
			  size_t *tab, size_t *ndx)
{
	Elf_Scn *scn = NULL;
	const char *s;
	GElf_Shdr sh;
	Elf_Data *d;
	size_t i, n;

	while ((scn = elf_nextscn(m->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != sec_type)
			continue;
		d = tlsloc__sec_data(m, scn, &sh, ELF_T_SYM, &n);
		if (!d)
			continue;
		for (i = 1; i < n; i++) {
			if (!gelf_getsym(d, i, sym) ||
			    !tlsloc__sym_wanted(sym, tls))
				continue;
			s = elf_strptr(m->elf, sh.sh_link, sym->st_name);
			if (!s || strcmp(s, name))
				continue;
			*tab = elf_ndxscn(scn);
			*ndx = i;
			return 0;
		}
	}
	return -ENOENT;
}

/* .dynsym first: that is the symbol the loader and relocations see. */
static int tlsloc__find_sym(const struct tlsloc__elf *m, const char *name,
			    bool tls, GElf_Sym *sym, size_t *tab, size_t *ndx)
{
	if (!tlsloc__sym_in(m, SHT_DYNSYM, name, tls, sym, tab, ndx))
		return 0;
	return tlsloc__sym_in(m, SHT_SYMTAB, name, tls, sym, tab, ndx);
}

/* The load bias: what the loader added to the module's virtual addresses.
 * Its lowest mapping maps the PT_LOAD holding that file offset. */
static int tlsloc__bias(const struct tlsloc__elf *m,
			const struct tlsloc__mod *mod, uint64_t *bias)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	size_t i, phnum;
	GElf_Phdr ph;

	if (m->ehdr.e_type == ET_EXEC) {
		*bias = 0;
		return 0;
	}
	if (m->ehdr.e_type != ET_DYN || elf_getphdrnum(m->elf, &phnum) != 0)
		return -ENOEXEC;
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(m->elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (mod->first_off < (ph.p_offset & ~(page - 1)) ||
		    mod->first_off >= ph.p_offset + ph.p_filesz)
			continue;
		/* Mod 2^64: first_off may lie below p_offset, in its page. */
		*bias = mod->lo - (ph.p_vaddr + (mod->first_off - ph.p_offset));
		return *bias & (page - 1) ? -EINVAL : 0;
	}
	return -EINVAL;
}

/* ---- tlsloc__read_symbol ---- */

struct tlsloc__read_arg {
	const char *symbol;
	void *buf;
	size_t len;
	int err;
};

static int tlsloc__read_in(int pid, const struct tlsloc__mod *mod, void *arg)
{
	struct tlsloc__read_arg *a = arg;
	struct tlsloc__elf m;
	size_t tab, ndx;
	uint64_t bias;
	GElf_Sym sym;
	int ret = 0;

	if (tlsloc__mod_known_absent(pid, mod, a->symbol, false) ||
	    tlsloc__elf_open(pid, mod, &m))
		return 0;	/* known not to define it, or unreadable */
	if (tlsloc__absent_in(&m.st, a->symbol, false) ||
	    tlsloc__elf_read(&m))
		goto cleanup;	/* known after all, or not ELF */
	if (tlsloc__find_sym(&m, a->symbol, false, &sym, &tab, &ndx)) {
		tlsloc__note_absent_in(&m, a->symbol, false);
		goto cleanup;
	}
	ret = 1;
	if (sym.st_size && a->len > sym.st_size)
		a->err = -EINVAL;
	else
		a->err = tlsloc__bias(&m, mod, &bias);
	if (!a->err)
		a->err = procfs__read_mem(pid, bias + sym.st_value, a->buf,
					  a->len);
cleanup:
	tlsloc__elf_close(&m);
	return ret;
}

int tlsloc__read_symbol(int pid, const char *symbol, void *buf, size_t len)
{
	struct tlsloc__read_arg a = { .symbol = symbol, .buf = buf,
				      .len = len };
	int ret;

	if (pid <= 0 || !symbol || !*symbol || !buf || !len)
		return -EINVAL;
	ret = tlsloc__for_each_module(pid, tlsloc__read_in, &a);
	if (ret < 0)
		return ret;
	return ret ? a.err : -ENOENT;
}

/* ---- tlsloc__find ---- */

#if defined(__x86_64__)

/* How surely a relocation tells where the variable is, best first. */
enum tlsloc__rank {
	TLSLOC_EXACT,	/* names the variable: resolved as the loader did */
	TLSLOC_MODULE,	/* symbol 0: an offset into this module's block */
	TLSLOC_SIBLING,	/* another TLS symbol defined here: right unless
			   another module interposes it */
	TLSLOC_RANKS,
};

/* What locating the variable in one module needs. */
struct tlsloc__ctx {
	int pid;
	const struct tlsloc__mod *mod;
	const struct tlsloc__elf *m;
	uint64_t bias;
	GElf_Sym var;
	size_t var_tab;		/* symbol table section holding var */
	size_t var_ndx;		/* its index there */
	int tries;
	int err;		/* the most telling failure so far */
};

/* One matching relocation. adj is (what it points at) - (the variable),
 * in bytes of the module's TLS block, mod 2^64. */
struct tlsloc__rel {
	uint32_t type;
	bool exact;
	uint64_t got;		/* its slot's address in the process */
	uint64_t adj;
	Elf_Data *data;		/* its table, to find a DTPOFF64 partner */
	size_t n;
	GElf_Rela r;
};

static bool tlsloc__tls_rel_type(uint32_t type)
{
	return type == R_X86_64_TPOFF64 || type == R_X86_64_TLSDESC ||
	       type == R_X86_64_DTPMOD64;
}

/* Symbol ndx of symbol table section tab. */
static bool tlsloc__sym_at(const struct tlsloc__elf *m, size_t tab,
			   size_t ndx, GElf_Sym *sym)
{
	Elf_Scn *scn = elf_getscn(m->elf, tab);
	GElf_Shdr sh;
	Elf_Data *d;
	size_t n;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
		return false;
	d = tlsloc__sec_data(m, scn, &sh, ELF_T_SYM, &n);
	return d && ndx < n && gelf_getsym(d, ndx, sym);
}

/* Whether r, in a table linked to symbol table tab, is a TLS relocation
 * of the given rank; fills rel if so. */
static bool tlsloc__rel_match(const struct tlsloc__ctx *c, size_t tab,
			      const GElf_Rela *r, int rank,
			      struct tlsloc__rel *rel)
{
	size_t symi = GELF_R_SYM(r->r_info);
	bool is_var = symi && tab == c->var_tab && symi == c->var_ndx;
	uint64_t size;
	GElf_Sym s;

	rel->type = GELF_R_TYPE(r->r_info);
	if (!tlsloc__tls_rel_type(rel->type))
		return false;
	rel->exact = rank == TLSLOC_EXACT;
	switch (rank) {
	case TLSLOC_EXACT:
		if (!is_var)
			return false;
		rel->adj = r->r_addend;
		break;
	case TLSLOC_MODULE:
		if (symi)
			return false;
		rel->adj = r->r_addend - c->var.st_value;
		break;
	default:
		if (!symi || is_var || !tlsloc__sym_at(c->m, tab, symi, &s) ||
		    !tlsloc__sym_wanted(&s, true))
			return false;
		rel->adj = s.st_value + r->r_addend - c->var.st_value;
		break;
	}
	rel->got = c->bias + r->r_offset;
	rel->r = *r;
	/* The GOT is in the module's file-backed data. */
	size = rel->type == R_X86_64_TLSDESC ? 16 : 8;
	return rel->got >= c->mod->lo && rel->got <= c->mod->hi - size;
}

static int tlsloc__set_static(struct tp_tls_loc *loc, int64_t tpoff)
{
	/* Variant II: the variable lies below the thread pointer. */
	if (tpoff >= 0 || tpoff < -TLSLOC_TPOFF_MAX)
		return -EINVAL;
	memset(loc, 0, sizeof(*loc));
	loc->kind = TP_TLS_STATIC;
	loc->tpoff = tpoff;
	loc->dtv_off = TLSLOC_DTV_OFF;
	return 0;
}

static int tlsloc__set_dtv(struct tp_tls_loc *loc, uint64_t modid,
			   uint64_t offset)
{
	if (!modid || modid > TLSLOC_MODID_MAX || offset >= TLSLOC_OFFSET_MAX)
		return -EINVAL;
	memset(loc, 0, sizeof(*loc));
	loc->kind = TP_TLS_DTV;
	loc->modid = modid;
	loc->offset = offset;
	loc->dtv_off = TLSLOC_DTV_OFF;
	return 0;
}

/* Initial-exec: the slot holds the target's tpoff. */
static int tlsloc__from_tpoff64(const struct tlsloc__ctx *c,
				const struct tlsloc__rel *rel,
				struct tp_tls_loc *loc)
{
	uint64_t v;
	int err;

	err = procfs__read_mem(c->pid, rel->got, &v, sizeof(v));
	if (err)
		return err;
	/* Zero until relocated: nothing static sits at the thread pointer. */
	if (!v)
		return -EAGAIN;
	return tlsloc__set_static(loc, (int64_t)(v - rel->adj));
}

/* TLSDESC: {entry, arg}. glibc's static resolver returns arg, the
 * target's tpoff; its dynamic one takes a struct tlsdesc_dynamic_arg,
 * which starts with the tls_index {ti_module, ti_offset}. */
static int tlsloc__from_tlsdesc(const struct tlsloc__ctx *c,
				const struct tlsloc__rel *rel,
				struct tp_tls_loc *loc)
{
	uint64_t desc[2], ti[2];
	int64_t arg;
	int err;

	err = procfs__read_mem(c->pid, rel->got, desc, sizeof(desc));
	if (err)
		return err;
	arg = (int64_t)desc[1];
	/* Unrelocated; or bound lazily (glibc before 2.34): arg then points
	 * at the relocation itself, inside the module. */
	if (!desc[0] || !arg || (desc[1] >= c->mod->lo && desc[1] < c->mod->hi))
		return -EAGAIN;
	if (arg < 0 && arg > -TLSLOC_TPOFF_MAX)
		return tlsloc__set_static(loc, (int64_t)(desc[1] - rel->adj));
	err = procfs__read_mem(c->pid, desc[1], ti, sizeof(ti));
	if (err)
		return err == -EFAULT ? -EINVAL : err;
	return tlsloc__set_dtv(loc, ti[0], ti[1] - rel->adj);
}

/* The DTPOFF64 of a global-dynamic GOT pair: the next slot, relocated
 * against the same symbol. -ENOENT when there is none. */
static int tlsloc__dtpoff(const struct tlsloc__ctx *c,
			  const struct tlsloc__rel *rel, uint64_t *offset)
{
	GElf_Rela r;
	uint64_t v;
	size_t i;
	int err;

	for (i = 0; i < rel->n; i++) {
		if (!gelf_getrela(rel->data, i, &r) ||
		    GELF_R_TYPE(r.r_info) != R_X86_64_DTPOFF64 ||
		    GELF_R_SYM(r.r_info) != GELF_R_SYM(rel->r.r_info) ||
		    r.r_offset != rel->r.r_offset + 8)
			continue;
		err = procfs__read_mem(c->pid, rel->got + 8, &v, sizeof(v));
		if (err)
			return err;
		*offset = v - r.r_addend;
		return 0;
	}
	return -ENOENT;
}

/* Global- and local-dynamic: the slot holds the module id; the offset is
 * in the partner slot, or, relative to this module, the symbol's value. */
static int tlsloc__from_dtpmod64(const struct tlsloc__ctx *c,
				 const struct tlsloc__rel *rel,
				 struct tp_tls_loc *loc)
{
	uint64_t modid, offset = c->var.st_value;
	int err;

	err = procfs__read_mem(c->pid, rel->got, &modid, sizeof(modid));
	if (err)
		return err;
	if (!modid)
		return -EAGAIN;
	if (rel->exact) {
		err = tlsloc__dtpoff(c, rel, &offset);
		if (err && err != -ENOENT)
			return err;
	}
	return tlsloc__set_dtv(loc, modid, offset);
}

static int tlsloc__resolve(const struct tlsloc__ctx *c,
			   const struct tlsloc__rel *rel,
			   struct tp_tls_loc *loc)
{
	switch (rel->type) {
	case R_X86_64_TPOFF64:
		return tlsloc__from_tpoff64(c, rel, loc);
	case R_X86_64_TLSDESC:
		return tlsloc__from_tlsdesc(c, rel, loc);
	default:
		return tlsloc__from_dtpmod64(c, rel, loc);
	}
}

/* Keeps the failure worth reporting: -EAGAIN (retry) over the rest, and
 * any real one over "no relocation matched". */
static void tlsloc__note_err(struct tlsloc__ctx *c, int err)
{
	if (c->err != -EAGAIN)
		c->err = err;
}

/* Tries the dynamic relocations (.rela.dyn, .rela.plt) of one rank. Only
 * allocated tables: those the loader applies, not the static ones that
 * --emit-relocs keeps. */
static int tlsloc__scan_rank(struct tlsloc__ctx *c, int rank,
			     struct tp_tls_loc *loc)
{
	struct tlsloc__rel rel;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Rela r;
	size_t i;
	int err;

	while ((scn = elf_nextscn(c->m->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    !(sh.sh_flags & SHF_ALLOC))
			continue;
		rel.data = tlsloc__sec_data(c->m, scn, &sh, ELF_T_RELA, &rel.n);
		if (!rel.data)
			continue;
		for (i = 0; i < rel.n; i++) {
			if (!gelf_getrela(rel.data, i, &r) ||
			    !tlsloc__rel_match(c, sh.sh_link, &r, rank, &rel))
				continue;
			if (c->tries++ >= TLSLOC_TRIES_MAX)
				return -E2BIG;
			err = tlsloc__resolve(c, &rel, loc);
			if (!err)
				return 0;
			tlsloc__note_err(c, err);
		}
	}
	return -ENOENT;
}

static bool tlsloc__phdr(const struct tlsloc__elf *m, uint32_t type,
			 GElf_Phdr *ph)
{
	size_t i, phnum;

	if (elf_getphdrnum(m->elf, &phnum) != 0)
		return false;
	for (i = 0; i < phnum; i++)
		if (gelf_getphdr(m->elf, i, ph) && ph->p_type == type)
			return true;
	return false;
}

/* The value of a dynamic section entry; false when there is none. */
static bool tlsloc__dyn(const struct tlsloc__elf *m, int64_t tag,
			uint64_t *val)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Dyn dyn;
	Elf_Data *d;
	size_t i, n;

	while ((scn = elf_nextscn(m->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		d = tlsloc__sec_data(m, scn, &sh, ELF_T_DYN, &n);
		for (i = 0; d && i < n && gelf_getdyn(d, i, &dyn); i++) {
			if (dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag == tag) {
				*val = dyn.d_un.d_val;
				return true;
			}
		}
	}
	return false;
}

/* The executable, not a library: its TLS block is the first one. A PIE
 * has an interpreter, or says so (static-pie); so do a few libraries
 * that can also be run (libc.so.6), but those have a soname. */
static bool tlsloc__is_main(const struct tlsloc__elf *m)
{
	uint64_t flags_1 = 0, soname;
	GElf_Phdr ph;

	if (m->ehdr.e_type == ET_EXEC)
		return true;
	if (tlsloc__dyn(m, DT_SONAME, &soname))
		return false;
	return tlsloc__phdr(m, PT_INTERP, &ph) ||
	       (tlsloc__dyn(m, DT_FLAGS_1, &flags_1) && (flags_1 & DF_1_PIE));
}

/* Local-exec, in the executable: glibc places its block first, ending at
 * the thread pointer (_dl_determine_tlsoffset, TLS_TCB_AT_TP, offset 0),
 * its first byte keeping p_vaddr's misalignment. STT_TLS values are
 * offsets into the block. */
static int tlsloc__local_exec(const struct tlsloc__ctx *c,
			      struct tp_tls_loc *loc)
{
	uint64_t align, firstbyte, block;
	GElf_Phdr tls;

	if (!tlsloc__phdr(c->m, PT_TLS, &tls))
		return -EINVAL;
	align = tls.p_align ? tls.p_align : 1;
	if ((align & (align - 1)) || align > TLSLOC_ALIGN_MAX ||
	    tls.p_memsz >= (uint64_t)TLSLOC_TPOFF_MAX ||
	    c->var.st_value >= tls.p_memsz)
		return -EINVAL;
	firstbyte = -tls.p_vaddr & (align - 1);
	if (tls.p_memsz < firstbyte)
		return -EINVAL;
	block = (tls.p_memsz - firstbyte + align - 1) / align * align +
		firstbyte;
	return tlsloc__set_static(loc, (int64_t)c->var.st_value -
				       (int64_t)block);
}

static int tlsloc__locate(struct tlsloc__ctx *c, struct tp_tls_loc *loc)
{
	int rank, err;

	c->err = -EOPNOTSUPP;	/* module id unknown: nothing matched */
	for (rank = 0; rank < TLSLOC_RANKS; rank++) {
		err = tlsloc__scan_rank(c, rank, loc);
		if (!err)
			return 0;
		if (err != -ENOENT) {
			tlsloc__note_err(c, err);
			break;
		}
	}
	/* The executable's block never moves, whatever the GOT says yet. */
	if (tlsloc__is_main(c->m))
		return tlsloc__local_exec(c, loc);
	return c->err;
}

/* The walk of tlsloc__find_all: each query's state. */
struct tlsloc__find_arg {
	struct tlsloc_query *q;
	size_t n;
	size_t pending;		/* queries without a location yet */
	bool done[TLSLOC_QUERIES_MAX];
	tlsloc_maps_fn each;
	void *each_arg;
	const struct tlsloc_memo *memo;	/* the last walk's, or NULL */
	struct tlsloc_memo seen;	/* this walk's */
};

static uint64_t tlsloc__memo_key(const struct tlsloc__mod *mod)
{
	const uint64_t v[4] = { mod->dev, mod->ino, mod->lo, mod->first_end };

	return hashmap__hash(v, sizeof(v)) | 1;	/* never 0 */
}

static bool tlsloc__memo_has(const struct tlsloc_memo *m, uint64_t key)
{
	for (size_t i = 0; m && i < m->n; i++)
		if (m->mods[i] == key)
			return true;
	return false;
}

/* Remembers a module that defines none of the symbols; past the bound,
 * the rest are looked at again next time. */
static void tlsloc__memo_add(struct tlsloc_memo *m, uint64_t key)
{
	if (m->n < TLSLOC_MEMO_MAX)
		m->mods[m->n++] = key;
}

static void tlsloc__set_module(struct tlsloc_query *q,
			       const struct tlsloc__mod *mod)
{
	if (q->module && q->modlen)
		snprintf(q->module, q->modlen, "%s", mod->path);
}

/* Whether the module may define a symbol some pending query looks for:
 * false when its status says it defines none of them. */
static bool tlsloc__mod_wanted(int pid, const struct tlsloc__mod *mod,
			       const struct tlsloc__find_arg *a)
{
	struct stat st;
	size_t i;

	if (targetfile__stat_mapped((uint32_t)pid, mod->lo, mod->first_end,
				    mod->dev, mod->ino, &st))
		return true;	/* no status: open it and see */
	for (i = 0; i < a->n; i++)
		if (!a->done[i] && !tlsloc__absent_in(&st, a->q[i].symbol, true))
			return true;
	return false;
}

/* Looks for one query's variable in the open module; true when the module
 * does not define it. */
static bool tlsloc__find_one(int pid, const struct tlsloc__mod *mod,
			     struct tlsloc__elf *m, struct tlsloc__find_arg *a,
			     size_t i)
{
	struct tlsloc__ctx c = { .pid = pid, .mod = mod, .m = m };
	struct tlsloc_query *q = &a->q[i];
	GElf_Phdr tls;
	int err;

	if (tlsloc__absent_in(&m->st, q->symbol, true))
		return true;
	/* Without a PT_TLS segment it defines no TLS: spares reading the
	 * symbol tables of most libraries. */
	if (m->ehdr.e_ident[EI_CLASS] != ELFCLASS64 ||
	    m->ehdr.e_machine != EM_X86_64 || !tlsloc__phdr(m, PT_TLS, &tls) ||
	    tlsloc__find_sym(m, q->symbol, true, &c.var, &c.var_tab,
			     &c.var_ndx)) {
		tlsloc__note_absent_in(m, q->symbol, true);
		return true;
	}
	err = tlsloc__bias(m, mod, &c.bias);
	if (!err)
		err = tlsloc__locate(&c, q->loc);
	/* The first definer that yields a location wins: the executable
	 * comes first both in address order and in the loader's lookup
	 * scope. One that fails may be a file mapped but never loaded (or
	 * not yet relocated): later ones still get their turn. */
	if (!err) {
		tlsloc__set_module(q, mod);
		q->err = 0;
		a->done[i] = true;
		a->pending--;
	} else if (!q->err) {
		tlsloc__set_module(q, mod);
		q->err = err;
	}
	return false;
}

static int tlsloc__find_in(int pid, const struct tlsloc__mod *mod, void *arg)
{
	struct tlsloc__find_arg *a = arg;
	uint64_t key = tlsloc__memo_key(mod);
	struct tlsloc__elf m;
	size_t i, absent = 0;

	if (!a->pending)
		return !a->each;
	/* Only a module looked at for every symbol can be passed by. */
	if (a->pending == a->n && tlsloc__memo_has(a->memo, key)) {
		tlsloc__memo_add(&a->seen, key);
		return 0;
	}
	if (!tlsloc__mod_wanted(pid, mod, a)) {
		if (a->pending == a->n)
			tlsloc__memo_add(&a->seen, key);
		return 0;
	}
	if (tlsloc__elf_open(pid, mod, &m))
		return 0;	/* unreadable */
	for (i = 0; i < a->n; i++) {
		if (a->done[i])
			continue;
		/* Read once, and only for a symbol not known absent. */
		if (!tlsloc__absent_in(&m.st, a->q[i].symbol, true) &&
		    tlsloc__elf_read(&m))
			break;	/* not ELF */
		absent += tlsloc__find_one(pid, mod, &m, a, i);
	}
	tlsloc__elf_close(&m);
	if (absent == a->n)
		tlsloc__memo_add(&a->seen, key);
	/* Done, unless every mapping is to be seen. */
	return !a->pending && !a->each;
}

/* Every mapping to the caller's callback, modules to tlsloc__find_in. */
static int tlsloc__on_each(const struct procfs_map *m, void *arg)
{
	struct tlsloc__walk *w = arg;
	struct tlsloc__find_arg *a = w->arg;

	a->each(m, a->each_arg);
	return tlsloc__on_map(m, arg);
}

int tlsloc__find_all(int pid, struct tlsloc_query *q, size_t n,
		     tlsloc_maps_fn each, void *each_arg,
		     struct tlsloc_memo *memo)
{
	struct tlsloc__find_arg a = { .q = q, .n = n, .pending = n,
				      .each = each, .each_arg = each_arg,
				      .memo = memo };
	size_t i;
	int ret;

	if (pid <= 0 || !q || !n || n > TLSLOC_QUERIES_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!q[i].symbol || !*q[i].symbol || !q[i].loc)
			return -EINVAL;
		memset(q[i].loc, 0, sizeof(*q[i].loc));
		if (q[i].module && q[i].modlen)
			q[i].module[0] = '\0';
		q[i].err = 0;
	}
	ret = tlsloc__walk_modules(pid, each ? tlsloc__on_each : tlsloc__on_map,
				   tlsloc__find_in, &a);
	if (ret < 0)
		return ret;
	if (memo)
		*memo = a.seen;
	for (i = 0; i < n; i++)
		if (!a.done[i] && !q[i].err)
			q[i].err = -ENOENT;
	return 0;
}

int tlsloc__find(int pid, const char *symbol, struct tp_tls_loc *loc,
		 char *module, size_t modlen)
{
	struct tlsloc_query q = { symbol, loc, module, modlen, 0 };
	int ret = tlsloc__find_all(pid, &q, 1, NULL, NULL, NULL);

	return ret ? ret : q.err;
}

#else /* !__x86_64__ */

/* Other architectures use other TLS variants and relocations. */
int tlsloc__find_all(int pid, struct tlsloc_query *q, size_t n,
		     tlsloc_maps_fn each, void *each_arg,
		     struct tlsloc_memo *memo)
{
	(void)memo;
	(void)pid;
	(void)q;
	(void)n;
	(void)each;
	(void)each_arg;
	return -EOPNOTSUPP;
}

int tlsloc__find(int pid, const char *symbol, struct tp_tls_loc *loc,
		 char *module, size_t modlen)
{
	(void)pid;
	(void)symbol;
	(void)loc;
	(void)module;
	(void)modlen;
	return -EOPNOTSUPP;
}

#endif
