/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Thread context at sample time: from the thread pointer to the OTEP 4947
 * record (or a custom-labels v1 label set), copied into the sample record,
 * and the in-kernel --label filter. Every user read is bounded and every
 * failure counted. */
#ifndef TAGPROF_CONTEXT_BPF_H
#define TAGPROF_CONTEXT_BPF_H

/* The includer defines stat_inc and loop_helper: maps.bpf.h for the
 * sampler, bpf/sizes.bpf.c for tagprof sizes' label: sizes. */

#define CTX_SPACE TP_CTX_SPACE
_Static_assert(TP_OTEL_HDR_SIZE + TP_OTEL_ATTRS_MAX <= CTX_SPACE, "otel fits");
_Static_assert(TP_CL_MAX_LABELS * TP_CL_SLOT <= CTX_SPACE,
	       "custom labels fit");

static __always_inline __u64 thread_pointer(struct task_struct *task)
{
#if defined(__TARGET_ARCH_x86)
	return BPF_CORE_READ(task, thread.fsbase);
#elif defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ(task, thread.uw.tp_value);
#else
	return 0;
#endif
}

/* Reads the context pointer described by loc. 0: *ptr set (maybe NULL);
 * -1: unreadable (counted); -2: no context here (not an error). */
static __always_inline int read_ctx_pointer(const struct tp_tls_loc *loc,
					    __u64 tp, __u64 *ptr)
{
	__u64 slot, dtv, block;

	if (loc->kind == TP_TLS_STATIC) {
		slot = tp + loc->tpoff;
	} else if (loc->kind == TP_TLS_DTV) {
		if (loc->modid == 0 || loc->modid > 65536 || loc->dtv_off > 4096)
			return -1;
		if (bpf_probe_read_user(&dtv, sizeof(dtv),
					(void *)(tp + loc->dtv_off)))
			return -1;
		if (bpf_probe_read_user(&block, sizeof(block),
					(void *)(dtv + loc->modid * 16)))
			return -1;
		/* Not yet allocated for this thread: it never touched the
		 * variable, so it has no context. */
		if (block == 0 || block == (__u64)-1)
			return -2;
		slot = block + loc->offset;
	} else {
		return -2;
	}
	if (bpf_probe_read_user(ptr, sizeof(*ptr), (void *)slot))
		return -1;
	return 0;
}

/* The second read of an OTEP 4947 record goes, a piece at a time, to the
 * end of the context space, which the record (640 bytes at most) leaves
 * free: frames go there only once the context is read. */
#define OTEL_AGAIN_CHUNK	256
#define OTEL_AGAIN_OFF		(CTX_SPACE - OTEL_AGAIN_CHUNK)
_Static_assert(TP_OTEL_HDR_SIZE + TP_OTEL_ATTRS_MAX <= OTEL_AGAIN_OFF,
	       "the second read does not overwrite the first");
_Static_assert(3 * OTEL_AGAIN_CHUNK >= TP_OTEL_HDR_SIZE + TP_OTEL_ATTRS_MAX,
	       "three pieces cover a record");

/* True when the total bytes at rec are still those copied to dst. */
static __always_inline bool otel_same(__u64 rec, __u8 *dst, __u32 total)
{
	__u8 *again = dst + OTEL_AGAIN_OFF;

	for (int c = 0; c < 3; c++) {
		__u32 off = c * OTEL_AGAIN_CHUNK, n;

		if (off >= total)
			break;
		n = total - off;
		if (n > OTEL_AGAIN_CHUNK)
			n = OTEL_AGAIN_CHUNK;
		if (bpf_probe_read_user(again, n, (void *)(rec + off)))
			return false;
		for (int i = 0; i < OTEL_AGAIN_CHUNK / 8; i++) {
			__u32 b = i * 8;
			__u64 x, y, mask = ~0ull;

			if (b >= n)
				break;
			x = *(__u64 *)(again + b);
			y = *(__u64 *)(dst + off + b);
			/* past the record's end: bytes of neither read */
			if (n - b < 8)
				mask = (1ull << ((n - b) * 8)) - 1;
			if ((x ^ y) & mask)
				return false;
		}
	}
	return true;
}

