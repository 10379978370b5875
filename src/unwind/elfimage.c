// SPDX-License-Identifier: BSD-2-Clause
/* Sparse ELF images for unwinding (elfimage.h). Every offset and size is
 * the file's, so each is checked against the file size before it is
 * read. */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "unwind/cficheck.h"
#include "unwind/ehframehdr.h"
#include "unwind/elfimage.h"

#define PHNUM_MAX	4096
#define SHNUM_MAX	65535
#define SHSTRTAB_MAX	(1u << 20)
#define NOTE_MAX	(64u << 10)	/* one note section or segment */
#define FILE_MAX	(1ull << 36)	/* address space, not memory */

struct elfimage {
	unsigned int refs;
	uint8_t *buf;		/* anonymous mapping of len bytes */
	size_t len;		/* the file's size */
	size_t loaded;		/* bytes read into it */
	const char *cfi_refused;	/* why its CFI was hidden (cficheck.h) */
};

/* Whether [off, off + len) lies in the file. */
static bool in_file(const struct elfimage *im, uint64_t off, uint64_t len)
{
	return off <= im->len && len <= im->len - off;
}

/* Reads [off, off + len) of the file to the same place in the image. */
static int load(struct elfimage *im, int fd, uint64_t off, uint64_t len)
{
	uint64_t done = 0;
	ssize_t n;

	if (!in_file(im, off, len))
		return -ENOEXEC;
	while (done < len) {
		n = pread(fd, im->buf + off + done, len - done, off + done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;	/* cut short while we read it */
		done += n;
	}
	im->loaded += len;
	return 0;
}

static bool is_cfi(const char *name)
{
	return !strcmp(name, ".eh_frame") || !strcmp(name, ".eh_frame_hdr");
}

/* The CFI sections that were read, by kind. */
struct cfi_sections {
	Elf64_Shdr *frame, *hdr;
	unsigned int nframes, nhdrs;
};

static void hide(Elf64_Shdr *sh)
{
	if (sh)
		sh->sh_type = SHT_NOBITS;
}

/* Leaves libdw only CFI it may read (cficheck.h): one .eh_frame, checked,
 * with at most one .eh_frame_hdr whose table ehframehdr.h reads (else
 * libdw searches the .eh_frame itself). Which of two same-named sections
 * libdw would take is not worth knowing: a binary with two has none. */
static void check_cfi(struct elfimage *im, struct cfi_sections *s)
{
	struct ehframehdr t;
	const struct ehframehdr *hdr = NULL;

	if (s->nframes != 1 || s->nhdrs > 1) {
		if (s->nframes > 1 || s->nhdrs > 1)
			im->cfi_refused = "two .eh_frame or .eh_frame_hdr";
		hide(s->frame);
		hide(s->hdr);
		return;
	}
	if (s->hdr && ehframehdr__read(im->buf + s->hdr->sh_offset,
				       s->hdr->sh_size, s->hdr->sh_addr, &t))
		hide(s->hdr);
	else if (s->hdr)
		hdr = &t;
	im->cfi_refused = cficheck__eh_frame(im->buf + s->frame->sh_offset,
					     s->frame->sh_size,
					     s->frame->sh_addr, hdr, NULL);
	if (im->cfi_refused) {
		hide(s->frame);
		hide(s->hdr);
	}
}

/* Section names, then the sections unwinding reads; the others become
 * NOBITS in the image. */
static int load_sections(struct elfimage *im, int fd, const Elf64_Ehdr *eh)
{
	Elf64_Shdr *sh;
	const Elf64_Shdr *names;
	struct cfi_sections cs = { 0 };
	uint64_t cfi = 0;
	size_t n = eh->e_shnum;
	int err;

	if (eh->e_shentsize != sizeof(Elf64_Shdr) || n > SHNUM_MAX ||
	    eh->e_shstrndx == SHN_UNDEF || eh->e_shstrndx >= n ||
	    eh->e_shoff % _Alignof(Elf64_Shdr))
		return 0;	/* no usable section headers: no CFI */
	err = load(im, fd, eh->e_shoff, n * sizeof(*sh));
	if (err)
		return err;
	/* Only now that e_shoff is known to lie in the file. */
	sh = (Elf64_Shdr *)(im->buf + eh->e_shoff);
	names = &sh[eh->e_shstrndx];
	if (names->sh_type != SHT_STRTAB || names->sh_size > SHSTRTAB_MAX ||
	    names->sh_size == 0)
		return -ENOEXEC;
	err = load(im, fd, names->sh_offset, names->sh_size);
	if (err)
		return err;
	/* The last byte read must end the names, so none runs past them. */
	if (im->buf[names->sh_offset + names->sh_size - 1] != '\0')
		return -ENOEXEC;
	for (size_t i = 1; i < n; i++) {
		const char *name = sh[i].sh_name < names->sh_size ?
			(const char *)im->buf + names->sh_offset + sh[i].sh_name : "";
		bool want;

		if (i == eh->e_shstrndx || sh[i].sh_type == SHT_NOBITS)
			continue;
		want = (sh[i].sh_type == SHT_PROGBITS && is_cfi(name)) ||
		       (sh[i].sh_type == SHT_NOTE && sh[i].sh_size <= NOTE_MAX);
		if (want && sh[i].sh_type == SHT_PROGBITS) {
			cfi += sh[i].sh_size;
			if (cfi > ELFIMAGE_CFI_MAX)
				return -EFBIG;
		}
		if (want) {
			err = load(im, fd, sh[i].sh_offset, sh[i].sh_size);
			if (err)
				return err;
		} else {
			sh[i].sh_type = SHT_NOBITS;
		}
		if (want && sh[i].sh_type == SHT_PROGBITS &&
		    !strcmp(name, ".eh_frame")) {
			cs.frame = &sh[i];
			cs.nframes++;
		} else if (want && sh[i].sh_type == SHT_PROGBITS) {
			cs.hdr = &sh[i];
			cs.nhdrs++;
		}
	}
	check_cfi(im, &cs);
	return 0;
}

static int load_image(struct elfimage *im, int fd)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)im->buf;
	Elf64_Phdr *ph;
	int err;

	err = load(im, fd, 0, sizeof(*eh));
	if (err)
		return err;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_machine != EM_X86_64 ||
	    eh->e_phentsize != sizeof(*ph) || eh->e_phnum == 0 ||
	    eh->e_phnum > PHNUM_MAX || eh->e_phoff % _Alignof(Elf64_Phdr))
		return -ENOEXEC;	/* headers read in place: aligned */
	err = load(im, fd, eh->e_phoff, eh->e_phnum * sizeof(*ph));
	if (err)
		return err;
	ph = (Elf64_Phdr *)(im->buf + eh->e_phoff);
	for (size_t i = 0; i < eh->e_phnum; i++) {
		/* libdw finds CFI through PT_GNU_EH_FRAME when no .eh_frame
		 * section has bytes: hidden, or none, where the segment could
		 * name any bytes of the image as CFI. */
		if (ph[i].p_type == PT_GNU_EH_FRAME)
			ph[i].p_type = PT_NULL;
		if (ph[i].p_type != PT_NOTE || ph[i].p_filesz > NOTE_MAX)
			continue;
		err = load(im, fd, ph[i].p_offset, ph[i].p_filesz);
		if (err)
			return err;
	}
	if (eh->e_shoff && eh->e_shnum)
		return load_sections(im, fd, eh);
	return 0;
}

