/* ELF symbolization on real files: binaries compiled here with cc, checked
 * against nm and readelf, corrupt copies of them, and this test binary
 * symbolized the way the agent does (address -> mapping -> file offset ->
 * vaddr -> symbol), by hand and through the process table and the
 * symbolizer into the location table. */
#include "check.h"
#include "shell.h"
#include "kernel/ksymbolizer.h"
#include "proc/proctable.h"
#include "sym/elfsym.h"
#include "sym/loctab.h"
#include "sym/symbolizer.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/tagprof-symbolize.XXXXXX";

/* One function symbol as nm prints it. */
struct nm_sym {
	uint64_t addr;
	uint64_t size;
	char type;
	char name[256];
};

#define NM_MAX 512

/* One PT_LOAD as readelf -lW prints it. */
struct load_hdr {
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
};

#define LOADS_MAX 16

static const char prog_src[] =
	"__attribute__((noinline, used)) int tp_alpha(int x)\n"
	"{\n"
	"	volatile int acc = x;\n"
	"	for (int i = 0; i < 16; i++)\n"
	"		acc += i * x;\n"
	"	return acc;\n"
	"}\n"
	"__attribute__((noinline, used)) int tp_beta(int x)\n"
	"{\n"
	"	volatile int acc = x;\n"
	"	for (int i = 0; i < 8; i++)\n"
	"		acc ^= i + x;\n"
	"	return acc;\n"
	"}\n"
	/* Aligned so that padding, covered by no symbol, follows tp_beta. */
	"__attribute__((noinline, used, aligned(256))) int tp_gamma(int x)\n"
	"{\n"
	"	return x + 1;\n"
	"}\n"
	/* A local function and its global alias: the global name wins,
	 * though the local one is shorter (the last tie-break). */
	"static __attribute__((noinline, used)) int tp_lo(int x)\n"
	"{\n"
	"	return x * 3;\n"
	"}\n"
	"int tp_public(int x) __attribute__((alias(\"tp_lo\")));\n"
	/* STT_GNU_IFUNC at its local resolver's address. */
	"static int (*tp_r(void))(int)\n"
	"{\n"
	"	return tp_alpha;\n"
	"}\n"
	"int tp_ifunc(int x) __attribute__((ifunc(\"tp_r\")));\n"
	/* A sized function and a sizeless label at its address: the sized
	 * one wins, though its name is longer. */
	"__asm__(\".text\\n.globl tp_sized\\n.type tp_sized,@function\\n\"\n"
	"	\".globl tp_u\\n.type tp_u,@function\\n\"\n"
	"	\"tp_u:\\ntp_sized:\\n\\tnop\\n\\tnop\\n\\tret\\n\"\n"
	"	\".size tp_sized, 3\\n\");\n"
	/* A function without .size, as hand-written assembly often is. */
	"__asm__(\".text\\n.globl tp_nosize\\n.type tp_nosize,@function\\n\"\n"
	"	\"tp_nosize:\\n\\tnop\\n\\tnop\\n\\tret\\n\");\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	(void)argv;\n"
	"	return tp_alpha(argc) + tp_beta(argc) + tp_gamma(argc) +\n"
	"	       tp_public(argc) + tp_ifunc(argc);\n"
	"}\n";

static const char lib_src[] =
	"__attribute__((noinline)) int tp_lib_one(int x)\n"
	"{\n"
	"	return x * 5 + 1;\n"
	"}\n"
	"__attribute__((noinline)) int tp_lib_two(int x)\n"
	"{\n"
	"	return tp_lib_one(x) ^ 0x55;\n"
	"}\n"
	"__attribute__((noinline, visibility(\"hidden\")))\n"
	"int tp_lib_internal(int x)\n"
	"{\n"
	"	return x - 7;\n"
	"}\n"
	"int tp_lib_three(int x)\n"
	"{\n"
	"	return tp_lib_internal(x) + tp_lib_two(x);\n"
	"}\n";

/* Paths of the files the cases share, under tmpdir. */
static char prog_path[PATH_MAX], lib_path[PATH_MAX], lib_full_path[PATH_MAX];

static void tpath(char *buf, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", tmpdir, name);
}

/* Runs a shell command; true when it exits 0. */
static bool write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	bool ok;

	if (!f)
		return false;
	ok = fwrite(buf, 1, len, f) == len;
	return fclose(f) == 0 && ok;
}

