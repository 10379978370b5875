/* What libdw may read of an .eh_frame (src/unwind/cficheck.h).
 *
 * The frames here are written from DWARF 5's section 6.4 and the LSB's
 * .eh_frame and .eh_frame_hdr layouts, byte by byte, not by the agent's
 * code; then the system's own binaries, which must all pass. */
#include <dirent.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <elf.h>
#include <sys/stat.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "check.h"
#include "unwind/cficheck.h"
#include "unwind/elfimage.h"

#define FRAME_VADDR	0x2000
#define HDR_VADDR	0x1f00
#define CODE_VADDR	0x1000

struct buf {
	uint8_t b[1 << 20];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (!n)
		return;
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put8(struct buf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put32(struct buf *b, uint32_t v)
{
	uint8_t le[4] = { v, v >> 8, v >> 16, v >> 24 };

	put(b, le, 4);
}

static void uleb(struct buf *b, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		put8(b, byte | (v ? 0x80 : 0));
	} while (v);
}

/* Sets the 4-byte length at b->b[at] to what follows it. */
static void close_entry(struct buf *b, size_t at)
{
	uint32_t len = (uint32_t)(b->n - at - 4);

	memcpy(b->b + at, &len, 4);
}

/* A CIE: version 1, augmentation aug (its data in augdata), code
 * alignment 1, data alignment -8, return address r16, then instructions
 * CFA = rsp + 8, r16 at CFA - 8. Returns its offset. */
static size_t cie(struct buf *b, const char *aug, const uint8_t *augdata,
		  size_t augdata_len)
{
	static const uint8_t ins[] = { DW_CFA_def_cfa, 7, 8,
				       DW_CFA_offset + 16, 1 };
	size_t at = b->n;

	put32(b, 0);
	put32(b, 0);			/* CIE id in .eh_frame */
	put8(b, 1);
	put(b, aug, strlen(aug) + 1);
	uleb(b, 1);
	put8(b, 0x78);			/* SLEB128 -8 */
	uleb(b, 16);
	if (aug[0] == 'z') {
		uleb(b, augdata_len);
		put(b, augdata, augdata_len);
	}
	put(b, ins, sizeof(ins));
	close_entry(b, at);
	return at;
}

/* The usual CIE: "zR", FDE addresses pc-relative 4-byte signed. */
static size_t cie_zr(struct buf *b)
{
	static const uint8_t r = DW_EH_PE_pcrel | DW_EH_PE_sdata4;

	return cie(b, "zR", &r, 1);
}

/* An FDE of the CIE at cie_at over [CODE_VADDR + 16 * k, + 16) with
 * instructions ins. Returns its offset. */
static size_t fde(struct buf *b, size_t cie_at, unsigned k,
		  const uint8_t *ins, size_t len)
{
	size_t at = b->n;
	uint32_t loc;

	put32(b, 0);
	put32(b, (uint32_t)(b->n - cie_at));	/* back to the CIE */
	loc = (uint32_t)(CODE_VADDR + 16 * k - (FRAME_VADDR + b->n));
	put32(b, loc);
	put32(b, 16);
	uleb(b, 0);			/* no augmentation data */
	put(b, ins, len);
	close_entry(b, at);
	return at;
}

/* The check as the image makes it: the table read first, as the agent
 * reads it (the tables here are all in the linkers' encoding). */
static const char *check(const struct buf *frame, const struct buf *hdr,
			 struct cficheck_seen *seen)
{
	struct ehframehdr t;

