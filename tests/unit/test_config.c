/* Agent settings: defaults, the config file, flags on top, and the size
 * and duration parsers they share. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "cmd/config.h"
#include "sample_event.h"

#define TMP_TEMPLATE "/tmp/tagprof-test-config-XXXXXX"

/* Writes len bytes of text to a new 0600 file; path gets its name. */
static int write_conf(char *path, const char *text, size_t len)
{
	ssize_t n;
	int fd;

	strcpy(path, TMP_TEMPLATE);
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	n = write(fd, text, len);
	if (fchmod(fd, 0600) < 0 || n < 0 || (size_t)n != len) {
		close(fd);
		unlink(path);
		return -1;
	}
	return close(fd);
}

static int load_text(struct agent_config *c, const char *text, size_t len,
		     char *path, char *err, size_t errlen)
{
	int ret;

	if (write_conf(path, text, len) < 0)
		return -999;
	ret = config__load(c, path, err, errlen);
	unlink(path);
	return ret;
}

/* err starts with "PATH:LINE: ". */
static int has_prefix(const char *err, const char *path, unsigned int line)
{
	char want[128];

	snprintf(want, sizeof(want), "%s:%u: ", path, line);
	return strstr(err, want) == err;
}

static void test_defaults(void)
{
	struct agent_config c;

	config__defaults(&c);
	CHECK(!strcmp(c.output_dir, "/var/lib/tagprof"));
	CHECK(c.window_s == 60);
	CHECK(c.freq == 19);
	CHECK(!strcmp(c.event, "auto"));
	CHECK(c.push_url == NULL);
	CHECK(c.push_auth_file == NULL);
	CHECK(c.retain_files == 1440);
	CHECK(c.retain_bytes == 1ull << 30);
	CHECK(c.max_memory == 64ull << 20);
	CHECK(c.verbose == 0);
	CHECK(c.unwind == TP_UNWIND_AUTO);
	CHECK(c.stack_bytes == 8192);
	config__free(&c);
	CHECK(c.output_dir == NULL && c.event == NULL);
	config__free(&c);		/* twice is harmless */
	config__free(NULL);
}

/* Every key, comments, blank lines, quotes, odd spacing, a CRLF line and
 * a last line without a newline. */
static const char full_file[] =
	"# tagprof agent configuration\n"
	"\n"
	"   \t\n"
	"output-dir=/data/profiles\n"
	"  window = 5m   # five minutes\n"
	"freq\t=\t99\n"
	"event = \"  cycles # not a comment \"  # but this is\n"
	"push-url = https://pyroscope.example:4040/\n"
	"push-auth-file = /etc/tagprof/token\n"
	"retain-bytes = 2GiB\n"
	"max-memory = 128m\n"
	"verbose = true\r\n"
	"    # indented comment\n"
	"retain-files = 0";

static void test_full_file(void)
{
	struct agent_config c;
	char path[64], err[256];

	config__defaults(&c);
	CHECK(load_text(&c, full_file, strlen(full_file), path, err,
			sizeof(err)) == 0);
	CHECK(err[0] == '\0');
	CHECK(!strcmp(c.output_dir, "/data/profiles"));
	CHECK(c.window_s == 300);
	CHECK(c.freq == 99);
	CHECK(!strcmp(c.event, "  cycles # not a comment "));
	CHECK(!strcmp(c.push_url, "https://pyroscope.example:4040/"));
	CHECK(!strcmp(c.push_auth_file, "/etc/tagprof/token"));
	CHECK(c.retain_files == 0);
	CHECK(c.retain_bytes == 2ull << 30);
	CHECK(c.max_memory == 128ull << 20);
	CHECK(c.verbose == 1);

	/* flags come after the file and win */
	CHECK(config__set(&c, "window", "90s", err, sizeof(err)) == 0);
	CHECK(config__set(&c, "output-dir", "/srv/tp", err, sizeof(err)) == 0);
	CHECK(config__set(&c, "push-url", "none", err, sizeof(err)) == 0);
	CHECK(config__set(&c, "push-auth-file", "", err, sizeof(err)) == 0);
	CHECK(config__set(&c, "verbose", "3", err, sizeof(err)) == 0);
	CHECK(config__set(&c, "event", "cpu-clock", err, sizeof(err)) == 0);
	CHECK(c.window_s == 90);
	CHECK(!strcmp(c.output_dir, "/srv/tp"));
	CHECK(c.push_url == NULL && c.push_auth_file == NULL);
	CHECK(c.verbose == 3);
	CHECK(!strcmp(c.event, "cpu-clock"));
	CHECK(c.freq == 99);			/* untouched by flags */
	config__free(&c);
}

