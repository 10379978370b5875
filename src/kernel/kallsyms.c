/* Kernel text symbols from a kallsyms-format file.
 *
 * /proc/kallsyms has 100k-200k lines, so the parser reads it with one
 * reused line buffer, keeps names in one growing arena and interns the
 * few module names instead of allocating per line.
 */
#include "kernel/kallsyms.h"
#include "util/grow.h"
#include "util/sortedrange.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* KSYM_NAME_LEN is 512; anything longer is not from a kernel. */
#define KALLSYMS_NAME_MAX	1024
#define KALLSYMS_ARENA_MAX	(256u << 20)	/* the real file needs ~5 MiB */
#define KALLSYMS_PAST_LAST	(1ull << 20)
#define KALLSYMS_IOBUF		(1 << 20)

struct kallsyms_sym {
	uint64_t addr;
	uint32_t name;		/* offset into the arena */
	uint16_t module;	/* index into modules; 0 is vmlinux */
	uint8_t rank;		/* preference among equal addresses */
	uint8_t pad;
};

struct kallsyms {
	struct kallsyms_sym *syms;
	size_t nsyms;
	size_t cap;
	char *names;		/* arena: NUL-terminated names back to back */
	size_t names_len;
	size_t names_cap;
	uint32_t *modules;	/* arena offsets of module names */
	size_t nmodules;
	size_t modules_cap;
	uint16_t last_module;	/* modules come in runs: try it first */
};

/* One parsed line; name and module point into the line buffer. */
struct kallsyms_line {
	uint64_t addr;
	char type;
	const char *name;
	size_t name_len;
	const char *module;
	size_t module_len;
};

/* Appends a string to the arena, NUL-terminated; returns its offset or
 * -1 on failure. Growth doubles, so appends are amortized O(1). */
static int64_t kallsyms__arena_add(struct kallsyms *k, const char *s,
				   size_t len)
{
	int64_t off;

	if (len > KALLSYMS_NAME_MAX)
		len = KALLSYMS_NAME_MAX;
	/* Offsets are stored in 32 bits. */
	if (k->names_len > KALLSYMS_ARENA_MAX)
		return -1;
	if (grow__array(&k->names, &k->names_cap, k->names_len + len + 1, 1,
			1 << 20))
		return -1;
	off = k->names_len;
	memcpy(k->names + off, s, len);
	k->names[off + len] = '\0';
	k->names_len += len + 1;
	return off;
}

static bool kallsyms__module_is(const struct kallsyms *k, size_t idx,
				const char *name, size_t len)
{
	const char *m = k->names + k->modules[idx];

	return strncmp(m, name, len) == 0 && m[len] == '\0';
}

/* Index of a module name, adding it on first sight; -1 on failure. */
static int kallsyms__intern_module(struct kallsyms *k, const char *name,
				   size_t len)
{
	int64_t off;
	size_t i;

	if (len > KALLSYMS_NAME_MAX)
		len = KALLSYMS_NAME_MAX;
	if (kallsyms__module_is(k, k->last_module, name, len))
		return k->last_module;
	for (i = 0; i < k->nmodules; i++) {
		if (kallsyms__module_is(k, i, name, len)) {
			k->last_module = i;
			return i;
		}
	}
	if (k->nmodules > UINT16_MAX)
		return -1;
	if (grow__array(&k->modules, &k->modules_cap, k->nmodules + 1,
			sizeof(*k->modules), 16))
		return -1;
	off = kallsyms__arena_add(k, name, len);
	if (off < 0)
		return -1;
	k->modules[k->nmodules] = off;
	k->last_module = k->nmodules;
	return k->nmodules++;
}

