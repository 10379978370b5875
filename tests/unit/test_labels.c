/* Label decoding on its own, without a process: snapshots built from
 * process-context payloads the test encodes (otel_ctx_writer.h, decoded by
 * procctx__decode as the agent decodes what it reads), and context blobs
 * the test lays out as OTEP 4947 records and custom-labels v1 sets. Checks
 * the labels, the names a snapshot lacks (reported, never read), naming
 * collisions, invalid UTF-8 and truncated blobs. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "capture/labels.h"
#include "proc/codemap.h"
#include "out/pprof.h"
#include "proc/ctxsnap.h"
#include "sample_event.h"
#include "../workloads/otel_ctx_writer.h"

#if defined(__x86_64__)
#define TAG_REG "r15"
#elif defined(__aarch64__)
#define TAG_REG "x28"
#else
#define TAG_REG NULL
#endif

struct tagspec {
	const char *const *fields, *const *names;
	size_t nfields, nnames;
};

/* A snapshot of a process that published keys (and tags, if given), as
 * the agent holds it after reading the payload. */
static int make_snap(struct ctxsnap *s, const char *const *keys, size_t nkeys,
		     const struct tagspec *tags)
{
	static uint8_t buf[4096];
	uint8_t any[300];
	size_t n = otel_ctx_encode(buf, "svc", keys, nkeys);

	if (tags) {
		n += pb_kv(buf + n, 2, "tagprof.tag.register", any,
			   pb_anystr(any, TAG_REG));
		n = otel_ctx_add_strings(buf, n, "tagprof.tag.fields", tags->fields,
			     tags->nfields);
		n = otel_ctx_add_strings(buf, n, "tagprof.tag.names", tags->names,
			     tags->nnames);
	}
	memset(s, 0, sizeof(*s));
	if (procctx__decode(buf, n, &s->ctx))
		return -1;
	return tagdecl__load(&s->tags, &s->ctx);
}

/* An OTEP 4947 record: trace and span ids (NULL: zero), then the entries
 * [key index][length][value]; attrs_data_size says attrs bytes (-1: what
 * was written). Returns the blob's size. */
struct entry {
	uint8_t idx;
	const char *val;
};

static size_t otel_record(uint8_t *blob, const uint8_t *trace,
			  const uint8_t *span, const struct entry *e, size_t ne,
			  int attrs)
{
	size_t pos = TP_OTEL_HDR_SIZE, len;

	memset(blob, 0, TP_OTEL_HDR_SIZE);
	if (trace)
		memcpy(blob, trace, 16);
	if (span)
		memcpy(blob + 16, span, 8);
	blob[24] = 1;				/* valid */
	for (size_t i = 0; i < ne; i++) {
		len = strlen(e[i].val);
		blob[pos] = e[i].idx;
		blob[pos + 1] = (uint8_t)len;
		memcpy(blob + pos + 2, e[i].val, len);
		pos += 2 + len;
	}
	if (attrs < 0)
		attrs = pos - TP_OTEL_HDR_SIZE;
	blob[26] = attrs & 0xff;		/* attrs_data_size, LE */
	blob[27] = attrs >> 8;
	return pos;
}

/* A custom-labels v1 set: one slot per label, [klen][key][vlen][value]. */
static size_t custom_slot(uint8_t *blob, size_t off, const char *key,
			  const char *val)
{
	uint8_t *slot = blob + off;

	memset(slot, 0, TP_CL_SLOT);
	slot[0] = key ? strlen(key) : TP_CL_EMPTY;
	if (key)
		memcpy(slot + 1, key, strlen(key));
	slot[1 + TP_CL_KEY_MAX] = strlen(val);
	memcpy(slot + 2 + TP_CL_KEY_MAX, val, strlen(val));
	return off + TP_CL_SLOT;
}

struct result {
	struct pprof_label l[16];
	char strs[1024];
	size_t n;
	struct labels_stats st;
	enum ctxsnap_miss miss;
};

