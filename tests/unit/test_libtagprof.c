/* Unit tests for libtagprof (src/lib/), linked with libtagprof.a as a
 * static user would link it. No mocks: records are checked byte by byte
 * against the OTEP 4947 layout, the process context is found in
 * /proc/self/maps, copied with process_vm_readv as a profiler does, and
 * decoded with the protobuf-c code generated from the agent's proto
 * (independent of the library's hand-written encoder). Keys are
 * process-wide, so every case uses key names of its own. */
#include "tagprof/tagprof.h"
#include "lib/internal.h"
#include "check.h"
#include "ctx_snapshot.h"

#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- helpers: the record ---- */

static const uint8_t *rec(const tagprof_labels *l)
{
	return (const uint8_t *)l;
}

static uint16_t rec_attrs_size(const tagprof_labels *l)
{
	uint16_t v;

	memcpy(&v, rec(l) + 26, sizeof(v));
	return v;
}

static int add_n(tagprof_labels *l, const char *key, char c, size_t n)
{
	char v[300];

	memset(v, c, n);
	v[n] = '\0';
	return tagprof_labels_add(l, key, v);
}

/* ---- helpers: the process context, read as a profiler reads it ---- */

static const Tagprof__Otel__AnyValue *res_attr(const struct ctx_snap *s, const char *key)
{
	if (!s->pc->resource)
		return NULL;
	return kv_find(s->pc->resource->attributes, s->pc->resource->n_attributes, key);
}

static const Tagprof__Otel__ArrayValue *key_map(const struct ctx_snap *s)
{
	const Tagprof__Otel__AnyValue *v = extra_attr(s, "threadlocal.attribute_key_map");

	if (!v || v->value_case != TAGPROF__OTEL__ANY_VALUE__VALUE_ARRAY_VALUE)
		return NULL;
	return v->array_value;
}

/* The key's index in the published key map, or -1. */
static int published_idx(const char *key)
{
	struct ctx_snap s;
	const Tagprof__Otel__ArrayValue *km;
	int idx = -1;

	if (!snap_take(&s) && (km = key_map(&s))) {
		for (size_t i = 0; i < km->n_values; i++)
			if (any_is_str(km->values[i], key))
				idx = (int)i;
	}
	snap_free(&s);
	return idx;
}

/* ---- helpers: ELF, through readelf ---- */

#define PATH_BUF	(PATH_MAX + 64)	/* a directory and a file name */

static char build_dir[PATH_MAX];

/* The test binary is $(BUILD)/tests/test_libtagprof. */
static const char *build_path(const char *name, char *buf, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n;

	if (!build_dir[0]) {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		snprintf(build_dir, sizeof(build_dir), "%s", dirname(dirname(exe)));
	}
	snprintf(buf, size, "%s/%s", build_dir, name);
	return buf;
}

/* Whether a line of cmd's output has all the words; that line in line. */
static bool cmd_has_line(const char *cmd, const char *const *words, char *line, size_t size)
{
	FILE *p = popen(cmd, "r");
	bool found = false;
	char junk[512];

	if (!p)
		return false;
	while (!found && fgets(line, (int)size, p)) {
		found = true;
		for (const char *const *w = words; *w; w++)
			found = found && strstr(line, *w);
	}
	while (fgets(junk, sizeof(junk), p))	/* drain: no SIGPIPE for readelf */
		;
	pclose(p);
	return found;
}

/* A defined, TLS, GLOBAL, DEFAULT otel_thread_ctx_v1 in .dynsym. */
static bool dynsym_has_tls(const char *path)
{
	static const char *const words[] = {
		" TLS ", " GLOBAL ", " DEFAULT ", " otel_thread_ctx_v1", NULL,
	};
	char cmd[PATH_BUF + 64], line[512];

	snprintf(cmd, sizeof(cmd), "readelf --dyn-syms -W '%s' 2>/dev/null", path);
	return cmd_has_line(cmd, words, line, sizeof(line)) && !strstr(line, " UND ");
}

