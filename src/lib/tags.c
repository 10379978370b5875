/* Register tags: the declaration of the tag register and its bit fields,
 * and the dictionary of field value names, published in the process
 * context for the profiler:
 *
 *	tagprof.tag.register	string	"r15"
 *	tagprof.tag.fields	strings	"operator:16", "pipeline:16"  (LSB first)
 *	tagprof.tag.names	strings	"operator:3=HashJoin", ...  (append-only;
 *					a later entry for a field:value wins)
 *
 * A names entry splits at its first '=': field names have no ':' or '='
 * and values are decimal, so the name (the rest) may hold any character.
 *
 * Writing the register is the header's inline business; nothing here runs
 * on that path. Everything here runs under the library lock. */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MAX_FIELDS	8
#define FIELD_NAME_MAX	63
#define NAME_MAX_LEN	255
/* "name:bits" and "field:value=name" as published */
#define FIELD_STR_MAX	(FIELD_NAME_MAX + 1 + 2 + 1)
#define ENTRY_STR_MAX	(FIELD_NAME_MAX + 1 + 20 + 1 + NAME_MAX_LEN + 1)

struct field {
	char name[FIELD_NAME_MAX + 1];
	unsigned int bits;
};

struct decl {
	unsigned int nfields;	/* 0: nothing declared */
	struct field fields[MAX_FIELDS];
};

static struct decl decl;	/* lock held */

/* The registers BPF reads from a sample's pt_regs for a tag. */
static bool reg_known(const char *reg)
{
#if defined(__x86_64__)
	static const char *const regs[] = { "r12", "r13", "r14", "r15", "rbx" };

	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		if (!strcmp(reg, regs[i]))
			return true;
	return false;
#elif defined(__aarch64__)
	/* x19 .. x28 */
	return reg[0] == 'x' &&
	       ((reg[1] == '1' && reg[2] == '9' && !reg[3]) ||
		(reg[1] == '2' && reg[2] >= '0' && reg[2] <= '8' && !reg[3]));
#else
	(void)reg;
	return false;
#endif
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/* "name:bits", strictly: the published string is the input as given. */
static int parse_field(const char *s, struct field *f)
{
	const char *colon = strchr(s, ':'), *d;
	size_t len;
	unsigned int bits = 0;

	if (!colon)
		return -EINVAL;
	len = (size_t)(colon - s);
	if (len < 1 || len > FIELD_NAME_MAX)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (!name_char(s[i]))
			return -EINVAL;
	d = colon + 1;
	if (d[0] < '1' || d[0] > '9')	/* no sign, no leading zero, not empty */
		return -EINVAL;
	for (; *d; d++) {
		if (*d < '0' || *d > '9' || bits > 64)
			return -EINVAL;
		bits = bits * 10 + (unsigned int)(*d - '0');
	}
	if (bits > 64)
		return -EINVAL;
	memcpy(f->name, s, len);
	f->name[len] = '\0';
	f->bits = bits;
	return 0;
}

static int parse_decl(const char *const fields[], size_t nfields, struct decl *d)
{
	unsigned int total = 0;

	if (!fields || nfields < 1 || nfields > MAX_FIELDS)
		return -EINVAL;
	memset(d, 0, sizeof(*d));
	for (size_t i = 0; i < nfields; i++) {
		struct field *f = &d->fields[i];

		if (!fields[i] || parse_field(fields[i], f))
			return -EINVAL;
		total += f->bits;
		if (total > 64)
			return -EINVAL;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(d->fields[j].name, f->name))
				return -EINVAL;
	}
	d->nfields = (unsigned int)nfields;
	return 0;
}

int tagprof_tags_declare(const char *reg, const char *const fields[], size_t nfields)
{
	char strs[MAX_FIELDS][FIELD_STR_MAX];
	const char *fv[MAX_FIELDS];
	struct decl d;
	int err;

	if (!reg || !reg_known(reg) || parse_decl(fields, nfields, &d))
		return -EINVAL;
	for (unsigned int i = 0; i < d.nfields; i++) {
		snprintf(strs[i], sizeof(strs[i]), "%s:%u", d.fields[i].name, d.fields[i].bits);
		fv[i] = strs[i];
	}
	const struct tagprof__attr attrs[] = {
		{ .key = TAGPROF_TAG_ATTR_REGISTER, .kind = TAGPROF__VAL_STRING, .s = reg },
		{ .key = TAGPROF_TAG_ATTR_FIELDS, .kind = TAGPROF__VAL_STRINGS,
		  .strs = { .v = fv, .n = d.nfields } },
		{ .key = TAGPROF_TAG_ATTR_NAMES, .kind = TAGPROF__VAL_STRINGS,
		  .strs = { .v = NULL, .n = 0 } },
	};

	/* One publish: a reader never pairs new fields with old names. */
	tagprof__lock();
	err = tagprof__ctx_set_attrs_locked(attrs, sizeof(attrs) / sizeof(attrs[0]));
	if (!err)
		decl = d;
	tagprof__unlock();
	return err;
}

static const struct field *field_find(const char *name)
{
	for (unsigned int i = 0; i < decl.nfields; i++)
		if (!strcmp(decl.fields[i].name, name))
			return &decl.fields[i];
	return NULL;
}

/* Whether the dictionary's last entry for prefix ("field:value=") is
 * already name: naming a value again the same way adds nothing. */
static bool already_named(const char *prefix, size_t plen, const char *name)
{
	const struct tagprof__attr *a = tagprof__ctx_attr_locked(TAGPROF_TAG_ATTR_NAMES);

	for (size_t i = a ? a->strs.n : 0; i-- > 0;) {
		if (!strncmp(a->strs.v[i], prefix, plen))
			return !strcmp(a->strs.v[i] + plen, name);
	}
	return false;
}

bool tagprof__utf8_valid(const unsigned char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		size_t n;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 1, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			n = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 3, cp = c & 0x07;
		else
			return false;
		if (len - i - 1 < n)
			return false;
		for (size_t k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += n + 1;
	}
	return true;
}

int tagprof_tag_name(const char *field, uint64_t value, const char *name)
{
	char entry[ENTRY_STR_MAX];
	const struct field *f;
	size_t nlen, plen;
	int err = -EINVAL;

	if (!field || !name)
		return -EINVAL;
	nlen = strlen(name);
	if (!nlen || nlen > NAME_MAX_LEN || !tagprof__utf8_valid((const unsigned char *)name, nlen))
		return -EINVAL;
	tagprof__lock();
	f = field_find(field);
	if (!f || (f->bits < 64 && value >> f->bits))
		goto out;
	plen = (size_t)snprintf(entry, sizeof(entry), "%s:%" PRIu64 "=", f->name, value);
	if (already_named(entry, plen, name)) {
		err = 0;
		goto out;
	}
	memcpy(entry + plen, name, nlen + 1);
	err = tagprof__ctx_append_str_locked(TAGPROF_TAG_ATTR_NAMES, entry);
out:
	tagprof__unlock();
	return err;
}
