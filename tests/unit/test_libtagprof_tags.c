/* Unit tests for libtagprof's register tags: tagprof_tags_declare() and
 * tagprof_tag_name() (errors, and what they publish in the OTEP 4719
 * process context, read back as a profiler reads it and decoded with the
 * agent's protobuf-c code), tagprof_tag_swap()/get() (this file is built
 * by GCC with -ffixed-r15 -DTAGPROF_TAG_REG_RESERVED, x28 on arm64), and
 * the header's refusal to compile tag writes without the reservation.
 * Linked with libtagprof.a. The cases share the process's declaration, so
 * each starts by declaring what it needs; the context cases run in order. */
#include "tagprof/tagprof.h"
#include "lib/internal.h"
#include "check.h"
#include "ctx_snapshot.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef TAGPROF_TAG_REG_RESERVED
#error "this test is built with -ffixed-<reg> -DTAGPROF_TAG_REG_RESERVED"
#endif

#define REG	TAGPROF_TAG_REG_NAME

static const char *const two_fields[] = { "operator:16", "pipeline:16" };

/* ---- the process context, read as a profiler reads it ---- */

/* The attribute is an array_value of exactly these string_values. */
static bool attr_is_strs(const struct ctx_snap *s, const char *key,
			 const char *const *want, size_t n)
{
	const Tagprof__Otel__AnyValue *v = extra_attr(s, key);

	if (!v || v->value_case != TAGPROF__OTEL__ANY_VALUE__VALUE_ARRAY_VALUE ||
	    v->array_value->n_values != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!any_is_str(v->array_value->values[i], want[i]))
			return false;
	return true;
}

/* The dictionary as published, or NULL. */
static const Tagprof__Otel__ArrayValue *names_of(const struct ctx_snap *s)
{
	const Tagprof__Otel__AnyValue *v = extra_attr(s, "tagprof.tag.names");

	if (!v || v->value_case != TAGPROF__OTEL__ANY_VALUE__VALUE_ARRAY_VALUE)
		return NULL;
	return v->array_value;
}

static const char *last_name(const struct ctx_snap *s)
{
	const Tagprof__Otel__ArrayValue *a = names_of(s);

	if (!a || !a->n_values || a->values[a->n_values - 1]->value_case !=
				      TAGPROF__OTEL__ANY_VALUE__VALUE_STRING_VALUE)
		return NULL;
	return a->values[a->n_values - 1]->string_value;
}

static size_t count_names(const struct ctx_snap *s)
{
	const Tagprof__Otel__ArrayValue *a = names_of(s);

	return a ? a->n_values : (size_t)-1;
}

static int name_n(const char *field, uint64_t value, char c, size_t n)
{
	char v[300];

	memset(v, c, n);
	v[n] = '\0';
	return tagprof_tag_name(field, value, v);
}

/* ---- cases: errors (first: nothing declared or published yet) ---- */

/* Errors publish nothing: the process has no context before the first
 * successful call (this binary never makes a label set). */
static void test_errors_undeclared(void)
{
	uintptr_t addr;

	CHECK(tagprof_tag_name("operator", 1, "scan") == -EINVAL);
	CHECK(tagprof_tags_declare("r99", two_fields, 2) == -EINVAL);
	CHECK(find_ctx_maps(&addr) == 0);
}