/* ---- cases: the record ---- */

static void test_record_layout(void)
{
	tagprof_labels *l = tagprof_labels_new();
	uint8_t want[28 + 10] = { 0 };
	int iq, it;

	CHECK(l);
	CHECK(tagprof_labels_add(l, "layout.query_id", "q7") == 0);
	CHECK(tagprof_labels_add(l, "layout.tenant", "acme") == 0);
	iq = published_idx("layout.query_id");
	it = published_idx("layout.tenant");
	CHECK(iq >= 0 && it == iq + 1);
	/* 16 zero trace id, 8 zero span id, valid, flags, attrs_size, attrs */
	want[24] = 1;		/* valid; attrs_size is checked natively */
	memcpy(want + 28, (uint8_t[]){ (uint8_t)iq, 2, 'q', '7' }, 4);
	memcpy(want + 32, (uint8_t[]){ (uint8_t)it, 4, 'a', 'c', 'm', 'e' }, 6);
	CHECK(rec_attrs_size(l) == 10);
	CHECK(!memcmp(rec(l), want, 26));
	CHECK(!memcmp(rec(l) + 28, want + 28, 10));
	tagprof_labels_free(l);
}

static void test_record_trace(void)
{
	tagprof_labels *l = tagprof_labels_new();
	uint8_t tid[16], sid[8];

	CHECK(l);
	for (int i = 0; i < 16; i++)
		tid[i] = (uint8_t)(0xa0 + i);
	for (int i = 0; i < 8; i++)
		sid[i] = (uint8_t)(0x10 + i);
	CHECK(tagprof_labels_set_trace(l, tid, sid, 0x01) == 0);
	CHECK(tagprof_labels_add(l, "trace.k", "v") == 0);
	CHECK(!memcmp(rec(l), tid, 16));
	CHECK(!memcmp(rec(l) + 16, sid, 8));
	CHECK(rec(l)[24] == 1 && rec(l)[25] == 0x01);
	CHECK(rec_attrs_size(l) == 3);
	/* Setting it again, before attach, replaces it. */
	memset(tid, 0x55, sizeof(tid));
	CHECK(tagprof_labels_set_trace(l, tid, sid, 0) == 0);
	CHECK(rec(l)[0] == 0x55 && rec(l)[15] == 0x55 && rec(l)[25] == 0);
	tagprof_labels_free(l);
}

/* A key added twice keeps its place; the value is the later one. */
static void test_record_replace(void)
{
	tagprof_labels *l = tagprof_labels_new();
	int ia, ib;

	CHECK(l);
	CHECK(tagprof_labels_add(l, "replace.a", "1") == 0);
	CHECK(tagprof_labels_add(l, "replace.b", "22") == 0);
	CHECK(tagprof_labels_add(l, "replace.a", "333") == 0);
	ia = published_idx("replace.a");
	ib = published_idx("replace.b");
	CHECK(ia >= 0 && ib >= 0);
	CHECK(rec_attrs_size(l) == 5 + 4);
	CHECK(!memcmp(rec(l) + 28, ((uint8_t[]){ (uint8_t)ia, 3, '3', '3', '3',
					       (uint8_t)ib, 2, '2', '2' }), 9));
	CHECK(tagprof_labels_add(l, "replace.a", "") == 0);
	CHECK(rec_attrs_size(l) == 2 + 4);
	CHECK(!memcmp(rec(l) + 28, ((uint8_t[]){ (uint8_t)ia, 0, (uint8_t)ib, 2, '2', '2' }), 6));
	tagprof_labels_free(l);
}

/* ---- cases: errors ---- */