/* A file only replaces what it names; "" and none unset push-url. */
static void test_partial_and_clear(void)
{
	static const char keep[] = "freq = 7\n";
	static const char quoted_empty[] = "push-url = \"\"\n";
	static const char none[] = "push-url = none\n";
	struct agent_config c;
	char path[64], err[256];

	config__defaults(&c);
	CHECK(config__set(&c, "push-url", "http://h/", err, sizeof(err)) == 0);
	CHECK(load_text(&c, keep, strlen(keep), path, err, sizeof(err)) == 0);
	CHECK(c.freq == 7 && !strcmp(c.push_url, "http://h/"));
	CHECK(load_text(&c, quoted_empty, strlen(quoted_empty), path, err,
			sizeof(err)) == 0);
	CHECK(c.push_url == NULL);
	CHECK(config__set(&c, "push-url", "HTTPS://h", err, sizeof(err)) == 0);
	CHECK(load_text(&c, none, strlen(none), path, err, sizeof(err)) == 0);
	CHECK(c.push_url == NULL);
	CHECK(load_text(&c, "", 0, path, err, sizeof(err)) == 0);
	CHECK(c.freq == 7);
	config__free(&c);
}

struct bad_case {
	const char *text;
	size_t len;		/* 0: strlen(text) */
	unsigned int line;
	const char *msg;
};

/* Line 1 of each sets output-dir, so c keeping its old one shows the
 * file was applied all or nothing. */
static const struct bad_case bad_cases[] = {
	{ "output-dir = /changed\nbogus = 1\n", 0, 2,
	  "unknown key (known: output-dir," },
	{ "output-dir = /changed\n\n# c\nwindow 60\n", 0, 4,
	  "missing '=' after the key (use key = value)" },
	{ "output-dir = /changed\n= 5\n", 0, 2, "missing key before '='" },
	{ "output-dir = /changed\nfreq =\n", 0, 2, "freq: empty value" },
	{ "output-dir = /changed\nfreq =   # none\n", 0, 2,
	  "freq: empty value" },
	{ "output-dir = /changed\nevent = \"\"\n", 0, 2,
	  "event: empty value" },
	{ "output-dir = /changed\npush-url =\n", 0, 2,
	  "push-url: empty value (write \"\" or none to unset)" },
	{ "output-dir = /changed\nwindow = 5x\n", 0, 2,
	  "window: the value is not a duration (use e.g. 60, 90s, 5m, 1h)" },
	{ "output-dir = /changed\nwindow = 0\n", 0, 2,
	  "window: the value must be 1s to 1d" },
	{ "output-dir = /changed\nwindow = 25h\n", 0, 2,
	  "window: the value must be 1s to 1d" },
	{ "output-dir = /changed\nfreq = 12a\n", 0, 2,
	  "freq: the value is not a whole number" },
	{ "output-dir = /changed\nfreq = 0\n", 0, 2,
	  "freq: the value must be 1 to 100000" },
	{ "output-dir = /changed\nfreq = 100001\n", 0, 2,
	  "freq: the value must be 1 to 100000" },
	{ "output-dir = /changed\nretain-files = -1\n", 0, 2,
	  "retain-files: the value is not a whole number" },
	{ "output-dir = /changed\nretain-bytes = 1.5G\n", 0, 2,
	  "retain-bytes: the value is not a size" },
	{ "output-dir = /changed\nmax-memory = 512K\n", 0, 2,
	  "max-memory: the value is below the minimum of 1M" },
	{ "output-dir = /changed\nverbose = 4\n", 0, 2,
	  "verbose: the value must be 0 to 3, true or false" },
	{ "output-dir = /changed\noutput-dir = /again\n", 0, 2,
	  "output-dir: set twice (first on line 1)" },
	{ "output-dir = /changed\nwindow = 60\n\nwindow = 90\n", 0, 4,
	  "window: set twice (first on line 2)" },
	{ "output-dir = relative/dir\n", 0, 1,
	  "output-dir: the value is not an absolute path" },
	{ "output-dir = /changed\npush-url = ftp://host/\n", 0, 2,
	  "push-url: the value must start with http:// or https://" },
	{ "output-dir = /changed\npush-url = http://\n", 0, 2,
	  "push-url: the value has no host" },
	{ "output-dir = /changed\npush-url = \"http://a b\"\n", 0, 2,
	  "contains spaces or control characters" },
	{ "output-dir = /changed\npush-auth-file = token\n", 0, 2,
	  "push-auth-file: the value is not an absolute path" },
	{ "output-dir = /changed\nevent = \"cycles\n", 0, 2,
	  "missing closing '\"'" },
	{ "output-dir = /changed\nevent = \"cycles\" x\n", 0, 2,
	  "unexpected text after the closing '\"'" },
	{ "output-dir = /changed\nevent = a\0b\n", 34, 2,
	  "line contains a NUL byte" },
	{ "output-dir = /changed\nfreq = 10\nverbose = 9", 0, 3,
	  "verbose: the value must be" },
	{ "output-dir = /changed\nunwind = lbr\n", 0, 2,
	  "unwind: the value must be fp, dwarf or auto" },
	{ "output-dir = /changed\nunwind = DWARF\n", 0, 2,
	  "unwind: the value must be fp, dwarf or auto" },
	{ "output-dir = /changed\nunwind =\n", 0, 2, "unwind: empty value" },
	{ "output-dir = /changed\nstack-bytes = 0\n", 0, 2,
	  "stack-bytes: the value is not a positive size" },
	{ "output-dir = /changed\nstack-bytes = -8\n", 0, 2,
	  "stack-bytes: the value is not a positive size" },
	{ "output-dir = /changed\nstack-bytes = 8 K\n", 0, 2,
	  "stack-bytes: the value is not a positive size" },
	{ "output-dir = /changed\nunwind = fp\nunwind = dwarf\n", 0, 3,
	  "unwind: set twice (first on line 2)" },
};

