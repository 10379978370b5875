/* Settings of `tagprof agent`: defaults, a config file, then flags.
 *
 * The file is line based: "key = value", '#' comments and blank lines. A
 * value in double quotes keeps leading and trailing spaces and '#'; there
 * are no escapes, so a quoted value cannot hold '"' (no setting needs one).
 * The agent runs as root and the file can name where it writes and where
 * it sends profiles, so a file others can write is refused, and a file is
 * applied whole or not at all: a typo must not leave half a configuration.
 */
#include "kernel/memevents.h"
#include "cmd/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sample_event.h"
#include "util/trustfile.h"
#include "unwind/mode.h"

/* Longest line in bytes, without the newline. */
#define CONFIG_LINE_MAX		4096
#define CONFIG_WINDOW_MAX	86400	/* 1 day, in seconds */
#define CONFIG_FREQ_MAX		100000
#define CONFIG_MEMORY_MIN (1ull << 20)	/* below what the agent needs: it warns */
#define CONFIG_VERBOSE_MAX	3

/* Where a setting came from, for the prefix of error messages: a file
 * line ("PATH:LINE: key: "), the file itself ("PATH: ", line 0), or a
 * flag ("--key: ", path NULL). */
struct config_where {
	const char *path;
	unsigned int line;
	const char *key;
	char *err;
	size_t errlen;
};

struct config_key {
	const char *name;
	int (*set)(struct agent_config *c, const char *v,
		   const struct config_where *w);
	bool clearable;		/* "" and "none" unset it */
};

/* One split line; key and value point into the line buffer. */
struct config_line {
	char *key;
	char *value;
	bool quoted;
};

/* Writes the prefix for w, the value when there is one, and the message
 * into w->err; returns ret so callers can `return config__fail(...)`. A
 * value read from a file is never shown: the file may not be what its
 * name says (root may be pointed at one it can read and others cannot),
 * so the message gives PATH:LINE and what was expected instead. */
static int config__vfail(const struct config_where *w, int ret,
			 const char *value, const char *fmt, va_list ap)
{
	size_t n;
	int len = 0;

	if (!w->err || !w->errlen)
		return ret;
	w->err[0] = '\0';
	if (w->path && w->line)
		len = snprintf(w->err, w->errlen, "%s:%u: ", w->path, w->line);
	else if (w->path)
		len = snprintf(w->err, w->errlen, "%s: ", w->path);
	n = len > 0 ? (size_t)len : 0;
	if (w->key && n < w->errlen) {
		len = snprintf(w->err + n, w->errlen - n,
			       w->path ? "%s: " : "--%s: ", w->key);
		n += len > 0 ? (size_t)len : 0;
	}
	if (value && n < w->errlen) {
		len = w->path ? snprintf(w->err + n, w->errlen - n, "the value ") :
				snprintf(w->err + n, w->errlen - n, "\"%s\" ",
					 value);
		n += len > 0 ? (size_t)len : 0;
	}
	if (n < w->errlen)
		vsnprintf(w->err + n, w->errlen - n, fmt, ap);
	return ret;
}

static int __attribute__((format(printf, 3, 4)))
config__fail(const struct config_where *w, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ret = config__vfail(w, ret, NULL, fmt, ap);
	va_end(ap);
	return ret;
}

/* -EINVAL for value v of w->key: '"v" ' then the message for a flag,
 * 'the value ' then the message for a file line. */
static int __attribute__((format(printf, 3, 4)))
config__bad_value(const struct config_where *w, const char *v,
		  const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = config__vfail(w, -EINVAL, v, fmt, ap);
	va_end(ap);
	return ret;
}

/* --- numbers, sizes and durations --- */

/* Parses one or more decimal digits at *sp and advances past them. Signs
 * and spaces are refused, unlike strtoull, which also wraps "-1". */
static bool config__parse_digits(const char **sp, uint64_t *out)
{
	const char *s = *sp;
	uint64_t n = 0;
	unsigned int d;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		d = *s - '0';
		if (n > (UINT64_MAX - d) / 10)
			return false;
		n = n * 10 + d;
	}
	*sp = s;
	*out = n;
	return true;
}