static void test_errors_einval(void)
{
	tagprof_labels *l = tagprof_labels_new();
	uint8_t id[16] = { 0 };

	CHECK(l);
	CHECK(tagprof_labels_add(NULL, "k", "v") == -EINVAL);
	CHECK(tagprof_labels_add(l, NULL, "v") == -EINVAL);
	CHECK(tagprof_labels_add(l, "einval.k", NULL) == -EINVAL);
	CHECK(tagprof_labels_add(l, "", "v") == -EINVAL);
	CHECK(tagprof_labels_set_trace(NULL, id, id, 0) == -EINVAL);
	CHECK(tagprof_labels_set_trace(l, NULL, id, 0) == -EINVAL);
	CHECK(tagprof_labels_set_trace(l, id, NULL, 0) == -EINVAL);
	CHECK(tagprof_process_init("") == -EINVAL);
	CHECK(rec_attrs_size(l) == 0);
	tagprof_labels_free(l);
}

static void test_errors_lengths(void)
{
	tagprof_labels *l = tagprof_labels_new();
	char key[300];

	CHECK(l);
	/* 255 bytes is the most a u8 length holds, key or value. */
	CHECK(add_n(l, "len.value", 'v', 256) == -EINVAL);
	CHECK(add_n(l, "len.value", 'v', 255) == 0);
	memset(key, 'k', 256);
	key[256] = '\0';
	CHECK(tagprof_labels_add(l, key, "v") == -EINVAL);
	CHECK(published_idx(key) < 0);
	key[255] = '\0';
	CHECK(tagprof_labels_add(l, key, "v") == 0);
	CHECK(published_idx(key) >= 0);
	CHECK(rec_attrs_size(l) == 257 + 3);
	tagprof_labels_free(l);
}

static void test_errors_enospc_record(void)
{
	tagprof_labels *l = tagprof_labels_new();

	CHECK(l);
	/* 257 + 257 + 98 = 612: the record is exactly 640 bytes. */
	CHECK(add_n(l, "nospc.a", 'a', 255) == 0);
	CHECK(add_n(l, "nospc.b", 'b', 255) == 0);
	CHECK(add_n(l, "nospc.c", 'c', 97) == -ENOSPC);
	CHECK(add_n(l, "nospc.c", 'c', 96) == 0);
	CHECK(rec_attrs_size(l) == 612);
	CHECK(tagprof_labels_add(l, "nospc.d", "") == -ENOSPC);
	/* A key refused for room is not registered. */
	CHECK(published_idx("nospc.d") < 0);
	/* Replacing may shrink or keep the size, not grow it past 612. */
	CHECK(add_n(l, "nospc.c", 'C', 97) == -ENOSPC);
	CHECK(add_n(l, "nospc.c", 'C', 96) == 0);
	CHECK(rec_attrs_size(l) == 612);
	CHECK(rec(l)[28 + 257 + 257 + 2] == 'C');
	CHECK(add_n(l, "nospc.a", 'A', 1) == 0);
	CHECK(rec_attrs_size(l) == 612 - 254);
	tagprof_labels_free(l);
}

static void test_errors_ebusy(void)
{
	tagprof_labels *l = tagprof_labels_new();
	uint8_t id[16] = { 1 };
	const tagprof_labels *prev;

	CHECK(l);
	CHECK(tagprof_labels_add(l, "busy.k", "v") == 0);
	prev = tagprof_attach(l);
	CHECK(tagprof_labels_add(l, "busy.k2", "v") == -EBUSY);	/* attached */
	tagprof_attach(prev);
	CHECK(tagprof_labels_add(l, "busy.k2", "v") == -EBUSY);	/* and after */
	CHECK(tagprof_labels_add(l, "busy.k", "w") == -EBUSY);
	CHECK(tagprof_labels_set_trace(l, id, id, 1) == -EBUSY);
	CHECK(published_idx("busy.k2") < 0);
	CHECK(rec_attrs_size(l) == 3 && rec(l)[30] == 'v' && rec(l)[0] == 0);
	tagprof_labels_free(l);
}

