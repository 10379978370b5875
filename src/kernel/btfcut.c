// SPDX-License-Identifier: BSD-2-Clause
/* A cut of the kernel's BTF for CO-RE, and its cache (btfcut.h).
 *
 * libbpf relocates a CO-RE field access by finding the root type by name
 * in the target BTF and walking its members by name. A target that holds
 * every type of those names, each with all its members at their offsets,
 * relocates exactly as the whole kernel BTF does; what sits behind a
 * pointer never matters, because CO-RE takes any pointer for any other.
 * So the cut copies named types whole and stops at pointers, and
 * tests/unit/test_btfcut.c checks that a program loaded against it gets the
 * same instructions as against the kernel's own BTF.
 */
#include "kernel/btfcut.h"
#include "out/atomicfile.h"
#include "util/errbuf.h"
#include "util/trustfile.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define CUT_MAX_DEPTH	64		/* embedding depth; the kernel's is < 20 */
#define CUT_MAX_BYTES	(16u << 20)	/* a cached cut larger is not ours */
#define NOTES_MAX	(64u << 10)
#define BUILD_ID_MAX	64		/* bytes; GNU build IDs are 20 */
#define NT_GNU_BUILD_ID_TYPE 3
#define CACHE_DIR_DEFAULT "/var/cache/tagprof"
#define CACHE_PREFIX	"btf-"
#define CACHE_SUFFIX	".btf"

/* ---- the cut ---- */

struct cutter {
	const struct btf *src;
	struct btf *dst;
	uint32_t *map;		/* src id -> dst id + 1; 0: not copied yet */
	uint32_t nsrc;
	int void_ptr;		/* dst id of "void *", 0 until made */
};

static const char *src_name(const struct cutter *c, const struct btf_type *t)
{
	const char *n = btf__name_by_offset(c->src, t->name_off);

	return n ? n : "";
}

static int copy_type(struct cutter *c, uint32_t id, int depth);

static int copy_composite(struct cutter *c, const struct btf_type *t,
			  int depth)
{
	const struct btf_member *m = btf_members(t);
	uint16_t n = btf_vlen(t);
	int *ids = NULL, ret, i;

	if (n) {
		ids = calloc(n, sizeof(*ids));
		if (!ids)
			return -ENOMEM;
	}
	/* Members first: btf__add_field appends to the type added last. */
	for (i = 0; i < n; i++) {
		ids[i] = copy_type(c, m[i].type, depth + 1);
		if (ids[i] < 0) {
			ret = ids[i];
			goto cleanup;
		}
	}
	ret = btf_is_struct(t) ?
		      btf__add_struct(c->dst, src_name(c, t), t->size) :
		      btf__add_union(c->dst, src_name(c, t), t->size);
	for (i = 0; ret > 0 && i < n; i++) {
		const char *mn = btf__name_by_offset(c->src, m[i].name_off);
		int e = btf__add_field(c->dst, mn && *mn ? mn : NULL, ids[i],
				       btf_member_bit_offset(t, i),
				       btf_member_bitfield_size(t, i));

		if (e < 0)
			ret = e;
	}
cleanup:
	free(ids);
	return ret;
}

static int copy_enum(struct cutter *c, const struct btf_type *t)
{
	uint16_t n = btf_vlen(t), i;
	int ret;

	if (btf_is_enum(t)) {
		const struct btf_enum *e = btf_enum(t);

		ret = btf__add_enum(c->dst, src_name(c, t), t->size);
		for (i = 0; ret > 0 && i < n; i++) {
			int r = btf__add_enum_value(
				c->dst, btf__name_by_offset(c->src, e[i].name_off),
				btf_kflag(t) ? (int64_t)e[i].val :
					       (int64_t)(uint32_t)e[i].val);
			if (r < 0)
				ret = r;
		}
		return ret;
	}
	ret = btf__add_enum64(c->dst, src_name(c, t), t->size, btf_kflag(t));
	for (i = 0; ret > 0 && i < n; i++) {
		const struct btf_enum64 *e = btf_enum64(t) + i;
		int r = btf__add_enum64_value(
			c->dst, btf__name_by_offset(c->src, e->name_off),
			btf_enum64_value(e));
		if (r < 0)
			ret = r;
	}
	return ret;
}

