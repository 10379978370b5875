// SPDX-License-Identifier: BSD-2-Clause
/* Non-recursive, bounded check of a process-context payload; see
 * pbcheck.h. */
#include <errno.h>
#include <stdbool.h>

#include "pbcheck.h"

enum {
	WIRE_VARINT = 0,
	WIRE_I64 = 1,
	WIRE_LEN = 2,
	WIRE_I32 = 5,
};

#define NONE PBCHECK_NMSGS	/* a field that is not a message */
#define SCHEMA_FIELDS 7		/* the schema's highest field number + 1 */

/* The message type of each message field, by field number; the rest are
 * scalars, strings or unknown. */
static const uint8_t schema[PBCHECK_NMSGS][SCHEMA_FIELDS] = {
	[PBCHECK_PROCESS_CONTEXT] = { NONE, PBCHECK_RESOURCE, PBCHECK_KEY_VALUE,
				      NONE, NONE, NONE, NONE },
	[PBCHECK_RESOURCE] = { NONE, PBCHECK_KEY_VALUE, NONE, NONE, NONE, NONE,
			       NONE },
	[PBCHECK_KEY_VALUE] = { NONE, NONE, PBCHECK_ANY_VALUE, NONE, NONE, NONE,
				NONE },
	[PBCHECK_ANY_VALUE] = { NONE, NONE, NONE, NONE, NONE,
				PBCHECK_ARRAY_VALUE, PBCHECK_KEY_VALUE_LIST },
	[PBCHECK_ARRAY_VALUE] = { NONE, PBCHECK_ANY_VALUE, NONE, NONE, NONE,
				  NONE, NONE },
	[PBCHECK_KEY_VALUE_LIST] = { NONE, PBCHECK_KEY_VALUE, NONE, NONE, NONE,
				     NONE, NONE },
};

/* The deepest the schema can go within the AnyValue bound: ProcessContext,
 * Resource, KeyValue, then per AnyValue at most AnyValue, KeyValueList
 * and KeyValue. */
#define MAX_FRAMES (3 + 3 * PBCHECK_MAX_ANY_DEPTH)

struct frame {
	uint8_t msg;
	size_t end;		/* offset just past the message */
};

/* A varint of at most 10 bytes that ends before end. */
static bool read_varint(const uint8_t *buf, size_t end, size_t *pos,
			uint64_t *v)
{
	*v = 0;
	for (unsigned i = 0; i < 10 && *pos < end; i++) {
		uint8_t b = buf[(*pos)++];

		*v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* A tag read as protobuf-c reads it (at most 5 bytes, field 0 refused
 * by its first byte), so that both see the same field numbers. */
static bool read_tag(const uint8_t *buf, size_t end, size_t *pos,
		     uint64_t *field, unsigned *wire)
{
	uint64_t tag;

	if (*pos >= end || !(buf[*pos] & 0xf8))
		return false;
	if (end - *pos > 5)
		end = *pos + 5;
	if (!read_varint(buf, end, pos, &tag))
		return false;
	*field = tag >> 3;
	*wire = tag & 7;
	return true;
}

int pbcheck__payload(const uint8_t *buf, size_t len, enum pbcheck_msg root)
{
	struct frame stack[MAX_FRAMES];
	unsigned depth = 1, any_depth = 0;
	size_t pos = 0, fields = 0;
	uint64_t field, n;
	unsigned wire;
	uint8_t child;

	if (root >= PBCHECK_NMSGS)
		return -EINVAL;
	stack[0] = (struct frame){ root, len };
	/* Every turn consumes at least one byte or closes one message. */
	while (depth) {
		struct frame *f = &stack[depth - 1];

		if (pos == f->end) {
			if (f->msg == PBCHECK_ANY_VALUE)
				any_depth--;
			depth--;
			continue;
		}
		if (!read_tag(buf, f->end, &pos, &field, &wire))
			return -EBADMSG;
		if (++fields > PBCHECK_MAX_FIELDS)
			return -E2BIG;
		child = field < SCHEMA_FIELDS ? schema[f->msg][field] : NONE;
		if (child != NONE && wire != WIRE_LEN)
			return -EBADMSG;
		switch (wire) {
		case WIRE_VARINT:
			if (!read_varint(buf, f->end, &pos, &n))
				return -EBADMSG;
			break;
		case WIRE_I64:
		case WIRE_I32:
			n = wire == WIRE_I64 ? 8 : 4;
			if (n > f->end - pos)
				return -EBADMSG;
			pos += n;
			break;
		case WIRE_LEN:
			if (!read_varint(buf, f->end, &pos, &n) ||
			    n > f->end - pos)
				return -EBADMSG;
			if (child == NONE) {	/* skipped, never looked into */
				pos += n;
				break;
			}
			if (child == PBCHECK_ANY_VALUE &&
			    any_depth++ == PBCHECK_MAX_ANY_DEPTH)
				return -ELOOP;
			if (depth == MAX_FRAMES)	/* the schema rules it out */
				return -ELOOP;
			stack[depth++] = (struct frame){ child, pos + n };
			break;
		default:	/* groups (3, 4) and undefined types */
			return -EBADMSG;
		}
	}
	return 0;
}
