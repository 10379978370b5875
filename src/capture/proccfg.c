// SPDX-License-Identifier: BSD-2-Clause
/* The per-process BPF settings, held here and mirrored in the map. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "capture/proccfg.h"
#include "kernel/sampler.h"
#include "proc/ctxwatch.h"
#include "sample_event.h"
#include "capture/cfiload.h"
#include "unwind/unwind.h"
#include "util/hashmap.h"

struct proccfg {
	struct sampler *sampler;	/* NULL: values only held */
	struct cfiload *cfi;		/* with the sampler */
	struct hashmap *procs;		/* pid -> struct tp_proc_cfg * */
	char *label_key, *label_val;	/* --label */
	char *tag_field, *tag_name;	/* --tag */
};

/* strdup that keeps NULL as NULL; false on ENOMEM. */
static bool dup_opt(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return !src || *dst;
}

struct proccfg *proccfg__new(const struct proccfg_filters *f)
{
	struct proccfg *c = calloc(1, sizeof(*c));
	bool ok;

	if (!c)
		return NULL;
	c->procs = hashmap__new(0);
	ok = c->procs && dup_opt(&c->label_key, f->label_key) &&
	     dup_opt(&c->label_val, f->label_val) &&
	     dup_opt(&c->tag_field, f->tag_field) &&
	     dup_opt(&c->tag_name, f->tag_name);
	if (!ok) {
		proccfg__free(c);
		return NULL;
	}
	return c;
}

void proccfg__free(struct proccfg *c)
{
	if (!c)
		return;
	hashmap__free_values(c->procs, free);
	cfiload__free(c->cfi);
	free(c->label_key);
	free(c->label_val);
	free(c->tag_field);
	free(c->tag_name);
	free(c);
}

const struct tp_proc_cfg *proccfg__get(const struct proccfg *c, uint32_t pid)
{
	uint64_t v;

	return hashmap__get(c->procs, &pid, sizeof(pid), &v) ?
		       (const struct tp_proc_cfg *)(uintptr_t)v : NULL;
}

void proccfg__attach(struct proccfg *c, struct sampler *s)
{
	size_t it = 0;
	const void *key;
	uint64_t v;

	c->sampler = s;
	c->cfi = cfiload__new(s);	/* NULL: marked stacks are copied */
	while (hashmap__next(c->procs, &it, &key, NULL, &v))
		sampler__write_proc_cfg(s, *(const uint32_t *)key,
					(const struct tp_proc_cfg *)(uintptr_t)v);
}

/* Makes v pid's value: the map's first, then the one held. */
static int put(struct proccfg *c, uint32_t pid, const struct tp_proc_cfg *v)
{
	struct tp_proc_cfg *held = (struct tp_proc_cfg *)proccfg__get(c, pid);
	bool added = !held;
	int err;

	if (added && !(held = malloc(sizeof(*held))))
		return -ENOMEM;
	if (c->sampler && (err = sampler__write_proc_cfg(c->sampler, pid, v))) {
		if (added)
			free(held);
		return err;
	}
	if (added && hashmap__put(c->procs, &pid, sizeof(pid), (uintptr_t)held)) {
		free(held);
		if (c->sampler)	/* nothing the owner does not hold */
			sampler__delete_proc_cfg(c->sampler, pid);
		return -ENOMEM;
	}
	*held = *v;
	return 0;
}

static void drop(struct proccfg *c, uint32_t pid)
{
	uint64_t v;

	if (c->sampler)
		sampler__delete_proc_cfg(c->sampler, pid);
	if (hashmap__del(c->procs, &pid, sizeof(pid), &v))
		free((void *)(uintptr_t)v);
}

/* Index of the --label key in this process's key map. */
static uint32_t filter_key_idx(const struct proccfg *c,
			       const struct ctxsnap *snap)
{
	for (size_t i = 0; i < snap->ctx.nkeys; i++)
		if (!strcmp(snap->ctx.keys[i], c->label_key))
			return i;
	return TP_FILTER_NO_KEY;
}

/* Tag register and --tag filter; a filter that cannot be resolved yet
 * (name not registered) is set to match nothing. */
