/* Resolving a probe's function (funcsym.h). The binary is read with
 * libelf through a descriptor opened once; the probe is attached through
 * /proc/self/fd of that descriptor, so it lands in the file whose symbols
 * were read even if the path changes meanwhile. A library of a running
 * process is opened as its mapping (targetfile__open_mapped), never by a
 * path the process could swap. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/procfs.h"
#include "proc/targetfile.h"
#include "sizes/funcsym.h"

/* What the symbol tables say of a name. */
struct symfind {
	const char *name;
	bool has_symtab;
	int found;		/* functions of that name */
	bool ifunc;		/* one of them is an STT_GNU_IFUNC (glibc's
				 * memcpy: the default version is, the
				 * compatibility one is not) */
	GElf_Addr addr;
	GElf_Xword size;
	char clone[256];	/* a compiler clone's name (NAME.constprop.0) */
};

static void scan_symtab(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh,
			struct symfind *f)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	size_t len = strlen(f->name);

	for (size_t i = 0; data && i < n; i++) {
		GElf_Sym sym;
		const char *nm;
		int type;

		if (!gelf_getsym(data, i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		nm = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!nm)
			continue;
		if (!strcmp(nm, f->name)) {
			f->ifunc |= type == STT_GNU_IFUNC;
			/* .symtab and .dynsym name one function twice */
			if (f->found && sym.st_value == f->addr)
				continue;
			if (!f->found++) {
				f->addr = sym.st_value;
				f->size = sym.st_size;
			}
		} else if (!strncmp(nm, f->name, len) && nm[len] == '.' &&
			   !f->clone[0]) {
			snprintf(f->clone, sizeof(f->clone), "%s", nm);
		}
	}
}

static void find_symbol(Elf *elf, struct symfind *f)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			f->has_symtab = true;
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
			scan_symtab(elf, scn, &sh, f);
	}
}

