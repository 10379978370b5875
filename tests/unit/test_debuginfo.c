/* Debug files and DWARF on programs compiled here: the build-ID tree and
 * .gnu_debuglink (with CRC), refusals (another build, changed CRC,
 * truncated), source lines and inlined frames checked against binutils'
 * addr2line, the symbol cache shared by build ID and swept, the DWARF
 * budget, and the build ID read from a process's memory. */
#include "check.h"
#include "shell.h"
#include "sym/debuginfo.h"
#include "sym/elfsym.h"
#include "sym/symfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/tagprof-debuginfo.XXXXXX";

static const char prog_src[] =
	"static volatile int sink;\n"
	"static inline __attribute__((always_inline)) int tp_helper(int x)\n"
	"{\n"
	"	x ^= x >> 3;\n"
	"	x *= 0x2545f491;\n"
	"	return x + sink;\n"
	"}\n"
	"__attribute__((noinline)) int tp_outer(int n)\n"
	"{\n"
	"	int s = 0;\n"
	"	for (int i = 0; i < n; i++)\n"
	"		s += tp_helper(s + i);\n"
	"	return s;\n"
	"}\n"
	"__attribute__((noinline)) int tp_other(int n)\n"
	"{\n"
	"	return n * 7 + sink;\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	(void)argv;\n"
	"	return tp_outer(argc) + tp_other(argc);\n"
	"}\n";

/* The build ID of the file at path (a test's own file, so a plain open). */
static int peek_build_id(const char *path, char *out, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = elfsym__peek_build_id(fd, out, len);
	close(fd);
	return err;
}

static void tpath(char *buf, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", tmpdir, name);
}

/* Output of a command, first line, trailing newline cut. */
static bool sh_out(char *out, size_t len, const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	FILE *p;
	bool ok;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	if (!p)
		return false;
	ok = fgets(out, len, p) != NULL;
	pclose(p);
	if (ok)
		out[strcspn(out, "\n")] = '\0';
	return ok && *out;
}

/* Address and size of a function, as nm says. */
static bool nm_func(const char *path, const char *name, uint64_t *addr,
		    uint64_t *size)
{
	char line[256];
	unsigned long long a, s;

	if (!sh_out(line, sizeof(line), "nm -S %s | awk '$4 == \"%s\"'", path, name) ||
	    sscanf(line, "%llx %llx", &a, &s) != 2)
		return false;
	*addr = a;
	*size = s;
	return true;
}

static char prog[PATH_MAX], prog_debug[PATH_MAX], stripped[PATH_MAX],
	linked[PATH_MAX], build_id[160];
static uint64_t outer_addr, outer_size, other_addr, other_size;

/* prog: -O2 -g; stripped: its stripped copy (debug file elsewhere);
 * linked: another stripped copy with a .gnu_debuglink to linked.debug. */
static bool setup(void)
{
	char src[PATH_MAX];
	FILE *f;

	tpath(src, "prog.c");
	tpath(prog, "prog");
	tpath(prog_debug, "prog.debug");
	tpath(stripped, "stripped");
	tpath(linked, "linked");
	f = fopen(src, "w");
	if (!f || fputs(prog_src, f) < 0 || fclose(f))
		return false;
	return sh("cc -O2 -g -Wl,--build-id -o %s %s", prog, src) &&
	       sh("objcopy --only-keep-debug %s %s", prog, prog_debug) &&
	       sh("strip --strip-all -o %s %s", stripped, prog) &&
	       sh("cd %s && cp stripped linked && cp prog.debug linked.debug && "
		  "objcopy --add-gnu-debuglink=linked.debug linked", tmpdir) &&
	       peek_build_id(prog, build_id, sizeof(build_id)) == 0 &&
	       nm_func(prog, "tp_outer", &outer_addr, &outer_size) &&
	       nm_func(prog, "tp_other", &other_addr, &other_size);
}

static void set_debug_dirs(const char *sub)
{
	char dir[PATH_MAX];

	tpath(dir, sub);
	setenv("TAGPROF_DEBUG_DIRS", dir, 1);
}