/* The out-of-line attach seals too. */
static void test_errors_ebusy_outofline(void)
{
	tagprof_labels *l = tagprof_labels_new();

	CHECK(l);
	tagprof__attach(tagprof__attach(l));
	CHECK(tagprof_labels_add(l, "busy.k3", "v") == -EBUSY);
	tagprof_labels_free(l);
}

/* ---- cases: attach ---- */

static void test_attach_nesting(void)
{
	tagprof_labels *a = tagprof_labels_new(), *b = tagprof_labels_new();
	const tagprof_labels *p1, *p2;

	CHECK(a && b);
	CHECK(otel_thread_ctx_v1 == NULL);
	p1 = tagprof_attach(a);
	CHECK(p1 == NULL && otel_thread_ctx_v1 == a);
	p2 = tagprof_attach(b);
	CHECK(p2 == a && otel_thread_ctx_v1 == b);
	CHECK(tagprof_attach(p2) == b && otel_thread_ctx_v1 == a);
	CHECK(tagprof_attach(p1) == a && otel_thread_ctx_v1 == NULL);
	/* NULL detaches, and attaching the same set twice is fine. */
	tagprof_attach(a);
	CHECK(tagprof_attach(a) == a);
	CHECK(tagprof_attach(NULL) == a && otel_thread_ctx_v1 == NULL);
	CHECK(tagprof_attach(NULL) == NULL);
	/* The function form agrees with the inline one. */
	CHECK(tagprof__attach(b) == NULL && otel_thread_ctx_v1 == b);
	CHECK(tagprof__attach(NULL) == b && otel_thread_ctx_v1 == NULL);
	tagprof_labels_free(a);
	tagprof_labels_free(b);
}

/* Another OTEP 4947 writer sharing the slot: its record comes back as
 * "previous" and is restored as is, and never written, even when the
 * memory after it reads as zero (an unsealed flag). */
static void test_attach_foreign_record(void)
{
	uint8_t *foreign = calloc(1, 704), before[704];
	tagprof_labels *l = tagprof_labels_new();
	const tagprof_labels *prev;
	void *saved;

	CHECK(foreign && l);
	foreign[24] = 1;	/* valid, no attributes */
	memcpy(before, foreign, sizeof(before));
	saved = otel_thread_ctx_v1;
	otel_thread_ctx_v1 = foreign;	/* what the other writer does */
	prev = tagprof_attach(l);
	CHECK(prev == (const void *)foreign && otel_thread_ctx_v1 == l);
	CHECK(tagprof_attach(prev) == l && otel_thread_ctx_v1 == foreign);
	CHECK(tagprof__attach(prev) == prev);
	CHECK(!memcmp(before, foreign, sizeof(before)));
	otel_thread_ctx_v1 = saved;
	CHECK(tagprof_labels_add(l, "foreign.k", "v") == -EBUSY);
	tagprof_labels_free(l);
	free(foreign);
}

struct thr {
	pthread_barrier_t *bar;
	const tagprof_labels *set;
	bool ok;
};

static void *thr_main(void *arg)
{
	struct thr *t = arg;
	const tagprof_labels *prev;

	t->ok = otel_thread_ctx_v1 == NULL;	/* a new thread starts detached */
	prev = tagprof_attach(t->set);
	pthread_barrier_wait(t->bar);		/* both attached */
	t->ok = t->ok && prev == NULL && otel_thread_ctx_v1 == t->set;
	pthread_barrier_wait(t->bar);
	tagprof_attach(prev);
	t->ok = t->ok && otel_thread_ctx_v1 == NULL;
	return NULL;
}

