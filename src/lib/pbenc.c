/* Protobuf encoding of the OTEP 4719 payload, by hand so that applications
 * linking libtagprof need no protobuf library:
 *
 *	ProcessContext { Resource resource = 1; repeated KeyValue extra_attributes = 2; }
 *	Resource       { repeated KeyValue attributes = 1; }
 *	KeyValue       { string key = 1; AnyValue value = 2; }
 *	AnyValue       { string string_value = 1; bool bool_value = 2;
 *	                 int64 int_value = 3; ArrayValue array_value = 5; }
 *	ArrayValue     { repeated AnyValue values = 1; }
 *
 * Length-delimited fields need their length before their bytes, so every
 * message has a size function and a put function; sizes are computed
 * twice (put calls size for nested messages), which is nothing next to
 * the rarity of a publish. Output is canonical (minimal varints). */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { WT_VARINT = 0, WT_LEN = 2 };

struct pb {
	uint8_t *p;		/* next byte to write */
};

static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void put_varint(struct pb *b, uint64_t v)
{
	while (v >= 0x80) {
		*b->p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*b->p++ = (uint8_t)v;
}

/* Every field number here is below 16: the tag is one byte. */
static void put_tag(struct pb *b, unsigned int field, unsigned int wt)
{
	*b->p++ = (uint8_t)(field << 3 | wt);
}

/* Size of a length-delimited field carrying len bytes. */
static size_t len_field_size(size_t len)
{
	return 1 + varint_size(len) + len;
}

static void put_bytes_field(struct pb *b, unsigned int field,
			    const void *data, size_t len)
{
	put_tag(b, field, WT_LEN);
	put_varint(b, len);
	memcpy(b->p, data, len);
	b->p += len;
}

static void put_str_field(struct pb *b, unsigned int field, const char *s)
{
	put_bytes_field(b, field, s, strlen(s));
}

/* AnyValue{string_value = s}: the element of a string ArrayValue. */
static size_t any_str_size(const char *s)
{
	return len_field_size(strlen(s));
}

static size_t array_size(const char *const *v, size_t n)
{
	size_t size = 0;

	for (size_t i = 0; i < n; i++)
		size += len_field_size(any_str_size(v[i]));
	return size;
}

static void put_array(struct pb *b, const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		put_tag(b, 1, WT_LEN);
		put_varint(b, any_str_size(v[i]));
		put_str_field(b, 1, v[i]);
	}
}

/* A oneof member is always written, even when it holds the default (an
 * empty string, false, 0): that is how readers know which one is set. */
static size_t any_size(const struct tagprof__attr *a)
{
	switch (a->kind) {
	case TAGPROF__VAL_STRING:
		return any_str_size(a->s);
	case TAGPROF__VAL_BOOL:
		return 2;
	case TAGPROF__VAL_INT:
		return 1 + varint_size((uint64_t)a->i);
	case TAGPROF__VAL_STRINGS:
		return len_field_size(array_size(a->strs.v, a->strs.n));
	}
	return 0;
}

static void put_any(struct pb *b, const struct tagprof__attr *a)
{
	switch (a->kind) {
	case TAGPROF__VAL_STRING:
		put_str_field(b, 1, a->s);
		break;
	case TAGPROF__VAL_BOOL:
		put_tag(b, 2, WT_VARINT);
		put_varint(b, a->b);
		break;
	case TAGPROF__VAL_INT:
		put_tag(b, 3, WT_VARINT);
		put_varint(b, (uint64_t)a->i);	/* int64: two's complement */
		break;
	case TAGPROF__VAL_STRINGS:
		put_tag(b, 5, WT_LEN);
		put_varint(b, array_size(a->strs.v, a->strs.n));
		put_array(b, a->strs.v, a->strs.n);
		break;
	}
}

static size_t kv_size(const struct tagprof__attr *a)
{
	return len_field_size(strlen(a->key)) + len_field_size(any_size(a));
}

static void put_kv(struct pb *b, const struct tagprof__attr *a)
{
	put_str_field(b, 1, a->key);
	put_tag(b, 2, WT_LEN);
	put_varint(b, any_size(a));
	put_any(b, a);
}

/* The size of n KeyValues, each as a length-delimited field. */
static size_t kvs_size(const struct tagprof__attr *a, size_t n)
{
	size_t size = 0;

	for (size_t i = 0; i < n; i++)
		size += len_field_size(kv_size(&a[i]));
	return size;
}

static void put_kvs(struct pb *b, unsigned int field,
		    const struct tagprof__attr *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		put_tag(b, field, WT_LEN);
		put_varint(b, kv_size(&a[i]));
		put_kv(b, &a[i]);
	}
}

int tagprof__pb_encode_ctx(const struct tagprof__attr *res, size_t nres,
			   const struct tagprof__attr *extra, size_t nextra,
			   uint8_t **out, size_t *out_len)
{
	size_t res_size = kvs_size(res, nres);
	size_t size = len_field_size(res_size) + kvs_size(extra, nextra);
	struct pb b;
	uint8_t *buf;

	/* malloc(0) may return NULL; the payload is never empty anyway. */
	buf = malloc(size ? size : 1);
	if (!buf)
		return -ENOMEM;
	b.p = buf;
	put_tag(&b, 1, WT_LEN);
	put_varint(&b, res_size);
	put_kvs(&b, 1, res, nres);
	put_kvs(&b, 2, extra, nextra);
	*out = buf;
	*out_len = (size_t)(b.p - buf);
	return 0;
}