static void fill_tags(const struct proccfg *c, const struct ctxsnap *snap,
		      struct tp_proc_cfg *v)
{
	uint64_t mask = 0, value = 0;

	if (c->tag_field &&
	    !tagdecl__filter(&snap->tags, c->tag_field, c->tag_name, &mask,
			     &value)) {
		mask = 0;
		value = 1;	/* (tag & 0) != 1: never */
	}
	v->tag_reg = snap->tags.reg;
	v->tag_filter_mask = mask;
	v->tag_filter_value = value;
}

static void fill_label(const struct proccfg *c, const struct ctxsnap *snap,
		       struct tp_proc_cfg *v)
{
	if (!c->label_key)
		return;
	v->filter_key_idx = filter_key_idx(c, snap);
	v->filter_len = strlen(c->label_val);
	memcpy(v->filter_val, c->label_val, v->filter_len);
	v->filter_key_len = strlen(c->label_key);
	if (v->filter_key_len > TP_CL_KEY_MAX)	/* BPF keeps only that much */
		v->filter_key_len = TP_CL_KEY_MAX;
	memcpy(v->filter_key, c->label_key, v->filter_key_len);
}

int proccfg__set_context(void *arg, uint32_t pid,
			 const struct ctxwatch_found *found)
{
	struct proccfg *c = arg;
	const struct tp_proc_cfg *old = proccfg__get(c, pid);
	struct tp_proc_cfg v = { 0 };

	if (!found) {
		drop(c, pid);
		return 0;
	}
	v.otel = *found->otel;
	v.custom = *found->custom;
	fill_tags(c, found->snap, &v);
	fill_label(c, found->snap, &v);
	if (old)	/* the unwinder's mark stays */
		v.unwind = old->unwind;
	return put(c, pid, &v);
}

int proccfg__set_unwind(struct proccfg *c, uint32_t pid, int how)
{
	static const struct tp_proc_cfg zero;
	const struct tp_proc_cfg *old = proccfg__get(c, pid);
	struct tp_proc_cfg v = old ? *old : zero;

	if (!old && how == TP_PROC_UNWIND_DEFAULT)
		return 0;
	v.unwind = how;
	/* An entry that only held the mark goes when it is reset, so that
	 * the map keeps room for the processes that need it. */
	if (!memcmp(&v, &zero, sizeof(v))) {
		drop(c, pid);
		return 0;
	}
	return put(c, pid, &v);
}

/* How a marked process's stacks are had: walked by the kernel's CFI
 * tables where they can be put in the kernel for it, else copied. */
static int marked_unwind(struct proccfg *c, struct unwinder *u, uint32_t pid)
{
	int err;

	if (!c->cfi)
		return TP_PROC_UNWIND_COPY;
	/* On before the tables go in: cfiload__put gives them one by one,
	 * and until the first, the walk is by frame pointers. */
	proccfg__set_unwind(c, pid, TP_PROC_UNWIND_CFI);
	err = cfiload__put(c->cfi, u, pid);
	if (err != -ENOTSUP)
		unwinder__cfi_result(u, pid, !err);
	return err ? TP_PROC_UNWIND_COPY : TP_PROC_UNWIND_CFI;
}

void proccfg__apply_marks(struct proccfg *c, struct unwinder *u)
{
	struct unwind_mark m[64];
	size_t n;
	int how;

	while ((n = unwinder__take_marks(u, m, 64)))
		for (size_t i = 0; i < n; i++) {
			how = TP_PROC_UNWIND_DEFAULT;
			if (m[i].copy)
				how = marked_unwind(c, u, m[i].pid);
			if (how != TP_PROC_UNWIND_CFI && c->cfi)
				cfiload__drop(c->cfi, m[i].pid);
			if (proccfg__set_unwind(c, m[i].pid, how))
				unwinder__mark_refused(u, m[i].pid, m[i].copy);
		}
}

void proccfg__sweep(struct proccfg *c)
{
	if (c->cfi)
		cfiload__sweep(c->cfi);
}

void proccfg__cfi_usage(const struct proccfg *c, struct cfiload_usage *out)
{
	if (c->cfi)
		cfiload__usage(c->cfi, out);
	else
		*out = (struct cfiload_usage){ 0 };
}