/* Places file as DIR/.build-id/xx/rest.debug for this test's build ID. */
static bool place_by_id(const char *sub, const char *file)
{
	return sh("mkdir -p %s/%s/.build-id/%.2s && cp %s %s/%s/.build-id/%.2s/%s.debug",
		  tmpdir, sub, build_id, file, tmpdir, sub, build_id,
		  build_id + 2);
}

static struct elfsym *find(const char *path, const char *link, uint32_t crc,
			   char **found, struct debuginfo_stats *st)
{
	struct debug_target t = {
		.path = path, .build_id = build_id, .debuglink = link, .crc = crc,
	};

	bool in_dir;

	return debuginfo__find(&t, found, &in_dir, st);
}

static void test_by_build_id(void)
{
	struct debuginfo_stats st = { 0 };
	struct elfsym *e;
	char *found = NULL;

	CHECK(place_by_id("dbg1", prog_debug));
	/* A relative directory is ignored. */
	setenv("TAGPROF_DEBUG_DIRS", "relative/dir", 1);
	e = find(stripped, NULL, 0, &found, &st);
	/* Counted once, by the symbol cache, for a stripped binary only. */
	CHECK(!e && st.debug_missing == 0);
	set_debug_dirs("dbg1");
	e = find(stripped, NULL, 0, &found, &st);
	CHECK(e && found && strstr(found, ".build-id/"));
	CHECK(st.debug_by_build_id == 1);
	CHECK(elfsym__has_symtab(e) && elfsym__has_dwarf(e));
	CHECK(elfsym__lookup(e, outer_addr + 1, NULL) &&
	      !strcmp(elfsym__lookup(e, outer_addr + 1, NULL), "tp_outer"));
	elfsym__free(e);
	free(found);
}

static void test_by_debuglink(void)
{
	struct debuginfo_stats st = { 0 };
	const struct elfsym *bin;
	struct elfsym *e, *l;
	char *found = NULL, dbg[PATH_MAX];
	const char *name;
	uint32_t crc = 0, crc2 = 0;

	l = elfsym__open(linked);
	CHECK(l);
	bin = l;
	name = elfsym__debuglink(bin, &crc);
	CHECK(name && !strcmp(name, "linked.debug"));
	tpath(dbg, "linked.debug");
	CHECK(debuginfo__file_crc(dbg, &crc2) == 0 && crc == crc2);
	set_debug_dirs("empty");
	e = find(linked, name, crc, &found, &st);
	CHECK(e && st.debug_by_link == 1 && !strcmp(found, dbg));
	elfsym__free(e);
	free(found);
	/* The debug file changed since the link was made. */
	CHECK(sh("printf x >> %s", dbg));
	e = find(linked, name, crc, &found, &st);
	CHECK(!e && st.debug_crc_mismatch == 1);
	/* In the .debug subdirectory, intact. */
	CHECK(sh("mkdir -p %s/.debug && cp %s/prog.debug %s/.debug/linked.debug",
		 tmpdir, tmpdir, tmpdir));
	e = find(linked, name, crc, &found, &st);
	CHECK(e && strstr(found, "/.debug/linked.debug"));
	elfsym__free(e);
	free(found);
	elfsym__free(l);
}

/* Issue 15: a debuglink is a file name. One naming a path (here one
 * that leads to the intact debug file, and one out of every directory)
 * is refused unopened and counted. */
static void test_debuglink_path(void)
{
	struct debuginfo_stats st = { 0 };
	struct elfsym *e;
	char *found = NULL, dbg[PATH_MAX];
	uint32_t crc = 0;

	CHECK(sh("mkdir -p %s/.debug && cp %s/prog.debug %s/.debug/path.debug",
		 tmpdir, tmpdir, tmpdir));
	tpath(dbg, ".debug/path.debug");
	CHECK(debuginfo__file_crc(dbg, &crc) == 0);
	set_debug_dirs("empty");
	/* the same name without the path is found: the file is usable */
	CHECK(sh("cp %s %s/path.debug", dbg, tmpdir));
	e = find(linked, "path.debug", crc, &found, &st);
	CHECK(e && st.debug_by_link == 1);
	elfsym__free(e);
	free(found);
	found = NULL;
	e = find(linked, "./.debug/path.debug", crc, &found, &st);
	CHECK(!e && !found && st.debug_link_path == 1);
	e = find(linked, "../../../../../../etc/shadow", crc, &found, &st);
	CHECK(!e && !found && st.debug_link_path == 2 &&
	      st.debug_crc_mismatch == 0 && st.debug_by_link == 1);
}

