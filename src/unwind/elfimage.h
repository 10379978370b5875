/* A sparse in-memory copy of an ELF file, for unwinding.
 *
 * CFI unwinding needs a binary's headers and its .eh_frame, not the file:
 * mapping the file would let its owner kill the agent with SIGBUS by
 * truncating it, and reading all of it costs its size in heap. An image is
 * an anonymous mapping as large as the file in which only the ELF header,
 * program and section headers, section names, notes, .eh_frame and
 * .eh_frame_hdr are read (pread) at their offsets; the rest stays unread
 * zero pages that cost nothing. Every other section is marked SHT_NOBITS in
 * the image's own section headers, so libelf gives no bytes for it; so are
 * .eh_frame and .eh_frame_hdr if libdw may not read them (cficheck.h).
 * PT_GNU_EH_FRAME is made PT_NULL, so libdw finds CFI only through the
 * sections. libelf reads the image with elf_memory: one image serves the
 * leaf checks and every process's libdwfl module of that file, and holds
 * no descriptor.
 *
 * Only 64-bit little-endian x86-64 files are read. */
#ifndef TAGPROF_ELFIMAGE_H
#define TAGPROF_ELFIMAGE_H

#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

#define ELFIMAGE_CFI_MAX	(16u << 20)	/* .eh_frame + header, bytes */

struct elfimage;

/* Reads the image of the regular file open at fd (size bytes, from
 * fstat). NULL with errno: ENOEXEC not an x86-64 ELF, EFBIG its CFI is
 * over ELFIMAGE_CFI_MAX, EIO read short (truncated under us). */
struct elfimage *elfimage__read(int fd, uint64_t size);

/* A new libelf descriptor over the image; elf_end it before the image's
 * last reference goes. */
Elf *elfimage__elf(struct elfimage *im);

/* Why the file's CFI was hidden from libdw (cficheck.h), or NULL: it has
 * none, or libdw may read it. */
const char *elfimage__cfi_refused(const struct elfimage *im);

/* Bytes of heap the image holds (what was read). */
size_t elfimage__bytes(const struct elfimage *im);

struct elfimage *elfimage__get(struct elfimage *im);	/* one more ref */
void elfimage__put(struct elfimage *im);		/* accepts NULL */

#endif
