/* The per-process BPF settings without BPF: what proccfg holds for a
 * process from ctxwatch's findings (the --label and --tag filters resolved
 * against its process context) and from the unwinder's marks, each kept
 * when the other changes. */
#include <string.h>

#include "check.h"
#include "capture/proccfg.h"
#include "proc/ctxwatch.h"
#include "sample_event.h"

#if defined(__x86_64__)
#define TAG_REG "r15"
#elif defined(__aarch64__)
#define TAG_REG "x28"
#else
#define TAG_REG "none"
#endif

static char *keys[] = { "tenant", "query_id" };
static char *fields[] = { "operator:16", "pipeline:16" };
static char *names[] = { "operator:2=join" };
static struct procctx_attr attrs[3] = {
	{ .key = "tagprof.tag.register", .str = TAG_REG },
	{ .key = "tagprof.tag.fields", .list = fields, .nlist = 2 },
	{ .key = "tagprof.tag.names", .list = names, .nlist = 1 },
};

/* A process context with keys tenant and query_id and a tag declaration:
 * built here, as the snapshot ctxwatch would report. */
static void make_snap(struct ctxsnap *s)
{
	memset(s, 0, sizeof(*s));
	s->ctx.keys = keys;
	s->ctx.nkeys = 2;
	s->ctx.attrs = attrs;
	s->ctx.nattrs = 3;
	tagdecl__load(&s->tags, &s->ctx);
}

static const struct tp_tls_loc otel = { .tpoff = -64, .kind = TP_TLS_STATIC };
static const struct tp_tls_loc none;

static int report(struct proccfg *c, uint32_t pid, const struct ctxsnap *s)
{
	const struct ctxwatch_found f = { &otel, &none, s };

	return proccfg__set_context(c, pid, &f);
}

/* What proccfg holds for pid 7 once ctxwatch reported the snapshot of
 * make_snap, under filters f. */
static int settings(const struct proccfg_filters *f, struct tp_proc_cfg *out)
{
	struct proccfg *c = proccfg__new(f);
	const struct tp_proc_cfg *v;
	struct ctxsnap s;
	int ret = -1;

	make_snap(&s);
	if (c && !report(c, 7, &s) && (v = proccfg__get(c, 7)) &&
	    !proccfg__get(c, 8)) {
		*out = *v;
		ret = 0;
	}
	tagdecl__clear(&s.tags);
	proccfg__free(c);
	return ret;
}

/* --label KEY=VALUE: the key's index in each process's key map, or
 * TP_FILTER_NO_KEY (cannot match) where it has none. */
static void test_label_filter(void)
{
	static const struct proccfg_filters q = { "query_id", "q1" },
					    other = { "job", "alpha" };
	struct tp_proc_cfg v, w;

	CHECK(!settings(&q, &v) && !settings(&other, &w));
	CHECK(v.otel.kind == TP_TLS_STATIC && v.otel.tpoff == -64);
	CHECK(v.custom.kind == TP_TLS_NONE);
	CHECK(v.filter_key_idx == 1 && v.filter_len == 2 &&
	      !memcmp(v.filter_val, "q1", 2));
	CHECK(v.filter_key_len == 8 && !memcmp(v.filter_key, "query_id", 8));
	CHECK(w.filter_key_idx == TP_FILTER_NO_KEY);
}

/* --tag FIELD=NAME: the field's mask and the value NAME stands for; a name
 * the process has not registered matches nothing until it does. */
static void test_tag_filter(void)
{
	static const struct proccfg_filters join = { .tag_field = "operator",
						     .tag_name = "join" },
					    scan = { .tag_field = "operator",
						     .tag_name = "scan" };
	struct tp_proc_cfg v, w;

	CHECK(!settings(&join, &v) && !settings(&scan, &w));
	CHECK(v.tag_reg == tagdecl__reg_index(TAG_REG));
	CHECK(v.tag_filter_mask == 0xffff && v.tag_filter_value == 2);
	CHECK(w.tag_filter_mask == 0 && w.tag_filter_value == 1);
	CHECK(v.filter_len == 0 && v.filter_key_len == 0);
}

/* The unwinder's mark and the context settings are one value in BPF:
 * each change keeps the other; an entry that only held the mark goes with
 * it, and a forgotten context takes the entry. */
static void test_mark_and_context(void)
{
	static const struct proccfg_filters nofilter;
	struct proccfg *c = proccfg__new(&nofilter);
	const struct tp_proc_cfg *v;
	struct ctxsnap s;

	make_snap(&s);
	CHECK(c);
	CHECK(!proccfg__set_unwind(c, 7, false) && !proccfg__get(c, 7));
	CHECK(!proccfg__set_unwind(c, 7, true));
	CHECK((v = proccfg__get(c, 7)) && v->unwind == TP_PROC_UNWIND_COPY &&
	      v->otel.kind == TP_TLS_NONE);
	CHECK(!report(c, 7, &s));
	CHECK((v = proccfg__get(c, 7)) && v->unwind == TP_PROC_UNWIND_COPY &&
	      v->otel.kind == TP_TLS_STATIC);
	CHECK(!proccfg__set_unwind(c, 7, false));
	CHECK((v = proccfg__get(c, 7)) && v->unwind == 0 &&
	      v->otel.kind == TP_TLS_STATIC);
	CHECK(!proccfg__set_unwind(c, 7, true) &&
	      !proccfg__set_context(c, 7, NULL));
	CHECK(!proccfg__get(c, 7));
	CHECK(!proccfg__set_unwind(c, 9, true) &&
	      !proccfg__set_unwind(c, 9, false) && !proccfg__get(c, 9));
	tagdecl__clear(&s.tags);
	proccfg__free(c);
}

int main(void)
{
	RUN(test_label_filter);
	RUN(test_tag_filter);
	RUN(test_mark_and_context);
	CHECK_EXIT();
}