static void decode(const struct ctxsnap *snap, const struct labels_sample *s,
		   struct result *r)
{
	memset(r, 0, sizeof(*r));
	r->n = labels__decode(snap, s, &(struct labels_buf){
		r->l, 16, r->strs, sizeof(r->strs) }, &r->st, &r->miss);
}

/* The string value of key, or NULL. */
static const char *str(const struct result *r, const char *key)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->l[i].str && !strcmp(r->l[i].key, key))
			return r->l[i].str;
	return NULL;
}

static bool is(const struct result *r, const char *key, const char *want)
{
	const char *v = str(r, key);

	if (v && !strcmp(v, want))
		return true;
	fprintf(stderr, "  %s = %s, want %s\n", key, v ? v : "(none)", want);
	return false;
}

static const char *const keys3[] = { "tenant", "query_id", "pid" };

/* Decodes an OTEP 4947 record of entries e (trace and span ids: NULL for
 * zero) against the snapshot of a process that published keys. */
static int decode_record(const char *const *keys, size_t nkeys,
			 const uint8_t *trace, const uint8_t *span,
			 const struct entry *e, size_t ne, struct result *r)
{
	uint8_t blob[TP_CTX_SPACE];
	struct ctxsnap snap;

	if (make_snap(&snap, keys, nkeys, NULL))
		return -1;
	decode(&snap, &(struct labels_sample){ .kind = TP_CTX_OTEL, .blob = blob,
		.size = otel_record(blob, trace, span, e, ne, -1) }, r);
	ctxsnap__clear(&snap);
	return 0;
}

static void test_otel_record(void)
{
	static const uint8_t trace[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
					   11, 12, 13, 14, 15 };
	static const uint8_t span[8] = { 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5,
					 0xa6, 0xa7 };
	const struct entry e[] = { { 1, "q1" }, { 0, "acme" }, { 1, "q2" } };
	struct result r;

	CHECK(!decode_record(keys3, 3, trace, span, e, 3, &r));
	CHECK(r.n == 4 && r.miss == CTXSNAP_MISS_NONE);
	CHECK(is(&r, "trace_id", "000102030405060708090a0b0c0d0e0f"));
	CHECK(is(&r, "span_id", "a0a1a2a3a4a5a6a7"));
	CHECK(is(&r, "tenant", "acme"));
	CHECK(is(&r, "query_id", "q2"));	/* the last entry of a key wins */
	CHECK(!r.st.unknown_key && !r.st.truncated && !r.st.bad_utf8);
}

/* A key index past the snapshot's key map: reported as a miss (the caller
 * has the context read again), counted unknown; the other keys decode. */
static void test_otel_unknown_key(void)
{
	const struct entry e[] = { { 0, "acme" }, { 7, "x" }, { 9, "y" } };
	struct result r;

	CHECK(!decode_record(keys3, 1, NULL, NULL, e, 3, &r));
	CHECK(r.miss == CTXSNAP_MISS_KEY);
	CHECK(r.st.unknown_key == 2);
	CHECK(r.n == 1 && is(&r, "tenant", "acme"));
	CHECK(!str(&r, "trace_id") && !str(&r, "span_id"));	/* zero ids */
}

/* A process whose context names another thread-context layout: its
 * records are not read as OTEP 4947's. */
static void test_otel_other_schema(void)
{
	const struct entry e[] = { { 0, "acme" } };
	const char *saved = otel_ctx_schema;
	struct result r;
	int ret;

	otel_ctx_schema = "go_pprof_labels_v1";
	ret = decode_record(keys3, 1, NULL, NULL, e, 1, &r);
	otel_ctx_schema = saved;
	CHECK(!ret && r.n == 0 && r.miss == CTXSNAP_MISS_NONE);
}

/* No snapshot (the process is not watched): OTEP records need the key
 * map and are left out; custom labels carry their keys and decode. */
