/* The perf map parser: well-formed lines, names with spaces, garbage
 * lines skipped and counted, overlapping entries, and the file checks
 * (owner, symbolic links, size bound). */
#include "check.h"
#include "proc/perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

static char tmpdir[] = "/tmp/tagprof-perfmap.XXXXXX";

static struct perfmap *parse(const char *text, struct perfmap_stats *st)
{
	return perfmap__parse(text, strlen(text), st);
}

static bool name_at(const struct perfmap *m, uint64_t addr, const char *want)
{
	const char *got = perfmap__lookup(m, addr, NULL);

	if (!want && !got)
		return true;
	if (want && got && !strcmp(want, got))
		return true;
	fprintf(stderr, "  %#llx: got %s, want %s\n", (unsigned long long)addr,
		got ? got : "NULL", want ? want : "NULL");
	return false;
}

static void test_good_lines(void)
{
	struct perfmap_stats st;
	struct perfmap *m = parse(
		"7f0000001000 40 LazyCompile:~foo /srv/app.js:12\n"
		"0x7f0000002000 0x10 bar\r\n"
		"7F0000003000 8 Interpreter\n"
		"7f0000004000\t20\tname with\ttabs  \n"
		"7f0000005000 1 last_without_newline", &st);
	uint64_t start = 0;

	CHECK(m);
	CHECK(st.entries == 5 && st.bad_lines == 0 && !st.truncated);
	CHECK(perfmap__count(m) == 5);
	CHECK(name_at(m, 0x7f0000001000, "LazyCompile:~foo /srv/app.js:12"));
	CHECK(name_at(m, 0x7f000000103f, "LazyCompile:~foo /srv/app.js:12"));
	CHECK(name_at(m, 0x7f0000001040, NULL));	/* one past the end */
	CHECK(name_at(m, 0x7f0000000fff, NULL));
	CHECK(name_at(m, 0x7f0000002008, "bar"));	/* 0x, CRLF */
	CHECK(name_at(m, 0x7f0000003004, "Interpreter"));
	CHECK(name_at(m, 0x7f0000004000, "name with\ttabs"));
	CHECK(name_at(m, 0x7f0000005000, "last_without_newline"));
	CHECK(perfmap__lookup(m, 0x7f0000002004, &start) && start == 0x7f0000002000);
	perfmap__free(m);
}

static void test_garbage_lines(void)
{
	struct perfmap_stats st;
	struct perfmap *m = parse(
		"not a line\n"
		"1000\n"			/* no size */
		"1000 10\n"			/* no name */
		"1000 10 \n"			/* blank name */
		"1000 0 zero\n"			/* empty range */
		"ffffffffffffffff 10 wraps\n"
		"11112222333344445 10 seventeen_digits\n"
		"1000 zz name\n"
		" 1000 10 leading_blank\n"
		"1000,10 comma\n"
		"\n"				/* blank lines are not garbage */
		"\n"
		"2000 10 good\n", &st);

	CHECK(m);
	CHECK(st.bad_lines == 10);
	CHECK(st.entries == 1);
	CHECK(name_at(m, 0x2004, "good"));
	CHECK(name_at(m, 0x1004, NULL));
	perfmap__free(m);
}

static void test_nul_and_utf8(void)
{
	static const char text[] = "1000 10 a\0b\n2000 10 caf\xc3\xa9 \xff!\n";
	struct perfmap_stats st;
	struct perfmap *m = perfmap__parse(text, sizeof(text) - 1, &st);

	CHECK(m);
	CHECK(st.bad_lines == 1 && st.entries == 1);
	CHECK(name_at(m, 0x2000, "caf\xc3\xa9 \xef\xbf\xbd!"));
	perfmap__free(m);
}