static void test_errors_declare(void)
{
	static const char *const nine[] = { "a:1", "b:1", "c:1", "d:1", "e:1",
					    "f:1", "g:1", "h:1", "i:1" };
	static const char *const bits65[] = { "operator:33", "pipeline:32" };
	static const char *const dup[] = { "operator:16", "operator:8" };
	static const char *const null_elem[] = { "operator:16", NULL };
	static const char *const bad[] = {
		"operator", "operator:", ":16", "operator:0", "operator:65", "operator:016",
		"operator:+1", "operator:-1", "operator:1x", "operator:16:", "oper ator:16",
		"op=erator:16", "opérateur:16", "operator:99999999999999999999", "",
		"operator: 16",
		/* 64 characters */
		"a123456789012345678901234567890123456789012345678901234567890123:1",
	};
	static const char *const bad_regs[] = {
		"", "R15", "r15 ", "r1", "r11", "rax", "rsp", "rbp", "x29", "x18", "w28", "x2",
#if defined(__x86_64__)
		"x28", "x19",
#else
		"r15", "rbx",
#endif
	};

	CHECK(tagprof_tags_declare(NULL, two_fields, 2) == -EINVAL);
	for (size_t i = 0; i < sizeof(bad_regs) / sizeof(bad_regs[0]); i++) {
		if (tagprof_tags_declare(bad_regs[i], two_fields, 2) != -EINVAL) {
			fprintf(stderr, "  register '%s' accepted\n", bad_regs[i]);
			CHECK(0);
		}
	}
	CHECK(tagprof_tags_declare(REG, NULL, 2) == -EINVAL);
	CHECK(tagprof_tags_declare(REG, two_fields, 0) == -EINVAL);
	CHECK(tagprof_tags_declare(REG, nine, 9) == -EINVAL);
	CHECK(tagprof_tags_declare(REG, bits65, 2) == -EINVAL);
	CHECK(tagprof_tags_declare(REG, dup, 2) == -EINVAL);
	CHECK(tagprof_tags_declare(REG, null_elem, 2) == -EINVAL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (tagprof_tags_declare(REG, &bad[i], 1) != -EINVAL) {
			fprintf(stderr, "  field '%s' accepted\n", bad[i]);
			CHECK(0);
		}
	}
	/* Still nothing declared. */
	CHECK(tagprof_tag_name("operator", 1, "scan") == -EINVAL);
}

/* The limits themselves are fine. */
static void test_declare_limits(void)
{
	static const char *const eight[] = { "a:8", "b:8", "c:8", "d:8", "e:8",
					     "f:8", "g:8", "h:8" };
	static const char *const one64[] = { "whole:64" };
	static const char *const bits64[] = { "operator:33", "pipeline:31" };
	static const char *const chars[] = {
		"Az09_.:1",
		"a12345678901234567890123456789012345678901234567890123456789012:2",
	};
#if defined(__x86_64__)
	static const char *const regs[] = { "r12", "r13", "r14", "r15", "rbx" };
#else
	static const char *const regs[] = { "x19", "x20", "x21", "x22", "x23",
					    "x24", "x25", "x26", "x27", "x28" };
#endif

	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		CHECK(tagprof_tags_declare(regs[i], two_fields, 2) == 0);
	CHECK(tagprof_tags_declare(REG, eight, 8) == 0);
	CHECK(tagprof_tag_name("h", 255, "top") == 0);
	CHECK(tagprof_tag_name("h", 256, "top") == -EINVAL);
	CHECK(tagprof_tags_declare(REG, one64, 1) == 0);
	CHECK(tagprof_tag_name("whole", UINT64_MAX, "max") == 0);
	CHECK(tagprof_tags_declare(REG, bits64, 2) == 0);
	CHECK(tagprof_tags_declare(REG, chars, 2) == 0);
	CHECK(tagprof_tag_name("Az09_.", 1, "x") == 0);
	CHECK(tagprof_tag_name("Az09_.", 2, "x") == -EINVAL);
}

static void test_errors_name(void)
{
	CHECK(tagprof_tags_declare(REG, two_fields, 2) == 0);
	CHECK(tagprof_tag_name(NULL, 1, "scan") == -EINVAL);
	CHECK(tagprof_tag_name("operator", 1, NULL) == -EINVAL);
	CHECK(tagprof_tag_name("operator", 1, "") == -EINVAL);
	CHECK(tagprof_tag_name("nosuch", 1, "scan") == -EINVAL);
	CHECK(tagprof_tag_name("", 1, "scan") == -EINVAL);
	CHECK(tagprof_tag_name("operator:16", 1, "scan") == -EINVAL);
	CHECK(tagprof_tag_name("Operator", 1, "scan") == -EINVAL);
	CHECK(tagprof_tag_name("operator", 65536, "scan") == -EINVAL);	/* 17 bits */
	CHECK(tagprof_tag_name("operator", UINT64_MAX, "scan") == -EINVAL);
	CHECK(tagprof_tag_name("pipeline", 1ULL << 16, "p") == -EINVAL);
	CHECK(name_n("operator", 1, 'n', 256) == -EINVAL);
	/* Not UTF-8: a stray continuation byte, a truncated sequence, an
	 * overlong '/', a surrogate, past U+10FFFF. */
	CHECK(tagprof_tag_name("operator", 1, "a\x80") == -EINVAL);
	CHECK(tagprof_tag_name("operator", 1, "\xc3") == -EINVAL);
	CHECK(tagprof_tag_name("operator", 1, "\xe2\x82") == -EINVAL);
	CHECK(tagprof_tag_name("operator", 1, "\xc0\xaf") == -EINVAL);
	CHECK(tagprof_tag_name("operator", 1, "\xed\xa0\x80") == -EINVAL);
	CHECK(tagprof_tag_name("operator", 1, "\xf4\x90\x80\x80") == -EINVAL);
	CHECK(tagprof_tag_name("operator", 1, "\xe2\x82\xac \xf0\x9f\x98\x80") == 0);
	CHECK(name_n("operator", 1, 'n', 255) == 0);
	CHECK(tagprof_tag_name("operator", 65535, "last") == 0);
	CHECK(tagprof_tag_name("operator", 0, "none") == 0);
}

