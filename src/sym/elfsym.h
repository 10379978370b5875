/* Function symbols of one ELF file, read with libelf. */
#ifndef TAGPROF_ELFSYM_H
#define TAGPROF_ELFSYM_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

struct elfsym;

/* Loads STT_FUNC/STT_GNU_IFUNC symbols from .symtab and .dynsym (merged,
 * deduplicated by address, .symtab name preferred), the GNU build ID and
 * the PT_LOAD program headers. NULL + errno on failure (ENOENT, ENOEXEC
 * for a file that is not ELF, EINVAL for a corrupt one). */
struct elfsym *elfsym__open(const char *path);
/* The same from a descriptor of a regular file (targetfile.h), read with
 * pread; path opens through targetfile__open (no links, no FIFOs). A
 * symbol table whose reading would cost more than max_bytes (0: no bound)
 * is left out (elfsym__over_budget). */
struct elfsym *elfsym__open_fd(int fd, uint64_t max_bytes);
bool elfsym__over_budget(const struct elfsym *e);
void elfsym__free(struct elfsym *e);                    /* accepts NULL */

/* Lower-case hex GNU build ID, or NULL when the file has none. */
const char *elfsym__build_id(const struct elfsym *e);

/* Translates a file offset (mapping offset + (addr - mapping start)) into
 * the ELF virtual address through the PT_LOAD segment that contains it.
 * Returns 0, or -ENOENT when no segment covers the offset. */
int elfsym__offset_to_vaddr(const struct elfsym *e, uint64_t file_offset,
			    uint64_t *vaddr);

/* The function containing vaddr: the symbol with the greatest start <=
 * vaddr, rejected when it has a non-zero size that vaddr is past. Returns
 * the name (owned by e) and sets *start, or NULL when none matches. */
const char *elfsym__lookup(const struct elfsym *e, uint64_t vaddr,
			   uint64_t *start);

/* Whether files opened from now on also load their variables (sized
 * STT_OBJECT symbols), for naming data addresses: memory-access events
 * only, since most profiles never ask. Off by default. */
void elfsym__set_data_objects(bool on);

/* The variable holding vaddr, as elfsym__lookup for functions: its name,
 * *start and *size; NULL when none does (or they were not loaded). */
const char *elfsym__lookup_data(const struct elfsym *e, uint64_t vaddr,
				uint64_t *start, uint64_t *size);

size_t elfsym__count(const struct elfsym *e);          /* functions loaded */
uint64_t elfsym__bytes(const struct elfsym *e);        /* heap they hold */

/* Whether the file has a .symtab, and DWARF (.debug_info), with bytes in
 * the file (a stripped binary has neither; a debug file made by objcopy
 * --only-keep-debug has both). */
bool elfsym__has_symtab(const struct elfsym *e);
bool elfsym__has_dwarf(const struct elfsym *e);

/* Whether the section headers or a section's bytes lie past the end of the
 * file: a truncated copy. */
bool elfsym__damaged(const struct elfsym *e);

/* The .gnu_debuglink file name (a plain name, never containing '/') and
 * its CRC-32, or NULL when the file has none. */
const char *elfsym__debuglink(const struct elfsym *e, uint32_t *crc);
/* Whether the file's .gnu_debuglink named a path (a '/', "." or ".."),
 * and was ignored for it: elfsym__debuglink gives NULL then. */
bool elfsym__debuglink_path(const struct elfsym *e);

/* The GNU build ID of the ELF file open at fd, read from its notes without
 * loading symbols, into out (lower-case hex). 0, -ENOENT when it has none,
 * or -errno (-ENOEXEC: not ELF). */
int elfsym__peek_build_id(int fd, char *out, size_t outlen);

/* The device (targetfile__dev) and inode of the file e was read from. */
void elfsym__file_id(const struct elfsym *e, uint64_t *dev, uint64_t *ino);

/* The GNU build ID of an ELF file as process pid mapped it, base the start
 * of the mapping of file offset 0. Reads the ELF and program headers and
 * the PT_NOTE segments from its memory (procfs__read_mem; 64-bit ELF
 * only). 0, or -errno (-EIO: unreadable, -ENOENT: no build ID, -ENOTSUP:
 * not a 64-bit ELF). */
int elfsym__mem_build_id(int pid, uint64_t base, char *out, size_t outlen);

#endif
