/* The pprof reader of `tagprof report` (src/report/pprofin.c): what it
 * accepts, and the clear refusal of each kind of broken file. The broken
 * ones are packed with protobuf-c's own packer, from messages built here,
 * so each carries exactly one defect. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "out/pprof.h"
#include "report/pprofin.h"

typedef Perftools__Profiles__Profile Profile;

static char dir[] = "/tmp/test_pprofin.XXXXXX";

static const char *write_tmp(const char *name, const void *data, size_t len)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || (len && fwrite(data, 1, len, f) != len))
		abort();
	fclose(f);
	return path;
}

/* Packs pr raw (pprofin takes raw and gzipped files) into a file. */
static const char *write_profile(const char *name, const Profile *pr)
{
	size_t len = perftools__profiles__profile__get_packed_size(pr);
	uint8_t *buf = malloc(len ? len : 1);
	const char *path;

	perftools__profiles__profile__pack(pr, buf);
	path = write_tmp(name, buf, len);
	free(buf);
	return path;
}

/* A per-sample profile from our own builder, gzipped. */
static void test_reads_own_timeline(void)
{
	static const struct pprof_vt types[2] = {
		{ "samples", "count" }, { "cpu", "nanoseconds" } };
	struct pprof *p = pprof__new(types, 2, types[1], 10);
	struct pprofin in;
	uint64_t fn, loc;
	uint8_t *gz = NULL;
	size_t len = 0;
	char err[256];
	int64_t t;

	CHECK(p && !pprof__set_timeline(p));
	fn = pprof__function(p, "f", NULL, NULL);
	loc = pprof__location(p, 0, 0x10, &fn, NULL, 1);
	pprof__set_time(p, 1000, 5000);
	pprof__set_time_origin(p, 100);
	for (int i = 0; i < 3; i++) {
		int64_t v[2] = { 1, 10 };

		CHECK(!pprof__add_sample_at(p, &loc, 1, v, NULL, 0, 100 + i * 7));
	}
	CHECK(!pprof__encode(p, &gz, &len));
	CHECK(!pprofin__load(&in, write_tmp("own.pb.gz", gz, len), err,
			     sizeof(err)));
	CHECK(in.pr->n_sample == 3 && in.pr->time_nanos == 1000);
	for (size_t i = 0; i < 3; i++)
		CHECK(!pprofin__sample_time(&in, in.pr->sample[i], &t) &&
		      t == (int64_t)i * 7);
	CHECK(pprofin__location(&in, in.pr->sample[0]->location_id[0]));
	CHECK(!strcmp(pprofin__str(&in, pprofin__function(&in, in.pr->location[0]->line[0]->function_id)->name), "f"));
	pprofin__free(&in);
	free(gz);
	pprof__free(p);
}

/* expect_refused NAME PROFILE WHY: the load fails with WHY in its message. */
/* A protobuf length as a varint at p; returns its bytes. */
static size_t pb_len(uint8_t *p, size_t v)
{
	size_t n = 0;

	for (; v >= 0x80; v >>= 7)
		p[n++] = (uint8_t)(v | 0x80);
	p[n++] = (uint8_t)v;
	return n;
}

static size_t pb_len_size(size_t v)
{
	uint8_t tmp[10];

	return pb_len(tmp, v);
}

static void expect_refused(const char *path, const char *why)
{
	struct pprofin in;
	char err[256] = "";
	int ret = pprofin__load(&in, path, err, sizeof(err));

	CHECK(ret < 0);
	if (!strstr(err, why) || !strstr(err, path)) {
		fprintf(stderr, "  %s: got \"%s\", want \"%s\"\n", path, err, why);
		CHECK(0);
	}
}