/* ---- cases: the published context ---- */

/* Tags alone publish the context (no label set was ever made), with the
 * contract's encoding, exactly. */
static void test_ctx_contract(void)
{
	static const char *const fields_want[] = { "operator:16", "pipeline:16" };
	static const char *const names_want[] = {
		"operator:3=HashJoin", "pipeline:1=probe side", "operator:0=idle",
		"operator:65535=ü=:x",
	};
	struct ctx_snap s;
	uint8_t *again = NULL;
	bool same;

	CHECK(tagprof_tags_declare(REG, two_fields, 2) == 0);
	CHECK(tagprof_tag_name("operator", 3, "HashJoin") == 0);
	CHECK(tagprof_tag_name("pipeline", 1, "probe side") == 0);
	CHECK(tagprof_tag_name("operator", 0, "idle") == 0);
	CHECK(tagprof_tag_name("operator", 65535, "ü=:x") == 0);
	CHECK(snap_take(&s) == 0);
	CHECK(s.nmaps == 1);
	CHECK(any_is_str(extra_attr(&s, "tagprof.tag.register"), REG));
	CHECK(attr_is_strs(&s, "tagprof.tag.fields", fields_want, 2));
	CHECK(attr_is_strs(&s, "tagprof.tag.names", names_want, 4));
	/* The rest of the context is there too. */
	CHECK(extra_attr(&s, "threadlocal.schema_version"));
	CHECK(extra_attr(&s, "threadlocal.attribute_key_map"));
	CHECK(s.pc->resource && s.pc->resource->n_attributes == 4);
	/* Canonical encoding: protobuf-c packs the same bytes. */
	CHECK(tagprof__otel__process_context__get_packed_size(s.pc) == s.payload_size);
	again = malloc(s.payload_size);
	CHECK(again);
	tagprof__otel__process_context__pack(s.pc, again);
	same = !memcmp(again, s.bytes, s.payload_size);
	free(again);
	snap_free(&s);
	CHECK(same);
}

/* A later name is published by a republish (published_at moves forward),
 * appended; renaming appends; the same name again changes nothing. */
static void test_ctx_name_later(void)
{
	struct ctx_snap a, b, c, d;
	bool ok;

	CHECK(tagprof_tags_declare(REG, two_fields, 2) == 0);
	CHECK(tagprof_tag_name("operator", 3, "HashJoin") == 0);
	CHECK(snap_take(&a) == 0);
	CHECK(tagprof_tag_name("operator", 4, "Sort") == 0);
	CHECK(snap_take(&b) == 0);
	CHECK(tagprof_tag_name("operator", 3, "HashJoin2") == 0);
	CHECK(tagprof_tag_name("operator", 3, "HashJoin2") == 0);	/* no change */
	CHECK(snap_take(&c) == 0);
	CHECK(tagprof_tag_name("operator", 3, "HashJoin") == 0);	/* back: appended */
	CHECK(snap_take(&d) == 0);
	ok = b.published_at > a.published_at && count_names(&a) == 1 &&
	     count_names(&b) == 2 && last_name(&b) && !strcmp(last_name(&b), "operator:4=Sort") &&
	     c.published_at > b.published_at && count_names(&c) == 3 &&
	     !strcmp(last_name(&c), "operator:3=HashJoin2") &&
	     d.published_at > c.published_at && count_names(&d) == 4 &&
	     !strcmp(last_name(&d), "operator:3=HashJoin");
	snap_free(&a);
	snap_free(&b);
	snap_free(&c);
	snap_free(&d);
	CHECK(ok);
	/* The same name as the latest one for its value: nothing published. */
	CHECK(snap_take(&a) == 0);
	CHECK(tagprof_tag_name("operator", 4, "Sort") == 0);
	CHECK(snap_take(&b) == 0);
	ok = a.published_at == b.published_at;
	snap_free(&a);
	snap_free(&b);
	CHECK(ok);
}