static void test_refused(void)
{
	struct debuginfo_stats st = { 0 };
	char other[PATH_MAX], cut[PATH_MAX];
	struct elfsym *e;
	char *found = NULL;

	/* Another build's debug file at this build ID's path. */
	tpath(other, "other");
	CHECK(sh("cc -O2 -g -o %s -x c - <<'EOF'\nint main(void){return 3;}\nEOF",
		 other));
	CHECK(place_by_id("dbg2", other));
	set_debug_dirs("dbg2");
	e = find(stripped, NULL, 0, &found, &st);
	CHECK(!e && st.debug_build_id_mismatch == 1);
	/* A truncated copy of the right one. */
	tpath(cut, "cut.debug");
	CHECK(sh("head -c 3000 %s > %s", prog_debug, cut));
	CHECK(place_by_id("dbg3", cut));
	set_debug_dirs("dbg3");
	e = find(stripped, NULL, 0, &found, &st);
	CHECK(!e && st.debug_bad == 1);
	/* Both directories: the bad ones are passed over, the good one
	 * found. */
	setenv("TAGPROF_DEBUG_DIRS", "/nonexistent", 1);
	set_debug_dirs("dbg3");
	{
		char dirs[3 * PATH_MAX];

		snprintf(dirs, sizeof(dirs), "%s/dbg2:%s/dbg3:%s/dbg1", tmpdir,
			 tmpdir, tmpdir);
		setenv("TAGPROF_DEBUG_DIRS", dirs, 1);
	}
	e = find(stripped, NULL, 0, &found, &st);
	CHECK(e && strstr(found, "/dbg1/"));
	CHECK(st.debug_build_id_mismatch == 2 && st.debug_bad == 2);
	elfsym__free(e);
	free(found);
}

/* Our frames for addr against addr2line -f -i on the unstripped file. */
static bool matches_addr2line(struct symcache *c, struct symfile *sf,
			      uint64_t addr, size_t *nframes)
{
	struct symframe fr[16];
	char cmd[PATH_MAX + 64], fn[512], loc[PATH_MAX + 32];
	size_t n = symfile__lookup(c, sf, addr, fr, 16), i = 0;
	const char *base, *colon;
	FILE *p;
	bool ok = true;

	*nframes = n;
	snprintf(cmd, sizeof(cmd), "addr2line -f -i -e %s %" PRIx64, prog, addr);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (fgets(fn, sizeof(fn), p) && fgets(loc, sizeof(loc), p)) {
		fn[strcspn(fn, "\n")] = '\0';
		loc[strcspn(loc, "\n ")] = '\0';
		colon = strrchr(loc, ':');
		if (i >= n || !fr[i].name || strcmp(fr[i].name, fn) || !colon ||
		    !fr[i].file || (base = strrchr(fr[i].file, '/'),
				    strncmp(base ? base + 1 : fr[i].file,
					    strrchr(loc, '/') ? strrchr(loc, '/') + 1 : loc,
					    colon - (strrchr(loc, '/') ? strrchr(loc, '/') + 1 : loc))) ||
		    fr[i].line != atoi(colon + 1)) {
			fprintf(stderr, "  %#" PRIx64 " frame %zu: addr2line %s %s, ours %s %s:%d\n",
				addr, i, fn, loc, i < n && fr[i].name ? fr[i].name : "-",
				i < n && fr[i].file ? fr[i].file : "-", i < n ? fr[i].line : 0);
			ok = false;
		}
		i++;
	}
	pclose(p);
	if (i != n) {
		fprintf(stderr, "  %#" PRIx64 ": addr2line %zu frames, ours %zu\n", addr, i, n);
		ok = false;
	}
	return ok;
}

/* The stripped binary through the cache: names from the debug file, lines
 * and inlined frames from its DWARF, as addr2line sees them in the
 * unstripped one. */
