// SPDX-License-Identifier: BSD-2-Clause
/* Reading the tuple files back (sizetab.h): the CSV and the JSON that
 * sizetab.c writes, and nothing else. The file is never trusted: every
 * length is bounded, every number checked, and the first thing that is
 * not right is refused with where it is. The JSON side is a small
 * recursive-descent parser for our one shape; unknown keys are skipped,
 * so a later version may add some. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "sizes/sizetab.h"
#include "util/errbuf.h"

#define LINE_MAX_BYTES	(4 * SIZETAB_MAX_STR + 256)
#define CSV_FIELDS_MAX	8
#define JSON_DEPTH_MAX	32
#define NUMBER_MAX	64	/* characters of one number */

struct reader {
	const char *buf;
	size_t len, pos;	/* pos: where the parser is, for messages */
	bool json;
	struct sizetab *t;
	size_t ntuples;		/* every function's */
	uint64_t rows_said;	/* CSV: "# tuples: N" */
	struct size_func *last;	/* the function of the last CSV row */
	char *scratch;		/* CSV fields, JSON strings */
	char *err;
	size_t errlen;
};

/* Says what is wrong and where: the line (and for JSON the byte offset)
 * of r->pos. -EINVAL. */
__attribute__((format(printf, 2, 3)))
static int fail(struct reader *r, const char *fmt, ...)
{
	char what[384];
	size_t line = 1;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < r->pos && i < r->len; i++)
		line += r->buf[i] == '\n';
	if (r->json)
		errbuf__set(r->err, r->errlen, "line %zu, offset %zu: %s", line,
			    r->pos, what);
	else
		errbuf__set(r->err, r->errlen, "line %zu: %s", line, what);
	return -EINVAL;
}

/* ---- checks shared by both formats ---- */

/* A name, path or spec as read: bounded, no control characters (they
 * would reach a terminal as they are). */
static int check_str(struct reader *r, const char *what, const char *s)
{
	size_t n = strlen(s);

	if (n > SIZETAB_MAX_STR)
		return fail(r, "%s: longer than %d bytes", what,
			    SIZETAB_MAX_STR);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return fail(r, "%s: a control character (0x%02x)", what,
				    (unsigned char)s[i]);
	return 0;
}

static int set_str(struct reader *r, char **dst, const char *what,
		   const char *s)
{
	char *c;
	int err = check_str(r, what, s);

	if (err)
		return err;
	c = strdup(s);
	if (!c) {
		errbuf__set(r->err, r->errlen, "out of memory");
		return -ENOMEM;
	}
	free(*dst);
	*dst = c;
	return 0;
}

/* The numbers of one tuple can be: some calls, min <= max, a sum of
 * squares that is a number. */
static int check_tuple(struct reader *r, const struct size_tuple *u)
{
	if (!u->calls)
		return fail(r, "a tuple of size %llu with no calls",
			    (unsigned long long)u->size);
	if (u->min > u->max)
		return fail(r, "a tuple of size %llu whose min is above its max",
			    (unsigned long long)u->size);
	if (!isfinite(u->sumsq) || u->sumsq < 0)
		return fail(r, "a tuple of size %llu whose sum of squares is "
			    "not a number >= 0", (unsigned long long)u->size);
	return 0;
}

