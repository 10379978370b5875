/* Function symbols, build ID and PT_LOAD headers of one ELF file.
 *
 * The agent runs as root and reads binaries that other (possibly hostile)
 * processes map, so every size, offset, count and string taken from the
 * file is checked before use. Everything needed later is copied out, and
 * the fd and Elf handle are closed before elfsym__open returns.
 */
#include "sym/elfsym.h"
#include "proc/targetfile.h"
#include "util/grow.h"
#include "util/sortedrange.h"
#include "proc/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Longer names are truncated: C++ names can be long, but not this long. */
#define ELFSYM_NAME_MAX		1024
/* Bounds for hostile files, which could otherwise turn 24 bytes of
 * symbol table into 1 KiB of name each; real binaries stay far below
 * them (an unstripped rustc driver: 93k functions, 15 MiB of names).
 * Past them the table is partial. */
#define ELFSYM_SYMS_MAX		(8u << 20)
#define ELFSYM_ARENA_MAX	(256u << 20)
#define ELFSYM_LOADS_MAX	256
#define ELFSYM_BUILD_ID_MAX	64	/* bytes; SHA-1 IDs have 20 */
#define ELFSYM_PAGE_MASK	0xfffull

struct elfsym_sym {
	uint64_t start;
	uint32_t size;		/* clamped to 4 GiB, no function is larger */
	uint32_t name;		/* offset into the arena */
};

struct elfsym_load {
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
	uint64_t memsz;
	uint32_t flags;
};

/* Symbols by address, one per address, with their names. */
struct elfsym_table {
	struct elfsym_sym *syms;
	size_t nsyms;
	char *names;		/* arena: NUL-terminated names back to back */
	size_t names_len;	/* its bytes */
};

struct elfsym {
	struct elfsym_table fn;		/* functions */
	struct elfsym_table data;	/* variables (STT_OBJECT), when asked
					 * for (elfsym__set_data_objects) */
	struct elfsym_load *loads;
	size_t nloads;
	char build_id[2 * ELFSYM_BUILD_ID_MAX + 1];	/* "" when none */
	bool has_symtab;	/* a .symtab with bytes in the file */
	bool has_dwarf;		/* .debug_info/.debug_line with bytes */
	bool damaged;		/* headers or sections past the end of file */
	char *debuglink;	/* .gnu_debuglink file name, or NULL */
	bool debuglink_path;	/* one naming a path, ignored */
	uint32_t debuglink_crc;
	uint64_t dev, ino;	/* the file read (targetfile__dev) */
	bool over_budget;	/* a symbol table left out for its size */
};

/* A candidate while loading: the name still points into the mapped file,
 * so aliases that lose deduplication are never copied. */
struct elfsym_cand {
	uint64_t start;
	uint64_t size;
	uint64_t sec_end;	/* end of the symbol's section, 0 if unknown */
	const char *name;
	uint32_t len;
	uint32_t rank;		/* higher wins among equal starts */
};

struct elfsym_cands {
	struct elfsym_cand *v;
	size_t n;
	size_t cap;
};

/* Everything elfsym__open needs to reach while loading. */
struct elfsym_load_ctx {
	struct elfsym_cands *data;	/* variables' candidates, or NULL */
	Elf *elf;
	uint64_t file_size;
	size_t shnum;
	bool have_shdrs;
	uint64_t max_bytes;	/* for the symbol tables, 0: no bound */
	uint64_t used;
	bool over_budget;	/* a table was left out for max_bytes */
};

static int elfsym__cands_push(struct elfsym_cands *c,
			      const struct elfsym_cand *cand)
{
	if (c->n == c->cap) {
		if (c->cap >= ELFSYM_SYMS_MAX)
			return -E2BIG;
		if (grow__array(&c->v, &c->cap, c->n + 1, sizeof(*c->v), 1024))
			return -ENOMEM;
	}
	c->v[c->n++] = *cand;
	return 0;
}

/* Rank among symbols at one address: sized before sizeless (the size
 * bounds lookups), then .symtab before .dynsym, then global, weak, local. */