/* Reads a whole file; the caller frees *buf. */
static bool read_file(const char *path, unsigned char **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	long n;

	*buf = NULL;
	if (!f)
		return false;
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 ||
	    fseek(f, 0, SEEK_SET) != 0)
		goto fail;
	*buf = malloc(n);
	if (!*buf || fread(*buf, 1, n, f) != (size_t)n)
		goto fail;
	*len = n;
	fclose(f);
	return true;
fail:
	free(*buf);
	*buf = NULL;
	fclose(f);
	return false;
}

static bool is_func_type(char t)
{
	return t == 'T' || t == 't' || t == 'W' || t == 'w' || t == 'i';
}

/* Defined function symbols per nm (-D: the dynamic table only). */
static int read_nm(const char *path, bool dynamic, struct nm_sym *out,
		   int max)
{
	char cmd[2 * PATH_MAX], line[512], name[256], t;
	unsigned long long a, s;
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only %s '%s' 2>/dev/null",
		 dynamic ? "-D" : "", path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (n < max && fgets(line, sizeof(line), p)) {
		if (sscanf(line, "%llx %llx %c %255s", &a, &s, &t, name) != 4) {
			s = 0;
			if (sscanf(line, "%llx %c %255s", &a, &t, name) != 3)
				continue;
		}
		if (!is_func_type(t))
			continue;
		out[n].addr = a;
		out[n].size = s;
		out[n].type = t;
		snprintf(out[n].name, sizeof(out[n].name), "%s", name);
		n++;
	}
	return pclose(p) == 0 ? n : -1;
}

static const struct nm_sym *nm_find(const struct nm_sym *syms, int n,
				    const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(syms[i].name, name))
			return &syms[i];
	return NULL;
}

/* Lowest nm start above addr, or UINT64_MAX. */
static uint64_t nm_next_start(const struct nm_sym *syms, int n,
			      uint64_t addr)
{
	uint64_t next = UINT64_MAX;
	int i;

	for (i = 0; i < n; i++)
		if (syms[i].addr > addr && syms[i].addr < next)
			next = syms[i].addr;
	return next;
}

/* The build ID readelf -n prints, into out (empty when none). */
static bool readelf_build_id(const char *path, char *out, size_t len)
{
	char cmd[2 * PATH_MAX], line[512], id[128], *p;
	FILE *f;

	out[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "Build ID: ");
		if (p && sscanf(p + 10, "%127s", id) == 1)
			snprintf(out, len, "%s", id);
	}
	return pclose(f) == 0;
}

static int readelf_loads(const char *path, struct load_hdr *out, int max)
{
	char cmd[2 * PATH_MAX], line[512];
	unsigned long long off, va, pa, fsz;
	int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (sscanf(line, " LOAD %llx %llx %llx %llx", &off, &va, &pa,
			   &fsz) != 4)
			continue;
		out[n].offset = off;
		out[n].vaddr = va;
		out[n].filesz = fsz;
		n++;
	}
	return pclose(f) == 0 ? n : -1;
}

/* A section's address and size per readelf -SW. */
static bool readelf_section(const char *path, const char *want,
			    uint64_t *addr, uint64_t *size)
{
	char cmd[2 * PATH_MAX], line[512], name[128], type[64], *p;
	unsigned long long a, off, sz;
	bool found = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		p = strchr(line, ']');
		if (!p || sscanf(p + 1, "%127s %63s %llx %llx %llx", name, type,
				 &a, &off, &sz) != 5 || strcmp(name, want))
			continue;
		*addr = a;
		*size = sz;
		found = true;
	}
	return pclose(f) == 0 && found;
}

static bool has_section(const char *path, const char *name)
{
	return sh("readelf -SW '%s' 2>/dev/null | grep -q ' %s '", path, name);
}

/* lookup(addr) gives want, starting at want_start. */
static bool lookup_is(const struct elfsym *e, uint64_t addr,
		      const char *want, uint64_t want_start)
{
	uint64_t start = 0;
	const char *name = elfsym__lookup(e, addr, &start);

	if (name && !strcmp(name, want) && start == want_start)
		return true;
	fprintf(stderr, "  lookup %#" PRIx64 ": got %s at %#" PRIx64
		", want %s at %#" PRIx64 "\n", addr, name ? name : "NULL",
		start, want, want_start);
	return false;
}

static bool lookup_nm_name(const struct elfsym *e, const struct nm_sym *syms,
			   int n, const char *name, uint64_t delta)
{
	const struct nm_sym *s = nm_find(syms, n, name);

	if (!s) {
		fprintf(stderr, "  nm lacks %s\n", name);
		return false;
	}
	return lookup_is(e, s->addr + delta, name, s->addr);
}

