/* Fuzz target: a binary's CFI as the unwinder reads it. bincache.c's
 * bin_load: the file's sparse image (elfimage__read over the file, here a
 * memfd), libelf over it (elfimage__elf), its PT_LOADs and libdw's CFI of
 * its .eh_frame (dwarf_getcfi_elf); then the kernel walk's table built from
 * .eh_frame_hdr (cfitable__build, as unwinder__cfi_table) and looked up,
 * and the packed rules (cfirule__row, as bincache__rule) at addresses the
 * input names and at each row of the table. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <gelf.h>

#include "fuzz.h"
#include "sample_event.h"
#include "unwind/bincache.h"
#include "unwind/cfirule.h"
#include "unwind/cfitable.h"
#include "unwind/elfimage.h"

static int fd = -1;

/* A stack of one word, repeated. */
static bool read_word(void *arg, uint64_t addr, uint64_t *val)
{
	*val = *(const uint64_t *)arg + (addr & 0xff);
	return (addr & 7) == 0;
}

static void rule_at(Dwarf_CFI *cfi, uint64_t vaddr)
{
	struct tp_cfi_row row;
	struct cfiregs r = { .pc = vaddr, .sp = 0x7ff000, .bp = 0x7ff100,
			     .bp_known = true };
	uint64_t start, end, rule, stack = 0x401000;

	rule = cfirule__row(cfi, vaddr, &start, &end);
	cfirule__kernel_row(rule, &row);
	if (cfirule__usable(rule))
		cfirule__step(rule, &r, read_word, &stack);
}

static void use_cfi(struct bincache_entry *b, const uint8_t *data,
		    size_t size)
{
	struct cfitable t;
	uint64_t vaddr;

	if (cfitable__build(b, TP_CFI_ROWS, &t) == 0) {
		for (uint32_t i = 0; i < t.nrows && i < 256; i++) {
			vaddr = t.base + t.rows[i].pc;
			(void)cfitable__lookup(&t, vaddr);
			(void)cfitable__lookup(&t, vaddr - 1);
			if (i < 64)
				rule_at(b->cfi, vaddr);
		}
		(void)cfitable__lookup(&t, t.base - 1);
		(void)cfitable__lookup(&t, UINT64_MAX);
		cfitable__free(&t);
	}
	/* Addresses the input names (the FDEs' locations are 4-byte offsets,
	 * the headers' 8-byte words), and the segments' starts. */
	for (size_t i = 0; i + 8 <= size && i < 1024; i += 8)
		rule_at(b->cfi, fuzz_word(data + i));
	for (size_t i = 0; i < b->nloads; i++) {
		rule_at(b->cfi, b->loads[i].vaddr);
		rule_at(b->cfi, b->loads[i].vaddr + 0x40);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bincache_entry b = { 0 };
	struct elfimage *im;

	if (fd < 0) {
		elf_version(EV_CURRENT);
		fd = memfd_create("fuzz_cfi", MFD_CLOEXEC);
		if (fd < 0)
			abort();
	}
	fuzz_rewrite(fd, data, size);
	im = elfimage__read(fd, size);
	if (!im)
		return 0;
	b.img = im;
	b.elf = elfimage__elf(im);
	if (b.elf && elf_kind(b.elf) == ELF_K_ELF && bincache__read_loads(&b)) {
		b.cfi = dwarf_getcfi_elf(b.elf);
		if (b.cfi) {
			use_cfi(&b, data, size);
			dwarf_cfi_end(b.cfi);
		}
	}
	if (b.elf)
		elf_end(b.elf);
	elfimage__put(im);
	return 0;
}
