// SPDX-License-Identifier: BSD-2-Clause
/* Reading and checking a pprof file (pprofin.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "report/pprofin.h"
#include "util/errbuf.h"
#include "util/hashmap.h"
#include "util/pbcost.h"

/* The whole file, at most PPROFIN_MAX_BYTES. The user names it: a link
 * is followed, but only a regular file is read (O_NONBLOCK: opening a
 * FIFO does not wait for a writer). */
static int read_file(const char *path, uint8_t **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = NULL, *nb;
	struct stat st;
	ssize_t r;
	int err;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto fail;
	}
	for (;;) {
		if (!buf || n == cap) {
			if (buf)
				cap *= 2;
			err = -EFBIG;
			if (cap > PPROFIN_MAX_BYTES + 1)
				goto fail;
			err = -ENOMEM;
			nb = realloc(buf, cap);
			if (!nb)
				goto fail;
			buf = nb;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		err = -errno;
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*out = buf;
	*len = n;
	return 0;
fail:
	free(buf);
	close(fd);
	return err;
}

/* Inflates a gzip member (of at most PPROFIN_MAX_BYTES); -EINVAL when it is
 * corrupt or truncated, -EFBIG when it is bigger. */
static int gunzip(const uint8_t *in, size_t len, uint8_t **out, size_t *outlen)
{
	z_stream zs = { 0 };
	size_t cap = len * 4 + 4096;
	uint8_t *buf = NULL, *nb;
	int ret, err = -EINVAL;

	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	zs.next_in = (uint8_t *)in;
	zs.avail_in = (uInt)len;	/* len <= PPROFIN_MAX_BYTES < 4 GiB */
	do {
		if (!buf || zs.avail_out == 0) {
			if (buf)
				cap *= 2;
			if (cap > PPROFIN_MAX_BYTES)
				cap = PPROFIN_MAX_BYTES;
			err = -EFBIG;
			if (buf && zs.total_out >= cap)
				goto done;
			err = -ENOMEM;
			nb = realloc(buf, cap);
			if (!nb)
				goto done;
			buf = nb;
			zs.next_out = buf + zs.total_out;
			zs.avail_out = (uInt)(cap - zs.total_out);
		}
		ret = inflate(&zs, Z_NO_FLUSH);
		err = -EINVAL;
		if (ret != Z_OK && ret != Z_STREAM_END)
			goto done;
		if (ret == Z_OK && zs.avail_in == 0 && zs.avail_out != 0)
			goto done;	/* truncated */
	} while (ret != Z_STREAM_END);
	*out = buf;
	*outlen = zs.total_out;
	buf = NULL;
	err = 0;
done:
	inflateEnd(&zs);
	free(buf);
	return err;
}

/* id -> index + 1 for n records whose ids ids(i) gives; -EINVAL on an id
 * 0 or twice. */
static int index_ids(struct hashmap **m, size_t n,
		     uint64_t (*id_of)(const Perftools__Profiles__Profile *,
				       size_t),
		     const Perftools__Profiles__Profile *pr)
{
	*m = hashmap__new(0);
	if (!*m)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint64_t id = id_of(pr, i), old;

		if (!id || hashmap__get(*m, &id, sizeof(id), &old))
			return -EINVAL;
		if (hashmap__put(*m, &id, sizeof(id), i + 1))
			return -ENOMEM;
	}
	return 0;
}

static uint64_t loc_id(const Perftools__Profiles__Profile *pr, size_t i)
{
	return pr->location[i]->id;
}

static uint64_t fn_id(const Perftools__Profiles__Profile *pr, size_t i)
{
	return pr->function[i]->id;
}

static uint64_t map_id(const Perftools__Profiles__Profile *pr, size_t i)
{
	return pr->mapping[i]->id;
}

static const void *by_id(const struct hashmap *m, void **arr, uint64_t id)
{
	uint64_t ix;

	return id && hashmap__get(m, &id, sizeof(id), &ix) ? arr[ix - 1] : NULL;
}

const Perftools__Profiles__Location *
pprofin__location(const struct pprofin *in, uint64_t id)
{
	return by_id(in->loc_ix, (void **)in->pr->location, id);
}

const Perftools__Profiles__Function *
pprofin__function(const struct pprofin *in, uint64_t id)
{
	return by_id(in->fn_ix, (void **)in->pr->function, id);
}

const Perftools__Profiles__Mapping *
pprofin__mapping(const struct pprofin *in, uint64_t id)
{
	return by_id(in->map_ix, (void **)in->pr->mapping, id);
}

const char *pprofin__str(const struct pprofin *in, int64_t i)
{
	const Perftools__Profiles__Profile *pr = in->pr;

	return i >= 0 && (uint64_t)i < pr->n_string_table ?
		       pr->string_table[i] : "";
}

/* The index of string s in the table, -1 if absent. */
static int64_t find_str(const Perftools__Profiles__Profile *pr, const char *s)
{
	for (size_t i = 0; i < pr->n_string_table; i++)
		if (!strcmp(pr->string_table[i], s))
			return (int64_t)i;
	return -1;
}

