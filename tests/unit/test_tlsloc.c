/* TLS variable discovery on real processes: programs compiled here with cc
 * for each TLS access model set otel_thread_ctx_v1 in two threads and
 * print its address and their fsbase; tlsloc__find's answer, followed the
 * way the BPF program will (fsbase + tpoff, or through the DTV), must land
 * on that address and read the value set. */
#include "check.h"
#include "shell.h"
#include "proc/procfs.h"
#include "proc/targetfile.h"
#include "proc/tlsloc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/tagprof-tlsloc.XXXXXX";

#define VAR "otel_thread_ctx_v1"
#define MAIN_VAL 0x5eed00000000a0a0ull
#define THREAD_VAL 0x5eed00000000b0b0ull

/* Shared by every program: sets the variable in the main thread and in a
 * second one, reports "T fsbase address value" for each, then "READY",
 * and waits for stdin to close (or to be killed). */
static const char main_src[] =
	"#define _GNU_SOURCE\n"
	"#include <asm/prctl.h>\n"
	"#include <pthread.h>\n"
	"#include <signal.h>\n"
	"#include <stdio.h>\n"
	"#include <sys/prctl.h>\n"
	"#include <sys/syscall.h>\n"
	"#include <unistd.h>\n"
	"typedef void **(*getter_t)(void);\n"
	"getter_t tp_resolve(int argc, char **argv);\n"
	"static getter_t get;\n"
	"static pthread_barrier_t bar;\n"
	"static void report(unsigned long val)\n"
	"{\n"
	"	unsigned long fs = 0;\n"
	"	void **p = get();\n"
	"	*p = (void *)val;\n"
	"	syscall(SYS_arch_prctl, ARCH_GET_FS, &fs);\n"
	"	printf(\"T %lx %lx %lx\\n\", fs, (unsigned long)p, val);\n"
	"	fflush(stdout);\n"
	"}\n"
	"static void *thread_main(void *arg)\n"
	"{\n"
	"	(void)arg;\n"
	"	report(0x5eed00000000b0b0ul);\n"
	"	pthread_barrier_wait(&bar);\n"
	"	for (;;)\n"
	"		pause();\n"
	"	return NULL;\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	pthread_t t;\n"
	"	char c;\n"
	"	prctl(PR_SET_PDEATHSIG, SIGKILL);\n"
	"	get = tp_resolve(argc, argv);\n"
	"	if (!get)\n"
	"		return 2;\n"
	"	report(0x5eed00000000a0a0ul);\n"
	"	pthread_barrier_init(&bar, NULL, 2);\n"
	"	if (pthread_create(&t, NULL, thread_main, NULL))\n"
	"		return 3;\n"
	"	pthread_barrier_wait(&bar);\n"
	"	printf(\"READY\\n\");\n"
	"	fflush(stdout);\n"
	"	while (read(0, &c, 1) > 0)\n"
	"		;\n"
	"	return 0;\n"
	"}\n";

/* The variable in the executable (local-exec), after other TLS data and
 * over-aligned, so that the block's size and alignment both matter. */
static const char exe_var_src[] =
	"#include <stdint.h>\n"
	"typedef void **(*getter_t)(void);\n"
	"__thread int tp_pad1 = 5;\n"
	"__thread char tp_pad2[3];\n"
	"__thread void *" VAR " __attribute__((aligned(64)));\n"
	"const uint32_t custom_labels_abi_version = 1;\n"
	"__attribute__((noinline)) void **tl_get(void)\n"
	"{\n"
	"	return &" VAR ";\n"
	"}\n"
	"getter_t tp_resolve(int argc, char **argv)\n"
	"{\n"
	"	(void)argc;\n"
	"	(void)argv;\n"
	"	tp_pad1++;\n"
	"	tp_pad2[0]++;\n"
	"	return tl_get;\n"
	"}\n";

/* The variable in a shared library, not at offset 0 of its block. The
 * access model comes from the compiler flags; -DBIG makes the block too
 * large for the static TLS surplus that dlopen() can use. */
static const char lib_src[] =
	"__thread long tp_lib_pad = 3;\n"
	"__thread void *" VAR ";\n"
	"#ifdef BIG\n"
	"__thread char tp_lib_big[1 << 16];\n"
	"#endif\n"
	"__attribute__((visibility(\"default\"))) void **tl_get(void)\n"
	"{\n"
	"	return &" VAR ";\n"
	"}\n";

