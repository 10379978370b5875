/* Which file is trusted for a mapping, and its symbols.
 *
 * A path in /proc/PID/maps names what the process mapped once; what is at
 * that path now may be another build (the package was upgraded), or
 * something the process's owner put there. The file opened, through
 * /proc/PID/root, else the host's path when the process is gone
 * (targetfile.h), is trusted only when its GNU build ID equals the one the
 * process has in memory (read from the mapped ELF headers), or, when that
 * cannot be read, when it is the very file mapped (not replaced; the same
 * device and inode for the host's path). Its symbols come from the symbol
 * cache (symfile.h), shared by build ID. */
#ifndef TAGPROF_SYMTRUST_H
#define TAGPROF_SYMTRUST_H

struct proc;
struct proc_map;
struct proctable_stats;
struct symfile;

/* The symbol file of the binary m holds, loaded on first use into its
 * struct binary (sf, syms, load_err). NULL if unreadable or not trusted;
 * counted in st (elf_failed, elf_corrupt, build_id_mismatch). */
struct symfile *symtrust__map_symfile(struct proctable_stats *st,
				      const struct proc *p,
				      struct proc_map *m);

#endif
