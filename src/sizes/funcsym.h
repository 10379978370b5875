/* Where tagprof sizes puts a probe: [BINARY:]SYMBOL to an open binary and
 * the file offset of the function's entry, with a message that says why
 * not (no such function, a stripped binary, a function inlined at every
 * call site, only compiler clones of it). */
#ifndef TAGPROF_FUNCSYM_H
#define TAGPROF_FUNCSYM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct funcsym {
	int fd;			/* the binary, open for reading */
	char path[4096];	/* the path the probe is attached by:
				 * /proc/self/fd/N, so it is this file */
	char shown[4096];	/* the binary's name, for messages */
	uint64_t offset;	/* the entry's file offset */
	uint64_t size;		/* the symbol's size */
};

/* Resolves spec ("SYMBOL" or "BINARY:SYMBOL"). The binary is BINARY (a
 * path, or with pid > 0 also a library's name as /proc/PID/maps shows
 * it: "libc" finds libc.so.6), else pid's executable, else exe (the
 * command to run, a path). Sets *sym (name into symname) and returns 0, or
 * -errno with why in err. */
int funcsym__resolve(const char *spec, pid_t pid, const char *exe,
		     struct funcsym *out, char *symname, size_t symlen,
		     char *err, size_t errlen);
void funcsym__close(struct funcsym *f);

#endif