/* Copies the OTEP 4947 record at rec into dst. Returns its size, or 0. */
static __always_inline __u32 read_otel(struct tp_stats *st, __u64 rec,
				       __u8 *dst)
{
	__u32 size;

	if (bpf_probe_read_user(dst, TP_OTEL_HDR_SIZE, (void *)rec)) {
		stat_inc(st, ctx_record_unreadable);
		return 0;
	}
	if (dst[24] != 1) {
		stat_inc(st, ctx_invalid);
		return 0;
	}
	size = dst[26] | (dst[27] << 8);
	if (size > TP_OTEL_ATTRS_MAX) {
		stat_inc(st, ctx_oversize);
		return 0;
	}
	if (bpf_probe_read_user(dst + TP_OTEL_HDR_SIZE, size,
				(void *)(rec + TP_OTEL_HDR_SIZE))) {
		stat_inc(st, ctx_record_unreadable);
		return 0;
	}
	/* Another thread rewriting it in place clears valid while it writes;
	 * but it can clear it, write and set it again between our two reads
	 * (valid=1 at both ends, the attributes half old, half new: issue 15,
	 * ctxstorm). So the whole record is read again and must be the same. */
	if (!otel_same(rec, dst, TP_OTEL_HDR_SIZE + size)) {
		stat_inc(st, ctx_torn);
		return 0;
	}
	return TP_OTEL_HDR_SIZE + size;
}

struct cl_string {
	__u64 len;
	__u64 buf;
};

struct cl_label {
	struct cl_string key;
	struct cl_string value;
};

struct cl_labelset {
	__u64 storage;
	__u64 count;
	__u64 capacity;
};

/* Reading a custom-labels set: where it lies, and what came of it. */
struct cl_read {
	struct tp_stats *st;
	__u8 *dst;		/* TP_CL_MAX_LABELS slots of TP_CL_SLOT */
	__u64 storage;		/* the set's label array */
	__u64 count;		/* its labels, as the set says */
	__u32 n;		/* slots filled, empty ones included */
};

/* Label i of the set into its slot: key and value cut to their maximums,
 * the slot left empty where the label was deleted or cannot be read.
 * Returns 1 once the set ends (its count, or storage that cannot be
 * read), else 0. */
static __always_inline int read_label(struct cl_read *c, __u64 i)
{
	struct cl_label l;
	__u32 klen, vlen;
	__u8 *slot;

	if (i >= TP_CL_MAX_LABELS || i >= c->count)
		return 1;
	slot = c->dst + i * TP_CL_SLOT;
	c->n = i + 1;
	slot[0] = TP_CL_EMPTY;
	if (bpf_probe_read_user(&l, sizeof(l),
				(void *)(c->storage + i * sizeof(l)))) {
		stat_inc(c->st, ctx_record_unreadable);
		c->n = i;
		return 1;
	}
	if (!l.key.buf)		/* deleted slot */
		return 0;
	klen = l.key.len > TP_CL_KEY_MAX ? TP_CL_KEY_MAX : l.key.len;
	vlen = l.value.len > TP_CL_VAL_MAX ? TP_CL_VAL_MAX : l.value.len;
	if (bpf_probe_read_user(slot + 1, klen, (void *)l.key.buf))
		return 0;
	if (bpf_probe_read_user(slot + 2 + TP_CL_KEY_MAX, vlen,
				(void *)l.value.buf))
		return 0;
	slot[0] = klen;
	slot[1 + TP_CL_KEY_MAX] = vlen;
	return 0;
}

static int label_step(__u64 i, void *arg)
{
	return read_label(arg, i);
}

/* Copies up to TP_CL_MAX_LABELS labels of a custom-labels v1 set at set
 * into fixed-size slots of dst (see TP_CL_SLOT). Fixed offsets keep the
 * verifier's work linear. In bpf_loop where the kernel has it: the
 * verifier then checks one label, not each of the ten in turn, which was
 * a quarter of all it did for the program (and of the start-up).
 * Returns the blob size: a whole number of slots.
 * Unlike an OTEP 4947 record, a set is not read a second time: the v1 ABI
 * keeps a set consistent whenever its own thread is stopped, as it is for
 * the sample, and has no flag to say it is not. A set that another thread
 * rewrites meanwhile breaks the ABI; it can only mislabel its own process's
 * samples, and every read stays bounded. */
static __always_inline __u32 read_custom(struct tp_stats *st, __u64 set,
					 __u8 *dst)
{
	struct cl_read c = { .st = st, .dst = dst };
	struct cl_labelset ls;

	if (bpf_probe_read_user(&ls, sizeof(ls), (void *)set)) {
		stat_inc(st, ctx_record_unreadable);
		return 0;
	}
	c.storage = ls.storage;
	c.count = ls.count;
	if (loop_helper) {
		bpf_loop(TP_CL_MAX_LABELS, label_step, &c, 0);
	} else {
		for (int i = 0; i < TP_CL_MAX_LABELS; i++)
			if (read_label(&c, i))
				break;
	}
	return c.n * TP_CL_SLOT;
}

/* Byte compare of n (<= TP_FILTER_VAL_MAX) bytes. */
static __always_inline bool same_bytes(const __u8 *a, const char *b, __u32 n)
{
	for (int i = 0; i < TP_FILTER_VAL_MAX; i++) {
		if (i >= n)
			return true;
		if (a[i] != (__u8)b[i])
			return false;
	}
	return true;
}