static void test_lines_and_inlines(void)
{
	struct debuginfo_stats st = { 0 };
	struct symfile_source src = { .path = stripped, .build_id = build_id,
				      .orig_path = stripped };
	struct symcache *c = symcache__new(&st);
	struct symframe fr[8];
	struct symfile *sf;
	size_t n, inlined = 0;

	CHECK(c);
	set_debug_dirs("dbg1");
	sf = symcache__get(c, &src);
	CHECK(sf && symfile__has_debug_file(sf) && symfile__has_dwarf(sf));
	CHECK(!elfsym__has_symtab(symfile__elfsym(sf)));
	for (uint64_t a = outer_addr; a < outer_addr + outer_size; a++) {
		if (!matches_addr2line(c, sf, a, &n)) {
			symcache__free(c);
			CHECK(0);
		}
		if (n == 2)
			inlined++;
	}
	CHECK(inlined > 0);
	n = symfile__lookup(c, sf, other_addr, fr, 8);
	CHECK(n == 1 && !strcmp(fr[0].name, "tp_other") && fr[0].line == 17);
	CHECK(st.dwarf_opened == 1 && st.dwarf_errors == 0);
	/* Only one frame wanted: the function holding the code. */
	for (uint64_t a = outer_addr; a < outer_addr + outer_size; a++) {
		n = symfile__lookup(c, sf, a, fr, 1);
		if (n != 1 || strcmp(fr[0].name, "tp_outer")) {
			symcache__free(c);
			CHECK(0);
		}
	}
	symcache__put(c, sf);
	symcache__free(c);
}

/* Copies of one build share one entry; unused entries are swept. */
static void test_cache_shared(void)
{
	struct debuginfo_stats st = { 0 };
	struct symcache *c = symcache__new(&st);
	char copy[PATH_MAX];
	struct symfile *a, *b, *d;

	CHECK(c);
	tpath(copy, "copy");
	CHECK(sh("cp %s %s", prog, copy));
	a = symcache__get(c, &(struct symfile_source){ .path = prog, .build_id = build_id });
	b = symcache__get(c, &(struct symfile_source){ .path = copy, .build_id = build_id });
	CHECK(a && a == b && symcache__count(c) == 1 && st.shared == 1 && st.files == 1);
	/* Without a build ID, per file. */
	d = symcache__get(c, &(struct symfile_source){ .path = copy });
	CHECK(d && d != a && symcache__count(c) == 2);
	/* A build ID the file does not have: refused. */
	CHECK(!symcache__get(c, &(struct symfile_source){ .path = copy,
							 .build_id = "00112233" }) &&
	      errno == ESTALE);
	symcache__put(c, a);
	symcache__sweep(c);
	CHECK(symcache__count(c) == 2);
	symcache__put(c, b);
	symcache__put(c, d);
	symcache__set_keep(c, &(struct symcache_keep){ 0, 64, 8 << 20 });
	symcache__sweep(c);
	CHECK(symcache__count(c) == 0 && st.unused_freed == 2);
	symcache__free(c);
}

/* Two entries of one build: prog by its build ID, and a copy of it (named
 * name) by path. */
static bool prog_and_copy(struct symcache *c, const char *name,
			  struct symfile **a, struct symfile **d)
{
	char copy[PATH_MAX];

	tpath(copy, name);
	if (!sh("cp %s %s", prog, copy))
		return false;
	*a = symcache__get(c, &(struct symfile_source){ .path = prog, .build_id = build_id });
	*d = symcache__get(c, &(struct symfile_source){ .path = copy });
	return *a && *d;
}

/* Two files in use whose DWARF passes the budget together: the one opened
 * last waits a second (named by symbols alone, counted) instead of closing
 * the other, and neither is read again at each lookup. */