static int kallsyms__hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Splits "addr type name[\t[module]]"; false for a malformed line. */
static bool kallsyms__parse_line(char *s, size_t len, struct kallsyms_line *l)
{
	char *end = s + len, *p = s, *q;
	int digits = 0, v;

	while (len && (end[-1] == '\n' || end[-1] == '\r'))
		end--, len--;
	l->addr = 0;
	while (p < end && (v = kallsyms__hexval(*p)) >= 0) {
		if (++digits > 16)
			return false;
		l->addr = l->addr << 4 | v;
		p++;
	}
	if (!digits || end - p < 4 || p[0] != ' ' || p[2] != ' ')
		return false;
	l->type = p[1];
	l->name = p + 3;
	q = memchr(l->name, '\t', end - l->name);
	l->name_len = (q ? q : end) - l->name;
	if (!l->name_len)
		return false;
	l->module = "";
	l->module_len = 0;
	if (q && end - q >= 3 && q[1] == '[' && end[-1] == ']') {
		l->module = q + 2;
		l->module_len = end - 1 - l->module;
	}
	return true;
}

static bool kallsyms__is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/* Preference among names at one address: global over local, strong over
 * weak, and names the compiler did not decorate with leading '_'. */
static uint8_t kallsyms__rank(const struct kallsyms_line *l)
{
	uint8_t rank = 0;
	size_t u = 0;

	if (l->type == 'T' || l->type == 'W')
		rank |= 0x80;
	if (l->type == 't' || l->type == 'T')
		rank |= 0x40;
	while (u < l->name_len && l->name[u] == '_')
		u++;
	if (u > 0x3f)
		u = 0x3f;
	return rank | (0x3f - u);
}

static int kallsyms__add(struct kallsyms *k, const struct kallsyms_line *l)
{
	struct kallsyms_sym *s;
	int64_t name;
	int module = 0;

	if (k->nsyms == k->cap) {
		if (k->nsyms >= UINT32_MAX)
			return -E2BIG;
		if (grow__array(&k->syms, &k->cap, k->nsyms + 1,
				sizeof(*k->syms), 1 << 16))
			return -ENOMEM;
	}
	if (l->module_len) {
		module = kallsyms__intern_module(k, l->module, l->module_len);
		if (module < 0)
			return -ENOMEM;
	}
	name = kallsyms__arena_add(k, l->name, l->name_len);
	if (name < 0)
		return -ENOMEM;
	s = &k->syms[k->nsyms];
	s->addr = l->addr;
	s->name = name;
	s->module = module;
	s->rank = kallsyms__rank(l);
	s->pad = 0;
	k->nsyms++;
	return 0;
}

/* Address order, the preferred name first among equals; file order last
 * (arena offsets grow line by line) keeps the result deterministic
 * whatever qsort does. */