static void test_functions_match_nm(void)
{
	static struct nm_sym syms[NM_MAX];
	struct elfsym *e;
	int n, i;

	n = read_nm(prog_path, false, syms, NM_MAX);
	CHECK(n > 0);
	e = elfsym__open(prog_path);
	CHECK(e);
	CHECK(elfsym__count(e) >= 8);
	CHECK(lookup_nm_name(e, syms, n, "tp_alpha", 0));
	CHECK(lookup_nm_name(e, syms, n, "tp_alpha", 1));
	CHECK(lookup_nm_name(e, syms, n, "tp_beta", 0));
	CHECK(lookup_nm_name(e, syms, n, "tp_beta", 1));
	CHECK(lookup_nm_name(e, syms, n, "tp_gamma", 4));
	CHECK(lookup_nm_name(e, syms, n, "main", 1));
	/* Every sized function nm lists starts a symbol at its address. */
	for (i = 0; i < n; i++) {
		uint64_t start = 0;

		if (!syms[i].size)
			continue;
		CHECK(elfsym__lookup(e, syms[i].addr, &start));
		CHECK(start == syms[i].addr);
		CHECK(elfsym__lookup(e, syms[i].addr + syms[i].size - 1,
				     &start));
	}
	elfsym__free(e);
}

/* Past tp_beta's size, before the next function: nothing contains it. */
static void test_past_function_end(void)
{
	static struct nm_sym syms[NM_MAX];
	const struct nm_sym *beta;
	uint64_t end, next, start = 0;
	const char *name;
	struct elfsym *e;
	int n;

	n = read_nm(prog_path, false, syms, NM_MAX);
	CHECK(n > 0);
	beta = nm_find(syms, n, "tp_beta");
	CHECK(beta && beta->size > 0);
	end = beta->addr + beta->size;
	next = nm_next_start(syms, n, beta->addr);
	/* tp_gamma's alignment leaves a gap; if a toolchain closed it, the
	 * symbol starting there is the right answer instead. */
	e = elfsym__open(prog_path);
	CHECK(e);
	name = elfsym__lookup(e, end, &start);
	if (next > end) {
		CHECK(!name);
		CHECK(!elfsym__lookup(e, next - 1, NULL));
	} else {
		CHECK(name && start == next);
	}
	CHECK(lookup_is(e, end - 1, "tp_beta", beta->addr));
	elfsym__free(e);
}

/* Equal addresses: global beats local; IFUNCs load; no .size is fine. */
static void test_aliases_ifunc_nosize(void)
{
	static struct nm_sym syms[NM_MAX];
	const struct nm_sym *s;
	struct elfsym *e;
	int n;

	n = read_nm(prog_path, false, syms, NM_MAX);
	CHECK(n > 0);
	e = elfsym__open(prog_path);
	CHECK(e);
	CHECK(lookup_nm_name(e, syms, n, "tp_public", 2));
	CHECK(lookup_nm_name(e, syms, n, "tp_sized", 2));
	s = nm_find(syms, n, "tp_ifunc");
	CHECK(s && s->type == 'i');
	CHECK(lookup_nm_name(e, syms, n, "tp_ifunc", 1));
	s = nm_find(syms, n, "tp_nosize");
	CHECK(s && s->size == 0);
	CHECK(lookup_nm_name(e, syms, n, "tp_nosize", 0));
	/* Three bytes of instructions: +2 is still inside, up to the next
	 * symbol, wherever the assembler put it. */
	CHECK(nm_next_start(syms, n, s->addr) > s->addr + 2);
	CHECK(lookup_nm_name(e, syms, n, "tp_nosize", 2));
	elfsym__free(e);
}

/* A sizeless symbol ends with its section: _init (no .size in crti.o)
 * must not claim the PLT that follows .init. */
static void test_sizeless_bounded_by_section(void)
{
	static struct nm_sym syms[NM_MAX];
	uint64_t init_addr, init_size, plt_addr, plt_size, start = 0;
	const struct nm_sym *s;
	const char *name;
	struct elfsym *e;
	int n;

	n = read_nm(prog_path, false, syms, NM_MAX);
	CHECK(n > 0);
	s = nm_find(syms, n, "_init");
	CHECK(s && s->size == 0);
	CHECK(readelf_section(prog_path, ".init", &init_addr, &init_size));
	CHECK(readelf_section(prog_path, ".plt", &plt_addr, &plt_size));
	CHECK(s->addr == init_addr && plt_addr >= init_addr + init_size);
	e = elfsym__open(prog_path);
	CHECK(e);
	CHECK(lookup_is(e, init_addr + init_size - 1, "_init", init_addr));
	name = elfsym__lookup(e, plt_addr, &start);
	CHECK(!name || start >= plt_addr);
	name = elfsym__lookup(e, init_addr + init_size, &start);
	CHECK(!name || start >= init_addr + init_size);
	elfsym__free(e);
}

