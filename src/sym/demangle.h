/* C++ and Rust symbol names made readable, with libiberty's demanglers
 * (the ones binutils and GDB use). */
#ifndef TAGPROF_DEMANGLE_H
#define TAGPROF_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* Longest demangled name kept; longer ones are cut and end in "...". */
#define DEMANGLE_MAX 4096

/* Demangles raw into out (outlen bytes, NUL-terminated): Rust (legacy
 * _ZN...17h<hash>E and v0 _R...) and C++ (Itanium _Z..., clone suffixes
 * such as .cold kept as "[clone .cold]"). Returns true when raw was a
 * mangled name and out holds its demangled form; false otherwise (a C
 * name, or a name the demanglers reject): out is then not a result. */
bool demangle__name(const char *raw, char *out, size_t outlen);

#endif
