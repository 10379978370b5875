/* The bounded check of OTEL_CTX payloads (pbcheck) and the process-context
 * decoder behind it: hostile nesting and counts are refused without
 * recursion (checked on a 64 KiB stack), garbage is refused, and real
 * payloads, encoded here by protobuf-c's own packer, decode as before. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "otel_process_ctx.pb-c.h"
#include "proc/pbcheck.h"
#include "proc/procctx.h"
#include "../workloads/otel_ctx_writer.h"

#define CAP PROCCTX_MAX_PAYLOAD
#define SMALL_STACK (64 * 1024)

static uint8_t hostile_buf[CAP];

/* A hostile payload of kind ('a', 'k', 'n'), levels 0 = as many as fit. */
static const uint8_t *hostile(char kind, size_t levels, size_t *len,
			      size_t *made)
{
	*len = otel_ctx_hostile(hostile_buf, CAP, kind, levels, made);
	return hostile_buf + CAP - *len;
}

/* ---- legitimate payloads, packed by protobuf-c ---- */

static Tagprof__Otel__AnyValue *any_str(const char *s)
{
	Tagprof__Otel__AnyValue *v = calloc(1, sizeof(*v));

	tagprof__otel__any_value__init(v);
	v->value_case = TAGPROF__OTEL__ANY_VALUE__VALUE_STRING_VALUE;
	v->string_value = (char *)s;
	return v;
}

static Tagprof__Otel__AnyValue *any_list(char **items, size_t n)
{
	Tagprof__Otel__AnyValue *v = calloc(1, sizeof(*v));
	Tagprof__Otel__ArrayValue *a = calloc(1, sizeof(*a));

	tagprof__otel__any_value__init(v);
	tagprof__otel__array_value__init(a);
	a->n_values = n;
	a->values = calloc(n, sizeof(*a->values));
	for (size_t i = 0; i < n; i++)
		a->values[i] = any_str(items[i]);
	v->value_case = TAGPROF__OTEL__ANY_VALUE__VALUE_ARRAY_VALUE;
	v->array_value = a;
	return v;
}

static Tagprof__Otel__KeyValue *kv(const char *key, Tagprof__Otel__AnyValue *v)
{
	Tagprof__Otel__KeyValue *k = calloc(1, sizeof(*k));

	tagprof__otel__key_value__init(k);
	k->key = (char *)key;
	k->value = v;
	return k;
}

static void free_any(Tagprof__Otel__AnyValue *v)
{
	if (v && v->value_case == TAGPROF__OTEL__ANY_VALUE__VALUE_ARRAY_VALUE) {
		for (size_t i = 0; i < v->array_value->n_values; i++)
			free(v->array_value->values[i]);
		free(v->array_value->values);
		free(v->array_value);
	}
	free(v);
}

static void free_kvs(Tagprof__Otel__KeyValue **kvs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free_any(kvs[i]->value);
		free(kvs[i]);
	}
}

/* m packed into out, or 0 when it needs more than cap bytes. */
static size_t pack_capped(const ProtobufCMessage *m, uint8_t *out, size_t cap)
{
	size_t n = protobuf_c_message_get_packed_size(m);

	return n <= cap ? protobuf_c_message_pack(m, out) : 0;
}

static char *keys[] = { "query_id", "tenant" };
static char *fields[] = { "op:8", "stage:8" };
static char *names[4096];
static char names_buf[4096][8];

/* ProcessContext{resource{service.name, tagprof.res}, extra: schema
 * version, key map, tag register/fields/names (nnames of them), an int};
 * with_extra false: the resource alone. */