/* Redeclaring replaces the fields and empties the dictionary (an empty
 * array, still present); a failed declare changes nothing. */
static void test_ctx_redeclare(void)
{
	static const char *const three[] = { "op:8", "stage:8", "query:48" };
	static const char *const bad[] = { "op:8", "stage:8", "query:49" };
	static const char *const three_want[] = { "op:8", "stage:8", "query:48" };
	struct ctx_snap a, b;
	bool ok;

	CHECK(tagprof_tags_declare(REG, two_fields, 2) == 0);
	CHECK(tagprof_tag_name("operator", 1, "scan") == 0);
#if defined(__x86_64__)
	CHECK(tagprof_tags_declare("rbx", three, 3) == 0);
#else
	CHECK(tagprof_tags_declare("x19", three, 3) == 0);
#endif
	CHECK(tagprof_tag_name("operator", 1, "scan") == -EINVAL);
	CHECK(tagprof_tag_name("query", (1ULL << 48) - 1, "q") == 0);
	CHECK(tagprof_tag_name("query", 1ULL << 48, "q") == -EINVAL);
	CHECK(snap_take(&a) == 0);
	CHECK(tagprof_tags_declare(REG, bad, 3) == -EINVAL);
	CHECK(snap_take(&b) == 0);
	ok = a.published_at == b.published_at &&
#if defined(__x86_64__)
	     any_is_str(extra_attr(&b, "tagprof.tag.register"), "rbx") &&
#else
	     any_is_str(extra_attr(&b, "tagprof.tag.register"), "x19") &&
#endif
	     attr_is_strs(&b, "tagprof.tag.fields", three_want, 3) && count_names(&b) == 1 &&
	     !strcmp(last_name(&b), "query:281474976710655=q");
	snap_free(&a);
	snap_free(&b);
	CHECK(ok);
	CHECK(tagprof_tags_declare(REG, two_fields, 2) == 0);
	CHECK(snap_take(&a) == 0);
	ok = count_names(&a) == 0 && any_is_str(extra_attr(&a, "tagprof.tag.register"), REG);
	snap_free(&a);
	CHECK(ok);
}

/* Label keys and tags live side by side in the context. */
static void test_ctx_with_labels(void)
{
	tagprof_labels *l = tagprof_labels_new();
	struct ctx_snap s;
	bool ok;

	CHECK(l);
	CHECK(tagprof_tags_declare(REG, two_fields, 2) == 0);
	CHECK(tagprof_tag_name("operator", 7, "agg") == 0);
	CHECK(tagprof_labels_add(l, "tags.query_id", "q1") == 0);
	CHECK(tagprof_process_init("tagsvc") == 0);
	tagprof_labels_free(l);
	CHECK(snap_take(&s) == 0);
	ok = extra_attr(&s, "threadlocal.attribute_key_map") &&
	     any_is_str(extra_attr(&s, "tagprof.tag.register"), REG) &&
	     count_names(&s) == 1 && !strcmp(last_name(&s), "operator:7=agg");
	snap_free(&s);
	CHECK(ok);
}

#define NAME_THREADS	4
#define NAME_EACH	25

static void *name_main(void *arg)
{
	uintptr_t t = (uintptr_t)arg;
	char n[32];

	for (int i = 0; i < NAME_EACH; i++) {
		snprintf(n, sizeof(n), "t%u.%d", (unsigned int)t, i);
		if (tagprof_tag_name("operator", t * 100 + (uint64_t)i, n))
			return (void *)1;
	}
	return NULL;
}

/* Threads naming at once: every name is published once, each thread's in
 * its order. */
