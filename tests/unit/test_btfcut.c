/* The cut of the kernel's BTF (src/kernel/btfcut.c): build IDs from notes
 * blobs written here by the ELF note layout; every type the sampler's
 * object names keeps the kernel's size and member offsets in the cut; the
 * sampler's programs get the same instructions relocated against the cut
 * as against /sys/kernel/btf/vmlinux; and the cache: built once, then
 * served, and refused where another user could have put it. */
#include "check.h"
#include "kernel/btfcut.h"
#include "ksym.skel.h"
#include "sample.skel.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- build IDs ---- */

/* Appends one note: namesz, descsz, type, name and desc each padded to 4. */
static size_t put_note(uint8_t *b, size_t off, const char *name,
		       uint32_t namesz, uint32_t type, const uint8_t *desc,
		       uint32_t descsz)
{
	uint32_t h[3] = { namesz, descsz, type };

	memcpy(b + off, h, sizeof(h));
	off += sizeof(h);
	memset(b + off, 0, (namesz + 3) & ~3u);
	memcpy(b + off, name, namesz);
	off += (namesz + 3) & ~3u;
	memset(b + off, 0, (descsz + 3) & ~3u);
	memcpy(b + off, desc, descsz);
	return off + ((descsz + 3) & ~3u);
}

static void test_build_id(void)
{
	static const uint8_t id[20] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
					0xcd, 0xef, 0, 1, 2, 3, 4, 5, 6, 7,
					8, 9, 0xfe, 0xff };
	static const uint8_t xen[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint8_t b[256], big[80] = { 0 };
	char hex[129];
	size_t n;

	/* Another vendor's note first, then the GNU build ID. */
	n = put_note(b, 0, "Xen", 4, 3, xen, sizeof(xen));
	n = put_note(b, n, "GNU", 4, 3, id, sizeof(id));
	CHECK(btfcut__build_id(b, n, hex, sizeof(hex)) == 20);
	CHECK(!strcmp(hex, "0123456789abcdef0001020304050607" "0809feff"));
	/* Cut short anywhere inside the GNU note: malformed, never read past. */
	for (size_t cut = n - 1; cut > 36; cut--)
		CHECK(btfcut__build_id(b, cut, hex, sizeof(hex)) == -EINVAL);
	/* No GNU note of type 3. */
	n = put_note(b, 0, "GNU", 4, 1, id, sizeof(id));
	CHECK(btfcut__build_id(b, n, hex, sizeof(hex)) == -ENOENT);
	CHECK(btfcut__build_id(b, 0, hex, sizeof(hex)) == -ENOENT);
	/* Too small a buffer, an empty or oversized ID. */
	n = put_note(b, 0, "GNU", 4, 3, id, sizeof(id));
	CHECK(btfcut__build_id(b, n, hex, 40) == -EINVAL);
	n = put_note(b, 0, "GNU", 4, 3, id, 0);
	CHECK(btfcut__build_id(b, n, hex, sizeof(hex)) == -EINVAL);
	n = put_note(b, 0, "GNU", 4, 3, big, sizeof(big));
	CHECK(btfcut__build_id(b, n, hex, sizeof(hex)) == -EINVAL);
	/* A name size that runs past the end. */
	n = put_note(b, 0, "GNU", 4, 3, id, sizeof(id));
	((uint32_t *)b)[0] = 0xfffffff0u;
	CHECK(btfcut__build_id(b, n, hex, sizeof(hex)) == -EINVAL);
}

/* ---- the cut ---- */

static struct btf *prog_btf(struct bpf_object **obj)
{
	size_t size;
	const void *elf = sample_bpf__elf_bytes(&size);

	*obj = bpf_object__open_mem(elf, size, NULL);
	return *obj ? bpf_object__btf(*obj) : NULL;
}

static const struct btf_type *skip_mods(const struct btf *b, uint32_t id)
{
	const struct btf_type *t = btf__type_by_id(b, id);

	while (t && (btf_is_mod(t) || btf_is_typedef(t)))
		t = btf__type_by_id(b, t->type);
	return t;
}

/* Same kind as the kernel's after modifiers and typedefs, pointers aside
 * (the cut's point to void). */
static int member_same(const struct btf *k, const struct btf_type *kt,
		       const struct btf *c, const struct btf_type *ct, int i)
{
	const struct btf_member *km = btf_members(kt) + i;
	const struct btf_member *cm = btf_members(ct) + i;
	const struct btf_type *a = skip_mods(k, km->type);
	const struct btf_type *b = skip_mods(c, cm->type);

	if (strcmp(btf__name_by_offset(k, km->name_off),
		   btf__name_by_offset(c, cm->name_off)) ||
	    btf_member_bit_offset(kt, i) != btf_member_bit_offset(ct, i) ||
	    btf_member_bitfield_size(kt, i) != btf_member_bitfield_size(ct, i))
		return 0;
	if (!a || !b)
		return !a && !b;
	if (btf_kind(a) != btf_kind(b))
		return 0;
	return btf_is_ptr(a) || a->size == b->size;
}

