/* util/pbcost: the lower bound on what unpacking a pprof allocates. It is
 * checked against protobuf-c's own allocations, counted by an allocator,
 * on built profiles and on thousands of corrupted ones: a bound over what
 * the decoder takes would refuse a profile the budget allows. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "profile.pb-c.h"
#include "util/pbcost.h"

#define PROFILE (&perftools__profiles__profile__descriptor)

static size_t allocated;

static void *count_alloc(void *data, size_t size)
{
	(void)data;
	allocated += size;
	return malloc(size);
}

static void count_free(void *data, void *p)
{
	(void)data;
	free(p);
}

static ProtobufCAllocator counting = {
	.alloc = count_alloc, .free = count_free,
};

/* What protobuf-c allocates to unpack buf; SIZE_MAX when it refuses. */
static size_t decoder_allocates(const uint8_t *buf, size_t len)
{
	Perftools__Profiles__Profile *p;

	allocated = 0;
	p = perftools__profiles__profile__unpack(&counting, len, buf);
	if (!p)
		return SIZE_MAX;
	perftools__profiles__profile__free_unpacked(p, &counting);
	return allocated;
}

/* A profile with a bit of everything, packed into *len bytes (malloc'd). */
static uint8_t *sample_profile(size_t *len)
{
	static char *strs[] = { "", "cpu", "nanoseconds", "main", "a.c",
				"query_id" };
	uint64_t locs[3][2] = { { 1, 2 }, { 2 }, { 1, 2 } };
	int64_t vals[3][2] = { { 1, 10 }, { 2, 20 }, { 3, 30 } };
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__Sample s[3], *sp[3];
	Perftools__Profiles__Label lab = PERFTOOLS__PROFILES__LABEL__INIT,
				   *labp = &lab;
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
				       *vtp = &vt;
	Perftools__Profiles__Line line = PERFTOOLS__PROFILES__LINE__INIT,
				  *linep = &line;
	Perftools__Profiles__Location loc[2], *locp[2];
	Perftools__Profiles__Function fn = PERFTOOLS__PROFILES__FUNCTION__INIT,
				      *fnp = &fn;
	uint8_t *buf;

	lab.key = 5;
	lab.num = 7;
	for (int i = 0; i < 3; i++) {
		perftools__profiles__sample__init(&s[i]);
		s[i].n_location_id = i == 1 ? 1 : 2;
		s[i].location_id = locs[i];
		s[i].n_value = 2;
		s[i].value = vals[i];
		s[i].n_label = i == 2;
		s[i].label = &labp;
		sp[i] = &s[i];
	}
	line.function_id = 1;
	line.line = 12;
	for (int i = 0; i < 2; i++) {
		perftools__profiles__location__init(&loc[i]);
		loc[i].id = (uint64_t)i + 1;
		loc[i].address = 0x1000 + (uint64_t)i;
		loc[i].n_line = 1;
		loc[i].line = &linep;
		locp[i] = &loc[i];
	}
	fn.id = 1;
	fn.name = 3;
	fn.filename = 4;
	vt.type = 1;
	vt.unit = 2;
	p.n_sample_type = 1;
	p.sample_type = &vtp;
	p.n_sample = 3;
	p.sample = sp;
	p.n_location = 2;
	p.location = locp;
	p.n_function = 1;
	p.function = &fnp;
	p.n_string_table = 6;
	p.string_table = strs;
	*len = perftools__profiles__profile__get_packed_size(&p);
	buf = malloc(*len);
	if (buf)
		perftools__profiles__profile__pack(&p, buf);
	return buf;
}

/* The bound of the profile above, counted by hand from what the header
 * says it counts. */
static void test_bound_counts_the_arrays(void)
{
	size_t len, want, got;
	uint8_t *buf = sample_profile(&len);

	CHECK(buf);
	want = sizeof(Perftools__Profiles__Profile) +
	       /* sample_type */
	       sizeof(void *) + sizeof(Perftools__Profiles__ValueType) +
	       /* 3 samples: 5 location ids, 6 values, 1 label */
	       3 * (sizeof(void *) + sizeof(Perftools__Profiles__Sample)) +
	       5 * 8 + 6 * 8 +
	       sizeof(void *) + sizeof(Perftools__Profiles__Label) +
	       /* 2 locations of a line each, a function */
	       2 * (sizeof(void *) + sizeof(Perftools__Profiles__Location) +
		    sizeof(void *) + sizeof(Perftools__Profiles__Line)) +
	       sizeof(void *) + sizeof(Perftools__Profiles__Function) +
	       /* strings: pointers, bytes and their NULs */
	       6 * sizeof(char *) + (0 + 3 + 11 + 4 + 3 + 8) + 6;
	got = pbcost__lower_bound(PROFILE, buf, len, SIZE_MAX);
	if (got != want)
		fprintf(stderr, "  bound %zu, counted by hand %zu\n", got, want);
	CHECK(got == want);
	CHECK(got <= decoder_allocates(buf, len));
	free(buf);
}