static void test_bad_lines(void)
{
	struct agent_config c;
	char path[64], err[512];
	size_t i, len;
	int ret;

	config__defaults(&c);
	CHECK(config__set(&c, "output-dir", "/srv/before", err,
			  sizeof(err)) == 0);
	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *b = &bad_cases[i];

		len = b->len ? b->len : strlen(b->text);
		ret = load_text(&c, b->text, len, path, err, sizeof(err));
		if (ret != -EINVAL || !has_prefix(err, path, b->line) ||
		    !strstr(err, b->msg))
			fprintf(stderr, "  case %zu: %d \"%s\"\n", i, ret, err);
		CHECK(ret == -EINVAL);
		CHECK(has_prefix(err, path, b->line));
		CHECK(strstr(err, b->msg));
		CHECK(!strcmp(c.output_dir, "/srv/before"));
		CHECK(c.window_s == 60 && c.freq == 19 && c.verbose == 0);
	}
	config__free(&c);
}

/* The exact message the brief promises for a bad duration. */
static void test_message_format(void)
{
	static const char text[] = "# c\n\nwindow = 5x\n";
	struct agent_config c;
	char path[64], err[256], want[320];

	config__defaults(&c);
	CHECK(load_text(&c, text, strlen(text), path, err, sizeof(err)) ==
	      -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:3: window: the value is not a duration (use e.g. 60, 90s, 5m, 1h)",
		 path);
	CHECK(!strcmp(err, want));
	/* a small buffer is truncated, still terminated */
	CHECK(load_text(&c, text, strlen(text), path, err, 8) == -EINVAL);
	CHECK(strlen(err) == 7);
	CHECK(load_text(&c, text, strlen(text), path, NULL, 0) == -EINVAL);
	config__free(&c);
}

