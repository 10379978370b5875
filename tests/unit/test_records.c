/* Ring-buffer records checked before anything is read: every length a
 * record states against its size, and a sample cut into its parts. */
#include "check.h"
#include "capture/records.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A sample record with ctx bytes of context, nu + nk frames and, when
 * stack, registers and a stack copy; 8-aligned like the ring buffer's. */
static uint64_t rec[(sizeof(struct tp_sample) + TP_CTX_SPACE +
		     (2 * TP_MAX_FRAMES + 1) * 8 + sizeof(struct tp_uregs) +
		     TP_STACK_MAX) / 8 + 1];

static size_t make_sample(unsigned ctx, unsigned nu, unsigned nk,
			  unsigned stack)
{
	struct tp_sample *s = (struct tp_sample *)rec;
	size_t size = sizeof(*s) + ((ctx + 7) & ~7u) + (nu + nk) * 8;

	memset(rec, 0, sizeof(rec));
	s->type = TP_REC_SAMPLE;
	s->ctx_size = ctx;
	s->user_depth = nu;
	s->kern_depth = nk;
	if (stack) {
		s->ustack_flags = TP_USTACK_REGS;
		s->stack_size = stack;
		size += sizeof(struct tp_uregs) + stack;
	}
	return size;
}

static void test_sample_parts(void)
{
	const uint8_t *base = (const uint8_t *)rec;
	struct raw_sample rs;
	size_t size;

	/* 13 bytes of context are padded to 16 before the frames. */
	size = make_sample(13, 3, 2, 0);
	CHECK(records__parse(rec, size, &rs) == RECORD_SAMPLE);
	CHECK((const uint8_t *)rs.s == base);
	CHECK(rs.ctx == base + sizeof(struct tp_sample));
	CHECK((const uint8_t *)rs.frames ==
	      base + sizeof(struct tp_sample) + 16);
	CHECK(!rs.regs && !rs.stack);

	size = make_sample(0, 4, 0, 100);
	CHECK(records__parse(rec, size, &rs) == RECORD_SAMPLE);
	CHECK((const uint8_t *)rs.frames == base + sizeof(struct tp_sample));
	CHECK((const uint8_t *)rs.regs == base + sizeof(struct tp_sample) + 32);
	CHECK(rs.stack == (const uint8_t *)(rs.regs + 1));
	/* A larger record than needed is fine (the ring buffer pads). */
	CHECK(records__parse(rec, size + 8, &rs) == RECORD_SAMPLE);
}

/* Each length that says more than the record holds makes it malformed. */
static void test_sample_lengths(void)
{
	struct tp_sample *s = (struct tp_sample *)rec;
	struct raw_sample rs;
	size_t size;

	CHECK(records__parse(rec, 3, &rs) == RECORD_MALFORMED);
	size = make_sample(0, 0, 0, 0);
	CHECK(records__parse(rec, size, &rs) == RECORD_SAMPLE);
	CHECK(records__parse(rec, size - 1, &rs) == RECORD_MALFORMED);
	size = make_sample(8, 2, 2, 0);
	CHECK(records__parse(rec, size - 8, &rs) == RECORD_MALFORMED);
	size = make_sample(0, TP_MAX_FRAMES, 0, 0);
	CHECK(records__parse(rec, size, &rs) == RECORD_SAMPLE);
	s->user_depth = TP_MAX_FRAMES + 1;
	CHECK(records__parse(rec, sizeof(rec), &rs) == RECORD_MALFORMED);
	make_sample(0, 0, TP_MAX_FRAMES, 0);
	s->kern_depth = TP_MAX_FRAMES + 1;
	CHECK(records__parse(rec, sizeof(rec), &rs) == RECORD_MALFORMED);
	make_sample(0, 0, 0, 0);
	s->ctx_size = TP_CTX_SPACE + 1;
	CHECK(records__parse(rec, sizeof(rec), &rs) == RECORD_MALFORMED);
	/* The stack copy: its size bounded, and within the record. */
	size = make_sample(0, 1, 0, 64);
	CHECK(records__parse(rec, size - 1, &rs) == RECORD_MALFORMED);
	s->stack_size = TP_STACK_MAX + 1;
	CHECK(records__parse(rec, sizeof(rec), &rs) == RECORD_MALFORMED);
}

/* A sample record shorter than its header is refused before any header
 * field past its size is read (the fuzzer's find: ustack_flags, at byte
 * 83, was read first): the record ends against an unmapped page. */
static void test_short_sample_at_page_end(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct raw_sample rs;
	uint8_t *r;

	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED)
		return;
	CHECK(!mprotect(m + pg, pg, PROT_NONE));
	r = m + pg - 8;
	memset(r, 0, 8);
	*(uint32_t *)r = TP_REC_SAMPLE;
	CHECK(records__parse(r, 8, &rs) == RECORD_MALFORMED);
	munmap(m, 2 * pg);
}

/* A record that names its stacks by id (include/sample_event.h): the user
 * frames unless SEEN; then, where there are kernel frames, their id and,
 * unless SEEN, the frames. Nothing is left out when a stack copy follows
 * (the copy would sit where the frames go). */
