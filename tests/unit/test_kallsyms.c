/* kallsyms parsing: a fixture file written here, then the real
 * /proc/kallsyms when it is readable. */
#include "check.h"
#include "kernel/kallsyms.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/tagprof-kallsyms.XXXXXX";
static char path_buf[256];

static const char *tmp_path(const char *name)
{
	snprintf(path_buf, sizeof(path_buf), "%s/%s", tmpdir, name);
	return path_buf;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -1;
	ok = fputs(text, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* Module lines first and vmlinux unsorted, as the parser must sort. */
static const char fixture[] =
	"ffffffffc0100100 T mod_fn2\t[mymod]\n"
	"ffffffffc0100000 t mod_fn\t[mymod]\n"
	"ffffffffc0200000 t other_fn\t[othermod]\n"
	"0000000000000000 A fixed_percpu_data\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 t __local_alias\n"
	"ffffffff81000300 w weak_local\n"
	"ffffffff81000100 t local_fn\n"
	"ffffffff81000200 W weak_fn\n"
	"ffffffff81000400 d data_sym\n"
	"ffffffff81000500 D Data_sym\n"
	"ffffffff81000600 b bss_sym\n"
	"ffffffff81000700 R rodata_sym\n"
	"0000000000000000 T zero_text\n"
	"ffffffff81001000 T after_data\n"
	"not a line\n"
	"ffffffff81002000 T\n"
	"ffffffffffffffffff T too_many_digits\n"
	"\n";

static void check_at(const struct kallsyms *k, uint64_t addr,
		     const char *want, uint64_t want_start,
		     const char *want_mod, int *ok)
{
	const char *name, *mod = NULL;
	uint64_t start = 0;

	name = kallsyms__lookup(k, addr, &start, &mod);
	if (!want) {
		*ok = !name;
	} else {
		*ok = name && strcmp(name, want) == 0 &&
		      start == want_start && mod && strcmp(mod, want_mod) == 0;
	}
	if (!*ok)
		fprintf(stderr, "  lookup %" PRIx64 ": got %s/%" PRIx64
			"/%s, want %s\n", addr, name ? name : "NULL", start,
			mod ? mod : "NULL", want ? want : "NULL");
}

#define CHECK_AT(k, addr, want, start, mod)                               \
	do {                                                               \
		int ok_;                                                   \
		check_at(k, addr, want, start, mod, &ok_);                 \
		CHECK(ok_);                                                \
	} while (0)

static void test_fixture_types_and_lookup(void)
{
	struct kallsyms *k;
	const char *m1 = NULL, *m2 = NULL;

	CHECK(write_file(tmp_path("fixture"), fixture) == 0);
	k = kallsyms__load(tmp_path("fixture"));
	CHECK(k);
	/* _stext/_text/__local_alias share one address; local_fn, weak_fn,
	 * weak_local, after_data and three module symbols; no data. */
	CHECK(kallsyms__count(k) == 8);

	/* Global and undecorated wins among equal addresses. */
	CHECK_AT(k, 0xffffffff81000000, "_stext", 0xffffffff81000000, "");
	CHECK_AT(k, 0xffffffff81000150, "local_fn", 0xffffffff81000100, "");
	CHECK_AT(k, 0xffffffff81000200, "weak_fn", 0xffffffff81000200, "");
	/* d, D, b and R are skipped, so their range is weak_local's. */
	CHECK_AT(k, 0xffffffff81000450, "weak_local", 0xffffffff81000300, "");
	CHECK_AT(k, 0xffffffff81000fff, "weak_local", 0xffffffff81000300, "");
	CHECK_AT(k, 0xffffffff81001000, "after_data", 0xffffffff81001000, "");
	CHECK_AT(k, 0xffffffffc0100050, "mod_fn", 0xffffffffc0100000,
		 "mymod");
	CHECK_AT(k, 0xffffffffc0100104, "mod_fn2", 0xffffffffc0100100,
		 "mymod");
	CHECK_AT(k, 0xffffffffc0200010, "other_fn", 0xffffffffc0200000,
		 "othermod");
	/* Below the first symbol, and the 1 MiB bound past the last. */
	CHECK_AT(k, 0xffffffff80ffffff, NULL, 0, "");
	CHECK_AT(k, 0, NULL, 0, "");
	CHECK_AT(k, 0xffffffffc0200000 + (1 << 20), "other_fn",
		 0xffffffffc0200000, "othermod");
	CHECK_AT(k, 0xffffffffc0200000 + (1 << 20) + 1, NULL, 0, "");
	CHECK_AT(k, UINT64_MAX, NULL, 0, "");

	/* Module names are interned: one string per module. */
	CHECK(kallsyms__lookup(k, 0xffffffffc0100000, NULL, &m1));
	CHECK(kallsyms__lookup(k, 0xffffffffc0100100, NULL, &m2));
	CHECK(m1 == m2);
	/* Out pointers are optional. */
	CHECK(kallsyms__lookup(k, 0xffffffff81000100, NULL, NULL));
	kallsyms__free(k);
}

/* Already sorted input skips qsort; ties must still pick the same name. */
static void test_sorted_ties(void)
{
	struct kallsyms *k;

	CHECK(write_file(tmp_path("sorted"),
			 "ffffffff81000000 t __pfx_start\n"
			 "ffffffff81000000 w weak_start\n"
			 "ffffffff81000000 T _stext\n"
			 "ffffffff81000000 T _text\n"
			 "ffffffff81000010 t next_fn\n") == 0);
	k = kallsyms__load(tmp_path("sorted"));
	CHECK(k);
	CHECK(kallsyms__count(k) == 2);
	CHECK_AT(k, 0xffffffff81000008, "_stext", 0xffffffff81000000, "");
	CHECK_AT(k, 0xffffffff81000010, "next_fn", 0xffffffff81000010, "");
	kallsyms__free(k);
}

static void test_long_names_truncated(void)
{
	char line[4096], *p;
	struct kallsyms *k;
	const char *name;

	p = line + sprintf(line, "ffffffff81000000 T ");
	memset(p, 'x', 3000);
	strcpy(p + 3000, "\n");
	CHECK(write_file(tmp_path("long"), line) == 0);
	k = kallsyms__load(tmp_path("long"));
	CHECK(k);
	name = kallsyms__lookup(k, 0xffffffff81000000, NULL, NULL);
	CHECK(name && strlen(name) == 1024 && name[0] == 'x');
	kallsyms__free(k);
}

static void test_all_zero_is_eperm(void)
{
	struct kallsyms *k;

	CHECK(write_file(tmp_path("zero"),
			 "0000000000000000 T _stext\n"
			 "0000000000000000 t local_fn\n"
			 "0000000000000000 d data\n"
			 "0000000000000000 t mod_fn\t[mod]\n") == 0);
	errno = 0;
	k = kallsyms__load(tmp_path("zero"));
	CHECK(!k);
	CHECK(errno == EPERM);
}

static void test_empty_and_missing(void)
{
	struct kallsyms *k;

	/* An empty file is not restricted, just empty. */
	CHECK(write_file(tmp_path("empty"), "") == 0);
	k = kallsyms__load(tmp_path("empty"));
	CHECK(k);
	CHECK(kallsyms__count(k) == 0);
	CHECK(!kallsyms__lookup(k, 0xffffffff81000000, NULL, NULL));
	kallsyms__free(k);
	kallsyms__free(NULL);

	errno = 0;
	k = kallsyms__load(tmp_path("does-not-exist"));
	CHECK(!k);
	CHECK(errno == ENOENT);
	CHECK(kallsyms__count(NULL) == 0);
	CHECK(!kallsyms__lookup(NULL, 1, NULL, NULL));
}

/* Finds a symbol's line in the file by text, independently of the parser. */
static int find_text_symbol(const char *want, uint64_t *addr)
{
	char line[1024], type, name[512];
	unsigned long long a;
	int found = -1;
	FILE *f;

	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %511s", &a, &type, name) != 3)
			continue;
		if ((type == 'T' || type == 't') && !strcmp(name, want) &&
		    !strchr(line, '[')) {
			*addr = a;
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

static void test_proc_kallsyms(void)
{
	static const char *const wanted[] = {
		"schedule", "do_sys_openat2", "vfs_read",
	};
	const char *name, *mod = NULL;
	uint64_t addr = 0, start = 0;
	struct kallsyms *k;
	size_t i, checked = 0;

	k = kallsyms__load(NULL);
	CHECK(k);
	fprintf(stderr, "  /proc/kallsyms: %zu text symbols\n",
		kallsyms__count(k));
	CHECK(kallsyms__count(k) > 1000);
	for (i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
		if (find_text_symbol(wanted[i], &addr) != 0)
			continue;
		name = kallsyms__lookup(k, addr + 4, &start, &mod);
		CHECK(name);
		CHECK(start == addr);
		CHECK(!strcmp(name, wanted[i]));
		CHECK(mod && !strcmp(mod, ""));
		checked++;
	}
	CHECK(checked > 0);
	kallsyms__free(k);
}

/* Whether this process sees real kernel addresses: root, and not hidden
 * by kptr_restrict (the first line's address is non-zero then). */
static const char *proc_kallsyms_unusable(void)
{
	unsigned long long a = 0;
	FILE *f;
	int n;

	if (geteuid() != 0)
		return "not root";
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return "/proc/kallsyms not readable";
	n = fscanf(f, "%llx", &a);
	fclose(f);
	if (n != 1 || !a)
		return "addresses hidden (kptr_restrict)";
	return NULL;
}

int main(void)
{
	const char *why;
	char cmd[128];

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_fixture_types_and_lookup);
	RUN(test_sorted_ties);
	RUN(test_long_names_truncated);
	RUN(test_all_zero_is_eperm);
	RUN(test_empty_and_missing);
	why = proc_kallsyms_unusable();
	if (why)
		SKIP(test_proc_kallsyms, why);
	else
		RUN(test_proc_kallsyms);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	CHECK_EXIT();
}