/* The value of cfg's key (filter_key_idx) in an OTel record: the last
 * entry with the key decides. *off and *len give it within blob. The
 * position is masked each round so the verifier sees the same bounds every
 * iteration and can prune. */
static __always_inline bool otel_find(const struct tp_proc_cfg *cfg,
				      const __u8 *blob, __u32 size,
				      __u32 *off, __u32 *len)
{
	__u32 pos = TP_OTEL_HDR_SIZE, found = 0, flen = 0, n;

	for (int i = 0; i < TP_OTEL_ATTRS_MAX / 2; i++) {
		pos &= CTX_SPACE - 1;
		if (pos + 2 > size)
			break;
		n = blob[(pos + 1) & (CTX_SPACE - 1)];
		if (blob[pos] == cfg->filter_key_idx) {
			found = pos + 2;
			flen = n;
		}
		pos += 2 + n;
	}
	found &= CTX_SPACE - 1;
	if (!found || found + flen > size)
		return false;
	*off = found;
	*len = flen;
	return true;
}

/* --label on an OTel record. */
static __always_inline bool otel_matches(const struct tp_proc_cfg *cfg,
					 const __u8 *blob, __u32 size)
{
	__u32 off, len;

	if (!otel_find(cfg, blob, size, &off, &len) ||
	    len != cfg->filter_len || off > CTX_SPACE - TP_FILTER_VAL_MAX)
		return false;
	return same_bytes(blob + off, cfg->filter_val, len);
}

/* The value of cfg's key (filter_key, by name) among custom labels: the
 * first slot with the key decides. *off and *len give it within blob. */
static __always_inline bool custom_find(const struct tp_proc_cfg *cfg,
					const __u8 *blob, __u32 size,
					__u32 *off, __u32 *len)
{
	const __u8 *slot;

	for (int i = 0; i < TP_CL_MAX_LABELS; i++) {
		if ((i + 1) * TP_CL_SLOT > size)
			return false;
		slot = blob + i * TP_CL_SLOT;
		if (slot[0] != cfg->filter_key_len ||
		    !same_bytes(slot + 1, cfg->filter_key, TP_CL_KEY_MAX < slot[0] ?
				TP_CL_KEY_MAX : slot[0]))
			continue;
		*off = i * TP_CL_SLOT + 2 + TP_CL_KEY_MAX;
		*len = slot[1 + TP_CL_KEY_MAX];
		return true;
	}
	return false;
}

/* --label on custom labels. */
static __always_inline bool custom_matches(const struct tp_proc_cfg *cfg,
					   const __u8 *blob, __u32 size)
{
	__u32 off, len;

	if (!custom_find(cfg, blob, size, &off, &len))
		return false;
	return len == cfg->filter_len &&
	       same_bytes(blob + off, cfg->filter_val,
			  cfg->filter_len > TP_CL_VAL_MAX ?
			  TP_CL_VAL_MAX : cfg->filter_len);
}

/* Fills the sample's context into blob. Returns false when --label says
 * to drop the sample. */
static __always_inline bool read_context(struct tp_stats *st,
					 struct task_struct *task,
					 const struct tp_proc_cfg *cfg,
					 struct tp_sample *hdr, __u8 *blob,
					 bool filter)
{
	__u64 tp, ptr;
	__u32 size = 0;
	int ret;

	hdr->ctx_kind = TP_CTX_NONE;
	hdr->ctx_size = 0;
	if (cfg->otel.kind == TP_TLS_NONE && cfg->custom.kind == TP_TLS_NONE)
		return !filter;
	tp = thread_pointer(task);
	ret = read_ctx_pointer(&cfg->otel, tp, &ptr);
	if (ret == 0 && ptr) {
		size = read_otel(st, ptr, blob);
		if (size) {
			hdr->ctx_kind = TP_CTX_OTEL;
			hdr->ctx_size = size;
			stat_inc(st, ctx_read);
			return !filter || otel_matches(cfg, blob, size);
		}
	} else if (ret == -1) {
		stat_inc(st, ctx_tls_unreadable);
	}
	ret = read_ctx_pointer(&cfg->custom, tp, &ptr);
	if (ret == 0 && ptr) {
		size = read_custom(st, ptr, blob);
		if (size) {
			hdr->ctx_kind = TP_CTX_CUSTOM;
			hdr->ctx_size = size;
			stat_inc(st, ctx_read);
			return !filter || custom_matches(cfg, blob, size);
		}
	} else if (ret == -1) {
		stat_inc(st, ctx_tls_unreadable);
	}
	return !filter;
}

#endif
