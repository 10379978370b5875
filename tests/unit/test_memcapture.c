/* The memory-access capture, against the public specifications rather
 * than our own constants: the sysfs PMU ABI (Documentation/ABI/testing/
 * sysfs-bus-event_source-devices-{format,events}) for mem-loads and
 * mem-stores, encoded from fake PMU trees; the page-fault events; the
 * struct tp_mem trailer of a sample record; union perf_mem_data_src in
 * words (values built with the uapi's PERF_MEM_S); the data mappings of a
 * process; variables of an ELF file (checked against nm); and a live
 * child's data addresses named by the process table. */
#include "check.h"
#include "shell.h"
#include "capture/datasrc.h"
#include "capture/records.h"
#include "kernel/events.h"
#include "kernel/memevents.h"
#include "proc/datamap.h"
#include "proc/procfs.h"
#include "proc/proctable.h"
#include "sym/elfsym.h"
#include "util/clock.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <linux/perf_event.h>

#define ADDR(x) ((uint64_t)(uintptr_t)(x))

static char tmpdir[64];

/* Writes ROOT/rel (dirs made as needed) with text. */
static bool put(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = path + strlen(root) + 1; (slash = strchr(slash, '/'));
	     slash++) {
		*slash = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			return false;
		*slash = '/';
	}
	f = fopen(path, "w");
	if (!f)
		return false;
	fputs(text, f);
	return fclose(f) == 0;
}

/* A fresh directory for one fake sysfs tree, tmpdir/name; the path stays
 * valid for the next three calls. */
static const char *tree(const char *name)
{
	static char paths[4][PATH_MAX];
	static unsigned next;
	char *path = paths[next++ % 4];

	snprintf(path, PATH_MAX, "%s/%s", tmpdir, name);
	mkdir(path, 0755);
	return path;
}

/* An Intel-like core PMU named pmu, of type type, under root. */
static bool intel_pmu(const char *root, const char *pmu, const char *type)
{
	char rel[128];

#define P(file, text)                                                      \
	(snprintf(rel, sizeof(rel), "%s/%s", pmu, file), put(root, rel, text))
	return P("type", type) &&
	       P("events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n") &&
	       P("events/mem-stores", "event=0xd0,umask=0x82\n") &&
	       P("format/event", "config:0-7\n") &&
	       P("format/umask", "config:8-15\n") &&
	       P("format/ldlat", "config1:0-15\n");
#undef P
}

#define MEM_SAMPLE_BITS                                                    \
	(PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT_STRUCT)

/* PEBS from a core PMU "cpu": the ABI's terms into config and config1,
 * ldlat replaced by the threshold (perf's default 30, then --ldlat). */
static void test_pebs_intel(void)
{
	const char *root = tree("intel");
	struct tp_event ev;
	char err[512];

	CHECK(intel_pmu(root, "cpu", "4\n"));
	memevents__set_sysfs(root);
	CHECK(memevents__is_mem("mem-loads") && memevents__is_mem("mem-stores"));
	CHECK(!memevents__is_mem("mem-loads:p") && !memevents__is_mem("cycles"));

	memset(&ev, 0, sizeof(ev));
	snprintf(ev.name, sizeof(ev.name), "mem-loads");
	CHECK(memevents__encode("mem-loads", 0, &ev, err, sizeof(err)) == 0);
	CHECK(ev.attr.type == 4);
	CHECK(ev.attr.config == 0x01cd);	/* umask 0x1 << 8 | event 0xcd */
	CHECK(ev.attr.config1 == 30);
	CHECK(ev.attr.config2 == 0);
	CHECK(ev.attr.precise_ip == 2);
	CHECK((ev.attr.sample_type & MEM_SAMPLE_BITS) == MEM_SAMPLE_BITS);
	CHECK(ev.memory && ev.mem_hw && ev.hardware);
	CHECK(ev.ldlat == 30 && ev.mem_op == 0);
	CHECK(!strcmp(ev.name, "mem-loads"));

	CHECK(memevents__set_ldlat(&ev, 50, err, sizeof(err)) == 0);
	CHECK(ev.attr.config1 == 50 && ev.ldlat == 50);
	CHECK(ev.attr.config == 0x01cd && ev.attr.type == 4);
	CHECK(ev.attr.precise_ip == 2 && ev.memory && ev.mem_hw);
	CHECK((ev.attr.sample_type & MEM_SAMPLE_BITS) == MEM_SAMPLE_BITS);
	CHECK(memevents__set_ldlat(&ev, 65535, err, sizeof(err)) == 0);
	CHECK(ev.attr.config1 == 0xffff && ev.ldlat == 65535);
	err[0] = '\0';
	CHECK(memevents__set_ldlat(&ev, 0, err, sizeof(err)) == -EINVAL);
	CHECK(err[0]);
	err[0] = '\0';
	CHECK(memevents__set_ldlat(&ev, 65536, err, sizeof(err)) == -EINVAL);
	CHECK(err[0]);

	/* A threshold given to encode itself. */
	CHECK(memevents__encode("mem-loads", 100, &ev, err, sizeof(err)) == 0);
	CHECK(ev.attr.config1 == 100 && ev.ldlat == 100);

	memset(&ev, 0, sizeof(ev));
	snprintf(ev.name, sizeof(ev.name), "mem-stores");
	CHECK(memevents__encode("mem-stores", 0, &ev, err, sizeof(err)) == 0);
	CHECK(ev.attr.type == 4);
	CHECK(ev.attr.config == 0x82d0);
	CHECK(ev.attr.config1 == 0);
	CHECK(ev.attr.precise_ip == 2);
	CHECK((ev.attr.sample_type & MEM_SAMPLE_BITS) == MEM_SAMPLE_BITS);
	CHECK(ev.memory && ev.mem_hw && ev.ldlat == 0 && ev.mem_op == 0);
	/* --ldlat is for PEBS mem-loads only */
	err[0] = '\0';
	CHECK(memevents__set_ldlat(&ev, 50, err, sizeof(err)) == -EINVAL);
	CHECK(err[0]);
	memevents__set_sysfs(NULL);
}