static uint32_t elfsym__rank(const GElf_Sym *sym, bool from_symtab)
{
	uint32_t rank = 0;

	if (sym->st_size)
		rank |= 8;
	if (from_symtab)
		rank |= 4;
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		rank |= 2;
		break;
	case STB_WEAK:
		rank |= 1;
		break;
	}
	return rank;
}

static bool elfsym__is_func(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	if (type != STT_FUNC && type != STT_GNU_IFUNC)
		return false;
	return sym->st_value != 0 && sym->st_shndx != SHN_UNDEF;
}

/* A variable with a size: what a data address can be named by (perf's
 * symbol_daddr takes the same). A sizeless one would claim everything up
 * to the next. */
static bool elfsym__is_object(const GElf_Sym *sym)
{
	return GELF_ST_TYPE(sym->st_info) == STT_OBJECT && sym->st_value &&
	       sym->st_size && sym->st_shndx != SHN_UNDEF;
}

static bool want_data_objects;

void elfsym__set_data_objects(bool on)
{
	want_data_objects = on;
}

/* Checks that a section's bytes lie inside the file, so libelf is never
 * asked to read past its end. SHT_NOBITS sections have no bytes at all. */
static bool elfsym__shdr_in_file(const struct elfsym_load_ctx *ctx,
				 const GElf_Shdr *shdr)
{
	if (shdr->sh_type == SHT_NOBITS)
		return false;
	if (shdr->sh_offset > ctx->file_size)
		return false;
	return shdr->sh_size <= ctx->file_size - shdr->sh_offset;
}

/* End address of the allocated section holding a sizeless symbol, or 0.
 * Bounds symbols like _init, which would otherwise also claim the PLT
 * that follows them up to the next symbol. */
static uint64_t elfsym__section_end(const struct elfsym_load_ctx *ctx,
				    const GElf_Sym *sym)
{
	Elf_Scn *scn;
	GElf_Shdr shdr;

	if (sym->st_shndx >= SHN_LORESERVE || sym->st_shndx >= ctx->shnum)
		return 0;
	scn = elf_getscn(ctx->elf, sym->st_shndx);
	if (!scn || !gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_ALLOC))
		return 0;
	if (shdr.sh_addr + shdr.sh_size < shdr.sh_addr)
		return 0;
	if (sym->st_value < shdr.sh_addr ||
	    sym->st_value >= shdr.sh_addr + shdr.sh_size)
		return 0;
	return shdr.sh_addr + shdr.sh_size;
}

/* The string table a symbol table links to, checked to be one. */
static Elf_Data *elfsym__strtab(const struct elfsym_load_ctx *ctx,
				size_t link)
{
	Elf_Scn *scn;
	GElf_Shdr shdr;
	Elf_Data *data;

	if (link == 0 || link >= ctx->shnum)
		return NULL;
	scn = elf_getscn(ctx->elf, link);
	if (!scn || !gelf_getshdr(scn, &shdr))
		return NULL;
	if (shdr.sh_type != SHT_STRTAB || !elfsym__shdr_in_file(ctx, &shdr))
		return NULL;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || data->d_size != shdr.sh_size)
		return NULL;
	return data;
}

/* Bounds a name inside its string table: never read past the table, and
 * truncate at ELFSYM_NAME_MAX. Returns the length, 0 for none. */
static uint32_t elfsym__name_len(const Elf_Data *strtab, uint64_t off)
{
	size_t room;

	if (off >= strtab->d_size)
		return 0;
	room = strtab->d_size - off;
	if (room > ELFSYM_NAME_MAX)
		room = ELFSYM_NAME_MAX;
	return strnlen((const char *)strtab->d_buf + off, room);
}

/* Adds the function symbols of one SHT_SYMTAB/SHT_DYNSYM section. A bad
 * section is skipped whole; only allocation failure is an error. */
static int elfsym__read_symtab(const struct elfsym_load_ctx *ctx,
			       Elf_Scn *scn, const GElf_Shdr *shdr,
			       struct elfsym_cands *cands)
{
	size_t entsize = gelf_fsize(ctx->elf, ELF_T_SYM, 1, EV_CURRENT);
	struct elfsym_cands *to;
	struct elfsym_cand cand;
	Elf_Data *data, *strtab;
	GElf_Sym sym;
	size_t i, n;
	int err;