static void test_dwarf_no_thrash(void)
{
	struct debuginfo_stats st = { 0 };
	struct symcache *c = symcache__new(&st);
	struct symframe fr[4];
	struct symfile *a, *d;
	uint64_t one;
	size_t n;
	int i;

	CHECK(c);
	CHECK(prog_and_copy(c, "copy-thrash", &a, &d) && a != d);
	n = symfile__lookup(c, a, other_addr, fr, 4);
	CHECK(n == 1 && fr[0].line == 17);
	one = symcache__dwarf_bytes(c);
	CHECK(one > 0);
	/* room for one and a half: the budget is an eighth of max-memory */
	symcache__set_memory(c, one * 3 / 2 * SYMCACHE_DWARF_SHARE);
	for (i = 0; i < 100; i++) {
		n = symfile__lookup(c, d, other_addr, fr, 4);
		CHECK(n == 1 && !strcmp(fr[0].name, "tp_other") && !fr[0].line);
		n = symfile__lookup(c, a, other_addr, fr, 4);
		CHECK(n == 1 && fr[0].line == 17);
	}
	CHECK(st.dwarf_opened == 2 && st.dwarf_evicted == 0 && st.dwarf_deferred == 100);
	CHECK(symcache__dwarf_bytes(c) == one);
	usleep(SYMCACHE_DWARF_MIN_OPEN_NS / 1000 + 50000);
	/* a second on, the other's turn: a is closed for it */
	n = symfile__lookup(c, d, other_addr, fr, 4);
	CHECK(n == 1 && fr[0].line == 17);
	CHECK(st.dwarf_opened == 3 && st.dwarf_evicted == 1);
	symcache__put(c, a);
	symcache__put(c, d);
	symcache__free(c);
}

/* A handle in use is opened afresh at a sweep once old enough (libdw's
 * state of the lookups before goes with the old one), and names as before. */
static void test_dwarf_restarted(void)
{
	struct debuginfo_stats st = { 0 };
	struct symcache *c = symcache__new(&st);
	struct symframe fr[4];
	struct symfile *a;
	uint64_t one;
	size_t n;

	CHECK(c);
	a = symcache__get(c, &(struct symfile_source){ .path = prog, .build_id = build_id });
	CHECK(a);
	n = symfile__lookup(c, a, other_addr, fr, 4);
	CHECK(n == 1 && fr[0].line == 17);
	one = symcache__dwarf_bytes(c);
	symcache__sweep(c);
	CHECK(st.dwarf_restarted == 0 && symcache__dwarf_bytes(c) == one);
	symcache__set_dwarf_restart(c, 1);
	symcache__sweep(c);
	CHECK(st.dwarf_restarted == 1 && symcache__dwarf_bytes(c) == 0);
	n = symfile__lookup(c, a, other_addr, fr, 4);
	CHECK(n == 1 && fr[0].line == 17 && st.dwarf_opened == 2);
	CHECK(symcache__dwarf_bytes(c) == one);
	symcache__put(c, a);
	symcache__free(c);
}

/* Files no binary uses stay for the next one, longest unused going first
 * when over the bounds. */
static void test_cache_keeps_unused(void)
{
	struct debuginfo_stats st = { 0 };
	struct symcache *c = symcache__new(&st);
	struct symfile *a, *d;
	uint64_t bytes;

	CHECK(c);
	CHECK(prog_and_copy(c, "copy-kept", &a, &d) && st.files == 2);
	CHECK(symcache__unused(c, &bytes) == 0 && bytes == 0);
	symcache__put(c, a);
	usleep(1000);
	symcache__put(c, d);
	symcache__sweep(c);
	CHECK(symcache__count(c) == 2 && st.unused_freed == 0);
	CHECK(symcache__unused(c, &bytes) == 2 && bytes > 0);
	/* Used again: the same file, not loaded anew. */
	CHECK(symcache__get(c, &(struct symfile_source){ .path = prog,
					.build_id = build_id }) == a);
	CHECK(st.files == 2 && st.unused_reused == 1);
	symcache__put(c, a);	/* now the most recently unused */
	/* One kept at most: the one unused longest goes. */
	symcache__set_keep(c, &(struct symcache_keep){ 600ull * 1000000000, 1,
						       8 << 20 });
	symcache__sweep(c);
	CHECK(symcache__count(c) == 1 && st.unused_freed == 1);
	CHECK(symcache__find(c, build_id) == a);
	/* Their symbols over the bytes allowed: none kept. */
	symcache__set_keep(c, &(struct symcache_keep){ 600ull * 1000000000, 64,
						       1 });
	symcache__sweep(c);
	CHECK(symcache__count(c) == 0 && st.unused_freed == 2);
	CHECK(symcache__unused(c, &bytes) == 0 && bytes == 0);
	symcache__free(c);
}

/* A file's DWARF is opened by the path of its latest user: the first
 * one's (a process's map_files) goes with that process. */