	if (hdr && ehframehdr__read(hdr->b, hdr->n, HDR_VADDR, &t))
		return "a test table not read";
	return cficheck__eh_frame(frame->b, frame->n, FRAME_VADDR,
				  hdr ? &t : NULL, seen);
}

/* An .eh_frame_hdr whose table names the FDEs at offs[], one per 16
 * bytes of code from CODE_VADDR. */
static void hdr_of(struct buf *h, const size_t *offs, size_t n)
{
	h->n = 0;
	put8(h, 1);
	put8(h, DW_EH_PE_pcrel | DW_EH_PE_sdata4);
	put8(h, DW_EH_PE_udata4);
	put8(h, DW_EH_PE_datarel | DW_EH_PE_sdata4);
	put32(h, (uint32_t)(FRAME_VADDR - (HDR_VADDR + 4)));
	put32(h, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		put32(h, (uint32_t)(CODE_VADDR + 16 * i - HDR_VADDR));
		put32(h, (uint32_t)(FRAME_VADDR + offs[i] - HDR_VADDR));
	}
}

static struct buf f, h;

/* One CIE and an FDE with the instructions ins, ended. */
static const char *one_fde(const uint8_t *ins, size_t len)
{
	f.n = 0;
	fde(&f, cie_zr(&f), 0, ins, len);
	put32(&f, 0);
	return check(&f, NULL, NULL);
}

/* The frame a compiler writes passes, and libdw reads it. */
static void test_usual_frame(void)
{
	static const uint8_t ins[] = {
		DW_CFA_advance_loc + 1, DW_CFA_def_cfa_offset, 16,
		DW_CFA_offset + 6, 2, DW_CFA_advance_loc + 3,
		DW_CFA_def_cfa_register, 6, DW_CFA_remember_state,
		DW_CFA_advance_loc + 4, DW_CFA_def_cfa, 7, 8,
		DW_CFA_restore_state, DW_CFA_GNU_args_size, 16, DW_CFA_nop,
	};
	struct cficheck_seen seen;
	size_t off;
	Elf_Data d;
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	static const unsigned char ident[EI_NIDENT] = {
		ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
	};

	f.n = 0;
	off = fde(&f, cie_zr(&f), 0, ins, sizeof(ins));
	put32(&f, 0);
	hdr_of(&h, &off, 1);
	CHECK(!check(&f, &h, &seen));
	CHECK(seen.cies == 1 && seen.fdes == 1 && seen.depth == 1 &&
	      seen.reg == 16);
	/* libdw reads the same entry there. */
	d = (Elf_Data){ .d_buf = f.b, .d_size = f.n, .d_type = ELF_T_BYTE };
	CHECK(!dwarf_next_cfi(ident, &d, true, off, &next, &e));
	CHECK(!dwarf_cfi_cie_p(&e) && e.fde.CIE_pointer == 0);
}

/* The register that made libdw realloc 2 GB, and the bound. */
static void test_register_bound(void)
{
	uint8_t ins[16];
	struct buf u = { .n = 0 };

	uleb(&u, 264050040);
	ins[0] = DW_CFA_undefined;
	memcpy(ins + 1, u.b, u.n);
	CHECK(one_fde(ins, 1 + u.n));
	CHECK(strstr(one_fde(ins, 1 + u.n), "register"));
	/* 1023 is the last one allowed, in every opcode naming one. */
	ins[0] = DW_CFA_same_value;
	ins[1] = 0xff, ins[2] = 0x07;		/* 1023 */
	CHECK(!one_fde(ins, 3));
	ins[1] = 0x80, ins[2] = 0x08;		/* 1024 */
	CHECK(one_fde(ins, 3));
	ins[0] = DW_CFA_register;
	ins[3] = 1;
	CHECK(one_fde(ins, 4));
	ins[1] = 3, ins[2] = 0x80, ins[3] = 0x08;	/* r3 in r1024 */
	CHECK(one_fde(ins, 4));
	ins[0] = DW_CFA_offset_extended_sf;
	ins[1] = 0x80, ins[2] = 0x08, ins[3] = 0x7f;
	CHECK(one_fde(ins, 4));
	ins[0] = DW_CFA_val_expression;
	ins[3] = 0;				/* an empty block */
	CHECK(one_fde(ins, 4));
	ins[1] = 0x10, ins[2] = 0;		/* r16, empty block */
	CHECK(!one_fde(ins, 3));
}

static void test_nesting_bound(void)
{
	uint8_t ins[40];

	memset(ins, DW_CFA_remember_state, sizeof(ins));
	CHECK(!one_fde(ins, CFICHECK_DEPTH_MAX));
	CHECK(one_fde(ins, CFICHECK_DEPTH_MAX + 1));
	/* Popped in between: never deeper than 16. */
	ins[8] = DW_CFA_restore_state;
	CHECK(!one_fde(ins, CFICHECK_DEPTH_MAX + 1));
	/* More pops than pushes do not buy depth (libdw refuses them). */
	memset(ins, DW_CFA_restore_state, 8);
	memset(ins + 8, DW_CFA_remember_state, 17);
	CHECK(one_fde(ins, 25));
}

static void test_expression_bounds(void)
{
	uint8_t ins[300] = { DW_CFA_def_cfa_expression, 0x80, 0x02 };	/* 256 */
	size_t off[1100];
	const char *why;

	memset(ins + 3, DW_OP_nop, 256);
	CHECK(!one_fde(ins, 3 + 256));
	ins[1] = 0x81;					/* 257 */
	memset(ins + 3, DW_OP_nop, 257);
	CHECK(one_fde(ins, 3 + 257));
	/* A block longer than the program. */
	ins[1] = 0x10, ins[2] = 0x80, ins[3] = 0x01;	/* r16, 128 bytes */
	CHECK(one_fde((uint8_t[]){ DW_CFA_expression, 16, 8, 0, 0 }, 5));
	/* 256 KiB in all: 1024 FDEs of 256 bytes pass, one more does not. */
	ins[0] = DW_CFA_def_cfa_expression, ins[1] = 0x80, ins[2] = 0x02;
	memset(ins + 3, DW_OP_nop, 256);
	f.n = 0;
	size_t c = cie_zr(&f);

	for (unsigned i = 0; i < 1024; i++)
		off[i] = fde(&f, c, i, ins, 3 + 256);
	size_t end = f.n;

	put32(&f, 0);
	CHECK(!check(&f, NULL, NULL));
	f.n = end;
	fde(&f, c, 1024, ins, 3 + 256);
	put32(&f, 0);
	why = check(&f, NULL, NULL);
	CHECK(why && strstr(why, "in all"));
	(void)off;
}

/* Opcodes libdw does not know, and operands cut by the program's end. */
static void test_opcodes(void)
{
	static const uint8_t unknown[] = { 0x17, 0x1c, 0x3f, 0x30 };
	uint8_t ins[8];

	for (size_t i = 0; i < sizeof(unknown); i++) {
		ins[0] = unknown[i];
		CHECK(one_fde(ins, 1));
	}
	CHECK(!one_fde((uint8_t[]){ DW_CFA_advance_loc4, 1, 0, 0, 0 }, 5));
	CHECK(one_fde((uint8_t[]){ DW_CFA_advance_loc4, 1, 0, 0 }, 4));
	CHECK(one_fde((uint8_t[]){ DW_CFA_advance_loc1 }, 1));
	CHECK(one_fde((uint8_t[]){ DW_CFA_offset + 3 }, 1));
	CHECK(one_fde((uint8_t[]){ DW_CFA_def_cfa, 7 }, 2));
	/* A LEB128 longer than 10 bytes. */
	memset(ins, 0x80, sizeof(ins));
	ins[0] = DW_CFA_def_cfa_offset;
	CHECK(one_fde(ins, sizeof(ins)));
	/* set_loc in the CIE's FDE encoding (4 bytes). */
	CHECK(!one_fde((uint8_t[]){ DW_CFA_set_loc, 0, 0, 0, 0 }, 5));
	CHECK(one_fde((uint8_t[]){ DW_CFA_set_loc, 0, 0, 0 }, 4));
}

/* Whether a CIE of augmentation aug, and an FDE using it, are refused. */
static bool cie_refused(const char *aug, const uint8_t *data, size_t len)
{
	static const uint8_t nop = DW_CFA_nop;

	f.n = 0;
	fde(&f, cie(&f, aug, data, len), 0, &nop, 1);
	put32(&f, 0);
	return check(&f, NULL, NULL) != NULL;
}

/* Augmentations whose FDE layout libdw and this check read alike pass;
 * others keep the binary from libdw. */
static void test_augmentations(void)
{
	/* zPLR: personality indirect|pcrel|sdata4 and its 4 bytes, LSDA and
	 * FDE encodings; the FDE then has 4 bytes of LSDA pointer. */
	static const uint8_t plr[] = { 0x9b, 1, 2, 3, 4, 0x1b, 0x1b };
	static const uint8_t leb_personality[] = { 0x01, 0x05, 0x1b, 0x1b };
	static const uint8_t aligned[] = { 0x50 };
	static const uint8_t uleb_fde[] = { 0x01 };
	static const uint8_t nop = DW_CFA_nop;
	struct cficheck_seen seen;
	size_t c, at;

	f.n = 0;
	c = cie(&f, "zPLR", plr, sizeof(plr));
	at = f.n;
	put32(&f, 0);
	put32(&f, (uint32_t)(f.n - c));
	put32(&f, 0);
	put32(&f, 16);
	uleb(&f, 4);
	put32(&f, 0);			/* LSDA */
	put8(&f, DW_CFA_nop);
	close_entry(&f, at);
	put32(&f, 0);
	CHECK(!check(&f, NULL, &seen) && seen.fdes == 1);
	/* "" : no augmentation, 8-byte locations. */
	f.n = 0;
	c = cie(&f, "", NULL, 0);
	at = f.n;
	put32(&f, 0);
	put32(&f, (uint32_t)(f.n - c));
	put32(&f, 0), put32(&f, 0), put32(&f, 16), put32(&f, 0);
	put8(&f, nop);
	close_entry(&f, at);
	put32(&f, 0);
	CHECK(!check(&f, NULL, NULL));
	/* Refused, with an FDE that uses them: g++ 2's "eh", an unknown
	 * letter after z, a LEB128 personality, aligned or LEB128 FDE
	 * locations, a personality past the augmentation data. */
	CHECK(cie_refused("eh", NULL, 0));
	CHECK(cie_refused("zX", NULL, 0));
	CHECK(cie_refused("zPLR", leb_personality, sizeof(leb_personality)));
	CHECK(cie_refused("zR", aligned, 1));
	CHECK(cie_refused("zR", uleb_fde, 1));
	CHECK(cie_refused("zP", plr, 3));
}

/* libdw reads the FDEs the table names and the CIEs FDEs point to where
 * they are said to be: each must be an entry the walk checked. */
static void test_pointers(void)
{
	static const uint8_t ins[] = { DW_CFA_nop };
	size_t c, offs[2];

	f.n = 0;
	c = cie_zr(&f);
	offs[0] = fde(&f, c, 0, ins, 1);
	offs[1] = fde(&f, c, 1, ins, 1);
	put32(&f, 0);
	hdr_of(&h, offs, 2);
	CHECK(!check(&f, &h, NULL));
	offs[1] = c;				/* the CIE */
	hdr_of(&h, offs, 2);
	CHECK(check(&f, &h, NULL));
	offs[1] = offs[0] + 4;			/* inside an FDE */
	hdr_of(&h, offs, 2);
	CHECK(check(&f, &h, NULL));
	/* An FDE whose CIE pointer names the other FDE. */
	f.n = 0;
	c = cie_zr(&f);
	offs[0] = fde(&f, c, 0, ins, 1);
	fde(&f, offs[0], 1, ins, 1);
	put32(&f, 0);
	CHECK(check(&f, NULL, NULL));
}

/* Without a search table, libdw keeps every FDE it scans: at most 4096. */
static void test_scan_bound(void)
{
	static const uint8_t nop = DW_CFA_nop;
	size_t c, off[CFICHECK_SCAN_FDES_MAX + 1], end;
	static struct buf table;

	f.n = 0;
	c = cie_zr(&f);
	for (unsigned i = 0; i < CFICHECK_SCAN_FDES_MAX; i++)
		off[i] = fde(&f, c, i, &nop, 1);
	end = f.n;
	put32(&f, 0);
	CHECK(!check(&f, NULL, NULL));
	f.n = end;
	off[CFICHECK_SCAN_FDES_MAX] = fde(&f, c, CFICHECK_SCAN_FDES_MAX, &nop, 1);
	put32(&f, 0);
	CHECK(check(&f, NULL, NULL));
	/* With a table naming them, libdw keeps only those it looks up. */
	hdr_of(&table, off, CFICHECK_SCAN_FDES_MAX + 1);
	CHECK(!check(&f, &table, NULL));
}

/* An entry libdw cannot read but can step over is stepped over, as libdw
 * steps over it: what follows it is still checked. */
static void test_walk_goes_on(void)
{
	uint8_t bad[] = { DW_CFA_undefined, 0x80, 0x80, 0x80, 0x40 };
	size_t c, at;

	f.n = 0;
	c = cie_zr(&f);
	at = f.n;			/* a CIE of version 2: unreadable */
	put32(&f, 0);
	put32(&f, 0);
	put8(&f, 2);
	put8(&f, 0);
	put8(&f, 1), put8(&f, 0x78), put8(&f, 16);
	close_entry(&f, at);
	fde(&f, c, 0, bad, sizeof(bad));
	put32(&f, 0);
	CHECK(check(&f, NULL, NULL));
}

/* An x86-64 ELF file of code at CODE_VADDR, .eh_frame_hdr at HDR_VADDR
 * and .eh_frame at FRAME_VADDR (the frame and header built in f and h),
 * each at the file offset equal to its address, with a PT_GNU_EH_FRAME
 * for the header, and a PT_NOTE over both (the image reads notes). With
 * sections, their headers name them; without, there are none. Written to
 * a new file; its path in path. */
static bool write_elf(char *path, bool sections)
{
	static uint8_t file[0x4000];
	static const char names[] = "\0.text\0.eh_frame_hdr\0.eh_frame\0"
				    ".shstrtab";
	Elf64_Ehdr *eh = (Elf64_Ehdr *)file;
	Elf64_Phdr *ph = (Elf64_Phdr *)(file + sizeof(*eh));
	Elf64_Shdr *sh = (Elf64_Shdr *)(file + 0x3000);
	int fd;

	if (f.n > 0xf00 || h.n > 0x100)
		return false;
	memset(file, 0, sizeof(file));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phoff = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 3;
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
			      .p_filesz = 0x3000, .p_memsz = 0x3000,
			      .p_align = 0x1000 };
	ph[1] = (Elf64_Phdr){ .p_type = PT_GNU_EH_FRAME, .p_flags = PF_R,
			      .p_offset = HDR_VADDR, .p_vaddr = HDR_VADDR,
			      .p_filesz = h.n, .p_memsz = h.n, .p_align = 4 };
	ph[2] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_flags = PF_R,
			      .p_offset = HDR_VADDR, .p_vaddr = HDR_VADDR,
			      .p_filesz = FRAME_VADDR - HDR_VADDR + f.n,
			      .p_memsz = FRAME_VADDR - HDR_VADDR + f.n,
			      .p_align = 4 };
	memset(file + CODE_VADDR, 0xc3, 0x100);		/* ret */
	memcpy(file + HDR_VADDR, h.b, h.n);
	memcpy(file + FRAME_VADDR, f.b, f.n);
	memcpy(file + 0x2f00, names, sizeof(names));
	if (sections) {
		eh->e_shoff = 0x3000;
		eh->e_shentsize = sizeof(*sh);
		eh->e_shnum = 5;
		eh->e_shstrndx = 4;
		sh[1] = (Elf64_Shdr){ 1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
				      CODE_VADDR, CODE_VADDR, 0x100 };
		sh[2] = (Elf64_Shdr){ 7, SHT_PROGBITS, SHF_ALLOC, HDR_VADDR,
				      HDR_VADDR, h.n };
		sh[3] = (Elf64_Shdr){ 21, SHT_PROGBITS, SHF_ALLOC, FRAME_VADDR,
				      FRAME_VADDR, f.n };
		sh[4] = (Elf64_Shdr){ 31, SHT_STRTAB, 0, 0, 0x2f00,
				      sizeof(names) };
	}
	strcpy(path, "/tmp/test_cficheck.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return false;
	if (write(fd, file, sizeof(file)) != (ssize_t)sizeof(file)) {
		close(fd);
		return false;
	}
	close(fd);
	return true;
}