	if (!entsize || shdr->sh_entsize != entsize)
		return 0;
	if (!elfsym__shdr_in_file(ctx, shdr))
		return 0;
	strtab = elfsym__strtab(ctx, shdr->sh_link);
	if (!strtab)
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || data->d_type != ELF_T_SYM)
		return 0;
	/* Count from the data libelf holds, not from the header alone;
	 * gelf_getsym checks each index against it again. */
	n = data->d_size / entsize;
	for (i = 1; i < n; i++) {
		if (!gelf_getsym(data, i, &sym))
			break;
		if (elfsym__is_func(&sym))
			to = cands;
		else if (ctx->data && elfsym__is_object(&sym))
			to = ctx->data;
		else
			continue;
		cand.len = elfsym__name_len(strtab, sym.st_name);
		if (!cand.len)
			continue;
		cand.name = (const char *)strtab->d_buf + sym.st_name;
		cand.start = sym.st_value;
		cand.size = sym.st_size;
		cand.sec_end = sym.st_size ? 0 : elfsym__section_end(ctx, &sym);
		cand.rank = elfsym__rank(&sym, shdr->sh_type == SHT_SYMTAB);
		err = elfsym__cands_push(to, &cand);
		if (err == -E2BIG)
			break;	/* keep a partial table */
		if (err)
			return err;
	}
	return 0;
}

/* What reading a symbol table costs, before anything of it is read: its
 * bytes and its strings' as libelf holds them, and a candidate (about
 * twice a symbol's size) per entry. */
static uint64_t elfsym__table_cost(const struct elfsym_load_ctx *ctx,
				   const GElf_Shdr *shdr)
{
	Elf_Scn *str = elf_getscn(ctx->elf, shdr->sh_link);
	GElf_Shdr strh;
	uint64_t strsz = str && gelf_getshdr(str, &strh) ? strh.sh_size : 0;

	return 3 * shdr->sh_size + strsz;
}

static int elfsym__read_symbols(struct elfsym_load_ctx *ctx,
				struct elfsym_cands *cands)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	uint64_t cost;
	int err;

	if (!ctx->have_shdrs)
		return 0;
	while ((scn = elf_nextscn(ctx->elf, scn))) {
		if (!gelf_getshdr(scn, &shdr))
			continue;
		if (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM)
			continue;
		/* A file's owner decides how big its tables are: one over
		 * the budget is left out, and its functions go unnamed. */
		cost = elfsym__table_cost(ctx, &shdr);
		if (ctx->max_bytes && (cost > ctx->max_bytes ||
				       ctx->used > ctx->max_bytes - cost)) {
			ctx->over_budget = true;
			continue;
		}
		ctx->used += cost;
		err = elfsym__read_symtab(ctx, scn, &shdr, cands);
		if (err)
			return err;
	}
	return 0;
}

static unsigned elfsym__leading_underscores(const struct elfsym_cand *c)
{
	unsigned i = 0;

	while (i < c->len && c->name[i] == '_')
		i++;
	return i;
}

/* Address order; among equal addresses the preferred symbol first. The
 * name comparisons make the choice independent of file order. */
static int elfsym__cand_cmp(const void *pa, const void *pb)
{
	const struct elfsym_cand *a = pa, *b = pb;
	unsigned ua, ub;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank > b->rank ? -1 : 1;
	ua = elfsym__leading_underscores(a);
	ub = elfsym__leading_underscores(b);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return memcmp(a->name, b->name, a->len);
}

/* Index past the sorted group of candidates starting where cands[i] does,
 * and the size the group's symbol gets: the largest st_size (aliases share
 * one body), else the distance to the end of the section. */