/* A library that defines the variable but never touches it; with -DSIB it
 * touches another variable of its own. */
static const char lib_def_src[] =
	"__thread void *" VAR ";\n"
	"#ifdef SIB\n"
	"__thread long tp_other = 3;\n"
	"long tp_other_get(void)\n"
	"{\n"
	"	return tp_other;\n"
	"}\n"
	"#endif\n";

/* The executable touches the library's variable (initial-exec, from a
 * PIE), and the library's own variable when it has one. */
static const char use_extern_src[] =
	"typedef void **(*getter_t)(void);\n"
	"extern __thread void *" VAR ";\n"
	"__attribute__((weak)) long tp_other_get(void);\n"
	"static void **tl_get(void)\n"
	"{\n"
	"	return &" VAR ";\n"
	"}\n"
	"getter_t tp_resolve(int argc, char **argv)\n"
	"{\n"
	"	(void)argc;\n"
	"	(void)argv;\n"
	"	if (tp_other_get)\n"
	"		tp_other_get();\n"
	"	return tl_get;\n"
	"}\n";

static const char use_lib_src[] =
	"typedef void **(*getter_t)(void);\n"
	"void **tl_get(void);\n"
	"getter_t tp_resolve(int argc, char **argv)\n"
	"{\n"
	"	(void)argc;\n"
	"	(void)argv;\n"
	"	return tl_get;\n"
	"}\n";

/* dlopen()s argv[1]; maps each further argument executable, the way a
 * process may map files the loader never saw. */
static const char use_dlopen_src[] =
	"#include <dlfcn.h>\n"
	"#include <fcntl.h>\n"
	"#include <stdio.h>\n"
	"#include <sys/mman.h>\n"
	"#include <unistd.h>\n"
	"typedef void **(*getter_t)(void);\n"
	"getter_t tp_resolve(int argc, char **argv)\n"
	"{\n"
	"	void *h;\n"
	"	int i, fd;\n"
	"	if (argc < 2 || !(h = dlopen(argv[1], RTLD_NOW))) {\n"
	"		fprintf(stderr, \"dlopen: %s\\n\", dlerror());\n"
	"		return NULL;\n"
	"	}\n"
	"	for (i = 2; i < argc; i++) {\n"
	"		fd = open(argv[i], O_RDONLY);\n"
	"		if (fd < 0 || mmap(NULL, lseek(fd, 0, SEEK_END),\n"
	"				   PROT_READ | PROT_EXEC, MAP_PRIVATE,\n"
	"				   fd, 0) == MAP_FAILED)\n"
	"			return NULL;\n"
	"	}\n"
	"	return (getter_t)dlsym(h, \"tl_get\");\n"
	"}\n";

/* The libraries: name, source, the flags that pick the access model, and
 * the executable that links it. */
static const struct lib_variant {
	const char *name;
	const char *src;
	const char *flags;
	const char *user;
} libs[] = {
	{ "ie", "lib.c", "-ftls-model=initial-exec", "use_lib.c" },
	{ "desc", "lib.c", "-mtls-dialect=gnu2", "use_lib.c" },
	{ "gd", "lib.c", "-mtls-dialect=gnu -ftls-model=global-dynamic",
	  "use_lib.c" },
	/* Hidden: local-dynamic, relocations against symbol 0, and the
	 * variable only in .symtab. */
	{ "ldhid", "lib.c", "-mtls-dialect=gnu -ftls-model=local-dynamic "
	  "-fvisibility=hidden", "use_lib.c" },
	{ "deschid", "lib.c", "-mtls-dialect=gnu2 -fvisibility=hidden",
	  "use_lib.c" },
	{ "iehid", "lib.c", "-ftls-model=initial-exec -fvisibility=hidden",
	  "use_lib.c" },
	{ "descbig", "lib.c", "-mtls-dialect=gnu2 -DBIG", "use_lib.c" },
	/* Relocations only against another variable of the library. */
	{ "sib", "lib_def.c", "-mtls-dialect=gnu -DSIB", "use_extern.c" },
	{ "sibdesc", "lib_def.c", "-mtls-dialect=gnu2 -DSIB",
	  "use_extern.c" },
	/* No TLS relocation at all. */
	{ "noref", "lib_def.c", "", "use_extern.c" },
};

