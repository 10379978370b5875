/* Opening a file root trusts by name: the agent's config file and the push
 * auth file. */
#ifndef TAGPROF_TRUSTFILE_H
#define TAGPROF_TRUSTFILE_H

#include <stddef.h>
#include <sys/stat.h>

/* Opens path for reading (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
 * if it is a regular file owned by root or our effective uid that group
 * and others cannot write. The last component may be a symlink only if
 * root or our effective uid owns the link, and only one is followed (a
 * Kubernetes ConfigMap or Secret volume mounts its files through one such
 * link); another user's symlink is refused without opening its target.
 * Returns the fd with *st filled in, or -errno with why (len bytes) saying
 * what is wrong, never anything read from the file. */
int trustfile__open(const char *path, struct stat *st, char *why, size_t len);

#endif