/* A hybrid part: no "cpu", the P-cores' cpu_core describes the events
 * (cpu_atom too, with another type: cpu_core is the one used). */
static void test_pebs_hybrid(void)
{
	const char *root = tree("hybrid");
	struct tp_event ev = { 0 };
	char err[512];

	CHECK(intel_pmu(root, "cpu_core", "8\n"));
	CHECK(intel_pmu(root, "cpu_atom", "10\n"));
	memevents__set_sysfs(root);
	CHECK(memevents__encode("mem-loads", 0, &ev, err, sizeof(err)) == 0);
	CHECK(ev.attr.type == 8);
	CHECK(ev.attr.config == 0x01cd && ev.attr.config1 == 30);
	CHECK(ev.ldlat == 30 && ev.mem_hw);
	CHECK(memevents__encode("mem-stores", 0, &ev, err, sizeof(err)) == 0);
	CHECK(ev.attr.type == 8 && ev.attr.config == 0x82d0);
	memevents__set_sysfs(NULL);
}

/* A format of several ranges takes the value's low bits into the first
 * range, the next into the second (the ABI's "config:0-7,21"). */
static void test_split_format(void)
{
	const char *root = tree("split");
	struct tp_event ev = { 0 };
	char err[512];

	CHECK(put(root, "cpu/type", "4\n"));
	CHECK(put(root, "cpu/events/mem-stores", "event=0xab,umask=0x1f\n"));
	CHECK(put(root, "cpu/events/mem-loads", "event=0xab,ldlat=3\n"));
	CHECK(put(root, "cpu/format/event", "config:0-3,8-11\n"));
	CHECK(put(root, "cpu/format/umask", "config:4-7,21\n"));
	CHECK(put(root, "cpu/format/ldlat", "config1:0-7,16-23\n"));
	memevents__set_sysfs(root);
	CHECK(memevents__encode("mem-stores", 0, &ev, err, sizeof(err)) == 0);
	/* event 0xab: 0xb in 0-3, 0xa in 8-11; umask 0x1f: 0xf in 4-7, 1 in
	 * bit 21 */
	CHECK(ev.attr.config == (0xbull | 0xaull << 8 | 0xfull << 4 |
				 1ull << 21));
	CHECK(ev.attr.config1 == 0);
	/* ldlat 0x1234: 0x34 in 0-7, 0x12 in 16-23 */
	CHECK(memevents__encode("mem-loads", 0x1234, &ev, err,
				sizeof(err)) == 0);
	CHECK(ev.attr.config == (0xbull | 0xaull << 8));
	CHECK(ev.attr.config1 == (0x34ull | 0x12ull << 16));
	memevents__set_sysfs(NULL);
}

/* Sapphire Rapids: loads only in a group led by mem-loads-aux. */
static void test_pebs_aux(void)
{
	const char *root = tree("aux");
	struct tp_event ev = { 0 };
	char err[512] = "";

	CHECK(intel_pmu(root, "cpu", "4\n"));
	CHECK(put(root, "cpu/events/mem-loads-aux", "event=0x03,umask=0x82\n"));
	memevents__set_sysfs(root);
	CHECK(memevents__encode("mem-loads", 0, &ev, err, sizeof(err)) ==
	      -EOPNOTSUPP);
	CHECK(strstr(err, "mem-loads-aux"));
	CHECK(strstr(err, "page-faults"));
	memevents__set_sysfs(NULL);
}

/* AMD: no core PMU mem events (a "cpu" PMU that lacks them), an ibs_op
 * PMU: its type, and the op kept by the data source. */
static void test_ibs(void)
{
	const char *root = tree("amd");
	struct tp_event ev = { 0 };
	char err[512];

	CHECK(put(root, "cpu/type", "4\n"));
	CHECK(put(root, "cpu/events/cycles", "event=0x76\n"));
	CHECK(put(root, "cpu/format/event", "config:0-7,32-35\n"));
	CHECK(put(root, "ibs_op/type", "11\n"));
	CHECK(put(root, "ibs_op/format/cnt_ctl", "config:19\n"));
	memevents__set_sysfs(root);
	CHECK(memevents__encode("mem-loads", 0, &ev, err, sizeof(err)) == 0);
	CHECK(ev.attr.type == 11);
	CHECK((ev.attr.sample_type & MEM_SAMPLE_BITS) == MEM_SAMPLE_BITS);
	CHECK(ev.memory && ev.mem_hw);
	CHECK(ev.mem_op == PERF_MEM_OP_LOAD);
	CHECK(ev.ldlat == 0);
	err[0] = '\0';
	CHECK(memevents__set_ldlat(&ev, 50, err, sizeof(err)) == -EINVAL);
	CHECK(err[0]);
	memset(&ev, 0, sizeof(ev));
	CHECK(memevents__encode("mem-stores", 0, &ev, err, sizeof(err)) == 0);
	CHECK(ev.attr.type == 11);
	CHECK(ev.mem_op == PERF_MEM_OP_STORE);
	CHECK(ev.memory && ev.mem_hw && ev.ldlat == 0);
	memevents__set_sysfs(NULL);
}

/* Neither PEBS nor IBS: -ENODEV, pointing at the page-fault events. */
static void test_no_pmu(void)
{
	const char *root = tree("none"), *empty = tree("empty");
	struct tp_event ev = { 0 };
	char err[512] = "";

	CHECK(put(root, "cpu/type", "4\n"));
	CHECK(put(root, "cpu/format/event", "config:0-7\n"));
	CHECK(put(root, "software/type", "1\n"));
	memevents__set_sysfs(root);
	CHECK(memevents__encode("mem-loads", 0, &ev, err, sizeof(err)) ==
	      -ENODEV);
	CHECK(strstr(err, "page-faults"));
	err[0] = '\0';
	CHECK(memevents__encode("mem-stores", 0, &ev, err, sizeof(err)) ==
	      -ENODEV);
	CHECK(strstr(err, "page-faults"));
	memevents__set_sysfs(empty);
	err[0] = '\0';
	CHECK(memevents__encode("mem-loads", 0, &ev, err, sizeof(err)) ==
	      -ENODEV);
	CHECK(strstr(err, "page-faults"));
	memevents__set_sysfs("/nonexistent/tagprof-test");
	CHECK(memevents__encode("mem-loads", 0, &ev, err, sizeof(err)) ==
	      -ENODEV);
	memevents__set_sysfs(NULL);
}