struct elfimage *elfimage__read(int fd, uint64_t size)
{
	struct elfimage *im;
	int err;

	if (size < sizeof(Elf64_Ehdr) || size > FILE_MAX) {
		errno = ENOEXEC;
		return NULL;
	}
	im = calloc(1, sizeof(*im));
	if (!im)
		return NULL;
	im->refs = 1;
	im->len = size;
	/* Untouched pages of an anonymous mapping cost no memory. */
	im->buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (im->buf == MAP_FAILED) {
		free(im);
		errno = ENOMEM;
		return NULL;
	}
	err = load_image(im, fd);
	if (err) {
		elfimage__put(im);
		errno = -err;
		return NULL;
	}
	return im;
}

Elf *elfimage__elf(struct elfimage *im)
{
	return elf_memory((char *)im->buf, im->len);
}

const char *elfimage__cfi_refused(const struct elfimage *im)
{
	return im->cfi_refused;
}

size_t elfimage__bytes(const struct elfimage *im)
{
	return im ? im->loaded : 0;
}

struct elfimage *elfimage__get(struct elfimage *im)
{
	if (im)
		im->refs++;
	return im;
}

void elfimage__put(struct elfimage *im)
{
	if (!im || --im->refs)
		return;
	munmap(im->buf, im->len);
	free(im);
}