static int kallsyms__sym_cmp(const void *pa, const void *pb)
{
	const struct kallsyms_sym *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank > b->rank ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

/* Sorts (the kernel's file is sorted but for modules: checked first, as
 * qsort of 100k+ entries is the slowest part of loading) and keeps the
 * preferred symbol of each address. */
static void kallsyms__sort_dedup(struct kallsyms *k)
{
	size_t i, n;
	bool sorted = true;

	for (i = 1; i < k->nsyms && sorted; i++)
		if (k->syms[i - 1].addr > k->syms[i].addr)
			sorted = false;
	if (!sorted)
		qsort(k->syms, k->nsyms, sizeof(*k->syms), kallsyms__sym_cmp);
	for (i = 0, n = 0; i < k->nsyms; i++) {
		if (n && k->syms[n - 1].addr == k->syms[i].addr) {
			if (kallsyms__sym_cmp(&k->syms[i], &k->syms[n - 1]) < 0)
				k->syms[n - 1] = k->syms[i];
			continue;
		}
		k->syms[n++] = k->syms[i];
	}
	k->nsyms = n;
}

/* Reads every line; *nonzero counts the well-formed lines of any type
 * with an address, so that a file of zero addresses can be told from one
 * without text symbols. */
static int kallsyms__read(struct kallsyms *k, FILE *f, size_t *lines,
			  size_t *nonzero)
{
	struct kallsyms_line l;
	char *buf = NULL;
	size_t bufsz = 0;
	ssize_t len;
	int err = 0;

	while ((len = getline(&buf, &bufsz, f)) > 0) {
		if (!kallsyms__parse_line(buf, len, &l))
			continue;
		(*lines)++;
		if (!l.addr)
			continue;
		(*nonzero)++;
		if (!kallsyms__is_text(l.type))
			continue;
		err = kallsyms__add(k, &l);
		if (err)
			goto cleanup;
	}
	if (ferror(f)) {
		err = -EIO;
		goto cleanup;
	}
cleanup:
	free(buf);
	return err;
}

/* Gives back the slack that doubling left: the table lives as long as
 * the agent. Failing to shrink is harmless. */
static void kallsyms__shrink(struct kallsyms *k)
{
	struct kallsyms_sym *syms;
	char *names;

	if (k->nsyms && k->nsyms < k->cap) {
		syms = realloc(k->syms, k->nsyms * sizeof(*syms));
		if (syms) {
			k->syms = syms;
			k->cap = k->nsyms;
		}
	}
	if (k->names_len < k->names_cap) {
		names = realloc(k->names, k->names_len);
		if (names) {
			k->names = names;
			k->names_cap = k->names_len;
		}
	}
}

static int kallsyms__init(struct kallsyms *k)
{
	k->modules_cap = 16;
	k->modules = malloc(k->modules_cap * sizeof(*k->modules));
	if (!k->modules)
		return -ENOMEM;
	/* Module 0 is vmlinux, named "". */
	if (kallsyms__arena_add(k, "", 0) < 0)
		return -ENOMEM;
	k->modules[0] = 0;
	k->nmodules = 1;
	return 0;
}

struct kallsyms *kallsyms__load(const char *path)
{
	struct kallsyms *k = NULL;
	size_t lines = 0, nonzero = 0;
	FILE *f = NULL;
	int err;

	f = fopen(path ? path : "/proc/kallsyms", "re");
	if (!f) {
		err = -errno;
		goto cleanup;
	}
	/* Fewer, larger reads: ~200k lines through 4 KiB stdio reads
	 * would be thousands of syscalls into seq_file. */
	setvbuf(f, NULL, _IOFBF, KALLSYMS_IOBUF);
	k = calloc(1, sizeof(*k));
	if (!k) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = kallsyms__init(k);
	if (err)
		goto cleanup;
	err = kallsyms__read(k, f, &lines, &nonzero);
	if (err)
		goto cleanup;
	if (lines && !nonzero) {
		/* Text lines but all addresses zero: kptr_restrict hides
		 * them from this process. */
		err = -EPERM;
		goto cleanup;
	}
	kallsyms__sort_dedup(k);
	kallsyms__shrink(k);
cleanup:
	if (f)
		fclose(f);
	if (err) {
		kallsyms__free(k);
		errno = -err;
		return NULL;
	}
	return k;
}

void kallsyms__free(struct kallsyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->names);
	free(k->modules);
	free(k);
}

const char *kallsyms__lookup(const struct kallsyms *k, uint64_t addr,
			     uint64_t *start, const char **module)
{
	const struct kallsyms_sym *s;

	if (!k || !k->nsyms || addr < k->syms[0].addr)
		return NULL;
	if (addr > k->syms[k->nsyms - 1].addr &&
	    addr - k->syms[k->nsyms - 1].addr > KALLSYMS_PAST_LAST)
		return NULL;
	/* Greatest addr <= the one asked: there is one, syms[0]. */
	s = SORTEDRANGE_FLOOR(k->syms, k->nsyms, addr, addr);
	if (start)
		*start = s->addr;
	if (module)
		*module = k->names + k->modules[s->module];
	return k->names + s->name;
}

size_t kallsyms__count(const struct kallsyms *k)
{
	return k ? k->nsyms : 0;
}