static bool str_ok(const Perftools__Profiles__Profile *pr, int64_t i)
{
	return i >= 0 && (uint64_t)i < pr->n_string_table;
}

/* Every reference in range; what is wrong in err otherwise. */
static int check(const struct pprofin *in, char *why, size_t whylen)
{
	const Perftools__Profiles__Profile *pr = in->pr;

	if (!pr->n_string_table || pr->string_table[0][0]) {
		errbuf__set(why, whylen, "string_table[0] is not \"\"");
		return -EINVAL;
	}
	for (size_t i = 0; i < pr->n_sample_type; i++)
		if (!str_ok(pr, pr->sample_type[i]->type) ||
		    !str_ok(pr, pr->sample_type[i]->unit)) {
			errbuf__set(why, whylen, "sample_type %zu names no string", i);
			return -EINVAL;
		}
	for (size_t i = 0; i < pr->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pr->sample[i];

		if (s->n_value != pr->n_sample_type) {
			errbuf__set(why, whylen, "sample %zu has %zu values for %zu "
				    "sample types", i, s->n_value, pr->n_sample_type);
			return -EINVAL;
		}
		for (size_t j = 0; j < s->n_location_id; j++)
			if (!pprofin__location(in, s->location_id[j])) {
				errbuf__set(why, whylen, "sample %zu names location "
					    "%llu, which is not there", i,
					    (unsigned long long)s->location_id[j]);
				return -EINVAL;
			}
		for (size_t j = 0; j < s->n_label; j++) {
			const Perftools__Profiles__Label *l = s->label[j];

			if (!str_ok(pr, l->key) || !str_ok(pr, l->str) ||
			    !str_ok(pr, l->num_unit)) {
				errbuf__set(why, whylen, "sample %zu: a label names "
					    "no string", i);
				return -EINVAL;
			}
		}
	}
	for (size_t i = 0; i < pr->n_location; i++) {
		const Perftools__Profiles__Location *l = pr->location[i];

		if (l->mapping_id && !pprofin__mapping(in, l->mapping_id)) {
			errbuf__set(why, whylen, "location %llu names mapping %llu, "
				    "which is not there", (unsigned long long)l->id,
				    (unsigned long long)l->mapping_id);
			return -EINVAL;
		}
		for (size_t j = 0; j < l->n_line; j++)
			if (!pprofin__function(in, l->line[j]->function_id)) {
				errbuf__set(why, whylen, "location %llu names function "
					    "%llu, which is not there",
					    (unsigned long long)l->id,
					    (unsigned long long)l->line[j]->function_id);
				return -EINVAL;
			}
	}
	for (size_t i = 0; i < pr->n_function; i++) {
		const Perftools__Profiles__Function *f = pr->function[i];

		if (!str_ok(pr, f->name) || !str_ok(pr, f->system_name) ||
		    !str_ok(pr, f->filename)) {
			errbuf__set(why, whylen, "function %zu names no string", i);
			return -EINVAL;
		}
	}
	for (size_t i = 0; i < pr->n_mapping; i++)
		if (!str_ok(pr, pr->mapping[i]->filename) ||
		    !str_ok(pr, pr->mapping[i]->build_id)) {
			errbuf__set(why, whylen, "mapping %zu names no string", i);
			return -EINVAL;
		}
	if (pr->period_type && (!str_ok(pr, pr->period_type->type) ||
				!str_ok(pr, pr->period_type->unit))) {
		errbuf__set(why, whylen, "period_type names no string");
		return -EINVAL;
	}
	return 0;
}

/* Decoding costs more than the encoded bytes: a packed repeated varint of
 * one byte becomes 8, an empty Sample of 2 bytes a message of ~100 and a
 * pointer. A 1 GiB file (a few MiB gzipped) of either would decode to tens
 * of GiB. Every allocation of the decoder is counted against a budget, for
 * all profiles loaded at once; over it, the decoder is told no and gives
 * up (issue 15, case 3). Each block carries its size before it, for free. */
struct decode_budget {
	size_t used, max;
	bool over;		/* an allocation was refused */
};

static struct decode_budget budget;

#define BLOCK_HDR	16	/* keeps the alignment malloc gives */

static void *budget_alloc(void *data, size_t size)
{
	struct decode_budget *b = data;
	size_t *p, cost;

	/* What the block costs, not what was asked: a string table of empty
	 * strings asks 1 byte a string, and malloc spends 32 (glibc: the
	 * header, its own 8 bytes, 16-byte chunks). */
	if (size > b->max) {
		b->over = true;
		return NULL;
	}
	cost = (BLOCK_HDR + size + 8 + 15) & ~(size_t)15;
	if (b->used > b->max - cost || !(p = malloc(BLOCK_HDR + size))) {
		b->over = true;
		return NULL;
	}
	b->used += cost;
	*p = cost;
	return (uint8_t *)p + BLOCK_HDR;
}