/* One malformed PEBS tree: the core PMU with these files changed. */
static int malformed(const char *name, const char *type, const char *loads,
		     const char *fmt_event, char *err, size_t errlen)
{
	const char *root = tree(name);
	struct tp_event ev = { 0 };
	int rc;

	if (!intel_pmu(root, "cpu", type ? type : "4\n") ||
	    (loads && !put(root, "cpu/events/mem-loads", loads)) ||
	    (fmt_event && !put(root, "cpu/format/event", fmt_event)))
		return 1;
	memevents__set_sysfs(root);
	err[0] = '\0';
	rc = memevents__encode("mem-loads", 0, &ev, err, errlen);
	memevents__set_sysfs(NULL);
	return rc;
}

/* Descriptions that do not read: an error with a message, no crash. */
static void test_malformed_trees(void)
{
	const char *root;
	struct tp_event ev = { 0 };
	char err[512];

	CHECK(malformed("m_type", "four\n", NULL, NULL, err, sizeof(err)) ==
	      -EINVAL && err[0]);
	CHECK(malformed("m_type2", "4x\n", NULL, NULL, err, sizeof(err)) ==
	      -EINVAL && err[0]);
	/* a term without a format file */
	CHECK(malformed("m_term", NULL, "event=0xcd,frob=1\n", NULL, err,
			sizeof(err)) == -EINVAL && err[0]);
	CHECK(malformed("m_bogus", NULL, NULL, "bogus\n", err, sizeof(err)) ==
	      -EINVAL && err[0]);
	CHECK(malformed("m_word", NULL, NULL, "config7:0-7\n", err,
			sizeof(err)) == -EINVAL && err[0]);
	/* ranges the ABI cannot mean, with values that would fit */
	CHECK(malformed("m_rev", NULL, "event=0x0,umask=0x1\n",
			"config:7-0\n", err, sizeof(err)) == -EINVAL && err[0]);
	CHECK(malformed("m_bit64", NULL, "event=0x1,umask=0x1\n",
			"config:56-64\n", err, sizeof(err)) == -EINVAL &&
	      err[0]);
	CHECK(malformed("m_junk", NULL, "event=0x1,umask=0x1\n",
			"config:0-7x\n", err, sizeof(err)) == -EINVAL && err[0]);
	CHECK(malformed("m_noend", NULL, NULL, "config:\n", err,
			sizeof(err)) == -EINVAL && err[0]);
	/* a value wider than its bits */
	CHECK(malformed("m_wide", NULL, "event=0x1cd,umask=0x1\n", NULL, err,
			sizeof(err)) == -EINVAL && err[0]);
	CHECK(malformed("m_val", NULL, "event=,umask=0x1\n", NULL, err,
			sizeof(err)) == -EINVAL && err[0]);
	CHECK(malformed("m_val2", NULL, "event=0xzz\n", NULL, err,
			sizeof(err)) == -EINVAL && err[0]);
	/* an ibs_op whose type is not a number */
	root = tree("m_ibs");
	CHECK(put(root, "ibs_op/type", "ibs\n"));
	memevents__set_sysfs(root);
	err[0] = '\0';
	CHECK(memevents__encode("mem-loads", 0, &ev, err, sizeof(err)) ==
	      -EINVAL);
	CHECK(err[0]);
	memevents__set_sysfs(NULL);
}

/* -e through events__parse: the page-fault events on any machine, and
 * mem-loads/-stores through the PMU description memevents reads. */
static void check_fault_event(const char *spec, unsigned long long config,
			      int *bad)
{
	struct tp_event ev;
	char err[512];

	memset(&ev, 0xa5, sizeof(ev));
	if (events__parse(spec, &ev, err, sizeof(err)) != 0 ||
	    ev.attr.type != PERF_TYPE_SOFTWARE || ev.attr.config != config ||
	    !ev.memory || ev.software_clock || ev.hardware || ev.mem_hw ||
	    !(ev.attr.sample_type & PERF_SAMPLE_ADDR) || ev.ldlat ||
	    ev.attr.precise_ip || strcmp(ev.name, spec) ||
	    strcmp(ev.sample_unit, "count")) {
		fprintf(stderr, "  events__parse(\"%s\") wrong\n", spec);
		*bad = 1;
	}
}

