/* A bounded check of a process-context payload (OTEP 4719) against its
 * protobuf schema, run before protobuf-c sees the bytes: protobuf-c
 * recurses once per nested message, so a payload that nests thousands of
 * AnyValues deep overflows the reader's stack. The check walks the wire
 * format with a fixed-size stack of its own and recurses nowhere. */
#ifndef TAGPROF_PBCHECK_H
#define TAGPROF_PBCHECK_H

#include <stddef.h>
#include <stdint.h>

/* Messages of proto/otel_process_ctx.proto. */
enum pbcheck_msg {
	PBCHECK_PROCESS_CONTEXT,
	PBCHECK_RESOURCE,
	PBCHECK_KEY_VALUE,
	PBCHECK_ANY_VALUE,
	PBCHECK_ARRAY_VALUE,
	PBCHECK_KEY_VALUE_LIST,
	PBCHECK_NMSGS,
};

/* AnyValues inside AnyValues (through arrays and key-value lists). Real
 * process contexts use 2: an attribute whose value is an array of
 * strings. */
#define PBCHECK_MAX_ANY_DEPTH 8
/* Fields in the whole payload, at every level. tagprof reads lists of up
 * to 4096 strings (2 fields each); 64 KiB holds 32,768 empty fields. */
#define PBCHECK_MAX_FIELDS 16384

/* Checks that buf holds a well-formed message of type root: tags, varints
 * and lengths inside their enclosing message, message fields with the
 * length-delimited wire type, no groups. Unknown fields are skipped, not
 * looked into. Returns 0, -EBADMSG (malformed), -ELOOP (AnyValues nested
 * deeper than PBCHECK_MAX_ANY_DEPTH) or -E2BIG (more fields than
 * PBCHECK_MAX_FIELDS). */
int pbcheck__payload(const uint8_t *buf, size_t len, enum pbcheck_msg root);

/* Which published form of the OTEP 4719 payload buf is: a ProcessContext
 * { Resource resource = 1; repeated KeyValue extra_attributes = 2; }
 * (the merged OTEP text, opentelemetry-proto 1.11, which names field 2
 * `attributes`, and the reference C writer) or a bare Resource
 * { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
 * (the OTEP's pull request as first published). Decided by wire types
 * alone, where the two schemas disagree and the protobuf encoding fixes
 * the type:
 *	top-level field 2:		LEN in a ProcessContext (a KeyValue),
 *					VARINT in a Resource (a uint32);
 *	field 2 inside a field 1:	VARINT in a ProcessContext (the
 *					Resource's uint32), LEN in a Resource
 *					(the KeyValue's AnyValue).
 * Neither can be written in the other form without breaking its schema,
 * so no conforming writer of one form is read as the other. A Resource
 * with at least one valued attribute (anything tagprof reads) always says
 * so; a payload that says nothing either way is a ProcessContext; one
 * that says both is neither: -EBADMSG, as for a malformed top level.
 * Sets *root and returns 0. Linear in len; reads no deeper than two
 * levels (pbcheck__payload checks the rest). */
int pbcheck__form(const uint8_t *buf, size_t len, enum pbcheck_msg *root);

#endif
