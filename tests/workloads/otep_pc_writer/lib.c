/* otep_pc: publishes the OTEP 4719 process context in the ProcessContext
 * form of opentelemetry-proto (processcontext/v1development):
 *   ProcessContext { Resource resource = 1; repeated KeyValue attributes = 2 }
 * with service.name (and process.pid, an int) in the Resource and the
 * OTEP 4947 threadlocal.* keys in field 2, where the 4947 text puts them
 * ("entries in the ProcessContext.attributes field"). The payload lives in
 * a heap allocation apart from the header, which 4719 allows.
 *
 * The TLS slot otel_thread_ctx_v1 is defined here and exported from this
 * shared object; built with -ftls-model=global-dynamic -mtls-dialect=gnu2,
 * so it is reached through TLSDESC (4947's recommended model). Each thread
 * points it once at its own record and updates that record in place by
 * clearing and setting `valid` (4947's "fixed record" way).
 */
#define _GNU_SOURCE		/* memfd_create */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "otep_pc.h"
#include "../otep_text.h"

__attribute__((visibility("default")))
__thread void *otel_thread_ctx_v1;

static __thread struct otep_record thread_record;
static int nkeys;

/* --- protobuf, encoded backwards: a message's contents are written first
 * (from the end of the buffer towards its start), then their length and
 * tag in front of them; so fields come out in reverse order of the calls,
 * which protobuf allows. --- */
struct rbuf {
	uint8_t b[2048];
	size_t pos;		/* first used byte; sizeof(b) when empty */
};

static void pre_byte(struct rbuf *r, uint8_t c)
{
	r->b[--r->pos] = c;
}

static void pre_varint(struct rbuf *r, uint64_t v)
{
	uint8_t tmp[10];
	int n = 0;

	do {
		tmp[n++] = (v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	while (n)
		pre_byte(r, tmp[--n]);
}

/* Ends a length-delimited field whose contents began at END (r->pos when
 * its contents were started, as we write backwards). */
static void pre_len(struct rbuf *r, unsigned field, size_t end)
{
	pre_varint(r, end - r->pos);
	pre_varint(r, field << 3 | 2);
}

static void pre_string(struct rbuf *r, unsigned field, const char *s)
{
	size_t end = r->pos, n = strlen(s);

	r->pos -= n;
	memcpy(r->b + r->pos, s, n);
	pre_len(r, field, end);
}

/* KeyValue { string key = 1; AnyValue value = 2; } with a string_value (1). */
static void pre_kv_string(struct rbuf *r, unsigned field, const char *key, const char *val)
{
	size_t kv = r->pos, any;

	any = r->pos;
	pre_string(r, 1, val);
	pre_len(r, 2, any);
	pre_string(r, 1, key);
	pre_len(r, field, kv);
}

/* ... with an int_value (AnyValue field 3, varint). */
static void pre_kv_int(struct rbuf *r, unsigned field, const char *key, int64_t val)
{
	size_t kv = r->pos, any;

	any = r->pos;
	pre_varint(r, (uint64_t)val);
	pre_varint(r, 3 << 3 | 0);
	pre_len(r, 2, any);
	pre_string(r, 1, key);
	pre_len(r, field, kv);
}

/* ... with an array_value (AnyValue field 5) of ArrayValue { repeated
 * AnyValue values = 1 }, each a string_value. Written last to first. */
static void pre_kv_strings(struct rbuf *r, unsigned field, const char *key,
			   const char *const *vals, int n)
{
	size_t kv = r->pos, any, arr, one;

	any = r->pos;
	arr = r->pos;
	while (n--) {
		one = r->pos;
		pre_string(r, 1, vals[n]);
		pre_len(r, 1, one);
	}
	pre_len(r, 5, arr);
	pre_len(r, 2, any);
	pre_string(r, 1, key);
	pre_len(r, field, kv);
}

struct otep_header {
	char signature[8];
	uint32_t version;
	uint32_t payload_size;
	uint64_t monotonic_published_at_ns;
	uint64_t payload;
};

/* The published payload. The header in the OTEL_CTX mapping points to it
 * too, but LeakSanitizer does not scan that mapping. */
static void *volatile published;

int otep_pc_start(const char *service, const char *const *keys, int n)
{
	static struct rbuf r = { .pos = sizeof(r.b) };
	struct otep_header *h;
	struct timespec ts;
	size_t size = sysconf(_SC_PAGESIZE), res;
	void *m, *payload;

	nkeys = n;
	/* Backwards: field 2's entries, then field 1 (the Resource). */
	pre_kv_strings(&r, 2, "threadlocal.attribute_key_map", keys, n);
	pre_kv_string(&r, 2, "threadlocal.schema_version", "tlsdesc_v1_dev");
	res = r.pos;
	pre_kv_int(&r, 1, "process.pid", getpid());
	pre_kv_string(&r, 1, "service.name", service);
	pre_len(&r, 1, res);
	payload = malloc(sizeof(r.b) - r.pos);
	if (!payload)
		return -1;
	memcpy(payload, r.b + r.pos, sizeof(r.b) - r.pos);
	published = payload;

	m = otep_map(size);
	if (m == MAP_FAILED)
		return -1;
	h = m;
	memcpy(h->signature, "OTEL_CTX", 8);
	h->version = 2;
	h->payload_size = sizeof(r.b) - r.pos;
	h->payload = (uintptr_t)payload;
	atomic_thread_fence(memory_order_seq_cst);
	clock_gettime(CLOCK_BOOTTIME, &ts);
	h->monotonic_published_at_ns = (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, m, size, "OTEL_CTX");
	return 0;
}

void otep_pc_set(const char *const *vals)
{
	struct otep_record *r = &thread_record;
	uint8_t *p = r->attrs_data;

	/* volatile: the compiler must neither drop nor reorder these
	 * around the record's update (4947: signal-handler semantics). */
	*(volatile uint8_t *)&r->valid = 0;
	atomic_signal_fence(memory_order_seq_cst);
	for (int k = 0; k < nkeys; k++) {
		size_t n = strlen(vals[k]);

		if (p + 2 + n > r->attrs_data + sizeof(r->attrs_data) || n > 255)
			break;
		*p++ = k;
		*p++ = n;
		memcpy(p, vals[k], n);
		p += n;
	}
	r->attrs_data_size = p - r->attrs_data;
	atomic_signal_fence(memory_order_seq_cst);
	*(volatile uint8_t *)&r->valid = 1;
	if (otel_thread_ctx_v1 != r) {
		atomic_signal_fence(memory_order_seq_cst);
		*(void *volatile *)&otel_thread_ctx_v1 = r;
	}
}
