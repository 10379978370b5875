/* A minimal, independent OTEP 4719 process-context writer for test
 * programs that must not use libtagprof: publishes service.name and the
 * thread-context key map, with protobuf hand-encoded from the OTLP field
 * numbers. Header-only; each test program includes it once. */
#ifndef OTEL_CTX_WRITER_H
#define OTEL_CTX_WRITER_H


#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

static inline size_t pb_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	do {
		p[n++] = (v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	return n;
}

/* field (wire type 2) with the given bytes */
static inline size_t pb_bytes(uint8_t *p, unsigned field, const void *b, size_t n)
{
	size_t o = pb_varint(p, (field << 3) | 2);

	o += pb_varint(p + o, n);
	memcpy(p + o, b, n);
	return o + n;
}

/* AnyValue{string_value} */
static inline size_t pb_anystr(uint8_t *p, const char *s)
{
	return pb_bytes(p, 1, s, strlen(s));
}

/* field { KeyValue{key, value = AnyValue{...}} } with an encoded AnyValue */
static inline size_t pb_kv(uint8_t *p, unsigned field, const char *k,
		    const uint8_t *any, size_t anylen)
{
	uint8_t tmp[4096];
	size_t n = pb_bytes(tmp, 1, k, strlen(k));

	n += pb_bytes(tmp + n, 2, any, anylen);
	return pb_bytes(p, field, tmp, n);
}

static uint8_t otel_payload[4096];

/* Publishes payload as the OTEP 4719 header of a memfd mapping named
 * OTEL_CTX, the signature written last. Returns the mapping (where
 * published_at is at +16 and the payload pointer at +24), or NULL. */
static inline uint8_t *otel_ctx_map(const void *payload, size_t n)
{
	struct timespec ts;
	uint8_t *m;
	int fd;

	fd = memfd_create("OTEL_CTX", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 4096))
		return NULL;
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return NULL;
	*(uint32_t *)(m + 8) = 2;
	*(uint32_t *)(m + 12) = n;
	*(uint64_t *)(m + 24) = (uint64_t)(uintptr_t)payload;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	*(uint64_t *)(m + 16) = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	atomic_thread_fence(memory_order_seq_cst);
	memcpy(m, "OTEL_CTX", 8);
	prctl(0x53564d41, 0, (unsigned long)m, 4096, "OTEL_CTX");
	return m;
}

/* The thread-context layout the process context names. */
static const char *otel_ctx_schema = "tlsdesc_v1_dev";

/* extra_attributes = 2 {key: array_value of strings} appended at buf + n;
 * returns the new size. */
static inline size_t otel_ctx_add_strings(uint8_t *buf, size_t n, const char *key,
					  const char *const *items, size_t nitems)
{
	uint8_t any[2048], arr[2048], v[300];
	size_t an = 0;

	for (size_t i = 0; i < nitems; i++)
		an += pb_bytes(arr + an, 1, v, pb_anystr(v, items[i]));
	return n + pb_kv(buf + n, 2, key, any, pb_bytes(any, 5, arr, an));
}

/* Encodes ProcessContext{resource = 1 {attributes = 1: service.name},
 * extra_attributes = 2: schema version and the key map} into buf (4096
 * bytes); returns its size. */
static inline size_t otel_ctx_encode(uint8_t *buf, const char *service,
				     const char *const *keys, size_t nkeys)
{
	uint8_t any[2048], res[512];
	size_t n = 0, rn;

	rn = pb_kv(res, 1, "service.name", any, pb_anystr(any, service));
	n += pb_bytes(buf + n, 1, res, rn);
	n += pb_kv(buf + n, 2, "threadlocal.schema_version", any,
		   pb_anystr(any, otel_ctx_schema));
	return otel_ctx_add_strings(buf, n, "threadlocal.attribute_key_map",
				    keys, nkeys);
}

/* Publishes that ProcessContext in a new OTEL_CTX mapping. */
static inline int otel_ctx_publish(const char *service, const char *const *keys,
			    size_t nkeys)
{
	size_t n = otel_ctx_encode(otel_payload, service, keys, nkeys);

	return otel_ctx_map(otel_payload, n) ? 0 : -1;
}

