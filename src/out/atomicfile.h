/* Output files: written whole or not at all. */
#ifndef TAGPROF_ATOMICFILE_H
#define TAGPROF_ATOMICFILE_H

#include <stddef.h>
#include <sys/types.h>

/* Writes data to a new temporary file beside path (O_EXCL|O_NOFOLLOW,
 * given mode), fsyncs it and renames it over path. A symlink at path is
 * replaced, never followed. On any failure the temporary file is removed
 * and path is untouched. Returns 0 or -errno. */
int atomicfile__write(const char *path, const void *data, size_t len,
		       mode_t mode);

/* Checks, before a capture starts, that a file can later be created in
 * path's directory, so a bad -o fails fast. Returns 0 or -errno. */
int atomicfile__check_writable(const char *path);

#endif
