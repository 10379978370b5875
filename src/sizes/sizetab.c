// SPDX-License-Identifier: BSD-2-Clause
/* The measured tuples (sizetab.h): the table, and its CSV and JSON
 * writers. The reader is sizeread.c. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "out/atomicfile.h"
#include "sizes/sizetab.h"
#include "util/errbuf.h"
#include "util/grow.h"
#include "util/sort.h"
#include "util/strbuf.h"

/* Room for need elements in the array at *arrp. The structs keep no
 * capacity (their members are shared with the capture): malloc knows it.
 * It doubles, so adding stays O(1) amortized. */
static int reserve(void *arrp, size_t need, size_t elem)
{
	void **p = arrp;
	size_t have = *p ? malloc_usable_size(*p) / elem : 0;

	return need <= have ? 0 : grow__array(arrp, &have, need, elem, 8);
}

struct size_func *sizetab__add_func(struct sizetab *t, const char *name,
				    const char *binary, const char *size_spec)
{
	struct size_func *f;

	if (reserve(&t->funcs, t->nfuncs + 1, sizeof(*t->funcs)))
		return NULL;
	f = &t->funcs[t->nfuncs];
	*f = (struct size_func){ 0 };
	f->name = strdup(name ? name : "");
	f->binary = strdup(binary ? binary : "");
	f->size_spec = strdup(size_spec ? size_spec : "");
	if (!f->name || !f->binary || !f->size_spec) {
		free(f->name);
		free(f->binary);
		free(f->size_spec);
		return NULL;
	}
	t->nfuncs++;
	return f;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* tu's calls and costs into into (same size). */
static void merge_tuple(struct size_tuple *into, const struct size_tuple *tu)
{
	into->calls = add_sat(into->calls, tu->calls);
	into->size_sum = add_sat(into->size_sum, tu->size_sum);
	into->sum = add_sat(into->sum, tu->sum);
	into->sumsq += tu->sumsq;
	into->min = tu->min < into->min ? tu->min : into->min;
	into->max = tu->max > into->max ? tu->max : into->max;
}

int sizefunc__add(struct size_func *f, const struct size_tuple *tu)
{
	/* The usual order, from a file or a sorted map dump: merged at
	 * once. Other repeats wait for sizetab__sort. */
	if (f->n && f->t[f->n - 1].size == tu->size) {
		merge_tuple(&f->t[f->n - 1], tu);
		return 0;
	}
	if (reserve(&f->t, f->n + 1, sizeof(*f->t)))
		return -ENOMEM;
	f->t[f->n++] = *tu;
	return 0;
}

static int by_size(const void *a, const void *b)
{
	const struct size_tuple *x = a, *y = b;

	return x->size < y->size ? -1 : x->size > y->size;
}

/* f's tuples by size, those of one size merged into one. */
static void sort_func(struct size_func *f)
{
	size_t out = 0;

	sort__array(f->t, f->n, sizeof(*f->t), by_size);
	for (size_t i = 0; i < f->n; i++) {
		if (out && f->t[out - 1].size == f->t[i].size)
			merge_tuple(&f->t[out - 1], &f->t[i]);
		else
			f->t[out++] = f->t[i];
	}
	f->n = out;
}

void sizetab__sort(struct sizetab *t)
{
	for (size_t i = 0; i < t->nfuncs; i++)
		sort_func(&t->funcs[i]);
}

void sizetab__free(struct sizetab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nfuncs; i++) {
		free(t->funcs[i].name);
		free(t->funcs[i].binary);
		free(t->funcs[i].size_spec);
		free(t->funcs[i].t);
	}
	free(t->funcs);
	free(t->cost_unit);
	free(t->probe_mode);
	*t = (struct sizetab){ 0 };
}

/* ---- writers ---- */

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* s for a file: control characters (a newline in a path) become '?', as
 * neither format's reader accepts them. */