static size_t elfsym__group(const struct elfsym_cands *c, size_t i,
			    uint64_t *size)
{
	uint64_t start = c->v[i].start, sec_end = 0;
	size_t j;

	*size = 0;
	for (j = i; j < c->n && c->v[j].start == start; j++) {
		if (c->v[j].size > *size)
			*size = c->v[j].size;
		if (c->v[j].sec_end > sec_end)
			sec_end = c->v[j].sec_end;
	}
	if (!*size && sec_end > start)
		*size = sec_end - start;
	/* A size that wraps the address space or exceeds 4 GiB is corrupt;
	 * treat it as unknown rather than let it cover everything. */
	if (*size > UINT32_MAX || start + *size < start)
		*size = 0;
	return j;
}

/* Sorts, keeps the best candidate per address and copies the names into
 * one arena, sized by a first pass. */
static int elfsym__build_table(struct elfsym_table *e,
			       struct elfsym_cands *cands)
{
	const struct elfsym_cand *c;
	size_t i, next, n = 0, arena = 0;
	uint64_t size;

	if (!cands->n)
		return 0;
	qsort(cands->v, cands->n, sizeof(*cands->v), elfsym__cand_cmp);
	for (i = 0; i < cands->n; i = next) {
		next = elfsym__group(cands, i, &size);
		if (arena + cands->v[i].len + 1 > ELFSYM_ARENA_MAX)
			break;
		arena += cands->v[i].len + 1;
		n++;
	}
	/* Freed by elfsym__free when the other allocation fails. */
	e->syms = calloc(n, sizeof(*e->syms));
	e->names = malloc(arena);
	if (!e->syms || !e->names)
		return -ENOMEM;
	e->names_len = arena;
	arena = 0;
	for (i = 0; e->nsyms < n; i = next) {
		next = elfsym__group(cands, i, &size);
		c = &cands->v[i];
		e->syms[e->nsyms].start = c->start;
		e->syms[e->nsyms].size = size;
		e->syms[e->nsyms].name = arena;
		memcpy(e->names + arena, c->name, c->len);
		e->names[arena + c->len] = '\0';
		arena += c->len + 1;
		e->nsyms++;
	}
	return 0;
}

static void elfsym__hex(char *out, const unsigned char *in, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0xf];
	}
	out[2 * len] = '\0';
}

/* Looks for NT_GNU_BUILD_ID among the notes of one data block;
 * gelf_getnote checks each note against the block's size. Writes the hex
 * form into out (2 * ELFSYM_BUILD_ID_MAX + 1 bytes). */
static bool elfsym__find_build_id(char *out, Elf_Data *data)
{
	size_t off = 0, next, name_off, desc_off;
	const unsigned char *buf = data->d_buf;
	GElf_Nhdr nhdr;

	if (!buf)
		return false;
	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off))) {
		if (next <= off)
			break;
		off = next;
		if (nhdr.n_type != NT_GNU_BUILD_ID || nhdr.n_namesz != 4 ||
		    memcmp(buf + name_off, "GNU", 4) != 0)
			continue;
		if (!nhdr.n_descsz || nhdr.n_descsz > ELFSYM_BUILD_ID_MAX)
			continue;
		elfsym__hex(out, buf + desc_off, nhdr.n_descsz);
		return true;
	}
	return false;
}

static bool elfsym__build_id_from_sections(char *out,
					   const struct elfsym_load_ctx *ctx)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf_Data *data;

	if (!ctx->have_shdrs)
		return false;
	while ((scn = elf_nextscn(ctx->elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		if (!elfsym__shdr_in_file(ctx, &shdr))
			continue;
		data = elf_getdata(scn, NULL);
		if (data && elfsym__find_build_id(out, data))
			return true;
	}
	return false;
}

/* Fallback for files whose section headers were stripped. */
static bool elfsym__build_id_from_segments(char *out,
					   const struct elfsym_load_ctx *ctx)
{
	size_t i, phnum;
	GElf_Phdr phdr;
	Elf_Data *data;
	Elf_Type type;

	if (elf_getphdrnum(ctx->elf, &phnum) != 0)
		return false;
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(ctx->elf, i, &phdr) ||
		    phdr.p_type != PT_NOTE)
			continue;
		if (phdr.p_offset > ctx->file_size ||
		    phdr.p_filesz > ctx->file_size - phdr.p_offset)
			continue;
		type = phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR;
		data = elf_getdata_rawchunk(ctx->elf, phdr.p_offset,
					    phdr.p_filesz, type);
		if (data && elfsym__find_build_id(out, data))
			return true;
	}
	return false;
}