static void test_no_snapshot(void)
{
	const struct entry e[] = { { 0, "acme" } };
	uint8_t blob[TP_CTX_SPACE];
	struct result r;

	decode(NULL, &(struct labels_sample){ .kind = TP_CTX_OTEL, .blob = blob,
		.size = otel_record(blob, NULL, NULL, e, 1, -1),
		.tag_valid = true, .tag = 5 }, &r);
	CHECK(r.n == 0 && r.miss == CTXSNAP_MISS_NONE);
	decode(NULL, &(struct labels_sample){ .kind = TP_CTX_CUSTOM,
		.blob = blob, .size = custom_slot(blob, 0, "job", "alpha") },
		&r);
	CHECK(r.n == 1 && is(&r, "job", "alpha"));
}

/* Blobs that end inside an attribute: counted once each, what came
 * before kept. */
static void test_truncated(void)
{
	const struct entry e[] = { { 0, "acme" }, { 1, "q1" } };
	struct ctxsnap snap;
	uint8_t blob[TP_CTX_SPACE];
	struct result r;
	size_t n;

	CHECK(!make_snap(&snap, keys3, 3, NULL));
	/* shorter than the record header */
	decode(&snap, &(struct labels_sample){ .kind = TP_CTX_OTEL,
		.blob = blob, .size = TP_OTEL_HDR_SIZE - 1 }, &r);
	CHECK(r.n == 0 && r.st.truncated == 1);
	/* attrs_data_size ends inside the second entry */
	n = otel_record(blob, NULL, NULL, e, 2, 2 + 4 + 2 + 1);
	decode(&snap, &(struct labels_sample){ .kind = TP_CTX_OTEL,
		.blob = blob, .size = n }, &r);
	CHECK(r.st.truncated == 1 && r.n == 1 && is(&r, "tenant", "acme"));
	/* the blob ends inside the second entry */
	n = otel_record(blob, NULL, NULL, e, 2, -1);
	decode(&snap, &(struct labels_sample){ .kind = TP_CTX_OTEL,
		.blob = blob, .size = n - 1 }, &r);
	ctxsnap__clear(&snap);
	CHECK(r.st.truncated == 1 && r.n == 1 && is(&r, "tenant", "acme"));
	/* a custom-labels set cut inside its second slot */
	n = custom_slot(blob, 0, "job", "alpha");
	n = custom_slot(blob, n, "via", "beta");
	decode(NULL, &(struct labels_sample){ .kind = TP_CTX_CUSTOM,
		.blob = blob, .size = n - 1 }, &r);
	CHECK(r.st.truncated == 1 && r.n == 1 && is(&r, "job", "alpha"));
	/* a slot whose key length is over the bound: skipped, counted */
	n = custom_slot(blob, 0, "job", "alpha");
	blob[0] = TP_CL_KEY_MAX + 1;
	n = custom_slot(blob, n, "via", "beta");
	decode(NULL, &(struct labels_sample){ .kind = TP_CTX_CUSTOM,
		.blob = blob, .size = n }, &r);
	CHECK(r.st.truncated == 1 && r.n == 1 && is(&r, "via", "beta"));
}

/* Invalid UTF-8 in keys and values is replaced, and counted. */
static void test_bad_utf8(void)
{
	const char *const keys[] = { "k\xff" };
	const struct entry e[] = { { 0, "ok\xc3" } };
	struct result r;

	CHECK(!decode_record(keys, 1, NULL, NULL, e, 1, &r));
	CHECK(r.n == 1 && r.st.bad_utf8 == 2);
	CHECK(is(&r, "k\xef\xbf\xbd", "ok\xef\xbf\xbd"));
}

/* custom-labels: the first of duplicate keys wins, empty slots are
 * skipped; a key equal to one of tagprof's own is "label:<key>". */
static void test_custom_set(void)
{
	uint8_t blob[TP_CTX_SPACE];
	struct result r;
	size_t n = 0;

	n = custom_slot(blob, n, "job", "alpha");
	n = custom_slot(blob, n, NULL, "");
	n = custom_slot(blob, n, "job", "beta");
	n = custom_slot(blob, n, "tid", "t1");
	decode(NULL, &(struct labels_sample){ .kind = TP_CTX_CUSTOM,
		.blob = blob, .size = n }, &r);
	CHECK(r.n == 2 && is(&r, "job", "alpha") && is(&r, "label:tid", "t1"));
	CHECK(!str(&r, "tid"));
}

