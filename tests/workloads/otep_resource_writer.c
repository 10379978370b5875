/* otep_resource_writer: a thread-context writer written from the public
 * texts alone (OTEP 4719 process context, OTEP 4947 thread context), with
 * no tagprof code. It publishes the process context payload as a bare
 * opentelemetry.proto.resource.v1.Resource, as the OTEP 4719 text said
 * before it wrapped it in ProcessContext: service.name and the
 * threadlocal.* keys are all Resource attributes.
 *
 * The TLS slot otel_thread_ctx_v1 is defined here, in the executable, with
 * the local-exec model (OTEP 4947 lists it as one a reader must handle),
 * and exported in .dynsym by the link (--export-dynamic-symbol).
 *
 * Two workers each loop: record A (stage=parse region=eu-west) for 3n
 * iterations of one loop, record B (stage=plan region=us-east) for n.
 * The TLS pointer is swapped between two fixed records (the 4947
 * "set/unset the TLS pointer" way). So CPU time splits 3:1 between A and B.
 *
 * usage: otep_resource_writer [SECONDS]   (default 3)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "otep_text.h"

/* OTEP 4947: pointer to the current Thread-Local Context Record. */
__attribute__((tls_model("local-exec"), used))
__thread void *otel_thread_ctx_v1;

/* OTEP 4719 header: 32 bytes, host byte order. */
struct header {
	char signature[8];		/* "OTEL_CTX", no NUL */
	uint32_t version;		/* 2 */
	uint32_t payload_size;
	uint64_t published_at_ns;	/* CLOCK_BOOTTIME; 0 while writing */
	uint64_t payload;		/* address of the protobuf payload */
};

/* --- protobuf, by hand: only length-delimited fields (wire type 2) --- */
struct buf {
	uint8_t b[1024];
	size_t n;
};

static void put_varint(struct buf *o, uint64_t v)
{
	do {
		o->b[o->n++] = (v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
}

static void put_bytes(struct buf *o, unsigned field, const void *p, size_t len)
{
	put_varint(o, field << 3 | 2);
	put_varint(o, len);
	memcpy(o->b + o->n, p, len);
	o->n += len;
}

static void put_str(struct buf *o, unsigned field, const char *s)
{
	put_bytes(o, field, s, strlen(s));
}

/* KeyValue { key = 1; AnyValue value = 2 } as field FIELD of O, its
 * AnyValue already encoded in ANY. */
static void put_kv(struct buf *o, unsigned field, const char *key, struct buf *any)
{
	struct buf kv = { .n = 0 };

	put_str(&kv, 1, key);
	put_bytes(&kv, 2, any->b, any->n);
	put_bytes(o, field, kv.b, kv.n);
}

/* A string attribute: AnyValue.string_value = 1. */
static void put_kv_str(struct buf *o, unsigned field, const char *key, const char *val)
{
	struct buf any = { .n = 0 };

	put_str(&any, 1, val);
	put_kv(o, field, key, &any);
}

/* A string-array attribute: AnyValue.array_value = 5, ArrayValue.values = 1
 * (repeated AnyValue, each a string_value). */
static void put_kv_strs(struct buf *o, unsigned field, const char *key,
			const char *const *vals, int nvals)
{
	struct buf arr = { .n = 0 }, any = { .n = 0 }, one;

	for (int i = 0; i < nvals; i++) {
		one.n = 0;
		put_str(&one, 1, vals[i]);
		put_bytes(&arr, 1, one.b, one.n);
	}
	put_bytes(&any, 5, arr.b, arr.n);
	put_kv(o, field, key, &any);
}

/* Key indexes 0 and 1 in every record below. */
static const char *const key_map[] = { "stage", "region" };

static void publish(void)
{
	struct buf res = { .n = 0 };
	struct header *h;
	struct timespec ts;
	size_t size = 4096;
	void *m;

	/* Resource { repeated KeyValue attributes = 1 }: every key here. */
	put_kv_str(&res, 1, "service.name", "otep-resource-writer");
	put_kv_str(&res, 1, "threadlocal.schema_version", "tlsdesc_v1_dev");
	put_kv_strs(&res, 1, "threadlocal.attribute_key_map", key_map, 2);

	m = otep_map(size);
	if (m == MAP_FAILED) {
		perror("OTEL_CTX mapping");
		exit(1);
	}

	/* The payload right after the header, in the same mapping. */
	h = m;
	memcpy(h + 1, res.b, res.n);
	memcpy(h->signature, "OTEL_CTX", 8);
	h->version = 2;
	h->payload_size = res.n;
	h->payload = (uintptr_t)(h + 1);
	atomic_thread_fence(memory_order_seq_cst);
	clock_gettime(CLOCK_BOOTTIME, &ts);
	h->published_at_ns = (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	/* Fails on kernels without CONFIG_ANON_VMA_NAME: ignored, as 4719 says. */
	prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, m, size, "OTEL_CTX");
}

static void record_init(struct otep_record *r, const char *stage,
			const char *region)
{
	const char *vals[] = { stage, region };
	uint8_t *p = r->attrs_data;

	memset(r, 0, sizeof(*r));	/* no trace: ids and flags zero */
	for (int k = 0; k < 2; k++) {
		*p++ = k;
		*p++ = strlen(vals[k]);
		memcpy(p, vals[k], strlen(vals[k]));
		p += strlen(vals[k]);
	}
	r->attrs_data_size = p - r->attrs_data;
	r->valid = 1;
}

static struct otep_record rec_a, rec_b;

/* One function per record, so a profile shows which ran. */
__attribute__((noinline)) static void spin_parse(unsigned long n) { otep_spin(3 * n); }
__attribute__((noinline)) static void spin_plan(unsigned long n) { otep_spin(n); }

/* Each round spins 3n under A and n under B, n drawn from 0.5..1.5 units:
 * the ratio stays 3:1 exactly, while the round's length varies, so that
 * the sampling period (500 us at 1999 Hz) does not lock onto one phase of
 * the round and samples stay independent draws. */
static void *worker(void *arg)
{
	uint32_t x = 2463534242u + (uintptr_t)arg;

	while (!otep_past(&otep_deadline)) {
		unsigned long n;

		x ^= x << 13, x ^= x >> 17, x ^= x << 5;	/* xorshift32 */
		n = otep_unit / 2 + (unsigned long)((double)x / 4294967296.0 * otep_unit);
		otel_thread_ctx_v1 = &rec_a;
		atomic_signal_fence(memory_order_seq_cst);
		spin_parse(n);
		otel_thread_ctx_v1 = &rec_b;
		atomic_signal_fence(memory_order_seq_cst);
		spin_plan(n);
	}
	otel_thread_ctx_v1 = NULL;
	return NULL;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 3;

	record_init(&rec_a, "parse", "eu-west");
	record_init(&rec_b, "plan", "us-east");
	publish();
	otep_run(worker, secs);
	return 0;
}