static void test_refuses_broken(void)
{
	char *strs[] = { "", "f", "samples", "count" };
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__ValueType *vts[] = { &vt };
	Perftools__Profiles__Function f = PERFTOOLS__PROFILES__FUNCTION__INIT;
	Perftools__Profiles__Function *fs[] = { &f };
	Perftools__Profiles__Line line = PERFTOOLS__PROFILES__LINE__INIT;
	Perftools__Profiles__Line *lines[] = { &line };
	Perftools__Profiles__Location l = PERFTOOLS__PROFILES__LOCATION__INIT;
	Perftools__Profiles__Location *ls[] = { &l };
	Perftools__Profiles__Sample s = PERFTOOLS__PROFILES__SAMPLE__INIT;
	Perftools__Profiles__Sample *ss[] = { &s };
	Perftools__Profiles__Label lab = PERFTOOLS__PROFILES__LABEL__INIT;
	Perftools__Profiles__Label *labs[] = { &lab };
	Profile pr = PERFTOOLS__PROFILES__PROFILE__INIT;
	uint64_t locid = 1;
	int64_t val = 1;
	struct pprofin in;
	char err[256];

	vt.type = 2;
	vt.unit = 3;
	f.id = 1;
	f.name = 1;
	line.function_id = 1;
	l.id = 1;
	l.n_line = 1;
	l.line = lines;
	s.n_location_id = 1;
	s.location_id = &locid;
	s.n_value = 1;
	s.value = &val;
	pr.n_sample_type = 1;
	pr.sample_type = vts;
	pr.n_function = 1;
	pr.function = fs;
	pr.n_location = 1;
	pr.location = ls;
	pr.n_sample = 1;
	pr.sample = ss;
	pr.n_string_table = 4;
	pr.string_table = strs;

	/* the valid one first: each case below breaks one thing */
	CHECK(!pprofin__load(&in, write_profile("ok.pb", &pr), err, sizeof(err)));
	pprofin__free(&in);

	locid = 9;
	expect_refused(write_profile("dangling_loc.pb", &pr),
		       "names location 9, which is not there");
	locid = 1;
	line.function_id = 5;
	expect_refused(write_profile("dangling_fn.pb", &pr),
		       "names function 5, which is not there");
	line.function_id = 1;
	l.mapping_id = 3;
	expect_refused(write_profile("dangling_map.pb", &pr),
		       "names mapping 3, which is not there");
	l.mapping_id = 0;
	f.name = 40;
	expect_refused(write_profile("bad_string.pb", &pr), "names no string");
	f.name = 1;
	s.n_label = 1;
	s.label = labs;
	lab.key = 4;
	expect_refused(write_profile("bad_label.pb", &pr), "a label names no string");
	s.n_label = 0;
	s.n_value = 0;
	expect_refused(write_profile("values.pb", &pr), "0 values for 1 sample types");
	s.n_value = 1;
	f.id = 0;
	expect_refused(write_profile("id0.pb", &pr), "an id that is 0 or given twice");
	f.id = 1;
	strs[0] = "x";
	expect_refused(write_profile("str0.pb", &pr), "string_table[0] is not \"\"");
	strs[0] = "";

	expect_refused(write_tmp("empty.pb", "", 0), "empty file");
	expect_refused(write_tmp("garbage.pb", "\xff\xff\xff\xff\xff", 5),
		       "not a pprof profile");
	expect_refused(write_tmp("badgz.pb.gz", "\x1f\x8b\x08\x00junkjunkjunk", 16),
		       "corrupt or truncated gzip data");
	expect_refused(dir, "not a regular file");
	CHECK(pprofin__load(&in, "/nonexistent/x.pb.gz", err, sizeof(err)) == -ENOENT);
}

/* A gzip stream cut short is refused, not read as a shorter profile. */
static void test_refuses_truncated_gzip(void)
{
	static const struct pprof_vt types[1] = { { "samples", "count" } };
	struct pprof *p = pprof__new(types, 1, types[0], 1);
	uint8_t *gz = NULL;
	size_t len = 0;
	char name[64];

	CHECK(p);
	for (int i = 0; i < 200; i++) {
		int64_t v = 1;
		uint64_t fn, loc;

		snprintf(name, sizeof(name), "function_%d", i);
		fn = pprof__function(p, name, NULL, NULL);
		loc = pprof__location(p, 0, 0x10 + i, &fn, NULL, 1);
		CHECK(!pprof__add_sample(p, &loc, 1, &v, NULL, 0));
	}
	CHECK(!pprof__encode(p, &gz, &len) && len > 100);
	expect_refused(write_tmp("cut.pb.gz", gz, len / 2),
		       "corrupt or truncated gzip data");
	free(gz);
	pprof__free(p);
}

/* Issue 15, case 3: a few MiB that decode to ~100: 1M empty samples
 * (2 bytes each, a message and a pointer decoded), and one sample with
 * 8M one-byte values in a packed field (8 bytes each decoded). Over
 * TAGPROF_REPORT_MAX_MB, refused with that said; under it, decoded. */
static void test_refuses_huge_repeated(void)
{
	const size_t nsamples = 1u << 20, nvalues = 8u << 20;
	uint8_t *buf = malloc(2 * nsamples > nvalues + 16 ? 2 * nsamples :
							     nvalues + 16);
	struct pprofin in;
	char err[256] = "";
	const char *path;
	size_t n = 0;

	CHECK(buf);
	for (size_t i = 0; i < nsamples; i++) {
		buf[n++] = 0x12;	/* Profile.sample, length-delimited */
		buf[n++] = 0;		/* an empty Sample */
	}
	path = write_tmp("samples.pb", buf, n);
	setenv("TAGPROF_REPORT_MAX_MB", "32", 1);
	expect_refused(path, "decoding it needs more than 32 MiB");
	/* Under a budget that holds it, it decodes (the checks after the
	 * decode refuse it: its samples have no type). */
	setenv("TAGPROF_REPORT_MAX_MB", "1024", 1);
	if (!pprofin__load(&in, path, err, sizeof(err)))
		pprofin__free(&in);
	if (strstr(err, "MiB")) {
		fprintf(stderr, "  %s\n", err);
		CHECK(0);
	}

	/* Profile.sample { value: packed, nvalues bytes of 1 } */
	n = 0;
	buf[n++] = 0x12;
	n += pb_len(buf + n, nvalues + 1 + pb_len_size(nvalues));
	buf[n++] = 0x12;	/* Sample.value, packed */
	n += pb_len(buf + n, nvalues);
	memset(buf + n, 1, nvalues);
	n += nvalues;
	path = write_tmp("values.pb", buf, n);
	setenv("TAGPROF_REPORT_MAX_MB", "32", 1);
	expect_refused(path, "decoding it needs more than 32 MiB");
	unsetenv("TAGPROF_REPORT_MAX_MB");
	CHECK(pprofin__max_decode_bytes() == PPROFIN_DECODE_MAX_DEFAULT);
	free(buf);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	RUN(test_reads_own_timeline);
	RUN(test_refuses_broken);
	RUN(test_refuses_truncated_gzip);
	RUN(test_refuses_huge_repeated);
	check_remove_dir(dir);
	CHECK_EXIT();
}
