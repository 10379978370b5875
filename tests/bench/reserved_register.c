/* The cost of reserving a register for tags, for
 * tests/bench/reserved_register.sh: the same compute kernels built with and
 * without -ffixed-r15 (no tag is ever written; only the compiler has one
 * register fewer).
 *
 *	reserved_register KERNEL SCALE
 *
 * runs one kernel (SCALE 1: a few tenths of a second), prints "SECONDS CHECKSUM" (the kernel's time alone, by
 * CLOCK_MONOTONIC; both builds must print the same checksum). Kernels:
 *	sha256		SHA-256 compression over 64 KiB, chained, 128 MiB
 *			per unit of SCALE: eight state words, the message schedule
 *			and the round temporaries compete for registers (eight
 *			rounds unrolled, as fast C implementations do).
 *			Checked against the FIPS 180-2 digest of "abc" first.
 *	hashjoin	a hash-join probe: 2^15 build rows (key + three payload
 *			columns, open addressing, in cache), 16M probe keys per
 *			unit of SCALE from an inline generator, half of them
 *			hits, six aggregates kept for the hits.
 *	crc32		CRC-32 (the zlib/Ethernet one) by slicing-by-8, two
 *			words a step: sixteen table lookups in flight. 512 MiB
 *			per unit. Checked against the CRC of "123456789". */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- SHA-256 (FIPS 180-4), constants derived as the standard defines
 * them: the fractional parts of the square roots (initial hash) and cube
 * roots (round constants) of the first primes. ---- */

static uint32_t K[64], H0[8];

static uint32_t frac32(double x)
{
	return (uint32_t)((x - floor(x)) * 4294967296.0);
}

static void sha256_consts(void)
{
	int n = 0;

	for (int p = 2; n < 64; p++) {
		int prime = 1;

		for (int d = 2; d * d <= p && prime; d++)
			prime = p % d != 0;
		if (!prime)
			continue;
		if (n < 8)
			H0[n] = frac32(sqrt(p));
		K[n++] = frac32(cbrt(p));
	}
}

static inline uint32_t ror(uint32_t x, int n)
{
	return x >> n | x << (32 - n);
}

static void sha256_block(uint32_t st[8], const uint8_t *blk)
{
	uint32_t w[64], a, b, c, d, e, f, g, h;

	for (int t = 0; t < 16; t++)
		w[t] = (uint32_t)blk[4 * t] << 24 | (uint32_t)blk[4 * t + 1] << 16 |
		       (uint32_t)blk[4 * t + 2] << 8 | blk[4 * t + 3];
	for (int t = 16; t < 64; t++) {
		uint32_t s0 = ror(w[t - 15], 7) ^ ror(w[t - 15], 18) ^ w[t - 15] >> 3;
		uint32_t s1 = ror(w[t - 2], 17) ^ ror(w[t - 2], 19) ^ w[t - 2] >> 10;

		w[t] = w[t - 16] + s0 + w[t - 7] + s1;
	}
	a = st[0], b = st[1], c = st[2], d = st[3];
	e = st[4], f = st[5], g = st[6], h = st[7];
	/* Eight rounds a step, the variables' roles rotating instead of their
	 * values (no moves): all eight stay live in registers with the
	 * temporaries, the index and two base pointers. */
#define ROUND(a, b, c, d, e, f, g, h, t) do {					\
		uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) +	\
			      ((e & f) ^ (~e & g)) + K[t] + w[t];		\
		d += t1;							\
		h = t1 + (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) +		\
		    ((a & b) ^ (a & c) ^ (b & c));				\
	} while (0)
	for (int t = 0; t < 64; t += 8) {
		ROUND(a, b, c, d, e, f, g, h, t);
		ROUND(h, a, b, c, d, e, f, g, t + 1);
		ROUND(g, h, a, b, c, d, e, f, t + 2);
		ROUND(f, g, h, a, b, c, d, e, t + 3);
		ROUND(e, f, g, h, a, b, c, d, t + 4);
		ROUND(d, e, f, g, h, a, b, c, t + 5);
		ROUND(c, d, e, f, g, h, a, b, t + 6);
		ROUND(b, c, d, e, f, g, h, a, t + 7);
	}