static bool elfsym__phdr_usable(const GElf_Phdr *phdr)
{
	if (phdr->p_type != PT_LOAD || !phdr->p_filesz)
		return false;
	/* Ranges that wrap can only come from a corrupt file. */
	return phdr->p_offset + phdr->p_filesz > phdr->p_offset &&
	       phdr->p_vaddr + phdr->p_filesz > phdr->p_vaddr;
}

/* Copies the usable PT_LOAD headers, counted first so that an elfsym
 * holds exactly what it needs. */
static int elfsym__read_loads(struct elfsym *e,
			      const struct elfsym_load_ctx *ctx)
{
	size_t i, phnum, n = 0;
	struct elfsym_load *l;
	GElf_Phdr phdr;

	if (elf_getphdrnum(ctx->elf, &phnum) != 0)
		return -EINVAL;
	for (i = 0; i < phnum && n < ELFSYM_LOADS_MAX; i++)
		if (gelf_getphdr(ctx->elf, i, &phdr) &&
		    elfsym__phdr_usable(&phdr))
			n++;
	if (!n)
		return 0;
	e->loads = calloc(n, sizeof(*e->loads));
	if (!e->loads)
		return -ENOMEM;
	for (i = 0; i < phnum && e->nloads < n; i++) {
		if (!gelf_getphdr(ctx->elf, i, &phdr) ||
		    !elfsym__phdr_usable(&phdr))
			continue;
		l = &e->loads[e->nloads++];
		l->offset = phdr.p_offset;
		l->vaddr = phdr.p_vaddr;
		l->filesz = phdr.p_filesz;
		l->memsz = phdr.p_memsz;
		l->flags = phdr.p_flags;
	}
	return 0;
}

/* Reads .gnu_debuglink: a file name, NUL, padding to 4 bytes, then the
 * CRC-32 of the debug file in the file's byte order. A name that could
 * leave the directory it is looked up in is ignored. */
static int elfsym__read_debuglink(struct elfsym *e, Elf_Scn *scn,
				  const GElf_Ehdr *ehdr)
{
	const unsigned char *b;
	Elf_Data *data;
	size_t len, at;

	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || data->d_size < 8)
		return 0;
	b = data->d_buf;
	len = strnlen((const char *)b, data->d_size);
	at = (len + 4) & ~(size_t)3;
	if (!len || len > 255 || at + 4 > data->d_size)
		return 0;
	if (memchr(b, '/', len) || !strcmp((const char *)b, ".") ||
	    !strcmp((const char *)b, "..")) {
		e->debuglink_path = true;	/* counted by the caller */
		return 0;
	}
	e->debuglink = strndup((const char *)b, len);
	if (!e->debuglink)
		return -ENOMEM;
	if (ehdr->e_ident[EI_DATA] == ELFDATA2MSB)
		e->debuglink_crc = (uint32_t)b[at] << 24 | (uint32_t)b[at + 1] << 16 |
				   (uint32_t)b[at + 2] << 8 | b[at + 3];
	else
		e->debuglink_crc = (uint32_t)b[at + 3] << 24 | (uint32_t)b[at + 2] << 16 |
				   (uint32_t)b[at + 1] << 8 | b[at];
	return 0;
}

/* What the sections say about the file beyond its symbols: whether it has
 * a symbol table and DWARF of its own, where its debug file is, and
 * whether it was cut short (a truncated copy keeps its ELF header, but its
 * section headers or section bytes lie past the end). */
