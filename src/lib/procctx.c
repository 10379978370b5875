/* The OTEP 4719 process context: a 32-byte header in a mapping of its own,
 * named OTEL_CTX so profilers find it in /proc/PID/maps, pointing at a
 * protobuf ProcessContext in this process's heap. Readers copy it with
 * process_vm_readv and trust it only when published_at_ns is non-zero and
 * the same before and after their copy; writers follow the protocol in
 * write_header(). Everything here runs under the library lock. */
#include "internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL		0x0008U		/* Linux 6.3 */
#endif
#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif

#ifndef TAGPROF_VERSION
#define TAGPROF_VERSION		"0.1.0"
#endif

#define CTX_NAME		"OTEL_CTX"
#define CTX_VERSION		2

struct ctx_header {
	char signature[8];		/* "OTEL_CTX", no NUL */
	uint32_t version;
	uint32_t payload_size;
	uint64_t published_at_ns;	/* CLOCK_BOOTTIME; 0: being updated */
	uint64_t payload;		/* address of the payload bytes */
};
_Static_assert(sizeof(struct ctx_header) == 32, "OTEP 4719 header");

static struct {
	struct ctx_header *hdr;		/* NULL until the first publish */
	size_t map_len;
	bool map_dontfork;		/* madvise(MADV_DONTFORK) took */
	pid_t pid;			/* the process that made hdr */
	uint64_t last_ns;
	uint8_t *payload;		/* what hdr points at */
	uint8_t *old_payload;		/* the one before: a reader may still
					 * be copying it */
	char *service_name;		/* NULL: the executable's name */
	struct tagprof__attr *extra;	/* deep copies, see attr_copy() */
	size_t nextra;
} ctx;

static bool ctx_published;	/* atomic: this process's context is current */

/* ---- the mapping ---- */

static void *map_memfd(size_t len)
{
	void *p;
	int fd;

	fd = memfd_create(CTX_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
	/* Kernels before 6.3 refuse the flag; OTEP 4719 retries without it
	 * on any failure. */
	if (fd < 0)
		fd = memfd_create(CTX_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return MAP_FAILED;
	p = MAP_FAILED;
	if (!ftruncate(fd, (off_t)len))
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	return p;
}

/* A memfd mapping shows as /memfd:OTEL_CTX (deleted) even on kernels
 * without anonymous VMA names; an anonymous one (sandboxes that forbid
 * memfd_create) is named by prctl in name_mapping(). */
static int map_create(void)
{
	size_t len = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	p = map_memfd(len);
	if (p == MAP_FAILED)
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	/* A child must not inherit a context that describes its parent. */
	ctx.map_dontfork = !madvise(p, len, MADV_DONTFORK);
	ctx.hdr = p;
	ctx.map_len = len;
	ctx.pid = getpid();
	return 0;
}

/* Errors ignored: older kernels, or a memfd mapping, which has its name. */
static void name_mapping(void)
{
	prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)ctx.hdr,
	      ctx.map_len, (unsigned long)CTX_NAME);
}

/* ---- publishing ---- */

/* Readers detect a change by the timestamp: it must always move forward. */
static uint64_t next_timestamp(void)
{
	struct timespec ts;
	uint64_t ns;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (ns <= ctx.last_ns)
		ns = ctx.last_ns + 1;
	ctx.last_ns = ns;
	return ns;
}

/* published_at = 0 tells readers an update is under way; the fences keep
 * the other fields' stores between the two timestamp stores. A fresh
 * mapping is zero-filled, so the first publish follows the same steps. */
static void write_header(const uint8_t *payload, size_t size)
{
	struct ctx_header *h = ctx.hdr;
	uint64_t ts = next_timestamp();

	__atomic_store_n(&h->published_at_ns, 0, __ATOMIC_RELAXED);
	atomic_thread_fence(memory_order_seq_cst);
	memcpy(h->signature, CTX_NAME, sizeof(h->signature));
	__atomic_store_n(&h->version, CTX_VERSION, __ATOMIC_RELAXED);
	__atomic_store_n(&h->payload_size, (uint32_t)size, __ATOMIC_RELAXED);
	__atomic_store_n(&h->payload, (uint64_t)(uintptr_t)payload, __ATOMIC_RELAXED);
	atomic_thread_fence(memory_order_seq_cst);
	__atomic_store_n(&h->published_at_ns, ts, __ATOMIC_RELAXED);
	name_mapping();
}

/* A reader that saw the previous header may still be copying the previous
 * payload; the one before that is safe to free (a reader re-checks the
 * timestamp, so a copy that slow is discarded anyway). */
static void retire_payload(uint8_t *payload)
{
	free(ctx.old_payload);
	ctx.old_payload = ctx.payload;
	ctx.payload = payload;
}

static const char *exe_name(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	char *slash;

	if (n <= 0)
		return program_invocation_short_name;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	return slash ? slash + 1 : buf;
}

