// SPDX-License-Identifier: BSD-2-Clause
/* The unwinder's binaries (bincache.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/stat.h>

#include "proc/procfs.h"
#include "proc/proctable.h"
#include "proc/targetfile.h"
#include "sample_event.h"
#include "unwind/bincache.h"
#include "unwind/cfirule.h"
#include "unwind/elfimage.h"
#include "unwind/unwind.h"
#include "util/clock.h"
#include "util/hashmap.h"

#define MAX_BINS	512	/* binaries analysed at once */
#define BINS_BYTES_MAX	(32u << 20)	/* their images' headers and CFI */
#define CACHE_ENTRIES_MAX (1u << 17)	/* cached decisions, all binaries:
					 * about 100 bytes each */
#define MAX_PCS		65536	/* cached decisions per binary and table */
#define RETRY_NS	(5ull * 1000 * 1000 * 1000)	/* unreadable binary */

struct bincache {
	struct hashmap *bins;	/* dev, ino -> struct bincache_entry * */
	size_t bins_bytes;		/* their images' */
	size_t cache_entries;		/* in their pcs, fns and rules */
	/* Our own vDSO: the same image the kernel maps into every 64-bit
	 * process, so CFI can unwind through theirs. */
	uint8_t *vdso;
	size_t vdso_len;
	struct bincache_entry *vdso_bin;
	Elf *vdso_elf;			/* tells dwfl_attach_state the arch */
	struct unwind_stats *stats;
};

static void bin_free(void *ptr)
{
	struct bincache_entry *b = ptr;

	if (!b)
		return;
	/* The CFI made by dwarf_getcfi_elf is freed with dwarf_cfi_end. */
	if (b->cfi)
		dwarf_cfi_end(b->cfi);
	if (b->elf)
		elf_end(b->elf);
	elfimage__put(b->img);
	hashmap__free(b->rules);
	hashmap__free(b->pcs);
	hashmap__free(b->fns);
	free(b);
}

