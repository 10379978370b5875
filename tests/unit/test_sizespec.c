/* tagprof sizes' inputs: --size parsing (src/sizes/sizespec.c) and
 * resolving --func to a probe's file offset (src/sizes/funcsym.c), on
 * this test's own binary and on copies of a small program built here:
 * stripped, and with a function inlined at every call site. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "shell.h"
#include "sizes/funcsym.h"
#include "sizes/sizespec.h"

static char dir[] = "/tmp/tagprof-sizespec.XXXXXX";
static bool built;

static void test_size_args(void)
{
	struct sizespec s;
	char err[256];

	CHECK(!sizespec__parse("arg2", &s, err, sizeof(err)));
	CHECK(s.fn.kind == TP_SZ_ARG && s.fn.arg == 2);
	CHECK(!sizespec__parse(" arg6 ", &s, err, sizeof(err)));
	CHECK(s.fn.kind == TP_SZ_ARG && s.fn.arg == 6);
	CHECK(sizespec__parse("arg0", &s, err, sizeof(err)) == -EINVAL);
	CHECK(sizespec__parse("arg7", &s, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "forms:"));
	CHECK(sizespec__parse("arg1x", &s, err, sizeof(err)) == -EINVAL);
	CHECK(sizespec__parse("", &s, err, sizeof(err)) == -EINVAL);
}

static void test_size_fields(void)
{
	struct sizespec s;
	char err[256];

	CHECK(!sizespec__parse("arg1->0x10", &s, err, sizeof(err)));
	CHECK(s.fn.kind == TP_SZ_FIELD && s.fn.arg == 1 && s.fn.off == 16 &&
	      s.fn.width == 8);
	CHECK(!sizespec__parse("arg1->8", &s, err, sizeof(err)));
	CHECK(s.fn.off == 8);
	CHECK(!sizespec__parse("*(u32 *)(arg2+8)", &s, err, sizeof(err)));
	CHECK(s.fn.kind == TP_SZ_FIELD && s.fn.arg == 2 && s.fn.off == 8 &&
	      s.fn.width == 4);
	CHECK(!sizespec__parse("*(u16*)arg3", &s, err, sizeof(err)));
	CHECK(s.fn.arg == 3 && s.fn.off == 0 && s.fn.width == 2);
	CHECK(!sizespec__parse("*(u8 *)(arg1)", &s, err, sizeof(err)));
	CHECK(s.fn.width == 1);
	CHECK(sizespec__parse("*(u24 *)(arg1+8)", &s, err, sizeof(err)) ==
	      -EINVAL);
	CHECK(sizespec__parse("*(u32 *)(arg1+8", &s, err, sizeof(err)) ==
	      -EINVAL);
	CHECK(sizespec__parse("arg1->", &s, err, sizeof(err)) == -EINVAL);
	CHECK(sizespec__parse("arg1->-8", &s, err, sizeof(err)) == -EINVAL);
	/* an offset is a field's, not an address */
	CHECK(sizespec__parse("arg1->0x7fff0000", &s, err, sizeof(err)) ==
	      -EINVAL);
}

static void test_size_labels(void)
{
	struct sizespec s;
	char err[256];

	CHECK(!sizespec__parse("label:rows", &s, err, sizeof(err)));
	CHECK(s.fn.kind == TP_SZ_LABEL && !strcmp(s.label, "rows"));
	CHECK(sizespec__parse("label:", &s, err, sizeof(err)) == -EINVAL);
	CHECK(sizespec__parse("label:0123456789012345678901234567890123",
			      &s, err, sizeof(err)) == -EINVAL);
}

/* A function of this binary: found, at the offset nm and the program
 * headers give (checked by reading its first bytes through the file). */
