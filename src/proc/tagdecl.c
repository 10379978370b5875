// SPDX-License-Identifier: BSD-2-Clause
/* Register tag declarations and dictionaries, from the process context. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"
#include "proc/procctx.h"
#include "sample_event.h"
#include "proc/tagdecl.h"

#define ATTR_REG "tagprof.tag.register"
#define ATTR_FIELDS "tagprof.tag.fields"
#define ATTR_NAMES "tagprof.tag.names"

unsigned tagdecl__reg_index(const char *name)
{
#if defined(__x86_64__)
	static const char *const regs[] = { "rbx", "r12", "r13", "r14", "r15" };

	for (unsigned i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		if (!strcmp(name, regs[i]))
			return TP_TAG_RBX + i;
#elif defined(__aarch64__)
	unsigned n;
	char end;

	if (sscanf(name, "x%u%c", &n, &end) == 1 && n >= 19 && n <= 28)
		return TP_TAG_X19 + (n - 19);
#else
	(void)name;
#endif
	return 0;
}

void tagdecl__clear(struct tagdecl *t)
{
	hashmap__free_values(t->names, free);
	memset(t, 0, sizeof(*t));
}

/* "name:bits" with a sane name; appends to t. */
static bool parse_field(struct tagdecl *t, const char *s)
{
	struct tag_field *f = &t->fields[t->nfields];
	const char *colon = strrchr(s, ':');
	unsigned bits, used = 0;
	size_t n = colon ? (size_t)(colon - s) : 0;
	char end;

	if (t->nfields == TAGDECL_MAX_FIELDS || n == 0 || n >= sizeof(f->name) ||
	    sscanf(colon + 1, "%u%c", &bits, &end) != 1 || bits < 1 || bits > 64)
		return false;
	for (size_t i = 0; i < t->nfields; i++)
		used += t->fields[i].bits;
	if (used + bits > 64)
		return false;
	memcpy(f->name, s, n);
	f->name[n] = '\0';
	f->shift = used;
	f->bits = bits;
	t->nfields++;
	return true;
}

static int field_index(const struct tagdecl *t, const char *name, size_t n)
{
	for (size_t i = 0; i < t->nfields; i++)
		if (strlen(t->fields[i].name) == n &&
		    !strncmp(t->fields[i].name, name, n))
			return i;
	return -1;
}

struct name_key {
	uint64_t field, value;
};

/* "field:value=name"; a later entry for the same field and value wins. */
static int add_name(struct tagdecl *t, const char *s)
{
	const char *colon = strchr(s, ':'), *eq = colon ? strchr(colon, '=') : NULL;
	struct name_key k;
	unsigned long long v;
	char *name, *end;
	uint64_t old;
	int f;

	if (!eq)
		return 0;
	f = field_index(t, s, colon - s);
	errno = 0;
	v = strtoull(colon + 1, &end, 10);
	if (f < 0 || end != eq || errno ||
	    (t->fields[f].bits < 64 && v >> t->fields[f].bits))
		return 0;	/* malformed entries are skipped, not fatal */
	name = strdup(eq + 1);
	if (!name)
		return -ENOMEM;
	k.field = f;
	k.value = v;
	if (hashmap__get(t->names, &k, sizeof(k), &old))
		free((char *)(uintptr_t)old);
	if (hashmap__put(t->names, &k, sizeof(k), (uintptr_t)name)) {
		free(name);
		hashmap__del(t->names, &k, sizeof(k), NULL);
		return -ENOMEM;
	}
	return 0;
}

int tagdecl__load(struct tagdecl *t, const struct procctx *ctx)
{
	const struct procctx_attr *reg = procctx__attr(ctx, ATTR_REG);
	const struct procctx_attr *fields = procctx__attr(ctx, ATTR_FIELDS);
	const struct procctx_attr *names = procctx__attr(ctx, ATTR_NAMES);
	int ret = 0;

	tagdecl__clear(t);
	if (!reg || !reg->str || !fields || !fields->list)
		return 0;
	t->names = hashmap__new(0);
	if (!t->names)
		return -ENOMEM;
	for (size_t i = 0; i < fields->nlist; i++)
		if (!parse_field(t, fields->list[i])) {
			tagdecl__clear(t);		/* all or nothing */
			return 0;
		}
	for (size_t i = 0; names && names->list && !ret && i < names->nlist; i++)
		ret = add_name(t, names->list[i]);
	if (ret) {
		tagdecl__clear(t);
		return ret;
	}
	t->reg = t->nfields ? tagdecl__reg_index(reg->str) : 0;
	return 0;
}

uint64_t tagdecl__field_value(const struct tagdecl *t, size_t f, uint64_t tag)
{
	const struct tag_field *fd = &t->fields[f];

	tag >>= fd->shift;
	return fd->bits == 64 ? tag : tag & ((1ull << fd->bits) - 1);
}

const char *tagdecl__name(const struct tagdecl *t, size_t f, uint64_t value)
{
	struct name_key k = { f, value };
	uint64_t v;

	if (!t->names || !hashmap__get(t->names, &k, sizeof(k), &v))
		return NULL;
	return (const char *)(uintptr_t)v;
}

bool tagdecl__filter(const struct tagdecl *t, const char *field, const char *name,
		  uint64_t *mask, uint64_t *value)
{
	int f = field_index(t, field, strlen(field));
	const struct tag_field *fd;
	unsigned long long v;
	size_t it = 0;
	const void *key;
	uint64_t val;
	bool found = false;
	char *end;

	if (f < 0)
		return false;
	fd = &t->fields[f];
	/* A name wins over a number that happens to look the same. */
	while (hashmap__next(t->names, &it, &key, NULL, &val)) {
		const struct name_key *k = key;

		if (k->field == (uint64_t)f &&
		    !strcmp((const char *)(uintptr_t)val, name)) {
			v = k->value;
			found = true;
			break;
		}
	}
	if (!found) {
		errno = 0;
		v = strtoull(name, &end, 10);
		if (!*name || *end || errno ||
		    (fd->bits < 64 && v >> fd->bits))
			return false;
	}
	*mask = fd->bits == 64 ? ~0ull : ((1ull << fd->bits) - 1) << fd->shift;
	*value = (uint64_t)v << fd->shift;
	return true;
}