#define NLIBS (sizeof(libs) / sizeof(libs[0]))

/* A running test program and what it reported. */
struct child {
	pid_t pid;
	int in_fd;		/* its stdin: closing it ends the program */
	int out_fd;
	int nthreads;
	struct {
		uint64_t fs;
		uint64_t addr;
		uint64_t val;
	} t[2];
};

static void tpath(char *buf, const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	snprintf(buf, PATH_MAX, "%s/%s", tmpdir, name);
}

/* Runs a shell command; true when it exits 0. */
static bool write_src(const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;
	bool ok;

	tpath(path, "%s", name);
	f = fopen(path, "w");
	if (!f)
		return false;
	ok = fputs(text, f) >= 0;
	return fclose(f) == 0 && ok;
}

static bool build_lib(const struct lib_variant *l)
{
	char src[PATH_MAX], lib[PATH_MAX], use[PATH_MAX], main_c[PATH_MAX];
	char use_c[PATH_MAX];

	tpath(src, "%s", l->src);
	tpath(lib, "lib%s.so", l->name);
	tpath(use, "use_%s", l->name);
	tpath(main_c, "main.c");
	tpath(use_c, "%s", l->user);
	return sh("cc -O2 -fPIC -shared %s -o '%s' '%s'", l->flags, lib,
		  src) &&
	       sh("cc -O2 -pthread -o '%s' '%s' '%s' '%s'", use, use_c,
		  main_c, lib);
}

static bool build_exe(const char *name, const char *flags, const char *src)
{
	char out[PATH_MAX], s[PATH_MAX], main_c[PATH_MAX];

	tpath(out, "%s", name);
	tpath(s, "%s", src);
	tpath(main_c, "main.c");
	return sh("cc -O2 -pthread %s -o '%s' '%s' '%s' -ldl", flags, out, s,
		  main_c);
}

static bool build_fixtures(void)
{
	size_t i;

	if (!write_src("main.c", main_src) ||
	    !write_src("exe_var.c", exe_var_src) ||
	    !write_src("lib.c", lib_src) ||
	    !write_src("lib_def.c", lib_def_src) ||
	    !write_src("use_extern.c", use_extern_src) ||
	    !write_src("use_lib.c", use_lib_src) ||
	    !write_src("use_dlopen.c", use_dlopen_src))
		return false;
	if (!build_exe("exe_nopie", "-fno-pie -no-pie -rdynamic",
		       "exe_var.c") ||
	    !build_exe("exe_pie", "-fPIE -pie -rdynamic", "exe_var.c") ||
	    !build_exe("exe_symtab", "-fPIE -pie", "exe_var.c") ||
	    !build_exe("use_dlopen", "", "use_dlopen.c"))
		return false;
	for (i = 0; i < NLIBS; i++)
		if (!build_lib(&libs[i]))
			return false;
	return true;
}