/* 4096 bytes of line are fine, 4097 are not. */
static void test_long_lines(void)
{
	static const char head[] = "output-dir = /changed\nevent = ";
	size_t hlen = strlen(head), vlen = 4096 - strlen("event = ");
	struct agent_config c;
	char path[64], err[256];
	char *text;

	text = malloc(hlen + vlen + 3);
	CHECK(text);
	memcpy(text, head, hlen);
	memset(text + hlen, 'a', vlen + 1);
	text[hlen + vlen] = '\n';
	config__defaults(&c);
	CHECK(load_text(&c, text, hlen + vlen + 1, path, err,
			sizeof(err)) == 0);
	CHECK(strlen(c.event) == vlen && c.event[0] == 'a');
	CHECK(config__set(&c, "output-dir", "/srv/before", err,
			  sizeof(err)) == 0);
	text[hlen + vlen] = 'a';
	text[hlen + vlen + 1] = '\n';
	CHECK(load_text(&c, text, hlen + vlen + 2, path, err, sizeof(err)) ==
	      -EINVAL);
	free(text);
	CHECK(has_prefix(err, path, 2));
	CHECK(strstr(err, "line is longer than 4096 bytes"));
	CHECK(!strcmp(c.output_dir, "/srv/before"));
	config__free(&c);
}

static void test_file_checks(void)
{
	static const char text[] = "output-dir = /changed\n";
	struct agent_config c;
	char path[64], dir[64], err[256], want[128];

	config__defaults(&c);
	CHECK(write_conf(path, text, strlen(text)) == 0);

	CHECK(chmod(path, 0664) == 0);
	CHECK(config__load(&c, path, err, sizeof(err)) == -EPERM);
	snprintf(want, sizeof(want), "%s: is writable by group or others",
		 path);
	CHECK(!strcmp(err, want));
	CHECK(chmod(path, 0602) == 0);
	CHECK(config__load(&c, path, err, sizeof(err)) == -EPERM);
	CHECK(!strcmp(c.output_dir, "/var/lib/tagprof"));
	/* owned by someone else (when we are root and can give it away) */
	CHECK(chmod(path, 0600) == 0);
	if (geteuid() == 0) {
		CHECK(chown(path, 65534, 65534) == 0);
		CHECK(config__load(&c, path, err, sizeof(err)) == -EPERM);
		CHECK(strstr(err, "is owned by uid 65534"));
		CHECK(chown(path, 0, 0) == 0);
	}
	/* readable by all is fine */
	CHECK(chmod(path, 0644) == 0);
	CHECK(config__load(&c, path, err, sizeof(err)) == 0);
	CHECK(!strcmp(c.output_dir, "/changed"));

	CHECK(unlink(path) == 0);
	CHECK(config__load(&c, path, err, sizeof(err)) == -ENOENT);
	CHECK(strstr(err, path) == err && strstr(err, ": No such file"));

	strcpy(dir, TMP_TEMPLATE);
	CHECK(mkdtemp(dir));
	CHECK(config__load(&c, dir, err, sizeof(err)) == -EISDIR);
	CHECK(rmdir(dir) == 0);
	snprintf(want, sizeof(want), "%s: is a directory", dir);
	CHECK(!strcmp(err, want));

	CHECK(config__load(&c, "/dev/null", err, sizeof(err)) == -EINVAL);
	CHECK(!strcmp(err, "/dev/null: is not a regular file"));
	CHECK(!strcmp(c.output_dir, "/changed"));
	config__free(&c);
}

/* Nothing read from the file shows in a message: the file may not be the
 * one its name says (root pointed at /etc/shadow, which root can read and
 * the user cannot), so no key, value or stray text of a bad line. */
static void test_no_echo(void)
{
	static const char *const lines[] = {
		"root:hunter2:19000:0:99999:7:::\n",	/* no '=' */
		"hunter2 = 1\n",			/* unknown key */
		"window = hunter2\n",			/* bad value */
		"push-url = hunter2\n",
		"push-auth-file = hunter2\n",
		"event = \"x\" hunter2\n",		/* after the quote */
		"event = \"hunter2\n",			/* no closing quote */
	};
	struct agent_config c;
	char path[64], err[512];
	size_t i;

	config__defaults(&c);
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		int ret = load_text(&c, lines[i], strlen(lines[i]), path, err,
				    sizeof(err));

		if (ret != -EINVAL || !has_prefix(err, path, 1) ||
		    strstr(err, "hunter2"))
			fprintf(stderr, "  line %zu: %d \"%s\"\n", i, ret, err);
		CHECK(ret == -EINVAL);
		CHECK(has_prefix(err, path, 1));
		CHECK(!strstr(err, "hunter2"));
	}
	config__free(&c);
}

/* The config file may be a symlink that root or we made (a Kubernetes
 * ConfigMap: agent.conf -> ..data/agent.conf, ..data -> a directory), and
 * only one: another user's symlink is refused without opening its target,
 * and so is a chain. */