static int encode_payload(unsigned int nkeys, uint8_t **out, size_t *len)
{
	char exe[4096];
	const char *name = ctx.service_name ? ctx.service_name : exe_name(exe, sizeof(exe));
	const struct tagprof__attr res[] = {
		{ .key = "service.name", .kind = TAGPROF__VAL_STRING, .s = name },
		{ .key = "telemetry.sdk.name", .kind = TAGPROF__VAL_STRING, .s = "libtagprof" },
		{ .key = "telemetry.sdk.language", .kind = TAGPROF__VAL_STRING, .s = "c" },
		{ .key = "telemetry.sdk.version", .kind = TAGPROF__VAL_STRING, .s = TAGPROF_VERSION },
	};
	struct tagprof__attr *extra;
	int err;

	extra = calloc(2 + ctx.nextra, sizeof(*extra));
	if (!extra)
		return -ENOMEM;
	extra[0] = (struct tagprof__attr){
		.key = "threadlocal.schema_version",
		.kind = TAGPROF__VAL_STRING, .s = "tlsdesc_v1_dev",
	};
	extra[1] = (struct tagprof__attr){
		.key = "threadlocal.attribute_key_map",
		.kind = TAGPROF__VAL_STRINGS,
		.strs = { .v = tagprof__keys(), .n = nkeys },
	};
	if (ctx.nextra)
		memcpy(&extra[2], ctx.extra, ctx.nextra * sizeof(*extra));
	err = tagprof__pb_encode_ctx(res, sizeof(res) / sizeof(res[0]),
				     extra, 2 + ctx.nextra, out, len);
	free(extra);
	return err;
}

int tagprof__ctx_publish_locked(unsigned int nkeys)
{
	uint8_t *payload;
	size_t size;
	int err;

	err = encode_payload(nkeys, &payload, &size);
	if (err)
		return err;
	if (size > TAGPROF_CTX_PAYLOAD_MAX) {
		err = -ENOSPC;
		goto fail;
	}
	/* A fork child (or a raw clone) has no mapping of its own. */
	if (!ctx.hdr || ctx.pid != getpid()) {
		err = map_create();
		if (err)
			goto fail;
	}
	write_header(payload, size);
	retire_payload(payload);
	__atomic_store_n(&ctx_published, true, __ATOMIC_RELEASE);
	return 0;
fail:
	free(payload);
	return err;
}

int tagprof__ctx_ensure(void)
{
	int err = 0;

	if (__atomic_load_n(&ctx_published, __ATOMIC_ACQUIRE))
		return 0;
	tagprof__lock();
	if (!__atomic_load_n(&ctx_published, __ATOMIC_RELAXED))
		err = tagprof__ctx_publish_locked(tagprof__nkeys_locked());
	tagprof__unlock();
	return err;
}

void tagprof__ctx_forked_child(void)
{
	/* Normally MADV_DONTFORK left nothing to unmap; if it failed, the
	 * parent's copy must not stay behind under the OTEL_CTX name. */
	if (ctx.hdr && !ctx.map_dontfork)
		munmap(ctx.hdr, ctx.map_len);
	ctx.hdr = NULL;
	__atomic_store_n(&ctx_published, false, __ATOMIC_RELAXED);
}

int tagprof_process_init(const char *service_name)
{
	char *copy = NULL, *old;
	int err;

	if (service_name && !*service_name)
		return -EINVAL;
	if (service_name && !(copy = strdup(service_name)))
		return -ENOMEM;
	tagprof__lock();
	old = ctx.service_name;
	ctx.service_name = copy;
	err = tagprof__ctx_publish_locked(tagprof__nkeys_locked());
	if (err) {	/* keep what is published and what we hold in step */
		ctx.service_name = old;
		old = copy;
	}
	tagprof__unlock();
	free(old);
	return err;
}

/* ---- the extra attribute registry ---- */

static void attr_release(struct tagprof__attr *a)
{
	free((char *)a->key);
	if (a->kind == TAGPROF__VAL_STRING) {
		free((char *)a->s);
	} else if (a->kind == TAGPROF__VAL_STRINGS) {
		for (size_t i = 0; i < a->strs.n; i++)
			free((char *)a->strs.v[i]);
		free((char **)a->strs.v);
	}
	memset(a, 0, sizeof(*a));
}

