/* Free space in an array of a fixed number of entries, handed out as
 * ranges of consecutive entries: first fit among the ranges given back,
 * else from the top, the end of the part handed out. The kernel's CFI
 * tables (capture/cfiload.c) keep their rows, page indexes and table
 * slots this way: the part below the top is what the agent has mapped,
 * and counts in its resident size, so space given back is reused before
 * the top moves. */
#ifndef TAGPROF_RANGES_H
#define TAGPROF_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ranges {
	struct ranges_span {
		uint32_t start, len;
	} *free;		/* given back below top: sorted, apart */
	size_t n, cap;
	uint32_t top;		/* entries from top up were never handed out,
				   or all given back */
	uint32_t limit;		/* the array's entries */
};

/* An empty space of limit entries. */
void ranges__init(struct ranges *r, uint32_t limit);
void ranges__free(struct ranges *r);	/* its list; then empty again */

/* Takes len entries (len >= 1): the first range given back that holds
 * them, or, if grow, from the top. 0 and *start; -ENOSPC; -ENOMEM. */
int ranges__take(struct ranges *r, uint32_t len, bool grow,
		 uint32_t *start);

/* Gives back [start, start + len), which was taken: merged with the free
 * ranges it touches, and the top lowered if it reaches it. 0, or -ENOMEM
 * (the range is then lost until ranges__free). */
int ranges__give(struct ranges *r, uint32_t start, uint32_t len);

/* Entries free below the top. */
uint64_t ranges__free_below_top(const struct ranges *r);

#endif
