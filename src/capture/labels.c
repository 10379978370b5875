// SPDX-License-Identifier: BSD-2-Clause
/* Label decoding of a sample's thread context and register tag. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "capture/labels.h"
#include "out/pprof.h"
#include "proc/codemap.h"
#include "proc/ctxwatch.h"
#include "sample_event.h"
#include "util/utf8.h"

/* One decode: where it writes, what it counts, what it missed. */
struct decode {
	const struct ctxsnap *snap;
	const struct labels_buf *out;
	size_t n, used;
	struct labels_stats *st;
	enum ctxsnap_miss miss;
};

/* Copies untrusted bytes into the string buffer, sanitized. */
static const char *text(struct decode *d, const void *s, size_t n)
{
	char *dst = d->out->strs + d->used;
	size_t room = d->out->len - d->used;

	if (room < 4)
		return NULL;
	if (utf8__sanitize(s, n, dst, room))
		d->st->bad_utf8++;
	d->used += strlen(dst) + 1;
	return dst;
}

static void emit(struct decode *d, const char *key, const char *val)
{
	if (!key || !val || d->n == d->out->max)
		return;
	d->out->labels[d->n++] = (struct pprof_label){ .key = key, .str = val };
}

static void missed(struct decode *d, enum ctxsnap_miss what)
{
	if (!d->miss)
		d->miss = what;
}

/* Names that are tagprof's own; an application key equal to one of them is
 * reported as "label:<key>" so neither hides the other. */
static bool builtin(const char *key)
{
	static const char *const names[] = {
		"process", "thread_name", "pid", "tid", "cpu", "trace_id",
		"span_id", "tag",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(key, names[i]))
			return true;
	return false;
}

static const char *label_key(struct decode *d, const char *raw)
{
	char tmp[300];

	if (!builtin(raw))
		return text(d, raw, strlen(raw));
	snprintf(tmp, sizeof(tmp), "label:%s", raw);
	return text(d, tmp, strlen(tmp));
}

static bool all_zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static const char *hex(struct decode *d, const uint8_t *b, size_t n)
{
	char *dst = d->out->strs + d->used;

	if (d->out->len - d->used < 2 * n + 1)
		return NULL;
	for (size_t i = 0; i < n; i++)
		sprintf(dst + 2 * i, "%02x", b[i]);
	d->used += 2 * n + 1;
	return dst;
}

/* The key name for idx; a key past the map the snapshot holds is missed
 * (it may be a new key) and counted unknown. */
static const char *key_name(struct decode *d, unsigned idx)
{
	const char *key = ctxsnap__key(d->snap, idx);

	if (!key) {
		missed(d, CTXSNAP_MISS_KEY);
		d->st->unknown_key++;
	}
	return key;
}

static void decode_otel(struct decode *d, const uint8_t *blob, size_t size)
{
	size_t pos = TP_OTEL_HDR_SIZE, attrs_end;
	int16_t last[256];	/* key_idx -> offset of its last entry */
	const char *key;

	if (size < TP_OTEL_HDR_SIZE) {
		d->st->truncated++;
		return;
	}
	/* Taken before the agent knew the process names another layout. */
	if (!ctxsnap__schema_known(d->snap))
		return;
	if (!all_zero(blob, 16))
		emit(d, "trace_id", hex(d, blob, 16));
	if (!all_zero(blob + 16, 8))
		emit(d, "span_id", hex(d, blob + 16, 8));

	memset(last, -1, sizeof(last));
	attrs_end = TP_OTEL_HDR_SIZE + (blob[26] | (blob[27] << 8));
	if (attrs_end > size)
		attrs_end = size;
	while (pos + 2 <= attrs_end) {
		if (pos + 2 + blob[pos + 1] > attrs_end) {
			d->st->truncated++;	/* incomplete entry: stop */
			break;
		}
		last[blob[pos]] = pos;
		pos += 2 + blob[pos + 1];
	}
	for (int idx = 0; idx < 256; idx++) {
		if (last[idx] < 0)
			continue;
		key = key_name(d, idx);
		if (!key)
			continue;
		pos = last[idx];
		emit(d, label_key(d, key), text(d, blob + pos + 2, blob[pos + 1]));
	}
}

static void decode_custom(struct decode *d, const uint8_t *blob, size_t size)
{
	size_t first = d->n, klen, vlen;
	char key[TP_CL_KEY_MAX + 1];
	const uint8_t *slot;
	const char *k;
	bool dup;

	if (size % TP_CL_SLOT)
		d->st->truncated++;
	for (size_t off = 0; off + TP_CL_SLOT <= size; off += TP_CL_SLOT) {
		slot = blob + off;
		klen = slot[0];
		vlen = slot[1 + TP_CL_KEY_MAX];
		if (klen == TP_CL_EMPTY)
			continue;
		if (klen > TP_CL_KEY_MAX || vlen > TP_CL_VAL_MAX) {
			d->st->truncated++;
			continue;
		}
		memcpy(key, slot + 1, klen);
		key[klen] = '\0';
		k = label_key(d, key);
		/* custom-labels v1: the first of duplicate keys wins */
		dup = false;
		for (size_t i = first; k && i < d->n; i++)
			dup |= !strcmp(d->out->labels[i].key, k);
		if (!dup)
			emit(d, k, text(d, slot + 2 + TP_CL_KEY_MAX, vlen));
	}
}

