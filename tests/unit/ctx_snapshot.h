/* Test helper: a snapshot of this process's OTEL_CTX process context, read
 * as a profiler reads it: the mapping is found by name in /proc/self/maps,
 * the header and payload are copied with process_vm_readv, and the payload
 * is decoded with the protobuf-c code generated from the agent's proto
 * (independent of the library's hand-written encoder). Static functions,
 * shared by the libtagprof unit tests. */
#ifndef TAGPROF_TEST_CTX_SNAPSHOT_H
#define TAGPROF_TEST_CTX_SNAPSHOT_H

#include "otel_process_ctx.pb-c.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

struct ctx_snap {
	uintptr_t addr;			/* of the header */
	int nmaps;			/* mappings named OTEL_CTX */
	char sig[8];
	uint32_t version, payload_size;
	uint64_t published_at, payload;
	uint8_t *bytes;			/* payload copy, malloc'ed */
	Tagprof__Otel__ProcessContext *pc;
};

/* Whether a /proc/PID/maps line names the context mapping: exactly one of
 * the names it gets, by how it was created. */
static bool ctx_map_name(const char *line)
{
	char name[256];

	if (sscanf(line, "%*s %*s %*s %*s %*s %255[^\n]", name) != 1)
		return false;
	return !strcmp(name, "[anon_shmem:OTEL_CTX]") || !strcmp(name, "[anon:OTEL_CTX]") ||
	       !strcmp(name, "/memfd:OTEL_CTX (deleted)") || !strcmp(name, "/memfd:OTEL_CTX");
}

/* The number of context mappings (-1 on error); the first one's start in
 * *addr. */
static int find_ctx_maps(uintptr_t *addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (ctx_map_name(line) && ++n == 1)
			*addr = strtoull(line, NULL, 16);
	}
	fclose(f);
	return n;
}

static int vm_read(void *dst, uint64_t src, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *)(uintptr_t)src, len };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

static void snap_free(struct ctx_snap *s)
{
	if (s->pc)
		tagprof__otel__process_context__free_unpacked(s->pc, NULL);
	free(s->bytes);
	memset(s, 0, sizeof(*s));
}

/* 0 when exactly one mapping holds a published, decodable context: the
 * signature matches, published_at and payload_size are set, and
 * published_at did not change while the payload was copied. Call
 * snap_free() either way. */
static int snap_take(struct ctx_snap *s)
{
	uint8_t hdr[32];
	uint64_t again;

	memset(s, 0, sizeof(*s));
	s->nmaps = find_ctx_maps(&s->addr);
	if (s->nmaps != 1 || vm_read(hdr, s->addr, sizeof(hdr)))
		return -1;
	memcpy(s->sig, hdr, 8);
	memcpy(&s->version, hdr + 8, 4);
	memcpy(&s->payload_size, hdr + 12, 4);
	memcpy(&s->published_at, hdr + 16, 8);
	memcpy(&s->payload, hdr + 24, 8);
	if (memcmp(s->sig, "OTEL_CTX", 8) || !s->published_at || !s->payload_size)
		return -1;
	s->bytes = malloc(s->payload_size);
	if (!s->bytes || vm_read(s->bytes, s->payload, s->payload_size) ||
	    vm_read(&again, s->addr + 16, 8) || again != s->published_at)
		return -1;
	s->pc = tagprof__otel__process_context__unpack(NULL, s->payload_size, s->bytes);
	return s->pc ? 0 : -1;
}

static const Tagprof__Otel__AnyValue *kv_find(Tagprof__Otel__KeyValue **kv, size_t n,
					     const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(kv[i]->key, key))
			return kv[i]->value;
	return NULL;
}

static const Tagprof__Otel__AnyValue *extra_attr(const struct ctx_snap *s, const char *key)
{
	return kv_find(s->pc->extra_attributes, s->pc->n_extra_attributes, key);
}

static bool any_is_str(const Tagprof__Otel__AnyValue *v, const char *want)
{
	return v && v->value_case == TAGPROF__OTEL__ANY_VALUE__VALUE_STRING_VALUE &&
	       !strcmp(v->string_value, want);
}

#endif