static void test_attach_per_thread(void)
{
	tagprof_labels *a = tagprof_labels_new(), *b = tagprof_labels_new();
	pthread_barrier_t bar;
	struct thr t[2] = { { &bar, a, false }, { &bar, b, false } };
	pthread_t th[2];
	const tagprof_labels *prev;

	CHECK(a && b);
	prev = tagprof_attach(a);	/* ours must not leak into theirs */
	pthread_barrier_init(&bar, NULL, 2);
	for (int i = 0; i < 2; i++)
		CHECK(pthread_create(&th[i], NULL, thr_main, &t[i]) == 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	CHECK(t[0].ok && t[1].ok);
	CHECK(tagprof_attach(prev) == a);
	tagprof_labels_free(a);
	tagprof_labels_free(b);
}

/* ---- cases: ELF ---- */

static void test_elf_so_dynsym(void)
{
	char path[PATH_BUF];

	CHECK(dynsym_has_tls(build_path("libtagprof.so", path, sizeof(path))));
}

/* The .so reaches the slot through TLSDESC (-mtls-dialect=gnu2). */
static void test_elf_so_tlsdesc(void)
{
#if defined(__x86_64__)
	static const char *const words[] = { "R_X86_64_TLSDESC", "otel_thread_ctx_v1", NULL };
#elif defined(__aarch64__)
	static const char *const words[] = { "R_AARCH64_TLSDESC", "otel_thread_ctx_v1", NULL };
#else
	static const char *const words[] = { "TLSDESC", "otel_thread_ctx_v1", NULL };
#endif
	char path[PATH_BUF], cmd[PATH_BUF + 64], line[512];

	snprintf(cmd, sizeof(cmd), "readelf -rW '%s' 2>/dev/null",
		 build_path("libtagprof.so", path, sizeof(path)));
	CHECK(cmd_has_line(cmd, words, line, sizeof(line)));
}

/* Nothing but the API, the slot and tagprof__ internals is exported. */
static void test_elf_so_exports(void)
{
	char path[PATH_BUF], cmd[PATH_BUF + 64], line[512];
	char type[16], bind[16], vis[16], ndx[16], name[256];
	int n = 0, bad = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf --dyn-syms -W '%s' 2>/dev/null",
		 build_path("libtagprof.so", path, sizeof(path)));
	p = popen(cmd, "r");
	CHECK(p);
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "%*s %*s %*s %15s %15s %15s %15s %255s",
			   type, bind, vis, ndx, name) != 5 || !strcmp(ndx, "UND") ||
		    !strcmp(ndx, "Ndx"))
			continue;
		n++;
		if (strncmp(name, "tagprof_", 8) && strcmp(name, "otel_thread_ctx_v1")) {
			fprintf(stderr, "  unexpected export %s\n", name);
			bad++;
		}
	}
	pclose(p);
	CHECK(n >= 8 && !bad);
}

/* This binary links the .a with --export-dynamic-symbol (tagprof.pc's
 * Libs.private): the slot must be in its .dynsym. */
static void test_elf_static_dynsym(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	CHECK(n > 0);
	exe[n] = '\0';
	CHECK(dynsym_has_tls(exe));
}

/* A second copy of the code (the .so, loaded beside our static copy) binds
 * its TLSDESC reference to the executable's exported slot: one slot per
 * process, whatever the number of writers. */
static void test_elf_so_shares_slot(void)
{
	char path[PATH_BUF];
	const tagprof_labels *(*so_attach)(const tagprof_labels *);
	tagprof_labels *l = tagprof_labels_new();
	void *h;

	CHECK(l);
	h = dlopen(build_path("libtagprof.so", path, sizeof(path)), RTLD_NOW | RTLD_LOCAL);
	CHECK(h);
	*(void **)&so_attach = dlsym(h, "tagprof__attach");
	CHECK(so_attach);
	CHECK(so_attach(l) == NULL && otel_thread_ctx_v1 == l);
	CHECK(so_attach(NULL) == l && otel_thread_ctx_v1 == NULL);
	dlclose(h);
	tagprof_labels_free(l);
}

/* ---- cases: the process context ---- */