/* A stripped shared library resolves its exports through .dynsym. */
static void test_stripped_shared_library(void)
{
	static struct nm_sym full[NM_MAX], dyn[NM_MAX];
	const struct nm_sym *hidden;
	const char *name;
	struct elfsym *e;
	int nfull, ndyn;

	CHECK(!has_section(lib_path, ".symtab"));
	CHECK(has_section(lib_path, ".dynsym"));
	nfull = read_nm(lib_full_path, false, full, NM_MAX);
	ndyn = read_nm(lib_path, true, dyn, NM_MAX);
	CHECK(nfull > 0 && ndyn > 0);
	e = elfsym__open(lib_path);
	CHECK(e);
	CHECK(elfsym__count(e) > 0);
	CHECK(lookup_nm_name(e, dyn, ndyn, "tp_lib_one", 0));
	CHECK(lookup_nm_name(e, dyn, ndyn, "tp_lib_two", 3));
	CHECK(lookup_nm_name(e, dyn, ndyn, "tp_lib_three", 1));
	/* The hidden function only existed in the stripped .symtab. */
	hidden = nm_find(full, nfull, "tp_lib_internal");
	CHECK(hidden);
	CHECK(!nm_find(dyn, ndyn, "tp_lib_internal"));
	name = elfsym__lookup(e, hidden->addr, NULL);
	CHECK(!name || strcmp(name, "tp_lib_internal") != 0);
	elfsym__free(e);

	/* Unstripped, the same address has its name. */
	e = elfsym__open(lib_full_path);
	CHECK(e);
	CHECK(lookup_is(e, hidden->addr + 1, "tp_lib_internal", hidden->addr));
	elfsym__free(e);
}

static void test_build_id(void)
{
	char path[PATH_MAX], want[128];
	const char *got;
	struct elfsym *e;

	CHECK(readelf_build_id(prog_path, want, sizeof(want)));
	CHECK(strlen(want) == 40);
	e = elfsym__open(prog_path);
	CHECK(e);
	got = elfsym__build_id(e);
	CHECK(got && !strcmp(got, want));
	elfsym__free(e);

	tpath(path, "noid");
	CHECK(sh("cc -O0 -Wl,--build-id=none -o '%s' '%s/prog.c'", path,
		 tmpdir));
	e = elfsym__open(path);
	CHECK(e);
	CHECK(!elfsym__build_id(e));
	elfsym__free(e);

	tpath(path, "hexid");
	CHECK(sh("cc -O0 -Wl,--build-id=0xDEADbeef00112233 -o '%s' "
		 "'%s/prog.c'", path, tmpdir));
	e = elfsym__open(path);
	CHECK(e);
	got = elfsym__build_id(e);
	CHECK(got && !strcmp(got, "deadbeef00112233"));
	elfsym__free(e);
	CHECK(!elfsym__build_id(NULL));
}

/* Little-endian field access for the ELF64 header of files made here. */
static uint64_t get_le(const unsigned char *p, int bytes)
{
	uint64_t v = 0;

	while (bytes--)
		v = v << 8 | p[bytes];
	return v;
}

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
	while (bytes--) {
		*p++ = v & 0xff;
		v >>= 8;
	}
}

/* Section headers gone entirely (e_shoff = e_shnum = e_shstrndx = 0):
 * no symbols, but the build ID comes from PT_NOTE and offsets map. */