static void test_symlinks(void)
{
	static const char text[] = "output-dir = /linked\n";
	char dir[64], p[4][128], err[512];
	struct agent_config c;
	int r[4];

	strcpy(dir, TMP_TEMPLATE);
	CHECK(mkdtemp(dir));
	snprintf(p[0], sizeof(p[0]), "%s/..2026", dir);
	snprintf(p[1], sizeof(p[1]), "%s/..data", dir);
	snprintf(p[2], sizeof(p[2]), "%s/agent.conf", dir);
	snprintf(p[3], sizeof(p[3]), "%s/chain.conf", dir);
	CHECK(mkdir(p[0], 0755) == 0);
	CHECK(symlink("..2026", p[1]) == 0);
	CHECK(symlink("..data/agent.conf", p[2]) == 0);
	CHECK(symlink("agent.conf", p[3]) == 0);
	snprintf(err, sizeof(err), "%s/agent.conf", p[0]);
	{
		FILE *f = fopen(err, "w");

		CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
	}
	config__defaults(&c);
	r[0] = config__load(&c, p[2], err, sizeof(err));
	r[1] = config__load(&c, p[3], err, sizeof(err));
	CHECK(strstr(err, "is a symlink to a symlink"));
	r[2] = r[3] = -EPERM;
	if (geteuid() == 0) {
		CHECK(lchown(p[2], 65534, 65534) == 0);
		r[2] = config__load(&c, p[2], err, sizeof(err));
		CHECK(strstr(err, "is a symlink owned by uid 65534"));
	}
	CHECK(!strcmp(c.output_dir, "/linked"));
	config__free(&c);
	unlink(p[3]);
	unlink(p[2]);
	unlink(p[1]);
	snprintf(err, sizeof(err), "%s/agent.conf", p[0]);
	unlink(err);
	rmdir(p[0]);
	rmdir(dir);
	CHECK(r[0] == 0);
	CHECK(r[1] == -ELOOP);
	CHECK(r[2] == -EPERM);
}

static void test_set(void)
{
	struct agent_config c;
	char err[256];

	config__defaults(&c);
	CHECK(config__set(&c, "window", "0", err, sizeof(err)) == -EINVAL);
	CHECK(!strcmp(err, "--window: \"0\" must be 1s to 1d"));
	CHECK(c.window_s == 60);
	CHECK(config__set(&c, "freq", "", err, sizeof(err)) == -EINVAL);
	CHECK(!strcmp(err, "--freq: empty value"));
	CHECK(config__set(&c, "max-memory", "1x", err, sizeof(err)) ==
	      -EINVAL);
	CHECK(!strncmp(err, "--max-memory: \"1x\" is not a size", 32));
	CHECK(config__set(&c, "retain-files", "12a", err, sizeof(err)) ==
	      -EINVAL);
	CHECK(c.retain_files == 1440);		/* not half-parsed */
	CHECK(config__set(&c, "nope", "1", err, sizeof(err)) == -EINVAL);
	CHECK(!strncmp(err, "unknown key \"nope\"", 18));
	CHECK(config__set(&c, "freq", NULL, err, sizeof(err)) == -EINVAL);
	CHECK(config__set(&c, NULL, "1", err, sizeof(err)) == -EINVAL);
	CHECK(config__set(&c, "freq", "0", NULL, 0) == -EINVAL);

	CHECK(config__set(&c, "verbose", "true", err, sizeof(err)) == 0);
	CHECK(c.verbose == 1);
	CHECK(config__set(&c, "verbose", "false", err, sizeof(err)) == 0);
	CHECK(c.verbose == 0);
	CHECK(config__set(&c, "retain-bytes", "0", err, sizeof(err)) == 0);
	CHECK(c.retain_bytes == 0);
	CHECK(config__set(&c, "max-memory", "8M", err, sizeof(err)) == 0);
	CHECK(c.max_memory == 8ull << 20);
	CHECK(config__set(&c, "window", "1d", err, sizeof(err)) == 0);
	CHECK(c.window_s == 86400);
	CHECK(config__set(&c, "freq", "100000", err, sizeof(err)) == 0);
	CHECK(c.freq == 100000);
	CHECK(config__set(&c, "push-auth-file", "/a", err, sizeof(err)) == 0);
	CHECK(config__set(&c, "push-auth-file", "none", err, sizeof(err)) ==
	      0);
	CHECK(c.push_auth_file == NULL);
	config__free(&c);
}