/* Makes buf[*start..cap) field f (wire type 2) of a message: prepends
 * its tag and length. */
static inline void pb_wrap(uint8_t *buf, size_t cap, size_t *start, unsigned f)
{
	uint8_t hdr[20];
	size_t h = pb_varint(hdr, (f << 3) | 2);

	h += pb_varint(hdr + h, cap - *start);
	*start -= h;
	memcpy(buf + *start, hdr, h);
}

/* Hostile payloads (issue 10), built backwards from the end of buf:
 * ProcessContext{extra_attributes{KeyValue{key "x", value}}} whose value
 * nests `levels` more AnyValues (levels + 1 in all) around a string, or
 * holds a flat array of `levels` empty AnyValues; levels 0: as many as buf
 * allows. kind: 'a' array_value chain, 'k' kvlist_value chain, 'n' flat.
 * Returns the payload's size; it starts at buf + cap - size. */
static inline size_t otel_ctx_hostile(uint8_t *buf, size_t cap, char kind,
				      size_t levels, size_t *made)
{
	static const unsigned chain_a[] = { 1, 5 };	/* values, array_value */
	static const unsigned chain_k[] = { 2, 1, 6 };	/* value, values, kvlist */
	const unsigned *chain = kind == 'k' ? chain_k : chain_a;
	size_t nchain = kind == 'k' ? 3 : 2, start = cap;

	*made = 0;
	if (kind == 'n') {
		while (start > 40 && (!levels || *made < levels)) {
			start -= 2;
			memcpy(buf + start, "\x0a\x00", 2);	/* values{} */
			++*made;
		}
		pb_wrap(buf, cap, &start, 5);
	} else {
		start -= 3;
		memcpy(buf + start, "\x0a\x01x", 3);	/* AnyValue{"x"} */
		while (start > 4 * nchain + 40 && (!levels || *made < levels)) {
			for (size_t i = 0; i < nchain; i++)
				pb_wrap(buf, cap, &start, chain[i]);
			++*made;
		}
	}
	pb_wrap(buf, cap, &start, 2);			/* KeyValue.value */
	start -= 3;
	memcpy(buf + start, "\x0a\x01x", 3);		/* KeyValue.key */
	pb_wrap(buf, cap, &start, 2);			/* extra_attributes */
	return cap - start;
}

/* Builds an OTEP 4947 record: valid=1, attributes [idx][len][bytes]. */
struct otel_record {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;
	uint8_t trace_flags;
	uint16_t attrs_size;
	uint8_t attrs[612];
} __attribute__((packed, aligned(8)));

static inline void otel_record_add(struct otel_record *r, uint8_t idx,
			    const void *val, uint8_t len)
{
	r->attrs[r->attrs_size] = idx;
	r->attrs[r->attrs_size + 1] = len;
	memcpy(r->attrs + r->attrs_size + 2, val, len);
	r->attrs_size += 2 + len;
	r->valid = 1;
}

/* Spins for about us microseconds of CPU. */
static inline void spin_us(double us, double iters_per_us)
{
	volatile unsigned long x = 1;

	for (unsigned long i = 0; i < (unsigned long)(us * iters_per_us); i++)
		x = x * 6364136223846793005ul + 1;
}

/* True with odds 3 in 4, from a xorshift64 state (never 0). Workloads
 * choose each task's labels this way: a sample then falls in a task whose
 * labels are an independent draw, as the tests' binomial bounds assume. A
 * fixed alternation (300 us of one, 100 us of the other) aliased with the
 * 500 us between samples at 1999 Hz and gave 77.2% for 75 in a CI run. */
static inline int three_in_four(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return (*state >> 32) % 4 != 0;
}

static inline double calibrate_iters_per_us(void)
{
	struct timespec a, b;
	unsigned long n = 20000000;
	volatile unsigned long x = 1;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005ul + 1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return n / ((b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3);
}

static inline double elapsed_s(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

#endif