static void test_no_section_headers(void)
{
	char path[PATH_MAX], want[128];
	unsigned char *buf = NULL;
	struct load_hdr loads[LOADS_MAX];
	struct elfsym *e;
	uint64_t vaddr = 0;
	size_t len = 0;
	int n;

	CHECK(readelf_build_id(prog_path, want, sizeof(want)));
	n = readelf_loads(prog_path, loads, LOADS_MAX);
	CHECK(n > 0);
	CHECK(read_file(prog_path, &buf, &len));
	CHECK(len > 64 && buf[4] == 2 /* ELFCLASS64 */ && buf[5] == 1);
	put_le(buf + 0x28, 0, 8);
	put_le(buf + 0x3c, 0, 2);
	put_le(buf + 0x3e, 0, 2);
	tpath(path, "noshdr");
	CHECK(write_file(path, buf, len));
	free(buf);
	e = elfsym__open(path);
	CHECK(e);
	CHECK(elfsym__count(e) == 0);
	CHECK(elfsym__build_id(e) && !strcmp(elfsym__build_id(e), want));
	CHECK(elfsym__offset_to_vaddr(e, loads[n - 1].offset, &vaddr) == 0);
	CHECK(vaddr == loads[n - 1].vaddr);
	CHECK(!elfsym__lookup(e, loads[0].vaddr, NULL));
	elfsym__free(e);
}

static bool covered_exactly(const struct load_hdr *l, int n, uint64_t off)
{
	int i;

	for (i = 0; i < n; i++)
		if (off >= l[i].offset && off < l[i].offset + l[i].filesz)
			return true;
	return false;
}

static void check_loads(const char *path)
{
	struct load_hdr l[LOADS_MAX];
	uint64_t vaddr, end = 0, below;
	int n, i, slack_checked = 0;
	struct elfsym *e;

	n = readelf_loads(path, l, LOADS_MAX);
	CHECK(n > 1);
	e = elfsym__open(path);
	CHECK(e);
	for (i = 0; i < n; i++) {
		vaddr = 0;
		CHECK(elfsym__offset_to_vaddr(e, l[i].offset, &vaddr) == 0);
		CHECK(vaddr == l[i].vaddr);
		CHECK(elfsym__offset_to_vaddr(e, l[i].offset + l[i].filesz - 1,
					      &vaddr) == 0);
		CHECK(vaddr == l[i].vaddr + l[i].filesz - 1);
		if (l[i].offset + l[i].filesz > end)
			end = l[i].offset + l[i].filesz;
		/* A page-aligned mapping starts below an unaligned p_offset:
		 * the page start and the byte before p_offset both map,
		 * unless another segment holds them. */
		below = l[i].offset & ~0xfffull;
		if (below == l[i].offset)
			continue;
		if (!covered_exactly(l, n, below)) {
			CHECK(elfsym__offset_to_vaddr(e, below, &vaddr) == 0);
			CHECK(vaddr == l[i].vaddr - (l[i].offset - below));
		}
		if (!covered_exactly(l, n, l[i].offset - 1)) {
			CHECK(elfsym__offset_to_vaddr(e, l[i].offset - 1,
						      &vaddr) == 0);
			CHECK(vaddr == l[i].vaddr - 1);
			slack_checked++;
		}
	}
	/* Default PIE and shared-library layouts both have an unaligned
	 * RW segment, so the page slack is exercised. */
	CHECK(slack_checked > 0);
	CHECK(elfsym__offset_to_vaddr(e, end, &vaddr) == -ENOENT);
	CHECK(elfsym__offset_to_vaddr(e, end + 0x100000, &vaddr) == -ENOENT);
	CHECK(elfsym__offset_to_vaddr(e, UINT64_MAX, &vaddr) == -ENOENT);
	elfsym__free(e);
	CHECK(elfsym__offset_to_vaddr(NULL, 0, &vaddr) == -ENOENT);
}

static void test_offset_to_vaddr_pie(void)
{
	check_loads(prog_path);
}

static void test_offset_to_vaddr_shared(void)
{
	check_loads(lib_path);
}

static void expect_errno(const char *path, int want)
{
	struct elfsym *e;

	errno = 0;
	e = elfsym__open(path);
	if (e || errno != want)
		fprintf(stderr, "  %s: got %p errno %d, want errno %d\n", path,
			(void *)e, errno, want);
	elfsym__free(e);
	CHECK(!e && errno == want);
}

static void test_not_elf(void)
{
	static const char text[] = "#!/bin/sh\necho not an elf file\n";
	char path[PATH_MAX];

	tpath(path, "script.sh");
	CHECK(write_file(path, text, sizeof(text) - 1));
	expect_errno(path, ENOEXEC);
	CHECK(!check_case_failed);
	tpath(path, "empty");
	CHECK(write_file(path, "", 0));
	expect_errno(path, ENOEXEC);
	CHECK(!check_case_failed);
	/* Not regular files: never opened in a way that could block. */
	expect_errno(tmpdir, ENOEXEC);
	CHECK(!check_case_failed);
	expect_errno("/dev/null", ENOEXEC);
	CHECK(!check_case_failed);
	tpath(path, "missing");
	expect_errno(path, ENOENT);
	CHECK(!check_case_failed);
	expect_errno(NULL, EINVAL);
	CHECK(!check_case_failed);
	elfsym__free(NULL);
	CHECK(elfsym__count(NULL) == 0);
	CHECK(!elfsym__lookup(NULL, 0x1000, NULL));
}

