/* Unit tests for the pprof builder, the hash map and the atomic file writer.
 * Profiles are checked by really decoding them: gunzip with zlib, unpack
 * with protobuf-c, and (when Go is installed) read back by `go tool pprof`,
 * the consumer that matters. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "util/hashmap.h"
#include "out/pprof.h"
#include "profile.pb-c.h"
#include "out/atomicfile.h"

#define PERIOD 10101010

typedef Perftools__Profiles__Profile Profile;

/* ---- helpers ---- */

/* gunzips (15 + 32: accept a gzip header) into a malloc'd buffer. */
static uint8_t *gunzip(const uint8_t *in, size_t inlen, size_t *outlen)
{
	z_stream zs;
	size_t cap = 4096;
	uint8_t *out = malloc(cap), *grown;
	int ret = Z_OK;

	memset(&zs, 0, sizeof(zs));
	if (!out || inflateInit2(&zs, 15 + 32) != Z_OK) {
		free(out);
		return NULL;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)inlen;
	while (ret != Z_STREAM_END) {
		if (zs.total_out == cap) {
			grown = realloc(out, cap * 2);
			if (!grown)
				break;
			out = grown;
			cap *= 2;
		}
		zs.next_out = out + zs.total_out;
		zs.avail_out = (uInt)(cap - zs.total_out);
		ret = inflate(&zs, Z_NO_FLUSH);
		if (ret != Z_OK && ret != Z_STREAM_END)
			break;
	}
	*outlen = zs.total_out;
	inflateEnd(&zs);
	if (ret != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	return out;
}

/* Encodes p and decodes it again; NULL on any failure. */
static Profile *roundtrip(const struct pprof *p)
{
	uint8_t *gz = NULL, *raw;
	size_t gzlen = 0, rawlen = 0;
	Profile *prof;

	if (pprof__encode(p, &gz, &gzlen))
		return NULL;
	/* gzip magic: pprof sniffs for it. */
	if (gzlen < 2 || gz[0] != 0x1f || gz[1] != 0x8b) {
		free(gz);
		return NULL;
	}
	raw = gunzip(gz, gzlen, &rawlen);
	free(gz);
	if (!raw)
		return NULL;
	prof = perftools__profiles__profile__unpack(NULL, rawlen, raw);
	free(raw);
	return prof;
}

/* String at idx, or a marker that no test expects. */
static const char *S(const Profile *prof, int64_t idx)
{
	if (idx < 0 || (size_t)idx >= prof->n_string_table)
		return "<out of range>";
	return prof->string_table[idx];
}

static const Perftools__Profiles__Label *
find_label(const Perftools__Profiles__Sample *s, const Profile *prof,
	   const char *key)
{
	size_t i;

	for (i = 0; i < s->n_label; i++) {
		if (!strcmp(S(prof, s->label[i]->key), key))
			return s->label[i];
	}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the reference profile ---- */

struct ref {
	uint64_t m1, m2;
	uint64_t f_main, f_work, f_inl, f_memcpy;
	uint64_t l1, l2, l3;
};

static const struct pprof_vt ref_types[] = {
	{ "samples", "count" },
	{ "cpu", "nanoseconds" },
};

static int add_ref_samples(struct pprof *p, const struct ref *r)
{
	const uint64_t stack[] = { r->l3, r->l2, r->l1 };
	const uint64_t short_stack[] = { r->l2, r->l1 };
	const struct pprof_label worker[] = {
		{ .key = "thread", .str = "worker" },
		{ .key = "tid", .num = 1234 },
		{ .key = "bytes", .num = 4096, .num_unit = "bytes" },
	};
	/* The same set as worker, in another order. */
	const struct pprof_label worker2[] = {
		{ .key = "bytes", .num = 4096, .num_unit = "bytes" },
		{ .key = "thread", .str = "worker" },
		{ .key = "tid", .num = 1234 },
	};
	const struct pprof_label mainthr[] = {
		{ .key = "tid", .num = 1234 },
		{ .key = "thread", .str = "main" },
		{ .key = "bytes", .num = 4096, .num_unit = "bytes" },
	};
	const int64_t v1[] = { 1, PERIOD }, v2[] = { 2, 2 * PERIOD };
	const int64_t v3[] = { 5, 50 };

	return pprof__add_sample(p, stack, 3, v1, worker, 3) ||
	       pprof__add_sample(p, stack, 3, v2, worker2, 3) ||
	       pprof__add_sample(p, stack, 3, v1, mainthr, 3) ||
	       pprof__add_sample(p, short_stack, 2, v3, NULL, 0);
}

/* Two mappings, four functions, three locations (one with an inlined
 * frame), three distinct samples, two comments. */
static struct pprof *build_ref(struct ref *r)
{
	const struct pprof_vt period_type = { "cpu", "nanoseconds" };
	struct pprof *p = pprof__new(ref_types, 2, period_type, PERIOD);
	uint64_t fn;
	int64_t ln;

	if (!p)
		return NULL;
	r->m1 = pprof__mapping(p, 0x400000, 0x500000, 0x1000, "/usr/bin/app",
			       "abcdef0123456789");
	r->m2 = pprof__mapping(p, 0x7f0000000000, 0x7f0000100000, 0,
			       "/lib/libc.so.6", NULL);
	r->f_main = pprof__function(p, "main", "main", "app.c");
	r->f_work = pprof__function(p, "work", NULL, "app.c");
	r->f_inl = pprof__function(p, "inlined_helper",
				   "_Z14inlined_helperv", "helper.h");
	r->f_memcpy = pprof__function(p, "memcpy", NULL, NULL);
	fn = r->f_main;
	ln = 10;
	r->l1 = pprof__location(p, r->m1, 0x401000, &fn, &ln, 1);
	{
		const uint64_t fns[] = { r->f_inl, r->f_work };
		const int64_t lns[] = { 5, 42 };

		r->l2 = pprof__location(p, r->m1, 0x402000, fns, lns, 2);
	}
	fn = r->f_memcpy;
	r->l3 = pprof__location(p, r->m2, 0x7f0000001234, &fn, NULL, 1);
	pprof__set_time(p, 1700000000000000000LL, 10000000000LL);
	if (add_ref_samples(p, r) || pprof__add_comment(p, "tagprof test") ||
	    pprof__add_comment(p, "cmdline: record -a")) {
		pprof__free(p);
		return NULL;
	}
	return p;
}

/* ---- pprof tests ---- */

static void check_header(const Profile *prof)
{
	size_t i, j;

	CHECK(prof->n_string_table > 0);
	CHECK(!strcmp(prof->string_table[0], ""));
	for (i = 0; i < prof->n_string_table; i++)    /* interned: unique */
		for (j = i + 1; j < prof->n_string_table; j++)
			CHECK(strcmp(prof->string_table[i],
				     prof->string_table[j]));
	CHECK(prof->n_sample_type == 2);
	CHECK(!strcmp(S(prof, prof->sample_type[0]->type), "samples"));
	CHECK(!strcmp(S(prof, prof->sample_type[0]->unit), "count"));
	CHECK(!strcmp(S(prof, prof->sample_type[1]->type), "cpu"));
	CHECK(!strcmp(S(prof, prof->sample_type[1]->unit), "nanoseconds"));
	CHECK(prof->period_type);
	CHECK(!strcmp(S(prof, prof->period_type->type), "cpu"));
	CHECK(!strcmp(S(prof, prof->period_type->unit), "nanoseconds"));
	CHECK(prof->period == PERIOD);
	CHECK(prof->time_nanos == 1700000000000000000LL);
	CHECK(prof->duration_nanos == 10000000000LL);
	CHECK(prof->n_comment == 2);
	CHECK(!strcmp(S(prof, prof->comment[0]), "tagprof test"));
	CHECK(!strcmp(S(prof, prof->comment[1]), "cmdline: record -a"));
}

static void check_mappings(const Profile *prof, const struct ref *r)
{
	const Perftools__Profiles__Mapping *m;

	CHECK(prof->n_mapping == 2);
	CHECK(r->m1 == 1 && r->m2 == 2);
	m = prof->mapping[0];
	CHECK(m->id == 1);
	CHECK(m->memory_start == 0x400000 && m->memory_limit == 0x500000);
	CHECK(m->file_offset == 0x1000);
	CHECK(!strcmp(S(prof, m->filename), "/usr/bin/app"));
	CHECK(!strcmp(S(prof, m->build_id), "abcdef0123456789"));
	CHECK(m->has_functions);
	m = prof->mapping[1];
	CHECK(m->id == 2);
	CHECK(m->memory_start == 0x7f0000000000);
	CHECK(m->memory_limit == 0x7f0000100000);
	CHECK(m->file_offset == 0);
	CHECK(!strcmp(S(prof, m->filename), "/lib/libc.so.6"));
	CHECK(m->build_id == 0);
	CHECK(m->has_functions);
}

static void check_functions(const Profile *prof, const struct ref *r)
{
	Perftools__Profiles__Function *const *f = prof->function;
	size_t i;

	CHECK(prof->n_function == 4);
	for (i = 0; i < 4; i++)
		CHECK(f[i]->id == i + 1);
	CHECK(r->f_main == 1 && r->f_work == 2 && r->f_inl == 3 &&
	      r->f_memcpy == 4);
	CHECK(!strcmp(S(prof, f[0]->name), "main"));
	CHECK(!strcmp(S(prof, f[0]->system_name), "main"));
	CHECK(!strcmp(S(prof, f[0]->filename), "app.c"));
	CHECK(!strcmp(S(prof, f[1]->name), "work"));
	CHECK(f[1]->system_name == 0);
	CHECK(!strcmp(S(prof, f[1]->filename), "app.c"));
	CHECK(f[1]->filename == f[0]->filename);
	CHECK(!strcmp(S(prof, f[2]->name), "inlined_helper"));
	CHECK(!strcmp(S(prof, f[2]->system_name), "_Z14inlined_helperv"));
	CHECK(!strcmp(S(prof, f[2]->filename), "helper.h"));
	CHECK(!strcmp(S(prof, f[3]->name), "memcpy"));
	CHECK(f[3]->system_name == 0 && f[3]->filename == 0);
}

static void check_locations(const Profile *prof, const struct ref *r)
{
	Perftools__Profiles__Location *const *l = prof->location;

	CHECK(prof->n_location == 3);
	CHECK(r->l1 == 1 && r->l2 == 2 && r->l3 == 3);
	CHECK(l[0]->id == 1 && l[0]->mapping_id == r->m1);
	CHECK(l[0]->address == 0x401000);
	CHECK(l[0]->n_line == 1);
	CHECK(l[0]->line[0]->function_id == r->f_main);
	CHECK(l[0]->line[0]->line == 10);
	/* Inlined: innermost first, as given. */
	CHECK(l[1]->id == 2 && l[1]->mapping_id == r->m1);
	CHECK(l[1]->address == 0x402000);
	CHECK(l[1]->n_line == 2);
	CHECK(l[1]->line[0]->function_id == r->f_inl);
	CHECK(l[1]->line[0]->line == 5);
	CHECK(l[1]->line[1]->function_id == r->f_work);
	CHECK(l[1]->line[1]->line == 42);
	CHECK(l[2]->id == 3 && l[2]->mapping_id == r->m2);
	CHECK(l[2]->address == 0x7f0000001234);
	CHECK(l[2]->n_line == 1);
	CHECK(l[2]->line[0]->function_id == r->f_memcpy);
	CHECK(l[2]->line[0]->line == 0);
}

static void check_labels(const Profile *prof,
			 const Perftools__Profiles__Sample *s,
			 const char *thread)
{
	const Perftools__Profiles__Label *l;
	size_t i;

	CHECK(s->n_label == 3);
	for (i = 1; i < s->n_label; i++)        /* sorted by key index */
		CHECK(s->label[i - 1]->key <= s->label[i]->key);
	l = find_label(s, prof, "thread");
	CHECK(l && !strcmp(S(prof, l->str), thread));
	CHECK(l->num == 0 && l->num_unit == 0);
	l = find_label(s, prof, "tid");
	CHECK(l && l->str == 0 && l->num == 1234 && l->num_unit == 0);
	l = find_label(s, prof, "bytes");
	CHECK(l && l->str == 0 && l->num == 4096);
	CHECK(!strcmp(S(prof, l->num_unit), "bytes"));
}

static void check_samples(const Profile *prof, const struct ref *r)
{
	Perftools__Profiles__Sample *const *s = prof->sample;
	size_t i;

	CHECK(prof->n_sample == 3);
	for (i = 0; i < 2; i++) {
		CHECK(s[i]->n_location_id == 3);
		CHECK(s[i]->location_id[0] == r->l3);
		CHECK(s[i]->location_id[1] == r->l2);
		CHECK(s[i]->location_id[2] == r->l1);
		CHECK(s[i]->n_value == 2);
	}
	/* Added twice with reordered labels: summed. */
	CHECK(s[0]->value[0] == 3 && s[0]->value[1] == 3 * PERIOD);
	check_labels(prof, s[0], "worker");
	CHECK(!check_case_failed);
	/* Same stack, different thread label: kept apart. */
	CHECK(s[1]->value[0] == 1 && s[1]->value[1] == PERIOD);
	check_labels(prof, s[1], "main");
	CHECK(!check_case_failed);
	CHECK(s[2]->n_location_id == 2);
	CHECK(s[2]->location_id[0] == r->l2 && s[2]->location_id[1] == r->l1);
	CHECK(s[2]->n_value == 2);
	CHECK(s[2]->value[0] == 5 && s[2]->value[1] == 50);
	CHECK(s[2]->n_label == 0);
}

static void test_pprof_roundtrip(void)
{
	struct ref r;
	struct pprof *p = build_ref(&r);
	Profile *prof;

	CHECK(p);
	CHECK(pprof__sample_count(p) == 3);
	prof = roundtrip(p);
	pprof__free(p);
	CHECK(prof);
	check_header(prof);
	if (!check_case_failed)
		check_mappings(prof, &r);
	if (!check_case_failed)
		check_functions(prof, &r);
	if (!check_case_failed)
		check_locations(prof, &r);
	if (!check_case_failed)
		check_samples(prof, &r);
	perftools__profiles__profile__free_unpacked(prof, NULL);
}

static void check_dedup(struct pprof *p)
{
	const uint64_t fids[] = { 1, 2 };
	const int64_t lns[] = { 7, 8 };
	uint64_t m, m2, f, loc;

	CHECK(pprof__str(p, "") == 0 && pprof__str(p, NULL) == 0);
	CHECK(pprof__str(p, "x") == pprof__str(p, "x"));
	CHECK(pprof__str(p, "x") != pprof__str(p, "y"));

	m = pprof__mapping(p, 0x1000, 0x2000, 0, "/bin/a", "bid");
	CHECK(m == 1);
	CHECK(pprof__mapping(p, 0x1000, 0x2000, 0, "/bin/a", "bid") == m);
	m2 = pprof__mapping(p, 0x1000, 0x2000, 0, "/bin/a", NULL);
	CHECK(m2 == 2);
	CHECK(pprof__mapping(p, 0x1000, 0x2000, 0x10, "/bin/a", NULL) == 3);
	CHECK(pprof__mapping(p, 0x1000, 0x2000, 0, "/bin/a", NULL) == m2);

	f = pprof__function(p, "fn", NULL, NULL);
	CHECK(f == 1);
	CHECK(pprof__function(p, "fn", NULL, NULL) == f);
	CHECK(pprof__function(p, "fn", "_Z2fnv", NULL) == 2);
	CHECK(pprof__function(p, "fn", NULL, "fn.c") == 3);
	CHECK(pprof__function(p, "fn", "_Z2fnv", NULL) == 2);

	CHECK(pprof__find_location(p, m, 0x1234) == 0);
	loc = pprof__location(p, m, 0x1234, fids, lns, 2);
	CHECK(loc == 1);
	CHECK(pprof__find_location(p, m, 0x1234) == loc);
	CHECK(pprof__find_location(p, m2, 0x1234) == 0);
	/* Dedup is on (mapping, address) only; the first lines stay. */
	CHECK(pprof__location(p, m, 0x1234, fids, NULL, 1) == loc);
	CHECK(pprof__location(p, m2, 0x1234, fids, NULL, 1) == 2);
	CHECK(pprof__location(p, m, 0x1235, NULL, NULL, 0) == 3);
	CHECK(pprof__sample_count(p) == 0);
}

static void test_pprof_dedup(void)
{
	struct pprof *p = pprof__new(ref_types, 2, ref_types[1], 1);

	CHECK(p);
	check_dedup(p);
	pprof__free(p);
	pprof__free(NULL);
}

/* Label identity: string vs numeric, units, and duplicate keys. */
static void test_pprof_label_identity(void)
{
	struct pprof *p = pprof__new(ref_types, 1, ref_types[1], 1);
	const uint64_t loc[] = { 1 };
	const int64_t one[] = { 1 };
	const struct pprof_label a[] = { { .key = "k", .str = "1" } };
	const struct pprof_label b[] = { { .key = "k", .num = 1 } };
	const struct pprof_label c[] = { { .key = "k", .num = 1,
					   .num_unit = "bytes" } };
	const struct pprof_label d[] = { { .key = "k", .num = 1 },
					 { .key = "k", .num = 2 } };
	const struct pprof_label e[] = { { .key = "k", .num = 2 },
					 { .key = "k", .num = 1 } };

	CHECK(p);
	CHECK(!pprof__add_sample(p, loc, 1, one, a, 1));
	CHECK(!pprof__add_sample(p, loc, 1, one, b, 1));
	CHECK(!pprof__add_sample(p, loc, 1, one, c, 1));
	CHECK(!pprof__add_sample(p, loc, 1, one, d, 2));
	CHECK(!pprof__add_sample(p, loc, 1, one, e, 2));
	CHECK(!pprof__add_sample(p, loc, 1, one, NULL, 0));
	CHECK(!pprof__add_sample(p, NULL, 0, one, NULL, 0));
	CHECK(pprof__sample_count(p) == 6);
	pprof__free(p);
}

/* The label key of sample s, NULL if it has none. */
static const Perftools__Profiles__Label *
label_of(const Profile *prof, const Perftools__Profiles__Sample *s,
	 const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (!strcmp(S(prof, s->label[i]->key), key))
			return s->label[i];
	return NULL;
}

/* A timeline keeps every sample on its own, in the order added, with its
 * own values and its time as t (ns from the origin); a sample without a
 * time has no t; a label selection keeps the events of its samples; the
 * aggregate mode merges the same samples. */
static void test_pprof_timeline(void)
{
	struct pprof *p = pprof__new(ref_types, 2, ref_types[1], 1);
	struct pprof *agg = pprof__new(ref_types, 2, ref_types[1], 1);
	const struct pprof_label qa[] = { { .key = "query", .str = "a" } };
	const struct pprof_label qb[] = { { .key = "query", .str = "b" } };
	const int64_t t0 = 5000000000ll;
	const int64_t at[] = { t0 + 10, t0 + 2000000000ll, t0 + 10,
			       PPROF_NO_TIME };
	const struct pprof_label *lab[] = { qa, qb, qa, qa };
	uint64_t fn, loc;
	uint8_t *gz = NULL, *raw;
	size_t len = 0, rawlen = 0, a = 0;
	Profile *prof;

	CHECK(p && agg);
	CHECK(!pprof__set_timeline(p));
	pprof__set_time_origin(p, t0);
	for (int k = 0; k < 2; k++) {
		struct pprof *q = k ? agg : p;

		fn = pprof__function(q, "f", NULL, NULL);
		loc = pprof__location(q, 0, 0x1000, &fn, NULL, 1);
		CHECK(loc);
		for (size_t i = 0; i < 4; i++) {
			int64_t v[2] = { 1, (int64_t)(i + 1) * 100 };

			CHECK(!pprof__add_sample_at(q, &loc, 1, v, lab[i], 1,
						    at[i]));
		}
	}
	CHECK(pprof__event_count(p) == 4);
	CHECK(pprof__event_count(agg) == 0);
	CHECK(pprof__sample_count(p) == 2 && pprof__sample_count(agg) == 2);

	prof = roundtrip(p);
	CHECK(prof && prof->n_sample == 4);
	for (size_t i = 0; prof && i < prof->n_sample; i++) {
		const Perftools__Profiles__Sample *s = prof->sample[i];
		const Perftools__Profiles__Label *t = label_of(prof, s, "t");

		CHECK(s->n_value == 2 && s->value[1] == (int64_t)(i + 1) * 100);
		CHECK(!strcmp(S(prof, label_of(prof, s, "query")->str),
			      lab[i] == qa ? "a" : "b"));
		if (at[i] == PPROF_NO_TIME) {
			CHECK(!t);
			continue;
		}
		CHECK(t && t->num == at[i] - t0 && !t->str);
		CHECK(!strcmp(S(prof, t->num_unit), "nanoseconds"));
	}
	perftools__profiles__profile__free_unpacked(prof, NULL);

	/* One query's events only, each still on its own. */
	CHECK(!pprof__encode_where(p, "query", "a", &gz, &len));
	raw = gunzip(gz, len, &rawlen);
	CHECK(raw);
	prof = raw ? perftools__profiles__profile__unpack(NULL, rawlen, raw) :
		     NULL;
	free(raw);
	CHECK(prof && prof->n_sample == 3);
	for (size_t i = 0; prof && i < prof->n_sample; i++)
		a += !strcmp(S(prof, label_of(prof, prof->sample[i],
					       "query")->str), "a");
	CHECK(a == 3);
	perftools__profiles__profile__free_unpacked(prof, NULL);
	free(gz);

	/* Aggregated: the three samples of query a are one, with no t. */
	prof = roundtrip(agg);
	CHECK(prof && prof->n_sample == 2);
	for (size_t i = 0; prof && i < prof->n_sample; i++)
		CHECK(!label_of(prof, prof->sample[i], "t"));
	perftools__profiles__profile__free_unpacked(prof, NULL);
	pprof__free(p);
	pprof__free(agg);
}

static void test_pprof_empty(void)
{
	const struct pprof_vt pt = { "cpu", "nanoseconds" };
	struct pprof *p = pprof__new(NULL, 0, pt, 0);
	Profile *prof;

	CHECK(p);
	prof = roundtrip(p);
	pprof__free(p);
	CHECK(prof);
	CHECK(prof->n_string_table == 3);
	CHECK(!strcmp(prof->string_table[0], ""));
	CHECK(prof->n_sample == 0 && prof->n_sample_type == 0);
	CHECK(prof->n_mapping == 0 && prof->n_location == 0);
	CHECK(prof->n_function == 0 && prof->n_comment == 0);
	perftools__profiles__profile__free_unpacked(prof, NULL);
}

#define SCALE_STACKS 2000
#define SCALE_FRAMES 100
#define SCALE_SAMPLES 20000
#define SCALE_LOCS 5000

static int scale_fill(struct pprof *p)
{
	static uint64_t locs[SCALE_LOCS], stack[SCALE_FRAMES];
	const int64_t vals[] = { 1, PERIOD };
	char name[32];
	uint64_t m = pprof__mapping(p, 0x400000, 0x900000, 0, "/bin/big", NULL);
	size_t i, j;

	for (i = 0; i < SCALE_LOCS; i++) {
		uint64_t f;

		snprintf(name, sizeof(name), "func_%zu", i % 1000);
		f = pprof__function(p, name, NULL, "big.c");
		locs[i] = pprof__location(p, m, 0x400000 + 16 * i, &f, NULL, 1);
		if (!locs[i])
			return -1;
	}
	for (i = 0; i < SCALE_SAMPLES; i++) {
		size_t s = i % SCALE_STACKS;
		struct pprof_label lab[] = {
			{ .key = "thread", .str = "worker" },
			{ .key = "pid", .num = (int64_t)(s % 7) },
		};

		/* Frame 0 alone makes each stack distinct. */
		stack[0] = locs[s];
		for (j = 1; j < SCALE_FRAMES; j++)
			stack[j] = locs[(s * 7 + j * 13) % SCALE_LOCS];
		if (pprof__add_sample(p, stack, SCALE_FRAMES, vals, lab, 2))
			return -1;
	}
	return 0;
}

static void test_pprof_scale(void)
{
	struct pprof *p = pprof__new(ref_types, 2, ref_types[1], PERIOD);
	double t0 = now_s(), elapsed;
	Profile *prof;
	int64_t total = 0;
	size_t i;

	CHECK(p);
	CHECK(!scale_fill(p));
	CHECK(pprof__sample_count(p) == SCALE_STACKS);
	prof = roundtrip(p);
	pprof__free(p);
	elapsed = now_s() - t0;
	CHECK(prof);
	CHECK(prof->n_sample == SCALE_STACKS);
	CHECK(prof->n_location == SCALE_LOCS);
	CHECK(prof->n_function == 1000);
	for (i = 0; i < prof->n_sample; i++) {
		CHECK(prof->sample[i]->n_location_id == SCALE_FRAMES);
		CHECK(prof->sample[i]->value[0] ==
		      SCALE_SAMPLES / SCALE_STACKS);
		total += prof->sample[i]->value[0];
	}
	CHECK(total == SCALE_SAMPLES);
	perftools__profiles__profile__free_unpacked(prof, NULL);
	/* About 0.02 s natively and 0.3 s under valgrind; a linear scan
	 * per sample would take far longer. */
	fprintf(stderr, "  scale: %.3f s\n", elapsed);
	CHECK(elapsed < 5.0);
}

/* The deepest stack the BPF side records. */
static void test_pprof_deep_stack(void)
{
	enum { DEPTH = 254 };
	struct pprof *p = pprof__new(ref_types, 2, ref_types[1], PERIOD);
	uint64_t stack[DEPTH], m, f;
	const int64_t vals[] = { 1, PERIOD };
	Profile *prof;
	size_t i;

	CHECK(p);
	m = pprof__mapping(p, 0, UINT64_MAX, 0, "[kernel.kallsyms]", NULL);
	f = pprof__function(p, "deep", NULL, NULL);
	for (i = 0; i < DEPTH; i++)
		stack[i] = pprof__location(p, m, 0xffffffff81000000 + i, &f,
					   NULL, 1);
	CHECK(!pprof__add_sample(p, stack, DEPTH, vals, NULL, 0));
	CHECK(!pprof__add_sample(p, stack, DEPTH, vals, NULL, 0));
	CHECK(!pprof__add_sample(p, stack, DEPTH - 1, vals, NULL, 0));
	CHECK(pprof__sample_count(p) == 2);
	prof = roundtrip(p);
	pprof__free(p);
	CHECK(prof);
	CHECK(prof->n_sample == 2 && prof->n_location == DEPTH);
	CHECK(prof->sample[0]->n_location_id == DEPTH);
	for (i = 0; i < DEPTH; i++)
		CHECK(prof->sample[0]->location_id[i] == i + 1);
	CHECK(prof->sample[0]->value[0] == 2);
	CHECK(prof->sample[0]->value[1] == 2 * PERIOD);
	CHECK(prof->sample[1]->n_location_id == DEPTH - 1);
	perftools__profiles__profile__free_unpacked(prof, NULL);
}

/* ---- hashmap tests ---- */

static void check_hashmap_basic(struct hashmap *m)
{
	const void *key;
	size_t len, iter = 0, n = 0;
	uint64_t i, v, sum = 0;

	for (i = 0; i < 10000; i++)
		CHECK(!hashmap__put(m, &i, sizeof(i), i * 3));
	CHECK(hashmap__size(m) == 10000);
	for (i = 0; i < 10000; i++)
		CHECK(hashmap__get(m, &i, sizeof(i), &v) && v == i * 3);
	i = 10000;
	CHECK(!hashmap__get(m, &i, sizeof(i), NULL));
	i = 5;
	CHECK(!hashmap__put(m, &i, sizeof(i), 77));
	CHECK(hashmap__size(m) == 10000);
	CHECK(*hashmap__lookup(m, &i, sizeof(i)) == 77);
	*hashmap__lookup(m, &i, sizeof(i)) += 1;
	CHECK(hashmap__get(m, &i, sizeof(i), &v) && v == 78);
	CHECK(hashmap__del(m, &i, sizeof(i), &v) && v == 78);
	CHECK(!hashmap__del(m, &i, sizeof(i), NULL));
	CHECK(hashmap__size(m) == 9999);
	while (hashmap__next(m, &iter, &key, &len, &v)) {
		CHECK(len == sizeof(uint64_t));
		n++;
		sum += v;
	}
	CHECK(n == 9999);
	CHECK(sum == 3 * (9999ULL * 10000 / 2) - 15);
	/* Zero-length and string keys. */
	CHECK(!hashmap__put(m, "", 0, 1));
	CHECK(hashmap__get(m, "", 0, &v) && v == 1);
	CHECK(!hashmap__put(m, "abc", 3, 2));
	CHECK(!hashmap__get(m, "abcd", 4, NULL));
	CHECK(hashmap__get(m, "abc", 3, &v) && v == 2);
}

static void test_hashmap_basic(void)
{
	struct hashmap *m = hashmap__new(0);

	CHECK(m);
	check_hashmap_basic(m);
	hashmap__free(m);
	hashmap__free(NULL);
}

/* Random puts and deletes against a plain array, to exercise the
 * backward-shift deletion inside long probe clusters. */
static void test_hashmap_random(void)
{
	enum { KEYS = 512, OPS = 200000 };
	static uint64_t ref[KEYS];
	static bool present[KEYS];
	struct hashmap *m = hashmap__new(0);
	uint64_t x = 88172645463325252ULL, k, v;
	size_t i, n = 0;

	CHECK(m);
	for (i = 0; i < OPS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = x % KEYS;
		if (x & (1ULL << 40)) {
			CHECK(!hashmap__put(m, &k, sizeof(k), x));
			n += !present[k];
			present[k] = true;
			ref[k] = x;
		} else {
			CHECK(hashmap__del(m, &k, sizeof(k), NULL) ==
			      present[k]);
			n -= present[k];
			present[k] = false;
		}
	}
	CHECK(hashmap__size(m) == n);
	for (k = 0; k < KEYS; k++) {
		CHECK(hashmap__get(m, &k, sizeof(k), &v) == present[k]);
		CHECK(!present[k] || v == ref[k]);
	}
	hashmap__free(m);
}

static void test_hashmap_borrow(void)
{
	static const char keys[][8] = { "alpha", "beta", "gamma" };
	struct hashmap *m = hashmap__new(HASHMAP_BORROW_KEYS);
	const void *key;
	size_t iter = 0, i;
	uint64_t v;

	CHECK(m);
	for (i = 0; i < 3; i++)
		CHECK(!hashmap__put(m, keys[i], strlen(keys[i]), i));
	while (hashmap__next(m, &iter, &key, NULL, &v))
		CHECK(key == keys[v]);      /* the caller's bytes, not a copy */
	CHECK(hashmap__get(m, "beta", 4, &v) && v == 1);
	CHECK(hashmap__del(m, "beta", 4, NULL));
	CHECK(hashmap__size(m) == 2);
	hashmap__free(m);
	CHECK(hashmap__hash("abc", 3) == hashmap__hash("abc", 3));
	CHECK(hashmap__hash("abc", 3) != hashmap__hash("abd", 3));
	CHECK(hashmap__hash("a\0", 2) != hashmap__hash("a", 1));
}

enum { FREE_VALUES_N = 100 };
static unsigned freed_times[FREE_VALUES_N];

/* Values are malloc'd indexes; counts the calls per entry. */
static void count_free(void *p)
{
	freed_times[*(uint64_t *)p]++;
	free(p);
}

static void test_hashmap_free_values(void)
{
	struct hashmap *m = hashmap__new(0);
	uint64_t i;

	CHECK(m);
	for (i = 0; i < FREE_VALUES_N; i++) {
		uint64_t *p = malloc(sizeof(*p));

		CHECK(p);
		*p = i;
		CHECK(!hashmap__put(m, &i, sizeof(i), (uintptr_t)p));
	}
	hashmap__free_values(m, count_free);	/* valgrind: nothing leaks */
	for (i = 0; i < FREE_VALUES_N; i++)
		CHECK(freed_times[i] == 1);
	hashmap__free_values(NULL, count_free);
	for (i = 0; i < FREE_VALUES_N; i++)
		CHECK(freed_times[i] == 1);
}

/* ---- atomic file tests ---- */

static char tmpdir[64];

static bool make_tmpdir(void)
{
	strcpy(tmpdir, "/tmp/tagprof-test-XXXXXX");
	return mkdtemp(tmpdir) != NULL;
}

/* Removes tmpdir and whatever the test left in it (one level, plus one
 * level of subdirectories). */
static void remove_tmpdir(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *de;
	char path[512];

	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmpdir, de->d_name);
		if (unlink(path) < 0)
			rmdir(path);
	}
	if (d)
		closedir(d);
	rmdir(tmpdir);
}

