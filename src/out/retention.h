/* The agent's output directory: time-sorted file names, stale temporary
 * files, and deleting the oldest profiles beyond the retention limits. */
#ifndef TAGPROF_RETENTION_H
#define TAGPROF_RETENTION_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Creates dir (and parents) with mode 0750 when missing; refuses a dir
 * that is a symlink (-ELOOP) or not a directory (-ENOTDIR), and one owned
 * by another user than root and our effective uid or writable by group or
 * others (-EPERM). 0 or -errno. */
int retention__ensure_dir(const char *dir);

/* The file name for a window: "<start, UTC, %Y%m%dT%H%M%SZ>_<service>.pb.gz"
 * with the service reduced to [A-Za-z0-9._-] (others become '_', at most
 * 64 chars, never empty or starting with '.'), so names sort by time and
 * cannot escape dir. Writes dir/name into path. 0 or -ENAMETOOLONG. */
int retention__file_name(const char *dir, time_t start, const char *service,
			 char *path, size_t len);

/* Removes temporary files a crash left behind: regular files owned by our
 * effective uid named as atomicfile__write names them for a profile
 * (".<name>.pb.gz.XXXXXX"). Returns how many were removed, or -errno. */
int retention__clean_temp(const char *dir);

/* Deletes the oldest profiles (*.pb.gz regular files owned by our
 * effective uid whose names parse as retention__file_name made them,
 * oldest name first; other files neither count nor go) until at most
 * max_files remain and they total at most max_bytes (0 = no limit for that
 * one). Never follows symlinks, never touches other files. Returns the
 * number deleted, or -errno. */
int retention__enforce(const char *dir, uint64_t max_files,
		       uint64_t max_bytes);

#endif