static void test_events_parse(void)
{
	const char *root = tree("parse"), *empty = tree("parse_empty");
	struct tp_event ev;
	char err[512];
	int bad = 0;

	check_fault_event("page-faults", PERF_COUNT_SW_PAGE_FAULTS, &bad);
	check_fault_event("faults", PERF_COUNT_SW_PAGE_FAULTS, &bad);
	check_fault_event("minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN, &bad);
	check_fault_event("major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ, &bad);
	CHECK(!bad);

	CHECK(events__parse("cpu-clock", &ev, err, sizeof(err)) == 0);
	CHECK(!ev.memory && !ev.mem_hw && ev.software_clock);
	CHECK(!(ev.attr.sample_type & PERF_SAMPLE_ADDR));
	CHECK(events__parse("page-faults:p", &ev, err, sizeof(err)) ==
	      -EINVAL);

	CHECK(intel_pmu(root, "cpu", "4\n"));
	memevents__set_sysfs(root);
	CHECK(events__parse("mem-loads", &ev, err, sizeof(err)) == 0);
	CHECK(!strcmp(ev.name, "mem-loads"));
	CHECK(ev.attr.type == 4 && ev.attr.config == 0x01cd);
	CHECK(ev.attr.config1 == 30 && ev.ldlat == 30);
	CHECK(ev.attr.precise_ip == 2);
	CHECK((ev.attr.sample_type & MEM_SAMPLE_BITS) == MEM_SAMPLE_BITS);
	CHECK(ev.memory && ev.mem_hw && !ev.software_clock);
	CHECK(memevents__set_ldlat(&ev, 50, err, sizeof(err)) == 0);
	CHECK(ev.attr.config1 == 50 && !strcmp(ev.name, "mem-loads"));
	CHECK(events__parse("mem-stores", &ev, err, sizeof(err)) == 0);
	CHECK(ev.attr.config == 0x82d0 && ev.memory && ev.ldlat == 0);
	err[0] = '\0';
	CHECK(events__parse("mem-loads:p", &ev, err, sizeof(err)) == -EINVAL);
	CHECK(err[0]);
	CHECK(events__parse("mem-stores:ppp", &ev, err, sizeof(err)) ==
	      -EINVAL);

	memevents__set_sysfs(empty);
	err[0] = '\0';
	CHECK(events__parse("mem-loads", &ev, err, sizeof(err)) == -ENODEV);
	CHECK(strstr(err, "page-faults"));
	memevents__set_sysfs(NULL);
}

/* ---- records ---- */

static uint64_t rec[(sizeof(struct tp_sample) + 64 + 16 * 8 +
		     sizeof(struct tp_uregs) + 64 + sizeof(struct tp_mem)) /
		    8 + 4];

static const struct tp_mem mem_in = {
	.addr = 0x7f0012345678ull,
	.data_src = 0x0123456789abcdefull,
	.weight = 417,
	.flags = TP_MEM_DATA_SRC | TP_MEM_WEIGHT,
};

/* A sample: ctx bytes of context, nu user frames, nk kernel frames, a
 * stack copy of stack bytes (0: none), then mem_in when mem. */
static size_t make_rec(unsigned ctx, unsigned nu, unsigned nk,
		       unsigned stack, uint8_t mem)
{
	struct tp_sample *s = (struct tp_sample *)rec;
	uint8_t *b = (uint8_t *)rec;
	size_t size = sizeof(*s) + ((ctx + 7) & ~7u) + (nu + nk) * 8;

	memset(rec, 0, sizeof(rec));
	s->type = TP_REC_SAMPLE;
	s->ctx_size = ctx;
	s->user_depth = nu;
	s->kern_depth = nk;
	for (unsigned i = 0; i < nu + nk; i++)
		memcpy(b + size - (nu + nk - i) * 8,
		       &(uint64_t){ 0x400000 + i }, 8);
	if (stack) {
		s->ustack_flags = TP_USTACK_REGS;
		s->stack_size = stack;
		memset(b + size, 0x11, sizeof(struct tp_uregs) + stack);
		size += sizeof(struct tp_uregs) + stack;
	}
	s->mem = mem;
	if (mem) {
		memcpy(b + size, &mem_in, sizeof(mem_in));
		size += sizeof(mem_in);
	}
	return size;
}

static bool mem_equal(const struct tp_mem *a, const struct tp_mem *b)
{
	return a->addr == b->addr && a->data_src == b->data_src &&
	       a->weight == b->weight && a->flags == b->flags;
}

static void test_record_mem(void)
{
	const uint8_t *base = (const uint8_t *)rec;
	struct tp_sample *s = (struct tp_sample *)rec;
	struct raw_sample rs;
	size_t size;

	/* right after the frames */
	size = make_rec(0, 3, 2, 0, 1);
	CHECK(size == sizeof(struct tp_sample) + 5 * 8 + sizeof(struct tp_mem));
	memset(&rs, 0, sizeof(rs));
	CHECK(records__parse(rec, size, &rs) == RECORD_SAMPLE);
	CHECK(rs.has_mem && mem_equal(&rs.mem, &mem_in));
	CHECK(rs.frames && rs.frames[0] == 0x400000 && rs.frames[4] == 0x400004);
	/* ... and after 5 bytes of context padded to 8 */
	size = make_rec(5, 1, 0, 0, 1);
	CHECK(records__parse(rec, size, &rs) == RECORD_SAMPLE);
	CHECK(rs.has_mem && mem_equal(&rs.mem, &mem_in));
	/* after registers and a 13-byte stack copy: at offset 104+16+64+13,
	 * not 8-aligned */
	size = make_rec(0, 2, 0, 13, 1);
	CHECK((size - sizeof(struct tp_mem)) % 8 != 0);
	memset(&rs, 0, sizeof(rs));
	CHECK(records__parse(rec, size, &rs) == RECORD_SAMPLE);
	CHECK((const uint8_t *)rs.regs == base + sizeof(struct tp_sample) + 16);
	CHECK(rs.stack == (const uint8_t *)(rs.regs + 1));
	CHECK(rs.has_mem && mem_equal(&rs.mem, &mem_in));
	/* a larger record (ring-buffer padding) is fine */
	CHECK(records__parse(rec, size + 3, &rs) == RECORD_SAMPLE);
	CHECK(rs.has_mem && mem_equal(&rs.mem, &mem_in));
	/* truncated trailer */
	CHECK(records__parse(rec, size - 1, &rs) == RECORD_MALFORMED);
	CHECK(records__parse(rec, size - sizeof(struct tp_mem), &rs) ==
	      RECORD_MALFORMED);
	/* mem is 0 or 1 */
	s->mem = 2;
	CHECK(records__parse(rec, size, &rs) == RECORD_MALFORMED);
	s->mem = 0xff;
	CHECK(records__parse(rec, size, &rs) == RECORD_MALFORMED);
	s->mem = 1;
	CHECK(records__parse(rec, size, &rs) == RECORD_SAMPLE);
	/* address 0 is never sent */
	memset((uint8_t *)rec + size - sizeof(struct tp_mem), 0, 8);
	CHECK(records__parse(rec, size, &rs) == RECORD_MALFORMED);
	/* mem 0: no trailer read, whatever follows */
	size = make_rec(0, 2, 0, 13, 1);
	s->mem = 0;
	memset(&rs, 0xff, sizeof(rs));
	CHECK(records__parse(rec, size, &rs) == RECORD_SAMPLE);
	CHECK(!rs.has_mem);
	size = make_rec(0, 2, 0, 0, 0);
	memset(&rs, 0xff, sizeof(rs));
	CHECK(records__parse(rec, size, &rs) == RECORD_SAMPLE);
	CHECK(!rs.has_mem);
}

/* With stack ids: the trailer follows the kernel stack's id and frames. */
static void test_record_mem_ids(void)
{
	struct tp_sample *s = (struct tp_sample *)rec;
	uint8_t *b = (uint8_t *)rec;
	struct raw_sample rs;
	size_t size = sizeof(*s) + 8 + 2 * 8;	/* kernel id, 2 frames */

	memset(rec, 0, sizeof(rec));
	s->type = TP_REC_SAMPLE;
	s->user_depth = 4;
	s->kern_depth = 2;
	s->stack_kind = TP_STACK_SEEN;	/* user frames by id: none here */
	s->kstack_kind = TP_STACK_NEW;
	s->stack_id = 77;
	memcpy(b + sizeof(*s), &(uint64_t){ 0x99 }, 8);
	s->mem = 1;
	memcpy(b + size, &mem_in, sizeof(mem_in));
	size += sizeof(mem_in);
	CHECK(records__parse(rec, size, &rs) == RECORD_SAMPLE);
	CHECK(rs.kstack_id == 0x99 && !rs.uframes && rs.kframes);
	CHECK(rs.has_mem && mem_equal(&rs.mem, &mem_in));
	CHECK(records__parse(rec, size - 1, &rs) == RECORD_MALFORMED);
}

/* ---- data source ---- */

/* PERF_MEM_NA, which the uapi does not export (kernel's
 * include/linux/perf_event.h): before 6.1 and after, with LVLNUM NA. */
#define MEM_NA_OLD                                                         \
	(PERF_MEM_S(OP, NA) | PERF_MEM_S(LVL, NA) | PERF_MEM_S(SNOOP, NA) | \
	 PERF_MEM_S(LOCK, NA) | PERF_MEM_S(TLB, NA))
#define MEM_NA_NEW (MEM_NA_OLD | PERF_MEM_S(LVLNUM, NA))

static const char *describe(uint64_t src)
{
	static char buf[128];

	return datasrc__describe(src, buf, sizeof(buf));
}

static void test_datasrc(void)
{
	uint64_t l1 = PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT) |
		      PERF_MEM_S(LVL, L1) | PERF_MEM_S(LVLNUM, L1) |
		      PERF_MEM_S(SNOOP, NONE) | PERF_MEM_S(TLB, HIT) |
		      PERF_MEM_S(TLB, L1);
	uint64_t src;
	const char *d;

	CHECK(!strcmp(describe(l1), "L1 hit, TLB hit"));
	/* the older bits alone say the same */
	src = PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT) | PERF_MEM_S(LVL, L1) |
	      PERF_MEM_S(TLB, HIT) | PERF_MEM_S(TLB, L1);
	CHECK(!strcmp(describe(src), "L1 hit, TLB hit"));

	src = PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, MISS) |
	      PERF_MEM_S(LVL, L3) | PERF_MEM_S(TLB, MISS) |
	      PERF_MEM_S(TLB, L2) | PERF_MEM_S(SNOOP, NA);
	CHECK(!strcmp(describe(src), "L3 miss, TLB miss"));

	src = PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, LOC_RAM) |
	      PERF_MEM_S(LVL, HIT) | PERF_MEM_S(SNOOP, HITM);
	d = describe(src);
	CHECK(strstr(d, "local DRAM") && strstr(d, "HITM"));
	CHECK(!strstr(d, "remote"));

	src = PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVLNUM, RAM) |
	      PERF_MEM_S(REMOTE, REMOTE) | PERF_MEM_S(LVL, HIT);
	d = describe(src);
	CHECK(strstr(d, "remote DRAM"));
	CHECK(!strstr(d, "local"));
	src = PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVLNUM, RAM) |
	      PERF_MEM_S(LVL, HIT);
	CHECK(strstr(describe(src), "local DRAM"));
	src = PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, REM_RAM1) |
	      PERF_MEM_S(LVL, HIT);
	CHECK(strstr(describe(src), "remote DRAM"));

	/* AMD: served by another CCX's cache */
	src = PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVLNUM, ANY_CACHE) |
	      PERF_MEM_S(SNOOPX, PEER) | PERF_MEM_S(LVL, HIT);
	CHECK(strstr(describe(src), "peer cache"));

	src = PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, LFB) | PERF_MEM_S(LVL, HIT);
	CHECK(strstr(describe(src), "LFB"));
	src = PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVLNUM, LFB) |
	      PERF_MEM_S(LVL, HIT);
	CHECK(strstr(describe(src), "LFB"));

	CHECK(strstr(describe(l1 | PERF_MEM_S(LOCK, LOCKED)), "locked"));
	CHECK(!strstr(describe(l1 | PERF_MEM_S(LOCK, NA)), "locked"));

	CHECK(!strcmp(describe(MEM_NA_OLD), "unknown"));
	CHECK(!strcmp(describe(MEM_NA_NEW), "unknown"));
	CHECK(!strcmp(describe(0), "unknown"));
}