/* Whatever a corrupt file yields must be safe to use: NULL + EINVAL or
 * ENOEXEC, or a table whose every accessor works. */
static bool exercise(const char *path)
{
	uint64_t a, start, vaddr;
	const char *name, *id;
	struct elfsym *e;
	size_t len;

	errno = 0;
	e = elfsym__open(path);
	if (!e)
		return errno == EINVAL || errno == ENOEXEC;
	id = elfsym__build_id(e);
	if (id && strspn(id, "0123456789abcdef") != strlen(id))
		goto bad;
	for (a = 0; a < 0x6000; a += 7) {
		name = elfsym__lookup(e, a, &start);
		if (!name)
			continue;
		len = strlen(name);
		if (!len || len > 1024 || start > a)
			goto bad;
		elfsym__offset_to_vaddr(e, a, &vaddr);
	}
	elfsym__lookup(e, UINT64_MAX, &start);
	elfsym__free(e);
	return true;
bad:
	elfsym__free(e);
	return false;
}

static void test_truncated(void)
{
	unsigned char *buf = NULL;
	char path[PATH_MAX];
	size_t len = 0, cut;
	static const size_t cuts[] = { 200, 64, 63, 1000, 4096, 0x3000 };
	unsigned i;

	CHECK(read_file(prog_path, &buf, &len));
	tpath(path, "truncated");
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		cut = cuts[i] < len ? cuts[i] : len - 1;
		if (!write_file(path, buf, cut) || !exercise(path)) {
			fprintf(stderr, "  cut at %zu\n", cut);
			free(buf);
			CHECK(0);
		}
	}
	free(buf);
}

/* Deterministic pseudo-random bytes (xorshift), so failures repeat. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void test_garbage_section_headers(void)
{
	unsigned char *buf = NULL;
	char path[PATH_MAX];
	uint64_t shoff, shsize, i;
	size_t len = 0;
	bool ok;

	CHECK(read_file(prog_path, &buf, &len));
	shoff = get_le(buf + 0x28, 8);
	shsize = get_le(buf + 0x3a, 2) * get_le(buf + 0x3c, 2);
	ok = shoff && shoff + shsize <= len;
	for (i = 0; ok && i < shsize; i++)
		buf[shoff + i] = rng();
	tpath(path, "garbage-shdrs");
	ok = ok && write_file(path, buf, len) && exercise(path);
	free(buf);
	CHECK(ok);
}

/* Random byte flips, aimed mostly at the headers and tables libelf
 * parses, then the whole table exercised. */
static void test_corrupt_copies(void)
{
	unsigned char *orig = NULL, *buf = NULL;
	char path[PATH_MAX];
	size_t len = 0, pos;
	uint64_t shoff;
	int iter, k, flips;
	bool ok = true;

	CHECK(read_file(prog_path, &orig, &len));
	buf = malloc(len);
	shoff = get_le(orig + 0x28, 8);
	tpath(path, "corrupt");
	for (iter = 0; ok && buf && iter < 300; iter++) {
		memcpy(buf, orig, len);
		flips = 1 + rng() % 8;
		for (k = 0; k < flips; k++) {
			switch (rng() % 3) {
			case 0:		/* ELF and program headers */
				pos = rng() % 0x400;
				break;
			case 1:		/* section headers and what follows */
				pos = shoff ? shoff - 0x800 + rng() % 0x1000 : 0;
				break;
			default:
				pos = rng() % len;
				break;
			}
			if (pos < len)
				buf[pos] = rng();
		}
		ok = write_file(path, buf, len) && exercise(path);
		if (!ok)
			fprintf(stderr, "  failed at iteration %d\n", iter);
	}
	free(buf);
	free(orig);
	CHECK(ok);
}

/* Symbolized through this process's own mappings, like the agent does. */
__attribute__((noinline, used)) int tp_live_marker(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 7 + 1;
}

