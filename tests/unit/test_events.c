/* Unit tests for src/kernel/events.c: spec parsing (builtin names and
 * libpfm4), probing, the auto choice, the choice of -e and error
 * explanations. Real perf_event_open and real libpfm4, no mocks; cases
 * that need root or a PMU that libpfm4 knows are skipped with the
 * reason. */
#include "kernel/events.h"
#include "check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <perfmon/pfmlib_perf_event.h>

static char err[512];

static int parse(const char *spec, struct tp_event *ev)
{
	memset(err, 0, sizeof(err));
	return events__parse(spec, ev, err, sizeof(err));
}

static void test_parse_cpu_clock(void)
{
	struct tp_event ev;

	CHECK(parse("cpu-clock", &ev) == 0);
	CHECK(ev.attr.type == PERF_TYPE_SOFTWARE);
	CHECK(ev.attr.config == PERF_COUNT_SW_CPU_CLOCK);
	CHECK(ev.attr.precise_ip == 0);
	CHECK(ev.attr.size == sizeof(ev.attr));
	CHECK(ev.software_clock);
	CHECK(!ev.hardware);
	CHECK(!strcmp(ev.name, "cpu-clock"));
	CHECK(!strcmp(ev.sample_type, "cpu"));
	CHECK(!strcmp(ev.sample_unit, "nanoseconds"));
}

static void test_parse_cycles_precise(void)
{
	static const char *const specs[] = {
		"cycles", "cycles:p", "cycles:pp", "cycles:ppp",
	};
	struct tp_event ev;

	for (int i = 0; i < 4; i++) {
		CHECK(parse(specs[i], &ev) == 0);
		CHECK(ev.attr.type == PERF_TYPE_HARDWARE);
		CHECK(ev.attr.config == PERF_COUNT_HW_CPU_CYCLES);
		CHECK(ev.attr.precise_ip == i);
		CHECK(ev.hardware);
		CHECK(!ev.software_clock);
		CHECK(!strcmp(ev.name, specs[i]));
		CHECK(!strcmp(ev.sample_type, "cycles"));
		CHECK(!strcmp(ev.sample_unit, "count"));
		/* The sampler owns these. */
		CHECK(ev.attr.sample_period == 0 && !ev.attr.freq);
		CHECK(ev.attr.sample_type == 0 && !ev.attr.disabled);
	}
}

static void test_parse_cpu_cycles_alias(void)
{
	struct tp_event ev;

	CHECK(parse("cpu-cycles:pp", &ev) == 0);
	CHECK(ev.attr.type == PERF_TYPE_HARDWARE);
	CHECK(ev.attr.config == PERF_COUNT_HW_CPU_CYCLES);
	CHECK(ev.attr.precise_ip == 2);
	CHECK(!strcmp(ev.name, "cpu-cycles:pp"));
	CHECK(!strcmp(ev.sample_type, "cycles"));
}

static void test_parse_instructions_ref_cycles(void)
{
	struct tp_event ev;

	CHECK(parse("instructions", &ev) == 0);
	CHECK(ev.attr.type == PERF_TYPE_HARDWARE);
	CHECK(ev.attr.config == PERF_COUNT_HW_INSTRUCTIONS);
	CHECK(ev.hardware && !ev.software_clock);
	CHECK(!strcmp(ev.sample_type, "instructions"));
	CHECK(!strcmp(ev.sample_unit, "count"));

	CHECK(parse("ref-cycles:p", &ev) == 0);
	CHECK(ev.attr.type == PERF_TYPE_HARDWARE);
	CHECK(ev.attr.config == PERF_COUNT_HW_REF_CPU_CYCLES);
	CHECK(ev.attr.precise_ip == 1);
	CHECK(!strcmp(ev.sample_type, "ref-cycles"));
	CHECK(!strcmp(ev.name, "ref-cycles:p"));
}