bool bincache__read_loads(struct bincache_entry *b)
{
	GElf_Ehdr eh;
	GElf_Phdr ph;
	size_t n;
	bool first = true;

	if (!gelf_getehdr(b->elf, &eh) || gelf_getclass(b->elf) != ELFCLASS64 ||
	    eh.e_machine != EM_X86_64 || elf_getphdrnum(b->elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(b->elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (first) {
			b->base_vaddr = ph.p_vaddr &
					-(ph.p_align ? ph.p_align : 1);
			first = false;
		}
		if (ph.p_vaddr + ph.p_memsz > b->end_vaddr)
			b->end_vaddr = ph.p_vaddr + ph.p_memsz;
		if (b->nloads < BINCACHE_MAX_LOADS)
			b->loads[b->nloads++] = (struct bincache_load){
				ph.p_vaddr, ph.p_offset, ph.p_filesz,
				ph.p_memsz };
	}
	return b->nloads > 0;
}

static bool bin_open_elf(struct bincache_entry *b, Elf *elf)
{
	b->elf = elf;
	if (!bincache__read_loads(b))
		return false;
	b->cfi = dwarf_getcfi_elf(elf);	/* NULL without .eh_frame */
	return true;
}

/* Reads the image of the file a mapping holds (targetfile.h: the mapped
 * file itself, never what a target put at its path). A binary over the CFI
 * bound is counted once, not at each retry (every RETRY_NS while its
 * processes are sampled): the counter says how many binaries. */
static struct elfimage *read_image(struct bincache *c,
				   struct bincache_entry *b, uint32_t pid,
				   const struct proc_map *m)
{
	struct elfimage *im;
	struct stat st;
	int fd;

	fd = targetfile__open_mapped(pid, m->start, m->end, m->bin->path,
				     m->bin->dev, m->bin->ino, NULL, 0);
	if (fd < 0)
		return NULL;
	im = fstat(fd, &st) ? NULL : elfimage__read(fd, st.st_size);
	if (!im && errno == EFBIG && !b->too_big) {
		c->stats->cfi_too_big++;
		b->too_big = true;
	}
	close(fd);
	return im;
}

static void bin_load(struct bincache *c, struct bincache_entry *b,
		     uint32_t pid, const struct proc_map *m)
{
	Elf *elf;

	b->img = read_image(c, b, pid, m);
	if (!b->img)
		goto fail;
	elf = elfimage__elf(b->img);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		goto fail;
	}
	if (!bin_open_elf(b, elf)) {
		if (b->cfi)
			dwarf_cfi_end(b->cfi);
		b->cfi = NULL;
		elf_end(elf);
		b->elf = NULL;
		goto fail;
	}
	c->bins_bytes += elfimage__bytes(b->img);
	if (elfimage__cfi_refused(b->img))
		c->stats->cfi_refused++;
	b->ok = true;
	return;
fail:
	elfimage__put(b->img);
	b->img = NULL;
	b->nloads = 0;
	b->failed_ns = clock__mono_ns();
}

struct bincache_entry *bincache__get(struct bincache *c, uint32_t pid,
				     const struct proc_map *m)
{
	const struct binary *fb = m->bin;
	uint64_t key[2] = { fb->dev, fb->ino }, v;
	struct bincache_entry *b;

	if (!strcmp(fb->path, "[vdso]"))
		return c->vdso_bin;
	if (fb->path[0] != '/')
		return NULL;
	if (hashmap__get(c->bins, key, sizeof(key), &v)) {
		b = (struct bincache_entry *)(uintptr_t)v;
		b->used_ns = clock__mono_ns();
		if (b->ok)
			return b;
		if (clock__mono_ns() - b->failed_ns < RETRY_NS)
			return NULL;
		bin_load(c, b, pid, m);
		return b->ok ? b : NULL;
	}
	if (hashmap__size(c->bins) >= MAX_BINS ||
	    c->bins_bytes > BINS_BYTES_MAX ||
	    c->cache_entries > CACHE_ENTRIES_MAX) {
		/* Nothing outside the unwinder keeps an entry (modules hold
		 * their images): start over. */
		hashmap__free_values(c->bins, bin_free);
		c->bins_bytes = 0;
		c->cache_entries = 0;
		c->stats->bins_reset++;
		c->bins = hashmap__new(0);
		if (!c->bins)
			return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->dev = fb->dev;
	b->ino = fb->ino;
	b->used_ns = b->answers_ns = clock__mono_ns();
	b->rules = hashmap__new(0);
	b->pcs = hashmap__new(0);
	b->fns = hashmap__new(0);
	if (!b->rules || !b->pcs || !b->fns ||
	    hashmap__put(c->bins, key, sizeof(key), (uintptr_t)b)) {
		bin_free(b);
		return NULL;
	}
	bin_load(c, b, pid, m);
	return b->ok ? b : NULL;
}

bool bincache__off_to_vaddr(const struct bincache_entry *b, uint64_t off,
			    uint64_t *vaddr)
{
	for (size_t i = 0; i < b->nloads; i++) {
		const struct bincache_load *l = &b->loads[i];

		if (off >= l->offset && off - l->offset < l->filesz) {
			*vaddr = l->vaddr + (off - l->offset);
			return true;
		}
	}
	return false;
}

/* Load bias of the file in a mapping (start, file offset): the mapping of
 * offset off starts at the page of the segment that holds it. */
bool bincache__map_bias(const struct bincache_entry *b, uint64_t start,
			uint64_t off, uint64_t *bias)
{
	for (size_t i = 0; i < b->nloads; i++) {
		const struct bincache_load *l = &b->loads[i];
		uint64_t lo = l->offset & ~(uint64_t)(TP_PAGE_SIZE - 1);

		if (off >= lo && off < l->offset + l->filesz) {
			/* start holds vaddr l->vaddr - (l->offset - off) */
			*bias = start - (l->vaddr - (l->offset - off));
			return true;
		}
	}
	return false;
}

/* At most MAX_PCS in one table (it starts over), and the entries of all
 * are counted, so that bincache__get can start all over beyond
 * CACHE_ENTRIES_MAX. The addresses come from the samples, so their number
 * is the profiled processes' choice. */
void bincache__remember(struct bincache *c, struct hashmap **m, uint64_t key,
			uint64_t val)
{
	size_t before;

	if (*m && hashmap__size(*m) >= MAX_PCS) {
		c->cache_entries -= hashmap__size(*m);
		hashmap__free(*m);
		*m = hashmap__new(0);
	}
	if (!*m)
		return;
	before = hashmap__size(*m);
	hashmap__put(*m, &key, sizeof(key), val);
	c->cache_entries += hashmap__size(*m) - before;
}

/* The CFI rule at vaddr of b, cached per binary. */
uint64_t bincache__rule(struct bincache *c, struct bincache_entry *b,
			uint64_t vaddr)
{
	uint64_t v;

	if (b->rules && hashmap__get(b->rules, &vaddr, sizeof(vaddr), &v))
		return v;
	v = cfirule__at(b->cfi, vaddr);
	bincache__remember(c, &b->rules, vaddr, v);
	return v;
}

/* ---- our vDSO ---- */

struct vdso_find {
	uint64_t start;		/* where the auxiliary vector says it is */
	size_t len;
};

/* 1 with the length of our vDSO mapping, if a sane one (at most 1 MiB). */
static int vdso_map(const struct procfs_map *m, void *arg)
{
	struct vdso_find *v = arg;

	if (strcmp(m->path, "[vdso]") || m->start != v->start ||
	    m->end <= m->start || m->end - m->start > (1u << 20))
		return 0;
	v->len = m->end - m->start;
	return 1;
}

/* Our vDSO image, from our own mappings. */
static void load_vdso(struct bincache *c)
{
	const void *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct vdso_find v = { .start = (uintptr_t)base };
	struct bincache_entry *b;

	if (!base)
		return;
	procfs__read_maps(PROCFS_SELF, vdso_map, &v);
	c->vdso_len = v.len;
	if (!c->vdso_len)
		return;
	c->vdso = malloc(c->vdso_len);
	b = calloc(1, sizeof(*b));
	if (!c->vdso || !b)
		goto fail;
	memcpy(c->vdso, base, c->vdso_len);
	b->pcs = hashmap__new(0);
	b->fns = hashmap__new(0);
	c->vdso_elf = elf_memory((char *)c->vdso, c->vdso_len);
	if (!b->pcs || !b->fns || !c->vdso_elf ||
	    !bin_open_elf(b, elf_memory((char *)c->vdso, c->vdso_len)))
		goto fail;
	b->ok = true;
	c->vdso_bin = b;
	return;
fail:
	bin_free(b);
	if (c->vdso_elf)
		elf_end(c->vdso_elf);
	c->vdso_elf = NULL;
	free(c->vdso);
	c->vdso = NULL;
	c->vdso_len = 0;
}

/* The answers b's tables cache. */
static size_t cached(const struct bincache_entry *b)
{
	return (b->rules ? hashmap__size(b->rules) : 0) +
	       (b->pcs ? hashmap__size(b->pcs) : 0) +
	       (b->fns ? hashmap__size(b->fns) : 0);
}

/* b's answers, and libdw's state behind them (the FDEs and CIEs it read,
 * kept for the life of the Dwarf_CFI), start over. */
static void restart_answers(struct bincache *c, struct bincache_entry *b,
			    uint64_t now)
{
	c->cache_entries -= cached(b);
	hashmap__free(b->rules);
	hashmap__free(b->pcs);
	hashmap__free(b->fns);
	b->rules = hashmap__new(0);
	b->pcs = hashmap__new(0);
	b->fns = hashmap__new(0);
	if (b->cfi) {
		dwarf_cfi_end(b->cfi);
		b->cfi = dwarf_getcfi_elf(b->elf);
	}
	b->answers_ns = now;
}

void bincache__sweep(struct bincache *c, uint64_t keep_ns,
		     uint64_t answers_ns)
{
	uint64_t now = clock__mono_ns(), v;
	struct bincache_entry **gone;
	size_t it = 0, n = 0;

	gone = malloc(hashmap__size(c->bins) * sizeof(*gone) + 1);
	if (!gone)
		return;
	while (hashmap__next(c->bins, &it, NULL, NULL, &v)) {
		struct bincache_entry *b = (struct bincache_entry *)(uintptr_t)v;

		if (now - b->used_ns >= keep_ns)
			gone[n++] = b;
		else if (b->ok && now - b->answers_ns >= answers_ns)
			restart_answers(c, b, now);
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t key[2] = { gone[i]->dev, gone[i]->ino };

		hashmap__del(c->bins, key, sizeof(key), NULL);
		if (gone[i]->ok)
			c->bins_bytes -= elfimage__bytes(gone[i]->img);
		c->cache_entries -= cached(gone[i]);
		bin_free(gone[i]);
	}
	free(gone);
}

void bincache__usage(const struct bincache *c, size_t *bins, size_t *bytes,
		     size_t *answers)
{
	*bins = hashmap__size(c->bins);
	*bytes = c->bins_bytes;
	*answers = c->cache_entries;
}

struct bincache *bincache__new(struct unwind_stats *st)
{
	struct bincache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->stats = st;
	c->bins = hashmap__new(0);
	if (!c->bins) {
		free(c);
		return NULL;
	}
	load_vdso(c);
	return c;
}

void bincache__free(struct bincache *c)
{
	if (!c)
		return;
	hashmap__free_values(c->bins, bin_free);
	bin_free(c->vdso_bin);
	if (c->vdso_elf)
		elf_end(c->vdso_elf);
	free(c->vdso);
	free(c);
}

bool bincache__is_vdso(const struct bincache *c,
		       const struct bincache_entry *b)
{
	return b == c->vdso_bin;
}

Elf *bincache__vdso_open(const struct bincache *c)
{
	return elf_memory((char *)c->vdso, c->vdso_len);
}

Elf *bincache__vdso_elf(const struct bincache *c)
{
	return c->vdso_elf;
}