static void test_dwarf_latest_path(void)
{
	struct debuginfo_stats st = { 0 };
	struct symcache *c = symcache__new(&st);
	char first[PATH_MAX];
	struct symframe fr[4];
	struct symfile *sf;
	size_t n;

	CHECK(c);
	tpath(first, "first-user");
	CHECK(sh("cp %s %s", prog, first));
	sf = symcache__get(c, &(struct symfile_source){ .path = first,
						      .build_id = build_id });
	CHECK(sf && symfile__has_dwarf(sf));
	symcache__put(c, sf);
	CHECK(unlink(first) == 0);
	/* The same build, by a path that is still there: kept, not read
	 * again, and its DWARF (not opened so far) comes from here. */
	CHECK(symcache__get(c, &(struct symfile_source){ .path = prog,
					.build_id = build_id }) == sf);
	n = symfile__lookup(c, sf, other_addr, fr, 4);
	CHECK(n == 1 && !strcmp(fr[0].name, "tp_other") && fr[0].line == 17);
	CHECK(st.files == 1 && st.dwarf_opened == 1);
	symcache__put(c, sf);
	symcache__free(c);
}

/* DWARF over the budget: names, no lines; within it, lines. */
static void test_dwarf_budget(void)
{
	struct debuginfo_stats st = { 0 };
	struct symcache *c;
	struct symframe fr[4];
	struct symfile *sf;
	size_t n;

	setenv("TAGPROF_DWARF_MAX_MB", "0", 1);
	c = symcache__new(&st);
	unsetenv("TAGPROF_DWARF_MAX_MB");
	CHECK(c);
	sf = symcache__get(c, &(struct symfile_source){ .path = prog, .build_id = build_id });
	CHECK(sf);
	n = symfile__lookup(c, sf, other_addr, fr, 4);
	CHECK(n == 1 && !strcmp(fr[0].name, "tp_other") && !fr[0].file && !fr[0].line);
	CHECK(symcache__dwarf_bytes(c) == 0);
	symcache__put(c, sf);
	symcache__free(c);
}

/* A corrupt DWARF section: no crash, errors counted or no lines. */
static void test_corrupt_dwarf(void)
{
	struct debuginfo_stats st = { 0 };
	struct symcache *c = symcache__new(&st);
	char bad[PATH_MAX], line[64];
	struct symframe fr[8];
	struct symfile *sf;
	unsigned long long off, size;

	CHECK(c);
	tpath(bad, "bad-dwarf");
	CHECK(sh("cp %s %s", prog, bad));
	/* Overwrite .debug_info with 0xff bytes. */
	CHECK(sh_out(line, sizeof(line),
		     "readelf -SW %s | awk '$2 == \".debug_info\" { print $5, $6 }'", bad));
	CHECK(sscanf(line, "%llx %llx", &off, &size) == 2 && size > 16);
	CHECK(sh("dd if=/dev/zero bs=1 count=%llu seek=%llu conv=notrunc of=%s 2>/dev/null && "
		 "printf '\\377\\377\\377\\377\\377\\377\\377\\377' | "
		 "dd bs=1 seek=%llu conv=notrunc of=%s 2>/dev/null",
		 size - 16, off + 16, bad, off, bad));
	sf = symcache__get(c, &(struct symfile_source){ .path = bad });
	CHECK(sf);
	for (uint64_t a = outer_addr; a < outer_addr + outer_size; a++)
		symfile__lookup(c, sf, a, fr, 8);
	/* The symbol table still names the function. */
	CHECK(symfile__lookup(c, sf, other_addr, fr, 8) >= 1);
	CHECK(fr[0].name && !strcmp(fr[0].name, "tp_other"));
	fprintf(stderr, "  corrupt DWARF: %" PRIu64 " opened, %" PRIu64 " errors\n",
		st.dwarf_opened, st.dwarf_errors);
	CHECK(st.dwarf_errors > 0);
	symcache__put(c, sf);
	symcache__free(c);
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

/* Random bytes flipped in the DWARF sections, then every address of
 * tp_outer looked up: no crash (run under a sanitizer to see more); the
 * symbol table keeps naming the function. */
static void test_fuzz_dwarf(void)
{
	char line[64], path[PATH_MAX], cmd[PATH_MAX + 64];
	unsigned long long lo, hi;
	unsigned char *orig, *buf;
	struct symframe fr[16];
	size_t len;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "readelf -SW %s | awk '$2 ~ /^.debug_/ { print $5, $6 }'", prog);
	f = popen(cmd, "r");
	CHECK(f);
	lo = ~0ull;
	hi = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long o, sz;

		if (sscanf(line, "%llx %llx", &o, &sz) != 2)
			continue;
		lo = o < lo ? o : lo;
		hi = o + sz > hi ? o + sz : hi;
	}
	pclose(f);
	CHECK(hi > lo);
	f = fopen(prog, "rb");
	CHECK(f);
	orig = malloc(1 << 22);
	buf = malloc(1 << 22);
	len = orig ? fread(orig, 1, 1 << 22, f) : 0;
	fclose(f);
	CHECK(orig && buf && len > hi);
	tpath(path, "fuzzed");
	for (int iter = 0; iter < 150; iter++) {
		struct debuginfo_stats st = { 0 };
		struct symcache *c = symcache__new(&st);
		struct symfile *sf;
		int flips = 1 + rng() % 16;

		memcpy(buf, orig, len);
		for (int k = 0; k < flips; k++)
			buf[lo + rng() % (hi - lo)] = rng();
		f = fopen(path, "wb");
		if (!c || !f || fwrite(buf, 1, len, f) != len) {
			if (f)
				fclose(f);
			symcache__free(c);
			free(orig);
			free(buf);
			CHECK(0);
		}
		fclose(f);
		sf = symcache__get(c, &(struct symfile_source){ .path = path });
		for (uint64_t a = outer_addr; sf && a < outer_addr + outer_size; a++)
			symfile__lookup(c, sf, a, fr, 16);
		if (sf && (symfile__lookup(c, sf, other_addr, fr, 16) < 1 ||
			   strcmp(fr[0].name, "tp_other"))) {
			fprintf(stderr, "  iteration %d: tp_other not named\n", iter);
			symcache__free(c);
			free(orig);
			free(buf);
			CHECK(0);
		}
		symcache__put(c, sf);
		symcache__free(c);
	}
	free(orig);
	free(buf);
}