static void test_ctx_concurrent_names(void)
{
	pthread_t th[NAME_THREADS];
	struct ctx_snap s;
	const Tagprof__Otel__ArrayValue *a;
	int next[NAME_THREADS] = { 0 };
	bool ok = true;

	CHECK(tagprof_tags_declare(REG, two_fields, 2) == 0);
	for (uintptr_t t = 0; t < NAME_THREADS; t++)
		CHECK(pthread_create(&th[t], NULL, name_main, (void *)t) == 0);
	for (int t = 0; t < NAME_THREADS; t++) {
		void *rv;

		pthread_join(th[t], &rv);
		ok = ok && !rv;
	}
	CHECK(ok);
	CHECK(snap_take(&s) == 0);
	a = names_of(&s);
	ok = a && a->n_values == NAME_THREADS * NAME_EACH;
	for (size_t i = 0; ok && i < a->n_values; i++) {
		unsigned int t, k;
		char want[64];

		ok = sscanf(a->values[i]->string_value, "operator:%*u=t%u.%u", &t, &k) == 2 &&
		     t < NAME_THREADS && (int)k == next[t]++;
		snprintf(want, sizeof(want), "operator:%u=t%u.%u", t * 100 + k, t, k);
		ok = ok && !strcmp(a->values[i]->string_value, want);
	}
	snap_free(&s);
	CHECK(ok);
}

static char letter(uint64_t v)
{
	return (char)('a' + v % 26);
}

/* Last of the context cases: the dictionary fills the 60 KiB context. */
static void test_ctx_enospc(void)
{
	struct ctx_snap a, b;
	uint64_t v;
	int err = 0;
	bool ok;

	CHECK(tagprof_tags_declare(REG, two_fields, 2) == 0);
	for (v = 0; v < 1000; v++) {
		err = name_n("operator", v, letter(v), 255);
		if (err)
			break;
	}
	/* Names 0..v-1 are in, v was refused. */
	CHECK(err == -ENOSPC);
	CHECK(v > 200);		/* ~60 KiB / ~275 bytes */
	CHECK(snap_take(&a) == 0);
	ok = a.payload_size <= 60 * 1024 && a.payload_size > 59 * 1024 &&
	     count_names(&a) == v;
	/* The refused name is not half there; a known one costs nothing, the
	 * refused one stays refused, and a redeclare frees the room. */
	CHECK(name_n("operator", v - 1, letter(v - 1), 255) == 0);
	CHECK(name_n("operator", v, letter(v), 255) == -ENOSPC);
	CHECK(snap_take(&b) == 0);
	ok = ok && b.published_at == a.published_at;
	snap_free(&a);
	snap_free(&b);
	CHECK(ok);
	CHECK(tagprof_tags_declare(REG, two_fields, 2) == 0);
	CHECK(name_n("operator", 1, 'z', 255) == 0);
	CHECK(snap_take(&a) == 0);
	ok = count_names(&a) == 1 && a.payload_size < 2048;
	snap_free(&a);
	CHECK(ok);
}

/* ---- cases: the register ---- */

/* Opaque to the optimizer, and register-hungry: with r15 reserved, GCC
 * must do all of this in the other registers. */
__attribute__((noipa)) uint64_t hungry(uint64_t x)
{
	uint64_t a = x, b = x * 3, c = x * 5, d = x * 7, e = x * 11, f = x * 13,
		 g = x * 17, h = x * 19, i = x * 23, j = x * 29, k = x * 31, l = x * 37,
		 m = x * 41, n = x * 43;

	for (int r = 0; r < 100; r++) {
		a += b ^ n; b += c ^ a; c += d ^ b; d += e ^ c; e += f ^ d; f += g ^ e;
		g += h ^ f; h += i ^ g; i += j ^ h; j += k ^ i; k += l ^ j; l += m ^ k;
		m += n ^ l; n += a ^ m;
		__asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e),
				 "+r"(f), "+r"(g));
		__asm__ volatile("" : "+r"(h), "+r"(i), "+r"(j), "+r"(k), "+r"(l),
				 "+r"(m), "+r"(n));
	}
	return a ^ b ^ c ^ d ^ e ^ f ^ g ^ h ^ i ^ j ^ k ^ l ^ m ^ n;
}

