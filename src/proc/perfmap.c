// SPDX-License-Identifier: BSD-2-Clause
/* perf-PID.map parsing and lookup. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "proc/perfmap.h"
#include "proc/targetfile.h"
#include "util/utf8.h"
#include "util/grow.h"
#include "util/sortedrange.h"

/* Entries looked at below the one found when it does not hold the
 * address: bounds the cost of overlapping entries. */
#define OVERLAP_SCAN 32
/* The file is read and parsed this much at a time: reading a map costs no
 * more than the map it makes. A longer line is cut (its name is anyway). */
#define READ_CHUNK (64u << 10)

struct pm_entry {
	uint64_t start, end;
	uint32_t name;		/* offset into names */
	uint32_t seq;		/* line order: later lines win */
};

struct perfmap {
	struct pm_entry *v;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	size_t max_bytes;	/* bound on what v and names may hold */
};

/* Hex number of 1 to 16 digits, an optional 0x first. */
static bool parse_hex(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int digits = 0, d;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < end; p++, digits++) {
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (digits == 16)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits)
		return false;
	*pp = p;
	*out = v;
	return true;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* At least one blank; false if there is none. */
static bool skip_blanks(const char **pp, const char *end)
{
	const char *p = *pp;

	while (p < end && is_blank(*p))
		p++;
	if (p == *pp)
		return false;
	*pp = p;
	return true;
}

static int add_name(struct perfmap *m, const char *name, size_t len,
		    uint32_t *off)
{
	/* Each replaced byte can become three (U+FFFD). */
	size_t need = 3 * len + 1;
	int err;

	if (m->names_len + need > PERFMAP_FILE_MAX ||
	    m->cap * sizeof(*m->v) + m->names_len + need > m->max_bytes)
		return -E2BIG;
	/* Doubling must not take the map past its bound. */
	err = grow__array_max(&m->names, &m->names_cap, m->names_len + need, 1,
			      4096, m->max_bytes - m->cap * sizeof(*m->v));
	if (err)
		return err;
	*off = m->names_len;
	utf8__sanitize((const uint8_t *)name, len, m->names + m->names_len, need);
	m->names_len += strlen(m->names + m->names_len) + 1;
	return 0;
}

/* One line, without its newline. 1: kept; 0: blank; -EINVAL: garbage;
 * other negative errno: the map is full or out of memory. */
static int parse_line(struct perfmap *m, const char *p, const char *end,
		      uint32_t seq)
{
	uint64_t start, size;
	struct pm_entry *e;
	size_t max, len;
	int err;

	if (end > p && end[-1] == '\r')
		end--;
	if (end == p)
		return 0;
	if (memchr(p, '\0', end - p))
		return -EINVAL;
	if (!parse_hex(&p, end, &start) || !skip_blanks(&p, end) ||
	    !parse_hex(&p, end, &size) || !skip_blanks(&p, end))
		return -EINVAL;
	while (end > p && is_blank(end[-1]))
		end--;
	if (end == p || !size || start + size < start)
		return -EINVAL;
	if (m->n == PERFMAP_ENTRIES_MAX)
		return -E2BIG;
	/* Within the entry bound and what the names leave of the map's. */
	max = (m->max_bytes - m->names_cap) / sizeof(*m->v);
	if (max > PERFMAP_ENTRIES_MAX)
		max = PERFMAP_ENTRIES_MAX;
	err = grow__array_max(&m->v, &m->cap, m->n + 1, sizeof(*m->v), 256,
			      max);
	if (err)
		return err;
	e = &m->v[m->n];
	len = end - p;
	if (len > PERFMAP_NAME_MAX)
		len = PERFMAP_NAME_MAX;
	err = add_name(m, p, len, &e->name);
	if (err)
		return err;
	e->start = start;
	e->end = start + size;
	e->seq = seq;
	m->n++;
	return 1;
}

static int entry_cmp(const void *pa, const void *pb)
{
	const struct pm_entry *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static struct perfmap *map_new(size_t max_bytes)
{
	struct perfmap *m = calloc(1, sizeof(*m));

	if (m)
		m->max_bytes = max_bytes;
	return m;
}

/* One line into m, counted in st. 0: go on; -E2BIG: the map is full (st
 * says truncated); -ENOMEM. */
static int feed_line(struct perfmap *m, const char *p, const char *end,
		     struct perfmap_stats *st)
{
	int r = parse_line(m, p, end, st->lines++);

	if (r == -EINVAL) {
		st->bad_lines++;
	} else if (r == -E2BIG) {
		st->truncated = true;
		return r;
	} else if (r < 0) {
		return r;
	}
	return 0;
}

/* Gives back what an array holds beyond its first len bytes. */
static void shrink(void **p, size_t len)
{
	void *q;

	if (!len) {
		free(*p);
		*p = NULL;
	} else if ((q = realloc(*p, len))) {
		*p = q;
	}
}

/* Sorts the entries, and frees the arrays' room beyond them: a map held
 * costs what it holds. */
static void map_finish(struct perfmap *m, struct perfmap_stats *st)
{
	if (m->n)
		qsort(m->v, m->n, sizeof(*m->v), entry_cmp);
	if (m->n < m->cap) {
		shrink((void **)&m->v, m->n * sizeof(*m->v));
		m->cap = m->n;
	}
	if (m->names_len < m->names_cap) {
		shrink((void **)&m->names, m->names_len);
		m->names_cap = m->names_len;
	}
	st->entries = m->n;
}

struct perfmap *perfmap__parse(const char *buf, size_t len,
			       struct perfmap_stats *st)
{
	const char *p = buf, *end = buf + len, *nl;
	struct perfmap *m = map_new(SIZE_MAX);
	int r;

	memset(st, 0, sizeof(*st));
	if (!m)
		return NULL;
	while (p < end) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		r = feed_line(m, p, nl, st);
		if (r == -E2BIG)
			break;
		if (r < 0) {
			perfmap__free(m);
			return NULL;
		}
		p = nl + 1;
	}
	map_finish(m, st);
	return m;
}