static void test_parse_rejects_unknown(void)
{
	static const char *const specs[] = {
		"", "nosuchevent", ":p", "cycles:", "auto",
	};
	struct tp_event ev;

	for (int i = 0; i < 5; i++) {
		CHECK(parse(specs[i], &ev) == -EINVAL);
		CHECK(err[0] != '\0');
		CHECK(!strchr(err, '\n'));
	}
	CHECK(parse("nosuchevent", &ev) == -EINVAL);
	CHECK(strstr(err, "'nosuchevent'"));
	CHECK(strstr(err, "valid forms"));
	CHECK(strstr(err, "cpu-clock") && strstr(err, ":ppp"));
	CHECK(parse("", &ev) == -EINVAL);
	CHECK(strstr(err, "valid forms"));
	/* auto is resolved by the caller; the message points there. */
	CHECK(parse("auto", &ev) == -EINVAL);
	CHECK(strstr(err, "events__auto"));
	CHECK(events__parse(NULL, &ev, err, sizeof(err)) == -EINVAL);
}

static void test_parse_rejects_bad_modifiers(void)
{
	struct tp_event ev;

	CHECK(parse("cycles:pppp", &ev) == -EINVAL);
	CHECK(strstr(err, ":pppp") && strstr(err, ":ppp"));
	CHECK(parse("cycles:x", &ev) == -EINVAL);
	CHECK(strstr(err, "modifier") && strstr(err, ":x"));
	CHECK(parse("cpu-clock:pp", &ev) == -EINVAL);
	CHECK(strstr(err, "hardware"));
	CHECK(parse("cpu-clock:p", &ev) == -EINVAL);
}

static void test_parse_rejects_long_name(void)
{
	char spec[501];
	struct tp_event ev;

	memset(spec, 'a', sizeof(spec) - 1);
	spec[sizeof(spec) - 1] = '\0';
	CHECK(parse(spec, &ev) == -EINVAL);
	CHECK(strstr(err, "too long") && strstr(err, "valid forms"));
	/* 121 characters is one over the limit; 120 is only "unknown". */
	spec[121] = '\0';
	CHECK(parse(spec, &ev) == -EINVAL && strstr(err, "too long"));
	spec[120] = '\0';
	CHECK(parse(spec, &ev) == -EINVAL && !strstr(err, "too long"));
}

/* err stays NUL-terminated inside errlen and nothing past it is written. */
static void test_parse_err_small_buffer(void)
{
	static const char *const specs[] = {
		"nosuchevent", "", "cycles:pppp", "cpu-clock:p", "auto",
	};
	char small[32];
	struct tp_event ev;

	for (int i = 0; i < 5; i++) {
		memset(small, 'X', sizeof(small));
		CHECK(events__parse(specs[i], &ev, small, 16) == -EINVAL);
		CHECK(memchr(small, '\0', 16));
		CHECK(strlen(small) == 15);
		for (size_t j = 16; j < sizeof(small); j++)
			CHECK(small[j] == 'X');
	}
	/* No buffer at all is allowed too. */
	CHECK(events__parse("nosuchevent", &ev, NULL, 0) == -EINVAL);
	memset(small, 'X', sizeof(small));
	CHECK(events__parse("nosuchevent", &ev, small, 1) == -EINVAL);
	CHECK(small[0] == '\0' && small[1] == 'X');
}

/* libpfm4's OS-generic "perf" PMU exists on every Linux machine, so these
 * exercise the libpfm4 path even where it knows no hardware PMU. */
