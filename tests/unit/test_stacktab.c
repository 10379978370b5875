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
	/* as records__parse leaves it */
	if (kind == TP_STACK_FRAMES)
		return (struct raw_sample){ .s = &r->s, .frames = r->frames };
	return (struct raw_sample){ .s = &r->s,
		.uframes = kind == TP_STACK_NEW ? r->frames : NULL };
}

/* The same with nk kernel frames kbase, kbase+1, ... after the user
 * frames, named by kid and sent as kkind. */
static struct raw_sample make2(struct rec *r, uint8_t kind, uint64_t id,
			       uint32_t pid, unsigned nu, uint64_t base,
			       uint8_t kkind, uint64_t kid, unsigned nk,
			       uint64_t kbase)
{
	struct raw_sample rs = make(r, kind, id, 0, pid, nu, base);

	r->s.kern_depth = nk;
	r->s.kstack_kind = kkind;
	for (unsigned i = 0; i < nk; i++)
		r->frames[nu + i] = kbase + i;
	rs.kstack_id = kid;
	rs.kframes = kkind == TP_STACK_NEW ? r->frames + nu : NULL;
	return rs;
}

static void test_seen_gets_frames(void)
{
	struct stacktab *t = stacktab__new(0);
	struct rec a, b;
	struct raw_sample rs;

	CHECK(t);
	rs = make(&a, TP_STACK_NEW, 7, 0, 100, 3, 0x1000);
	CHECK(stacktab__resolve(t, &rs));
	CHECK(rs.frames == a.frames);	/* no kernel frames: no copy */
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

/* The user frames and the kernel frames are named apart: a kernel stack
 * sent with one process's stack names it under another's, and a user
 * stack meets a new kernel stack without being sent again. */
static void test_parts(void)
{
	struct stacktab *t = stacktab__new(0);
	struct rec a, b;
	struct raw_sample rs;

	CHECK(t);
	rs = make2(&a, TP_STACK_NEW, 7, 100, 3, 0x1000,
		   TP_STACK_NEW, 9, 2, 0xf000);
	CHECK(stacktab__resolve(t, &rs));
	CHECK(rs.frames && rs.frames[0] == 0x1000 && rs.frames[2] == 0x1002 &&
	      rs.frames[3] == 0xf000 && rs.frames[4] == 0xf001);
	memset(a.frames, 0, sizeof(a.frames));
	/* Both by id. */
	rs = make2(&b, TP_STACK_SEEN, 7, 100, 3, 0, TP_STACK_SEEN, 9, 2, 0);
	CHECK(stacktab__resolve(t, &rs));
	CHECK(rs.frames && rs.frames[2] == 0x1002 && rs.frames[3] == 0xf000);
	/* Another process's user stack over the same kernel stack. */
	rs = make2(&a, TP_STACK_NEW, 8, 200, 2, 0x2000,
		   TP_STACK_SEEN, 9, 2, 0);
	CHECK(stacktab__resolve(t, &rs));
	CHECK(rs.frames && rs.frames[1] == 0x2001 && rs.frames[2] == 0xf000 &&
	      rs.frames[3] == 0xf001);
	/* A known user stack over a new kernel stack. */
	rs = make2(&a, TP_STACK_SEEN, 7, 100, 3, 0, TP_STACK_NEW, 10, 1,
		   0xe000);
	CHECK(stacktab__resolve(t, &rs));
	CHECK(rs.frames && rs.frames[0] == 0x1000 && rs.frames[3] == 0xe000);
	/* Refused: a kernel id not sent, one at another depth, a user id
	 * used as a kernel id (its pid and depths differ), an unknown user
	 * id over a known kernel id. */
	rs = make2(&b, TP_STACK_SEEN, 7, 100, 3, 0, TP_STACK_SEEN, 11, 2, 0);
	CHECK(!stacktab__resolve(t, &rs));
	rs = make2(&b, TP_STACK_SEEN, 7, 100, 3, 0, TP_STACK_SEEN, 9, 3, 0);
	CHECK(!stacktab__resolve(t, &rs));
	rs = make2(&b, TP_STACK_SEEN, 7, 100, 3, 0, TP_STACK_SEEN, 7, 3, 0);
	CHECK(!stacktab__resolve(t, &rs));
	rs = make2(&b, TP_STACK_SEEN, 12, 100, 3, 0, TP_STACK_SEEN, 9, 2, 0);
	CHECK(!stacktab__resolve(t, &rs));
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
	CHECK(!stacktab__roll(t, 0, &gen));	/* empty: nothing to do */
	rs = make(&a, TP_STACK_NEW, 1, 0, 1, 8, 0x10);
	CHECK(stacktab__resolve(t, &rs));
	CHECK(stacktab__bytes(t) > 0);
	CHECK(stacktab__roll(t, 0, &gen) && gen == 1);
	/* Generation 0's records on their way still resolve... */
	rs = make(&b, TP_STACK_SEEN, 1, 0, 1, 8, 0);
	CHECK(stacktab__resolve(t, &rs) && rs.frames[7] == 0x17);
	/* ...but not as generation 1's, which must be sent whole first. */
	rs = make(&b, TP_STACK_SEEN, 1, 1, 1, 8, 0);
	CHECK(!stacktab__resolve(t, &rs));
	rs = make(&a, TP_STACK_NEW, 2, 1, 1, 8, 0x20);
	CHECK(stacktab__resolve(t, &rs));
	CHECK(stacktab__roll(t, 0, &gen) && gen == 2);
	/* Generation 0 is gone now; 1 stays. */
	rs = make(&b, TP_STACK_SEEN, 1, 0, 1, 8, 0);
	CHECK(!stacktab__resolve(t, &rs));
	rs = make(&b, TP_STACK_SEEN, 2, 1, 1, 8, 0);
	CHECK(stacktab__resolve(t, &rs) && rs.frames[0] == 0x20);
	/* A generation a minute old rolls, full or not; an empty one does
	 * not (the clock starts at the first call). */
	{
		struct stacktab *u = stacktab__new(0);
		uint64_t t0 = 5000000000ull;

		CHECK(u && !stacktab__roll(u, t0, &gen));
		CHECK(!stacktab__roll(u, t0 + STACKTAB_AGE_NS, &gen));
		rs = make(&a, TP_STACK_NEW, 4, 0, 1, 8, 0x40);
		CHECK(stacktab__resolve(u, &rs));
		CHECK(!stacktab__roll(u, t0 + STACKTAB_AGE_NS / 2, &gen));
		CHECK(stacktab__roll(u, t0 + STACKTAB_AGE_NS, &gen) && gen == 1);
		CHECK(!stacktab__roll(u, t0 + STACKTAB_AGE_NS + 1, &gen));
		stacktab__free(u);
	}
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
	RUN(test_parts);
	RUN(test_generations);
	return check_failed_total != 0;
}