#undef ROUND
	st[0] += a, st[1] += b, st[2] += c, st[3] += d;
	st[4] += e, st[5] += f, st[6] += g, st[7] += h;
}

/* Whole message, with padding: for the self-check only. */
static void sha256(const uint8_t *msg, size_t len, uint8_t out[32])
{
	uint32_t st[8];
	uint8_t tail[128] = { 0 };
	size_t full = len / 64 * 64, rest = len - full, tlen = rest < 56 ? 64 : 128;
	uint64_t bits = (uint64_t)len * 8;

	memcpy(st, H0, sizeof(st));
	for (size_t i = 0; i < full; i += 64)
		sha256_block(st, msg + i);
	memcpy(tail, msg + full, rest);
	tail[rest] = 0x80;
	for (int i = 0; i < 8; i++)
		tail[tlen - 1 - i] = (uint8_t)(bits >> (8 * i));
	for (size_t i = 0; i < tlen; i += 64)
		sha256_block(st, tail + i);
	for (int i = 0; i < 32; i++)
		out[i] = (uint8_t)(st[i / 4] >> (24 - 8 * (i % 4)));
}

static int sha256_selfcheck(void)
{
	static const uint8_t abc[32] = {	/* FIPS 180-2, appendix B.1 */
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde,
		0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c,
		0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
	};
	uint8_t d[32];

	sha256((const uint8_t *)"abc", 3, d);
	return memcmp(d, abc, 32) ? -1 : 0;
}

NOINLINE uint64_t sha256_kernel(const uint8_t *buf, size_t len, long reps)
{
	uint32_t st[8];

	memcpy(st, H0, sizeof(st));
	for (long r = 0; r < reps; r++)
		for (size_t i = 0; i < len; i += 64)
			sha256_block(st, buf + i);
	return (uint64_t)st[0] << 32 ^ st[7];
}

/* ---- hash-join probe ---- */

#define HJ_ROWS		(1u << 15)
#define HJ_SLOTS	(HJ_ROWS * 2)

struct hj_slot {
	uint64_t key;			/* 0: empty */
	uint32_t qty, price, disc, pad;
};

static struct hj_slot *hj_table;

static inline uint64_t hj_hash(uint64_t k)
{
	k ^= k >> 31;
	k *= 0x7fb5d329728ea185ULL;
	k ^= k >> 27;
	return k;
}

/* Build keys are the odd numbers 1, 3, ... 2*HJ_ROWS-1. */
static void hj_build(void)
{
	hj_table = calloc(HJ_SLOTS, sizeof(*hj_table));
	if (!hj_table)
		exit(1);
	for (uint64_t r = 0; r < HJ_ROWS; r++) {
		uint64_t key = 2 * r + 1, s = hj_hash(key) & (HJ_SLOTS - 1);

		while (hj_table[s].key)
			s = (s + 1) & (HJ_SLOTS - 1);
		hj_table[s] = (struct hj_slot){ key, (uint32_t)(r % 50 + 1),
						(uint32_t)(r * 7919 % 100000), (uint32_t)(r % 11), 0 };
	}
}

/* Probe keys 1 .. 2*HJ_ROWS from a xorshift generator: half odd (hits). */
NOINLINE uint64_t hashjoin_kernel(long probes)
{
	const struct hj_slot *tab = hj_table;
	uint64_t x = 88172645463325252ULL, hits = 0, sum_qty = 0, revenue = 0, disc_rev = 0,
		 max_price = 0, min_price = UINT64_MAX;

	for (long i = 0; i < probes; i++) {
		uint64_t key, s;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		key = (x % (2 * HJ_ROWS)) + 1;
		for (s = hj_hash(key) & (HJ_SLOTS - 1); tab[s].key; s = (s + 1) & (HJ_SLOTS - 1)) {
			if (tab[s].key != key)
				continue;
			hits++;
			sum_qty += tab[s].qty;
			revenue += (uint64_t)tab[s].qty * tab[s].price;
			disc_rev += (uint64_t)tab[s].qty * tab[s].price * (100 - tab[s].disc);
			max_price = tab[s].price > max_price ? tab[s].price : max_price;
			min_price = tab[s].price < min_price ? tab[s].price : min_price;
			break;
		}
	}
	return hits ^ sum_qty << 8 ^ revenue << 16 ^ disc_rev ^ max_price << 40 ^ min_price << 48;
}