static size_t count_entries(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *de;
	size_t n = 0;

	while (d && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

static char *tmp_path(const char *name)
{
	static char buf[4][256];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", tmpdir, name);
	return p;
}

/* Reads up to cap bytes of a file; -1 on error. */
static ssize_t read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, cap);
	close(fd);
	return n;
}

static void check_written(const char *path, const void *data, size_t len,
			  mode_t mode)
{
	char buf[256];
	struct stat st;

	CHECK(lstat(path, &st) == 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK((st.st_mode & 0777) == mode);
	CHECK(read_file(path, buf, sizeof(buf)) == (ssize_t)len);
	CHECK(memcmp(buf, data, len) == 0);
}

static void sink_write_readback(void)
{
	const char data[] = "hello\0world";
	const char *out = tmp_path("out.pb.gz");

	CHECK(atomicfile__write(out, data, sizeof(data), 0640) == 0);
	check_written(out, data, sizeof(data), 0640);
	CHECK(!check_case_failed);
	CHECK(count_entries() == 1);
	/* Overwrite: new content and new mode. */
	CHECK(atomicfile__write(out, "xyz", 3, 0604) == 0);
	check_written(out, "xyz", 3, 0604);
	CHECK(!check_case_failed);
	CHECK(atomicfile__write(out, NULL, 0, 0600) == 0);
	check_written(out, "", 0, 0600);
	CHECK(!check_case_failed);
	CHECK(count_entries() == 1);
}

static void test_sink_write_readback(void)
{
	umask(0);       /* mode bits must come from the argument alone */
	CHECK(make_tmpdir());
	sink_write_readback();
	remove_tmpdir();
}

/* A window's files written together: all in place, in order; from the
 * first that fails on, none is written and no temporary file stays. */
static void sink_write_many(void)
{
	struct atomicfile_item items[3] = {
		{ .name = "a.pb.gz", .data = "aa", .len = 2 },
		{ .name = "b.pb.gz", .data = "bbb", .len = 3 },
		{ .name = "c.pb.gz", .data = "c", .len = 1 },
	};

	CHECK(atomicfile__write_in(tmpdir, items, 3, 0640) == 3);
	CHECK(items[0].err == 0 && items[1].err == 0 && items[2].err == 0);
	check_written(tmp_path("a.pb.gz"), "aa", 2, 0640);
	check_written(tmp_path("b.pb.gz"), "bbb", 3, 0640);
	check_written(tmp_path("c.pb.gz"), "c", 1, 0640);
	CHECK(!check_case_failed);
	CHECK(count_entries() == 3);
	/* A directory where the second goes: rename fails there. */
	CHECK(unlink(tmp_path("b.pb.gz")) == 0);
	CHECK(mkdir(tmp_path("b.pb.gz"), 0700) == 0);
	items[0].data = "AA";
	CHECK(atomicfile__write_in(tmpdir, items, 3, 0600) == 1);
	CHECK(items[0].err == 0 && items[1].err < 0 &&
	      items[1].err != -EAGAIN && items[2].err == -EAGAIN);
	check_written(tmp_path("a.pb.gz"), "AA", 2, 0600);
	check_written(tmp_path("c.pb.gz"), "c", 1, 0640);	/* untouched */
	CHECK(!check_case_failed);
	CHECK(count_entries() == 3);	/* no temporary file left */
	CHECK(rmdir(tmp_path("b.pb.gz")) == 0);
	/* No directory: the first gets the error. */
	CHECK(atomicfile__write_in(tmp_path("none"), items, 3, 0600) == 0);
	CHECK(items[0].err == -ENOENT && items[1].err == -EAGAIN);
}

static void test_sink_write_many(void)
{
	umask(0);
	CHECK(make_tmpdir());
	sink_write_many();
	remove_tmpdir();
}

static void sink_replaces_symlink(void)
{
	const char *victim = tmp_path("victim"), *out = tmp_path("out");
	char buf[16];

	CHECK(atomicfile__write(victim, "orig", 4, 0644) == 0);
	CHECK(symlink(victim, out) == 0);
	CHECK(atomicfile__write(out, "new", 3, 0600) == 0);
	check_written(out, "new", 3, 0600);     /* lstat: a file now */
	CHECK(!check_case_failed);
	CHECK(read_file(victim, buf, sizeof(buf)) == 4);
	CHECK(memcmp(buf, "orig", 4) == 0);
	CHECK(count_entries() == 2);
}

static void test_sink_replaces_symlink(void)
{
	umask(0);
	CHECK(make_tmpdir());
	sink_replaces_symlink();
	remove_tmpdir();
}

static void sink_failures(void)
{
	const char *missing = tmp_path("nodir");
	const char *in_missing = tmp_path("nodir/out.pb.gz");
	const char *subdir = tmp_path("subdir");
	struct stat st;

	CHECK(atomicfile__write(in_missing, "x", 1, 0644) == -ENOENT);
	CHECK(stat(missing, &st) < 0 && errno == ENOENT);
	CHECK(count_entries() == 0);
	/* Fails at the rename, after the temporary file exists: it must
	 * be removed again and the directory left alone. */
	CHECK(mkdir(subdir, 0755) == 0);
	CHECK(atomicfile__write(subdir, "x", 1, 0644) == -EISDIR);
	CHECK(stat(subdir, &st) == 0 && S_ISDIR(st.st_mode));
	CHECK(count_entries() == 1);
	CHECK(atomicfile__write(tmp_path("trailing/"), "x", 1, 0644) ==
	      -EISDIR);
	CHECK(count_entries() == 1);
}

static void test_sink_failures(void)
{
	CHECK(make_tmpdir());
	sink_failures();
	remove_tmpdir();
}

static void sink_check_writable(void)
{
	const char *file = tmp_path("file");

	CHECK(atomicfile__check_writable(tmp_path("nodir/out.pb.gz")) == -ENOENT);
	CHECK(atomicfile__check_writable("/tmp/tagprof-never-created.pb.gz") == 0);
	CHECK(atomicfile__check_writable(tmp_path("out.pb.gz")) == 0);
	CHECK(atomicfile__check_writable("relative.pb.gz") == 0);
	CHECK(atomicfile__check_writable(tmpdir) == -EISDIR);
	CHECK(atomicfile__check_writable("/tmp") == -EISDIR);
	CHECK(atomicfile__check_writable("/tmp/") == -EISDIR);
	CHECK(atomicfile__write(file, "x", 1, 0644) == 0);
	CHECK(atomicfile__check_writable(file) == 0);     /* would be replaced */
	CHECK(atomicfile__check_writable(tmp_path("file/out")) == -ENOTDIR);
	CHECK(atomicfile__check_writable("") == -ENOENT);
	CHECK(count_entries() == 1);                /* checks create nothing */
}

static void test_sink_check_writable(void)
{
	CHECK(make_tmpdir());
	sink_check_writable();
	remove_tmpdir();
}

/* ---- interoperability with go tool pprof ---- */

static bool in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];
	const char *p, *end;

	for (p = path; p && *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)(end - p), p, prog);
		if (access(buf, X_OK) == 0)
			return true;
	}
	return false;
}