/* debuginfod-urls: unset means the environment's DEBUGINFOD_URLS, none
 * means no servers whatever it says, else http(s) URLs. */
static void test_debuginfod_urls(void)
{
	struct agent_config c, d;
	char err[256];

	config__defaults(&c);
	CHECK(c.debuginfod_urls == NULL);
	CHECK(!config__set(&c, "debuginfod-urls",
			   "http://a:8002 https://b/x", err, sizeof(err)));
	CHECK(!strcmp(c.debuginfod_urls, "http://a:8002 https://b/x"));
	CHECK(config__set(&c, "debuginfod-urls", "http://a ftp://b", err,
			  sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "must be URLs"));
	CHECK(config__set(&c, "debuginfod-urls", "http://", err,
			  sizeof(err)) == -EINVAL);
	CHECK(!strcmp(c.debuginfod_urls, "http://a:8002 https://b/x"));
	CHECK(!config__copy(&d, &c));
	CHECK(d.debuginfod_urls != c.debuginfod_urls &&
	      !strcmp(d.debuginfod_urls, c.debuginfod_urls));
	config__free(&d);
	CHECK(!config__set(&c, "debuginfod-urls", "none", err, sizeof(err)));
	CHECK(c.debuginfod_urls && !*c.debuginfod_urls);
	config__free(&c);
}

static void test_copy(void)
{
	struct agent_config a, b;
	char err[256];

	config__defaults(&a);
	CHECK(config__set(&a, "push-url", "http://h:1/", err,
			  sizeof(err)) == 0);
	CHECK(config__copy(&b, &a) == 0);
	CHECK(b.output_dir != a.output_dir && b.push_url != a.push_url);
	CHECK(!strcmp(b.output_dir, a.output_dir));
	CHECK(!strcmp(b.push_url, a.push_url) && b.push_auth_file == NULL);
	CHECK(b.window_s == a.window_s && b.max_memory == a.max_memory);
	CHECK(config__set(&b, "event", "cycles", err, sizeof(err)) == 0);
	CHECK(!strcmp(a.event, "auto"));
	CHECK(config__copy(&a, &a) == 0);
	config__free(&a);
	config__free(&b);
}

struct parse_case {
	const char *s;
	bool ok;
	uint64_t want;
};

static const struct parse_case size_cases[] = {
	{ "0", true, 0 },
	{ "7", true, 7 },
	{ "1K", true, 1024 },
	{ "1k", true, 1024 },
	{ "2MiB", true, 2ull << 20 },
	{ "2mib", true, 2ull << 20 },
	{ "5m", true, 5ull << 20 },
	{ "64M", true, 64ull << 20 },
	{ "1G", true, 1ull << 30 },
	{ "3TiB", true, 3ull << 40 },
	{ "0K", true, 0 },
	{ "18446744073709551615", true, UINT64_MAX },
	{ "17179869183G", true, 17179869183ull << 30 },
	{ "18446744073709551616", false, 0 },
	{ "99999999999999999999999", false, 0 },
	{ "17179869184G", false, 0 },
	{ "16777216T", false, 0 },
	{ "", false, 0 },
	{ "K", false, 0 },
	{ "-1", false, 0 },
	{ "+1", false, 0 },
	{ " 1", false, 0 },
	{ "1 K", false, 0 },
	{ "1.5M", false, 0 },
	{ "2h", false, 0 },
	{ "1d", false, 0 },
	{ "1x", false, 0 },
	{ "1KB", false, 0 },
	{ "1Ki", false, 0 },
	{ "1KiBx", false, 0 },
	{ "0x10", false, 0 },
};

static const struct parse_case duration_cases[] = {
	{ "0", true, 0 },
	{ "90", true, 90 },
	{ "90s", true, 90 },
	{ "5m", true, 300 },
	{ "2h", true, 7200 },
	{ "1d", true, 86400 },
	{ "18446744073709551615", true, UINT64_MAX },
	{ "18446744073709551615s", true, UINT64_MAX },
	{ "307445734561825860m", true, 307445734561825860ull * 60 },
	{ "307445734561825861m", false, 0 },
	{ "18446744073709551616", false, 0 },
	{ "213503982334602d", false, 0 },
	{ "", false, 0 },
	{ "s", false, 0 },
	{ "-1", false, 0 },
	{ "1.5h", false, 0 },
	{ "5M", false, 0 },
	{ "1K", false, 0 },
	{ "1x", false, 0 },
	{ "1ms", false, 0 },
	{ "1d2", false, 0 },
	{ "1 s", false, 0 },
};