static char *printable(const char *s)
{
	char *c = strdup(or_empty(s));

	for (char *p = c; p && *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return c;
}

/* s as one CSV field (RFC 4180): quoted when it holds a comma, a quote or
 * spaces at an end, or starts with '#' (a row would read as a comment);
 * quotes doubled. */
static void csv_field(struct strbuf *b, const char *s)
{
	char *c = printable(s);
	size_t n;

	if (!c) {
		b->err = b->err ? b->err : -ENOMEM;
		return;
	}
	n = strlen(c);
	if (!strpbrk(c, ",\"") && c[0] != '#' &&
	    !(n && (c[0] == ' ' || c[n - 1] == ' '))) {
		strbuf__puts(b, c);
		free(c);
		return;
	}
	strbuf__puts(b, "\"");
	for (const char *p = c; *p; p++) {
		strbuf__add(b, p, 1);
		if (*p == '"')
			strbuf__add(b, p, 1);
	}
	strbuf__puts(b, "\"");
	free(c);
}

static void json_field(struct strbuf *b, const char *s)
{
	char *c = printable(s);

	if (!c) {
		b->err = b->err ? b->err : -ENOMEM;
		return;
	}
	strbuf__json_str(b, c);
	free(c);
}

/* sumsq must survive the trip: %.17g reads back to the same double. */
static bool sumsq_ok(const struct sizetab *t)
{
	for (size_t i = 0; i < t->nfuncs; i++)
		for (size_t j = 0; j < t->funcs[i].n; j++)
			if (!isfinite(t->funcs[i].t[j].sumsq) ||
			    t->funcs[i].t[j].sumsq < 0)
				return false;
	return true;
}

static int flush(struct strbuf *b, FILE *out)
{
	int err = b->err;

	if (!err && b->len && fwrite(b->p, 1, b->len, out) != b->len)
		err = -EIO;
	if (!err && fflush(out))
		err = -errno;
	strbuf__free(b);
	return err;
}

static void csv_header(struct strbuf *b, const struct sizetab *t)
{
	char *unit = printable(t->cost_unit ? t->cost_unit : "ns");
	char *mode = printable(t->probe_mode);
	size_t rows = 0;

	if (!unit || !mode)
		b->err = b->err ? b->err : -ENOMEM;
	strbuf__printf(b, "# tagprof sizes: %d\n# cost_unit: %s\n"
		       "# probe_mode: %s\n# sample_every: %" PRIu64 "\n"
		       "# tuples_dropped: %" PRIu64 "\n# duration_ns: %" PRIu64
		       "\n", SIZETAB_VERSION, or_empty(unit), or_empty(mode),
		       t->sample_every ? t->sample_every : 1,
		       t->tuples_dropped, t->duration_ns);
	/* the rows to come: a file cut at a line's end still shows */
	for (size_t i = 0; i < t->nfuncs; i++)
		rows += t->funcs[i].n;
	strbuf__printf(b, "# tuples: %zu\n# functions: name,binary,size_spec,"
		       "calls_seen,calls_skipped,size_faults\n", rows);
	free(unit);
	free(mode);
	for (size_t i = 0; i < t->nfuncs; i++) {
		const struct size_func *f = &t->funcs[i];

		strbuf__puts(b, "# function: ");
		csv_field(b, f->name);
		strbuf__puts(b, ",");
		csv_field(b, f->binary);
		strbuf__puts(b, ",");
		csv_field(b, f->size_spec);
		strbuf__printf(b, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
			       f->calls_seen, f->calls_skipped, f->size_faults);
	}
	strbuf__puts(b, SIZETAB_CSV_HEADER "\n");
}

int sizetab__write_csv(const struct sizetab *t, FILE *out)
{
	struct strbuf b = { 0 };

	if (!sumsq_ok(t))
		return -EINVAL;
	csv_header(&b, t);
	for (size_t i = 0; i < t->nfuncs; i++) {
		const struct size_func *f = &t->funcs[i];

		for (size_t j = 0; j < f->n; j++) {
			const struct size_tuple *u = &f->t[j];

			csv_field(&b, f->name);
			strbuf__printf(&b, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				       ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				       ",%.17g\n", u->size, u->calls,
				       u->size_sum, u->min, u->max, u->sum,
				       u->sumsq);
		}
	}
	return flush(&b, out);
}

static void json_func(struct strbuf *b, const struct size_func *f)
{
	strbuf__puts(b, "    {\"name\": ");
	json_field(b, f->name);
	strbuf__puts(b, ", \"binary\": ");
	json_field(b, f->binary);
	strbuf__puts(b, ", \"size_spec\": ");
	json_field(b, f->size_spec);
	strbuf__printf(b, ",\n     \"calls_seen\": %" PRIu64 ", "
		       "\"calls_skipped\": %" PRIu64 ", \"size_faults\": %"
		       PRIu64 ",\n     \"tuples\": [", f->calls_seen,
		       f->calls_skipped, f->size_faults);
	for (size_t j = 0; j < f->n; j++) {
		const struct size_tuple *u = &f->t[j];

		strbuf__printf(b, "%s\n      [%" PRIu64 ", %" PRIu64 ", %"
			       PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64
			       ", %.17g]", j ? "," : "", u->size, u->calls,
			       u->size_sum, u->min, u->max, u->sum, u->sumsq);
	}
	strbuf__puts(b, f->n ? "\n     ]}" : "]}");
}

int sizetab__write_json(const struct sizetab *t, FILE *out)
{
	struct strbuf b = { 0 };

	if (!sumsq_ok(t))
		return -EINVAL;
	strbuf__printf(&b, "{\n  \"format\": \"%s\", \"version\": %d,\n"
		       "  \"cost_unit\": ", SIZETAB_JSON_FORMAT,
		       SIZETAB_VERSION);
	json_field(&b, t->cost_unit ? t->cost_unit : "ns");
	strbuf__puts(&b, ", \"probe_mode\": ");
	json_field(&b, t->probe_mode);
	strbuf__printf(&b, ",\n  \"sample_every\": %" PRIu64 ", "
		       "\"tuples_dropped\": %" PRIu64 ", \"duration_ns\": %"
		       PRIu64 ",\n  \"tuple_fields\": [" SIZETAB_JSON_FIELDS
		       "],\n  \"functions\": [",
		       t->sample_every ? t->sample_every : 1,
		       t->tuples_dropped, t->duration_ns);
	for (size_t i = 0; i < t->nfuncs; i++) {
		strbuf__puts(&b, i ? ",\n" : "\n");
		json_func(&b, &t->funcs[i]);
	}
	strbuf__puts(&b, t->nfuncs ? "\n  ]\n}\n" : "]\n}\n");
	return flush(&b, out);
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);

	return n >= k && !strcmp(s + n - k, tail);
}

int sizetab__save(const struct sizetab *t, const char *path, char *err,
		  size_t errlen)
{
	bool json = ends_with(path, ".json");
	char *data = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&data, &len);
	int ret;

	if (!mem) {
		errbuf__set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = json ? sizetab__write_json(t, mem) : sizetab__write_csv(t, mem);
	if (fclose(mem) && !ret)
		ret = -ENOMEM;
	if (ret) {
		errbuf__set(err, errlen, "%s", ret == -EINVAL ?
			    "a tuple's sum of squares is not a finite number" :
			    strerror(-ret));
		goto out;
	}
	ret = atomicfile__write(path, data, len, 0640);
	if (ret)
		errbuf__set(err, errlen, "cannot write %s: %s", path,
			    strerror(-ret));
out:
	free(data);
	return ret;
}