/* libdw's CFI of the image of the file at path (NULL: none), and why the
 * image refused it. */
static Dwarf_CFI *image_cfi(const char *path, struct elfimage **im,
			    Elf **elf, const char **why)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	*im = NULL;
	*elf = NULL;
	if (fd < 0 || fstat(fd, &st))
		return NULL;
	*im = elfimage__read(fd, st.st_size);
	close(fd);
	if (!*im)
		return NULL;
	*why = elfimage__cfi_refused(*im);
	*elf = elfimage__elf(*im);
	return *elf ? dwarf_getcfi_elf(*elf) : NULL;
}

static void image_done(char *path, struct elfimage *im, Elf *elf,
		       Dwarf_CFI *cfi)
{
	if (cfi)
		dwarf_cfi_end(cfi);
	if (elf)
		elf_end(elf);
	elfimage__put(im);
	unlink(path);
}

/* Through the agent's image of a file: CFI that passes is libdw's to
 * read; CFI that does not is hidden, the sections' and the segment's. */
static void test_image(void)
{
	static const uint8_t good[] = { DW_CFA_advance_loc + 1,
					DW_CFA_def_cfa_offset, 16 };
	static const uint8_t bad[] = { DW_CFA_undefined, 0xf8, 0xaa, 0xf4,
				       0x7d };		/* r264050040 */
	char path[64];
	struct elfimage *im;
	Dwarf_Frame *frame = NULL;
	Dwarf_CFI *cfi;
	const char *why = NULL;
	size_t off;
	Elf *elf;

	elf_version(EV_CURRENT);
	f.n = 0;
	off = fde(&f, cie_zr(&f), 0, good, sizeof(good));
	put32(&f, 0);
	hdr_of(&h, &off, 1);
	CHECK(write_elf(path, true));
	cfi = image_cfi(path, &im, &elf, &why);
	CHECK(im && !why && cfi);
	CHECK(!dwarf_cfi_addrframe(cfi, CODE_VADDR + 2, &frame) && frame);
	free(frame);
	image_done(path, im, elf, cfi);

	f.n = 0;
	off = fde(&f, cie_zr(&f), 0, bad, sizeof(bad));
	put32(&f, 0);
	hdr_of(&h, &off, 1);
	CHECK(write_elf(path, true));
	cfi = image_cfi(path, &im, &elf, &why);
	CHECK(im && why && strstr(why, "register") && !cfi);
	image_done(path, im, elf, cfi);
	/* No sections: libdw would take PT_GNU_EH_FRAME, which names bytes
	 * the image read as a note. The image has no such segment. */
	CHECK(write_elf(path, false));
	cfi = image_cfi(path, &im, &elf, &why);
	CHECK(im && !cfi);
	image_done(path, im, elf, cfi);
}