static void test_parse_pfm_generic(void)
{
	struct tp_event ev;

	CHECK(parse("perf::PERF_COUNT_HW_INSTRUCTIONS", &ev) == 0);
	CHECK(ev.attr.type == PERF_TYPE_HARDWARE);
	CHECK(ev.attr.config == PERF_COUNT_HW_INSTRUCTIONS);
	CHECK(ev.hardware && !ev.software_clock);
	CHECK(!strcmp(ev.sample_type, "perf::PERF_COUNT_HW_INSTRUCTIONS"));
	CHECK(!strcmp(ev.sample_unit, "count"));
	CHECK(ev.attr.size == sizeof(ev.attr));
	CHECK(ev.attr.sample_period == 0 && ev.attr.sample_type == 0);
	CHECK(!ev.attr.disabled && !ev.attr.freq);

	/* Our precise modifier survives libpfm4's encoding. */
	CHECK(parse("perf::PERF_COUNT_HW_INSTRUCTIONS:pp", &ev) == 0);
	CHECK(ev.attr.precise_ip == 2);
	CHECK(!strcmp(ev.name, "perf::PERF_COUNT_HW_INSTRUCTIONS:pp"));
	CHECK(!strcmp(ev.sample_type, "perf::PERF_COUNT_HW_INSTRUCTIONS"));

	/* libpfm4's own modifiers work, on builtin names too. */
	CHECK(parse("instructions:u", &ev) == 0);
	CHECK(ev.attr.config == PERF_COUNT_HW_INSTRUCTIONS);
	CHECK(ev.attr.exclude_kernel && !ev.attr.exclude_user);

	/* A dotted EVENT.UMASK name is retried as EVENT:UMASK. */
	CHECK(parse("PERF_COUNT_HW_CACHE_L1D.READ", &ev) == 0);
	CHECK(ev.attr.type == PERF_TYPE_HW_CACHE);
	CHECK(ev.hardware);

	/* A software clock through libpfm4 keeps its nanosecond meaning. */
	CHECK(parse("cpu-clock:u", &ev) == 0);
	CHECK(ev.attr.type == PERF_TYPE_SOFTWARE);
	CHECK(ev.software_clock && !ev.hardware);
	CHECK(!strcmp(ev.sample_unit, "nanoseconds"));
	CHECK(parse("perf::PERF_COUNT_SW_CPU_CLOCK:p", &ev) == -EINVAL);
	CHECK(strstr(err, "hardware"));

	/* libpfm4's reason is passed on. */
	CHECK(parse("perf::PERF_COUNT_HW_INSTRUCTIONS:nosuchattr", &ev) ==
	      -EINVAL);
	CHECK(strstr(err, "libpfm4: ") && strstr(err, "valid forms"));
}

static int core_pmu_present(void)
{
	pfm_pmu_info_t pi;
	pfm_pmu_t pmu;

	pfm_for_all_pmus(pmu) {
		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm_get_pmu_info(pmu, &pi) == PFM_SUCCESS &&
		    pi.is_present && pi.type == PFM_PMU_TYPE_CORE)
			return 1;
	}
	return 0;
}

/* Tries the events of one PMU until one parses; fills name. */
static int first_parsable_event(const pfm_pmu_info_t *pi, char *name,
				size_t len, struct tp_event *ev)
{
	pfm_event_info_t ei;

	for (int idx = pi->first_event; idx != -1;
	     idx = pfm_get_event_next(idx)) {
		memset(&ei, 0, sizeof(ei));
		ei.size = sizeof(ei);
		if (pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &ei))
			continue;
		snprintf(name, len, "%s::%s", pi->name, ei.name);
		if (parse(name, ev) == 0)
			return 1;
	}
	return 0;
}

/* An event of the CPU's own PMU, found at run time. */
static void test_parse_pfm_core_event(void)
{
	char name[256];
	struct tp_event ev;
	pfm_pmu_info_t pi;
	pfm_pmu_t pmu;
	int found = 0;

	pfm_for_all_pmus(pmu) {
		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm_get_pmu_info(pmu, &pi) != PFM_SUCCESS ||
		    !pi.is_present || pi.type != PFM_PMU_TYPE_CORE)
			continue;
		CHECK(first_parsable_event(&pi, name, sizeof(name), &ev));
		fprintf(stderr, "  %s -> type %u config %#llx\n", name,
			ev.attr.type, (unsigned long long)ev.attr.config);
		CHECK(ev.hardware);
		CHECK(ev.attr.type != 0 || ev.attr.config != 0);
		CHECK(!strcmp(ev.sample_unit, "count"));
		found = 1;
		break;
	}
	CHECK(found);
}