/* This process's own build ID, read from its memory. */
static void test_mem_build_id(void)
{
	char line[512], path[PATH_MAX], want[160], got[160];
	unsigned long long start, off;
	bool found = false;
	FILE *f;

	CHECK(peek_build_id("/proc/self/exe", want, sizeof(want)) == 0);
	CHECK(check_read_exe(path, sizeof(path)));
	f = fopen("/proc/self/maps", "r");
	CHECK(f);
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (!p || sscanf(line, "%llx-%*[0-9a-f] %*s %llx", &start, &off) != 2 || off)
			continue;
		p[strcspn(p, "\n")] = '\0';
		found = !strncmp(p, path, strlen(p));
	}
	fclose(f);
	CHECK(found);
	CHECK(elfsym__mem_build_id(getpid(), start, got, sizeof(got)) == 0);
	CHECK(!strcmp(got, want));
	/* Not an ELF header there. */
	CHECK(elfsym__mem_build_id(getpid(), (uintptr_t)prog_src, got,
				   sizeof(got)) == -ENOEXEC);
	CHECK(elfsym__mem_build_id(getpid(), 0, got, sizeof(got)) == -EIO);
	/* No such process. */
	CHECK(elfsym__mem_build_id(INT_MAX, start, got, sizeof(got)) == -EIO);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	if (!setup()) {
		SKIP(test_debuginfo, "cannot build the test programs (cc, objcopy, strip, nm)");
	} else {
		RUN(test_by_build_id);
		RUN(test_by_debuglink);
		RUN(test_debuglink_path);
		RUN(test_refused);
		RUN(test_lines_and_inlines);
		RUN(test_cache_shared);
		RUN(test_cache_keeps_unused);
		RUN(test_dwarf_latest_path);
		RUN(test_dwarf_budget);
		RUN(test_dwarf_no_thrash);
		RUN(test_dwarf_restarted);
		RUN(test_corrupt_dwarf);
		RUN(test_fuzz_dwarf);
	}
	RUN(test_mem_build_id);
	check_remove_dir(tmpdir);
	CHECK_EXIT();
}
