/* Reading the protobuf wire format (protobuf.dev, "Encoding") as
 * protobuf-c reads it, bounded by an end offset: the one reader of the
 * checks that walk untrusted bytes before protobuf-c sees them
 * (proc/pbcheck.h, util/pbcost.h). */
#ifndef TAGPROF_PBWIRE_H
#define TAGPROF_PBWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	WIRE_VARINT = 0,
	WIRE_I64 = 1,
	WIRE_LEN = 2,
	WIRE_I32 = 5,
};

/* A varint of at most 10 bytes that ends before end. */
static inline bool read_varint(const uint8_t *buf, size_t end,
			       size_t *pos, uint64_t *v)
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
static inline bool read_tag(const uint8_t *buf, size_t end, size_t *pos,
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

/* Reads the value of a field of wire type wire: a varint, a fixed-size
 * value, or a length, left in *len with the bytes it counts still at *pos
 * (inside end). false when malformed, or a group or undefined type. */
static inline bool read_value(const uint8_t *buf, size_t end,
			      size_t *pos, unsigned wire, uint64_t *len)
{
	uint64_t n;

	*len = 0;
	switch (wire) {
	case WIRE_VARINT:
		return read_varint(buf, end, pos, &n);
	case WIRE_I64:
	case WIRE_I32:
		n = wire == WIRE_I64 ? 8 : 4;
		if (n > end - *pos)
			return false;
		*pos += n;
		return true;
	case WIRE_LEN:
		return read_varint(buf, end, pos, len) && *len <= end - *pos;
	default:
		return false;
	}
}

#endif
