// SPDX-License-Identifier: GPL-2.0
/* Linked into every GCC-built program and library of a sanitized build
 * (make SANITIZE=..., never otherwise). GCC links UBSan as its own
 * runtime, libubsan.so, beside libasan.so, each with its own copy of the
 * report file: with ASan present libubsan leaves its flags to ASan, so
 * UBSAN_OPTIONS' log_path is never read and UBSan's reports go to stderr,
 * where tests/run.sh cannot see them (the tests keep a process's stderr to
 * themselves). This sets libubsan's own report path from
 * TAGPROF_UBSAN_LOG, as log_path would: reports go to that path + ".PID". */
#include <dlfcn.h>
#include <stdlib.h>

__attribute__((constructor)) static void ubsan_log_path(void)
{
	const char *path = getenv("TAGPROF_UBSAN_LOG");
	void (*set_path)(const char *);
	void *h;

	if (!path || !*path)
		return;
	h = dlopen("libubsan.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return;
	*(void **)&set_path = dlsym(h, "__sanitizer_set_report_path");
	if (set_path)
		set_path(path);
	dlclose(h);
}