/* Corrupted profiles, bytes changed, cut and repeated: wherever the decoder
 * takes one, the bound is at most what it allocated. Enough of them decode
 * for the check to mean something. */
static void test_bound_below_decoder(void)
{
	size_t len, decoded = 0;
	uint8_t *orig = sample_profile(&len), buf[1024];

	CHECK(orig && len <= sizeof(buf) / 2);
	for (int iter = 0; iter < 20000; iter++) {
		size_t n = len, got, took;

		memcpy(buf, orig, len);
		if (iter % 3 == 0) {	/* the message twice: arrays joined */
			memcpy(buf + len, orig, len);
			n = 2 * len;
		}
		for (int k = 1 + (int)check_rnd(3); k > 0; k--)
			buf[check_rnd(n)] = (uint8_t)check_rnd(256);
		if (iter % 5 == 0)
			n = check_rnd(n + 1);
		got = pbcost__lower_bound(PROFILE, buf, n, SIZE_MAX);
		took = decoder_allocates(buf, n);
		if (took == SIZE_MAX)
			continue;
		decoded++;
		if (got > took)
			fprintf(stderr, "  iteration %d: bound %zu over the "
				"decoder's %zu\n", iter, got, took);
		CHECK(got <= took);
	}
	fprintf(stderr, "  %zu of 20000 decoded\n", decoded);
	CHECK(decoded > 2000);
	free(orig);
}

/* n empty samples (field 2, length 0): 2 bytes each. */
static uint8_t *empty_samples(size_t n)
{
	uint8_t *b = malloc(2 * n);

	for (size_t i = 0; b && i < n; i++) {
		b[2 * i] = 0x12;
		b[2 * i + 1] = 0;
	}
	return b;
}

/* A million empty samples against a 1 MiB limit: refused, and counted
 * only until the limit was passed, not to the end. */
static void test_stops_past_limit(void)
{
	size_t n = 1000000, each = sizeof(void *) +
				    sizeof(Perftools__Profiles__Sample);
	uint8_t *b = empty_samples(n);
	size_t got;

	CHECK(b);
	got = pbcost__lower_bound(PROFILE, b, 2 * n, 1 << 20);
	CHECK(got > 1 << 20);
	CHECK(got <= (1 << 20) + each);
	got = pbcost__lower_bound(PROFILE, b, 2 * n, SIZE_MAX);
	CHECK(got == sizeof(Perftools__Profiles__Profile) + n * each);
	free(b);
}

/* Packed values: one element per varint, whatever their lengths. */
static void test_packed_varints(void)
{
	/* Sample { value: [1, 300, 2^63] } */
	static const uint8_t b[] = {
		0x12, 0x0f, 0x12, 0x0d, 0x01, 0xac, 0x02,
		0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01,
	};
	size_t want = sizeof(Perftools__Profiles__Profile) + sizeof(void *) +
		      sizeof(Perftools__Profiles__Sample) + 3 * 8;

	CHECK(pbcost__lower_bound(PROFILE, b, sizeof(b), SIZE_MAX) == want);
	CHECK(decoder_allocates(b, sizeof(b)) >= want);
}

/* Malformed bytes stop the count, with what was counted so far: a cut
 * varint, a length past the end, a group, a message field given as a
 * varint (which the decoder refuses). */
static void test_malformed_stops(void)
{
	static const uint8_t cut[] = { 0x12, 0x00, 0x12 };
	static const uint8_t long_len[] = { 0x12, 0x00, 0x12, 0x05, 0x00 };
	static const uint8_t group[] = { 0x12, 0x00, 0x13, 0x12, 0x00 };
	static const uint8_t as_varint[] = { 0x12, 0x00, 0x10, 0x01, 0x12, 0x00 };
	size_t one = sizeof(Perftools__Profiles__Profile) + sizeof(void *) +
		     sizeof(Perftools__Profiles__Sample);

	CHECK(pbcost__lower_bound(PROFILE, cut, sizeof(cut), SIZE_MAX) == one);
	CHECK(pbcost__lower_bound(PROFILE, long_len, sizeof(long_len),
				  SIZE_MAX) == one);
	CHECK(pbcost__lower_bound(PROFILE, group, sizeof(group), SIZE_MAX) == one);
	CHECK(pbcost__lower_bound(PROFILE, as_varint, sizeof(as_varint),
				  SIZE_MAX) == one);
	CHECK(decoder_allocates(as_varint, sizeof(as_varint)) == SIZE_MAX);
}

int main(void)
{
	RUN(test_bound_counts_the_arrays);
	RUN(test_bound_below_decoder);
	RUN(test_stops_past_limit);
	RUN(test_packed_varints);
	RUN(test_malformed_stops);
	CHECK_EXIT();
}