static const char *const fields[] = { "operator:8", "tenant:8", "cpu:8" };
static const char *const names[] = { "operator:1=scan", "operator:2=join",
				     "cpu:0=idle" };
static const struct tagspec tagspec = { fields, names, 3, 3 };

/* Tag fields: named from the dictionary, else their decimal value (a miss,
 * counted unnamed); a zero field only when 0 has a name; the raw tag as
 * "tag". A field named like a thread-label key or one of tagprof's own
 * labels is "tag:<field>", and an application key equal to one of
 * tagprof's own is "label:<key>": no name hides another. */
static void test_tag_names(void)
{
	struct ctxsnap snap;
	const struct entry e[] = { { 2, "1234" }, { 0, "acme" } };
	uint8_t blob[TP_CTX_SPACE];
	struct result r;

	CHECK(!make_snap(&snap, keys3, 3, &tagspec));
	CHECK(snap.tags.reg && snap.tags.nfields == 3);
	/* operator 2 (join), tenant 0 (not set, no name), cpu 0 (idle) */
	decode(&snap, &(struct labels_sample){ .kind = TP_CTX_OTEL, .blob = blob,
		.size = otel_record(blob, NULL, NULL, e, 2, -1),
		.tag_valid = true, .tag = 2 }, &r);
	CHECK(r.miss == CTXSNAP_MISS_NONE && !r.st.tag_unnamed);
	CHECK(is(&r, "tenant", "acme") && is(&r, "label:pid", "1234"));
	CHECK(is(&r, "operator", "join") && is(&r, "tag:cpu", "idle"));
	CHECK(!str(&r, "tag:tenant") && !str(&r, "cpu"));
	CHECK(r.n == 5 && !strcmp(r.l[4].key, "tag") && r.l[4].num == 2);
	/* operator 3 and tenant 5: no names yet */
	decode(&snap, &(struct labels_sample){ .kind = TP_CTX_NONE,
		.tag_valid = true, .tag = 3 | 5 << 8 }, &r);
	CHECK(r.miss == CTXSNAP_MISS_TAG && r.st.tag_unnamed == 2);
	CHECK(is(&r, "operator", "3") && is(&r, "tag:tenant", "5"));
	/* an unknown key is the miss reported, before an unnamed value */
	decode(&snap, &(struct labels_sample){ .kind = TP_CTX_OTEL, .blob = blob,
		.size = otel_record(blob, NULL, NULL,
				    &(struct entry){ 9, "x" }, 1, -1),
		.tag_valid = true, .tag = 3 }, &r);
	CHECK(r.miss == CTXSNAP_MISS_KEY);
	CHECK(r.st.unknown_key == 1 && r.st.tag_unnamed == 1);
	/* a tag of 0 is no tag */
	decode(&snap, &(struct labels_sample){ .kind = TP_CTX_NONE,
		.tag_valid = true, .tag = 0 }, &r);
	ctxsnap__clear(&snap);
	CHECK(r.n == 0);
}

/* A code region's levels: labels named after their keys, "code:<key>"
 * when tagprof or the thread labels use the key. A tag field with a
 * level's key names the same level: one label when they agree; when they
 * do not, counted, and the region wins where its own code ran (leaf), the
 * tag in the code it called. */