/* A whole number and nothing else; *out is only written on success. */
static bool config__parse_uint(const char *s, uint64_t *out)
{
	uint64_t n;

	if (!config__parse_digits(&s, &n) || *s != '\0')
		return false;
	*out = n;
	return true;
}

/* log2 of the unit a size suffix names: "", K, M, G, T, with an optional
 * "iB", any case; -1 if it is not one. "KB" is refused because it is
 * ambiguous between 1000 and 1024. */
static int config__size_shift(const char *s)
{
	static const char units[] = "KMGT";
	const char *u;

	if (*s == '\0')
		return 0;
	u = strchr(units, toupper((unsigned char)*s));
	if (!u)
		return -1;
	if (s[1] != '\0' && strcasecmp(s + 1, "ib") != 0)
		return -1;
	return 10 * (int)(u - units + 1);
}

bool config__parse_size(const char *s, uint64_t *out)
{
	uint64_t n;
	int shift;

	if (!s || !config__parse_digits(&s, &n))
		return false;
	shift = config__size_shift(s);
	if (shift < 0 || n > UINT64_MAX >> shift)
		return false;
	*out = n << shift;
	return true;
}

/* Seconds per duration suffix, 0 if not one. Lowercase only: "1M" reads
 * as a month as easily as a minute. */
static uint64_t config__duration_unit(const char *s)
{
	if (*s == '\0' || !strcmp(s, "s"))
		return 1;
	if (!strcmp(s, "m"))
		return 60;
	if (!strcmp(s, "h"))
		return 3600;
	if (!strcmp(s, "d"))
		return 86400;
	return 0;
}

bool config__parse_duration(const char *s, uint64_t *out)
{
	uint64_t n, unit;

	if (!s || !config__parse_digits(&s, &n))
		return false;
	unit = config__duration_unit(s);
	if (!unit || n > UINT64_MAX / unit)
		return false;
	*out = n * unit;
	return true;
}

/* --- one setting each --- */

/* Replaces *dst with a copy of v, or with NULL when v is NULL. */
static int config__replace(char **dst, const char *v,
			   const struct config_where *w)
{
	char *copy = NULL;

	if (v) {
		copy = strdup(v);
		if (!copy)
			return config__fail(w, -ENOMEM, "out of memory");
	}
	free(*dst);
	*dst = copy;
	return 0;
}

static bool config__is_clear(const char *v)
{
	return *v == '\0' || !strcmp(v, "none");
}

static int config__set_output_dir(struct agent_config *c, const char *v,
				  const struct config_where *w)
{
	if (v[0] != '/')
		return config__bad_value(w, v,
				    "is not an absolute path");
	return config__replace(&c->output_dir, v, w);
}

static int config__set_window(struct agent_config *c, const char *v,
			      const struct config_where *w)
{
	uint64_t s;

	if (!config__parse_duration(v, &s))
		return config__bad_value(w, v,
				    "is not a duration (use e.g. 60, 90s, 5m, 1h)");
	if (s < 1 || s > CONFIG_WINDOW_MAX)
		return config__bad_value(w, v, "must be 1s to 1d");
	c->window_s = s;
	return 0;
}

static int config__set_freq(struct agent_config *c, const char *v,
			    const struct config_where *w)
{
	uint64_t n;

	if (!config__parse_uint(v, &n))
		return config__bad_value(w, v, "is not a whole number");
	if (n < 1 || n > CONFIG_FREQ_MAX)
		return config__bad_value(w, v, "must be 1 to %d",
				    CONFIG_FREQ_MAX);
	c->freq = n;
	return 0;
}

/* A fixed period, as record's -c: what memory-access events want, whose
 * rate no frequency can follow (faults come in bursts). "none": by freq. */
static int config__set_count(struct agent_config *c, const char *v,
			     const struct config_where *w)
{
	uint64_t n;

	if (!strcmp(v, "none")) {
		c->count = 0;
		return 0;
	}
	if (!config__parse_uint(v, &n) || n == 0 || n > INT64_MAX)
		return config__bad_value(w, v, "is not a positive whole number "
					 "of events (or none)");
	c->count = n;
	return 0;
}