static size_t legit_form(uint8_t *out, size_t cap, bool with_extra,
			 size_t nnames, bool bare)
{
	Tagprof__Otel__ProcessContext pc = TAGPROF__OTEL__PROCESS_CONTEXT__INIT;
	Tagprof__Otel__Resource res = TAGPROF__OTEL__RESOURCE__INIT;
	Tagprof__Otel__KeyValue *ra[2], *ea[6];
	Tagprof__Otel__AnyValue *num = calloc(1, sizeof(*num));
	size_t n;

	for (size_t i = 0; i < nnames; i++) {
		snprintf(names_buf[i], sizeof(names_buf[i]), "op:%zu=", i % 256);
		names[i] = names_buf[i];
	}
	tagprof__otel__any_value__init(num);
	num->value_case = TAGPROF__OTEL__ANY_VALUE__VALUE_INT_VALUE;
	num->int_value = -42;
	ra[0] = kv("service.name", any_str("checkout"));
	ra[1] = kv("tagprof.res", any_str("r"));
	ea[0] = kv("threadlocal.schema_version", any_str("tlsdesc_v1_dev"));
	ea[1] = kv("threadlocal.attribute_key_map", any_list(keys, 2));
	ea[2] = kv("tagprof.tag.register", any_str("r15"));
	ea[3] = kv("tagprof.tag.fields", any_list(fields, 2));
	ea[4] = kv("tagprof.tag.names", any_list(names, nnames));
	ea[5] = kv("tagprof.num", num);
	res.n_attributes = 2;
	res.attributes = ra;
	pc.resource = &res;
	if (with_extra) {
		pc.n_extra_attributes = 6;
		pc.extra_attributes = ea;
	}
	if (bare) {	/* the same eight attributes in one Resource */
		Tagprof__Otel__KeyValue *all[8] = { ra[0], ra[1], ea[0], ea[1],
						    ea[2], ea[3], ea[4], ea[5] };

		res.n_attributes = 8;
		res.attributes = all;
		n = pack_capped(&res.base, out, cap);
	} else {
		n = pack_capped(&pc.base, out, cap);
	}
	free_kvs(ra, 2);
	free_kvs(ea, 6);
	return n;
}

static size_t legit(uint8_t *out, size_t cap, bool with_extra, size_t nnames)
{
	return legit_form(out, cap, with_extra, nnames, false);
}

/* The OTEP's first published form: a bare Resource with all eight
 * attributes. */
static size_t legit_resource(uint8_t *out, size_t cap, size_t nnames)
{
	return legit_form(out, cap, true, nnames, true);
}

/* ---- cases ---- */

/* The deepest chain of kind that fits in 64 KiB: refused, nothing read. */
static void chain_refused(char kind, size_t min_levels)
{
	struct procctx c = { 0 };
	size_t len, levels;
	const uint8_t *p = hostile(kind, 0, &len, &levels);

	CHECK(levels > min_levels && len <= CAP);
	CHECK(pbcheck__payload(p, len, PBCHECK_PROCESS_CONTEXT) == -ELOOP);
	CHECK(procctx__decode(p, len, &c) == -ELOOP);
	CHECK(!c.service_name && !c.nkeys && !c.nattrs);
}

static void test_array_chain_refused(void)
{
	chain_refused('a', 8800);
}

static void test_kvlist_chain_refused(void)
{
	chain_refused('k', 5800);
}

/* The bound is exact: 8 AnyValues deep pass (and protobuf-c decodes them),
 * 9 do not, by either chain. */
static void test_depth_bound(void)
{
	struct procctx c = { 0 };
	size_t len, levels;
	const uint8_t *p;

	for (int k = 0; k < 2; k++) {
		char kind = k ? 'k' : 'a';

		p = hostile(kind, PBCHECK_MAX_ANY_DEPTH - 1, &len, &levels);
		CHECK(pbcheck__payload(p, len, PBCHECK_PROCESS_CONTEXT) == 0);
		CHECK(procctx__decode(p, len, &c) == 0);
		procctx__clear(&c);
		p = hostile(kind, PBCHECK_MAX_ANY_DEPTH, &len, &levels);
		CHECK(pbcheck__payload(p, len, PBCHECK_PROCESS_CONTEXT) == -ELOOP);
		CHECK(procctx__decode(p, len, &c) == -ELOOP);
	}
}

static void test_count_refused(void)
{
	struct procctx c = { 0 };
	size_t len, levels;
	const uint8_t *p = hostile('n', 0, &len, &levels);

	CHECK(levels > 30000);
	CHECK(pbcheck__payload(p, len, PBCHECK_PROCESS_CONTEXT) == -E2BIG);
	CHECK(procctx__decode(p, len, &c) == -ELOOP);
	/* At the bound: the array's elements and 4 fields around them. */
	p = hostile('n', PBCHECK_MAX_FIELDS - 4, &len, &levels);
	CHECK(pbcheck__payload(p, len, PBCHECK_PROCESS_CONTEXT) == 0);
	p = hostile('n', PBCHECK_MAX_FIELDS - 3, &len, &levels);
	CHECK(pbcheck__payload(p, len, PBCHECK_PROCESS_CONTEXT) == -E2BIG);
}