static void test_cut_keeps_layout(void)
{
	struct bpf_object *obj = NULL;
	struct btf *k = btf__load_vmlinux_btf(), *cut = NULL;
	struct btf *p = prog_btf(&obj);
	unsigned checked = 0, members = 0;

	CHECK(k && p);
	cut = btfcut__cut(k, p);
	CHECK(cut);
	fprintf(stderr, "  cut: %u of %u kernel types\n",
		btf__type_cnt(cut) - 1, btf__type_cnt(k) - 1);
	CHECK(btf__type_cnt(cut) < btf__type_cnt(k) / 20);
	for (uint32_t id = 1; id < btf__type_cnt(p); id++) {
		const struct btf_type *t = btf__type_by_id(p, id), *kt, *ct;
		const char *name = btf__name_by_offset(p, t->name_off);
		int kid, cid;

		if (!btf_is_composite(t) || !name || !*name)
			continue;
		kid = btf__find_by_name_kind(k, name, btf_kind(t));
		cid = btf__find_by_name_kind(cut, name, btf_kind(t));
		if (kid < 0) {		/* ours, not the kernel's */
			CHECK(cid < 0);
			continue;
		}
		CHECK(cid > 0);
		kt = btf__type_by_id(k, kid);
		ct = btf__type_by_id(cut, cid);
		CHECK(kt->size == ct->size && btf_vlen(kt) == btf_vlen(ct));
		for (int i = 0; i < btf_vlen(kt); i++, members++)
			CHECK(member_same(k, kt, cut, ct, i));
		checked++;
	}
	fprintf(stderr, "  %u named kernel types checked, %u members\n",
		checked, members);
	CHECK(btf__find_by_name_kind(cut, "task_struct", BTF_KIND_STRUCT) > 0);
	CHECK(checked >= 5);
	btf__free(cut);
	btf__free(k);
	bpf_object__close(obj);
}

/* A type named task_struct___flavor in a program is the kernel's
 * task_struct to CO-RE, so the cut has it; a name the kernel lacks is
 * left out. */
static void test_cut_flavors(void)
{
	struct btf *k = btf__load_vmlinux_btf(), *p = btf__new_empty(), *cut;
	int u32;

	CHECK(k && p);
	u32 = btf__add_int(p, "unsigned int", 4, 0);
	CHECK(btf__add_struct(p, "task_struct___older", 4) > 0);
	CHECK(btf__add_field(p, "pid", u32, 0, 0) == 0);
	CHECK(btf__add_struct(p, "no_such_kernel_struct", 4) > 0);
	cut = btfcut__cut(k, p);
	CHECK(cut);
	CHECK(btf__find_by_name_kind(cut, "task_struct", BTF_KIND_STRUCT) > 0);
	CHECK(btf__find_by_name_kind(cut, "no_such_kernel_struct",
				     BTF_KIND_STRUCT) < 0);
	btf__free(cut);
	btf__free(p);
	btf__free(k);
}

/* ---- relocation: the same instructions either way ---- */

/* Loads the sampler's object relocated against btf_path (NULL: the
 * kernel's own) and copies its programs' instructions, map references
 * blanked (their fds differ from load to load). */
static int load_insns(const char *btf_path, struct bpf_insn **out, size_t *n)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = btf_path);
	struct sample_bpf *skel = sample_bpf__open_opts(&opts);
	struct bpf_program *prog;
	int err;

	*out = NULL;
	*n = 0;
	if (!skel)
		return -errno;
	err = sample_bpf__load(skel);
	bpf_object__for_each_program(prog, skel->obj) {
		size_t cnt = bpf_program__insn_cnt(prog);
		struct bpf_insn *grown = realloc(*out, (*n + cnt) * sizeof(**out));

		if (err || !grown) {
			err = err ? err : -ENOMEM;
			break;
		}
		*out = grown;
		memcpy(*out + *n, bpf_program__insns(prog), cnt * sizeof(**out));
		for (size_t i = *n; i + 1 < *n + cnt; i++)
			if ((*out)[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
			    (*out)[i].src_reg) {
				(*out)[i].imm = 0;
				(*out)[++i].imm = 0;
			}
		*n += cnt;
	}
	sample_bpf__destroy(skel);
	return err;
}

static void test_same_instructions(void)
{
	char dir[] = "/tmp/test_btfcut.XXXXXX", path[64];
	struct bpf_insn *full = NULL, *cut = NULL;
	size_t nfull = 0, ncut = 0, elf_size;
	const void *elf = sample_bpf__elf_bytes(&elf_size);
	struct btfcut_info info;
	int fd, ra, rb;

	CHECK(mkdtemp(dir));
	setenv("TAGPROF_CACHE_DIR", dir, 1);
	fd = btfcut__get(elf, elf_size, &info);
	CHECK(fd >= 0 && info.how == BTFCUT_BUILT);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ra = load_insns(NULL, &full, &nfull);
	rb = load_insns(path, &cut, &ncut);
	close(fd);
	check_remove_dir(dir);
	fprintf(stderr, "  %zu instructions against the kernel's BTF, %zu "
		"against the cut (loads: %d, %d)\n", nfull, ncut, ra, rb);
	CHECK(ra == 0 && rb == 0);
	CHECK(nfull > 100 && nfull == ncut);
	CHECK(!memcmp(full, cut, nfull * sizeof(*full)));
	free(full);
	free(cut);
}

