// SPDX-License-Identifier: BSD-2-Clause
#include <stdbool.h>

#include "util/pbcost.h"
#include "util/pbwire.h"

struct count {
	size_t cost, limit;
};

static void add(struct count *c, size_t n)
{
	c->cost = n > SIZE_MAX - c->cost ? SIZE_MAX : c->cost + n;
}

/* The size of one element of a repeated field of scalar type t, as
 * protobuf-c lays out its array. */
static size_t scalar_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	default:
		return 4;
	}
}

/* The elements of a packed repeated scalar field: one per varint (a byte
 * without its continuation bit ends one), or len / the fixed width. */
static size_t packed_count(ProtobufCType t, const uint8_t *p, size_t len)
{
	size_t n = 0;

	switch (t) {
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return len / 8;
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		return len / 4;
	default:
		for (size_t i = 0; i < len; i++)
			n += !(p[i] & 0x80);
		return n;
	}
}

/* Whether wire type wt can carry a field of type t (packed, for a repeated
 * scalar, is WIRE_LEN). The decoder refuses any other. */
static bool fits(ProtobufCType t, unsigned wt, bool repeated)
{
	switch (t) {
	case PROTOBUF_C_TYPE_MESSAGE:
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
		return wt == WIRE_LEN;
	default:
		if (wt == WIRE_LEN)
			return repeated;
		if (t == PROTOBUF_C_TYPE_SFIXED64 || t == PROTOBUF_C_TYPE_FIXED64 ||
		    t == PROTOBUF_C_TYPE_DOUBLE)
			return wt == WIRE_I64;
		if (t == PROTOBUF_C_TYPE_SFIXED32 || t == PROTOBUF_C_TYPE_FIXED32 ||
		    t == PROTOBUF_C_TYPE_FLOAT)
			return wt == WIRE_I32;
		return wt == WIRE_VARINT;
	}
}

/* What a repeated field's element in value[0..len) (wire type wt) costs,
 * its nested message's own repeated fields aside. */
static size_t element_cost(const ProtobufCFieldDescriptor *f, unsigned wt,
			   const uint8_t *value, size_t len)
{
	if (wt != WIRE_LEN)
		return scalar_size(f->type);
	switch (f->type) {
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *) +
		       ((const ProtobufCMessageDescriptor *)f->descriptor)->sizeof_message;
	case PROTOBUF_C_TYPE_STRING:
		return sizeof(char *) + len + 1;
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData) + len;
	default:	/* packed */
		return packed_count(f->type, value, len) * scalar_size(f->type);
	}
}

static void walk(const ProtobufCMessageDescriptor *d, const uint8_t *buf,
		 size_t end, unsigned depth, struct count *c)
{
	size_t pos = 0;

	while (pos < end && c->cost <= c->limit) {
		const ProtobufCFieldDescriptor *f;
		uint64_t field, len;
		size_t value;
		unsigned wt;

		if (!read_tag(buf, end, &pos, &field, &wt) ||
		    !read_value(buf, end, &pos, wt, &len))
			return;		/* groups too: not decoded */
		value = pos;
		pos += len;		/* 0 but for WIRE_LEN */
		f = protobuf_c_message_descriptor_get_field(d, (unsigned)field);
		if (!f)
			continue;
		if (!fits(f->type, wt, f->label == PROTOBUF_C_LABEL_REPEATED))
			return;
		if (f->label == PROTOBUF_C_LABEL_REPEATED)
			add(c, element_cost(f, wt, buf + value, (size_t)len));
		/* A nested message's repeated fields count wherever it is:
		 * a singular message given twice is merged, its arrays
		 * joined. */
		if (f->type == PROTOBUF_C_TYPE_MESSAGE && depth < PBCOST_MAX_DEPTH)
			walk(f->descriptor, buf + value, (size_t)len, depth + 1, c);
	}
}

size_t pbcost__lower_bound(const ProtobufCMessageDescriptor *d,
			   const uint8_t *buf, size_t len, size_t limit)
{
	struct count c = { .cost = d->sizeof_message, .limit = limit };

	walk(d, buf, len, 0, &c);
	return c.cost;
}