/* Only non-empty here: the event parser knows the names and reports
 * what is wrong with one. */
static int config__set_event(struct agent_config *c, const char *v,
			     const struct config_where *w)
{
	return config__replace(&c->event, v, w);
}

/* The URL goes into HTTP requests as is, so no spaces or controls. */
static bool config__url_chars_ok(const char *v)
{
	for (; *v; v++) {
		if ((unsigned char)*v <= ' ' || *v == 0x7f)
			return false;
	}
	return true;
}

static int config__set_push_url(struct agent_config *c, const char *v,
				const struct config_where *w)
{
	size_t scheme;

	if (config__is_clear(v))
		return config__replace(&c->push_url, NULL, w);
	if (!strncasecmp(v, "http://", 7))
		scheme = 7;
	else if (!strncasecmp(v, "https://", 8))
		scheme = 8;
	else
		return config__bad_value(w, v,
				    "must start with http:// or https://");
	if (v[scheme] == '\0' || v[scheme] == '/')
		return config__bad_value(w, v, "has no host");
	if (!config__url_chars_ok(v))
		return config__bad_value(w, v,
				    "contains spaces or control characters");
	return config__replace(&c->push_url, v, w);
}

static int config__set_push_auth_file(struct agent_config *c, const char *v,
				      const struct config_where *w)
{
	if (config__is_clear(v))
		return config__replace(&c->push_auth_file, NULL, w);
	if (v[0] != '/')
		return config__bad_value(w, v,
				    "is not an absolute path");
	return config__replace(&c->push_auth_file, v, w);
}

static int config__set_retain_files(struct agent_config *c, const char *v,
				    const struct config_where *w)
{
	if (!config__parse_uint(v, &c->retain_files))
		return config__bad_value(w, v,
				    "is not a whole number (0 = no limit)");
	return 0;
}

static int config__set_retain_bytes(struct agent_config *c, const char *v,
				    const struct config_where *w)
{
	if (!config__parse_size(v, &c->retain_bytes))
		return config__bad_value(w, v,
				    "is not a size (use e.g. 512M, 2G; 0 = no limit)");
	return 0;
}

static int config__set_max_memory(struct agent_config *c, const char *v,
				  const struct config_where *w)
{
	uint64_t n;

	if (!config__parse_size(v, &n))
		return config__bad_value(w, v,
				    "is not a size (use e.g. 64M, 1G)");
	if (n < CONFIG_MEMORY_MIN)
		return config__bad_value(w, v,
				    "is below the minimum of 1M");
	c->max_memory = n;
	return 0;
}

static int config__set_verbose(struct agent_config *c, const char *v,
			       const struct config_where *w)
{
	uint64_t n;

	if (!strcasecmp(v, "true"))
		n = 1;
	else if (!strcasecmp(v, "false"))
		n = 0;
	else if (!config__parse_uint(v, &n) || n > CONFIG_VERBOSE_MAX)
		return config__bad_value(w, v,
				    "must be 0 to 3, true or false");
	c->verbose = (int)n;
	return 0;
}

static int config__set_unwind(struct agent_config *c, const char *v,
			      const struct config_where *w)
{
	int mode = unwind_mode__parse(v);

	if (mode < 0)
		return config__bad_value(w, v,
				    "must be fp, dwarf or auto");
	c->unwind = mode;
	return 0;
}

/* Rounded up to a multiple of 8 and bounded to TP_STACK_MAX, as BPF
 * copies whole words and at most that much. */
static int config__set_stack_bytes(struct agent_config *c, const char *v,
				   const struct config_where *w)
{
	uint64_t n;

	if (!config__parse_size(v, &n) || n == 0)
		return config__bad_value(w, v,
				    "is not a positive size (use e.g. 8192, 16K)");
	c->stack_bytes = unwind_mode__stack_bytes(n);
	return 0;
}