static void test_ctx_contents(void)
{
	struct ctx_snap s;
	const Tagprof__Otel__ArrayValue *km;
	tagprof_labels *l = tagprof_labels_new();
	int ix, iy;

	CHECK(l);
	CHECK(tagprof_process_init("svc") == 0);
	CHECK(tagprof_labels_add(l, "ctx.x", "1") == 0);
	CHECK(tagprof_labels_add(l, "ctx.y", "2") == 0);
	tagprof_labels_free(l);
	CHECK(snap_take(&s) == 0);
	CHECK(s.nmaps == 1);
	CHECK(!memcmp(s.sig, "OTEL_CTX", 8));
	CHECK(s.version == 2);
	CHECK(s.published_at != 0);
	CHECK(s.payload_size > 0 && s.payload != 0);
	CHECK(any_is_str(res_attr(&s, "service.name"), "svc"));
	CHECK(any_is_str(res_attr(&s, "telemetry.sdk.name"), "libtagprof"));
	CHECK(any_is_str(res_attr(&s, "telemetry.sdk.language"), "c"));
	CHECK(any_is_str(res_attr(&s, "telemetry.sdk.version"), "0.1.0"));
	CHECK(any_is_str(extra_attr(&s, "threadlocal.schema_version"), "tlsdesc_v1_dev"));
	CHECK((km = key_map(&s)));
	/* Every entry a string, in index order, no duplicates. */
	ix = iy = -1;
	for (size_t i = 0; i < km->n_values; i++) {
		CHECK(km->values[i]->value_case == TAGPROF__OTEL__ANY_VALUE__VALUE_STRING_VALUE);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(km->values[i]->string_value, km->values[j]->string_value));
		ix = any_is_str(km->values[i], "ctx.x") ? (int)i : ix;
		iy = any_is_str(km->values[i], "ctx.y") ? (int)i : iy;
	}
	CHECK(ix >= 0 && iy == ix + 1 && (size_t)iy == km->n_values - 1);
	/* Our encoding is the canonical one: protobuf-c packs the same bytes. */
	CHECK(tagprof__otel__process_context__get_packed_size(s.pc) == s.payload_size);
	{
		uint8_t *again = malloc(s.payload_size);

		CHECK(again);
		tagprof__otel__process_context__pack(s.pc, again);
		bool same = !memcmp(again, s.bytes, s.payload_size);
		free(again);
		CHECK(same);
	}
	snap_free(&s);
}

/* A new key republishes: published_at moves forward, the old payload is
 * replaced, the new key is last. A known key changes nothing. */
static void test_ctx_update(void)
{
	struct ctx_snap a, b, c;
	tagprof_labels *l = tagprof_labels_new();
	const Tagprof__Otel__ArrayValue *km;
	bool ok;

	CHECK(l);
	CHECK(tagprof_labels_add(l, "upd.first", "1") == 0);
	CHECK(snap_take(&a) == 0);
	CHECK(tagprof_labels_add(l, "upd.second", "2") == 0);
	CHECK(snap_take(&b) == 0);
	CHECK(tagprof_labels_add(l, "upd.first", "3") == 0);
	CHECK(snap_take(&c) == 0);
	km = key_map(&b);
	ok = a.addr == b.addr && b.published_at > a.published_at &&
	     b.payload != a.payload && c.published_at == b.published_at &&
	     km && any_is_str(km->values[km->n_values - 1], "upd.second") &&
	     key_map(&a)->n_values + 1 == km->n_values;
	snap_free(&a);
	snap_free(&b);
	snap_free(&c);
	tagprof_labels_free(l);
	CHECK(ok);
}

/* The extra-attribute hook (for tagprof.* keys): added, replaced, kept
 * across key map updates, and threadlocal.* refused. */