static int copy_kind(struct cutter *c, const struct btf_type *t, int depth)
{
	const char *name = src_name(c, t);
	int a, b;

	switch (btf_kind(t)) {
	case BTF_KIND_PTR:
		if (!c->void_ptr)
			c->void_ptr = btf__add_ptr(c->dst, 0);
		return c->void_ptr;
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		/* CO-RE skips modifiers: the type they qualify serves. */
		return copy_type(c, t->type, depth + 1);
	case BTF_KIND_TYPEDEF:
		a = copy_type(c, t->type, depth + 1);
		return a < 0 ? a : btf__add_typedef(c->dst, name, a);
	case BTF_KIND_INT:
		return btf__add_int(c->dst, name, t->size,
				    btf_int_encoding(t));
	case BTF_KIND_FLOAT:
		return btf__add_float(c->dst, name, t->size);
	case BTF_KIND_ARRAY:
		a = copy_type(c, btf_array(t)->type, depth + 1);
		b = a < 0 ? a : copy_type(c, btf_array(t)->index_type, depth + 1);
		return b < 0 ? b : btf__add_array(c->dst, b, a,
						  btf_array(t)->nelems);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return copy_composite(c, t, depth);
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		return copy_enum(c, t);
	case BTF_KIND_FWD:
		return btf__add_fwd(c->dst, name, btf_kflag(t) ? BTF_FWD_UNION :
								 BTF_FWD_STRUCT);
	default:
		/* Functions, variables, sections, tags: never a member's
		 * type; void stands in. */
		return 0;
	}
}

/* Copies src type id into dst once; returns its dst id or -errno. */
static int copy_type(struct cutter *c, uint32_t id, int depth)
{
	const struct btf_type *t;
	int ret;

	if (id == 0)
		return 0;
	if (id >= c->nsrc)
		return -EINVAL;
	if (c->map[id])
		return (int)c->map[id] - 1;
	if (depth > CUT_MAX_DEPTH)
		return -ELOOP;
	t = btf__type_by_id(c->src, id);
	if (!t)
		return -EINVAL;
	ret = copy_kind(c, t, depth);
	if (ret >= 0)
		c->map[id] = (uint32_t)ret + 1;
	return ret;
}

/* Kinds whose names a CO-RE relocation can start from. */
static int wanted_kind(int kind)
{
	return kind == BTF_KIND_STRUCT || kind == BTF_KIND_UNION ||
	       kind == BTF_KIND_ENUM || kind == BTF_KIND_ENUM64 ||
	       kind == BTF_KIND_TYPEDEF;
}

/* CO-RE takes enum and enum64 for each other; every other kind only for
 * itself. */
static int same_kind(int a, int b)
{
	if ((a == BTF_KIND_ENUM || a == BTF_KIND_ENUM64) &&
	    (b == BTF_KIND_ENUM || b == BTF_KIND_ENUM64))
		return 1;
	return a == b;
}

/* A prog type's name without its ___flavor suffix, which CO-RE ignores. */
static size_t essential_len(const char *name)
{
	const char *f = strstr(name, "___");

	return f ? (size_t)(f - name) : strlen(name);
}

struct wanted {
	const char *name;	/* in prog's strings */
	size_t len;
	int kind;
};