static int config__set_ldlat(struct agent_config *c, const char *v,
			     const struct config_where *w)
{
	uint64_t n;

	if (!config__parse_size(v, &n) || n == 0 || n > MEMEVENTS_LDLAT_MAX)
		return config__bad_value(w, v, "is not a threshold of 1 to "
					 "65535 cycles");
	c->ldlat = (uint32_t)n;
	return 0;
}

/* Space-separated server URLs, as DEBUGINFOD_URLS has them; "none" or
 * empty: no servers, whatever the environment says. */
static int config__set_debuginfod_urls(struct agent_config *c, const char *v,
				       const struct config_where *w)
{
	const char *p = v;
	size_t n;

	if (config__is_clear(v))
		return config__replace(&c->debuginfod_urls, "", w);
	while (*(p += strspn(p, " "))) {
		n = strcspn(p, " ");
		if (!(n > 7 && !strncasecmp(p, "http://", 7)) &&
		    !(n > 8 && !strncasecmp(p, "https://", 8)))
			return config__bad_value(w, v,
				    "must be URLs starting with http:// or "
				    "https://, separated by spaces, or none");
		p += n;
	}
	return config__replace(&c->debuginfod_urls, v, w);
}

/* Per-sample windows (record -T): each sample its own pprof Sample with
 * its time. */
static int config__set_timeline(struct agent_config *c, const char *v,
				const struct config_where *w)
{
	if (!strcasecmp(v, "true"))
		c->timeline = true;
	else if (!strcasecmp(v, "false"))
		c->timeline = false;
	else
		return config__bad_value(w, v, "must be true or false");
	return 0;
}

static const struct config_key config__keys[] = {
	{ "output-dir", config__set_output_dir, false },
	{ "window", config__set_window, false },
	{ "freq", config__set_freq, false },
	{ "event", config__set_event, false },
	{ "push-url", config__set_push_url, true },
	{ "push-auth-file", config__set_push_auth_file, true },
	{ "retain-files", config__set_retain_files, false },
	{ "retain-bytes", config__set_retain_bytes, false },
	{ "max-memory", config__set_max_memory, false },
	{ "verbose", config__set_verbose, false },
	{ "unwind", config__set_unwind, false },
	{ "stack-bytes", config__set_stack_bytes, false },
	{ "debuginfod-urls", config__set_debuginfod_urls, true },
	{ "timeline", config__set_timeline, false },
	{ "ldlat", config__set_ldlat, false },
	{ "count", config__set_count, false },
};

#define CONFIG_NKEYS (sizeof(config__keys) / sizeof(config__keys[0]))

static const struct config_key *config__find_key(const char *name)
{
	size_t i;

	for (i = 0; i < CONFIG_NKEYS; i++) {
		if (!strcmp(config__keys[i].name, name))
			return &config__keys[i];
	}
	return NULL;
}

#define CONFIG_KNOWN_KEYS "(known: output-dir, window, freq, event, push-url, push-auth-file, retain-files, retain-bytes, max-memory, verbose, unwind, stack-bytes, debuginfod-urls, timeline, ldlat, count)"

/* The key is shown for a flag only, as values are (see config__vfail). */
static int config__unknown_key(const struct config_where *w, const char *key)
{
	if (w->path)
		return config__fail(w, -EINVAL, "unknown key " CONFIG_KNOWN_KEYS);
	return config__fail(w, -EINVAL, "unknown key \"%s\" " CONFIG_KNOWN_KEYS,
			    key);
}

/* Every setter validates before it changes c, so a failed set leaves c
 * as it was. */
static int config__apply(struct agent_config *c, const struct config_key *k,
			 const char *v, const struct config_where *w)
{
	if (*v == '\0' && !k->clearable)
		return config__fail(w, -EINVAL, "empty value");
	return k->set(c, v, w);
}

/* --- defaults, copies --- */

/* config__defaults cannot report failure, and every string must be on
 * the heap so config__free and the setters can free any of them; a
 * process that cannot get a few bytes at startup cannot run anyway. */