static void test_ctx_extra_attrs(void)
{
	static const char *const ops[] = { "scan", "join" };
	struct tagprof__attr n = { .key = "tagprof.test.n", .kind = TAGPROF__VAL_INT, .i = -42 };
	struct tagprof__attr f = { .key = "tagprof.test.f", .kind = TAGPROF__VAL_BOOL, .b = true };
	struct tagprof__attr o = {
		.key = "tagprof.test.ops", .kind = TAGPROF__VAL_STRINGS,
		.strs = { .v = ops, .n = 2 },
	};
	struct tagprof__attr bad = { .key = "threadlocal.x", .kind = TAGPROF__VAL_STRING, .s = "" };
	const Tagprof__Otel__AnyValue *v;
	tagprof_labels *l = tagprof_labels_new();
	struct ctx_snap s;

	CHECK(l);
	CHECK(tagprof__ctx_set_attr(&bad) == -EINVAL);
	CHECK(tagprof__ctx_set_attr(&n) == 0);
	CHECK(tagprof__ctx_set_attr(&f) == 0);
	CHECK(tagprof__ctx_set_attr(&o) == 0);
	n.i = 7;
	CHECK(tagprof__ctx_set_attr(&n) == 0);
	CHECK(tagprof_labels_add(l, "extra.k", "v") == 0);
	tagprof_labels_free(l);
	CHECK(snap_take(&s) == 0);
	v = extra_attr(&s, "tagprof.test.n");
	CHECK(v && v->value_case == TAGPROF__OTEL__ANY_VALUE__VALUE_INT_VALUE && v->int_value == 7);
	v = extra_attr(&s, "tagprof.test.f");
	CHECK(v && v->value_case == TAGPROF__OTEL__ANY_VALUE__VALUE_BOOL_VALUE && v->bool_value);
	v = extra_attr(&s, "tagprof.test.ops");
	CHECK(v && v->value_case == TAGPROF__OTEL__ANY_VALUE__VALUE_ARRAY_VALUE);
	CHECK(v->array_value->n_values == 2);
	CHECK(any_is_str(v->array_value->values[0], "scan"));
	CHECK(any_is_str(v->array_value->values[1], "join"));
	CHECK(s.pc->n_extra_attributes == 5);
	CHECK(!extra_attr(&s, "threadlocal.x"));
	snap_free(&s);
}

/* The mapping is MADV_DONTFORK: a child starts without one and makes its
 * own (same keys) when it first labels something. */