static int wanted_cmp(const void *a, const void *b)
{
	const struct wanted *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int r = strncmp(x->name, y->name, n);

	if (r)
		return r;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* The named types of prog a relocation can start from, sorted by name. */
static struct wanted *wanted_list(const struct btf *prog, size_t *count)
{
	uint32_t n = btf__type_cnt(prog), id;
	struct wanted *w = calloc(n, sizeof(*w));
	size_t k = 0;

	if (!w)
		return NULL;
	for (id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(prog, id);
		const char *name = t ? btf__name_by_offset(prog, t->name_off) :
				       NULL;

		if (!t || !name || !*name || !wanted_kind(btf_kind(t)))
			continue;
		w[k].name = name;
		w[k].len = essential_len(name);
		w[k].kind = btf_kind(t);
		k++;
	}
	qsort(w, k, sizeof(*w), wanted_cmp);
	*count = k;
	return w;
}

/* Whether some wanted entry has this name and a kind CO-RE matches. */
static int is_wanted(const struct wanted *w, size_t n, const char *name,
		     int kind)
{
	struct wanted key = { .name = name, .len = strlen(name) };
	const struct wanted *hit = bsearch(&key, w, n, sizeof(*w), wanted_cmp);

	if (!hit)
		return 0;
	/* Entries of one name sit together: look at each. */
	while (hit > w && !wanted_cmp(hit - 1, &key))
		hit--;
	for (; hit < w + n && !wanted_cmp(hit, &key); hit++)
		if (same_kind(hit->kind, kind))
			return 1;
	return 0;
}

struct btf *btfcut__cut(const struct btf *vmlinux, const struct btf *prog)
{
	struct cutter c = { .src = vmlinux };
	struct wanted *w = NULL;
	size_t nw = 0;
	uint32_t id;
	int err = 0;

	c.nsrc = btf__type_cnt(vmlinux);
	c.map = calloc(c.nsrc, sizeof(*c.map));
	c.dst = btf__new_empty();
	w = wanted_list(prog, &nw);
	if (!c.map || !c.dst || !w) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* Every kernel type of a wanted name, as libbpf would consider each
	 * of them a candidate. */
	for (id = 1; id < c.nsrc && !err; id++) {
		const struct btf_type *t = btf__type_by_id(vmlinux, id);
		const char *name = btf__name_by_offset(vmlinux, t->name_off);

		if (!name || !*name || !wanted_kind(btf_kind(t)) ||
		    !is_wanted(w, nw, name, btf_kind(t)))
			continue;
		err = copy_type(&c, id, 0);
		if (err > 0)
			err = 0;
	}
cleanup:
	free(w);
	free(c.map);
	if (err) {
		btf__free(c.dst);
		errno = -err;
		return NULL;
	}
	return c.dst;
}

/* ---- the kernel's build ID ---- */

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static size_t align4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

int btfcut__build_id(const void *notes, size_t len, char *hex, size_t hexlen)
{
	const uint8_t *p = notes;
	size_t off = 0;

	while (len - off >= 12) {
		uint32_t namesz = get32(p + off), descsz = get32(p + off + 4);
		uint32_t type = get32(p + off + 8);
		size_t name_at = off + 12, desc_at, next;

		if (align4(namesz) > len - name_at)
			return -EINVAL;
		desc_at = name_at + align4(namesz);
		if (align4(descsz) > len - desc_at)
			return -EINVAL;
		next = desc_at + align4(descsz);
		if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 &&
		    !memcmp(p + name_at, "GNU", 4)) {
			if (!descsz || descsz > BUILD_ID_MAX ||
			    hexlen < 2 * (size_t)descsz + 1)
				return -EINVAL;
			for (uint32_t i = 0; i < descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", p[desc_at + i]);
			return (int)descsz;
		}
		off = next;
	}
	return -ENOENT;
}

static int kernel_build_id(char *hex, size_t hexlen)
{
	uint8_t *buf = malloc(NOTES_MAX);
	size_t len = 0;
	ssize_t n;
	int fd, ret;

	if (!buf)
		return -ENOMEM;
	fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto cleanup;
	}
	while (len < NOTES_MAX &&
	       (n = read(fd, buf + len, NOTES_MAX - len)) > 0)
		len += (size_t)n;
	close(fd);
	ret = btfcut__build_id(buf, len, hex, hexlen);
cleanup:
	free(buf);
	return ret;
}

/* ---- the cache ---- */

/* The cache directory, made when missing; refused unless it is a real
 * directory of ours (or root's) that group and others cannot write. */
