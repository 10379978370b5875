/* What unpacking a protobuf message will allocate, bounded from below from
 * the wire bytes alone, before protobuf-c is given them. A file of a few
 * MiB of gzip can hold hundreds of millions of empty repeated elements,
 * each of which the decoder turns into a struct and a pointer: counting
 * them first refuses such a file in one linear pass with no allocation,
 * where the decoder would allocate up to its budget before giving up. */
#ifndef TAGPROF_PBCOST_H
#define TAGPROF_PBCOST_H

#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

/* Nested messages followed (a schema's own nesting; pprof's is 3). */
#define PBCOST_MAX_DEPTH 16

/* A lower bound on the bytes protobuf-c allocates to unpack buf as a
 * message of type d: the arrays of repeated fields (an element's size
 * each; for a message also the message itself, and the pointer to it),
 * and the bytes of repeated strings and bytes. It counts nothing a
 * conforming decoder could leave out (unknown fields, a singular field
 * given twice, allocator overhead), so that a message it puts over a
 * budget is over it for the decoder too. Stops once the bound passes
 * limit (and returns more than limit), and at malformed wire data (it
 * returns what it counted: the decoder refuses such bytes anyway). */
size_t pbcost__lower_bound(const ProtobufCMessageDescriptor *d,
			   const uint8_t *buf, size_t len, size_t limit);

#endif