/* Later lines win where entries overlap (code memory reused). */
static void test_overlap(void)
{
	struct perfmap_stats st;
	struct perfmap *m = parse(
		"1000 1000 old_big\n"
		"1800 100 newer_inside\n"
		"1000 10 newest_at_start\n"
		"1000 1000 old_big_again_earlier\n", &st);

	CHECK(m);
	/* The last line covers all of 0x1000-0x2000 again. */
	CHECK(name_at(m, 0x1000, "old_big_again_earlier"));
	CHECK(name_at(m, 0x1850, "old_big_again_earlier"));
	perfmap__free(m);
	m = parse("1000 1000 old_big\n"
		  "1800 100 newer_inside\n"
		  "1000 10 newest_at_start\n", &st);
	CHECK(m);
	CHECK(name_at(m, 0x1004, "newest_at_start"));
	CHECK(name_at(m, 0x1010, "old_big"));
	CHECK(name_at(m, 0x1850, "newer_inside"));
	CHECK(name_at(m, 0x1900, "old_big"));
	CHECK(name_at(m, 0x2000, NULL));
	perfmap__free(m);
}

static void test_long_name(void)
{
	char *text = malloc(PERFMAP_NAME_MAX * 2 + 32);
	struct perfmap_stats st;
	struct perfmap *m;
	const char *name;
	int n;

	CHECK(text);
	n = sprintf(text, "1000 10 ");
	memset(text + n, 'x', PERFMAP_NAME_MAX * 2);
	text[n + PERFMAP_NAME_MAX * 2] = '\0';
	m = parse(text, &st);
	free(text);
	CHECK(m);
	name = perfmap__lookup(m, 0x1000, NULL);
	CHECK(name && strlen(name) == PERFMAP_NAME_MAX);
	perfmap__free(m);
}

static void test_empty(void)
{
	struct perfmap_stats st;
	struct perfmap *m = perfmap__parse("", 0, &st);

	CHECK(m);
	CHECK(perfmap__count(m) == 0 && st.bad_lines == 0);
	CHECK(!perfmap__lookup(m, 0, NULL));
	CHECK(!perfmap__lookup(NULL, 0, NULL));
	perfmap__free(m);
}

static bool write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	bool ok;

	if (!f)
		return false;
	ok = fputs(text, f) >= 0;
	return fclose(f) == 0 && ok;
}

static void test_read_file(void)
{
	char path[PATH_MAX], link[PATH_MAX];
	struct perfmap_stats st;
	struct perfmap *m = NULL;

	snprintf(path, sizeof(path), "%s/perf-1.map", tmpdir);
	CHECK(write_text(path, "1000 10 from_file\nbad\n"));
	CHECK(perfmap__read(path, getuid(), SIZE_MAX, &m, &st) == 0);
	CHECK(m && name_at(m, 0x1000, "from_file") && st.bad_lines == 1);
	perfmap__free(m);
	/* Owned by someone else (unless that is root). */
	if (getuid() == 0) {
		CHECK(chown(path, 12345, 12345) == 0);
		CHECK(perfmap__read(path, 4242, SIZE_MAX, &m, &st) == -EPERM && !m);
		CHECK(perfmap__read(path, 12345, SIZE_MAX, &m, &st) == 0);
		perfmap__free(m);
	}
	/* A symbolic link is never followed. */
	snprintf(link, sizeof(link), "%s/perf-2.map", tmpdir);
	CHECK(symlink(path, link) == 0);
	CHECK(perfmap__read(link, getuid(), SIZE_MAX, &m, &st) == -EPERM && !m);
	/* Not a regular file. */
	snprintf(link, sizeof(link), "%s/perf-3.map", tmpdir);
	CHECK(mkfifo(link, 0600) == 0);
	CHECK(perfmap__read(link, getuid(), SIZE_MAX, &m, &st) == -ENOEXEC && !m);
	snprintf(link, sizeof(link), "%s/missing.map", tmpdir);
	CHECK(perfmap__read(link, getuid(), SIZE_MAX, &m, &st) == -ENOENT && !m);
}

