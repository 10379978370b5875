/* Register tag declarations and dictionaries as the agent reads them from
 * a process context: parsing, field values, names, --tag filters. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "proc/procctx.h"
#include "sample_event.h"
#include "proc/tagdecl.h"

static char *list_a[] = { "operator:16", "pipeline:16" };
static char *names_a[] = { "operator:1=scan", "operator:2=join", "pipeline:2=probe",
			   "operator:1=seqscan", "bogus", "nofield:1=x",
			   "operator:70000=too_big" };

static struct procctx_attr attrs[3];

static void make_ctx(struct procctx *c, const char *reg, char **fields,
		     size_t nf, char **names, size_t nn)
{
	memset(c, 0, sizeof(*c));
	memset(attrs, 0, sizeof(attrs));
	attrs[0].key = "tagprof.tag.register";
	attrs[0].str = (char *)reg;
	attrs[1].key = "tagprof.tag.fields";
	attrs[1].list = fields;
	attrs[1].nlist = nf;
	attrs[2].key = "tagprof.tag.names";
	attrs[2].list = names;
	attrs[2].nlist = nn;
	c->attrs = attrs;
	c->nattrs = 3;
}

static void test_declaration(void)
{
	struct procctx c;
	struct tagdecl t = { 0 };

	make_ctx(&c, "r15", list_a, 2, names_a, 7);
	CHECK(tagdecl__load(&t, &c) == 0);
	CHECK(t.reg == TP_TAG_R15);
	CHECK(t.nfields == 2);
	CHECK(!strcmp(t.fields[0].name, "operator") && t.fields[0].shift == 0 &&
	      t.fields[0].bits == 16);
	CHECK(!strcmp(t.fields[1].name, "pipeline") && t.fields[1].shift == 16);
	/* the later name for operator 1 wins; malformed entries are skipped */
	CHECK(!strcmp(tagdecl__name(&t, 0, 1), "seqscan"));
	CHECK(!strcmp(tagdecl__name(&t, 0, 2), "join"));
	CHECK(!strcmp(tagdecl__name(&t, 1, 2), "probe"));
	CHECK(tagdecl__name(&t, 0, 3) == NULL);
	CHECK(tagdecl__field_value(&t, 0, 0x00020001) == 1);
	CHECK(tagdecl__field_value(&t, 1, 0x00020001) == 2);
	/* each field takes its own bits, all of them and no more */
	CHECK(tagdecl__field_value(&t, 0, 0xffffffffffffffffull) == 0xffff);
	CHECK(tagdecl__field_value(&t, 1, 0xffffffffffffffffull) == 0xffff);
	CHECK(tagdecl__field_value(&t, 0, 0x00018000) == 0x8000);
	CHECK(tagdecl__field_value(&t, 1, 0x80010000) == 0x8001);
	tagdecl__clear(&t);
}

static void test_invalid_declarations(void)
{
	static char *too_wide[] = { "a:40", "b:25" };
	static char *bad[] = { "nobits" };
	static char *zero[] = { "a:0" };
	static char *full[] = { "a:64" };
	struct procctx c;
	struct tagdecl t = { 0 };

	make_ctx(&c, "r15", too_wide, 2, NULL, 0);
	CHECK(tagdecl__load(&t, &c) == 0 && t.reg == 0);
	make_ctx(&c, "r15", bad, 1, NULL, 0);
	CHECK(tagdecl__load(&t, &c) == 0 && t.reg == 0);
	make_ctx(&c, "r15", zero, 1, NULL, 0);
	CHECK(tagdecl__load(&t, &c) == 0 && t.reg == 0);
	make_ctx(&c, "rax", list_a, 2, NULL, 0);	/* not a tag register */
	CHECK(tagdecl__load(&t, &c) == 0 && t.reg == 0);
	make_ctx(&c, "r12", full, 1, NULL, 0);
	CHECK(tagdecl__load(&t, &c) == 0 && t.reg == TP_TAG_R12);
	CHECK(tagdecl__field_value(&t, 0, ~0ull) == ~0ull);
	tagdecl__clear(&t);
	memset(&c, 0, sizeof(c));			/* no declaration at all */
	CHECK(tagdecl__load(&t, &c) == 0 && t.reg == 0);
}

static void test_filter(void)
{
	struct procctx c;
	struct tagdecl t = { 0 };
	uint64_t mask, value;

	make_ctx(&c, "r15", list_a, 2, names_a, 7);
	CHECK(tagdecl__load(&t, &c) == 0);
	CHECK(tagdecl__filter(&t, "operator", "join", &mask, &value));
	CHECK(mask == 0xffff && value == 2);
	CHECK(tagdecl__filter(&t, "pipeline", "probe", &mask, &value));
	CHECK(mask == 0xffff0000 && value == 0x20000);
	CHECK(tagdecl__filter(&t, "pipeline", "7", &mask, &value));	/* number */
	CHECK(value == 7u << 16);
	CHECK(!tagdecl__filter(&t, "pipeline", "70000", &mask, &value));	/* too big */
	CHECK(!tagdecl__filter(&t, "operator", "nosuchname", &mask, &value));
	/* names match whole, in their own field only */
	CHECK(!tagdecl__filter(&t, "operator", "joi", &mask, &value));
	CHECK(!tagdecl__filter(&t, "operator", "join2", &mask, &value));
	CHECK(!tagdecl__filter(&t, "pipeline", "join", &mask, &value));
	CHECK(!tagdecl__filter(&t, "operator", "probe", &mask, &value));
	/* a number is the other field's value, not the name's */
	CHECK(tagdecl__filter(&t, "pipeline", "2", &mask, &value));
	CHECK(mask == 0xffff0000 && value == 0x20000);
	CHECK(!tagdecl__filter(&t, "nosuchfield", "1", &mask, &value));
	CHECK(!tagdecl__filter(&t, "operator", "", &mask, &value));
	tagdecl__clear(&t);
}

static void test_reg_index(void)
{
#if defined(__x86_64__)
	CHECK(tagdecl__reg_index("r15") == TP_TAG_R15);
	CHECK(tagdecl__reg_index("rbx") == TP_TAG_RBX);
	CHECK(tagdecl__reg_index("r11") == 0);
	CHECK(tagdecl__reg_index("r155") == 0);
	CHECK(tagdecl__reg_index("") == 0);
#endif
}

int main(void)
{
	RUN(test_declaration);
	RUN(test_invalid_declarations);
	RUN(test_filter);
	RUN(test_reg_index);
	CHECK_EXIT();
}