/* Refused by the wire format, each for one reason. */
static void test_garbage_refused(void)
{
	static const struct {
		const char *bytes;
		size_t len;
	} bad[] = {
		{ "\x0b", 1 },			/* group start */
		{ "\x0c", 1 },			/* group end */
		{ "\x0e\x00", 2 },		/* wire type 6 */
		{ "\x02\x00", 2 },		/* field 0 */
		{ "\x12\x05\x0a\x01x", 5 },	/* length past the end */
		{ "\x12\x03\x12\x05\x0a", 5 },	/* inner length past its message */
		{ "\x18\x80\x80", 3 },		/* varint cut */
		{ "\x18\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12 }, /* 11 bytes */
		{ "\x1d\x00\x00", 3 },		/* fixed32 cut */
		{ "\x19\x00\x00\x00\x00", 5 },	/* fixed64 cut */
		{ "\x10\x01\x12\x00", 4 },	/* field 2 a varint and a KeyValue */
		{ "\x12\x02\x15\x00", 4 },	/* KeyValue.value as fixed32 */
	};
	uint8_t good[512], cut[512];
	size_t n = legit(good, sizeof(good), true, 3);
	struct procctx c = { 0 };
	int r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (pbcheck__payload((const uint8_t *)bad[i].bytes, bad[i].len,
				     PBCHECK_PROCESS_CONTEXT) != -EBADMSG)
			fprintf(stderr, "  garbage case %zu accepted\n", i);
		CHECK(pbcheck__payload((const uint8_t *)bad[i].bytes, bad[i].len,
				       PBCHECK_PROCESS_CONTEXT) == -EBADMSG);
		CHECK(procctx__decode((const uint8_t *)bad[i].bytes, bad[i].len,
				      &c) == -EBADMSG);
	}
	/* Every truncation: a cut inside a message is refused; what passes
	 * protobuf-c also passes the check (nothing valid is refused). */
	CHECK(n > 0);
	for (size_t i = 1; i < n; i++) {
		Tagprof__Otel__ProcessContext *pc;

		memcpy(cut, good, i);
		r = pbcheck__payload(cut, i, PBCHECK_PROCESS_CONTEXT);
		pc = tagprof__otel__process_context__unpack(NULL, i, cut);
		CHECK(r == 0 || r == -EBADMSG);
		CHECK(!pc || r == 0);
		if (pc)
			tagprof__otel__process_context__free_unpacked(pc, NULL);
		else
			CHECK(procctx__decode(cut, i, &c) == -EBADMSG);
	}
	CHECK(pbcheck__payload(good, 2, PBCHECK_PROCESS_CONTEXT) == -EBADMSG);
}

/* Random bytes never crash the check, and what protobuf-c accepts, the
 * check accepts. */
static void test_random_bytes(void)
{
	uint8_t buf[256];
	unsigned seed = 12345;
	int refused = 0;

	for (int iter = 0; iter < 20000; iter++) {
		Tagprof__Otel__ProcessContext *pc;
		size_t n = 1 + rand_r(&seed) % sizeof(buf);
		int r;

		for (size_t i = 0; i < n; i++)
			buf[i] = rand_r(&seed);
		r = pbcheck__payload(buf, n, PBCHECK_PROCESS_CONTEXT);
		CHECK(r == 0 || r == -EBADMSG);
		pc = tagprof__otel__process_context__unpack(NULL, n, buf);
		CHECK(!pc || r == 0);
		tagprof__otel__process_context__free_unpacked(pc, NULL);
		refused += r != 0;
	}
	CHECK(refused > 0);
}

static void expect_decoded(const struct procctx *c, bool with_extra)
{
	const struct procctx_attr *a;

	CHECK(c->service_name && !strcmp(c->service_name, "checkout"));
	CHECK((a = procctx__attr(c, "tagprof.res")) && a->str &&
	      !strcmp(a->str, "r"));
	if (!with_extra) {
		CHECK(!c->nkeys && !c->schema_version && c->nattrs == 1);
		return;
	}
	CHECK(c->schema_version && !strcmp(c->schema_version, "tlsdesc_v1_dev"));
	CHECK(c->nkeys == 2 && !strcmp(c->keys[0], "query_id") &&
	      !strcmp(c->keys[1], "tenant"));
	CHECK((a = procctx__attr(c, "tagprof.tag.register")) && a->str &&
	      !strcmp(a->str, "r15"));
	CHECK((a = procctx__attr(c, "tagprof.tag.fields")) && a->nlist == 2 &&
	      !strcmp(a->list[1], "stage:8"));
	CHECK((a = procctx__attr(c, "tagprof.tag.names")) && a->nlist == 4096 &&
	      !strcmp(a->list[4095], "op:255="));
	CHECK((a = procctx__attr(c, "tagprof.num")) && !a->str && a->num == -42);
}

