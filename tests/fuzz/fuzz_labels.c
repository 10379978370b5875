/* Fuzz target: a sample's thread context decoded to labels as the
 * resolver decodes it (labels__decode, which labels__resolve calls),
 * against a fixed snapshot of a process context: keys, schema and a
 * register tag declaration with its dictionary, encoded as in
 * tests/unit/test_labels.c and decoded by procctx__decode and
 * tagdecl__load as the agent does. The input:
 *	byte 0:	bit 0 kind (TP_CTX_OTEL, an OTEP 4947 record; else
 *		TP_CTX_CUSTOM, a custom-labels v1 set), bit 1 no snapshot
 *		(NULL: nothing known of the process), bit 2 tag_valid,
 *		bit 3 the snapshot without tags, bits 4-7 how many labels
 *		fit (0: the resolver's 64 less its own 4);
 *	bytes 1-8: the tag, little-endian;
 *	the rest: the blob, at most TP_CTX_SPACE bytes as records__parse
 *		bounds it. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "capture/labels.h"
#include "out/pprof.h"
#include "proc/ctxsnap.h"
#include "sample_event.h"
#include "../workloads/otel_ctx_writer.h"

#if defined(__x86_64__)
#define TAG_REG "r15"
#elif defined(__aarch64__)
#define TAG_REG "x28"
#else
#define TAG_REG "r15"
#endif

static const char *const keys[] = { "tenant", "query_id", "pid", "cpu" };
static const char *const fields[] = { "operator:8", "tenant:8", "cpu:8" };
static const char *const names[] = { "operator:1=scan", "operator:2=join",
				     "cpu:0=idle", "tenant:7=acme" };

static int make_snap(struct ctxsnap *s, bool tags)
{
	static uint8_t buf[4096];
	uint8_t any[300];
	size_t n = otel_ctx_encode(buf, "svc", keys, 4);

	if (tags) {
		n += pb_kv(buf + n, 2, "tagprof.tag.register", any,
			   pb_anystr(any, TAG_REG));
		n = otel_ctx_add_strings(buf, n, "tagprof.tag.fields", fields, 3);
		n = otel_ctx_add_strings(buf, n, "tagprof.tag.names", names, 4);
	}
	memset(s, 0, sizeof(*s));
	if (procctx__decode(buf, n, &s->ctx))
		return -1;
	return tagdecl__load(&s->tags, &s->ctx);
}

static struct ctxsnap snap_tags, snap_plain;
static bool ready;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pprof_label l[60];
	static char strs[8192];
	struct labels_stats st = { 0 };
	enum ctxsnap_miss miss;
	struct labels_sample s = { .pid = 1, .time_ns = 1 };
	const struct ctxsnap *snap;
	size_t max, n;

	if (!ready) {
		if (make_snap(&snap_tags, true) || make_snap(&snap_plain, false))
			__builtin_trap();
		ready = true;
	}
	if (size < 9 || size - 9 > TP_CTX_SPACE)
		return 0;
	s.kind = data[0] & 1 ? TP_CTX_OTEL : TP_CTX_CUSTOM;
	snap = data[0] & 2 ? NULL : data[0] & 8 ? &snap_plain : &snap_tags;
	s.tag_valid = data[0] & 4;
	s.tag = fuzz_word(data + 1);
	max = data[0] >> 4 ? data[0] >> 4 : 60;
	/* The blob ends where libFuzzer's copy of the input ends. */
	s.blob = data + 9;
	s.size = size - 9;
	n = labels__decode(snap, &s, &(struct labels_buf){ l, max, strs,
		sizeof(strs) }, &st, &miss);
	if (n > max)
		__builtin_trap();
	/* Read what it wrote, as the pprof builder does. */
	for (size_t i = 0; i < n; i++) {
		if (!l[i].key)
			__builtin_trap();
		(void)strlen(l[i].key);
		if (l[i].str)
			(void)strlen(l[i].str);
	}
	return 0;
}