static int elfsym__scan_sections(struct elfsym *e,
				 const struct elfsym_load_ctx *ctx,
				 const GElf_Ehdr *ehdr)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t shstrndx;
	const char *name;
	int err;

	if (ehdr->e_shnum && (ehdr->e_shoff > ctx->file_size ||
			      (uint64_t)ehdr->e_shnum * ehdr->e_shentsize >
			      ctx->file_size - ehdr->e_shoff))
		e->damaged = true;
	if (!ctx->have_shdrs) {
		if (ehdr->e_shoff)
			e->damaged = true;
		return 0;
	}
	if (elf_getshdrstrndx(ctx->elf, &shstrndx) != 0)
		shstrndx = 0;
	while ((scn = elf_nextscn(ctx->elf, scn))) {
		if (!gelf_getshdr(scn, &shdr)) {
			e->damaged = true;
			continue;
		}
		if (shdr.sh_type == SHT_NOBITS)
			continue;
		if (!elfsym__shdr_in_file(ctx, &shdr)) {
			e->damaged = true;
			continue;
		}
		if (shdr.sh_type == SHT_SYMTAB && shdr.sh_size)
			e->has_symtab = true;
		name = shstrndx ? elf_strptr(ctx->elf, shstrndx, shdr.sh_name) : NULL;
		if (!name || !shdr.sh_size)
			continue;
		if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"))
			e->has_dwarf = true;
		if (!strcmp(name, ".gnu_debuglink") && !e->debuglink) {
			err = elfsym__read_debuglink(e, scn, ehdr);
			if (err)
				return err;
		}
	}
	return 0;
}

/* The libelf side of elfsym__open, once the file is open. */
static int elfsym__load(struct elfsym *e, struct elfsym_load_ctx *ctx)
{
	struct elfsym_cands cands = { 0 }, data = { 0 };
	GElf_Ehdr ehdr;
	int err;

	ctx->data = want_data_objects ? &data : NULL;
	if (elf_kind(ctx->elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto cleanup;
	}
	if (!gelf_getehdr(ctx->elf, &ehdr)) {
		err = -EINVAL;
		goto cleanup;
	}
	/* A corrupt section header table costs symbols, not the file: the
	 * program headers still map offsets and may hold the build ID. */
	ctx->have_shdrs = elf_getshdrnum(ctx->elf, &ctx->shnum) == 0 &&
			  ctx->shnum > 1;
	err = elfsym__read_loads(e, ctx);
	if (err)
		goto cleanup;
	if (!elfsym__build_id_from_sections(e->build_id, ctx))
		elfsym__build_id_from_segments(e->build_id, ctx);
	err = elfsym__scan_sections(e, ctx, &ehdr);
	if (err)
		goto cleanup;
	err = elfsym__read_symbols(ctx, &cands);
	if (err)
		goto cleanup;
	err = elfsym__build_table(&e->fn, &cands);
	if (!err)
		err = elfsym__build_table(&e->data, &data);
cleanup:
	free(cands.v);
	free(data.v);
	return err;
}

struct elfsym *elfsym__open_fd(int fd, uint64_t max_bytes)
{
	struct elfsym_load_ctx ctx = { .max_bytes = max_bytes };
	struct elfsym *e = NULL;
	struct stat st;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		err = -ENOSYS;
		goto cleanup;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	ctx.file_size = st.st_size;
	e = calloc(1, sizeof(*e));
	if (!e) {
		err = -ENOMEM;
		goto cleanup;
	}
	e->dev = targetfile__dev(st.st_dev);
	e->ino = st.st_ino;
	/* pread, not mmap: the file's owner could truncate it under us, and
	 * a SIGBUS would kill the (root) agent. */
	ctx.elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!ctx.elf) {
		/* elf_begin fails on empty or unreadable files. */
		err = ctx.file_size ? -EINVAL : -ENOEXEC;
		goto cleanup;
	}
	err = elfsym__load(e, &ctx);
	e->over_budget = ctx.over_budget;
cleanup:
	if (ctx.elf)
		elf_end(ctx.elf);
	if (err) {
		elfsym__free(e);
		errno = -err;
		return NULL;
	}
	return e;
}

struct elfsym *elfsym__open(const char *path)
{
	struct elfsym *e;
	int fd, err;

	fd = targetfile__open(path, NULL, NULL);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	e = elfsym__open_fd(fd, 0);
	err = errno;
	close(fd);
	errno = err;
	return e;
}

bool elfsym__over_budget(const struct elfsym *e)
{
	return e && e->over_budget;
}

void elfsym__file_id(const struct elfsym *e, uint64_t *dev, uint64_t *ino)
{
	*dev = e ? e->dev : 0;
	*ino = e ? e->ino : 0;
}