/* ---- the cache ---- */

static int count_cuts(const char *dir)
{
	char cmd[256];
	FILE *f;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls %s | grep -c '^btf-.*\\.btf$'", dir);
	f = popen(cmd, "r");
	if (f && fscanf(f, "%d", &n) != 1)
		n = -1;
	if (f)
		pclose(f);
	return n;
}

static void test_cache(void)
{
	char dir[] = "/tmp/test_btfcut.XXXXXX", sub[80], stale[128], link[128];
	size_t elf_size;
	const void *elf = sample_bpf__elf_bytes(&elf_size);
	struct btfcut_info info;
	struct stat st;
	int fd;

	CHECK(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/cache", dir);
	setenv("TAGPROF_CACHE_DIR", sub, 1);
	/* An older cut beside: replaced by the new one. */
	CHECK(mkdir(sub, 0700) == 0);
	snprintf(stale, sizeof(stale), "%s/btf-00-00000000.btf", sub);
	fd = open(stale, O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0);
	close(fd);
	fd = btfcut__get(elf, elf_size, &info);
	CHECK(fd >= 0 && info.how == BTFCUT_BUILT && info.types > 10);
	close(fd);
	CHECK(stat(info.path, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK(count_cuts(sub) == 1 && access(stale, F_OK) != 0);
	/* The second start is served from the file. */
	fd = btfcut__get(elf, elf_size, &info);
	CHECK(fd >= 0 && info.how == BTFCUT_CACHED);
	close(fd);
	/* Another object (another build of tagprof) has a cut of its own. */
	{
		size_t other_size;
		const void *other = ksym_bpf__elf_bytes(&other_size);
		struct btfcut_info o;

		fd = btfcut__get(other, other_size, &o);
		CHECK(fd >= 0 && o.how == BTFCUT_BUILT && strcmp(o.path, info.path));
		close(fd);
		fd = btfcut__get(elf, elf_size, &info);
		CHECK(fd >= 0 && info.how == BTFCUT_BUILT);
		close(fd);
	}
	/* A cut someone else owns is not ours: made again, and replaced. */
	CHECK(chown(info.path, 65534, 65534) == 0);
	fd = btfcut__get(elf, elf_size, &info);
	CHECK(fd >= 0 && info.how == BTFCUT_BUILT);
	close(fd);
	CHECK(stat(info.path, &st) == 0 && st.st_uid == geteuid());
	/* Dropped after a failed load: made again next time. */
	btfcut__drop(&info);
	CHECK(access(info.path, F_OK) != 0);
	/* A directory others can write is refused, and so is a symlink. */
	CHECK(chmod(sub, 0777) == 0);
	fd = btfcut__get(elf, elf_size, &info);
	CHECK(fd == -EPERM && info.how == BTFCUT_NONE && info.why[0]);
	CHECK(chmod(sub, 0700) == 0);
	snprintf(link, sizeof(link), "%s/link", dir);
	CHECK(symlink(sub, link) == 0);
	setenv("TAGPROF_CACHE_DIR", link, 1);
	fd = btfcut__get(elf, elf_size, &info);
	CHECK(fd == -EPERM && info.how == BTFCUT_NONE);
	/* No directory can be made: no cut, the kernel's own BTF serves. */
	snprintf(link, sizeof(link), "%s/none/cache", dir);
	setenv("TAGPROF_CACHE_DIR", link, 1);
	fd = btfcut__get(elf, elf_size, &info);
	CHECK(fd < 0 && info.how == BTFCUT_NONE && strstr(info.why, "cannot make"));
	unsetenv("TAGPROF_CACHE_DIR");
	check_remove_dir(dir);
}

int main(void)
{
	RUN(test_build_id);
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		SKIP(test_cut_keeps_layout, "no /sys/kernel/btf/vmlinux");
		SKIP(test_cut_flavors, "no /sys/kernel/btf/vmlinux");
		SKIP(test_same_instructions, "no /sys/kernel/btf/vmlinux");
		SKIP(test_cache, "no /sys/kernel/btf/vmlinux");
		CHECK_EXIT();
	}
	RUN(test_cut_keeps_layout);
	RUN(test_cut_flavors);
	if (geteuid() != 0) {
		SKIP(test_same_instructions, "loading BPF programs needs root");
		SKIP(test_cache, "chown to test a foreign cut needs root");
	} else {
		RUN(test_same_instructions);
		RUN(test_cache);
	}
	CHECK_EXIT();
}