static void test_swap_nested(void)
{
	uint64_t outer = tagprof_tag_swap(0);	/* what the runtime left */

	CHECK(tagprof_tag_get() == 0);
	CHECK(tagprof_tag_swap(0x10001) == 0);
	CHECK(tagprof_tag_get() == 0x10001);
	CHECK(tagprof_tag_swap(0x20001) == 0x10001);
	CHECK(tagprof_tag_swap(UINT64_MAX) == 0x20001);
	CHECK(tagprof_tag_get() == UINT64_MAX);
	CHECK(tagprof_tag_swap(0x20001) == UINT64_MAX);
	CHECK(tagprof_tag_swap(0x10001) == 0x20001);
	CHECK(tagprof_tag_swap(0) == 0x10001);
	CHECK(tagprof_tag_get() == 0);
	tagprof_tag_swap(outer);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A tag survives calls: into this file's code (which never allocates the
 * register), and into code built without the flag (libc, libtagprof),
 * which must save and restore the callee-saved register if it uses it. */
static void test_swap_survives_calls(void)
{
	uint64_t v[64], prev, h;

	prev = tagprof_tag_swap(0xfeedface12345678ULL);
	h = hungry(3);
	CHECK(tagprof_tag_get() == 0xfeedface12345678ULL);
	CHECK(h == hungry(3));
	for (int i = 0; i < 64; i++)
		v[i] = (uint64_t)(64 - i) * 0x9e3779b97f4a7c15ULL;
	qsort(v, 64, sizeof(v[0]), cmp_u64);	/* libc calling back into us */
	CHECK(tagprof_tag_get() == 0xfeedface12345678ULL);
	CHECK(tagprof_tags_declare(REG, two_fields, 2) == 0);
	CHECK(tagprof_tag_name("operator", 9, "survivor") == 0);
	CHECK(tagprof_tag_get() == 0xfeedface12345678ULL);
	CHECK(tagprof_tag_swap(prev) == 0xfeedface12345678ULL);
}

static void *reg_thread(void *arg)
{
	uint64_t mine = (uint64_t)(uintptr_t)arg;
	volatile uint64_t sink = 0;
	bool ok = true;

	tagprof_tag_swap(mine);
	for (int i = 0; i < 1000; i++) {
		ok = ok && tagprof_tag_get() == mine;
		sink += hungry(mine + (uint64_t)i);
		sched_yield();
	}
	(void)sink;
	return (void *)(uintptr_t)(ok && tagprof_tag_get() == mine);
}

/* Each thread has its own register. */
static void test_swap_per_thread(void)
{
	pthread_t th[3];
	uint64_t prev = tagprof_tag_swap(0x77);
	bool ok = true;

	for (uintptr_t t = 0; t < 3; t++)
		CHECK(pthread_create(&th[t], NULL, reg_thread, (void *)(0x100 + t)) == 0);
	for (int t = 0; t < 3; t++) {
		void *rv;

		pthread_join(th[t], &rv);
		ok = ok && rv;
	}
	CHECK(ok);
	CHECK(tagprof_tag_swap(prev) == 0x77);
}

/* ---- cases: the header refuses tag writes without the reservation ---- */

static char tmpdir[64];

static const char *tmp_path(const char *name, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", tmpdir, name);
	return buf;
}

static bool write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	bool ok = f && fputs(text, f) >= 0;

	if (f)
		ok = !fclose(f) && ok;
	return ok;
}

/* Compiles src with cc and flags; its exit status, stderr in err. */
static int compile(const char *cc, const char *flags, const char *src, char *err, size_t size)
{
	char csrc[256], cerr[256], cobj[256], cmd[2048];
	FILE *f;
	size_t n = 0;
	int rc;

	if (!write_file(tmp_path("t.c", csrc, sizeof(csrc)), src))
		return -1;
	tmp_path("t.err", cerr, sizeof(cerr));
	tmp_path("t.o", cobj, sizeof(cobj));
	snprintf(cmd, sizeof(cmd), "%s -Wall -Wextra -Werror -I'%s' %s -c '%s' -o '%s' 2>'%s'",
		 cc, TEST_INCLUDE_DIR, flags, csrc, cobj, cerr);
	rc = system(cmd);
	err[0] = '\0';
	if ((f = fopen(cerr, "r"))) {
		n = fread(err, 1, size - 1, f);
		fclose(f);
	}
	err[n] = '\0';
	return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

static bool have_cc(const char *cc)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "%s --version >/dev/null 2>&1", cc);
	return system(cmd) == 0;
}