static bool run_table(const struct parse_case *t, size_t n,
		      bool (*parse)(const char *, uint64_t *))
{
	uint64_t v;
	bool ok, all = true;
	size_t i;

	for (i = 0; i < n; i++) {
		v = 12345;
		ok = parse(t[i].s, &v);
		if (ok != t[i].ok || (ok && v != t[i].want)) {
			fprintf(stderr, "  \"%s\": got %d %llu\n", t[i].s,
				ok, (unsigned long long)v);
			all = false;
		}
	}
	return all;
}

static void test_parse_size(void)
{
	uint64_t v;

	CHECK(run_table(size_cases, sizeof(size_cases) / sizeof(size_cases[0]),
			config__parse_size));
	CHECK(!config__parse_size(NULL, &v));
}

static void test_parse_duration(void)
{
	uint64_t v;

	CHECK(run_table(duration_cases,
			sizeof(duration_cases) / sizeof(duration_cases[0]),
			config__parse_duration));
	CHECK(!config__parse_duration(NULL, &v));
}

/* unwind and stack-bytes: the three modes, and a stack size rounded up
 * to whole words and bounded to what BPF copies at most. */
static void test_unwind(void)
{
	static const char text[] = "unwind = dwarf\nstack-bytes = 12K\n";
	struct agent_config c, d;
	char path[64], err[256];

	config__defaults(&c);
	CHECK(load_text(&c, text, strlen(text), path, err, sizeof(err)) == 0);
	CHECK(c.unwind == TP_UNWIND_DWARF && c.stack_bytes == 12288);
	CHECK(config__set(&c, "unwind", "fp", err, sizeof(err)) == 0);
	CHECK(c.unwind == TP_UNWIND_FP);
	CHECK(config__set(&c, "unwind", "auto", err, sizeof(err)) == 0);
	CHECK(c.unwind == TP_UNWIND_AUTO);
	CHECK(config__set(&c, "stack-bytes", "100", err, sizeof(err)) == 0);
	CHECK(c.stack_bytes == 104);
	CHECK(config__set(&c, "stack-bytes", "1", err, sizeof(err)) == 0);
	CHECK(c.stack_bytes == 8);
	CHECK(config__set(&c, "stack-bytes", "16384", err, sizeof(err)) == 0);
	CHECK(c.stack_bytes == 16384);
	CHECK(config__set(&c, "stack-bytes", "1M", err, sizeof(err)) == 0);
	CHECK(c.stack_bytes == TP_STACK_MAX);
	/* A refused value changes nothing, and says what it wants. */
	CHECK(config__set(&c, "unwind", "frame-pointer", err, sizeof(err)) ==
	      -EINVAL);
	CHECK(!strcmp(err, "--unwind: \"frame-pointer\" must be fp, dwarf or auto"));
	CHECK(config__set(&c, "stack-bytes", "0", err, sizeof(err)) == -EINVAL);
	CHECK(config__set(&c, "stack-bytes", "lots", err, sizeof(err)) ==
	      -EINVAL);
	CHECK(c.unwind == TP_UNWIND_AUTO && c.stack_bytes == TP_STACK_MAX);
	CHECK(config__copy(&d, &c) == 0);
	CHECK(d.unwind == TP_UNWIND_AUTO && d.stack_bytes == TP_STACK_MAX);
	config__free(&d);
	config__free(&c);
}

int main(void)
{
	RUN(test_defaults);
	RUN(test_full_file);
	RUN(test_partial_and_clear);
	RUN(test_bad_lines);
	RUN(test_message_format);
	RUN(test_long_lines);
	RUN(test_file_checks);
	RUN(test_no_echo);
	RUN(test_symlinks);
	RUN(test_set);
	RUN(test_debuginfod_urls);
	RUN(test_copy);
	RUN(test_parse_size);
	RUN(test_parse_duration);
	RUN(test_unwind);
	CHECK_EXIT();
}