static void test_stack_by_id(void)
{
	struct tp_sample *s = (struct tp_sample *)rec;
	size_t size = make_sample(13, 0, 0, 0);	/* context padded to 16 */
	uint64_t *p = (uint64_t *)((uint8_t *)rec + sizeof(*s) + 16);
	struct raw_sample rs;

	s->user_depth = 5;
	s->kern_depth = 2;
	s->stack_id = 42;
	/* Both sent before: only the kernel frames' id. */
	s->stack_kind = TP_STACK_SEEN;
	s->kstack_kind = TP_STACK_SEEN;
	p[0] = 77;
	CHECK(records__parse(rec, size, &rs) == RECORD_MALFORMED);
	CHECK(records__parse(rec, size + 8, &rs) == RECORD_SAMPLE);
	CHECK(!rs.frames && !rs.uframes && !rs.kframes && rs.kstack_id == 77);
	/* The user frames whole, the kernel's by id. */
	s->stack_kind = TP_STACK_NEW;
	p[5] = 78;
	CHECK(records__parse(rec, size + 5 * 8, &rs) == RECORD_MALFORMED);
	CHECK(records__parse(rec, size + 6 * 8, &rs) == RECORD_SAMPLE);
	CHECK(!rs.frames && rs.uframes == p && !rs.kframes &&
	      rs.kstack_id == 78);
	/* The user frames by id, the kernel's whole: id first. */
	s->stack_kind = TP_STACK_SEEN;
	s->kstack_kind = TP_STACK_NEW;
	p[0] = 79;
	CHECK(records__parse(rec, size + 2 * 8, &rs) == RECORD_MALFORMED);
	CHECK(records__parse(rec, size + 3 * 8, &rs) == RECORD_SAMPLE);
	CHECK(!rs.uframes && rs.kframes == p + 1 && rs.kstack_id == 79);
	/* Both whole. */
	s->stack_kind = TP_STACK_NEW;
	p[5] = 80;
	CHECK(records__parse(rec, size + 7 * 8, &rs) == RECORD_MALFORMED);
	CHECK(records__parse(rec, size + 8 * 8, &rs) == RECORD_SAMPLE);
	CHECK(rs.uframes == p && rs.kframes == p + 6 && rs.kstack_id == 80);
	/* Without kernel frames there is no kernel id, and none may be
	 * claimed; with ids off, neither part has one. */
	s->kern_depth = 0;
	CHECK(records__parse(rec, sizeof(rec), &rs) == RECORD_MALFORMED);
	s->kstack_kind = TP_STACK_FRAMES;
	CHECK(records__parse(rec, size + 5 * 8, &rs) == RECORD_SAMPLE);
	CHECK(rs.uframes == p && !rs.kframes);
	s->kern_depth = 2;
	CHECK(records__parse(rec, sizeof(rec), &rs) == RECORD_MALFORMED);
	s->stack_kind = TP_STACK_FRAMES;
	s->kstack_kind = TP_STACK_SEEN;
	CHECK(records__parse(rec, sizeof(rec), &rs) == RECORD_MALFORMED);
	/* A stack copy follows whole frames only. */
	s->ustack_flags = TP_USTACK_REGS;
	s->stack_kind = TP_STACK_NEW;
	CHECK(records__parse(rec, sizeof(rec), &rs) == RECORD_MALFORMED);
	s->stack_kind = TP_STACK_SEEN;
	s->kstack_kind = TP_STACK_NEW;
	CHECK(records__parse(rec, sizeof(rec), &rs) == RECORD_MALFORMED);
	s->stack_kind = TP_STACK_NEW;
	CHECK(records__parse(rec, sizeof(rec), &rs) == RECORD_SAMPLE);
	CHECK(rs.regs && (const uint8_t *)rs.regs ==
				 (const uint8_t *)(p + 8));
	s->ustack_flags = 0;
	s->stack_kind = TP_STACK_SEEN + 1;
	CHECK(records__parse(rec, sizeof(rec), &rs) == RECORD_MALFORMED);
	s->stack_kind = TP_STACK_NEW;
	s->kstack_kind = TP_STACK_SEEN + 1;
	CHECK(records__parse(rec, sizeof(rec), &rs) == RECORD_MALFORMED);
}

static void test_task_events(void)
{
	struct tp_task_event t = { .type = TP_REC_EXEC, .pid = 42 };
	struct raw_sample rs;

	CHECK(records__parse(&t, sizeof(t), &rs) == RECORD_EXEC);
	t.type = TP_REC_EXIT;
	CHECK(records__parse(&t, sizeof(t), &rs) == RECORD_EXIT);
	CHECK(records__parse(&t, sizeof(t) - 1, &rs) == RECORD_MALFORMED);
	t.type = 99;
	CHECK(records__parse(&t, sizeof(t), &rs) == RECORD_MALFORMED);
}

int main(void)
{
	RUN(test_sample_parts);
	RUN(test_sample_lengths);
	RUN(test_short_sample_at_page_end);
	RUN(test_stack_by_id);
	RUN(test_task_events);
	CHECK_EXIT();
}