/* The full ProcessContext with 4096 tag names (tagprof's largest list),
 * one with the resource alone, and that resource bare. */
static void test_legit_decoded(void)
{
	static uint8_t buf[CAP];
	struct procctx c = { 0 };
	size_t n;

	n = legit(buf, sizeof(buf), true, 4096);
	CHECK(n > 0);
	CHECK(pbcheck__payload(buf, n, PBCHECK_PROCESS_CONTEXT) == 0);
	CHECK(procctx__decode(buf, n, &c) == 0);
	expect_decoded(&c, true);
	procctx__clear(&c);

	n = legit(buf, sizeof(buf), false, 0);
	CHECK(procctx__decode(buf, n, &c) == 0);
	expect_decoded(&c, false);
	procctx__clear(&c);

	/* ProcessContext{resource = 1{...}}: its field 1 is a bare Resource,
	 * read as one */
	CHECK(buf[0] == 0x0a && buf[1] + 2u == n);
	CHECK(procctx__decode(buf + 2, n - 2, &c) == 0);
	expect_decoded(&c, false);
	procctx__clear(&c);
}

/* Which form a payload is, by wire types where the two schemas differ. */
static void test_form_told_apart(void)
{
	static uint8_t buf[CAP];
	struct procctx c = { 0 };
	enum pbcheck_msg form;
	size_t n;

	/* the first published form, all in one Resource: decoded alike */
	n = legit_resource(buf, sizeof(buf), 4096);
	CHECK(n > 0);
	CHECK(pbcheck__form(buf, n, &form) == 0 && form == PBCHECK_RESOURCE);
	CHECK(procctx__decode(buf, n, &c) == 0);
	expect_decoded(&c, true);
	procctx__clear(&c);
	/* opentelemetry-proto's form, with and without extra attributes */
	n = legit(buf, sizeof(buf), true, 3);
	CHECK(pbcheck__form(buf, n, &form) == 0 &&
	      form == PBCHECK_PROCESS_CONTEXT);
	n = legit(buf, sizeof(buf), false, 0);
	CHECK(pbcheck__form(buf, n, &form) == 0 &&
	      form == PBCHECK_PROCESS_CONTEXT);
	/* each vote alone */
	CHECK(pbcheck__form((const uint8_t *)"\x10\x01", 2, &form) == 0 &&
	      form == PBCHECK_RESOURCE);		/* dropped count */
	CHECK(pbcheck__form((const uint8_t *)"\x12\x00", 2, &form) == 0 &&
	      form == PBCHECK_PROCESS_CONTEXT);	/* an extra attribute */
	CHECK(pbcheck__form((const uint8_t *)"\x0a\x02\x12\x00", 4, &form) == 0 &&
	      form == PBCHECK_RESOURCE);		/* a KeyValue's value */
	CHECK(pbcheck__form((const uint8_t *)"\x0a\x02\x10\x07", 4, &form) == 0 &&
	      form == PBCHECK_PROCESS_CONTEXT);	/* the Resource's count */
	/* both at once: neither form */
	CHECK(pbcheck__form((const uint8_t *)"\x0a\x02\x12\x00\x12\x00", 6,
			    &form) == -EBADMSG);
	CHECK(procctx__decode((const uint8_t *)"\x0a\x02\x12\x00\x12\x00", 6,
			      &c) == -EBADMSG);
	CHECK(pbcheck__form((const uint8_t *)"\x0a\x04\x10\x01\x12\x00", 6,
			    &form) == -EBADMSG);
	/* a malformed field 1 is malformed whatever the form */
	CHECK(pbcheck__form((const uint8_t *)"\x0a\x02\x12\x05", 4, &form) ==
	      -EBADMSG);
}

/* ---- a 64 KiB stack: the check recurses nowhere ---- */

static void *small_stack_job(void *arg)
{
	static uint8_t ok[CAP];
	struct procctx c = { 0 };
	size_t len, levels, n;
	const uint8_t *p;
	long fails = 0;

	(void)arg;
	p = hostile('a', 0, &len, &levels);
	fails += procctx__decode(p, len, &c) != -ELOOP;
	p = hostile('k', 0, &len, &levels);
	fails += procctx__decode(p, len, &c) != -ELOOP;
	p = hostile('n', 0, &len, &levels);
	fails += procctx__decode(p, len, &c) != -ELOOP;
	/* the deepest accepted payload, decoded by protobuf-c here too */
	p = hostile('k', PBCHECK_MAX_ANY_DEPTH - 1, &len, &levels);
	fails += procctx__decode(p, len, &c) != 0;
	procctx__clear(&c);
	n = legit(ok, sizeof(ok), true, 4096);
	fails += procctx__decode(ok, n, &c) != 0 || c.nkeys != 2;
	procctx__clear(&c);
	return (void *)fails;
}

