/* pprof__encode_where and pprof__label_values: one service's samples out
 * of a profile holding several, with only the tables they use. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "out/pprof.h"
#include "pprof_decode.h"

static struct pprof *two_services(void)
{
	struct pprof_vt t[2] = { { "samples", "count" }, { "cpu", "nanoseconds" } };
	struct pprof *p = pprof__new(t, 2, t[1], 1000);
	const char *svc[2] = { "alpha", "beta" };

	for (int s = 0; s < 2; s++) {
		char fn[32], file[32];
		uint64_t m, f, l[2];
		int64_t v[2] = { 1, 1000 };

		snprintf(file, sizeof(file), "/bin/%s", svc[s]);
		m = pprof__mapping(p, 0x1000 * (s + 1), 0x1000 * (s + 2), 0, file, NULL);
		snprintf(fn, sizeof(fn), "%s_leaf", svc[s]);
		f = pprof__function(p, fn, NULL, NULL);
		l[0] = pprof__location(p, m, 0x1000 * (s + 1) + 8, &f, NULL, 1);
		f = pprof__function(p, "main", NULL, NULL);	/* shared */
		l[1] = pprof__location(p, m, 0x1000 * (s + 1) + 16, &f, NULL, 1);
		struct pprof_label lab[2] = { { .key = "service", .str = svc[s] },
					      { .key = "pid", .num = 100 + s } };
		for (int i = 0; i < 3 + s; i++)
			pprof__add_sample(p, l, 2, v, lab, 2);
	}
	return p;
}

static const char *fn_name(const Perftools__Profiles__Profile *pr, uint64_t id)
{
	for (size_t i = 0; i < pr->n_function; i++)
		if (pr->function[i]->id == id)
			return pr->string_table[pr->function[i]->name];
	return NULL;
}

/* The string value of label key on sample s, NULL if it has none. */
static const char *label_str(const Perftools__Profiles__Profile *pr,
			     const Perftools__Profiles__Sample *s,
			     const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (!strcmp(pr->string_table[s->label[i]->key], key))
			return pr->string_table[s->label[i]->str];
	return NULL;
}

static void test_label_values(void)
{
	struct pprof *p = two_services();
	const char *v[4];
	size_t n = pprof__label_values(p, "service", v, 4);

	CHECK(n == 2);
	CHECK((!strcmp(v[0], "alpha") && !strcmp(v[1], "beta")) ||
	      (!strcmp(v[0], "beta") && !strcmp(v[1], "alpha")));
	CHECK(pprof__label_values(p, "nosuchkey", v, 4) == 0);
	CHECK(pprof__label_values(p, "service", v, 1) == 1);	/* bounded */
	pprof__free(p);
}

static void test_encode_where(void)
{
	struct pprof *p = two_services();
	Perftools__Profiles__Profile *pr;
	uint8_t *out = NULL;
	size_t len = 0;
	bool leaf = false;

	CHECK(pprof__encode_where(p, "service", "beta", &out, &len) == 0);
	pr = pprof_decode(out, len);
	CHECK(pr);
	CHECK(pr->n_sample == 1 && pr->sample[0]->value[0] == 4);
	/* the sample is beta's own, labels and all */
	CHECK(label_str(pr, pr->sample[0], "service") &&
	      !strcmp(label_str(pr, pr->sample[0], "service"), "beta"));
	CHECK(pr->n_mapping == 1);
	CHECK(!strcmp(pr->string_table[pr->mapping[0]->filename], "/bin/beta"));
	CHECK(pr->n_location == 2 && pr->n_function == 2);
	/* every referenced id resolves in the subset */
	for (size_t i = 0; i < pr->sample[0]->n_location_id; i++) {
		bool found = false;

		for (size_t j = 0; j < pr->n_location; j++)
			if (pr->location[j]->id == pr->sample[0]->location_id[i]) {
				found = true;
				CHECK(fn_name(pr, pr->location[j]->line[0]->function_id));
				leaf |= !strcmp(fn_name(pr, pr->location[j]->line[0]->function_id),
						"beta_leaf");
			}
		CHECK(found);
	}
	CHECK(leaf);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(out);

	/* a value no sample has: a valid, empty profile */
	CHECK(pprof__encode_where(p, "service", "gamma", &out, &len) == 0);
	pr = pprof_decode(out, len);
	CHECK(pr && pr->n_sample == 0 && pr->n_location == 0);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(out);
	pprof__free(p);
}

