// SPDX-License-Identifier: BSD-2-Clause
/* Non-recursive, bounded check of a process-context payload; see
 * pbcheck.h. */
#include <errno.h>
#include <stdbool.h>

#include "proc/pbcheck.h"
#include "util/pbwire.h"

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
		if (!read_value(buf, f->end, &pos, wire, &n))
			return -EBADMSG;
		if (wire != WIRE_LEN)
			continue;
		if (child == NONE) {	/* skipped, never looked into */
			pos += n;
			continue;
		}
		if (child == PBCHECK_ANY_VALUE &&
		    any_depth++ == PBCHECK_MAX_ANY_DEPTH)
			return -ELOOP;
		if (depth == MAX_FRAMES)	/* the schema rules it out */
			return -ELOOP;
		stack[depth++] = (struct frame){ child, pos + n };
	}
	return 0;
}

/* What field 2 of a message says of the form, by its wire type: LEN is a
 * KeyValue (ProcessContext.extra_attributes, or KeyValue.value), VARINT a
 * uint32 (Resource.dropped_attributes_count). */
struct form_votes {
	bool resource, context;
};

static void vote(struct form_votes *v, bool top, unsigned wire)
{
	/* At the top, LEN is extra_attributes and VARINT dropped count; one
	 * level down, in field 1, LEN is a KeyValue's value and VARINT a
	 * Resource's dropped count. */
	if (wire == WIRE_LEN) {
		v->context |= top;
		v->resource |= !top;
	} else if (wire == WIRE_VARINT) {
		v->resource |= top;
		v->context |= !top;
	}
}

/* The fields of one top-level field 1, for the votes of its field 2. */
static bool vote_inner(const uint8_t *buf, size_t pos, size_t end,
		       struct form_votes *v)
{
	uint64_t field, n;
	unsigned wire;

	while (pos < end) {
		if (!read_tag(buf, end, &pos, &field, &wire) ||
		    !read_value(buf, end, &pos, wire, &n))
			return false;
		pos += n;
		if (field == 2)
			vote(v, false, wire);
	}
	return true;
}

int pbcheck__form(const uint8_t *buf, size_t len, enum pbcheck_msg *root)
{
	struct form_votes v = { false, false };
	size_t pos = 0;
	uint64_t field, n;
	unsigned wire;

	/* Linear in len, no recursion: two levels, each walked once. */
	while (pos < len) {
		if (!read_tag(buf, len, &pos, &field, &wire) ||
		    !read_value(buf, len, &pos, wire, &n))
			return -EBADMSG;
		if (field == 2)
			vote(&v, true, wire);
		if (field == 1 && wire == WIRE_LEN &&
		    !vote_inner(buf, pos, pos + n, &v))
			return -EBADMSG;
		pos += n;
	}
	if (v.resource && v.context)
		return -EBADMSG;
	*root = v.resource ? PBCHECK_RESOURCE : PBCHECK_PROCESS_CONTEXT;
	return 0;
}