static const char *prefixed(struct decode *d, const char *prefix,
			    const char *name)
{
	char tmp[80];

	snprintf(tmp, sizeof(tmp), "%s:%s", prefix, name);
	return text(d, tmp, strlen(tmp));
}

/* The label name of a tag field or a code level: the name, unless tagprof
 * or the process's thread-label keys already use it (then
 * "<prefix>:<name>"), so the name is the same on every sample. */
static const char *own_key(struct decode *d, const char *prefix,
			   const char *name)
{
	const struct procctx *ctx = d->snap ? &d->snap->ctx : NULL;
	bool taken = builtin(name);

	for (size_t i = 0; ctx && !taken && i < ctx->nkeys; i++)
		taken = !strcmp(ctx->keys[i], name);
	return taken ? prefixed(d, prefix, name) : name;
}

/* The name of a tag field value; one the dictionary lacks is missed (it
 * may have just been registered) and counted unnamed. */
static const char *tag_value_name(struct decode *d, size_t f, uint64_t v)
{
	const char *name = tagdecl__name(&d->snap->tags, f, v);

	if (!name) {
		missed(d, CTXSNAP_MISS_TAG);
		d->st->tag_unnamed++;
	}
	return name;
}

/* One label per field that is set (or named for 0), named after the field,
 * valued with its dictionary name or its decimal number; plus the raw
 * value as the numeric label "tag". */
static void decode_tag(struct decode *d, uint64_t tag)
{
	const struct tagdecl *tags = &d->snap->tags;
	const char *name, *key;
	char num[24];
	uint64_t v;

	if (!tag || !tags->reg)
		return;
	for (size_t f = 0; f < tags->nfields; f++) {
		v = tagdecl__field_value(tags, f, tag);
		name = v || tagdecl__name(tags, f, 0) ?
			       tag_value_name(d, f, v) : NULL;
		if (!v && !name)
			continue;
		key = own_key(d, "tag", tags->fields[f].name);
		if (!name) {
			snprintf(num, sizeof(num), "%" PRIu64, v);
			name = num;
		}
		emit(d, key, text(d, name, strlen(name)));
	}
	if (d->n < d->out->max)
		d->out->labels[d->n++] = (struct pprof_label){
			.key = "tag", .num = (int64_t)tag };
}

/* The string label at or after from that is named key, or -1. */
static ssize_t find_label(const struct decode *d, size_t from, const char *key)
{
	for (size_t i = from; i < d->n; i++)
		if (d->out->labels[i].str && !strcmp(d->out->labels[i].key, key))
			return (ssize_t)i;
	return -1;
}

/* The levels of the sample's code region; tags: where the tag labels
 * begin, to cross-check a field that names the same level. */
static void decode_code(struct decode *d, const struct labels_sample *s,
			size_t tags)
{
	const struct code_levels *lv = s->code;
	bool mismatch = false;

	for (uint32_t i = 0; i < lv->n; i++) {
		const char *key = lv->key[i], *val = lv->val[i];
		ssize_t j = find_label(d, tags, key);

		if (j < 0) {
			emit(d, own_key(d, "code", key), val);
			continue;
		}
		if (!strcmp(d->out->labels[j].str, val))
			continue;
		mismatch = true;
		/* Where the region's own code ran, the tag is a leftover
		 * of the code it called last; in code it called, the tag
		 * names the caller as precisely as the stack does. */
		if (s->code_leaf) {
			d->out->labels[j].key = prefixed(d, "tag", key);
			emit(d, key, val);
		} else {
			emit(d, prefixed(d, "code", key), val);
		}
	}
	if (mismatch)
		d->st->code_tag_mismatch++;
}

size_t labels__decode(const struct ctxsnap *snap, const struct labels_sample *s,
		      const struct labels_buf *out, struct labels_stats *st,
		      enum ctxsnap_miss *miss)
{
	struct decode d = { .snap = snap, .out = out, .st = st };
	size_t tags;

	if (s->kind == TP_CTX_OTEL && snap)
		decode_otel(&d, s->blob, s->size);
	else if (s->kind == TP_CTX_CUSTOM)
		decode_custom(&d, s->blob, s->size);
	tags = d.n;

	if (s->tag_valid && snap)
		decode_tag(&d, s->tag);
	if (s->code)
		decode_code(&d, s, tags);
	*miss = d.miss;
	return d.n;
}

static void add_stats(struct labels_stats *to, const struct labels_stats *st)
{
#define ADD_COUNTER(field, text) to->field += st->field;
	LABELS_COUNTERS(ADD_COUNTER)
#undef ADD_COUNTER
}

size_t labels__resolve(struct ctxwatch *w, const struct labels_sample *s,
		       const struct labels_buf *out, struct labels_stats *st)
{
	struct labels_stats one = { 0 };
	enum ctxsnap_miss miss;
	size_t n;

	n = labels__decode(ctxwatch__snapshot(w, s->pid), s, out, &one, &miss);
	if (miss && ctxwatch__refresh(w, s->pid, s->time_ns, miss)) {
		memset(&one, 0, sizeof(one));
		n = labels__decode(ctxwatch__snapshot(w, s->pid), s, out, &one,
				   &miss);
	}
	add_stats(st, &one);
	return n;
}
