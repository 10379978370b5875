/* The stack table: a stack sent whole names every later record of the same
 * id, in its generation only, for the same pid and depths only; and the
 * table rolls to a new generation when it outgrows its bound, keeping the
 * previous one for the records still on their way. */
#include "check.h"
#include "capture/stacktab.h"

#include <string.h>

struct rec {
	struct tp_sample s;
	uint64_t frames[8];
};

/* A record of pid with n user frames base, base+1, ... sent as kind. */
static struct raw_sample make(struct rec *r, uint8_t kind, uint64_t id,
			      uint8_t gen, uint32_t pid, unsigned n,
			      uint64_t base)
{
	memset(r, 0, sizeof(*r));
	r->s.type = TP_REC_SAMPLE;
	r->s.pid = pid;
	r->s.user_depth = n;
	r->s.stack_kind = kind;
	r->s.stack_id = id;
	r->s.stack_gen = gen;
	for (unsigned i = 0; i < n; i++)
		r->frames[i] = base + i;
	return (struct raw_sample){ .s = &r->s,
		.frames = kind == TP_STACK_SEEN ? NULL : r->frames };
}

static void test_seen_gets_frames(void)
{
	struct stacktab *t = stacktab__new(0);
	struct rec a, b;
	struct raw_sample rs;

	CHECK(t);
	rs = make(&a, TP_STACK_NEW, 7, 0, 100, 3, 0x1000);
	CHECK(stacktab__resolve(t, &rs));
	CHECK(rs.frames == a.frames);
	memset(a.frames, 0, sizeof(a.frames));	/* the ring reuses it */
	rs = make(&b, TP_STACK_SEEN, 7, 0, 100, 3, 0);
	CHECK(stacktab__resolve(t, &rs));
	CHECK(rs.frames && rs.frames[0] == 0x1000 && rs.frames[2] == 0x1002);
	/* Another id, another pid, other depths: refused. */
	rs = make(&b, TP_STACK_SEEN, 8, 0, 100, 3, 0);
	CHECK(!stacktab__resolve(t, &rs));
	rs = make(&b, TP_STACK_SEEN, 7, 0, 101, 3, 0);
	CHECK(!stacktab__resolve(t, &rs));
	rs = make(&b, TP_STACK_SEEN, 7, 0, 100, 2, 0);
	CHECK(!stacktab__resolve(t, &rs));
	/* Frames sent without an id need nothing. */
	rs = make(&b, TP_STACK_FRAMES, 0, 0, 100, 2, 5);
	CHECK(stacktab__resolve(t, &rs) && rs.frames == b.frames);
	stacktab__free(t);
}

static void test_generations(void)
{
	/* A generation rolls past half the bound: one 8-frame stack (its
	 * frames and a small header) is more than half of 100 bytes. */
	struct stacktab *t = stacktab__new(100);
	struct rec a, b;
	struct raw_sample rs;
	uint32_t gen = 99;

	CHECK(t);
	CHECK(!stacktab__roll(t, &gen));	/* empty: nothing to do */
	rs = make(&a, TP_STACK_NEW, 1, 0, 1, 8, 0x10);
	CHECK(stacktab__resolve(t, &rs));
	CHECK(stacktab__bytes(t) > 0);
	CHECK(stacktab__roll(t, &gen) && gen == 1);
	/* Generation 0's records on their way still resolve... */
	rs = make(&b, TP_STACK_SEEN, 1, 0, 1, 8, 0);
	CHECK(stacktab__resolve(t, &rs) && rs.frames[7] == 0x17);
	/* ...but not as generation 1's, which must be sent whole first. */
	rs = make(&b, TP_STACK_SEEN, 1, 1, 1, 8, 0);
	CHECK(!stacktab__resolve(t, &rs));
	rs = make(&a, TP_STACK_NEW, 2, 1, 1, 8, 0x20);
	CHECK(stacktab__resolve(t, &rs));
	CHECK(stacktab__roll(t, &gen) && gen == 2);
	/* Generation 0 is gone now; 1 stays. */
	rs = make(&b, TP_STACK_SEEN, 1, 0, 1, 8, 0);
	CHECK(!stacktab__resolve(t, &rs));
	rs = make(&b, TP_STACK_SEEN, 2, 1, 1, 8, 0);
	CHECK(stacktab__resolve(t, &rs) && rs.frames[0] == 0x20);
	/* A NEW record of an old generation is used, not kept. */
	rs = make(&a, TP_STACK_NEW, 3, 0, 1, 8, 0x30);
	CHECK(stacktab__resolve(t, &rs) && rs.frames == a.frames);
	rs = make(&b, TP_STACK_SEEN, 3, 0, 1, 8, 0);
	CHECK(!stacktab__resolve(t, &rs));
	stacktab__free(t);
}

int main(void)
{
	RUN(test_seen_gets_frames);
	RUN(test_generations);
	return check_failed_total != 0;
}