static int cache_dir(char *dir, size_t len, struct btfcut_info *info)
{
	const char *env = getenv("TAGPROF_CACHE_DIR");
	const char *path = env && *env ? env : CACHE_DIR_DEFAULT;
	struct stat st;

	if ((size_t)snprintf(dir, len, "%s", path) >= len) {
		errbuf__set(info->why, sizeof(info->why),
			    "cache directory name too long");
		return -ENAMETOOLONG;
	}
	if (mkdir(dir, 0700) && errno != EEXIST) {
		errbuf__set(info->why, sizeof(info->why),
			    "cannot make cache directory %s: %s", dir,
			    strerror(errno));
		return -errno;
	}
	if (lstat(dir, &st)) {
		errbuf__set(info->why, sizeof(info->why), "%s: %s", dir,
			    strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    (st.st_mode & 022)) {
		errbuf__set(info->why, sizeof(info->why),
			    "cache directory %s is not a directory of ours that "
			    "only we can write", dir);
		return -EPERM;
	}
	return 0;
}

/* Cuts other than keep (older kernels, other builds of tagprof) go. */
static void drop_others(const char *dir, const char *keep)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t np = strlen(CACHE_PREFIX), ns = strlen(CACHE_SUFFIX), n;

	if (!d)
		return;
	while ((e = readdir(d))) {
		n = strlen(e->d_name);
		if (n > np + ns && !strncmp(e->d_name, CACHE_PREFIX, np) &&
		    !strcmp(e->d_name + n - ns, CACHE_SUFFIX) &&
		    strcmp(e->d_name, keep))
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

/* The cut for elf as raw BTF bytes (malloc'd into *raw). */
static int make_cut(const void *elf, size_t size, void **raw, uint32_t *len,
		    struct btfcut_info *info)
{
	struct bpf_object *obj = NULL;
	struct btf *vmlinux = NULL, *cut = NULL;
	const void *data;
	int err = 0;

	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		err = -errno;
		errbuf__set(info->why, sizeof(info->why),
			    "cannot read the kernel's BTF: %s", strerror(-err));
		goto cleanup;
	}
	obj = bpf_object__open_mem(elf, size, NULL);
	if (!obj || !bpf_object__btf(obj)) {
		err = obj ? -ENOENT : -errno;
		errbuf__set(info->why, sizeof(info->why),
			    "the BPF object has no BTF");
		goto cleanup;
	}
	cut = btfcut__cut(vmlinux, bpf_object__btf(obj));
	data = cut ? btf__raw_data(cut, len) : NULL;
	*raw = data ? malloc(*len) : NULL;
	if (!*raw) {
		err = -ENOMEM;
		errbuf__set(info->why, sizeof(info->why),
			    "cannot cut the kernel's BTF: %s",
			    strerror(cut && data ? ENOMEM : errno));
		goto cleanup;
	}
	memcpy(*raw, data, *len);
	info->types = btf__type_cnt(cut) - 1;
cleanup:
	btf__free(cut);
	bpf_object__close(obj);
	btf__free(vmlinux);
	return err;
}

/* An fd on raw BTF that is in no file: the cut still serves this start
 * when the cache cannot be written. */
static int memfd_of(const void *raw, uint32_t len)
{
	int fd = memfd_create("tagprof-btf", MFD_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (write(fd, raw, len) != (ssize_t)len) {
		close(fd);
		return -EIO;
	}
	return fd;
}

/* The cached cut at info->path, if it is there and ours. */
static int open_cached(struct btfcut_info *info)
{
	char why[200];
	struct stat st;
	int fd = trustfile__open(info->path, &st, why, sizeof(why));

	if (fd < 0)
		return fd;
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    st.st_size > CUT_MAX_BYTES) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int btfcut__get(const void *elf, size_t size, struct btfcut_info *info)
{
	char id[2 * BUILD_ID_MAX + 1], dir[256], name[64 + sizeof(id)];
	uint32_t len = 0;
	void *raw = NULL;
	int fd, err;

	memset(info, 0, sizeof(*info));
	err = kernel_build_id(id, sizeof(id));
	if (err < 0) {
		errbuf__set(info->why, sizeof(info->why),
			    "no kernel build ID to key a cache by (%s)",
			    strerror(-err));
		return err;
	}
	err = cache_dir(dir, sizeof(dir), info);
	if (err)
		return err;
	snprintf(name, sizeof(name), CACHE_PREFIX "%s-%08lx" CACHE_SUFFIX, id,
		 crc32(0L, elf, (uInt)size));
	snprintf(info->path, sizeof(info->path), "%s/%s", dir, name);
	fd = open_cached(info);
	if (fd >= 0) {
		info->how = BTFCUT_CACHED;
		return fd;
	}
	err = make_cut(elf, size, &raw, &len, info);
	if (err)
		return err;
	info->how = BTFCUT_BUILT;
	err = atomicfile__write(info->path, raw, len, 0600);
	if (!err) {
		drop_others(dir, name);
		fd = open_cached(info);
	}
	if (err || fd < 0) {
		errbuf__set(info->why, sizeof(info->why),
			    "not cached: cannot write %s: %s", info->path,
			    strerror(err ? -err : -fd));
		info->path[0] = '\0';
		fd = memfd_of(raw, len);
	}
	free(raw);
	return fd;
}

void btfcut__drop(const struct btfcut_info *info)
{
	if (info->how != BTFCUT_NONE && info->path[0])
		unlink(info->path);
}