/* Short buffers: never written past len, always terminated. */
static void test_datasrc_short(void)
{
	uint64_t src = PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT) |
		       PERF_MEM_S(LVL, L1) | PERF_MEM_S(TLB, HIT) |
		       PERF_MEM_S(SNOOP, HITM) | PERF_MEM_S(LOCK, LOCKED);
	const uint64_t srcs[] = { src, MEM_NA_OLD, 0 };
	char buf[32];

	for (size_t i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
		for (size_t len = 1; len <= 8; len++) {
			memset(buf, 'X', sizeof(buf));
			CHECK(datasrc__describe(srcs[i], buf, len) == buf);
			CHECK(memchr(buf, '\0', len));
			for (size_t j = len; j < sizeof(buf); j++)
				CHECK(buf[j] == 'X');
		}
	}
	memset(buf, 'X', sizeof(buf));
	datasrc__describe(src, buf, 1);
	CHECK(buf[0] == '\0');
	datasrc__describe(src, buf, 5);
	CHECK(strlen(buf) == 4 && !strncmp(buf, "L1 h", 4));
	memset(buf, 'X', sizeof(buf));
	datasrc__describe(src, buf, 0);
	CHECK(buf[0] == 'X');
}

/* ---- data maps ---- */

static struct procfs_map pmap(uint64_t start, uint64_t end, uint64_t dev,
			      uint64_t ino, const char *path)
{
	return (struct procfs_map){ .start = start, .end = end, .dev = dev,
				    .ino = ino, .perms = "rw-p",
				    .path = path };
}