/* Intel names parse on Intel and fail cleanly everywhere else. */
static void test_parse_intel_dotted(void)
{
	static const char *const specs[] = {
		"INST_RETIRED.PREC_DIST", "MEM_INST_RETIRED.ALL_LOADS:pp",
	};
	static const char *const types[] = {
		"INST_RETIRED.PREC_DIST", "MEM_INST_RETIRED.ALL_LOADS",
	};
	struct tp_event ev;

	for (int i = 0; i < 2; i++) {
		int rc = parse(specs[i], &ev);

		if (rc == 0) {
			CHECK(ev.hardware);
			CHECK(!strcmp(ev.name, specs[i]));
			CHECK(!strcmp(ev.sample_type, types[i]));
		} else {
			CHECK(rc == -EINVAL);
			CHECK(strstr(err, "valid forms"));
		}
	}
	CHECK(parse("MEM_INST_RETIRED.ALL_LOADS:pp", &ev) != 0 ||
	      ev.attr.precise_ip == 2);
}

static void test_probe_cpu_clock(void)
{
	struct tp_event ev;

	CHECK(parse("cpu-clock", &ev) == 0);
	CHECK(events__probe(&ev.attr) == 0);
}

/* Whatever auto picks must be what the probes say this machine can do. */
static void test_auto_consistent(void)
{
	static const char *const precise[] = {
		"cycles:ppp", "cycles:pp", "cycles:p",
	};
	struct tp_event ev, p;
	int rc[3];

	events__auto(&ev);
	for (int i = 0; i < 3; i++) {
		CHECK(parse(precise[i], &p) == 0);
		rc[i] = events__probe(&p.attr);
		fprintf(stderr, "  probe %s: %s\n", precise[i],
			rc[i] ? strerror(-rc[i]) : "ok");
	}
	fprintf(stderr, "  auto picked %s\n", ev.name);

	if (!strcmp(ev.name, "cpu-clock")) {
		CHECK(rc[0] && rc[1] && rc[2]);
		CHECK(ev.software_clock && !ev.hardware);
		CHECK(ev.attr.type == PERF_TYPE_SOFTWARE);
		CHECK(!strcmp(ev.sample_type, "cpu"));
		return;
	}
	for (int i = 0; i < 3; i++) {
		if (strcmp(ev.name, precise[i]))
			continue;
		CHECK(rc[i] == 0);
		for (int j = 0; j < i; j++)
			CHECK(rc[j] != 0);
		CHECK(ev.attr.precise_ip == 3 - i);
		CHECK(ev.hardware && !strcmp(ev.sample_type, "cycles"));
		return;
	}
	CHECK(!"auto picked neither cpu-clock nor precise cycles");
}

/* record's -e and the agent's event setting: auto is events__auto, a
 * name is parsed, then probed, and each failure says why in one line. */
static void test_choose(void)
{
	static const char *const probed[] = {
		"cpu-clock", "cycles:ppp", "cycles", "instructions:p",
	};
	struct tp_event ev, want;
	char expl[512];
	int rc;

	memset(err, 'X', sizeof(err));
	CHECK(events__choose("auto", &ev, err, sizeof(err)) == 0);
	CHECK(err[0] == '\0');
	events__auto(&want);
	CHECK(!strcmp(ev.name, want.name));
	CHECK(!memcmp(&ev.attr, &want.attr, sizeof(ev.attr)));

	/* Parse errors are events__parse's, as they are. */
	CHECK(events__choose("nosuchevent", &ev, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "unknown event 'nosuchevent'") &&
	      strstr(err, "valid forms"));
	CHECK(events__choose("cycles:pppp", &ev, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, ":pppp"));
	CHECK(events__choose(NULL, &ev, err, sizeof(err)) == -EINVAL);
	CHECK(events__choose("", &ev, NULL, 0) == -EINVAL);

	/* A name that parses is as good as its probe: on success the
	 * parsed event, else the probe's errno and events__explain's line. */
	for (size_t i = 0; i < sizeof(probed) / sizeof(probed[0]); i++) {
		CHECK(events__parse(probed[i], &want, NULL, 0) == 0);
		rc = events__probe(&want.attr);
		CHECK(events__choose(probed[i], &ev, err, sizeof(err)) == rc);
		fprintf(stderr, "  choose %s: %s\n", probed[i],
			rc ? err : "ok");
		if (!rc) {
			CHECK(err[0] == '\0');
			CHECK(!strcmp(ev.name, probed[i]));
			CHECK(!memcmp(&ev.attr, &want.attr, sizeof(ev.attr)));
			continue;
		}
		events__explain(&want, rc, expl, sizeof(expl));
		CHECK(!strcmp(err, expl));
	}
}