static int strs_copy(struct tagprof__attr *dst, const struct tagprof__attr *src)
{
	char **v = calloc(src->strs.n ? src->strs.n : 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	dst->strs.v = (const char *const *)v;
	for (; dst->strs.n < src->strs.n; dst->strs.n++) {
		v[dst->strs.n] = strdup(src->strs.v[dst->strs.n]);
		if (!v[dst->strs.n])
			return -ENOMEM;
	}
	return 0;
}

/* A deep copy; on failure dst is released. */
static int attr_copy(struct tagprof__attr *dst, const struct tagprof__attr *src)
{
	int err = -ENOMEM;

	*dst = (struct tagprof__attr){ .kind = src->kind };
	dst->key = strdup(src->key);
	if (!dst->key)
		goto fail;
	switch (src->kind) {
	case TAGPROF__VAL_STRING:
		dst->s = strdup(src->s);
		if (!dst->s)
			goto fail;
		break;
	case TAGPROF__VAL_STRINGS:
		err = strs_copy(dst, src);
		if (err)
			goto fail;
		break;
	case TAGPROF__VAL_BOOL:
	case TAGPROF__VAL_INT:
		dst->i = src->i;	/* the union, whole */
		break;
	}
	return 0;
fail:
	attr_release(dst);
	return err;
}

static bool attr_valid(const struct tagprof__attr *a)
{
	if (!a || !a->key || !*a->key)
		return false;
	/* The threadlocal.* keys belong to the key map, written above. */
	if (!strncmp(a->key, "threadlocal.", 12))
		return false;
	if (a->kind == TAGPROF__VAL_STRING)
		return a->s;
	if (a->kind == TAGPROF__VAL_STRINGS) {
		if (a->strs.n && !a->strs.v)
			return false;
		for (size_t i = 0; i < a->strs.n; i++)
			if (!a->strs.v[i])
				return false;
	}
	return a->kind <= TAGPROF__VAL_STRINGS;
}

static ssize_t attr_find_in(const struct tagprof__attr *v, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].key, key))
			return (ssize_t)i;
	return -1;
}

#define SET_ATTRS_MAX	8	/* entries one tagprof__ctx_set_attrs_locked() sets */

/* Puts a[0..n) into the registry, each replacing its key's entry, and
 * republishes. On success a[] holds what was replaced (or nothing), for
 * the caller to release; on failure the registry is as it was and a[] is
 * released. The keys must be distinct. */
static int attrs_insert_locked(struct tagprof__attr *a, size_t n)
{
	struct tagprof__attr *old = ctx.extra, *next;
	size_t nold = ctx.nextra, nnext = nold;
	size_t pos[SET_ATTRS_MAX];
	int err;

	next = malloc((nold + n) * sizeof(*next));
	if (!next) {
		for (size_t i = 0; i < n; i++)
			attr_release(&a[i]);
		return -ENOMEM;
	}
	if (nold)
		memcpy(next, old, nold * sizeof(*next));
	for (size_t i = 0; i < n; i++) {
		struct tagprof__attr displaced = { 0 };
		ssize_t j = attr_find_in(next, nold, a[i].key);

		if (j < 0)
			j = (ssize_t)nnext++;
		else
			displaced = next[j];
		next[j] = a[i];
		a[i] = displaced;
		pos[i] = (size_t)j;
	}
	ctx.extra = next;
	ctx.nextra = nnext;
	err = tagprof__ctx_publish_locked(tagprof__nkeys_locked());
	if (err) {
		/* The displaced entries are still old's; ours go. */
		for (size_t i = 0; i < n; i++) {
			attr_release(&next[pos[i]]);
			memset(&a[i], 0, sizeof(a[i]));
		}
		ctx.extra = old;
		ctx.nextra = nold;
		free(next);
		return err;
	}
	free(old);
	return 0;
}

int tagprof__ctx_set_attrs_locked(const struct tagprof__attr *a, size_t n)
{
	struct tagprof__attr copy[SET_ATTRS_MAX];
	size_t ncopied = 0;
	int err = 0;

	if (!n || n > SET_ATTRS_MAX || !a)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!attr_valid(&a[i]))
			return -EINVAL;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(a[i].key, a[j].key))
				return -EINVAL;
	}
	for (; ncopied < n && !err; ncopied++)
		err = attr_copy(&copy[ncopied], &a[ncopied]);
	if (err) {	/* the failed one released itself */
		for (size_t i = 0; i + 1 < ncopied; i++)
			attr_release(&copy[i]);
		return err;
	}
	err = attrs_insert_locked(copy, n);
	for (size_t i = 0; i < n; i++)
		attr_release(&copy[i]);
	return err;
}

int tagprof__ctx_set_attr(const struct tagprof__attr *a)
{
	int err;

	tagprof__lock();
	err = tagprof__ctx_set_attrs_locked(a, 1);
	tagprof__unlock();
	return err;
}

const struct tagprof__attr *tagprof__ctx_attr_locked(const char *key)
{
	ssize_t i = attr_find_in(ctx.extra, ctx.nextra, key);

	return i < 0 ? NULL : &ctx.extra[i];
}

/* The array only grows, so a failed publish just takes the string back
 * (the larger allocation stays, harmlessly). */
int tagprof__ctx_append_str_locked(const char *key, const char *s)
{
	ssize_t i = attr_find_in(ctx.extra, ctx.nextra, key);
	struct tagprof__attr *a;
	char **v, *copy;
	int err;

	if (i < 0 || ctx.extra[i].kind != TAGPROF__VAL_STRINGS)
		return -ENOENT;
	a = &ctx.extra[i];
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	v = realloc((char **)a->strs.v, (a->strs.n + 1) * sizeof(*v));
	if (!v) {
		free(copy);
		return -ENOMEM;
	}
	a->strs.v = (const char *const *)v;
	v[a->strs.n++] = copy;
	err = tagprof__ctx_publish_locked(tagprof__nkeys_locked());
	if (err) {
		a->strs.n--;
		free(copy);
	}
	return err;
}