__attribute__((noinline, used)) int sizespec_probe_me(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

static void test_func_self(void)
{
	char exe[PATH_MAX], spec[PATH_MAX + 64], name[64], err[512];
	unsigned char a[16], b[16];
	struct funcsym f;
	FILE *self;

	CHECK(check_read_exe(exe, sizeof(exe)));
	snprintf(spec, sizeof(spec), "%s:sizespec_probe_me", exe);
	CHECK(!funcsym__resolve(spec, 0, NULL, &f, name, sizeof(name), err,
				sizeof(err)));
	CHECK(!strcmp(name, "sizespec_probe_me"));
	CHECK(f.size > 0 && f.fd >= 0);
	CHECK(!strncmp(f.path, "/proc/self/fd/", 14));
	/* the bytes at the file offset are the function's code */
	CHECK(pread(f.fd, a, sizeof(a), f.offset) == sizeof(a));
	memcpy(b, (const void *)sizespec_probe_me, sizeof(b));
	CHECK(!memcmp(a, b, sizeof(a)));
	funcsym__close(&f);
	/* the exe of -- COMMAND, by default */
	CHECK(!funcsym__resolve("sizespec_probe_me", 0, exe, &f, name,
				sizeof(name), err, sizeof(err)));
	funcsym__close(&f);
	/* a process's executable, with -p */
	CHECK(!funcsym__resolve("sizespec_probe_me", getpid(), NULL, &f, name,
				sizeof(name), err, sizeof(err)));
	funcsym__close(&f);
	self = fopen(exe, "r");
	CHECK(self);
	fclose(self);
}

static void test_func_missing(void)
{
	char exe[PATH_MAX], name[64], err[512];
	struct funcsym f;

	CHECK(check_read_exe(exe, sizeof(exe)));
	CHECK(funcsym__resolve("no_such_function_here", 0, exe, &f, name,
			       sizeof(name), err, sizeof(err)) == -ENOENT);
	CHECK(strstr(err, "no function no_such_function_here in"));
	CHECK(f.fd < 0);
	CHECK(funcsym__resolve("/nonexistent/bin:main", 0, exe, &f, name,
			       sizeof(name), err, sizeof(err)) == -ENOENT);
	CHECK(strstr(err, "cannot open /nonexistent/bin"));
	CHECK(funcsym__resolve("/etc/hostname:main", 0, exe, &f, name,
			       sizeof(name), err, sizeof(err)) == -ENOEXEC);
	CHECK(strstr(err, "not an ELF file"));
	CHECK(funcsym__resolve("nolib:main", getpid(), NULL, &f, name,
			       sizeof(name), err, sizeof(err)) == -ENOENT);
	CHECK(strstr(err, "no library named nolib"));
	/* a library's name means one mapped in a running process: not
	 * with -- COMMAND, which has none yet */
	CHECK(funcsym__resolve("libc:strlen", 0, exe, &f, name,
			       sizeof(name), err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "(-p); give its path"));
	/* a library of a running process, by name */
	CHECK(!funcsym__resolve("libc:abort", getpid(), NULL, &f, name,
				sizeof(name), err, sizeof(err)));
	CHECK(strstr(f.shown, "libc"));
	funcsym__close(&f);
	/* glibc's strlen is an IFUNC: probing its resolver would see no
	 * call */
	CHECK(funcsym__resolve("libc:strlen", getpid(), NULL, &f, name,
			       sizeof(name), err, sizeof(err)) == -ENOTSUP);
	CHECK(strstr(err, "is an IFUNC"));
}

static const char prog[] =
	"static inline __attribute__((always_inline)) int twice(int x)\n"
	"{ return 2 * x; }\n"
	"__attribute__((noinline)) int helper(int x) { return twice(x) + 1; }\n"
	"int main(int c, char **v) { (void)v; return helper(c) + twice(c); }\n";

static void build_prog(void)
{
	char src[PATH_MAX];
	FILE *f;

	if (!mkdtemp(dir))
		return;
	snprintf(src, sizeof(src), "%s/p.c", dir);
	f = fopen(src, "w");
	if (!f)
		return;
	fputs(prog, f);
	fclose(f);
	built = sh("cc -O2 -g -o %s/p %s && cp %s/p %s/s && strip %s/s",
		   dir, src, dir, dir, dir);
}

static void test_func_stripped(void)
{
	char spec[PATH_MAX], name[64], err[512];
	struct funcsym f;

	CHECK(built);
	snprintf(spec, sizeof(spec), "%s/p:helper", dir);
	CHECK(!funcsym__resolve(spec, 0, NULL, &f, name, sizeof(name), err,
				sizeof(err)));
	funcsym__close(&f);
	snprintf(spec, sizeof(spec), "%s/s:helper", dir);
	CHECK(funcsym__resolve(spec, 0, NULL, &f, name, sizeof(name), err,
			       sizeof(err)) == -ENOENT);
	CHECK(strstr(err, "stripped"));
}

static void test_func_inlined(void)
{
	char spec[PATH_MAX], name[64], err[512];
	struct funcsym f;

	CHECK(built);
	snprintf(spec, sizeof(spec), "%s/p:twice", dir);
	CHECK(funcsym__resolve(spec, 0, NULL, &f, name, sizeof(name), err,
			       sizeof(err)) == -ENOENT);
	CHECK(strstr(err, "inlined at every call site"));
}

int main(void)
{
	RUN(test_size_args);
	RUN(test_size_fields);
	RUN(test_size_labels);
	RUN(test_func_self);
	RUN(test_func_missing);
	build_prog();
	RUN(test_func_stripped);
	RUN(test_func_inlined);
	if (built)
		check_remove_dir(dir);
	CHECK_EXIT();
}