/* The fuzz finding, as the agent reads it: an image without CFI. */
static void test_finding_image(void)
{
	const char *path = "tests/fuzz/corpus/cfi/libdw-regno-oom";
	struct elfimage *im;
	struct stat st;
	Elf *elf;
	int fd = open(path, O_RDONLY);

	CHECK(fd >= 0 && !fstat(fd, &st));
	im = elfimage__read(fd, st.st_size);
	close(fd);
	CHECK(im);
	CHECK(elfimage__cfi_refused(im) &&
	      strstr(elfimage__cfi_refused(im), "register"));
	elf = elfimage__elf(im);
	CHECK(elf);
	CHECK(!dwarf_getcfi_elf(elf));
	elf_end(elf);
	elfimage__put(im);
}

/* The section named name of elf: bytes, size, address. */
static bool section(Elf *elf, const char *name, Elf_Data **d,
		    uint64_t *vaddr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name)) {
			*d = elf_rawdata(scn, NULL);
			*vaddr = sh.sh_addr;
			return *d && (*d)->d_buf;
		}
	}
	return false;
}

/* Every binary in the system's directories passes: the bounds do not cost
 * a real binary its CFI. Prints the largest values met. */
static void test_system_binaries(void)
{
	static const char *const dirs[] = {
		"/usr/bin", "/usr/sbin", "/usr/lib/x86_64-linux-gnu",
		"/usr/lib/gcc/x86_64-linux-gnu/12", "/usr/lib/llvm-14/bin",
	};
	struct cficheck_seen max = { 0 }, seen;
	size_t files = 0, failed = 0;
	char path[PATH_MAX];

	elf_version(EV_CURRENT);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		DIR *dir = opendir(dirs[i]);
		struct dirent *de;

		while (dir && (de = readdir(dir))) {
			Elf_Data *fd_, *hd = NULL;
			struct ehframehdr t;
			uint64_t fv, hv = 0;
			struct stat st;
			const char *why;
			Elf *elf;
			int fd;

			snprintf(path, sizeof(path), "%s/%s", dirs[i],
				 de->d_name);
			if (lstat(path, &st) || !S_ISREG(st.st_mode))
				continue;
			fd = open(path, O_RDONLY);
			if (fd < 0)
				continue;
			elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
			if (elf && elf_kind(elf) == ELF_K_ELF &&
			    gelf_getclass(elf) == ELFCLASS64 &&
			    section(elf, ".eh_frame", &fd_, &fv)) {
				/* A table in another encoding is not given
				 * to libdw: the walk alone decides. */
				if (!section(elf, ".eh_frame_hdr", &hd, &hv) ||
				    ehframehdr__read(hd->d_buf, hd->d_size, hv,
						     &t))
					hd = NULL;
				why = cficheck__eh_frame(fd_->d_buf,
							 fd_->d_size, fv,
							 hd ? &t : NULL, &seen);
				files++;
				if (why) {
					fprintf(stderr, "  %s: %s\n", path, why);
					failed++;
				}
				if (seen.reg > max.reg)
					max.reg = seen.reg;
				if (seen.depth > max.depth)
					max.depth = seen.depth;
				if (seen.expr > max.expr)
					max.expr = seen.expr;
				if (seen.exprs > max.exprs)
					max.exprs = seen.exprs;
				if (seen.fdes > max.fdes)
					max.fdes = seen.fdes;
			}
			if (elf)
				elf_end(elf);
			close(fd);
		}
		if (dir)
			closedir(dir);
	}
	fprintf(stderr, "  %zu binaries, %zu refused; largest: register %lu, "
		"nesting %u, expression %lu bytes, %lu in one binary, "
		"%zu FDEs\n", files, failed, (unsigned long)max.reg,
		max.depth, (unsigned long)max.expr, (unsigned long)max.exprs,
		max.fdes);
	CHECK(files > 100);
	CHECK(failed == 0);
}

int main(void)
{
	RUN(test_usual_frame);
	RUN(test_register_bound);
	RUN(test_nesting_bound);
	RUN(test_expression_bounds);
	RUN(test_opcodes);
	RUN(test_augmentations);
	RUN(test_pointers);
	RUN(test_scan_bound);
	RUN(test_walk_goes_on);
	RUN(test_image);
	RUN(test_finding_image);
	RUN(test_system_binaries);
	CHECK_EXIT();
}
