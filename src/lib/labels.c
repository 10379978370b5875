/* Label sets: each one is an OTEP 4947 thread record (plus a seal flag),
 * built by new/add/set_trace and then attached, read-only, by any number
 * of threads through the otel_thread_ctx_v1 TLS slot defined here. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The OTEP 4947 slot. Default visibility puts it in .dynsym; "used" keeps
 * it in a static link even if nothing there reads it. The library is built
 * with -ftls-model=global-dynamic -mtls-dialect=gnu2: a TLSDESC access in
 * the .so, relaxed by the linker to initial- or local-exec in an
 * executable (no call either way). */
__attribute__((visibility("default"), used))
__thread void *otel_thread_ctx_v1;

#define LABELS_ALIGN	64	/* no line shared with another heap object */
#define COOKIE_KEY	0x746167707266ULL	/* "tagprf": any constant works */

static bool sealed(const tagprof_labels *l)
{
	return __atomic_load_n(&l->sealed, __ATOMIC_RELAXED);
}

/* Tied to the address, so a set's bytes copied elsewhere do not pass. */
static uint64_t cookie_of(const tagprof_labels *l)
{
	return (uint64_t)(uintptr_t)l ^ COOKIE_KEY;
}

/* Threads racing to attach a fresh set may all get here; they all store
 * the same byte. A record that is not ours (another OTEP 4947 writer's,
 * handed back as "previous") is left alone. */
void tagprof__seal(const tagprof_labels *l)
{
	if (__atomic_load_n(&l->cookie, __ATOMIC_RELAXED) != cookie_of(l))
		return;
	__atomic_store_n(&((tagprof_labels *)l)->sealed, 1, __ATOMIC_RELAXED);
}

const tagprof_labels *tagprof__attach(const tagprof_labels *l)
{
	return tagprof_attach(l);
}

tagprof_labels *tagprof_labels_new(void)
{
	size_t size = (sizeof(tagprof_labels) + LABELS_ALIGN - 1) & ~(size_t)(LABELS_ALIGN - 1);
	tagprof_labels *l;
	int err;

	/* The profiler needs the schema version even for a set that only
	 * carries a trace id. */
	err = tagprof__ctx_ensure();
	if (err) {
		errno = -err;
		return NULL;
	}
	l = aligned_alloc(LABELS_ALIGN, size);
	if (!l)
		return NULL;
	memset(l, 0, size);
	/* Complete as it stands (no attributes), and only ever changed while
	 * no thread can have it attached. */
	l->valid = 1;
	l->cookie = cookie_of(l);
	return l;
}

void tagprof_labels_free(tagprof_labels *l)
{
	if (!l)
		return;
	/* Not a fix for freeing an attached set, but a reader racing with
	 * that bug more likely sees an invalid record than a stale one. The
	 * atomic store keeps the compiler from dropping it before free. */
	__atomic_store_n(&l->valid, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&l->cookie, 0, __ATOMIC_RELAXED);
	free(l);
}

int tagprof_labels_set_trace(tagprof_labels *l, const uint8_t trace_id[16],
			     const uint8_t span_id[8], uint8_t trace_flags)
{
	if (!l || !trace_id || !span_id)
		return -EINVAL;
	if (sealed(l))
		return -EBUSY;
	memcpy(l->trace_id, trace_id, sizeof(l->trace_id));
	memcpy(l->span_id, span_id, sizeof(l->span_id));
	l->trace_flags = trace_flags;
	return 0;
}

/* The entry [idx][len][bytes] for key_idx idx, or NULL. */
static uint8_t *find_attr(tagprof_labels *l, int idx)
{
	uint8_t *p = l->attrs, *end = l->attrs + l->attrs_size;

	for (; p < end; p += 2 + p[1]) {
		if (p[0] == idx)
			return p;
	}
	return NULL;
}

/* Writes the entry: over old (moving what follows) or at the end. The
 * caller has checked that it fits. */
static void put_attr(tagprof_labels *l, uint8_t *old, int idx,
		     const char *value, size_t vlen)
{
	uint8_t *end = l->attrs + l->attrs_size;
	uint8_t *p = end;

	if (old) {
		uint8_t *next = old + 2 + old[1];

		memmove(old + 2 + vlen, next, (size_t)(end - next));
		l->attrs_size -= 2 + old[1];
		p = old;
	}
	p[0] = (uint8_t)idx;
	p[1] = (uint8_t)vlen;
	memcpy(p + 2, value, vlen);
	l->attrs_size += 2 + vlen;
}

static bool str_ok(const char *s, size_t *len)
{
	*len = strnlen(s, TAGPROF_MAX_STR + 1);
	return *len <= TAGPROF_MAX_STR;
}

int tagprof_labels_add(tagprof_labels *l, const char *key, const char *value)
{
	size_t klen, vlen, size;
	uint8_t *old = NULL;
	int idx, err;

	if (!l || !key || !value)
		return -EINVAL;
	if (!str_ok(key, &klen) || !klen || !str_ok(value, &vlen))
		return -EINVAL;
	if (sealed(l))
		return -EBUSY;
	idx = tagprof__key_lookup(key, klen);
	if (idx >= 0)
		old = find_attr(l, idx);
	/* Check the room before registering, so a set that is full does not
	 * grow the process key map. */
	size = l->attrs_size + 2 + vlen - (old ? 2 + old[1] : 0);
	if (size > TAGPROF_ATTRS_MAX)
		return -ENOSPC;
	if (idx < 0) {
		idx = tagprof__key_intern(key, klen);
		if (idx < 0)
			return idx;
	} else {
		/* Known key, but the context may need publishing again
		 * (first add in a fork child). */
		err = tagprof__ctx_ensure();
		if (err)
			return err;
	}
	put_attr(l, old, idx, value, vlen);
	return 0;
}