static int add_tuple(struct reader *r, struct size_func *f,
		     const struct size_tuple *u)
{
	int err = check_tuple(r, u);

	if (err)
		return err;
	if (++r->ntuples > SIZETAB_MAX_TUPLES)
		return fail(r, "more than %u tuples", SIZETAB_MAX_TUPLES);
	if (sizefunc__add(f, u)) {
		errbuf__set(r->err, r->errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static struct size_func *find_func(struct sizetab *t, const char *name)
{
	for (size_t i = 0; i < t->nfuncs; i++)
		if (!strcmp(t->funcs[i].name, name))
			return &t->funcs[i];
	return NULL;
}

static int new_func(struct reader *r, const char *name,
		    struct size_func **out)
{
	int err = check_str(r, "function name", name);

	if (err)
		return err;
	if (!*name)
		return fail(r, "a function without a name");
	if (find_func(r->t, name))
		return fail(r, "function '%s' given twice", name);
	if (r->t->nfuncs >= SIZETAB_MAX_FUNCS)
		return fail(r, "more than %d functions", SIZETAB_MAX_FUNCS);
	r->last = NULL;		/* the array may move */
	*out = sizetab__add_func(r->t, name, "", "");
	if (!*out) {
		errbuf__set(r->err, r->errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* A whole number of at most 20 digits that fits 64 bits. */
static bool parse_u64(const char *s, size_t n, uint64_t *v)
{
	*v = 0;
	if (!n || n > 20)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (d > 9 || *v > (UINT64_MAX - d) / 10)
			return false;
		*v = *v * 10 + d;
	}
	return true;
}

/* A decimal number as %.17g writes it (no hex, inf or nan). */
static bool parse_double(const char *s, size_t n, double *v)
{
	char tmp[NUMBER_MAX + 1], *end;

	if (!n || n > NUMBER_MAX || strspn(s, "0123456789.eE+-") < n)
		return false;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	*v = strtod(tmp, &end);
	return *end == '\0' && isfinite(*v);
}

/* ---- CSV ---- */

/* One CSV record (RFC 4180, on one line) into fields, unquoted, in
 * r->scratch. */
static int csv_record(struct reader *r, const char *s, size_t n,
		      char **fields, size_t *nf)
{
	char *o = r->scratch;
	size_t i = 0;

	*nf = 0;
	for (;;) {
		if (*nf == CSV_FIELDS_MAX)
			return fail(r, "more than %d fields", CSV_FIELDS_MAX);
		fields[(*nf)++] = o;
		if (i < n && s[i] == '"') {
			for (i++;; i++) {
				if (i == n)
					return fail(r, "a quote that does not "
						    "end");
				if (s[i] == '"' && (i + 1 == n || s[i + 1] != '"'))
					break;
				if (s[i] == '"')
					i++;
				*o++ = s[i];
			}
			i++;
			if (i < n && s[i] != ',')
				return fail(r, "text after a closing quote");
		} else {
			for (; i < n && s[i] != ','; i++) {
				if (s[i] == '"')
					return fail(r, "a quote inside a field "
						    "that does not start with "
						    "one");
				*o++ = s[i];
			}
		}
		*o++ = '\0';
		if (i == n)
			return 0;
		i++;	/* the comma */
	}
}

static int csv_u64(struct reader *r, const char *what, const char *s,
		   uint64_t *v)
{
	if (parse_u64(s, strlen(s), v))
		return 0;
	return fail(r, "%s: '%.40s' is not a whole number (0 to 2^64-1)", what,
		    s);
}

/* "# function: NAME,BINARY,SPEC,SEEN,SKIPPED,FAULTS" */
static int csv_declare(struct reader *r, const char *v, size_t n)
{
	char *fl[CSV_FIELDS_MAX];
	struct size_func *f;
	size_t nf;
	int err = csv_record(r, v, n, fl, &nf);

	if (err)
		return err;
	if (nf != 6)
		return fail(r, "'# function:' wants 6 fields (name,binary,"
			    "size_spec,calls_seen,calls_skipped,size_faults), "
			    "not %zu", nf);
	err = new_func(r, fl[0], &f);
	if (!err)
		err = set_str(r, &f->binary, "binary", fl[1]);
	if (!err)
		err = set_str(r, &f->size_spec, "size_spec", fl[2]);
	if (!err)
		err = csv_u64(r, "calls_seen", fl[3], &f->calls_seen);
	if (!err)
		err = csv_u64(r, "calls_skipped", fl[4], &f->calls_skipped);
	if (!err)
		err = csv_u64(r, "size_faults", fl[5], &f->size_faults);
	return err;
}

enum { K_VERSION = 1, K_UNIT = 2, K_MODE = 4, K_EVERY = 8, K_DROPPED = 16,
       K_DURATION = 32, K_FORMAT = 64, K_FIELDS = 128, K_FUNCS = 256,
       K_ROWS = 512 };

/* A comment: "# key: value" for the keys we know, others (and any other
 * comment) passed over. *seen: the keys already given. */
static int csv_comment(struct reader *r, const char *s, size_t n,
		       unsigned *seen)
{
	static const struct { const char *key; unsigned bit; } keys[] = {
		{ "tagprof sizes", K_VERSION }, { "cost_unit", K_UNIT },
		{ "probe_mode", K_MODE }, { "sample_every", K_EVERY },
		{ "tuples_dropped", K_DROPPED }, { "duration_ns", K_DURATION },
		{ "tuples", K_ROWS }, { "function", 0 },
	};
	const char *colon;
	char val[SIZETAB_MAX_STR + 1];
	struct sizetab *t = r->t;
	uint64_t num = 0;
	size_t k, klen, vlen;

	s++;			/* '#' */
	n--;
	if (n && *s == ' ') {
		s++;
		n--;
	}
	colon = memchr(s, ':', n);
	if (!colon)
		return 0;
	klen = (size_t)(colon - s);
	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (strlen(keys[k].key) == klen && !memcmp(s, keys[k].key, klen))
			break;
	if (k == sizeof(keys) / sizeof(keys[0]))
		return 0;
	s = colon + 1;
	n -= klen + 1;
	if (n && *s == ' ') {
		s++;
		n--;
	}
	if (!keys[k].bit)
		return csv_declare(r, s, n);
	if (*seen & keys[k].bit)
		return fail(r, "'%s' given twice", keys[k].key);
	*seen |= keys[k].bit;
	if (n > SIZETAB_MAX_STR)
		return fail(r, "%s: longer than %d bytes", keys[k].key,
			    SIZETAB_MAX_STR);
	memcpy(val, s, n);
	vlen = n;
	val[vlen] = '\0';
	if (keys[k].bit == K_UNIT)
		return set_str(r, &t->cost_unit, "cost_unit", val);
	if (keys[k].bit == K_MODE)
		return set_str(r, &t->probe_mode, "probe_mode", val);
	if (csv_u64(r, keys[k].key, val, &num))
		return -EINVAL;
	switch (keys[k].bit) {
	case K_VERSION:
		if (num != SIZETAB_VERSION)
			return fail(r, "version %llu of the format; this "
				    "tagprof reads version %d",
				    (unsigned long long)num, SIZETAB_VERSION);
		break;
	case K_EVERY:
		t->sample_every = num;
		break;
	case K_DROPPED:
		t->tuples_dropped = num;
		break;
	case K_ROWS:
		r->rows_said = num;
		break;
	default:
		t->duration_ns = num;
	}
	return 0;
}

static int csv_row(struct reader *r, const char *s, size_t n)
{
	static const char *const cols[] = {
		"size", "calls", "size_sum", "min", "max", "sum",
	};
	char *fl[CSV_FIELDS_MAX];
	uint64_t v[6];
	struct size_tuple u;
	size_t nf;
	int err = csv_record(r, s, n, fl, &nf);

	if (err)
		return err;
	if (nf != 8)
		return fail(r, "%zu fields; a row has 8 (%s)", nf,
			    SIZETAB_CSV_HEADER);
	for (size_t i = 0; i < 6; i++)
		if (csv_u64(r, cols[i], fl[i + 1], &v[i]))
			return -EINVAL;
	u = (struct size_tuple){ .size = v[0], .calls = v[1],
				 .size_sum = v[2], .min = v[3], .max = v[4],
				 .sum = v[5] };
	if (!parse_double(fl[7], strlen(fl[7]), &u.sumsq))
		return fail(r, "sumsq: '%.40s' is not a number", fl[7]);
	if (!r->last || strcmp(r->last->name, fl[0])) {
		r->last = find_func(r->t, fl[0]);
		/* a row of a function no comment declared: a file made
		 * by hand, which may leave the comments out */
		if (!r->last && (err = new_func(r, fl[0], &r->last)))
			return err;
	}
	return add_tuple(r, r->last, &u);
}

/* A file that says how many rows it has (ours do) must have them all,
 * and its last line its newline: else it was cut short. */
static int csv_whole(struct reader *r)
{
	if (r->ntuples != r->rows_said)
		return fail(r, "the file ends after %zu of its %llu tuples "
			    "(cut short?)", r->ntuples,
			    (unsigned long long)r->rows_said);
	if (r->len && r->buf[r->len - 1] != '\n')
		return fail(r, "the last line has no end (cut short?)");
	return 0;
}

static int parse_csv(struct reader *r)
{
	unsigned seen = 0;
	bool header = false;
	int err = 0;

	while (!err && r->pos < r->len) {
		const char *s = r->buf + r->pos, *nl;
		size_t n;

		nl = memchr(s, '\n', r->len - r->pos);
		n = nl ? (size_t)(nl - s) : r->len - r->pos;
		if (n && s[n - 1] == '\r')
			n--;
		if (n > LINE_MAX_BYTES)
			return fail(r, "a line longer than %d bytes",
				    LINE_MAX_BYTES);
		if (n && s[0] == '#')
			err = csv_comment(r, s, n, &seen);
		else if (n && !header) {
			if (n != strlen(SIZETAB_CSV_HEADER) ||
			    memcmp(s, SIZETAB_CSV_HEADER, n))
				return fail(r, "not a tagprof sizes CSV file: "
					    "the header '%s' was expected",
					    SIZETAB_CSV_HEADER);
			header = true;
		} else if (n) {
			err = csv_row(r, s, n);
		}
		if (!err)
			r->pos = nl ? (size_t)(nl - r->buf) + 1 : r->len;
	}
	if (!err && !header)
		return fail(r, "not a tagprof sizes CSV file: no header '%s'",
			    SIZETAB_CSV_HEADER);
	if (!err && (seen & K_ROWS))
		err = csv_whole(r);
	return err;
}

/* ---- JSON ---- */

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void ws(struct reader *r)
{
	while (r->pos < r->len && is_ws(r->buf[r->pos]))
		r->pos++;
}

/* The next byte after white space, or 0 at the end. */
static char peek(struct reader *r)
{
	ws(r);
	return r->pos < r->len ? r->buf[r->pos] : 0;
}

static int expect(struct reader *r, char c)
{
	char got = peek(r);

	if (got == c) {
		r->pos++;
		return 0;
	}
	if (!got)
		return fail(r, "the file ends where '%c' was expected", c);
	return fail(r, "'%c' expected, not '%c'", c, got);
}

static int hex4(struct reader *r, unsigned *v)
{
	*v = 0;
	if (r->len - r->pos < 4)
		return fail(r, "a \\u escape cut short");
	for (int i = 0; i < 4; i++) {
		char c = r->buf[r->pos++];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') :
			     c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) :
			     c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) :
						    16;

		if (d > 15)
			return fail(r, "a \\u escape that is not hex");
		*v = *v << 4 | d;
	}
	return 0;
}

/* \uXXXX (a surrogate pair: two) as UTF-8 at *o. */
static int json_unicode(struct reader *r, char **o)
{
	unsigned cp, lo;
	char *p = *o;

	if (hex4(r, &cp))
		return -EINVAL;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return fail(r, "a \\u escape of a lone low surrogate");
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (r->len - r->pos < 2 || r->buf[r->pos] != '\\' ||
		    r->buf[r->pos + 1] != 'u')
			return fail(r, "a high surrogate without its low half");
		r->pos += 2;
		if (hex4(r, &lo))
			return -EINVAL;
		if (lo < 0xdc00 || lo > 0xdfff)
			return fail(r, "a high surrogate without its low half");
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	if (cp < 0x80) {
		*p++ = (char)cp;
	} else if (cp < 0x800) {
		*p++ = (char)(0xc0 | cp >> 6);
		*p++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*p++ = (char)(0xe0 | cp >> 12);
		*p++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*p++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*p++ = (char)(0xf0 | cp >> 18);
		*p++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*p++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*p++ = (char)(0x80 | (cp & 0x3f));
	}
	*o = p;
	return 0;
}

/* A string into r->scratch (at most SIZETAB_MAX_STR bytes, NUL-ended);
 * control characters, escaped or not, are refused. */
static int json_string(struct reader *r, const char **out)
{
	static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
	char *o = r->scratch;
	int err;

	if ((err = expect(r, '"')))
		return err;
	for (;;) {
		char c;

		if (r->pos >= r->len)
			return fail(r, "a string that does not end");
		/* scratch has room for a line: the 4 bytes of one more
		 * character past the bound always fit */
		if (o - r->scratch > SIZETAB_MAX_STR)
			return fail(r, "a string longer than %d bytes",
				    SIZETAB_MAX_STR);
		c = r->buf[r->pos++];
		if (c == '"')
			break;
		if ((unsigned char)c < 0x20)
			return fail(r, "a control character in a string");
		if (c != '\\') {
			*o++ = c;
			continue;
		}
		if (r->pos >= r->len)
			return fail(r, "a string that does not end");
		c = r->buf[r->pos++];
		if (c == 'u') {
			if ((err = json_unicode(r, &o)))
				return err;
		} else if (c && strchr(esc_in, c)) {
			*o++ = esc_out[strchr(esc_in, c) - esc_in];
		} else {
			return fail(r, "an unknown escape '\\%c'", c);
		}
	}
	*o = '\0';
	for (const char *p = r->scratch; p < o; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || !*p) {
			r->pos--;
			return fail(r, "a control character in a string");
		}
	*out = r->scratch;
	return 0;
}

/* The extent of a JSON number at r->pos (its grammar checked). */
static int json_number_span(struct reader *r, size_t *n)
{
	const char *s = r->buf + r->pos;
	size_t i = 0, max = r->len - r->pos;

#define DIGITS() while (i < max && s[i] >= '0' && s[i] <= '9') i++
	if (i < max && s[i] == '-')
		i++;
	if (i < max && s[i] == '0')
		i++;
	else if (i < max && s[i] >= '1' && s[i] <= '9')
		DIGITS();
	else
		return fail(r, "a number was expected");
	if (i < max && s[i] == '.') {
		size_t at = ++i;

		DIGITS();
		if (i == at)
			return fail(r, "a number with no digit after '.'");
	}
	if (i < max && (s[i] == 'e' || s[i] == 'E')) {
		size_t at;

		i++;
		if (i < max && (s[i] == '+' || s[i] == '-'))
			i++;
		at = i;
		DIGITS();
		if (i == at)
			return fail(r, "a number with no digit in its exponent");
	}
#undef DIGITS
	if (i > NUMBER_MAX)
		return fail(r, "a number of more than %d characters",
			    NUMBER_MAX);
	*n = i;
	return 0;
}

static int json_u64(struct reader *r, const char *what, uint64_t *v)
{
	size_t n;
	int err;

	peek(r);
	if ((err = json_number_span(r, &n)))
		return err;
	if (!parse_u64(r->buf + r->pos, n, v))
		return fail(r, "%s: not a whole number from 0 to 2^64-1", what);
	r->pos += n;
	return 0;
}

static int json_double(struct reader *r, const char *what, double *v)
{
	size_t n;
	int err;

	peek(r);
	if ((err = json_number_span(r, &n)))
		return err;
	if (!parse_double(r->buf + r->pos, n, v))
		return fail(r, "%s: not a finite number", what);
	r->pos += n;
	return 0;
}

static int json_skip(struct reader *r, int depth);

/* The members of an object or the elements of an array, each handed to
 * one (an object's with its key in key). */
static int json_list(struct reader *r, char open, int depth,
		     int (*one)(struct reader *r, const char *key, void *arg),
		     void *arg)
{
	char close = open == '{' ? '}' : ']', key[64];
	int err;

	if (depth > JSON_DEPTH_MAX)
		return fail(r, "nested more than %d deep", JSON_DEPTH_MAX);
	if ((err = expect(r, open)))
		return err;
	if (peek(r) == close) {
		r->pos++;
		return 0;
	}
	for (;;) {
		key[0] = '\0';
		if (open == '{') {
			const char *k;

			if ((err = json_string(r, &k)))
				return err;
			/* a longer key is no key of ours: skipped */
			snprintf(key, sizeof(key), "%s", k);
			if (strlen(k) >= sizeof(key))
				key[0] = '?';
			if ((err = expect(r, ':')))
				return err;
		}
		if ((err = one ? one(r, key, arg) : json_skip(r, depth + 1)))
			return err;
		if (peek(r) == close) {
			r->pos++;
			return 0;
		}
		if ((err = expect(r, ',')))
			return err;
	}
}

static int json_skip(struct reader *r, int depth)
{
	static const char *const words[] = { "true", "false", "null" };
	const char *s;
	size_t n;
	char c = peek(r);

	if (c == '{' || c == '[')
		return json_list(r, c, depth, NULL, NULL);
	if (c == '"')
		return json_string(r, &s);
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (r->len - r->pos >= strlen(words[i]) &&
		    !memcmp(r->buf + r->pos, words[i], strlen(words[i]))) {
			r->pos += strlen(words[i]);
			return 0;
		}
	if (!c)
		return fail(r, "the file ends where a value was expected");
	if ((c < '0' || c > '9') && c != '-')
		return fail(r, "'%c' does not start a value", c);
	if (json_number_span(r, &n))
		return -EINVAL;
	r->pos += n;
	return 0;
}

/* [size, calls, size_sum, min, max, sum, sumsq] */
static int json_tuple(struct reader *r, const char *key, void *arg)
{
	static const char *const cols[] = {
		"size", "calls", "size_sum", "min", "max", "sum",
	};
	uint64_t v[6];
	struct size_tuple u;
	size_t at, end;
	int err;

	(void)key;
	if ((err = expect(r, '[')))
		return err;
	at = r->pos - 1;
	for (int i = 0; i < 6; i++) {
		if ((err = json_u64(r, cols[i], &v[i])))
			return err;
		if (peek(r) == ']')
			return fail(r, "a tuple has 7 numbers (size, calls, "
				    "size_sum, min, max, sum, sumsq), not %d",
				    i + 1);
		if ((err = expect(r, ',')))
			return err;
	}
	u = (struct size_tuple){ .size = v[0], .calls = v[1],
				 .size_sum = v[2], .min = v[3], .max = v[4],
				 .sum = v[5] };
	if ((err = json_double(r, "sumsq", &u.sumsq)))
		return err;
	if (peek(r) != ']')
		return fail(r, "a tuple has 7 numbers (size, calls, size_sum, "
			    "min, max, sum, sumsq), not more");
	end = r->pos + 1;
	r->pos = at;		/* a bad tuple is named where it starts */
	if ((err = add_tuple(r, arg, &u)))
		return err;
	r->pos = end;
	return 0;
}

static int json_func_member(struct reader *r, const char *key, void *arg)
{
	struct size_func *f = arg;
	const char *s;
	int err;

	if (!strcmp(key, "name") || !strcmp(key, "binary") ||
	    !strcmp(key, "size_spec")) {
		if ((err = json_string(r, &s)))
			return err;
		return set_str(r, key[0] == 'n' ? &f->name : key[0] == 'b' ?
			       &f->binary : &f->size_spec, key, s);
	}
	if (!strcmp(key, "calls_seen"))
		return json_u64(r, key, &f->calls_seen);
	if (!strcmp(key, "calls_skipped"))
		return json_u64(r, key, &f->calls_skipped);
	if (!strcmp(key, "size_faults"))
		return json_u64(r, key, &f->size_faults);
	if (!strcmp(key, "tuples"))
		return json_list(r, '[', 2, json_tuple, f);
	return json_skip(r, 2);
}

/* One element of "functions": its name is checked at its end, as the
 * keys may come in any order. */
static int json_func(struct reader *r, const char *key, void *arg)
{
	struct size_func *f;
	size_t at = r->pos, end, idx;
	int err;

	(void)key;
	(void)arg;
	if (r->t->nfuncs >= SIZETAB_MAX_FUNCS)
		return fail(r, "more than %d functions", SIZETAB_MAX_FUNCS);
	f = sizetab__add_func(r->t, "", "", "");
	if (!f) {
		errbuf__set(r->err, r->errlen, "out of memory");
		return -ENOMEM;
	}
	idx = r->t->nfuncs - 1;
	if ((err = json_list(r, '{', 1, json_func_member, f)))
		return err;
	f = &r->t->funcs[idx];
	end = r->pos;
	r->pos = at;		/* a bad function is named where it starts */
	if (!*f->name)
		return fail(r, "a function without a \"name\"");
	for (size_t i = 0; i < idx; i++)
		if (!strcmp(r->t->funcs[i].name, f->name))
			return fail(r, "function '%s' given twice", f->name);
	r->pos = end;
	return 0;
}

/* "tuple_fields": the columns of our tuples, in our order. */
static int json_field_name(struct reader *r, const char *key, void *arg)
{
	static const char *const names[] = {
		"size", "calls", "size_sum", "min", "max", "sum", "sumsq",
	};
	size_t *i = arg;
	const char *s;
	int err;

	(void)key;
	if ((err = json_string(r, &s)))
		return err;
	if (*i >= 7 || strcmp(s, names[*i]))
		return fail(r, "tuple_fields: '%s' where '%s' was expected; "
			    "this tagprof reads [" SIZETAB_JSON_FIELDS "]", s,
			    *i < 7 ? names[*i] : "]");
	(*i)++;
	return 0;
}

static int json_top_member(struct reader *r, const char *key, void *arg)
{
	static const struct { const char *key; unsigned bit; } keys[] = {
		{ "version", K_VERSION }, { "cost_unit", K_UNIT },
		{ "probe_mode", K_MODE }, { "sample_every", K_EVERY },
		{ "tuples_dropped", K_DROPPED }, { "duration_ns", K_DURATION },
		{ "format", K_FORMAT }, { "tuple_fields", K_FIELDS },
		{ "functions", K_FUNCS },
	};
	unsigned *seen = arg, bit = 0;
	struct sizetab *t = r->t;
	const char *s;
	uint64_t v;
	size_t nfields = 0;
	int err;

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (!strcmp(key, keys[k].key))
			bit = keys[k].bit;
	if (!bit)
		return json_skip(r, 1);
	if (*seen & bit)
		return fail(r, "\"%s\" given twice", key);
	*seen |= bit;
	switch (bit) {
	case K_FORMAT:
		if ((err = json_string(r, &s)))
			return err;
		if (strcmp(s, SIZETAB_JSON_FORMAT))
			return fail(r, "not a tagprof sizes file: format "
				    "\"%.64s\"", s);
		return 0;
	case K_UNIT:
	case K_MODE:
		if ((err = json_string(r, &s)))
			return err;
		return set_str(r, bit == K_UNIT ? &t->cost_unit :
			       &t->probe_mode, key, s);
	case K_FIELDS:
		if ((err = json_list(r, '[', 1, json_field_name, &nfields)))
			return err;
		return nfields == 7 ? 0 : fail(r, "tuple_fields: %zu names, "
					       "7 expected", nfields);
	case K_FUNCS:
		return json_list(r, '[', 1, json_func, NULL);
	}
	if ((err = json_u64(r, key, &v)))
		return err;
	if (bit == K_VERSION && v != SIZETAB_VERSION)
		return fail(r, "version %llu of the format; this tagprof reads "
			    "version %d", (unsigned long long)v,
			    SIZETAB_VERSION);
	if (bit == K_EVERY)
		t->sample_every = v;
	else if (bit == K_DROPPED)
		t->tuples_dropped = v;
	else if (bit == K_DURATION)
		t->duration_ns = v;
	return 0;
}

static int parse_json(struct reader *r)
{
	unsigned seen = 0;
	int err = json_list(r, '{', 0, json_top_member, &seen);

	if (err)
		return err;
	if (peek(r))
		return fail(r, "text after the end of the object");
	if (!(seen & K_FORMAT))
		return fail(r, "not a tagprof sizes file: no \"format\": \"%s\"",
			    SIZETAB_JSON_FORMAT);
	if (!(seen & K_FUNCS))
		return fail(r, "no \"functions\"");
	return 0;
}

/* ---- both ---- */

/* What a file may leave out, and what it may not hold. */
static int finish(struct reader *r)
{
	struct sizetab *t = r->t;

	if (!t->cost_unit && set_str(r, &t->cost_unit, "cost_unit", "ns"))
		return -ENOMEM;
	if (!t->probe_mode && set_str(r, &t->probe_mode, "probe_mode", ""))
		return -ENOMEM;
	if (!t->sample_every) {
		r->pos = 0;
		return fail(r, "sample_every is 0 (1 means every call)");
	}
	sizetab__sort(t);
	return 0;
}

int sizetab__parse(struct sizetab *t, const char *buf, size_t len, char *err,
		   size_t errlen)
{
	struct reader r = { .buf = buf, .len = len, .t = t, .err = err,
			    .errlen = errlen };
	const char *nul = memchr(buf, '\0', len);
	int ret;

	*t = (struct sizetab){ .sample_every = 1 };
	if (len > SIZETAB_MAX_FILE) {
		errbuf__set(err, errlen, "larger than %u MiB: not a file "
			    "tagprof wrote", SIZETAB_MAX_FILE >> 20);
		return -EFBIG;
	}
	if (nul) {
		r.pos = (size_t)(nul - buf);
		r.json = true;	/* say the offset */
		return fail(&r, "a NUL byte: not a text file");
	}
	r.scratch = malloc(LINE_MAX_BYTES + CSV_FIELDS_MAX + 1);
	if (!r.scratch) {
		errbuf__set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ws(&r);
	r.json = r.pos < len && buf[r.pos] == '{';
	if (!r.json)
		r.pos = 0;
	ret = r.json ? parse_json(&r) : parse_csv(&r);
	if (!ret)
		ret = finish(&r);
	free(r.scratch);
	if (ret)
		sizetab__free(t);
	return ret;
}

/* All of path, a regular file of at most SIZETAB_MAX_FILE bytes. */
static int slurp(const char *path, char **buf, size_t *len, char *err,
		 size_t errlen)
{
	struct stat st;
	size_t cap;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), ret;

	*buf = NULL;
	*len = 0;
	if (fd < 0) {
		ret = -errno;
		errbuf__set(err, errlen, "cannot open %s: %s", path,
			    strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		errbuf__set(err, errlen, "%s is not a regular file", path);
		ret = -EINVAL;
		goto out;
	}
	if (st.st_size > (off_t)SIZETAB_MAX_FILE) {
		errbuf__set(err, errlen, "%s is larger than %u MiB: not a file "
			    "tagprof wrote", path, SIZETAB_MAX_FILE >> 20);
		ret = -EFBIG;
		goto out;
	}
	/* as large as it says, plus one byte to see that it grew */
	cap = (size_t)st.st_size + 1;
	*buf = malloc(cap);
	if (!*buf) {
		errbuf__set(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	while (*len < cap && (n = read(fd, *buf + *len, cap - *len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			errbuf__set(err, errlen, "cannot read %s: %s", path,
				    strerror(errno));
			goto out;
		}
		*len += (size_t)n;
	}
	ret = 0;
	if (*len == cap) {
		errbuf__set(err, errlen, "%s grew while it was read", path);
		ret = -EAGAIN;
	}
out:
	close(fd);
	if (ret) {
		free(*buf);
		*buf = NULL;
	}
	return ret;
}

int sizetab__read(struct sizetab *t, const char *path, char *err,
		  size_t errlen)
{
	char *buf, why[448];
	size_t len;
	int ret;

	*t = (struct sizetab){ 0 };
	ret = slurp(path, &buf, &len, err, errlen);
	if (ret)
		return ret;
	ret = sizetab__parse(t, buf, len, why, sizeof(why));
	if (ret)
		errbuf__set(err, errlen, "%s: %s", path, why);
	free(buf);
	return ret;
}
