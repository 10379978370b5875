/* The location table: deduplication as the pprof builder did it, dense
 * ids, interned strings, a reset that starts a new generation, and the
 * consumers' caches by id. */
#include "check.h"
#include "sym/loctab.h"

#include <string.h>

static void test_dedup(void)
{
	struct loctab *t = loctab__new();
	uint32_t m, m2, f, f2, f3, l, l2;
	const uint32_t fns[1] = { 0 };
	char name[16];

	CHECK(t);
	m = loctab__mapping(t, 0x1000, 0x2000, 0, "/bin/a", "ab12");
	CHECK(m == 1);
	CHECK(loctab__mapping(t, 0x1000, 0x2000, 0, "/bin/a", "ab12") == m);
	/* Every argument is part of the key. */
	m2 = loctab__mapping(t, 0x1000, 0x2000, 0, "/bin/a", NULL);
	CHECK(m2 == 2);
	CHECK(loctab__mapping(t, 0x1000, 0x2000, 0x10, "/bin/a", NULL) == 3);
	/* Being an executable is a mark, not part of the key. */
	CHECK(!loctab__mapping_at(t, m)->exe);
	loctab__mapping_set_exe(t, m);
	loctab__mapping_set_exe(t, 99);		/* no such id: nothing */
	CHECK(loctab__mapping_at(t, m)->exe && !loctab__mapping_at(t, m2)->exe);
	CHECK(loctab__mapping(t, 0x1000, 0x2000, 0, "/bin/a", "ab12") == m);

	/* A copy of the name finds the same function. */
	snprintf(name, sizeof(name), "%s", "main");
	f = loctab__function(t, "main", NULL, NULL);
	CHECK(f == 1 && loctab__function(t, name, NULL, NULL) == f);
	f2 = loctab__function(t, "main", "main", NULL);
	f3 = loctab__function(t, "main", "main", "a.c");
	CHECK(f2 == 2 && f3 == 3);

	/* Locations: (mapping, address) is the key, the lines are not. */
	CHECK(!loctab__find_location(t, m, 0x1234));
	l = loctab__location(t, m, 0x1234, &f, NULL, 1);
	CHECK(l == 1);
	CHECK(loctab__find_location(t, m, 0x1234) == l);
	CHECK(loctab__location(t, m, 0x1234, &f2, NULL, 1) == l);
	CHECK(loctab__lines(t, loctab__location_at(t, l))[0].function == f);
	l2 = loctab__location(t, m2, 0x1234, &f, NULL, 1);
	CHECK(l2 == 2);
	/* Mapping 0: an address in no mapping. */
	CHECK(loctab__location(t, 0, 0x1234, &f, NULL, 1) == 3);
	CHECK(loctab__find_location(t, 0, 0x1234) == 3);
	CHECK(loctab__location(t, m, 0x99, fns, NULL, 0) == 4);
	CHECK(loctab__location_at(t, 4)->nlines == 0);
	loctab__free(t);
}

/* Ids count from 1 without gaps, so a consumer can index arrays by them;
 * an entry read by id is what was added. */
static void test_dense_ids(void)
{
	struct loctab *t = loctab__new();
	uint32_t fns[3];
	int32_t lines[3] = { 10, 20, 30 };
	const struct loctab_location *l;
	const struct loctab_line *ln;
	char name[32];

	CHECK(t);
	for (uint32_t i = 1; i <= 1000; i++) {
		snprintf(name, sizeof(name), "fn%u", i);
		CHECK(loctab__function(t, name, name, "x.c") == i);
		CHECK(loctab__mapping(t, i << 12, (i + 1) << 12, 0, "/lib",
				      NULL) == i);
	}
	for (uint32_t i = 1; i <= 3000; i++) {
		fns[0] = i % 1000 + 1;
		fns[1] = (i + 1) % 1000 + 1;
		fns[2] = (i + 2) % 1000 + 1;
		CHECK(loctab__location(t, i % 7 + 1, i, fns, lines,
				       i % 3 + 1) == i);
	}
	CHECK(loctab__nfunctions(t) == 1000);
	CHECK(loctab__nmappings(t) == 1000);
	CHECK(loctab__nlocations(t) == 3000);
	for (uint32_t i = 1; i <= 3000; i++) {
		l = loctab__location_at(t, i);
		CHECK(l->address == i && l->mapping == i % 7 + 1);
		CHECK(l->nlines == i % 3 + 1);
		ln = loctab__lines(t, l);
		for (uint32_t k = 0; k < l->nlines; k++)
			CHECK(ln[k].function == (i + k) % 1000 + 1 &&
			      ln[k].line == lines[k]);
	}
	snprintf(name, sizeof(name), "fn%u", 17);
	CHECK(!strcmp(loctab__function_at(t, 17)->name, name));
	CHECK(loctab__mapping_at(t, 17)->start == 17 << 12);
	loctab__free(t);
}

