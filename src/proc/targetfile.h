/* Opening files that a profiled process names.
 *
 * The agent runs as root, and the paths it reads binaries, debug files and
 * perf maps from come from processes it does not trust: a path in
 * /proc/PID/maps, a .gnu_debuglink name, a directory the process owns. Its
 * owner can put anything there at any time: a FIFO (an open for reading
 * blocks until a writer comes), a device (opening one can have side
 * effects), a symbolic link to a file only root may read, or a copy that it
 * truncates while the agent reads it. Every such open goes through
 * targetfile__open, which:
 *
 *   - resolves the path without following any symbolic link (openat2
 *     RESOLVE_NO_SYMLINKS), and a /proc/PID/root/... path inside that root
 *     (RESOLVE_IN_ROOT), so a link cannot lead out of it;
 *   - opens with O_PATH first, which reads nothing and opens no device or
 *     FIFO, then checks with fstat that it is a regular file and, when the
 *     caller knows them, the device and inode of the mapping it stands for;
 *   - only then opens it for reading, through /proc/self/fd, with
 *     O_NONBLOCK and O_NOCTTY.
 *
 * A /proc/PID/map_files/START-END path names the mapped file itself, even
 * when deleted or replaced; the kernel resolves it (CAP_SYS_ADMIN or
 * CAP_CHECKPOINT_RESTORE), so it is the one path whose magic link is
 * followed. Such paths are only ever made by the agent. Callers read the descriptor with pread, never mmap: a file the
 * target truncates then gives short reads, not SIGBUS.
 *
 * Refusals are counted in targetfile__stats, which the profile's comments
 * show. */
#ifndef TAGPROF_TARGETFILE_H
#define TAGPROF_TARGETFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "util/counter.h"

/* What the opened file must be. */
struct targetfile_want {
	uint64_t dev, ino;	/* as /proc/PID/maps shows them (major << 32 |
				 * minor); ino 0: any regular file */
	bool follow;		/* symbolic links owned by root allowed: only
				 * for directories the administrator chose (the
				 * host's debug directories), never for a
				 * target's path */
};

/* Links followed at most in one path (`follow`), as the kernel's 40 is
 * more than any debug directory needs. */
#define TARGETFILE_LINKS_MAX	16

/* X(field, text) (util/counter.h). */
#define TARGETFILE_COUNTERS(X)						\
	X(opened, "opened")		/* files opened for reading */	\
	/* ... of them through /proc/PID/map_files */			\
	X(by_map_files, "through /proc/PID/map_files")			\
	/* refused: a symbolic link on the way */			\
	X(symlink, "symbolic links")					\
	/* ... of them: in a debug directory, a link not root's */	\
	X(untrusted_link, "in debug directories, not root's")	\
	/* refused: FIFO, device, socket, directory */			\
	X(not_regular, "not regular files (FIFO, device, socket)")	\
	/* refused: not the mapped file (dev, inode) */			\
	X(replaced, "not the mapped file")				\
	/* map_files refused by the kernel (no CAP_CHECKPOINT_RESTORE):	\
	 * paths used */						\
	X(map_files_denied, "times not permitted")

struct targetfile_stats {
	TARGETFILE_COUNTERS(COUNTER_FIELD)
};

/* Opens path for reading as described above. Returns the descriptor, or
 * -errno: -ELOOP a symbolic link, -ENOEXEC not a regular file, -ESTALE not
 * the file wanted, -ENOENT nothing there. want may be NULL (any regular
 * file, no links). *st, when given, gets the file's status. */
int targetfile__open(const char *path, const struct targetfile_want *want,
		     struct stat *st);

/* The mapped file of a process's mapping [start, end): through
 * /proc/PID/map_files when the kernel allows it, else the path as the
 * process sees it (/proc/PID/root/path), else the host's path; either path
 * only if it is still the mapped file (dev, ino). path is as maps shows it
 * (a " (deleted)" at its end is dropped). The path that worked goes to used (if not NULL),
 * for reopening later. Returns a descriptor or -errno. */
int targetfile__open_mapped(uint32_t pid, uint64_t start, uint64_t end,
			    const char *path, uint64_t dev, uint64_t ino,
			    char *used, size_t usedlen);

/* The status of the mapped file of a process's mapping [start, end),
 * without opening it: stat(2) of /proc/PID/map_files/START-END, the
 * kernel's own link to the file. 0 when it is a regular file of the device
 * and inode the maps show; else -errno: -EPERM without the capability (as
 * targetfile__open_mapped, then, every time), -ESTALE another file,
 * -ENOEXEC not a regular file, -ENOENT the mapping or process is gone. For
 * what can be known of a file from its identity and change times alone. */
int targetfile__stat_mapped(uint32_t pid, uint64_t start, uint64_t end,
			    uint64_t dev, uint64_t ino, struct stat *st);

/* A device number as /proc/PID/maps shows it. */
uint64_t targetfile__dev(dev_t dev);

const struct targetfile_stats *targetfile__stats(void);

#endif
