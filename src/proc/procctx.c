// SPDX-License-Identifier: BSD-2-Clause
/* OTEP 4719 process context reader. Everything read from the target is
 * untrusted: sizes are bounded, strings copied with their lengths, and the
 * payload checked by pbcheck (nesting, field count, wire format) before
 * protobuf-c, which recurses once per nested message, decodes it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "otel_process_ctx.pb-c.h"
#include "proc/pbcheck.h"
#include "proc/procctx.h"
#include "proc/procfs.h"

#define SIGNATURE "OTEL_CTX"
#define VERSION 2
#define READ_TRIES 3

struct ctx_header {		/* as published, native byte order */
	char signature[8];
	uint32_t version;
	uint32_t payload_size;
	uint64_t published_at;
	uint64_t payload;
};
_Static_assert(sizeof(struct ctx_header) == 32, "OTEL_CTX header");

/* The names OTEL_CTX gets in /proc/PID/maps, by how it was created; OTEP
 * 4719 matches them as prefixes (a memfd's name ends " (deleted)" once
 * its descriptor is closed). The header's signature is checked after. */
static bool is_ctx_mapping(const char *name)
{
	static const char *const prefixes[] = {
		"[anon_shmem:OTEL_CTX]", "[anon:OTEL_CTX]", "/memfd:OTEL_CTX",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

uint64_t procctx__mapping(const struct procfs_map *m)
{
	if (procfs_map__exec(m) ||
	    m->end - m->start < sizeof(struct ctx_header) ||
	    !is_ctx_mapping(m->path))
		return 0;
	return m->start;
}

/* 1 with the address of the mapping that holds the context. */
static int ctx_mapping_at(const struct procfs_map *m, void *arg)
{
	*(uint64_t *)arg = procctx__mapping(m);
	return *(uint64_t *)arg != 0;
}

static int find_mapping(int pid, uint64_t *addr)
{
	int ret = procfs__read_maps(pid, ctx_mapping_at, addr);

	if (ret < 0)
		return ret;
	return ret ? 0 : -ENOENT;
}

static char *dup_str(const char *s)
{
	return strdup(s ? s : "");
}

static const char *string_of(const Tagprof__Otel__AnyValue *v)
{
	if (!v || v->value_case != TAGPROF__OTEL__ANY_VALUE__VALUE_STRING_VALUE)
		return NULL;
	return v->string_value;
}

/* An array of strings: non-string elements become "". */
static int copy_list(const Tagprof__Otel__AnyValue *v, size_t max,
		     char ***out, size_t *n)
{
	const Tagprof__Otel__ArrayValue *a;
	char **list;

	*out = NULL;
	*n = 0;
	if (!v || v->value_case != TAGPROF__OTEL__ANY_VALUE__VALUE_ARRAY_VALUE ||
	    !v->array_value)
		return -EINVAL;
	a = v->array_value;
	if (a->n_values > max)
		return -E2BIG;
	list = calloc(a->n_values ? a->n_values : 1, sizeof(*list));
	if (!list)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_values; i++) {
		const char *s = string_of(a->values[i]);

		list[i] = dup_str(s);
		if (!list[i]) {
			for (size_t j = 0; j < i; j++)
				free(list[j]);
			free(list);
			return -ENOMEM;
		}
	}
	*out = list;
	*n = a->n_values;
	return 0;
}

static void free_list(char **list, size_t n)
{
	for (size_t i = 0; list && i < n; i++)
		free(list[i]);
	free(list);
}

static int add_attr(struct procctx *ctx, const Tagprof__Otel__KeyValue *kv)
{
	struct procctx_attr *a, *tmp;
	const Tagprof__Otel__AnyValue *v = kv->value;

	tmp = realloc(ctx->attrs, (ctx->nattrs + 1) * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	ctx->attrs = tmp;
	a = &ctx->attrs[ctx->nattrs];
	memset(a, 0, sizeof(*a));
	a->key = dup_str(kv->key);
	if (!a->key)
		return -ENOMEM;
	ctx->nattrs++;
	if (string_of(v)) {
		a->str = dup_str(string_of(v));
		return a->str ? 0 : -ENOMEM;
	}
	if (v && v->value_case == TAGPROF__OTEL__ANY_VALUE__VALUE_INT_VALUE) {
		a->num = v->int_value;
		return 0;
	}
	if (v && v->value_case == TAGPROF__OTEL__ANY_VALUE__VALUE_ARRAY_VALUE)
		return copy_list(v, 4096, &a->list, &a->nlist) == -ENOMEM ?
			       -ENOMEM : 0;
	return 0;
}

/* Takes what tagprof reads from one attribute (resource or extra). */
static int take_attr(struct procctx *ctx, const Tagprof__Otel__KeyValue *kv)
{
	const char *key = kv->key ? kv->key : "";
	int ret;

	if (!strcmp(key, "service.name") && string_of(kv->value)) {
		free(ctx->service_name);
		ctx->service_name = dup_str(string_of(kv->value));
		return ctx->service_name ? 0 : -ENOMEM;
	}
	if (!strcmp(key, "threadlocal.schema_version") && string_of(kv->value)) {
		free(ctx->schema_version);
		ctx->schema_version = dup_str(string_of(kv->value));
		return ctx->schema_version ? 0 : -ENOMEM;
	}
	if (!strcmp(key, "threadlocal.attribute_key_map")) {
		free_list(ctx->keys, ctx->nkeys);
		ret = copy_list(kv->value, PROCCTX_MAX_KEYS, &ctx->keys,
				&ctx->nkeys);
		return ret == -ENOMEM ? ret : 0;
	}
	if (!strncmp(key, "tagprof.", 8))
		return add_attr(ctx, kv);
	return 0;
}

/* Takes the attributes of one Resource (may be NULL). */
static int take_resource(struct procctx *ctx, const Tagprof__Otel__Resource *r)
{
	int ret = 0;

	for (size_t i = 0; r && !ret && i < r->n_attributes; i++)
		ret = take_attr(ctx, r->attributes[i]);
	return ret;
}

/* A bare Resource: the payload of OTEP 4719 as its pull request first
 * published it, before the merged text wrapped it in ProcessContext. */
static int decode_resource(const uint8_t *buf, size_t len, struct procctx *out)
{
	Tagprof__Otel__Resource *r;
	int ret;

	r = tagprof__otel__resource__unpack(NULL, len, buf);
	if (!r)
		return -EBADMSG;
	ret = take_resource(out, r);
	tagprof__otel__resource__free_unpacked(r, NULL);
	return ret;
}

/* A ProcessContext, the payload opentelemetry-proto defines: what
 * tagprof reads may be in the resource or in the extra attributes. */
static int decode_process_context(const uint8_t *buf, size_t len,
				  struct procctx *out)
{
	Tagprof__Otel__ProcessContext *pc;
	int ret;

	pc = tagprof__otel__process_context__unpack(NULL, len, buf);
	if (!pc)
		return -EBADMSG;
	ret = take_resource(out, pc->resource);
	for (size_t i = 0; !ret && i < pc->n_extra_attributes; i++)
		ret = take_attr(out, pc->extra_attributes[i]);
	tagprof__otel__process_context__free_unpacked(pc, NULL);
	return ret;
}

int procctx__decode(const uint8_t *buf, size_t len, struct procctx *out)
{
	enum pbcheck_msg form;
	int ret;

	ret = pbcheck__form(buf, len, &form);
	if (!ret)
		ret = pbcheck__payload(buf, len, form);
	if (ret == -E2BIG)
		return -ELOOP;		/* one refusal, for one counter */
	if (ret)
		return ret;
	if (form == PBCHECK_RESOURCE)
		return decode_resource(buf, len, out);
	return decode_process_context(buf, len, out);
}

/* One attempt of the reading protocol. Returns 0, 1 (unchanged, or the
 * payload prev refused), -EAGAIN when the writer was mid-update, or the
 * decoder's refusal with out->refused_at set. */
/* What read_once reads the target's memory with: procfs__read_mem for a
 * live process, the fuzzer's changing bytes for a torn one. */
struct ctx_reader {
	procctx_mem_fn read;
	void *arg;
};

static int read_once(const struct ctx_reader *r, uint64_t addr,
		     const struct procctx *prev, struct procctx *out)
{
	struct ctx_header h;
	uint64_t again;
	uint8_t *payload = NULL;
	int ret;

	ret = r->read(r->arg, addr, &h, sizeof(h));
	if (ret)
		return ret;
	if (memcmp(h.signature, SIGNATURE, 8) || h.version != VERSION)
		return -EINVAL;
	if (h.published_at == 0)
		return -EAGAIN;		/* update in progress */
	if (h.published_at == prev->published_at ||
	    h.published_at == prev->refused_at)
		return 1;
	if (h.payload_size == 0 || h.payload_size > PROCCTX_MAX_PAYLOAD)
		return -EINVAL;
	payload = malloc(h.payload_size);
	if (!payload)
		return -ENOMEM;
	ret = r->read(r->arg, h.payload, payload, h.payload_size);
	if (!ret)
		ret = r->read(r->arg, addr + 16, &again, sizeof(again));
	if (!ret && again != h.published_at)
		ret = -EAGAIN;
	if (!ret)
		ret = procctx__decode(payload, h.payload_size, out);
	if (!ret)
		out->published_at = h.published_at;
	else if (ret == -ELOOP || ret == -EBADMSG)
		out->refused_at = h.published_at;
	free(payload);
	return ret;
}

int procctx__read_with(struct procctx *ctx, uint64_t addr, procctx_mem_fn read,
		       void *arg)
{
	const struct ctx_reader r = { read, arg };
	struct procctx fresh = { 0 };
	int ret = -EAGAIN;

	for (int i = 0; i < READ_TRIES && ret == -EAGAIN; i++) {
		procctx__clear(&fresh);
		ret = read_once(&r, addr, ctx, &fresh);
	}
	if (ret) {
		/* The same payload is not fetched, decoded or counted again:
		 * only a new published_at is. */
		if (fresh.refused_at)
			ctx->refused_at = fresh.refused_at;
		procctx__clear(&fresh);
		/* A cached address that stopped holding a context: forget it. */
		if (ret == -EINVAL || ret == -EFAULT || ret == -ESRCH)
			ctx->header_addr = 0;
		else if (ret == 1 || ret == -ELOOP || ret == -EBADMSG)
			ctx->header_addr = addr;
		return ret;
	}
	procctx__clear(ctx);
	*ctx = fresh;
	ctx->header_addr = addr;
	return 0;
}

static int read_pid_mem(void *arg, uint64_t addr, void *buf, size_t len)
{
	return procfs__read_mem(*(const int *)arg, addr, buf, len);
}

int procctx__read(int pid, struct procctx *ctx)
{
	uint64_t addr = ctx->header_addr;
	int ret;

	if (!addr) {
		ret = find_mapping(pid, &addr);
		if (ret)
			return ret;
	}
	return procctx__read_with(ctx, addr, read_pid_mem, &pid);
}

const struct procctx_attr *procctx__attr(const struct procctx *ctx,
					 const char *key)
{
	for (size_t i = 0; i < ctx->nattrs; i++)
		if (!strcmp(ctx->attrs[i].key, key))
			return &ctx->attrs[i];
	return NULL;
}

void procctx__clear(struct procctx *ctx)
{
	if (!ctx)
		return;
	free(ctx->service_name);
	free(ctx->schema_version);
	free_list(ctx->keys, ctx->nkeys);
	for (size_t i = 0; i < ctx->nattrs; i++) {
		free(ctx->attrs[i].key);
		free(ctx->attrs[i].str);
		free_list(ctx->attrs[i].list, ctx->attrs[i].nlist);
	}
	free(ctx->attrs);
	memset(ctx, 0, sizeof(*ctx));
}
