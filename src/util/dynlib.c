// SPDX-License-Identifier: BSD-2-Clause
/* dlopen with every symbol checked up front, so a library older than the
 * one built against fails at load with its name, never at a call. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "util/dynlib.h"

int dynlib__open(const char *soname, const struct dynlib_sym *syms,
		 size_t n, char *err, size_t errlen)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	void *p;

	if (!h) {
		snprintf(err, errlen, "cannot load %s: %s", soname, dlerror());
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		p = dlsym(h, syms[i].name);
		if (!p) {
			snprintf(err, errlen, "%s has no %s", soname,
				 syms[i].name);
			dlclose(h);
			return -1;
		}
		/* POSIX: a dlsym result converts to a function pointer. */
		memcpy(syms[i].fn, &p, sizeof(p));
	}
	return 0;
}