/* Runs cmd; returns its exit status (or -1) and its output in out. */
static int run_capture(const char *cmd, char *out, size_t cap)
{
	FILE *f = popen(cmd, "r");
	size_t n = 0, got;
	int status;

	if (!f)
		return -1;
	while (n + 1 < cap && (got = fread(out + n, 1, cap - 1 - n, f)) > 0)
		n += got;
	out[n] = '\0';
	while (fgetc(f) != EOF)     /* drain, so the child never blocks */
		;
	status = pclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void go_pprof_reads(const char *file)
{
	static char out[1 << 16];
	char cmd[512];
	int rc;

	snprintf(cmd, sizeof(cmd), "go tool pprof -raw '%s' 2>&1", file);
	rc = run_capture(cmd, out, sizeof(out));
	if (rc != 0 || strcasestr(out, "warning"))
		fprintf(stderr, "  go tool pprof (rc %d) said:\n%s\n", rc, out);
	CHECK(rc == 0);
	CHECK(!strcasestr(out, "warning"));
	CHECK(strstr(out, "inlined_helper"));
	CHECK(strstr(out, "memcpy"));
	CHECK(strstr(out, "thread"));
}

static void test_pprof_go_tool(void)
{
	struct ref r;
	struct pprof *p = build_ref(&r);
	uint8_t *gz = NULL;
	size_t len = 0;
	int err;

	CHECK(p);
	err = pprof__encode(p, &gz, &len);
	pprof__free(p);
	CHECK(err == 0);
	CHECK(make_tmpdir());
	err = atomicfile__write(tmp_path("ref.pb.gz"), gz, len, 0644);
	free(gz);
	if (!err)
		go_pprof_reads(tmp_path("ref.pb.gz"));
	remove_tmpdir();
	CHECK(err == 0);
}

int main(void)
{
	RUN(test_pprof_roundtrip);
	RUN(test_pprof_dedup);
	RUN(test_pprof_label_identity);
	RUN(test_pprof_timeline);
	RUN(test_pprof_empty);
	RUN(test_pprof_scale);
	RUN(test_pprof_deep_stack);
	RUN(test_hashmap_basic);
	RUN(test_hashmap_random);
	RUN(test_hashmap_borrow);
	RUN(test_hashmap_free_values);
	RUN(test_sink_write_readback);
	RUN(test_sink_write_many);
	RUN(test_sink_replaces_symlink);
	RUN(test_sink_failures);
	RUN(test_sink_check_writable);
	if (in_path("go"))
		RUN(test_pprof_go_tool);
	else
		SKIP(test_pprof_go_tool, "go not in PATH");
	CHECK_EXIT();
}