static int one_line_with(const char *buf, const char *needle)
{
	return buf[0] && !strchr(buf, '\n') && strstr(buf, needle);
}

static void test_explain(void)
{
	struct tp_event ev;
	char buf[512], small[24];

	CHECK(parse("cycles:pp", &ev) == 0);
	events__explain(&ev, -ENOENT, buf, sizeof(buf));
	CHECK(one_line_with(buf, "cpu-clock"));
	CHECK(strstr(buf, "'cycles:pp'") && strstr(buf, "precise"));
	events__explain(&ev, EOPNOTSUPP, buf, sizeof(buf));
	CHECK(one_line_with(buf, "cpu-clock"));

	events__explain(&ev, -EACCES, buf, sizeof(buf));
	CHECK(one_line_with(buf, "CAP_PERFMON"));
	events__explain(&ev, -EPERM, buf, sizeof(buf));
	CHECK(one_line_with(buf, "root"));
	events__explain(&ev, -EMFILE, buf, sizeof(buf));
	CHECK(one_line_with(buf, "ulimit"));
	events__explain(&ev, -E2BIG, buf, sizeof(buf));
	CHECK(one_line_with(buf, strerror(E2BIG)));

	/* A software event is not blamed on a missing PMU. */
	CHECK(parse("cpu-clock", &ev) == 0);
	events__explain(&ev, -EINVAL, buf, sizeof(buf));
	CHECK(one_line_with(buf, strerror(EINVAL)));
	CHECK(!strstr(buf, "PMU"));

	memset(small, 'X', sizeof(small));
	events__explain(&ev, -ENOENT, small, 16);
	CHECK(strlen(small) == 15 && small[16] == 'X');
	events__explain(NULL, -ENOENT, buf, sizeof(buf));
	CHECK(buf[0] && !strchr(buf, '\n'));

	/* Even a name holding a line break gives one line. */
	memset(&ev, 0, sizeof(ev));
	strcpy(ev.name, "bad\nname");
	ev.hardware = true;
	events__explain(&ev, -ENODEV, buf, sizeof(buf));
	CHECK(one_line_with(buf, "cpu-clock"));
}

int main(void)
{
	RUN(test_parse_cpu_clock);
	RUN(test_parse_cycles_precise);
	RUN(test_parse_cpu_cycles_alias);
	RUN(test_parse_instructions_ref_cycles);
	RUN(test_parse_rejects_unknown);
	RUN(test_parse_rejects_bad_modifiers);
	RUN(test_parse_rejects_long_name);
	RUN(test_parse_err_small_buffer);

	if (pfm_initialize() != PFM_SUCCESS) {
		SKIP(test_parse_pfm_generic, "libpfm4 fails to initialise");
		SKIP(test_parse_pfm_core_event, "libpfm4 fails to initialise");
	} else {
		RUN(test_parse_pfm_generic);
		if (core_pmu_present())
			RUN(test_parse_pfm_core_event);
		else
			SKIP(test_parse_pfm_core_event,
			     "libpfm4 detects no PMU on this machine");
	}
	RUN(test_parse_intel_dotted);

	if (geteuid() != 0)
		SKIP(test_probe_cpu_clock,
		     "needs root (system-wide perf_event_open)");
	else
		RUN(test_probe_cpu_clock);
	RUN(test_auto_consistent);
	RUN(test_choose);
	RUN(test_explain);
	CHECK_EXIT();
}
