/* Function symbols of one ELF file, read with libelf. */
#ifndef TAGPROF_ELFSYM_H
#define TAGPROF_ELFSYM_H

#include <stdint.h>
#include <stddef.h>

struct elfsym;

/* Loads STT_FUNC/STT_GNU_IFUNC symbols from .symtab and .dynsym (merged,
 * deduplicated by address, .symtab name preferred), the GNU build ID and
 * the PT_LOAD program headers. NULL + errno on failure (ENOENT, ENOEXEC
 * for a file that is not ELF, EINVAL for a corrupt one). */
struct elfsym *elfsym__open(const char *path);
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

size_t elfsym__count(const struct elfsym *e);          /* symbols loaded */

#endif