/* go tool pprof reads the subset without complaint. */
static void test_go_reads_subset(void)
{
	struct pprof *p = two_services();
	char path[] = "/tmp/tagprof-sel-XXXXXX", cmd[256], line[512];
	uint8_t *out = NULL;
	size_t len = 0;
	bool saw = false, warned = false;
	FILE *f;
	int fd;

	if (system("command -v go >/dev/null 2>&1")) {
		SKIP(test_go_reads_subset, "go not installed");
		pprof__free(p);
		return;
	}
	CHECK(pprof__encode_where(p, "service", "alpha", &out, &len) == 0);
	fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, out, len) == (ssize_t)len);
	close(fd);
	snprintf(cmd, sizeof(cmd), "go tool pprof -raw %s 2>&1", path);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		saw |= strstr(line, "alpha_leaf") != NULL;
		warned |= strcasestr(line, "warn") || strstr(line, "beta_leaf");
	}
	CHECK(f && pclose(f) == 0);
	unlink(path);
	free(out);
	pprof__free(p);
	CHECK(saw && !warned);
}

/* has_functions of the mapping with id, as encoded. */
static bool has_functions(const Perftools__Profiles__Profile *pr, uint64_t id)
{
	for (size_t i = 0; i < pr->n_mapping; i++)
		if (pr->mapping[i]->id == id)
			return pr->mapping[i]->has_functions;
	fprintf(stderr, "  mapping %llu not encoded\n", (unsigned long long)id);
	return false;
}

/* A mapping says it has functions only when every location of it that
 * the encoding keeps is named: an address nothing named stays for pprof,
 * or a server with the binary, to name. */
static void test_has_functions(void)
{
	struct pprof *p = two_services();
	const int64_t v[2] = { 1, 1000 };
	struct pprof_label lab = { .key = "service", .str = "beta" };
	Perftools__Profiles__Profile *pr;
	uint8_t *buf;
	size_t len;
	uint64_t loc;

	/* An unnamed address in beta's mapping (id 2), in beta's sample. */
	loc = pprof__location(p, 2, 0x2000 + 32, NULL, NULL, 0);
	CHECK(loc && !pprof__add_sample(p, &loc, 1, v, &lab, 1));
	CHECK(!pprof__encode(p, &buf, &len));
	pr = pprof_decode(buf, len);
	CHECK(pr && pr->n_mapping == 2);
	CHECK(has_functions(pr, 1) && !has_functions(pr, 2));
	for (size_t i = 0; i < pr->n_location; i++)
		if (pr->location[i]->id == loc)
			CHECK(pr->location[i]->n_line == 0 &&
			      pr->location[i]->address == 0x2000 + 32);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(buf);

	/* alpha's subset has no unnamed location; beta's has. */
	CHECK(!pprof__encode_where(p, "service", "alpha", &buf, &len));
	pr = pprof_decode(buf, len);
	CHECK(pr && pr->n_mapping == 1 && has_functions(pr, 1));
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(buf);
	CHECK(!pprof__encode_where(p, "service", "beta", &buf, &len));
	pr = pprof_decode(buf, len);
	CHECK(pr && pr->n_mapping == 1 && !has_functions(pr, 2));
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(buf);
	pprof__free(p);
}

int main(void)
{
	RUN(test_label_values);
	RUN(test_encode_where);
	RUN(test_go_reads_subset);
	RUN(test_has_functions);
	CHECK_EXIT();
}
