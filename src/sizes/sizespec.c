/* --size parsing (sizespec.h). Strict: a spec that is not exactly one of
 * the forms is refused with the forms listed, never read loosely. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sizes/sizespec.h"

#define FORMS "argN, argN->OFF, *(u8|u16|u32|u64 *)(argN+OFF) or label:KEY"

static const char *skip_spaces(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* "argN": N in 1..6. Advances *s past it. */
static bool parse_arg(const char **s, __u32 *arg)
{
	const char *p = skip_spaces(*s);

	if (strncmp(p, "arg", 3) || p[3] < '1' || p[3] > '6')
		return false;
	*arg = p[3] - '0';
	*s = skip_spaces(p + 4);
	return true;
}

/* A byte offset: decimal or 0x hex, below 1 MiB (a field of a struct, not
 * an address). Advances *s past it. */
static bool parse_off(const char **s, __u64 *off)
{
	const char *p = skip_spaces(*s);
	char *end;
	unsigned long long v;

	if (*p < '0' || *p > '9')
		return false;
	errno = 0;
	v = strtoull(p, &end, 0);
	if (errno || end == p || v >= (1u << 20))
		return false;
	*off = v;
	*s = skip_spaces(end);
	return true;
}

static int bad(const char *s, const char *why, char *err, size_t errlen)
{
	snprintf(err, errlen, "--size '%s': %s (forms: " FORMS ")", s, why);
	return -EINVAL;
}

static int parse_label(const char *s, const char *key, struct sizespec *out,
		       char *err, size_t errlen)
{
	size_t n = strlen(key);

	if (n == 0)
		return bad(s, "no label key", err, errlen);
	if (n > SIZESPEC_KEY_MAX)
		return bad(s, "label key longer than 32 bytes", err, errlen);
	out->fn.kind = TP_SZ_LABEL;
	memcpy(out->label, key, n + 1);
	return 0;
}

/* "*(uW *)(argN+OFF)" or "*(uW *)argN", from after the '*'. */
static int parse_cast(const char *s, const char *p, struct sizespec *out,
		      char *err, size_t errlen)
{
	unsigned w;
	int n = 0;
	bool paren;

	p = skip_spaces(p);
	if (sscanf(p, "(u%u *)%n", &w, &n) != 1 || n == 0)
		if (sscanf(p, "(u%u*)%n", &w, &n) != 1 || n == 0)
			return bad(s, "expected a cast such as (u32 *)", err,
				   errlen);
	if (w != 8 && w != 16 && w != 32 && w != 64)
		return bad(s, "the width is u8, u16, u32 or u64", err, errlen);
	out->fn.width = w / 8;
	p = skip_spaces(p + n);
	paren = *p == '(';
	if (paren)
		p++;
	if (!parse_arg(&p, &out->fn.arg))
		return bad(s, "expected argN, N from 1 to 6", err, errlen);
	if (*p == '+') {
		p++;
		if (!parse_off(&p, &out->fn.off))
			return bad(s, "the offset is a number below 1 MiB",
				   err, errlen);
	}
	if (paren && *p++ != ')')
		return bad(s, "expected ')'", err, errlen);
	if (*skip_spaces(p))
		return bad(s, "unexpected text at the end", err, errlen);
	out->fn.kind = TP_SZ_FIELD;
	return 0;
}

int sizespec__parse(const char *s, struct sizespec *out, char *err,
		    size_t errlen)
{
	const char *p = skip_spaces(s);

	memset(out, 0, sizeof(*out));
	if (!strncmp(p, "label:", 6))
		return parse_label(s, p + 6, out, err, errlen);
	if (*p == '*')
		return parse_cast(s, p + 1, out, err, errlen);
	if (!parse_arg(&p, &out->fn.arg))
		return bad(s, "unknown form", err, errlen);
	if (!*p) {
		out->fn.kind = TP_SZ_ARG;
		return 0;
	}
	if (strncmp(p, "->", 2))
		return bad(s, "expected '->' after the argument", err, errlen);
	p += 2;
	if (!parse_off(&p, &out->fn.off))
		return bad(s, "the offset is a number below 1 MiB", err, errlen);
	if (*p)
		return bad(s, "unexpected text at the end", err, errlen);
	out->fn.kind = TP_SZ_FIELD;
	out->fn.width = 8;
	return 0;
}