static const char prog_swap[] =
	"#include <tagprof/tagprof.h>\n"
	"int main(void) { return (int)tagprof_tag_swap(1); }\n";
static const char prog_get_dead[] =	/* even a call in dead code */
	"#include <tagprof/tagprof.h>\n"
	"int main(void) { if (0) return (int)tagprof_tag_get(); return 0; }\n";
static const char prog_none[] =	/* the header alone is fine */
	"#include <tagprof/tagprof.h>\n"
	"int main(void) { return tagprof_tag_name(\"op\", 1, \"x\") ? 0 : 1; }\n";

#define SWAP_MSG "tagprof_tag_swap needs the whole program built with -ffixed-" REG \
	" and -DTAGPROF_TAG_REG_RESERVED"
#define GET_MSG "tagprof_tag_get needs the whole program built with -ffixed-" REG \
	" and -DTAGPROF_TAG_REG_RESERVED"

static void test_compile_refused_gcc(void)
{
	static const char *const opts[] = { "-O0", "-O2" };
	char err[8192];

	for (int i = 0; i < 2; i++) {
		CHECK(compile(TEST_TAG_CC, opts[i], prog_swap, err, sizeof(err)) != 0);
		CHECK(strstr(err, SWAP_MSG));
		CHECK(compile(TEST_TAG_CC, opts[i], prog_get_dead, err, sizeof(err)) != 0);
		CHECK(strstr(err, GET_MSG));
		CHECK(compile(TEST_TAG_CC, opts[i], prog_none, err, sizeof(err)) == 0);
	}
	/* With the reservation it builds. */
	CHECK(compile(TEST_TAG_CC, "-O2 -ffixed-" REG " -DTAGPROF_TAG_REG_RESERVED",
		      prog_swap, err, sizeof(err)) == 0);
	/* Another register, by its bare name. */
#if defined(__x86_64__)
	CHECK(compile(TEST_TAG_CC, "-O2 -DTAGPROF_TAG_REG=r14", prog_swap, err, sizeof(err)) != 0);
	CHECK(strstr(err, "-ffixed-r14 and -DTAGPROF_TAG_REG_RESERVED"));
	CHECK(compile(TEST_TAG_CC, "-O2 -ffixed-r14 -DTAGPROF_TAG_REG=r14 -DTAGPROF_TAG_REG_RESERVED",
		      prog_swap, err, sizeof(err)) == 0);
#endif
}

static void test_compile_refused_clang(void)
{
	char err[8192];

	CHECK(compile(TEST_CLANG, "-O2", prog_swap, err, sizeof(err)) != 0);
	CHECK(strstr(err, SWAP_MSG));
	CHECK(compile(TEST_CLANG, "-O2", prog_get_dead, err, sizeof(err)) != 0);
	CHECK(strstr(err, GET_MSG));
	CHECK(compile(TEST_CLANG, "-O2", prog_none, err, sizeof(err)) == 0);
#if defined(__x86_64__)
	/* The reservation promised to clang, which cannot keep it. */
	CHECK(compile(TEST_CLANG, "-O2 -DTAGPROF_TAG_REG_RESERVED", prog_none, err,
		      sizeof(err)) != 0);
	CHECK(strstr(err, "clang cannot reserve x86-64 registers"));
#endif
}

int main(void)
{
	RUN(test_errors_undeclared);
	RUN(test_errors_declare);
	RUN(test_declare_limits);
	RUN(test_errors_name);
	RUN(test_ctx_contract);
	RUN(test_ctx_name_later);
	RUN(test_ctx_redeclare);
	RUN(test_ctx_with_labels);
	RUN(test_ctx_concurrent_names);
	RUN(test_ctx_enospc);
	RUN(test_swap_nested);
	RUN(test_swap_survives_calls);
	RUN(test_swap_per_thread);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tagprof-tags.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		SKIP(test_compile_refused_gcc, "no temporary directory");
	} else {
		if (have_cc(TEST_TAG_CC))
			RUN(test_compile_refused_gcc);
		else
			SKIP(test_compile_refused_gcc, TEST_TAG_CC " not found");
		if (have_cc(TEST_CLANG))
			RUN(test_compile_refused_clang);
		else
			SKIP(test_compile_refused_clang, TEST_CLANG " not found");
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd))
			fprintf(stderr, "  could not remove %s\n", tmpdir);
	}
	CHECK_EXIT();
}
