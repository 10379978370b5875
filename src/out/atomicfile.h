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

struct atomicfile_item {
	const char *name;	/* in the directory: no '/' */
	const void *data;
	size_t len;
	int err;		/* out: 0, -errno, or -EAGAIN when an earlier
				 * item failed and this one was not written */
};

/* atomicfile__write for each item, into dir, in order, with fewer waits
 * for the disk (the files are synced together, the directory once). The
 * first failure stops it: that item gets the error, the later ones
 * -EAGAIN, and none of them is left behind, temporary or not. Returns how
 * many were written. */
size_t atomicfile__write_in(const char *dir, struct atomicfile_item *items,
			    size_t n, mode_t mode);

/* Checks, before a capture starts, that a file can later be created in
 * path's directory, so a bad -o fails fast. Returns 0 or -errno. */
int atomicfile__check_writable(const char *path);

#endif