static void test_small_stack(void)
{
	pthread_attr_t attr;
	pthread_t th;
	void *fails = (void *)-1;

	CHECK(pthread_attr_init(&attr) == 0);
	CHECK(pthread_attr_setstacksize(&attr, SMALL_STACK) == 0);
	CHECK(pthread_create(&th, &attr, small_stack_job, NULL) == 0);
	CHECK(pthread_join(th, &fails) == 0);
	pthread_attr_destroy(&attr);
	CHECK(fails == NULL);
}

/* ---- the reader: a refused payload is reported once ---- */

static void test_reader_refuses_once(void)
{
	static uint8_t ok[CAP];
	struct procctx c = { 0 };
	size_t len, levels, n;
	const uint8_t *p = hostile('a', 0, &len, &levels);
	uint8_t *m = otel_ctx_map(p, len);
	uint64_t addr;

	CHECK(m);
	CHECK(procctx__read(getpid(), &c) == -ELOOP);
	addr = c.header_addr;
	CHECK(addr == (uintptr_t)m && c.refused_at == *(uint64_t *)(m + 16));
	CHECK(procctx__read(getpid(), &c) == 1);	/* not again */
	CHECK(!c.service_name && c.header_addr == addr);
	/* The process publishes a real context: read at once. */
	n = legit(ok, sizeof(ok), true, 4096);
	*(uint64_t *)(m + 16) = 0;
	*(uint32_t *)(m + 12) = n;
	*(uint64_t *)(m + 24) = (uintptr_t)ok;
	*(uint64_t *)(m + 16) = c.refused_at + 1;
	CHECK(procctx__read(getpid(), &c) == 0);
	expect_decoded(&c, true);
	procctx__clear(&c);
	munmap(m, 4096);
}

/* n random fields of field numbers 1-3, wire type VARINT or LEN; a LEN
 * field holds random fields one level down (depth 1) or random bytes. */
static size_t random_fields(uint8_t *p, size_t cap, unsigned *seed, int n,
			    int depth)
{
	size_t o = 0, len;

	for (int i = 0; i < n && o + 2 < cap; i++) {
		unsigned field = 1 + rand_r(seed) % 3;
		bool is_len = rand_r(seed) % 2;

		p[o++] = field << 3 | (is_len ? 2 : 0);
		if (!is_len) {
			p[o++] = rand_r(seed) % 128;
			continue;
		}
		if (depth) {
			len = random_fields(p + o + 1, cap - o - 1, seed,
					    rand_r(seed) % 4, 0);
		} else {
			len = rand_r(seed) % 6;
			if (len > cap - o - 1)
				len = cap - o - 1;
			for (size_t j = 0; j < len; j++)
				p[o + 1 + j] = rand_r(seed);
		}
		p[o++] = len;
		o += len;
	}
	return o;
}

/* Random two-level payloads: the form check never crashes, gives one of
 * its three answers, finds both forms and conflicts among them, and what
 * it calls a form decodes or is refused, nothing else. */
static void test_form_random_fields(void)
{
	uint8_t buf[120];
	unsigned seed = 54321;
	enum pbcheck_msg form;
	struct procctx c = { 0 };
	int r, seen[3] = { 0, 0, 0 };

	for (int iter = 0; iter < 20000; iter++) {
		size_t n = random_fields(buf, sizeof(buf), &seed,
					 1 + rand_r(&seed) % 4, 1);

		r = pbcheck__form(buf, n, &form);
		CHECK(r == 0 || r == -EBADMSG);
		seen[r ? 2 : form == PBCHECK_RESOURCE]++;
		r = procctx__decode(buf, n, &c);
		CHECK(r == 0 || r == -EBADMSG || r == -ELOOP);
		procctx__clear(&c);
	}
	CHECK(seen[0] > 0 && seen[1] > 0 && seen[2] > 0);
}

int main(void)
{
	RUN(test_array_chain_refused);
	RUN(test_kvlist_chain_refused);
	RUN(test_depth_bound);
	RUN(test_count_refused);
	RUN(test_garbage_refused);
	RUN(test_random_bytes);
	RUN(test_legit_decoded);
	RUN(test_form_told_apart);
	RUN(test_form_random_fields);
	RUN(test_small_stack);
	RUN(test_reader_refuses_once);
	CHECK_EXIT();
}