int elfsym__peek_build_id(int fd, char *out, size_t outlen)
{
	struct elfsym_load_ctx ctx = { 0 };
	char id[2 * ELFSYM_BUILD_ID_MAX + 1] = "";
	struct stat st;
	int err = -ENOENT;

	if (outlen < 1)
		return -EINVAL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return -ENOEXEC;
	ctx.file_size = st.st_size;
	ctx.elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!ctx.elf || elf_kind(ctx.elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto cleanup;
	}
	ctx.have_shdrs = elf_getshdrnum(ctx.elf, &ctx.shnum) == 0 &&
			 ctx.shnum > 1;
	if (elfsym__build_id_from_sections(id, &ctx) ||
	    elfsym__build_id_from_segments(id, &ctx)) {
		err = strlen(id) < outlen ? 0 : -ENAMETOOLONG;
		if (!err)
			memcpy(out, id, strlen(id) + 1);
	}
cleanup:
	if (ctx.elf)
		elf_end(ctx.elf);
	return err;
}

/* Reads exactly len bytes at addr of the process; false if not. */
static bool elfsym__mem_read(int pid, uint64_t addr, void *buf, size_t len)
{
	return !procfs__read_mem(pid, addr, buf, len);
}

#define ELFSYM_MEM_PHDRS_MAX	64
#define ELFSYM_MEM_NOTE_MAX	4096

int elfsym__mem_build_id(int pid, uint64_t base, char *out, size_t outlen)
{
	Elf64_Phdr ph[ELFSYM_MEM_PHDRS_MAX];
	unsigned char notes[ELFSYM_MEM_NOTE_MAX];
	uint64_t bias = 0, len, off;
	bool have_bias = false;
	Elf64_Ehdr eh;
	size_t i, align;

	if (!elfsym__mem_read(pid, base, &eh, sizeof(eh)))
		return -EIO;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;
	/* Native 64-bit processes only: the agent's own byte order. */
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum ||
	    eh.e_phnum > ELFSYM_MEM_PHDRS_MAX || eh.e_phoff > 0x10000)
		return -ENOTSUP;
	if (!elfsym__mem_read(pid, base + eh.e_phoff, ph,
			      eh.e_phnum * sizeof(ph[0])))
		return -EIO;
	/* base maps file offset 0: the segment holding that offset tells
	 * the load bias. */
	for (i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || ph[i].p_offset != 0)
			continue;
		bias = base - (ph[i].p_vaddr & ~ELFSYM_PAGE_MASK);
		have_bias = true;
		break;
	}
	if (!have_bias)
		return -ENOENT;
	for (i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_NOTE || !ph[i].p_filesz)
			continue;
		len = ph[i].p_filesz < sizeof(notes) ? ph[i].p_filesz :
						       sizeof(notes);
		if (!elfsym__mem_read(pid, bias + ph[i].p_vaddr, notes, len))
			continue;
		align = ph[i].p_align == 8 ? 8 : 4;
		for (off = 0; off + 12 <= len;) {
			uint32_t namesz, descsz, type;
			uint64_t name_at, desc_at, next;

			memcpy(&namesz, notes + off, 4);
			memcpy(&descsz, notes + off + 4, 4);
			memcpy(&type, notes + off + 8, 4);
			name_at = off + 12;
			desc_at = (name_at + namesz + align - 1) & ~(uint64_t)(align - 1);
			next = (desc_at + descsz + align - 1) & ~(uint64_t)(align - 1);
			if (desc_at > len || descsz > len - desc_at)
				break;
			if (type == NT_GNU_BUILD_ID && namesz == 4 &&
			    !memcmp(notes + name_at, "GNU", 4) && descsz &&
			    descsz <= ELFSYM_BUILD_ID_MAX) {
				if (outlen < 2 * (size_t)descsz + 1)
					return -ENAMETOOLONG;
				elfsym__hex(out, notes + desc_at, descsz);
				return 0;
			}
			if (next <= off)
				break;
			off = next;
		}
	}
	return -ENOENT;
}