/* Reads the child's reports until READY, for at most 10 s. */
static bool read_reports(struct child *c)
{
	char buf[1024], *line, *nl;
	unsigned long long fs, addr, val;
	struct pollfd pfd = { .fd = c->out_fd, .events = POLLIN };
	size_t len = 0;
	ssize_t n;

	for (;;) {
		if (poll(&pfd, 1, 10000) <= 0)
			return false;
		n = read(c->out_fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			return false;
		len += n;
		buf[len] = '\0';
		if (strstr(buf, "READY\n"))
			break;
		if (len == sizeof(buf) - 1)
			return false;
	}
	for (line = buf; (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		if (sscanf(line, "T %llx %llx %llx", &fs, &addr, &val) != 3 ||
		    c->nthreads == 2)
			continue;
		c->t[c->nthreads].fs = fs;
		c->t[c->nthreads].addr = addr;
		c->t[c->nthreads].val = val;
		c->nthreads++;
	}
	return c->nthreads == 2;
}

static void child_stop(struct child *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
	if (c->in_fd >= 0)
		close(c->in_fd);
	if (c->out_fd >= 0)
		close(c->out_fd);
	c->pid = 0;
	c->in_fd = c->out_fd = -1;
}

/* Starts tmpdir/prog with up to two arguments; true once it reported. */
static bool child_start(struct child *c, const char *prog, const char *arg1,
			const char *arg2)
{
	char path[PATH_MAX];
	int in[2], out[2];
	pid_t parent = getpid();

	memset(c, 0, sizeof(*c));
	c->in_fd = c->out_fd = -1;
	tpath(path, "%s", prog);
	if (pipe2(in, O_CLOEXEC))
		return false;
	if (pipe2(out, O_CLOEXEC)) {
		close(in[0]);
		close(in[1]);
		return false;
	}
	c->pid = fork();
	if (c->pid == 0) {
		/* Dies with the test, even if the test dies first. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(path, path, arg1, arg2, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in_fd = in[1];
	c->out_fd = out[0];
	if (c->pid > 0 && read_reports(c))
		return true;
	fprintf(stderr, "  %s did not report\n", prog);
	child_stop(c);
	return false;
}

/* Reads the child's memory the way BPF will: /proc/PID/mem here, not the
 * code under test. */
static bool peek(pid_t pid, uint64_t addr, uint64_t *v)
{
	char path[64];
	int fd;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = pread(fd, v, sizeof(*v), (off_t)addr) == sizeof(*v);
	close(fd);
	return ok;
}

/* Where loc puts the variable for the thread with this fsbase. */
static bool loc_addr(pid_t pid, const struct tp_tls_loc *loc, uint64_t fs,
		     uint64_t *addr)
{
	uint64_t dtv, block;

	if (loc->kind == TP_TLS_STATIC) {
		*addr = fs + loc->tpoff;
		return true;
	}
	if (loc->kind != TP_TLS_DTV || !peek(pid, fs + loc->dtv_off, &dtv) ||
	    !peek(pid, dtv + loc->modid * 16, &block))
		return false;
	/* Not allocated yet for this thread. */
	if (!block || block == UINT64_MAX)
		return false;
	*addr = block + loc->offset;
	return true;
}

static void describe(const char *what, const struct tp_tls_loc *loc,
		     const char *module)
{
	if (loc->kind == TP_TLS_STATIC)
		fprintf(stderr, "  %s: STATIC tpoff %" PRId64 " (%s)\n", what,
			(int64_t)loc->tpoff, module);
	else
		fprintf(stderr, "  %s: DTV modid %" PRIu64 " offset %" PRIu64
			" dtv_off %u (%s)\n", what, (uint64_t)loc->modid,
			(uint64_t)loc->offset, loc->dtv_off, module);
}

/* Both threads: loc leads to the address each printed, holding its value. */
static bool loc_matches(const struct child *c, const struct tp_tls_loc *loc)
{
	uint64_t addr = 0, v = 0;
	int i;

	for (i = 0; i < c->nthreads; i++) {
		if (!loc_addr(c->pid, loc, c->t[i].fs, &addr) ||
		    addr != c->t[i].addr) {
			fprintf(stderr, "  thread %d: address %#" PRIx64
				" computed, %#" PRIx64 " printed\n", i,
				addr, c->t[i].addr);
			return false;
		}
		if (!peek(c->pid, addr, &v) || v != c->t[i].val) {
			fprintf(stderr, "  thread %d: read %#" PRIx64 "\n", i,
				v);
			return false;
		}
	}
	return c->t[0].val == MAIN_VAL && c->t[1].val == THREAD_VAL &&
	       c->t[0].fs != c->t[1].fs;
}

/* Runs prog, finds the variable, checks it for both threads. want_kind 0
 * takes either kind. */
static bool check_variant(const char *what, const char *prog,
			  const char *arg1, const char *arg2,
			  const char *want_module, uint32_t want_kind)
{
	char module[PATH_MAX], want[PATH_MAX];
	struct tp_tls_loc loc;
	struct child c;
	bool ok = false;
	int err;

	if (!child_start(&c, prog, arg1, arg2))
		return false;
	err = tlsloc__find(c.pid, VAR, &loc, module, sizeof(module));
	if (err) {
		fprintf(stderr, "  %s: tlsloc__find: %s\n", what,
			strerror(-err));
		goto out;
	}
	describe(what, &loc, module);
	tpath(want, "%s", want_module);
	if (strcmp(module, want)) {
		fprintf(stderr, "  module %s, want %s\n", module, want);
		goto out;
	}
	ok = (!want_kind || loc.kind == want_kind) && loc.dtv_off == 8 &&
	     loc_matches(&c, &loc);
out:
	child_stop(&c);
	return ok;
}

static void test_local_exec_nopie(void)
{
	CHECK(check_variant("local-exec, non-PIE", "exe_nopie", NULL, NULL,
			    "exe_nopie", TP_TLS_STATIC));
}

static void test_local_exec_pie(void)
{
	CHECK(check_variant("local-exec, PIE", "exe_pie", NULL, NULL,
			    "exe_pie", TP_TLS_STATIC));
}

/* Not exported: the executable's .dynsym lacks it, .symtab has it. */
static void test_symtab_only(void)
{
	char exe[PATH_MAX];

	tpath(exe, "exe_symtab");
	CHECK(!sh("nm -D '%s' | grep -q " VAR, exe));
	CHECK(sh("nm '%s' | grep -q " VAR, exe));
	CHECK(check_variant("local-exec, .symtab only", "exe_symtab", NULL,
			    NULL, "exe_symtab", TP_TLS_STATIC));
}

static void test_initial_exec_lib(void)
{
	CHECK(check_variant("initial-exec lib", "use_ie", NULL, NULL,
			    "libie.so", TP_TLS_STATIC));
}

/* Loaded at startup, so in static TLS: the descriptor resolves static. */
static void test_tlsdesc_lib(void)
{
	CHECK(check_variant("TLSDESC lib", "use_desc", NULL, NULL,
			    "libdesc.so", TP_TLS_STATIC));
}

static void test_global_dynamic_lib(void)
{
	CHECK(check_variant("global-dynamic lib", "use_gd", NULL, NULL,
			    "libgd.so", 0));
}

/* Relocations against symbol 0 and the variable only in .symtab. */
static void test_local_dynamic_hidden_lib(void)
{
	CHECK(check_variant("local-dynamic hidden lib", "use_ldhid", NULL,
			    NULL, "libldhid.so", 0));
}

static void test_tlsdesc_hidden_lib(void)
{
	CHECK(check_variant("TLSDESC hidden lib", "use_deschid", NULL, NULL,
			    "libdeschid.so", TP_TLS_STATIC));
}

static void test_initial_exec_hidden_lib(void)
{
	CHECK(check_variant("initial-exec hidden lib", "use_iehid", NULL, NULL,
			    "libiehid.so", TP_TLS_STATIC));
}

/* Only the library's other variable is relocated: its module id, or its
 * tpoff, places the block. */
static void test_sibling_relocation(void)
{
	CHECK(check_variant("sibling DTPMOD64", "use_sib", NULL, NULL,
			    "libsib.so", 0));
	CHECK(check_variant("sibling TLSDESC", "use_sibdesc", NULL, NULL,
			    "libsibdesc.so", TP_TLS_STATIC));
}

/* Defined in a library that has no TLS relocation, used only by the
 * executable: the library's module id cannot be known. */
static void test_no_relocation(void)
{
	char module[PATH_MAX], want[PATH_MAX];
	struct tp_tls_loc loc;
	struct child c;
	int err;

	CHECK(child_start(&c, "use_noref", NULL, NULL));
	err = tlsloc__find(c.pid, VAR, &loc, module, sizeof(module));
	child_stop(&c);
	tpath(want, "libnoref.so");
	CHECK(err == -EOPNOTSUPP);
	CHECK(!strcmp(module, want));
}

/* Too big for the static surplus: glibc's dynamic descriptor, whose
 * argument holds the module id and offset. */
static void test_dlopen_dynamic_tlsdesc(void)
{
	char lib[PATH_MAX];

	tpath(lib, "libdescbig.so");
	CHECK(check_variant("dlopen descbig", "use_dlopen", lib, NULL,
			    "libdescbig.so", TP_TLS_DTV));
}

/* dlopen()ed after start: in the static surplus or only in the DTV. */
static void test_dlopen(void)
{
	static const char *const names[] = { "desc", "gd", "ie", "ldhid",
					     "deschid", "iehid" };
	char lib[PATH_MAX], what[64], mod[64];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		tpath(lib, "lib%s.so", names[i]);
		snprintf(what, sizeof(what), "dlopen %s", names[i]);
		snprintf(mod, sizeof(mod), "lib%s.so", names[i]);
		CHECK(check_variant(what, "use_dlopen", lib, NULL, mod, 0));
	}
}

/* Files mapped executable but never loaded: a whole copy of a library
 * that defines the variable (never relocated), a truncated one (section
 * headers cut off) and garbage. They map below the real library, so they
 * are looked at first. */
static void test_stray_mappings(void)
{
	char lib[PATH_MAX], copy[PATH_MAX], cut[PATH_MAX], junk[PATH_MAX];

	tpath(lib, "libgd.so");
	tpath(copy, "copy.so");
	tpath(cut, "cut.so");
	tpath(junk, "junk.bin");
	CHECK(sh("cp '%s' '%s'", lib, copy));
	CHECK(sh("head -c 8192 '%s' > '%s'", lib, cut));
	CHECK(sh("head -c 8192 /dev/urandom > '%s'", junk));
	CHECK(check_variant("unrelocated copy mapped", "use_dlopen", lib, copy,
			    "libgd.so", 0));
	CHECK(check_variant("truncated copy mapped", "use_dlopen", lib, cut,
			    "libgd.so", 0));
	CHECK(check_variant("garbage mapped", "use_dlopen", lib, junk,
			    "libgd.so", 0));
}

/* The library's file is gone: only /proc/PID/map_files reaches it. */
static void test_deleted_lib(void)
{
	char src[PATH_MAX], lib[PATH_MAX], module[PATH_MAX];
	struct tp_tls_loc loc;
	struct child c;
	bool ok;
	int err;

	tpath(src, "libdesc.so");
	tpath(lib, "libdel.so");
	CHECK(sh("cp '%s' '%s'", src, lib));
	CHECK(child_start(&c, "use_dlopen", lib, NULL));
	unlink(lib);
	err = tlsloc__find(c.pid, VAR, &loc, module, sizeof(module));
	ok = !err && strstr(module, "libdel.so (deleted)") &&
	     loc_matches(&c, &loc);
	if (!err)
		describe("deleted lib", &loc, module);
	child_stop(&c);
	CHECK(ok);
}

/* A library without the variable, looked in once, then rewritten in
 * place (same inode) as one that has it: the next process that loads it
 * is looked at afresh, not answered from what was seen of the old file. */
static void test_rewritten_in_place(void)
{
	static const char plain_src[] =
		"static void *slot;\n"
		"void **tl_get(void) { return &slot; }\n";
	char lib[PATH_MAX], src[PATH_MAX], gd[PATH_MAX];
	struct tp_tls_loc loc;
	struct child c;
	int e1, e2;

	tpath(lib, "librw.so");
	tpath(src, "plain.c");
	tpath(gd, "libgd.so");
	CHECK(write_src("plain.c", plain_src));
	CHECK(sh("cc -O2 -fPIC -shared -o '%s' '%s'", lib, src));
	CHECK(child_start(&c, "use_dlopen", lib, NULL));
	e1 = tlsloc__find(c.pid, VAR, &loc, NULL, 0);
	/* Asked again of a second process: the answer is the same. */
	child_stop(&c);
	CHECK(child_start(&c, "use_dlopen", lib, NULL));
	e2 = tlsloc__find(c.pid, VAR, &loc, NULL, 0);
	child_stop(&c);
	CHECK(e1 == -ENOENT && e2 == -ENOENT);
	CHECK(sh("cat '%s' > '%s'", gd, lib));
	CHECK(check_variant("rewritten in place", "use_dlopen", lib, NULL,
			    "librw.so", 0));
}

static void test_not_found(void)
{
	char module[PATH_MAX] = "x";
	struct tp_tls_loc loc;
	struct child c;
	int e1, e2, e3;

	/* This test defines no such variable. */
	CHECK(tlsloc__find(getpid(), VAR, &loc, module, sizeof(module)) ==
	      -ENOENT);
	CHECK(module[0] == '\0');
	CHECK(child_start(&c, "exe_pie", NULL, NULL));
	e1 = tlsloc__find(c.pid, "tagprof_no_such_tls", &loc, NULL, 0);
	/* Defined, but not thread-local. */
	e2 = tlsloc__find(c.pid, "custom_labels_abi_version", &loc, NULL, 0);
	e3 = tlsloc__find(c.pid, "", &loc, NULL, 0);
	child_stop(&c);
	CHECK(e1 == -ENOENT);
	CHECK(e2 == -ENOENT);
	CHECK(e3 == -EINVAL);
}

/* Counts the mappings a walk shows (tlsloc_maps_fn). */
static void count_map(const struct procfs_map *m, void *arg)
{
	(void)m;
	++*(size_t *)arg;
}

static int count_line(const struct procfs_map *m, void *arg)
{
	count_map(m, arg);
	return 0;
}

/* Several symbols in one walk: each gets what tlsloc__find gives it, and
 * files known not to define any of them are not even opened. */
static void test_find_all(void)
{
	struct tp_tls_loc l1, l2, one;
	char m1[PATH_MAX], want[PATH_MAX];
	struct tlsloc_query q[2] = {
		{ "tagprof_no_such_tls", &l2, NULL, 0, 0 },
		{ VAR, &l1, m1, sizeof(m1), 0 },
	};
	size_t seen = 0, lines = 0;
	uint64_t opened;
	struct child c;

	CHECK(child_start(&c, "exe_pie", NULL, NULL));
	CHECK(tlsloc__find_all(c.pid, q, 2, count_map, &seen, NULL) == 0);
	CHECK(procfs__read_maps(c.pid, count_line, &lines) == 0);
	CHECK(tlsloc__find(c.pid, VAR, &one, NULL, 0) == 0);
	CHECK(q[0].err == -ENOENT && q[1].err == 0);
	CHECK(!memcmp(&l1, &one, sizeof(one)) && loc_matches(&c, &l1));
	child_stop(&c);
	tpath(want, "exe_pie");
	CHECK(!strcmp(m1, want));
	/* The callback saw every mapping, not only up to the definer. */
	CHECK(seen > 0 && seen == lines);
	/* Another process of the same files: the libraries and the program
	 * are known not to define the missing symbol, and not opened. */
	CHECK(child_start(&c, "exe_pie", NULL, NULL));
	opened = targetfile__stats()->opened;
	CHECK(tlsloc__find(c.pid, "tagprof_no_such_tls", &l2, NULL, 0) ==
	      -ENOENT);
	CHECK(targetfile__stats()->opened == opened);
	child_stop(&c);
	CHECK(tlsloc__find_all(1, q, 0, NULL, NULL, NULL) == -EINVAL);
	CHECK(tlsloc__find_all(1, q, TLSLOC_QUERIES_MAX + 1, NULL, NULL,
			       NULL) == -EINVAL);
}

/* A process looked at again passes by the modules its last look found
 * without the symbol, even one changed on disk since (its status is not
 * even read); without the memo, that one is opened again. */
static void test_find_memo(void)
{
	static const char plain_src[] =
		"static void *slot;\n"
		"void **tl_get(void) { return &slot; }\n";
	char lib[PATH_MAX], src[PATH_MAX];
	struct tlsloc_memo memo = { 0 };
	struct tp_tls_loc loc;
	struct tlsloc_query q = { VAR, &loc, NULL, 0, 0 };
	uint64_t opened;
	struct child c;

	tpath(lib, "libmemo.so");
	tpath(src, "plain.c");
	CHECK(write_src("plain.c", plain_src));
	CHECK(sh("cc -O2 -fPIC -shared -o '%s' '%s'", lib, src));
	CHECK(child_start(&c, "use_dlopen", lib, NULL));
	CHECK(tlsloc__find_all(c.pid, &q, 1, NULL, NULL, &memo) == 0);
	CHECK(q.err == -ENOENT && memo.n >= 3);	/* program, lib, libc... */
	CHECK(sh("touch -d '2001-01-01' '%s'", lib));
	opened = targetfile__stats()->opened;
	CHECK(tlsloc__find_all(c.pid, &q, 1, NULL, NULL, &memo) == 0);
	CHECK(q.err == -ENOENT && targetfile__stats()->opened == opened);
	CHECK(tlsloc__find_all(c.pid, &q, 1, NULL, NULL, NULL) == 0);
	CHECK(q.err == -ENOENT && targetfile__stats()->opened == opened + 1);
	child_stop(&c);
}

/* Reads custom_labels_abi_version (a u32, 1) from a running program. */
static bool read_abi(const char *prog, int *errs)
{
	uint64_t big = 0;
	struct child c;
	uint32_t v = 0;
	int err;

	if (!child_start(&c, prog, NULL, NULL))
		return false;
	err = tlsloc__read_symbol(c.pid, "custom_labels_abi_version", &v,
				  sizeof(v));
	errs[0] = tlsloc__read_symbol(c.pid, "custom_labels_abi_version",
				      &big, sizeof(big));
	errs[1] = tlsloc__read_symbol(c.pid, "tagprof_no_such_sym", &v,
				      sizeof(v));
	errs[2] = tlsloc__read_symbol(c.pid, VAR, &big, sizeof(big));
	child_stop(&c);
	if (err || v != 1)
		fprintf(stderr, "  %s: read_symbol %d, value %u\n", prog, err,
			v);
	return !err && v == 1;
}

static void test_read_symbol(void)
{
	int errs[3];

	CHECK(read_abi("exe_pie", errs));
	CHECK(errs[0] == -EINVAL);	/* past its 4 bytes */
	CHECK(errs[1] == -ENOENT);
	CHECK(errs[2] == -ENOENT);	/* thread-local, not data */
	CHECK(read_abi("exe_nopie", errs));
	/* Not exported: found in .symtab. */
	CHECK(read_abi("exe_symtab", errs));
}

static void test_bad_args(void)
{
	struct tp_tls_loc loc;
	uint32_t v;
	pid_t pid;

	CHECK(tlsloc__find(0, VAR, &loc, NULL, 0) == -EINVAL);
	CHECK(tlsloc__find(-1, VAR, &loc, NULL, 0) == -EINVAL);
	CHECK(tlsloc__find(1, NULL, &loc, NULL, 0) == -EINVAL);
	CHECK(tlsloc__read_symbol(0, "x", &v, sizeof(v)) == -EINVAL);
	CHECK(tlsloc__read_symbol(1, "x", NULL, sizeof(v)) == -EINVAL);
	/* A pid that just exited and was reaped. */
	pid = fork();
	CHECK(pid >= 0);
	if (!pid)
		_exit(0);
	CHECK(waitpid(pid, NULL, 0) == pid);
	CHECK(tlsloc__find(pid, VAR, &loc, NULL, 0) == -ESRCH);
	CHECK(tlsloc__read_symbol(pid, "x", &v, sizeof(v)) == -ESRCH);
}

int main(void)
{
	const char *why = NULL;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
#if !defined(__x86_64__)
	why = "x86-64 only";
#endif
	if (why)
		;
	else if (!sh("command -v cc nm head >/dev/null 2>&1"))
		why = "cc, nm or head missing";
	else if (!build_fixtures())
		why = "could not build the test programs";
	if (why) {
		SKIP(test_local_exec_nopie, why);
		SKIP(test_local_exec_pie, why);
		SKIP(test_symtab_only, why);
		SKIP(test_initial_exec_lib, why);
		SKIP(test_tlsdesc_lib, why);
		SKIP(test_global_dynamic_lib, why);
		SKIP(test_local_dynamic_hidden_lib, why);
		SKIP(test_tlsdesc_hidden_lib, why);
		SKIP(test_initial_exec_hidden_lib, why);
		SKIP(test_sibling_relocation, why);
		SKIP(test_no_relocation, why);
		SKIP(test_dlopen, why);
		SKIP(test_dlopen_dynamic_tlsdesc, why);
		SKIP(test_stray_mappings, why);
		SKIP(test_deleted_lib, why);
		SKIP(test_rewritten_in_place, why);
		SKIP(test_not_found, why);
		SKIP(test_find_all, why);
		SKIP(test_find_memo, why);
		SKIP(test_read_symbol, why);
	} else {
		RUN(test_local_exec_nopie);
		RUN(test_local_exec_pie);
		RUN(test_symtab_only);
		RUN(test_initial_exec_lib);
		RUN(test_tlsdesc_lib);
		RUN(test_global_dynamic_lib);
		RUN(test_local_dynamic_hidden_lib);
		RUN(test_tlsdesc_hidden_lib);
		RUN(test_initial_exec_hidden_lib);
		RUN(test_sibling_relocation);
		RUN(test_no_relocation);
		RUN(test_dlopen);
		RUN(test_dlopen_dynamic_tlsdesc);
		RUN(test_stray_mappings);
		RUN(test_deleted_lib);
		RUN(test_rewritten_in_place);
		RUN(test_not_found);
		RUN(test_find_all);
		RUN(test_find_memo);
		RUN(test_read_symbol);
	}
	RUN(test_bad_args);
	if (!sh("rm -rf '%s'", tmpdir))
		fprintf(stderr, "could not remove %s\n", tmpdir);
	CHECK_EXIT();
}