static void test_datamaps(void)
{
	struct data_maps d = { 0 };
	struct procfs_map pm[8];
	const struct data_map *m;
	uint64_t cost = 0;
	size_t n = 0;

	pm[n++] = pmap(0x10000, 0x12000, 0x800000001ull, 42, "/usr/bin/prog");
	pm[n++] = pmap(0x12000, 0x15000, 0, 0, "");	/* its .bss */
	pm[n++] = pmap(0x20000, 0x21000, 0, 0, "");	/* apart */
	pm[n++] = pmap(0x30000, 0x40000, 0, 0, "[heap]");
	pm[n++] = pmap(0x40000, 0x41000, 0, 0, "");	/* after the heap */
	pm[n++] = pmap(0x50000, 0x51000, 0x800000001ull, 43,
		       "/tmp/bad\xff\xfe name");
	pm[n++] = pmap(0x60000, 0x60000, 7, 44, "/empty");	/* skipped */
	pm[n++] = pmap(0x70000, 0x6f000, 7, 45, "/backwards"); /* skipped */
	for (size_t i = 0; i < n; i++) {
		CHECK(datamaps__add(&d, &pm[i], 64) == 0);
		cost += datamaps__cost(&pm[i]);
	}
	CHECK(d.n == 6);
	CHECK(d.bytes >= 6 * sizeof(struct data_map) && d.bytes <= cost);

	m = datamaps__at(&d, 0x10000);
	CHECK(m && m->ino == 42 && !strcmp(datamaps__name(m), "/usr/bin/prog"));
	m = datamaps__at(&d, 0x12000);
	CHECK(m && m->start == 0x12000 && m->end == 0x15000);
	CHECK(m->dev == 0x800000001ull && m->ino == 42);
	CHECK(!m->name && !strcmp(datamaps__name(m), "[anon]"));
	CHECK(datamaps__at(&d, 0x14fff) == m);
	CHECK(!datamaps__at(&d, 0x15000));
	CHECK(!datamaps__at(&d, 0xffff));
	CHECK(!datamaps__at(&d, 0));
	m = datamaps__at(&d, 0x20800);
	CHECK(m && m->ino == 0 && m->dev == 0);
	CHECK(!strcmp(datamaps__name(m), "[anon]"));
	m = datamaps__at(&d, 0x3abcd);
	CHECK(m && !strcmp(datamaps__name(m), "[heap]") && m->ino == 0);
	m = datamaps__at(&d, 0x40000);
	CHECK(m && m->ino == 0 && !strcmp(datamaps__name(m), "[anon]"));
	m = datamaps__at(&d, 0x50000);
	CHECK(m && m->ino == 43 && m->name);
	CHECK(!strchr(m->name, '\xff') && !strchr(m->name, '\xfe'));
	CHECK(strstr(m->name, "/tmp/bad") && strstr(m->name, " name"));
	CHECK(strstr(m->name, "\xef\xbf\xbd"));	/* U+FFFD */
	CHECK(!datamaps__at(&d, 0x60000) && !datamaps__at(&d, 0x6f800));
	CHECK(!datamaps__at(&d, UINT64_MAX));
	datamaps__free(&d);
	CHECK(d.n == 0 && !d.v && d.bytes == 0);

	/* at most max entries */
	for (size_t i = 0; i < 3; i++)
		CHECK(datamaps__add(&d, &pm[i], 3) == 0);
	CHECK(datamaps__add(&d, &pm[3], 3) == -E2BIG);
	CHECK(d.n == 3 && !datamaps__at(&d, 0x30000));
	/* ... where a skipped one still is not an error */
	CHECK(datamaps__add(&d, &pm[6], 3) == 0);
	datamaps__free(&d);
}

/* ---- ELF variables ---- */

/* Touches its variables, says so on stdout and waits for stdin to close. */
static const char prog_src[] =
	"#include <unistd.h>\n"
	"int table_x[1000];\n"
	"static char small_y[64];\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	char c;\n"
	"	(void)argv;\n"
	"	small_y[argc & 63] = 1;\n"
	"	table_x[argc] = 2;\n"
	"	if (write(1, \"r\", 1) != 1)\n"
	"		return 1;\n"
	"	return (int)read(0, &c, 1) + small_y[0] + table_x[1];\n"
	"}\n";

/* Value and size of a symbol, as nm -S says. */
static bool nm_sym(const char *path, const char *name, uint64_t *value,
		   uint64_t *size)
{
	char cmd[PATH_MAX + 64], line[512], sym[256], type;
	unsigned long long v, s;
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm -S '%s'", path);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %llx %c %255s", &v, &s, &type, sym) == 4 &&
		    !strcmp(sym, name)) {
			*value = v;
			*size = s;
			found = true;
		}
	pclose(p);
	return found;
}

static bool prog_built;
/* The program as cc builds it by default (PIE here), and a position-
 * dependent one, whose ELF header is not at link-time address 0. */
static char prog_path[PATH_MAX], nopie_path[PATH_MAX];

static bool build_prog(void)
{
	char src[PATH_MAX];

	if (prog_built)
		return true;
	snprintf(src, sizeof(src), "%s/prog.c", tmpdir);
	snprintf(prog_path, sizeof(prog_path), "%s/prog", tmpdir);
	snprintf(nopie_path, sizeof(nopie_path), "%s/prog_nopie", tmpdir);
	if (!put(tmpdir, "prog.c", prog_src) ||
	    !sh("cc -O0 -g -o '%s' '%s'", prog_path, src) ||
	    !sh("cc -O0 -g -no-pie -o '%s' '%s'", nopie_path, src))
		return false;
	prog_built = true;
	return true;
}

