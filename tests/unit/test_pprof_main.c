/* The main mapping (pprof__mapping_set_exe): of the mappings that are a
 * process's executable, the one the most samples pass through is written
 * first, where pprof looks for the program's name; the others keep their
 * order and every id stays. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "out/pprof.h"
#include "pprof_decode.h"

typedef Perftools__Profiles__Profile Profile;

/* Mappings by id: the kernel's, a shell that starts the program, libc,
 * the program, and a library of the program. */
enum { KERNEL = 1, SHELL, LIBC, PROG, PROGLIB, NMAPS = PROGLIB };

struct fixture {
	struct pprof *p;
	uint64_t loc[NMAPS + 1][10];	/* ten locations in each mapping */
};

static const char *const files[NMAPS + 1] = {
	NULL, "[kernel.kallsyms]", "/bin/sh", "/lib/libc.so.6", "/opt/prog",
	"/opt/libprog.so",
};

static bool fixture_new(struct fixture *fx)
{
	struct pprof_vt t[2] = { { "samples", "count" },
				 { "cpu", "nanoseconds" } };
	uint64_t f;

	fx->p = pprof__new(t, 2, t[1], 1000);
	if (!fx->p)
		return false;
	f = pprof__function(fx->p, "fn", NULL, NULL);
	for (uint64_t m = 1; m <= NMAPS; m++) {
		if (pprof__mapping(fx->p, m << 20, (m + 1) << 20, 0, files[m],
				   NULL) != m)
			return false;
		for (int i = 0; i < 10; i++)
			fx->loc[m][i] = pprof__location(fx->p, m,
							(m << 20) + 16 * i,
							&f, NULL, 1);
	}
	return true;
}

/* A sample of n locations: the first n of mapping a's, then mapping b's
 * first (b 0: none), with values (v0, v1) and the label service=svc. */
static void sample(struct fixture *fx, int a, int n, int b, int64_t v0,
		   int64_t v1, const char *svc)
{
	uint64_t locs[11];
	int64_t v[2] = { v0, v1 };
	struct pprof_label l = { .key = "service", .str = svc };
	int k = 0;

	for (int i = 0; i < n; i++)
		locs[k++] = fx->loc[a][i];
	if (b)
		locs[k++] = fx->loc[b][0];
	CHECK(!pprof__add_sample(fx->p, locs, k, v, &l, 1));
}

/* p encoded (only service svc's samples, unless NULL) and decoded; NULL
 * on a failure. */
static Profile *encoded(const struct pprof *p, const char *svc)
{
	uint8_t *gz = NULL;
	size_t len = 0;
	Profile *pr = NULL;
	int err = svc ? pprof__encode_where(p, "service", svc, &gz, &len) :
			pprof__encode(p, &gz, &len);

	if (!err)
		pr = pprof_decode(gz, len);
	free(gz);
	return pr;
}

/* The mapping ids in the order written, as a string of digits. */
static const char *order(const Profile *pr)
{
	static char s[32];
	size_t i;

	for (i = 0; i < pr->n_mapping && i < sizeof(s) - 1; i++)
		s[i] = '0' + (char)pr->mapping[i]->id;
	s[i] = '\0';
	return s;
}

/* Whether p, encoded (only service svc's samples, unless NULL), writes
 * the mappings in the order want (their ids, as digits). */
static bool written_in_order(const struct pprof *p, const char *svc,
			     const char *want)
{
	Profile *pr = encoded(p, svc);
	bool same = pr && !strcmp(order(pr), want);

	if (pr && !same)
		fprintf(stderr, "  mappings written in the order %s, want %s\n",
			order(pr), want);
	if (pr)
		perftools__profiles__profile__free_unpacked(pr, NULL);
	return same;
}

/* Every mapping still has its own start, and every location its own
 * mapping id: nothing was renumbered. */
static void ids_kept(const Profile *pr)
{
	for (size_t i = 0; i < pr->n_mapping; i++)
		CHECK(pr->mapping[i]->memory_start == pr->mapping[i]->id << 20);
	for (size_t i = 0; i < pr->n_location; i++)
		CHECK(pr->location[i]->address >> 20 ==
		      pr->location[i]->mapping_id);
}