static char *config__dup_or_die(const char *s)
{
	char *d = strdup(s);

	if (!d) {
		fprintf(stderr, "tagprof: out of memory\n");
		abort();
	}
	return d;
}

void config__defaults(struct agent_config *c)
{
	memset(c, 0, sizeof(*c));
	c->output_dir = config__dup_or_die("/var/lib/tagprof");
	c->window_s = 60;
	c->freq = 19;
	c->event = config__dup_or_die("auto");
	c->push_url = NULL;
	c->push_auth_file = NULL;
	c->retain_files = 1440;
	c->retain_bytes = 1ull << 30;
	c->max_memory = 64ull << 20;
	c->verbose = 0;
	c->unwind = TP_UNWIND_AUTO;
	c->stack_bytes = TP_STACK_DEFAULT;
}

static int config__dup_field(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -ENOMEM;
}

int config__copy(struct agent_config *dst, const struct agent_config *src)
{
	if (dst == src)
		return 0;
	*dst = *src;
	/* Clear first so a failure frees only our copies, never src's. */
	dst->output_dir = dst->event = NULL;
	dst->push_url = dst->push_auth_file = dst->debuginfod_urls = NULL;
	if (config__dup_field(&dst->output_dir, src->output_dir) ||
	    config__dup_field(&dst->debuginfod_urls, src->debuginfod_urls) ||
	    config__dup_field(&dst->event, src->event) ||
	    config__dup_field(&dst->push_url, src->push_url) ||
	    config__dup_field(&dst->push_auth_file, src->push_auth_file)) {
		config__free(dst);
		return -ENOMEM;
	}
	return 0;
}

void config__free(struct agent_config *c)
{
	if (!c)
		return;
	free(c->output_dir);
	free(c->event);
	free(c->push_url);
	free(c->push_auth_file);
	free(c->debuginfod_urls);
	c->output_dir = c->event = NULL;
	c->push_url = c->push_auth_file = c->debuginfod_urls = NULL;
}

int config__set(struct agent_config *c, const char *key, const char *value,
		char *err, size_t errlen)
{
	struct config_where w = { .err = err, .errlen = errlen };
	const struct config_key *k;

	if (err && errlen)
		err[0] = '\0';
	if (!key)
		return config__fail(&w, -EINVAL, "no key");
	k = config__find_key(key);
	if (!k)
		return config__unknown_key(&w, key);
	w.key = k->name;
	if (!value)
		return config__fail(&w, -EINVAL, "missing value");
	return config__apply(c, k, value, &w);
}

/* --- the file --- */

/* Opens path for reading after the checks that matter for a file root
 * trusts (see trustfile__open): no other user's symlink or file. */
static int config__open(const char *path, FILE **fp,
			const struct config_where *w)
{
	char why[160];
	struct stat st;
	int fd, ret;

	fd = trustfile__open(path, &st, why, sizeof(why));
	if (fd < 0)
		return config__fail(w, fd, "%s", why);
	*fp = fdopen(fd, "r");
	if (*fp)
		return 0;
	ret = config__fail(w, -errno, "%s", strerror(errno));
	close(fd);
	return ret;
}

/* Reads one line, without its newline, into buf (CONFIG_LINE_MAX + 1
 * bytes). Returns 1 for a line, 0 at the end, or an error it reported.
 * A NUL byte is refused: the rest of the line would be silently lost. */
static int config__read_line(FILE *f, char *buf, const struct config_where *w)
{
	size_t n = 0;
	int ch, e;

	while ((ch = getc_unlocked(f)) != EOF && ch != '\n') {
		if (ch == '\0')
			return config__fail(w, -EINVAL,
					    "line contains a NUL byte");
		if (n == CONFIG_LINE_MAX)
			return config__fail(w, -EINVAL,
					    "line is longer than %d bytes",
					    CONFIG_LINE_MAX);
		buf[n++] = (char)ch;
	}
	if (ch == EOF && ferror(f)) {
		e = errno ? errno : EIO;
		return config__fail(w, -e, "%s", strerror(e));
	}
	buf[n] = '\0';
	return ch == EOF && n == 0 ? 0 : 1;
}