/* The file-backed mapping of addr: its path and the file offset. */
static bool addr_to_file(uintptr_t addr, char *path, uint64_t *offset)
{
	unsigned long long lo, hi, off;
	char line[PATH_MAX + 256];
	bool found = false;
	int pos = 0;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi, &off,
			   &pos) != 3 || addr < lo || addr >= hi)
			continue;
		if (line[pos] != '/')
			break;
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, PATH_MAX, "%s", line + pos);
		*offset = off + (addr - lo);
		found = true;
	}
	fclose(f);
	return found;
}

static bool symbolize_live(uintptr_t addr, char *name, size_t len,
			   char *path)
{
	uint64_t off = 0, vaddr = 0, start = 0;
	const char *sym;
	struct elfsym *e;
	bool ok = false;

	if (!addr_to_file(addr, path, &off))
		return false;
	e = elfsym__open(path);
	if (!e)
		return false;
	if (elfsym__offset_to_vaddr(e, off, &vaddr) == 0) {
		sym = elfsym__lookup(e, vaddr, &start);
		/* A function's own address is its symbol's start. */
		ok = sym && start == vaddr;
		if (ok)
			snprintf(name, len, "%s", sym);
	}
	elfsym__free(e);
	return ok;
}

static void test_live_self(void)
{
	char name[256], path[PATH_MAX], exe[PATH_MAX];
	int (*volatile fn)(int) = tp_live_marker;
	pid_t (*volatile libc_fn)(void) = getpid;
	ssize_t n;

	CHECK(fn(1) == 8);
	CHECK(symbolize_live((uintptr_t)fn, name, sizeof(name), path));
	CHECK(!strcmp(name, "tp_live_marker"));
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0);
	exe[n] = '\0';
	CHECK(!strcmp(path, exe));

	/* A libc function, in a file the agent would see stripped. A non-PIE
	 * build would hand back a PLT slot of this binary instead. */
	CHECK(symbolize_live((uintptr_t)libc_fn, name, sizeof(name), path));
	if (strcmp(path, exe) != 0)
		CHECK(strstr(name, "getpid"));
}

/* The function name of a location's line i, or NULL. */
static const char *line_name(const struct loctab *lt, uint32_t loc, size_t i)
{
	const struct loctab_location *l;

	if (!loc || loc > loctab__nlocations(lt))
		return NULL;
	l = loctab__location_at(lt, loc);
	if (i >= l->nlines)
		return NULL;
	return loctab__function_at(lt, loctab__lines(lt, l)[i].function)->name;
}

/* This process's frames resolved as the agent resolves a sample's: each
 * address named once per generation of the loctab, with its mapping
 * (file, build ID, what its lines hold) and source line. */
static void check_self_stack(struct symbolizer *z, struct proc *p,
			     struct loctab *lt, const char *exe,
			     const char *build_id)
{
	uintptr_t fn = (uintptr_t)tp_live_marker, lib = (uintptr_t)getpid;
	/* the leaf, a return address after fn's first byte, libc, and an
	 * address in no mapping */
	const uint64_t user[4] = { fn, fn + 2, lib + 1, 0x11 };
	const struct loctab_location *l;
	const struct loctab_mapping *m;
	const struct loctab_line *ln;
	uint32_t locs[4], again[4];
	size_t n;

	n = symbolizer__stack(z, p, user, 4, NULL, 0, locs);
	CHECK(n == 4);
	CHECK(loctab__nlocations(lt) == 4);
	l = loctab__location_at(lt, locs[0]);
	CHECK(l->address == fn);
	CHECK(loctab__location_at(lt, locs[1])->address == fn + 1);
	CHECK(!strcmp(line_name(lt, locs[0], 0), "tp_live_marker"));
	CHECK(!strcmp(line_name(lt, locs[1], 0), "tp_live_marker"));
	ln = loctab__lines(lt, l);
	CHECK(ln[0].line > 0);
	CHECK(strstr(loctab__function_at(lt, ln[0].function)->file,
		     "test_symbolize.c"));
	m = loctab__mapping_at(lt, l->mapping);
	CHECK(!strcmp(m->file, exe));
	CHECK(m->start <= fn && fn < m->limit);
	CHECK(build_id && m->build_id && !strcmp(m->build_id, build_id));
	CHECK(m->has_filenames && m->has_line_numbers);
	CHECK(strstr(line_name(lt, locs[2], 0), "getpid"));
	CHECK(loctab__location_at(lt, locs[2])->address == lib);
	l = loctab__location_at(lt, locs[3]);
	CHECK(l->mapping == 0 && l->address == 0x10);
	CHECK(l->nlines == 0);	/* no invented "[unknown]" */

	/* Seen before: the same locations, nothing new. */
	CHECK(symbolizer__stack(z, p, user, 4, NULL, 0, again) == 4);
	CHECK(!memcmp(again, locs, sizeof(locs)));
	CHECK(loctab__nlocations(lt) == 4);
}