static void test_code_levels(void)
{
	static const char *const keys[] = { "tenant", "query" };
	const struct code_levels lv = { 3, { "pipeline", "operator", "query" },
					{ "2", "join", "q17" } };
	const struct code_levels mismatch = { 2, { "operator", "pid" },
					      { "scan", "x" } };
	const struct entry e[] = { { 1, "q9" } };
	uint8_t blob[TP_CTX_SPACE];
	struct ctxsnap snap;
	struct result r;

	CHECK(!make_snap(&snap, keys, 2, &tagspec));
	/* operator tag 2 (join) agrees with the region */
	decode(&snap, &(struct labels_sample){ .kind = TP_CTX_OTEL, .blob = blob,
		.size = otel_record(blob, NULL, NULL, e, 1, -1),
		.tag_valid = true, .tag = 2, .code = &lv }, &r);
	CHECK(is(&r, "query", "q9") && is(&r, "code:query", "q17"));
	CHECK(is(&r, "pipeline", "2") && is(&r, "operator", "join"));
	CHECK(!str(&r, "tag:operator") && !str(&r, "code:operator"));
	CHECK(r.st.code_tag_mismatch == 0);
	/* tag says join, region says scan: in the region's code ... */
	decode(&snap, &(struct labels_sample){ .kind = TP_CTX_NONE,
		.tag_valid = true, .tag = 2, .code = &mismatch,
		.code_leaf = true }, &r);
	CHECK(r.st.code_tag_mismatch == 1);
	CHECK(is(&r, "operator", "scan") && is(&r, "tag:operator", "join"));
	CHECK(is(&r, "code:pid", "x") && !str(&r, "code:operator"));
	/* ... and in code it called */
	decode(&snap, &(struct labels_sample){ .kind = TP_CTX_NONE,
		.tag_valid = true, .tag = 2, .code = &mismatch }, &r);
	CHECK(r.st.code_tag_mismatch == 1);
	CHECK(is(&r, "operator", "join") && is(&r, "code:operator", "scan"));
	/* no snapshot (nothing known of the process): levels all the same */
	decode(NULL, &(struct labels_sample){ .kind = TP_CTX_NONE, .code = &lv }, &r);
	CHECK(r.n == 3 && is(&r, "query", "q17"));
	ctxsnap__clear(&snap);
}

/* The buffers' bounds: no more labels than room for, no string past the
 * string buffer, and a label whose strings do not fit is left out. */
static void test_bounds(void)
{
	const struct entry e[] = { { 0, "acme" }, { 1, "q1" }, { 2, "7" } };
	struct pprof_label l[3];
	struct labels_stats st = { 0 };
	enum ctxsnap_miss miss;
	struct ctxsnap snap;
	uint8_t blob[TP_CTX_SPACE];
	char strs[16], big[256];
	size_t n;

	CHECK(!make_snap(&snap, keys3, 3, NULL));
	memset(strs, '#', sizeof(strs));
	memset(l, 0, sizeof(l));
	n = labels__decode(&snap, &(struct labels_sample){
		.kind = TP_CTX_OTEL, .blob = blob,
		.size = otel_record(blob, NULL, NULL, e, 3, -1) },
		&(struct labels_buf){ l, 2, strs, 12 }, &st, &miss);
	CHECK(n == 1 && !strcmp(l[0].key, "tenant") &&
	      !strcmp(l[0].str, "acme"));
	CHECK(!memcmp(strs + 12, "####", 4));
	n = labels__decode(&snap, &(struct labels_sample){
		.kind = TP_CTX_OTEL, .blob = blob,
		.size = otel_record(blob, NULL, NULL, e, 3, -1) },
		&(struct labels_buf){ l, 2, big, sizeof(big) }, &st, &miss);
	ctxsnap__clear(&snap);
	CHECK(n == 2 && !l[2].key);
}

int main(void)
{
	RUN(test_otel_record);
	RUN(test_otel_unknown_key);
	RUN(test_otel_other_schema);
	RUN(test_no_snapshot);
	RUN(test_truncated);
	RUN(test_bad_utf8);
	RUN(test_custom_set);
	if (TAG_REG)
		RUN(test_tag_names);
	else
		SKIP(test_tag_names, "no tag register on this architecture");
	if (TAG_REG)
		RUN(test_code_levels);
	else
		SKIP(test_code_levels, "no tag register on this architecture");
	RUN(test_bounds);
	CHECK_EXIT();
}