bool elfsym__has_symtab(const struct elfsym *e)
{
	return e && e->has_symtab;
}

bool elfsym__has_dwarf(const struct elfsym *e)
{
	return e && e->has_dwarf;
}

bool elfsym__damaged(const struct elfsym *e)
{
	return e && e->damaged;
}

bool elfsym__debuglink_path(const struct elfsym *e)
{
	return e->debuglink_path;
}

const char *elfsym__debuglink(const struct elfsym *e, uint32_t *crc)
{
	if (!e || !e->debuglink)
		return NULL;
	if (crc)
		*crc = e->debuglink_crc;
	return e->debuglink;
}

void elfsym__free(struct elfsym *e)
{
	if (!e)
		return;
	free(e->fn.syms);
	free(e->fn.names);
	free(e->data.syms);
	free(e->data.names);
	free(e->loads);
	free(e->debuglink);
	free(e);
}

const char *elfsym__build_id(const struct elfsym *e)
{
	if (!e || !e->build_id[0])
		return NULL;
	return e->build_id;
}

/* Whether off lies in the segment; page_slack also accepts the start of
 * the page holding p_offset, where a page-aligned mapping begins. */
static bool elfsym__load_covers(const struct elfsym_load *l, uint64_t off,
				bool page_slack)
{
	uint64_t lo = l->offset;

	if (page_slack)
		lo &= ~ELFSYM_PAGE_MASK;
	return off >= lo && off < l->offset + l->filesz;
}

static const struct elfsym_load *
elfsym__find_load(const struct elfsym *e, uint64_t off, bool page_slack)
{
	const struct elfsym_load *found = NULL;
	size_t i;

	for (i = 0; i < e->nloads; i++) {
		if (!elfsym__load_covers(&e->loads[i], off, page_slack))
			continue;
		if (e->loads[i].flags & PF_X)
			return &e->loads[i];
		if (!found)
			found = &e->loads[i];
	}
	return found;
}

int elfsym__offset_to_vaddr(const struct elfsym *e, uint64_t file_offset,
			    uint64_t *vaddr)
{
	const struct elfsym_load *l;

	if (!e)
		return -ENOENT;
	/* An exact hit first: page slack could reach into a segment that
	 * merely shares the page with the one really holding the offset. */
	l = elfsym__find_load(e, file_offset, false);
	if (!l)
		l = elfsym__find_load(e, file_offset, true);
	if (!l)
		return -ENOENT;
	if (vaddr)
		*vaddr = file_offset - l->offset + l->vaddr;
	return 0;
}

static const char *table_lookup(const struct elfsym_table *t, uint64_t vaddr,
				uint64_t *start, uint64_t *size)
{
	const struct elfsym_sym *s;

	/* Greatest start <= vaddr. */
	if (!(s = SORTEDRANGE_FLOOR(t->syms, t->nsyms, start, vaddr)))
		return NULL;
	/* Size 0 (no .size in assembly, and no section to bound it) runs
	 * up to the next symbol. */
	if (s->size && vaddr - s->start >= s->size)
		return NULL;
	if (start)
		*start = s->start;
	if (size)
		*size = s->size;
	return t->names + s->name;
}

const char *elfsym__lookup(const struct elfsym *e, uint64_t vaddr,
			   uint64_t *start)
{
	return e ? table_lookup(&e->fn, vaddr, start, NULL) : NULL;
}

const char *elfsym__lookup_data(const struct elfsym *e, uint64_t vaddr,
				uint64_t *start, uint64_t *size)
{
	return e ? table_lookup(&e->data, vaddr, start, size) : NULL;
}

size_t elfsym__count(const struct elfsym *e)
{
	return e ? e->fn.nsyms : 0;
}

uint64_t elfsym__bytes(const struct elfsym *e)
{
	if (!e)
		return 0;
	return sizeof(*e) + e->fn.nsyms * sizeof(*e->fn.syms) +
	       e->fn.names_len + e->data.nsyms * sizeof(*e->data.syms) +
	       e->data.names_len +
	       e->nloads * sizeof(*e->loads) +
	       (e->debuglink ? strlen(e->debuglink) + 1 : 0);
}