/* Parses the file, READ_CHUNK bytes at a time, up to want bytes (cut: the
 * file holds more). A line longer than the buffer is parsed cut, the rest
 * of it skipped. */
static int read_lines(int fd, size_t want, bool cut, struct perfmap *m,
		      struct perfmap_stats *st)
{
	char *buf = malloc(READ_CHUNK);
	size_t have = 0, got = 0, rest;
	bool skipping = false;
	const char *p, *nl;
	ssize_t r;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (got < want && !err) {
		r = read(fd, buf + have, READ_CHUNK - have < want - got ?
					 READ_CHUNK - have : want - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += r;
		have += r;
		p = buf;
		while (!err && (nl = memchr(p, '\n', buf + have - p))) {
			if (!skipping)
				err = feed_line(m, p, nl, st);
			skipping = false;
			p = nl + 1;
		}
		rest = buf + have - p;
		if (!err && rest == READ_CHUNK) {
			if (!skipping)
				err = feed_line(m, buf, buf + rest, st);
			skipping = true;
			rest = 0;
		}
		memmove(buf, p, rest);
		have = rest;
	}
	/* A last line without its newline is a line, unless the bound cut
	 * it: the file holds more than was read. */
	if (!err && have && !skipping && !cut)
		err = feed_line(m, buf, buf + have, st);
	free(buf);
	return err == -E2BIG ? 0 : err;
}

int perfmap__read(const char *path, uid_t owner, size_t max_bytes,
		  struct perfmap **out, struct perfmap_stats *st)
{
	struct perfmap *m = NULL;
	struct stat sb;
	size_t want;
	int fd, err = 0;

	memset(st, 0, sizeof(*st));
	*out = NULL;
	/* No link anywhere on the way (targetfile.h): the owner could point
	 * its map at a file it cannot read itself, to see that file's lines
	 * as function names. A FIFO or device there is not opened. */
	fd = targetfile__open(path, NULL, &sb);
	if (fd < 0)
		return fd == -ELOOP ? -EPERM : fd;
	if (sb.st_uid != owner && sb.st_uid != 0) {
		err = -EPERM;
		goto cleanup;
	}
	/* Refused before a byte is read: a map costs about its size (a
	 * 24-byte entry where the hex text was), so a file over the budget
	 * would be a map over it. */
	if ((uint64_t)sb.st_size > max_bytes) {
		err = -EFBIG;
		goto cleanup;
	}
	m = map_new(max_bytes);
	if (!m) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* The file may grow or shrink while it is read: take what is there,
	 * up to the size it had (more lines would cost more than allowed). */
	want = (uint64_t)sb.st_size > PERFMAP_FILE_MAX ? PERFMAP_FILE_MAX :
							 (size_t)sb.st_size;
	err = read_lines(fd, want, want < (uint64_t)sb.st_size, m, st);
	if (err)
		goto cleanup;
	if ((uint64_t)sb.st_size > PERFMAP_FILE_MAX)
		st->truncated = true;
	map_finish(m, st);
	*out = m;
	m = NULL;
cleanup:
	perfmap__free(m);
	close(fd);
	return err;
}

const char *perfmap__lookup(const struct perfmap *m, uint64_t addr,
			    uint64_t *start)
{
	const struct pm_entry *best = NULL;
	size_t i, k;

	if (!m || !m->n || addr < m->v[0].start)
		return NULL;
	/* From the greatest start <= addr (v[0] is one) back. */
	i = SORTEDRANGE_UPPER(m->v, m->n, start, addr) - 1;
	for (k = 0; k < OVERLAP_SCAN; i--, k++) {
		const struct pm_entry *e = &m->v[i];

		if (addr < e->end && (!best || e->seq > best->seq))
			best = e;
		if (!i)
			break;
	}
	if (!best)
		return NULL;
	if (start)
		*start = best->start;
	return m->names + best->name;
}

size_t perfmap__count(const struct perfmap *m)
{
	return m ? m->n : 0;
}

size_t perfmap__bytes(const struct perfmap *m)
{
	return m ? sizeof(*m) + m->cap * sizeof(*m->v) + m->names_cap : 0;
}

void perfmap__free(struct perfmap *m)
{
	if (!m)
		return;
	free(m->v);
	free(m->names);
	free(m);
}