static void budget_free(void *data, void *ptr)
{
	struct decode_budget *b = data;
	size_t *p;

	if (!ptr)
		return;
	p = (size_t *)((uint8_t *)ptr - BLOCK_HDR);
	b->used -= *p;
	free(p);
}

static ProtobufCAllocator decode_alloc = {
	.alloc = budget_alloc,
	.free = budget_free,
	.allocator_data = &budget,
};

size_t pprofin__max_decode_bytes(void)
{
	const char *e = getenv("TAGPROF_REPORT_MAX_MB");
	char *end;
	unsigned long long mb;

	if (!e || !*e)
		return PPROFIN_DECODE_MAX_DEFAULT;
	errno = 0;
	mb = strtoull(e, &end, 10);
	if (errno || *end || mb == 0 || mb > (SIZE_MAX >> 20))
		return PPROFIN_DECODE_MAX_DEFAULT;
	return (size_t)mb << 20;
}

int pprofin__load(struct pprofin *in, const char *path, char *err,
		  size_t errlen)
{
	uint8_t *file = NULL, *raw = NULL;
	size_t flen = 0, rlen = 0, left;
	char why[160] = "";
	int ret;

	memset(in, 0, sizeof(*in));
	ret = read_file(path, &file, &flen);
	if (ret) {
		errbuf__set(err, errlen, "%s: %s", path,
			    ret == -EFBIG ? "bigger than 1 GiB" :
			    ret == -EINVAL ? "not a regular file" :
			    strerror(-ret));
		return ret;
	}
	if (flen >= 2 && file[0] == 0x1f && file[1] == 0x8b) {
		ret = gunzip(file, flen, &raw, &rlen);
		free(file);
		if (ret) {
			errbuf__set(err, errlen, "%s: %s", path,
				    ret == -EINVAL ? "corrupt or truncated gzip data" :
				    ret == -EFBIG ? "inflates to more than 1 GiB" :
				    strerror(-ret));
			return ret;
		}
	} else {
		raw = file;
		rlen = flen;
	}
	if (!rlen) {
		free(raw);
		errbuf__set(err, errlen, "%s: empty file, not a profile", path);
		return -EINVAL;
	}
	budget.max = pprofin__max_decode_bytes();
	budget.over = false;
	/* Counted first, so that a profile that cannot fit in what is left
	 * of the budget is refused in one pass over its bytes, not after
	 * the budget's worth of allocations. */
	left = budget.used < budget.max ? budget.max - budget.used : 0;
	if (pbcost__lower_bound(&perftools__profiles__profile__descriptor,
				raw, rlen, left) > left) {
		budget.over = true;
	} else {
		in->pr = perftools__profiles__profile__unpack(&decode_alloc,
							      rlen, raw);
	}
	free(raw);
	if (!in->pr && budget.over) {
		errbuf__set(err, errlen, "%s: decoding it needs more than %zu MiB "
			    "(TAGPROF_REPORT_MAX_MB; huge repeated fields?)",
			    path, budget.max >> 20);
		return -E2BIG;
	}
	if (!in->pr) {
		errbuf__set(err, errlen, "%s: not a pprof profile (profile.proto "
			    "does not decode)", path);
		return -EINVAL;
	}
	ret = index_ids(&in->loc_ix, in->pr->n_location, loc_id, in->pr);
	if (!ret)
		ret = index_ids(&in->fn_ix, in->pr->n_function, fn_id, in->pr);
	if (!ret)
		ret = index_ids(&in->map_ix, in->pr->n_mapping, map_id, in->pr);
	if (ret == -EINVAL)
		snprintf(why, sizeof(why), "an id that is 0 or given twice");
	else if (!ret)
		ret = check(in, why, sizeof(why));
	if (ret) {
		errbuf__set(err, errlen, "%s: %s", path,
			    ret == -EINVAL ? why : strerror(-ret));
		pprofin__free(in);
		return ret;
	}
	in->t_key = find_str(in->pr, "t");
	in->ns_unit = find_str(in->pr, "nanoseconds");
	return 0;
}

void pprofin__free(struct pprofin *in)
{
	if (in->pr)
		perftools__profiles__profile__free_unpacked(in->pr,
							    &decode_alloc);
	hashmap__free(in->loc_ix);
	hashmap__free(in->fn_ix);
	hashmap__free(in->map_ix);
	memset(in, 0, sizeof(*in));
}

int pprofin__sample_time(const struct pprofin *in,
			 const Perftools__Profiles__Sample *s, int64_t *t)
{
	if (in->t_key < 0 || in->ns_unit < 0)
		return -1;
	for (size_t i = 0; i < s->n_label; i++) {
		const Perftools__Profiles__Label *l = s->label[i];

		if (l->key == in->t_key && !l->str && l->num_unit == in->ns_unit) {
			*t = l->num;
			return 0;
		}
	}
	return -1;
}

bool pprofin__has_times(const struct pprofin *in)
{
	int64_t t;

	for (size_t i = 0; i < in->pr->n_sample; i++)
		if (!pprofin__sample_time(in, in->pr->sample[i], &t))
			return true;
	return false;
}
