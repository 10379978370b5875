/* Fuzz target: the OTEP 4719 reading protocol (procctx__read_with, the
 * code procctx__read runs on a live process) against memory that changes
 * between reads, as a process that republishes while the agent reads it
 * does: the header, the payload and the re-read of published_at each come
 * from the next bytes of the input, so a payload can be torn from its
 * header, a re-read can differ, and a read can fail midway. The same
 * context is read several times, as ctxwatch reads a process again, so
 * the unchanged, refused and replaced paths all run.
 *
 * Input, consumed one read at a time (see ctxread_seeds.py for seeds):
 *   header read:  ctl, size (u32 LE), published_at (u8)
 *                 ctl bit 7: the read fails (-EFAULT; bit 6: -ESRCH);
 *                 bit 0: a wrong signature; bit 1: a wrong version
 *   payload read: ctl, then the payload's bytes (zeros past the input)
 *                 ctl bit 7: the read fails
 *   re-read:      ctl: bit 0 set, the header's published_at again; else
 *                 ctl >> 1, a torn value
 * Checked: a read returns 0 only when the re-read matched the header it
 * decoded, and the context then carries that published_at. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "proc/procctx.h"

#define HDR_ADDR 0x7f0000000000ull
#define PAYLOAD_ADDR 0x7f0000100000ull

struct torn_mem {
	const uint8_t *p, *end;
	uint64_t served_at;	/* published_at of the last header served */
	uint64_t reread_at;	/* value of the last re-read served */
};

static uint8_t take(struct torn_mem *m)
{
	return m->p < m->end ? *m->p++ : 0;
}

static int read_header(struct torn_mem *m, uint8_t *buf)
{
	uint8_t ctl = take(m);
	uint32_t size = 0, version = 2;
	uint64_t payload = PAYLOAD_ADDR;

	if (ctl & 0x80)
		return ctl & 0x40 ? -ESRCH : -EFAULT;
	for (int k = 0; k < 4; k++)
		size |= (uint32_t)take(m) << (8 * k);
	m->served_at = take(m);
	if (ctl & 2)
		version = 1;
	memcpy(buf, ctl & 1 ? "OTEL_CTY" : "OTEL_CTX", 8);
	memcpy(buf + 8, &version, 4);
	memcpy(buf + 12, &size, 4);
	memcpy(buf + 16, &m->served_at, 8);
	memcpy(buf + 24, &payload, 8);
	return 0;
}

static int read_torn(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct torn_mem *m = arg;
	size_t have, n;
	uint8_t ctl;

	if (addr == HDR_ADDR && len == 32)
		return read_header(m, buf);
	if (addr == HDR_ADDR + 16 && len == 8) {
		ctl = take(m);
		m->reread_at = ctl & 1 ? m->served_at : ctl >> 1;
		memcpy(buf, &m->reread_at, 8);
		return 0;
	}
	if (addr != PAYLOAD_ADDR)	/* the protocol read somewhere else */
		abort();
	if (take(m) & 0x80)
		return -EFAULT;
	have = (size_t)(m->end - m->p);
	n = len < have ? len : have;

	memcpy(buf, m->p, n);
	memset((uint8_t *)buf + n, 0, len - n);
	m->p += n;
	return 0;
}

static volatile uintptr_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct torn_mem m = { data, data + size, 0, 0 };
	struct procctx ctx = { 0 };
	uintptr_t x = 0;

	for (int round = 0; round < 8 && m.p < m.end; round++) {
		int ret = procctx__read_with(&ctx, HDR_ADDR, read_torn, &m);

		if (ret == 0 && (ctx.published_at != m.served_at ||
				 m.reread_at != m.served_at ||
				 ctx.header_addr != HDR_ADDR))
			abort();	/* a torn read was taken as whole */
		for (size_t i = 0; i < ctx.nkeys; i++)
			x += ctx.keys[i] ? strlen(ctx.keys[i]) : 0;
		x += (uintptr_t)procctx__attr(&ctx, "tagprof.code.table");
		if (ctx.service_name)
			x += strlen(ctx.service_name);
	}
	sink = x;
	procctx__clear(&ctx);
	return 0;
}
