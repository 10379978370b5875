/* Kernel text symbols from /proc/kallsyms. */
#ifndef TAGPROF_KALLSYMS_H
#define TAGPROF_KALLSYMS_H

#include <stdint.h>
#include <stddef.h>

struct kallsyms;

/* Parses a kallsyms-format file (path NULL = /proc/kallsyms), keeping text
 * symbols (types t, T, w, W) with non-zero addresses, sorted. NULL + errno
 * on failure; EPERM when every address reads as zero (kptr_restrict). */
struct kallsyms *kallsyms__load(const char *path);
void kallsyms__free(struct kallsyms *k);                /* accepts NULL */

/* Symbol with the greatest address <= addr; NULL when addr is below the
 * first symbol or past the last one by more than 1 MiB. *module is the
 * module name ("" for vmlinux). Either out pointer may be NULL. */
const char *kallsyms__lookup(const struct kallsyms *k, uint64_t addr,
			     uint64_t *start, const char **module);

size_t kallsyms__count(const struct kallsyms *k);

#endif