/* Lookups at a variable's first and last byte and just past it. */
static bool check_var(const struct elfsym *e, const char *name, uint64_t v,
		      uint64_t size)
{
	uint64_t start = 0, sz = 0;
	const char *got;

	got = elfsym__lookup_data(e, v, &start, &sz);
	if (!got || strcmp(got, name) || start != v || sz != size)
		return false;
	got = elfsym__lookup_data(e, v + size / 2, &start, &sz);
	if (!got || strcmp(got, name) || start != v || sz != size)
		return false;
	got = elfsym__lookup_data(e, v + size - 1, &start, &sz);
	if (!got || strcmp(got, name) || start != v || sz != size)
		return false;
	/* past the end: not this one (another may start right there) */
	got = elfsym__lookup_data(e, v + size, &start, &sz);
	if (got && (!strcmp(got, name) || start != v + size))
		return false;
	return true;
}

static void test_elf_data_objects(void)
{
	uint64_t xv, xs, yv, ys, start;
	struct elfsym *e;

	CHECK(build_prog());
	CHECK(nm_sym(prog_path, "table_x", &xv, &xs));
	CHECK(nm_sym(prog_path, "small_y", &yv, &ys));
	CHECK(xs == 1000 * sizeof(int) && ys == 64);

	elfsym__set_data_objects(true);
	e = elfsym__open(prog_path);
	elfsym__set_data_objects(false);
	CHECK(e);
	CHECK(check_var(e, "table_x", xv, xs));
	CHECK(check_var(e, "small_y", yv, ys));
	/* variables are not functions, and the reverse */
	CHECK(!elfsym__lookup(e, xv + 8, &start) ||
	      strcmp(elfsym__lookup(e, xv + 8, &start), "table_x"));
	CHECK(!elfsym__lookup_data(e, 0, NULL, NULL));
	elfsym__free(e);

	/* not asked for: nothing */
	e = elfsym__open(prog_path);
	CHECK(e);
	CHECK(!elfsym__lookup_data(e, xv, NULL, NULL));
	CHECK(!elfsym__lookup_data(e, xv + xs - 1, NULL, NULL));
	CHECK(!elfsym__lookup_data(e, yv, NULL, NULL));
	CHECK(elfsym__count(e) > 0);	/* functions still are */
	elfsym__free(e);

	/* position-dependent: link-time addresses far from 0 */
	CHECK(nm_sym(nopie_path, "table_x", &xv, &xs));
	CHECK(nm_sym(nopie_path, "small_y", &yv, &ys));
	elfsym__set_data_objects(true);
	e = elfsym__open(nopie_path);
	elfsym__set_data_objects(false);
	CHECK(e);
	CHECK(check_var(e, "table_x", xv, xs));
	CHECK(check_var(e, "small_y", yv, ys));
	elfsym__free(e);
}

/* ---- a live process's data addresses ---- */

/* In the child: a variable past the file's last page (.bss, page-aligned
 * so that it lies in the anonymous mapping after the file's), and one in
 * the file's .data. */
static char mc_bss_array[4 * 4096] __attribute__((aligned(4096)));
static int mc_data_array[256] = { 1, 2, 3 };

/* Three pages, the outer two PROT_NONE, so that the middle one is an
 * anonymous mapping of its own (not merged with a neighbour). */
static uint8_t *guarded_page(int prot)
{
	uint8_t *p = mmap(NULL, 3 * 4096, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p + 4096, 4096, prot)) {
		munmap(p, 3 * 4096);
		return NULL;
	}
	return p + 4096;
}

/* The child: maps a page when asked ('m'), tells the address, and waits
 * for the pipe to close. */