static void test_busiest_first(void)
{
	struct fixture fx;
	Profile *pr;

	CHECK(fixture_new(&fx));
	CHECK(!pprof__mapping_set_exe(fx.p, SHELL));
	CHECK(!pprof__mapping_set_exe(fx.p, PROG));
	CHECK(pprof__mapping_set_exe(fx.p, NMAPS + 1) == -ENOENT);
	/* The shell's one stack is ten frames deep in its own code and
	 * weighs the most in the second column; the program's samples are
	 * more: 2 of ten frames against 3 + 1 of one or two. A sample
	 * counts once per mapping, in column 0. libc has the most, but
	 * is no process's executable. */
	sample(&fx, SHELL, 10, KERNEL, 2, 1000000, "sh");
	sample(&fx, LIBC, 1, 0, 9, 9, "libc");
	sample(&fx, PROG, 1, PROGLIB, 3, 10, "prog");
	sample(&fx, PROGLIB, 2, PROG, 1, 10, "prog");
	pr = encoded(fx.p, NULL);
	CHECK(pr);
	CHECK(!strcmp(order(pr), "41235"));
	ids_kept(pr);
	CHECK(pr->n_location == 10 * NMAPS);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	/* The shell's samples alone: it is the program there. */
	CHECK(written_in_order(fx.p, "sh", "21"));
	/* More of the shell: it wins. */
	sample(&fx, SHELL, 1, 0, 3, 1, "sh");
	CHECK(written_in_order(fx.p, NULL, "21345"));
	pprof__free(fx.p);
}

/* No executable marked: the order is the builder's. A tie: the first of
 * them. */
static void test_no_candidate_and_ties(void)
{
	struct fixture fx;

	CHECK(fixture_new(&fx));
	sample(&fx, PROG, 3, LIBC, 5, 1, "prog");
	CHECK(written_in_order(fx.p, NULL, "12345"));
	CHECK(!pprof__mapping_set_exe(fx.p, PROGLIB));
	CHECK(!pprof__mapping_set_exe(fx.p, LIBC));
	CHECK(written_in_order(fx.p, NULL, "31245"));
	/* 5 samples each: the first wins */
	sample(&fx, PROGLIB, 1, 0, 5, 1, "prog");
	CHECK(written_in_order(fx.p, NULL, "31245"));
	CHECK(!pprof__mapping_set_exe(fx.p, LIBC));	/* twice: still once */
	sample(&fx, PROGLIB, 1, 0, 1, 1, "prog");
	CHECK(written_in_order(fx.p, NULL, "51234"));
	pprof__free(fx.p);
}

/* go tool pprof takes the first mapping for the program: File: names it,
 * and it reads mappings in that order. */
static void test_go_names_program(void)
{
	struct fixture fx;
	char path[] = "/tmp/tagprof-main-XXXXXX", cmd[256], out[4096];
	uint8_t *gz = NULL;
	size_t len = 0, n;
	FILE *f;
	int fd;

	CHECK(fixture_new(&fx));
	CHECK(!pprof__mapping_set_exe(fx.p, SHELL));
	CHECK(!pprof__mapping_set_exe(fx.p, PROG));
	sample(&fx, SHELL, 1, 0, 1, 1, "sh");
	sample(&fx, PROG, 2, KERNEL, 4, 1, "prog");
	CHECK(!pprof__encode(fx.p, &gz, &len));
	pprof__free(fx.p);
	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0) {
		free(gz);
		return;
	}
	CHECK(write(fd, gz, len) == (ssize_t)len);
	close(fd);
	free(gz);
	snprintf(cmd, sizeof(cmd), "go tool pprof -top '%s' 2>&1", path);
	f = popen(cmd, "r");
	CHECK(f);
	n = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
	out[n] = '\0';
	CHECK(f && pclose(f) == 0);
	if (strncmp(out, "File: prog\n", 11))
		fprintf(stderr, "  go tool pprof -top said:\n%s\n", out);
	CHECK(!strncmp(out, "File: prog\n", 11));
	unlink(path);
}

static bool in_path(const char *prog)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	return system(cmd) == 0;
}

int main(void)
{
	RUN(test_busiest_first);
	RUN(test_no_candidate_and_ties);
	if (in_path("go"))
		RUN(test_go_names_program);
	else
		SKIP(test_go_names_program, "go not in PATH");
	CHECK_EXIT();
}
