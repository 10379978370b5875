/* The kernel's BTF cut down to what a BPF object can ask of it, cached
 * per kernel build, so that a start does not parse all of
 * /sys/kernel/btf/vmlinux (about 40 ms of CPU for 5 MB and 127,000 types)
 * only to relocate a dozen field offsets. */
#ifndef TAGPROF_BTFCUT_H
#define TAGPROF_BTFCUT_H

#include <stddef.h>

struct btf;

/* How btfcut__get served a start. */
enum btfcut_how {
	BTFCUT_NONE,	/* no cut: load with the kernel's full BTF (why says) */
	BTFCUT_CACHED,	/* the cached cut for this kernel and object */
	BTFCUT_BUILT,	/* cut now from the kernel's BTF, and cached */
};

struct btfcut_info {
	enum btfcut_how how;
	unsigned types;		/* types in the cut */
	char path[512];		/* the cache file (CACHED, BUILT) */
	char why[256];		/* NONE: why; BUILT: why it was not cached, if so */
};

/* A new BTF holding every struct, union, enum and typedef that prog names
 * (a ___flavor suffix dropped), as the kernel's BTF (vmlinux) defines it:
 * each member with its name, offset and bitfield size, and what it embeds
 * (structs, unions, arrays, integers, enums) copied the same way. A pointer
 * becomes a void pointer: CO-RE takes any pointer for any other, and this
 * stops the copy at the first pointer instead of pulling in the kernel.
 * Names prog has that the kernel lacks are left out. NULL with errno set
 * on failure. */
struct btf *btfcut__cut(const struct btf *vmlinux, const struct btf *prog);

/* The GNU build ID in an ELF notes blob (/sys/kernel/notes), as lower
 * case hex into hex (at least 2 * 20 + 1 bytes for SHA-1 IDs). Returns
 * its length in bytes, or -ENOENT when there is none, -EINVAL when the
 * blob is malformed or hex is too small. */
int btfcut__build_id(const void *notes, size_t len, char *hex, size_t hexlen);

/* An fd open on the cut of this kernel's BTF for the BPF object elf
 * (its bytes: the cache key is the kernel's build ID and a checksum of
 * them), building and caching it when the cache has none. The cache is
 * TAGPROF_CACHE_DIR, else /var/cache/tagprof: a directory of ours that
 * nobody else can write, made (0700) when missing; a cut is written whole
 * (0600) and replaces those of other kernels or objects. Returns the fd
 * (pass "/proc/self/fd/N" to libbpf as btf_custom_path) or -errno, with
 * info filled in either way. */
int btfcut__get(const void *elf, size_t size, struct btfcut_info *info);

/* The cut at info->path did not serve a load: removes it so the next
 * start makes it again. */
void btfcut__drop(const struct btfcut_info *info);

#endif