/* A file over the bound: its first PERFMAP_FILE_MAX bytes are read. */
static void test_read_bound(void)
{
	/* Long lines, so the byte bound comes before the entry bound. */
	static const char line[] = "10 1 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n";
	const char *name;
	char path[PATH_MAX], buf[1 << 16];
	struct perfmap_stats st;
	struct perfmap *m = NULL;
	size_t total = 0, n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/big.map", tmpdir);
	f = fopen(path, "w");
	CHECK(f);
	while (n + sizeof(line) < sizeof(buf)) {
		memcpy(buf + n, line, sizeof(line) - 1);
		n += sizeof(line) - 1;
	}
	while (total < PERFMAP_FILE_MAX + (1u << 20)) {
		if (fwrite(buf, 1, n, f) != n)
			break;
		total += n;
	}
	fprintf(f, "20 1 past_the_bound\n");
	CHECK(fclose(f) == 0);
	CHECK(perfmap__read(path, getuid(), SIZE_MAX, &m, &st) == 0);
	CHECK(m && st.truncated);
	CHECK(st.bad_lines == 0);
	CHECK(perfmap__count(m) < PERFMAP_ENTRIES_MAX);
	CHECK(!perfmap__lookup(m, 0x20, NULL));
	name = perfmap__lookup(m, 0x10, NULL);
	CHECK(name && strlen(name) == sizeof(line) - 7 && name[0] == 'x');
	perfmap__free(m);
	unlink(path);
}

/* The memory budget: a file over it is refused before it is read; one
 * under it that parses into more (short lines cost a 24-byte entry each)
 * is cut where the budget ends; and the map never holds more. */
static void test_read_budget(void)
{
	char path[PATH_MAX];
	struct perfmap_stats st;
	struct perfmap *m = NULL;
	size_t i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/budget.map", tmpdir);
	f = fopen(path, "w");
	CHECK(f);
	for (i = 0; i < 10000; i++)
		fprintf(f, "%zx 1 f\n", 0x1000 + i);
	CHECK(fclose(f) == 0);
	/* 10000 lines of 8 to 9 bytes: about 85 KB. */
	CHECK(perfmap__read(path, getuid(), 64 << 10, &m, &st) == -EFBIG && !m);
	CHECK(st.lines == 0);
	CHECK(perfmap__read(path, getuid(), 128 << 10, &m, &st) == 0 && m);
	CHECK(st.truncated && perfmap__count(m) < 10000);
	CHECK(perfmap__bytes(m) <= (128 << 10) + 64);
	CHECK(name_at(m, 0x1000, "f"));
	perfmap__free(m);
	CHECK(perfmap__read(path, getuid(), 1 << 20, &m, &st) == 0 && m);
	CHECK(!st.truncated && perfmap__count(m) == 10000);
	CHECK(name_at(m, 0x1000 + 9999, "f"));
	/* What is held is what the entries need, not a doubled array. */
	CHECK(perfmap__bytes(m) <= 64 + 10000 * 24 + 10000 * 2);
	perfmap__free(m);
	unlink(path);
}

/* A line longer than the read buffer is cut, not lost, and the lines
 * after it are read. */
static void test_read_long_line(void)
{
	char path[PATH_MAX];
	struct perfmap_stats st;
	struct perfmap *m = NULL;
	const char *name;
	FILE *f;

	snprintf(path, sizeof(path), "%s/long.map", tmpdir);
	f = fopen(path, "w");
	CHECK(f);
	fprintf(f, "1000 10 ");
	for (int i = 0; i < 200000; i++)
		fputc('y', f);
	fprintf(f, "\n2000 10 after_it\n3000 10 no_newline");
	CHECK(fclose(f) == 0);
	CHECK(perfmap__read(path, getuid(), SIZE_MAX, &m, &st) == 0 && m);
	name = perfmap__lookup(m, 0x1000, NULL);
	CHECK(name && strlen(name) == PERFMAP_NAME_MAX);
	CHECK(name_at(m, 0x2000, "after_it"));
	CHECK(name_at(m, 0x3000, "no_newline"));
	CHECK(st.bad_lines == 0);
	perfmap__free(m);
	unlink(path);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_good_lines);
	RUN(test_garbage_lines);
	RUN(test_nul_and_utf8);
	RUN(test_overlap);
	RUN(test_long_name);
	RUN(test_empty);
	RUN(test_read_file);
	RUN(test_read_bound);
	RUN(test_read_budget);
	RUN(test_read_long_line);
	check_remove_dir(tmpdir);
	CHECK_EXIT();
}
