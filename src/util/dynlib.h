/* Libraries loaded with dlopen when a feature first needs them, so that a
 * process which never uses the feature does not map them: libcurl with
 * its TLS stack (~5 MB resident) only when pushing, libpfm4 and its event
 * tables (~2 MB) only for event names tagprof does not know itself. */
#ifndef TAGPROF_DYNLIB_H
#define TAGPROF_DYNLIB_H

#include <stddef.h>

/* One symbol to resolve: fn points to a function pointer variable. */
struct dynlib_sym {
	const char *name;
	void *fn;
};

/* Opens soname and resolves every symbol into its variable. 0, or -1 with
 * the reason in err and nothing left open. The library stays loaded for
 * the life of the process. */
int dynlib__open(const char *soname, const struct dynlib_sym *syms,
		 size_t n, char *err, size_t errlen);

#endif