static void test_symbolizer_self(void)
{
	char exe[PATH_MAX];
	struct proctable *t = proctable__new();
	struct ksymbolizer *ks = ksymbolizer__new(false);
	struct loctab *lt = loctab__new();
	struct symbolizer *z = t && ks && lt ? symbolizer__new(t, ks, lt) :
			       NULL;
	struct elfsym *e;
	struct proc *p;
	ssize_t n;

	CHECK(z);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0);
	exe[n] = '\0';
	e = elfsym__open(exe);
	CHECK(e);
	p = proctable__get(t, getpid(), 0, "test_symbolize");
	CHECK(p);
	check_self_stack(z, p, lt, exe, elfsym__build_id(e));
	CHECK(!check_case_failed);
	CHECK(symbolizer__stats(z)->user_frames == 8);
	/* Unmapped addresses are not cached: the maps may be reread. */
	CHECK(symbolizer__stats(z)->unmapped == 2);
	/* The next window: the table starts again, and so do the ids the
	 * symbolizer and the process's mappings kept. */
	loctab__reset(lt);
	check_self_stack(z, p, lt, exe, elfsym__build_id(e));
	CHECK(!check_case_failed);
	/* The kernel's mapping is made with a window's first stack. */
	CHECK(loctab__nmappings(lt) == 3);
	CHECK(!strcmp(loctab__mapping_at(lt, 1)->file, "[kernel.kallsyms]"));
	elfsym__free(e);
	symbolizer__free(z);
	loctab__free(lt);
	ksymbolizer__free(ks);
	proctable__free(t);
}

static bool tools_missing(void)
{
	return !sh("command -v cc nm readelf strip >/dev/null 2>&1");
}

/* Builds the binaries the file-based cases share. */
static bool build_fixtures(void)
{
	char src[PATH_MAX];

	tpath(src, "prog.c");
	if (!write_file(src, prog_src, sizeof(prog_src) - 1))
		return false;
	tpath(prog_path, "prog");
	if (!sh("cc -O0 -g -Wl,--build-id=sha1 -o '%s' '%s'", prog_path, src))
		return false;
	tpath(src, "lib.c");
	if (!write_file(src, lib_src, sizeof(lib_src) - 1))
		return false;
	tpath(lib_full_path, "libtp-full.so");
	tpath(lib_path, "libtp.so");
	return sh("cc -O1 -g -shared -fPIC -o '%s' '%s'", lib_full_path, src) &&
	       sh("cp '%s' '%s' && strip --strip-all '%s'", lib_full_path,
		  lib_path, lib_path);
}

int main(void)
{
	const char *why = NULL;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	if (tools_missing())
		why = "cc, nm, readelf or strip missing";
	else if (!build_fixtures())
		why = "could not build the test binaries";
	if (why) {
		SKIP(test_functions_match_nm, why);
		SKIP(test_past_function_end, why);
		SKIP(test_aliases_ifunc_nosize, why);
		SKIP(test_sizeless_bounded_by_section, why);
		SKIP(test_stripped_shared_library, why);
		SKIP(test_build_id, why);
		SKIP(test_no_section_headers, why);
		SKIP(test_offset_to_vaddr_pie, why);
		SKIP(test_offset_to_vaddr_shared, why);
		SKIP(test_truncated, why);
		SKIP(test_garbage_section_headers, why);
		SKIP(test_corrupt_copies, why);
	} else {
		RUN(test_functions_match_nm);
		RUN(test_past_function_end);
		RUN(test_aliases_ifunc_nosize);
		RUN(test_sizeless_bounded_by_section);
		RUN(test_stripped_shared_library);
		RUN(test_build_id);
		RUN(test_no_section_headers);
		RUN(test_offset_to_vaddr_pie);
		RUN(test_offset_to_vaddr_shared);
		RUN(test_truncated);
		RUN(test_garbage_section_headers);
		RUN(test_corrupt_copies);
	}
	RUN(test_not_elf);
	RUN(test_live_self);
	RUN(test_symbolizer_self);
	if (!sh("rm -rf '%s'", tmpdir))
		fprintf(stderr, "could not remove %s\n", tmpdir);
	CHECK_EXIT();
}
