#ifndef TAGPROF_PRIVS_H
#define TAGPROF_PRIVS_H

#include <stdbool.h>
#include <stdint.h>

/* Capabilities of the calling thread, as bit masks (1 << CAP_X), through
 * the raw capget/capset system calls: libcap is not a dependency. On
 * Linux they are per thread: a thread started later inherits the caller's
 * sets, one started earlier keeps its own. */
struct privs {
	uint64_t eff, prm, inh;
};

#define PRIV(cap) (1ull << (cap))

int privs__get(struct privs *p);
int privs__set(const struct privs *p);
/* Moves cap out of the effective set (raise: back in, if permitted). */
int privs__lower(int cap);
int privs__raise(int cap);
/* Keeps only `keep` (of what is permitted) in the effective and permitted
 * sets, clears the inheritable and ambient sets, takes everything else
 * out of the bounding set when CAP_SETPCAP allows, and sets
 * no_new_privs. 0 or -errno; err says which step failed. */
int privs__drop_to(uint64_t keep, char *err, size_t len);
/* Every capability of the calling thread, for helper threads that need
 * none (the debuginfod worker). */
int privs__drop_thread(void);
/* "CAP_SYS_PTRACE CAP_BPF ..." for a mask; "none" when empty. */
const char *privs__names(uint64_t mask, char *buf, size_t len);

#endif