/* The file offset of vaddr: through the executable PT_LOAD holding it. */
static bool vaddr_to_offset(Elf *elf, GElf_Addr vaddr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X))
			continue;
		if (vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

/* True when DWARF knows name as a function that was inlined: a
 * DW_TAG_subprogram with DW_AT_inline (an abstract instance), whose
 * code exists only inside its callers. */
static bool inlined_in_dwarf(int fd, const char *name)
{
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	Dwarf_Off off = 0, next;
	size_t hsize;
	bool found = false;

	if (!dw)
		return false;
	while (!found &&
	       dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, child;

		if (dwarf_offdie(dw, off + hsize, &cu) &&
		    dwarf_child(&cu, &child) == 0) {
			do {
				Dwarf_Attribute a;
				const char *nm;

				if (dwarf_tag(&child) != DW_TAG_subprogram)
					continue;
				nm = dwarf_diename(&child);
				if (nm && !strcmp(nm, name) &&
				    dwarf_attr(&child, DW_AT_inline, &a))
					found = true;
			} while (!found && dwarf_siblingof(&child, &child) == 0);
		}
		off = next;
	}
	dwarf_end(dw);
	return found;
}

struct libfind {
	const char *want;
	struct procfs_map m;
	char path[4096];
	bool found;
};

/* "libc" matches libc.so.6 and libc-2.36.so; "libc.so.6" itself. */
static bool lib_matches(const char *path, const char *want)
{
	const char *base = strrchr(path, '/');
	size_t n = strlen(want);

	base = base ? base + 1 : path;
	if (strncmp(base, want, n))
		return false;
	return base[n] == 0 || base[n] == '.' || base[n] == '-';
}

static int find_lib(const struct procfs_map *m, void *arg)
{
	struct libfind *lf = arg;

	if (lf->found || !m->ino || !procfs_map__exec(m) || !m->path ||
	    !lib_matches(m->path, lf->want))
		return 0;
	lf->m = *m;
	snprintf(lf->path, sizeof(lf->path), "%s", m->path);
	lf->m.path = lf->path;
	lf->found = true;
	return 0;
}

/* Opens the binary: returns a descriptor or -errno with why in err. */
static int open_binary(const char *binary, pid_t pid, const char *exe,
		       char *shown, size_t shownlen, char *err, size_t errlen)
{
	char path[64];
	int fd;

	if (!binary && pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
		snprintf(shown, shownlen, "%s", path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			snprintf(err, errlen, "cannot open %s: %s", path,
				 strerror(errno));
		return fd < 0 ? -errno : fd;
	}
	if (!binary)
		binary = exe;
	snprintf(shown, shownlen, "%s", binary);
	if (pid > 0 && !strchr(binary, '/')) {
		struct libfind lf = { .want = binary };

		procfs__read_maps(pid, find_lib, &lf);
		if (!lf.found) {
			snprintf(err, errlen, "no library named %s is mapped "
				 "executable in process %d", binary, (int)pid);
			return -ENOENT;
		}
		snprintf(shown, shownlen, "%s", lf.path);
		fd = targetfile__open_mapped(pid, lf.m.start, lf.m.end,
					     lf.path, lf.m.dev, lf.m.ino,
					     NULL, 0);
	} else if (!strchr(binary, '/') && binary != exe) {
		snprintf(err, errlen, "%s: a library is found by name only in "
			 "a running process (-p); give its path", binary);
		return -EINVAL;
	} else {
		/* A path the user gave (the command, or BINARY): theirs to
		 * choose, links included; it must be a regular file. */
		struct stat st;

		fd = open(binary, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
			close(fd);
			fd = -1;
			errno = ENOEXEC;
		}
		if (fd < 0)
			fd = -errno;
	}
	if (fd < 0)
		snprintf(err, errlen, "cannot open %s: %s", shown,
			 strerror(-fd));
	return fd;
}

/* Says why name has no entry in the binary. */
static int not_found(const struct symfind *sf, int fd, const char *shown,
		     char *err, size_t errlen)
{
	if (inlined_in_dwarf(fd, sf->name))
		snprintf(err, errlen, "%s: %s is inlined at every call site "
			 "(its DWARF has only inlined copies): there is no "
			 "entry to probe; mark it noinline, or probe its "
			 "caller", shown, sf->name);
	else if (sf->clone[0])
		snprintf(err, errlen, "no function %s in %s, only the "
			 "compiler's clone %s, which only some calls use: "
			 "name it to probe those", sf->name, shown, sf->clone);
	else if (!sf->has_symtab)
		snprintf(err, errlen, "no function %s in %s: the binary is "
			 "stripped (no .symtab) and %s is not exported; probe "
			 "an unstripped build", sf->name, shown, sf->name);
	else
		snprintf(err, errlen, "no function %s in %s", sf->name, shown);
	return -ENOENT;
}

int funcsym__resolve(const char *spec, pid_t pid, const char *exe,
		     struct funcsym *out, char *symname, size_t symlen,
		     char *err, size_t errlen)
{
	const char *colon = strrchr(spec, ':');
	char binary[4096];
	struct symfind sf = { 0 };
	Elf *elf;
	int fd, ret = 0;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	if (colon) {
		snprintf(binary, sizeof(binary), "%.*s", (int)(colon - spec),
			 spec);
		spec = colon + 1;
	}
	if (!*spec || (colon && !binary[0])) {
		snprintf(err, errlen, "--func '%s': expected [BINARY:]SYMBOL",
			 spec);
		return -EINVAL;
	}
	snprintf(symname, symlen, "%s", spec);
	fd = open_binary(colon ? binary : NULL, pid, exe, out->shown,
			 sizeof(out->shown), err, errlen);
	if (fd < 0)
		return fd;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snprintf(err, errlen, "%s is not an ELF file", out->shown);
		ret = -ENOEXEC;
		goto out;
	}
	sf.name = spec;
	find_symbol(elf, &sf);
	if (!sf.found) {
		ret = not_found(&sf, fd, out->shown, err, errlen);
		goto out;
	}
	if (sf.ifunc) {
		/* Its address is the resolver's, which runs once at load:
		 * a probe there would see no call, and say nothing. */
		snprintf(err, errlen, "%s in %s is an IFUNC: calls go to the "
			 "version its resolver chose at load time (for glibc, "
			 "__%s_avx2, __%s_evex, __%s_sse2...), not to %s; probe "
			 "that version (its symbol is in the debug symbols, "
			 "e.g. libc6-dbg, if not in the binary)", spec,
			 out->shown, spec, spec, spec, spec);
		ret = -ENOTSUP;
		goto out;
	}
	if (sf.found > 1)
		fprintf(stderr, "tagprof sizes: %d functions are named %s in "
			"%s; probing the first\n", sf.found, spec, out->shown);
	if (!vaddr_to_offset(elf, sf.addr, &out->offset)) {
		snprintf(err, errlen, "%s: %s at 0x%llx is in no executable "
			 "segment", out->shown, spec,
			 (unsigned long long)sf.addr);
		ret = -ENOEXEC;
		goto out;
	}
	out->size = sf.size;
	out->fd = fd;
	snprintf(out->path, sizeof(out->path), "/proc/self/fd/%d", fd);
out:
	if (elf)
		elf_end(elf);
	if (ret)
		close(fd);
	return ret;
}

void funcsym__close(struct funcsym *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}