/* ---- CRC-32, reflected polynomial 0xedb88320, slicing-by-8 ---- */

static uint32_t crc_tab[8][256];

static void crc32_tables(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? c >> 1 ^ 0xedb88320u : c >> 1;
		crc_tab[0][i] = c;
	}
	for (int t = 1; t < 8; t++)
		for (int i = 0; i < 256; i++)
			crc_tab[t][i] = crc_tab[t - 1][i] >> 8 ^ crc_tab[0][crc_tab[t - 1][i] & 0xff];
}

static inline uint32_t crc32_word(uint32_t crc, uint64_t w)
{
	w ^= crc;
	return crc_tab[7][w & 0xff] ^ crc_tab[6][w >> 8 & 0xff] ^
	       crc_tab[5][w >> 16 & 0xff] ^ crc_tab[4][w >> 24 & 0xff] ^
	       crc_tab[3][w >> 32 & 0xff] ^ crc_tab[2][w >> 40 & 0xff] ^
	       crc_tab[1][w >> 48 & 0xff] ^ crc_tab[0][w >> 56];
}

/* Raw update (no pre/post inversion) of crc over len bytes. */
static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t len)
{
	for (; len >= 16; p += 16, len -= 16) {
		uint64_t w0, w1;

		memcpy(&w0, p, 8);	/* little-endian machines only */
		memcpy(&w1, p + 8, 8);
		crc = crc32_word(crc, w0);
		crc = crc32_word(crc, w1);
	}
	for (; len; p++, len--)
		crc = crc >> 8 ^ crc_tab[0][(crc ^ *p) & 0xff];
	return crc;
}

NOINLINE uint64_t crc32_kernel(const uint8_t *buf, size_t len, long reps)
{
	uint32_t crc = 0xffffffffu;

	for (long r = 0; r < reps; r++)
		crc = crc32_update(crc, buf, len);
	return ~crc;
}

int main(int argc, char **argv)
{
	double scale, t0, t1;
	uint64_t sum;

	if (argc != 3 || (scale = atof(argv[2])) <= 0)
		return 2;
	if (!strcmp(argv[1], "sha256")) {
		static uint8_t buf[64 * 1024];
		long reps = (long)(scale * 2048);	/* 128 MiB per unit */

		sha256_consts();
		if (sha256_selfcheck()) {
			fprintf(stderr, "sha256: wrong digest of \"abc\"\n");
			return 1;
		}
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)(i * 131 + (i >> 8));
		t0 = now_s();
		sum = sha256_kernel(buf, sizeof(buf), reps);
		t1 = now_s();
	} else if (!strcmp(argv[1], "crc32")) {
		static uint8_t buf[64 * 1024];
		long reps = (long)(scale * 8192);	/* 512 MiB per unit */

		crc32_tables();
		if (~crc32_update(0xffffffffu, (const uint8_t *)"123456789", 9) != 0xcbf43926u) {
			fprintf(stderr, "crc32: wrong check value\n");
			return 1;
		}
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)(i * 131 + (i >> 8));
		t0 = now_s();
		sum = crc32_kernel(buf, sizeof(buf), reps);
		t1 = now_s();
	} else if (!strcmp(argv[1], "hashjoin")) {
		hj_build();
		t0 = now_s();
		sum = hashjoin_kernel((long)(scale * (1 << 24)));
		t1 = now_s();
		free(hj_table);
	} else {
		return 2;
	}
	printf("%.6f %016llx\n", t1 - t0, (unsigned long long)sum);
	return 0;
}