static void test_ctx_fork(void)
{
	pid_t pid;
	int status;

	CHECK(published_idx("ctx.x") >= 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		uintptr_t addr;
		int idx, ok = find_ctx_maps(&addr) == 0;
		tagprof_labels *l = tagprof_labels_new();

		idx = published_idx("ctx.x");
		ok = ok && l && idx >= 0 && tagprof_labels_add(l, "fork.child", "c") == 0 &&
		     published_idx("fork.child") >= 0 && find_ctx_maps(&addr) == 1;
		_exit(ok ? 0 : 1);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(published_idx("fork.child") < 0);	/* the parent's is its own */
}

/* Threads registering keys at once, some the same: each key gets one
 * index, and every record's index names its key in the published map. */
#define CONC_THREADS	4
#define CONC_KEYS	12

struct conc {
	pthread_barrier_t *bar;
	int id;
	tagprof_labels *set;
	int err;
};

static void *conc_main(void *arg)
{
	struct conc *c = arg;
	char key[32];

	c->set = tagprof_labels_new();
	pthread_barrier_wait(c->bar);
	for (int i = 0; i < CONC_KEYS && c->set && !c->err; i++) {
		/* Half the names shared by all threads, half our own. */
		snprintf(key, sizeof(key), i & 1 ? "conc.own.%d.%d" : "conc.shared.%d", i,
			 c->id);
		c->err = tagprof_labels_add(c->set, key, key);
	}
	return NULL;
}

static bool conc_check(const tagprof_labels *l, const Tagprof__Otel__ArrayValue *km)
{
	const uint8_t *p = rec(l) + 28, *end = p + rec_attrs_size(l);
	int n = 0;

	for (; p < end; p += 2 + p[1], n++) {
		const char *name;

		if (p[0] >= km->n_values || !km->values[p[0]]->string_value)
			return false;
		/* The value is the key's own name. */
		name = km->values[p[0]]->string_value;
		if (strlen(name) != p[1] || memcmp(name, p + 2, p[1]))
			return false;
	}
	return n == CONC_KEYS;
}

static void test_keymap_concurrent(void)
{
	pthread_barrier_t bar;
	struct conc c[CONC_THREADS];
	pthread_t th[CONC_THREADS];
	struct ctx_snap s;
	const Tagprof__Otel__ArrayValue *km;
	bool ok = true;

	pthread_barrier_init(&bar, NULL, CONC_THREADS);
	for (int i = 0; i < CONC_THREADS; i++) {
		c[i] = (struct conc){ .bar = &bar, .id = i };
		CHECK(pthread_create(&th[i], NULL, conc_main, &c[i]) == 0);
	}
	for (int i = 0; i < CONC_THREADS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	CHECK(snap_take(&s) == 0);
	km = key_map(&s);
	for (int i = 0; i < CONC_THREADS; i++) {
		ok = ok && c[i].set && !c[i].err && km && conc_check(c[i].set, km);
		tagprof_labels_free(c[i].set);
	}
	for (size_t i = 0; km && i < km->n_values; i++)
		for (size_t j = 0; j < i; j++)
			ok = ok && strcmp(km->values[i]->string_value, km->values[j]->string_value);
	snap_free(&s);
	CHECK(ok);
	CHECK(published_idx("conc.shared.0") >= 0 && published_idx("conc.own.1.3") >= 0);
}

/* Last: fills the process key map. */
static void test_keymap_full(void)
{
	tagprof_labels *l = tagprof_labels_new();
	const tagprof_labels *prev;
	struct ctx_snap s;
	char key[32];
	int err = 0, i;

	CHECK(l);
	for (i = 0; i < 300 && !err; i++) {
		snprintf(key, sizeof(key), "full.%d", i);
		err = tagprof_labels_add(l, key, "");
	}
	CHECK(err == -ENOSPC);
	CHECK(snap_take(&s) == 0);
	CHECK(key_map(&s) && key_map(&s)->n_values == 256);
	snap_free(&s);
	/* Known keys still work; the refused one is not half-registered. */
	CHECK(published_idx(key) < 0);
	tagprof_labels_free(l);
	l = tagprof_labels_new();
	CHECK(l);
	CHECK(tagprof_labels_add(l, "full.0", "x") == 0);
	CHECK(tagprof_labels_add(l, key, "x") == -ENOSPC);
	prev = tagprof_attach(l);
	CHECK(otel_thread_ctx_v1 == l);
	tagprof_attach(prev);
	tagprof_labels_free(l);
}

int main(void)
{
	RUN(test_record_layout);
	RUN(test_record_trace);
	RUN(test_record_replace);
	RUN(test_errors_einval);
	RUN(test_errors_lengths);
	RUN(test_errors_enospc_record);
	RUN(test_errors_ebusy);
	RUN(test_errors_ebusy_outofline);
	RUN(test_attach_nesting);
	RUN(test_attach_per_thread);
	RUN(test_attach_foreign_record);
	RUN(test_elf_so_dynsym);
	RUN(test_elf_so_tlsdesc);
	RUN(test_elf_so_exports);
	RUN(test_elf_static_dynsym);
	RUN(test_elf_so_shares_slot);
	RUN(test_ctx_contents);
	RUN(test_ctx_update);
	RUN(test_ctx_extra_attrs);
	RUN(test_ctx_fork);
	RUN(test_keymap_concurrent);
	RUN(test_keymap_full);
	tagprof_labels_free(NULL);
	CHECK_EXIT();
}