static char *config__skip_space(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* The value after '=' at s: quoted up to the next '"', else up to a '#'
 * with trailing space trimmed. */
static int config__split_value(char *s, struct config_line *l,
			       const struct config_where *w)
{
	char *end;

	l->quoted = *s == '"';
	if (l->quoted) {
		l->value = s + 1;
		end = strchr(l->value, '"');
		if (!end)
			return config__fail(w, -EINVAL,
					    "missing closing '\"'");
		*end = '\0';
		s = config__skip_space(end + 1);
		if (*s != '\0' && *s != '#')
			return config__fail(w, -EINVAL,
					    "unexpected text after the closing '\"'");
		return 0;
	}
	l->value = s;
	end = strchr(s, '#');
	if (!end)
		end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	*end = '\0';
	return 0;
}

/* Splits "key = value" in place. Returns 1 for a setting, 0 for a blank
 * or comment line, or an error it reported. */
static int config__split(char *s, struct config_line *l,
			 const struct config_where *w)
{
	char *key_end;
	int ret;

	s = config__skip_space(s);
	if (*s == '\0' || *s == '#')
		return 0;
	l->key = s;
	while (*s && !isspace((unsigned char)*s) && *s != '=' && *s != '#')
		s++;
	key_end = s;
	s = config__skip_space(s);
	if (key_end == l->key)
		return config__fail(w, -EINVAL, "missing key before '='");
	if (*s != '=') {
		*key_end = '\0';
		return config__fail(w, -EINVAL,
				    "missing '=' after the key (use key = value)");
	}
	*key_end = '\0';	/* after the test: it may be the '=' */
	ret = config__split_value(config__skip_space(s + 1), l, w);
	return ret < 0 ? ret : 1;
}

/* Applies one line to c. first_line[] holds the line each key was first
 * set on, 0 if not yet, to refuse duplicates: which of two would win is
 * a guess the reader of the file should not have to make. */
static int config__load_line(struct agent_config *c, char *s,
			     unsigned int *first_line, struct config_where *w)
{
	const struct config_key *k;
	struct config_line l = { 0 };
	size_t idx;
	int ret;

	ret = config__split(s, &l, w);
	if (ret <= 0)
		return ret;
	k = config__find_key(l.key);
	if (!k)
		return config__unknown_key(w, l.key);
	w->key = k->name;
	idx = k - config__keys;
	if (first_line[idx])
		return config__fail(w, -EINVAL, "set twice (first on line %u)",
				    first_line[idx]);
	first_line[idx] = w->line;
	if (!l.quoted && l.value[0] == '\0')
		return config__fail(w, -EINVAL, "empty value%s", k->clearable ?
				    " (write \"\" or none to unset)" : "");
	return config__apply(c, k, l.value, w);
}

static int config__load_lines(struct agent_config *c, FILE *f,
			      struct config_where *w)
{
	unsigned int first_line[CONFIG_NKEYS] = { 0 };
	char buf[CONFIG_LINE_MAX + 1];
	int ret;

	for (;;) {
		w->line++;
		w->key = NULL;
		ret = config__read_line(f, buf, w);
		if (ret <= 0)
			return ret;
		ret = config__load_line(c, buf, first_line, w);
		if (ret < 0)
			return ret;
	}
}

int config__load(struct agent_config *c, const char *path, char *err,
		 size_t errlen)
{
	struct config_where w = { .path = path, .err = err, .errlen = errlen };
	struct agent_config tmp;
	FILE *f = NULL;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	ret = config__open(path, &f, &w);
	if (ret < 0)
		return ret;
	/* Parse into a copy and swap it in only when every line is good. */
	ret = config__copy(&tmp, c);
	if (ret < 0) {
		config__fail(&w, ret, "out of memory");
		goto cleanup;
	}
	ret = config__load_lines(&tmp, f, &w);
	if (ret < 0) {
		config__free(&tmp);
		goto cleanup;
	}
	config__free(c);
	*c = tmp;
cleanup:
	fclose(f);
	return ret;
}