static void child_loop(int cmd, int reply)
{
	char c;

	mc_bss_array[100] = 1;
	mc_data_array[10] = 7;
	while (read(cmd, &c, 1) == 1) {
		uint64_t a = 0;

		if (c == 'm') {
			uint8_t *p = guarded_page(PROT_READ);

			a = ADDR(p);
		}
		if (write(reply, &a, sizeof(a)) != sizeof(a))
			break;
	}
	_exit(0);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

struct live {
	pid_t pid;
	int cmd, reply;
};

static void live_stop(struct live *l)
{
	if (l->cmd >= 0)
		close(l->cmd);
	if (l->reply >= 0)
		close(l->reply);
	check_stop_child(l->pid);
}

static void live_data_objects(struct live *l)
{
	char exe[PATH_MAX], want[PATH_MAX + 64], buf[512];
	const char *base, *got;
	enum data_object_kind how;
	struct proctable *t;
	int to_child[2], from_child[2];
	volatile int on_stack = 0;
	uint64_t late = 0;
	uint8_t *anon;
	struct proc *p;

	CHECK(check_read_exe(exe, sizeof(exe)));
	base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	anon = guarded_page(PROT_READ | PROT_WRITE);
	CHECK(anon);
	anon[0] = 1;
	CHECK(pipe(to_child) == 0);
	CHECK(pipe(from_child) == 0);
	fflush(NULL);
	l->pid = fork();
	CHECK(l->pid >= 0);
	if (l->pid == 0) {
		close(to_child[1]);
		close(from_child[0]);
		child_loop(to_child[0], from_child[1]);
	}
	close(to_child[0]);
	close(from_child[1]);
	l->cmd = to_child[1];
	l->reply = from_child[0];
	/* it has run its first lines (the variables are touched) */
	CHECK(write(l->cmd, "n", 1) == 1);
	CHECK(read(l->reply, &late, sizeof(late)) == sizeof(late));

	elfsym__set_data_objects(true);
	t = proctable__new();
	CHECK(t);
	proctable__set_data_maps(t, true);
	p = proctable__get(t, l->pid, 0, "test_memcapture");
	if (!p) {
		proctable__free(t);
		CHECK(p);
	}

#define LOOK(addr, time) \
	proctable__data_object(t, p, (addr), (time), buf, sizeof(buf), &how)
	snprintf(want, sizeof(want), "mc_bss_array (%s)", base);
	got = LOOK(ADDR(mc_bss_array) + 5000, clock__mono_ns());
	if (strcmp(got, want) || how != DATA_OBJECT_SYMBOL)
		fprintf(stderr, "  bss: got \"%s\" (%d), want \"%s\"\n", got,
			how, want);
	CHECK(!strcmp(got, want) && how == DATA_OBJECT_SYMBOL);
	got = LOOK(ADDR(mc_bss_array) + sizeof(mc_bss_array) - 1, 0);
	CHECK(!strcmp(got, want) && how == DATA_OBJECT_SYMBOL);
	snprintf(want, sizeof(want), "mc_data_array (%s)", base);
	got = LOOK(ADDR(&mc_data_array[10]), 0);
	if (strcmp(got, want) || how != DATA_OBJECT_SYMBOL)
		fprintf(stderr, "  data: got \"%s\" (%d), want \"%s\"\n", got,
			how, want);
	CHECK(!strcmp(got, want) && how == DATA_OBJECT_SYMBOL);

	got = LOOK(ADDR(anon) + 100, 0);
	CHECK(!strcmp(got, "[anon]") && how == DATA_OBJECT_MAPPING);
	got = LOOK(ADDR(&on_stack), 0);
	CHECK(!strcmp(got, "[stack]") && how == DATA_OBJECT_MAPPING);
	got = LOOK(0xffffffff81000000ull, clock__mono_ns());
	CHECK(!strcmp(got, "[kernel]") && how == DATA_OBJECT_NONE);

	/* mapped after the maps were read: found by a re-read, for a
	 * sample taken after the last read, once RELOAD_NEW_NS has passed */
	CHECK(write(l->cmd, "m", 1) == 1);
	CHECK(read(l->reply, &late, sizeof(late)) == sizeof(late) && late);
	sleep_ms(30);
	got = LOOK(late + 17, clock__mono_ns());
	if (strcmp(got, "[anon]") || how != DATA_OBJECT_MAPPING)
		fprintf(stderr, "  late: got \"%s\" (%d)\n", got, how);
	CHECK(!strcmp(got, "[anon]") && how == DATA_OBJECT_MAPPING);
	CHECK(p->maps_grown == 1);	/* the re-read found it */

	sleep_ms(30);
	got = LOOK(0x1000, clock__mono_ns());
	CHECK(!strcmp(got, "[unmapped]") && how == DATA_OBJECT_NONE);
	got = LOOK(0x1000, 0);
	CHECK(!strcmp(got, "[unmapped]") && how == DATA_OBJECT_NONE);
	/* no process at all */
	got = proctable__data_object(t, NULL, 0x1000, 0, buf, sizeof(buf),
				     &how);
	CHECK(!strcmp(got, "[unmapped]") && how == DATA_OBJECT_NONE);
#undef LOOK
	proctable__free(t);
	elfsym__set_data_objects(false);
	munmap(anon - 4096, 3 * 4096);
}

static void test_proc_data_objects(void)
{
	struct live l = { .pid = -1, .cmd = -1, .reply = -1 };

	live_data_objects(&l);
	live_stop(&l);
}

/* The non-PIE program, run: its variables at nm's addresses, named
 * through the load bias 0 of a file whose header is not at 0. */
static void nopie_data_objects(struct live *l)
{
	uint64_t xv, xs, yv, ys;
	enum data_object_kind how;
	int in[2], out[2];
	struct proctable *t;
	const char *got;
	struct proc *p;
	char buf[512], c;

	CHECK(build_prog());
	CHECK(nm_sym(nopie_path, "table_x", &xv, &xs));
	CHECK(nm_sym(nopie_path, "small_y", &yv, &ys));
	CHECK(pipe(in) == 0);
	if (pipe(out)) {
		close(in[0]);
		close(in[1]);
		CHECK(0);
	}
	fflush(NULL);
	l->pid = fork();
	if (l->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execl(nopie_path, nopie_path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	l->cmd = in[1];
	l->reply = out[0];
	CHECK(l->pid > 0);
	CHECK(read(l->reply, &c, 1) == 1 && c == 'r');

	elfsym__set_data_objects(true);
	t = proctable__new();
	CHECK(t);
	proctable__set_data_maps(t, true);
	p = proctable__get(t, l->pid, 0, "prog_nopie");
	if (!p) {
		proctable__free(t);
		CHECK(p);
	}
	got = proctable__data_object(t, p, xv + xs / 2, 0, buf, sizeof(buf),
				     &how);
	if (strcmp(got, "table_x (prog_nopie)"))
		fprintf(stderr, "  table_x at 0x%llx: got \"%s\"\n",
			(unsigned long long)(xv + xs / 2), got);
	CHECK(!strcmp(got, "table_x (prog_nopie)") &&
	      how == DATA_OBJECT_SYMBOL);
	got = proctable__data_object(t, p, xv + xs - 1, 0, buf, sizeof(buf),
				     &how);
	CHECK(!strcmp(got, "table_x (prog_nopie)"));
	got = proctable__data_object(t, p, yv, 0, buf, sizeof(buf), &how);
	CHECK(!strcmp(got, "small_y (prog_nopie)") &&
	      how == DATA_OBJECT_SYMBOL);
	proctable__free(t);
	elfsym__set_data_objects(false);
}

static void test_proc_nopie(void)
{
	struct live l = { .pid = -1, .cmd = -1, .reply = -1 };

	nopie_data_objects(&l);
	live_stop(&l);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tp_memcap.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_pebs_intel);
	RUN(test_pebs_hybrid);
	RUN(test_split_format);
	RUN(test_pebs_aux);
	RUN(test_ibs);
	RUN(test_no_pmu);
	RUN(test_malformed_trees);
	RUN(test_events_parse);
	RUN(test_record_mem);
	RUN(test_record_mem_ids);
	RUN(test_datasrc);
	RUN(test_datasrc_short);
	RUN(test_datamaps);
	RUN(test_elf_data_objects);
	RUN(test_proc_data_objects);
	RUN(test_proc_nopie);
	check_remove_dir(tmpdir);
	CHECK_EXIT();
}