/* Strings are interned: one copy each, owned by the table. */
static void test_strings(void)
{
	struct loctab *t = loctab__new();
	const struct loctab_function *f1, *f2;
	const struct loctab_mapping *m;
	char buf[32];
	uint32_t a, b;

	CHECK(t);
	snprintf(buf, sizeof(buf), "%s", "/usr/lib/libc.so.6");
	a = loctab__mapping(t, 0, 1, 0, buf, "ff");
	memset(buf, 'x', sizeof(buf) - 1);	/* the table kept its own */
	m = loctab__mapping_at(t, a);
	CHECK(!strcmp(m->file, "/usr/lib/libc.so.6"));
	CHECK(!strcmp(m->build_id, "ff"));
	a = loctab__function(t, "read", "__read", "/usr/lib/libc.so.6");
	b = loctab__function(t, "__read", "read", NULL);
	f1 = loctab__function_at(t, a);
	f2 = loctab__function_at(t, b);
	/* Equal strings are one pointer. */
	CHECK(f1->name == f2->system_name && f1->system_name == f2->name);
	CHECK(f1->file == loctab__mapping_at(t, 1)->file);
	CHECK(!f2->file);
	CHECK(!loctab__mapping_at(t, 1)->has_filenames);
	loctab__mapping_set_info(t, 1, true, false, false);
	loctab__mapping_set_info(t, 1, false, true, false);
	m = loctab__mapping_at(t, 1);
	CHECK(m->has_filenames && m->has_line_numbers && !m->has_inline_frames);
	loctab__free(t);
}

/* A reset forgets everything and starts a new generation; ids count from
 * 1 again. */
static void test_reset(void)
{
	struct loctab *t = loctab__new();
	uint64_t gen;
	uint32_t f;

	CHECK(t);
	gen = loctab__generation(t);
	CHECK(gen != 0);
	CHECK(loctab__mapping(t, 1, 2, 0, "a", NULL) == 1);
	CHECK(loctab__mapping(t, 2, 3, 0, "b", NULL) == 2);
	f = loctab__function(t, "f", NULL, NULL);
	CHECK(loctab__location(t, 2, 0x10, &f, NULL, 1) == 1);
	loctab__reset(t);
	CHECK(loctab__generation(t) != gen && loctab__generation(t) != 0);
	CHECK(loctab__nmappings(t) == 0 && loctab__nfunctions(t) == 0 &&
	      loctab__nlocations(t) == 0);
	CHECK(!loctab__find_location(t, 2, 0x10));
	CHECK(loctab__mapping(t, 2, 3, 0, "b", NULL) == 1);
	f = loctab__function(t, "g", NULL, NULL);
	CHECK(f == 1);
	CHECK(loctab__location(t, 1, 0x10, &f, NULL, 1) == 1);
	CHECK(!strcmp(loctab__function_at(t, 1)->name, "g"));
	loctab__reset(t);
	loctab__reset(t);		/* an empty table too */
	CHECK(loctab__nlocations(t) == 0);
	loctab__free(t);
	loctab__free(NULL);
}

/* More lines than a location holds are refused, not cut. */
static void test_lines_bound(void)
{
	struct loctab *t = loctab__new();
	uint32_t fns[LOCTAB_MAX_LINES + 1];

	CHECK(t);
	fns[0] = loctab__function(t, "f", NULL, NULL);
	for (size_t i = 1; i <= LOCTAB_MAX_LINES; i++)
		fns[i] = fns[0];
	CHECK(!loctab__location(t, 0, 1, fns, NULL, LOCTAB_MAX_LINES + 1));
	CHECK(loctab__location(t, 0, 1, fns, NULL, LOCTAB_MAX_LINES) == 1);
	loctab__free(t);
}

/* A consumer's cache by id: 0 until set, dropped with a reset of the
 * table it is for. */
static void test_cache(void)
{
	struct loctab *t = loctab__new(), *other = loctab__new();
	struct loctab_cache c = { 0 };

	CHECK(t && other);
	CHECK(loctab__cache_sync(&c, t));
	CHECK(!loctab__cache_sync(&c, t));
	CHECK(loctab__cache_get(&c, 1) == 0);
	CHECK(loctab__cache_set(&c, 1, 11) == 0);
	CHECK(loctab__cache_set(&c, 5000, 55) == 0);
	CHECK(loctab__cache_get(&c, 1) == 11);
	CHECK(loctab__cache_get(&c, 5000) == 55);
	CHECK(loctab__cache_get(&c, 4999) == 0);
	CHECK(loctab__cache_get(&c, 90000) == 0);
	CHECK(!loctab__cache_sync(&c, t));
	CHECK(loctab__cache_get(&c, 1) == 11);
	loctab__reset(t);
	CHECK(loctab__cache_sync(&c, t));
	CHECK(!loctab__cache_get(&c, 1) && !loctab__cache_get(&c, 5000));
	CHECK(loctab__cache_set(&c, 2, 22) == 0);
	/* Another table's ids are other entries. */
	CHECK(loctab__cache_sync(&c, other));
	CHECK(loctab__cache_get(&c, 2) == 0);
	CHECK(loctab__cache_set(&c, 2, 22) == 0);
	loctab__cache_clear(&c);
	CHECK(loctab__cache_get(&c, 2) == 0);
	loctab__free(t);
	loctab__free(other);
}

int main(void)
{
	RUN(test_dedup);
	RUN(test_dense_ids);
	RUN(test_strings);
	RUN(test_reset);
	RUN(test_lines_bound);
	RUN(test_cache);
	CHECK_EXIT();
}
