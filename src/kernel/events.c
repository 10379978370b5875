/* Event selection: `-e` specs to perf_event_attr.
 *
 * A handful of names (cpu-clock and the generic hardware counters) are
 * encoded here directly so they work even where libpfm4 does not know the
 * CPU; everything else is handed to libpfm4, which knows the PMU tables. */
#include "util/dynlib.h"
#include "util/errbuf.h"
#include "kernel/events.h"
#include "kernel/memevents.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <perfmon/pfmlib_perf_event.h>

/* Longest spec accepted: leaves room in tp_event.name[128]. */
#define EVENTS_MAX_SPEC 120

/* Period used only to ask the kernel whether sampling is possible. */
#define EVENTS_PROBE_PERIOD 1000000

#define EVENTS_VALID_FORMS                                                   \
	"valid forms are cpu-clock, cycles, instructions, ref-cycles, "       \
	"page-faults, minor-faults, major-faults, mem-loads, mem-stores, or a " \
	"PMU event name known to libpfm4 for this CPU (e.g. "                \
	"INST_RETIRED.PREC_DIST, MEM_INST_RETIRED.ALL_LOADS, "               \
	"PMU::EVENT:UMASK; list them with libpfm4's 'showevtinfo'), each "   \
	"optionally with :p, :pp or :ppp (or -e auto)"

struct builtin_event {
	const char *name;
	const char *sample_type;
	__u32 type;
	__u64 config;
};

/* Names encoded without libpfm4. cpu-clock must stay first: it is the
 * fallback of events__auto. */
static const struct builtin_event builtins[] = {
	{ "cpu-clock", "cpu", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", "cycles", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", "instructions", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_INSTRUCTIONS },
	{ "ref-cycles", "ref-cycles", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_REF_CPU_CYCLES },
	/* Software events that pass the faulting address with each sample:
	 * memory-access profiles on any machine. */
	{ "page-faults", "page-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", "page-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", "minor-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", "major-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_PAGE_FAULTS_MAJ },
};

static const struct builtin_event *find_builtin(const char *name)
{
	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (!strcmp(builtins[i].name, name))
			return &builtins[i];
	return NULL;
}

/* Copies src into a fixed-size field; callers have checked the length. */
static void copy_str(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src);
}

/* Returns the precise level (1..3) when comp is p, pp or ppp, 0 when it
 * is not a run of 'p's at all, and -1 for a run of four or more. */
static int precise_level(const char *comp)
{
	size_t n = strspn(comp, "p");

	if (n == 0 || comp[n] != '\0')
		return 0;
	return n <= 3 ? (int)n : -1;
}

/* The kernel-facing fields the sampler does not set itself; anything else
 * libpfm4 fills in (period, sample_type, disabled, ...) is dropped so the
 * sampler starts from a clean attr. */
static void keep_encoding(struct perf_event_attr *dst,
			  const struct perf_event_attr *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->size = sizeof(*dst);
	dst->type = src->type;
	dst->config = src->config;
	dst->config1 = src->config1;
	dst->config2 = src->config2;
	dst->precise_ip = src->precise_ip;
	/* Privilege filters come from user modifiers such as :u or :k. */
	dst->exclude_user = src->exclude_user;
	dst->exclude_kernel = src->exclude_kernel;
	dst->exclude_hv = src->exclude_hv;
	dst->exclude_host = src->exclude_host;
	dst->exclude_guest = src->exclude_guest;
}

static int pfm_init_rc = PFM_ERR_NOINIT;
static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;

/* libpfm4, loaded on first use (dynlib.h). */
static struct {
	typeof(pfm_initialize) *initialize;
	typeof(pfm_get_os_event_encoding) *get_os_event_encoding;
	typeof(pfm_get_pmu_info) *get_pmu_info;
	typeof(pfm_strerror) *strerror;
} pfm;
static char pfm_load_err[256];

static void pfm_init_once(void)
{
	const struct dynlib_sym syms[] = {
		{ "pfm_initialize", &pfm.initialize },
		{ "pfm_get_os_event_encoding", &pfm.get_os_event_encoding },
		{ "pfm_get_pmu_info", &pfm.get_pmu_info },
		{ "pfm_strerror", &pfm.strerror },
	};

	if (dynlib__open("libpfm.so.4", syms, sizeof(syms) / sizeof(syms[0]),
			 pfm_load_err, sizeof(pfm_load_err)))
		return;		/* pfm_init_rc stays PFM_ERR_NOINIT */
	pfm_init_rc = pfm.initialize();
}

/* A PFM_* code as text; "not initialized" says why when loading failed. */
static const char *pfm_error(int rc)
{
	if (rc == PFM_ERR_NOINIT && pfm_load_err[0])
		return pfm_load_err;
	return pfm.strerror ? pfm.strerror(rc) : "libpfm4 not loaded";
}

/* Initialises libpfm4 once per process; returns a PFM_* code. */
static int pfm_ready(void)
{
	pthread_once(&pfm_once, pfm_init_once);
	return pfm_init_rc;
}

static int pfm_encode(const char *name, struct perf_event_attr *attr)
{
	pfm_perf_encode_arg_t arg;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	memset(&arg, 0, sizeof(arg));
	arg.attr = attr;
	arg.size = sizeof(arg);
	return pfm.get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3,
					 PFM_OS_PERF_EVENT_EXT, &arg);
}

/* Of two libpfm4 failures, the one that says more than "not found". */
static int pfm_better_error(int a, int b)
{
	return a == PFM_ERR_NOTFOUND ? b : a;
}

/* Encodes name with libpfm4. Intel documents events as EVENT.UMASK while
 * libpfm4 spells them EVENT:UMASK, so a failed dotted name is retried with
 * the first '.' and then every '.' turned into ':'. Returns a PFM_* code. */
static int pfm_lookup(const char *name, struct perf_event_attr *attr)
{
	char alt[EVENTS_MAX_SPEC + 1];
	char *dot;
	int rc, rc2;

	rc = pfm_ready();
	if (rc != PFM_SUCCESS)
		return rc;
	rc = pfm_encode(name, attr);
	if (rc == PFM_SUCCESS || !strchr(name, '.'))
		return rc;

	copy_str(alt, sizeof(alt), name);
	dot = strchr(alt, '.');
	*dot = ':';
	rc2 = pfm_encode(alt, attr);
	if (rc2 == PFM_SUCCESS)
		return rc2;
	rc = pfm_better_error(rc2, rc);

	if (!strchr(dot, '.'))
		return rc;
	while ((dot = strchr(dot, '.')))
		*dot = ':';
	rc2 = pfm_encode(alt, attr);
	return rc2 == PFM_SUCCESS ? rc2 : pfm_better_error(rc, rc2);
}

static void fill_builtin(struct tp_event *ev, const struct builtin_event *b,
			 int precise)
{
	ev->attr.size = sizeof(ev->attr);
	ev->attr.type = b->type;
	ev->attr.config = b->config;
	ev->attr.precise_ip = (__u64)precise;
	ev->software_clock = b->type == PERF_TYPE_SOFTWARE &&
			     b->config == PERF_COUNT_SW_CPU_CLOCK;
	ev->hardware = b->type != PERF_TYPE_SOFTWARE;
	ev->memory = b->type == PERF_TYPE_SOFTWARE && !ev->software_clock;
	if (ev->memory)
		ev->attr.sample_type |= PERF_SAMPLE_ADDR;
	copy_str(ev->sample_type, sizeof(ev->sample_type), b->sample_type);
	copy_str(ev->sample_unit, sizeof(ev->sample_unit),
		 ev->software_clock ? "nanoseconds" : "count");
}

/* Fills ev from a libpfm4 encoding of base. Software clocks that libpfm4
 * also knows (perf::cpu-clock:u) keep nanosecond semantics. */
static void fill_pfm(struct tp_event *ev, const char *base,
		     const struct perf_event_attr *enc, int precise)
{
	bool clock = enc->type == PERF_TYPE_SOFTWARE &&
		     (enc->config == PERF_COUNT_SW_CPU_CLOCK ||
		      enc->config == PERF_COUNT_SW_TASK_CLOCK);

	keep_encoding(&ev->attr, enc);
	/* libpfm4 resets precise_ip from its own modifiers; ours wins. */
	if (precise)
		ev->attr.precise_ip = (__u64)precise;
	ev->software_clock = clock;
	ev->hardware = enc->type != PERF_TYPE_SOFTWARE &&
		       enc->type != PERF_TYPE_TRACEPOINT;
	copy_str(ev->sample_type, sizeof(ev->sample_type),
		 clock && enc->config == PERF_COUNT_SW_CPU_CLOCK ? "cpu" : base);
	copy_str(ev->sample_unit, sizeof(ev->sample_unit),
		 clock ? "nanoseconds" : "count");
}

/* Whether libpfm4 knows a hardware PMU here; when it does not, (e.g. a
 * CPU newer than the installed libpfm4) only the generic names can work,
 * which the error message should say. */
static bool pfm_knows_core_pmu(void)
{
	pfm_pmu_info_t pi;
	pfm_pmu_t pmu;

	if (pfm_ready() != PFM_SUCCESS)
		return false;
	pfm_for_all_pmus(pmu) {
		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm.get_pmu_info(pmu, &pi) == PFM_SUCCESS &&
		    pi.is_present && pi.type == PFM_PMU_TYPE_CORE)
			return true;
	}
	return false;
}

/* pfm_rc is PFM_SUCCESS when libpfm4 was not consulted. */
static int unknown_event(const char *spec, int pfm_rc, char *err,
			 size_t errlen)
{
	if (pfm_rc == PFM_SUCCESS)
		errbuf__set(err, errlen,
			    "unknown event '%s': " EVENTS_VALID_FORMS, spec);
	else
		errbuf__set(err, errlen,
			"unknown event '%s' (libpfm4: %s%s): "
			EVENTS_VALID_FORMS, spec, pfm_error(pfm_rc),
			pfm_rc != PFM_ERR_NOTFOUND || pfm_knows_core_pmu() ?
				"" : "; it detects no hardware PMU on this CPU");
	return -EINVAL;
}

/* Rejects specs that cannot name any event before any lookup. */
static int check_spec(const char *spec, char *err, size_t errlen)
{
	size_t len;

	if (!spec || !*spec) {
		errbuf__set(err, errlen,
			    "empty event name: " EVENTS_VALID_FORMS);
		return -EINVAL;
	}
	len = strlen(spec);
	if (len > EVENTS_MAX_SPEC) {
		errbuf__set(err, errlen,
			"event name too long (%zu characters, at most %d): "
			EVENTS_VALID_FORMS, len, EVENTS_MAX_SPEC);
		return -EINVAL;
	}
	if (!strcmp(spec, "auto")) {
		errbuf__set(err, errlen,
			"'auto' is chosen at run time (events__auto), not "
			"parsed as an event name");
		return -EINVAL;
	}
	return 0;
}

/* Splits a trailing :p/:pp/:ppp off spec into base. Returns the precise
 * level (0 if none) or -EINVAL for a run of four or more 'p's. */
static int split_precise(const char *spec, char *base, size_t size,
			 char *err, size_t errlen)
{
	const char *colon = strrchr(spec, ':');
	int level;

	copy_str(base, size, spec);
	if (!colon)
		return 0;
	level = precise_level(colon + 1);
	if (level < 0) {
		errbuf__set(err, errlen,
			"bad modifier ':%s' in event '%s': the precise level "
			"is :p, :pp or :ppp", colon + 1, spec);
		return -EINVAL;
	}
	if (level > 0)
		base[colon - spec] = '\0';
	return level;
}

/* A builtin name followed by something other than :p* is handed to
 * libpfm4 (which understands :u, :k, ...); if that fails too the modifier
 * is what the user got wrong, so say that rather than "unknown event". */
static int bad_builtin_modifier(const char *spec, char *err, size_t errlen)
{
	char head[EVENTS_MAX_SPEC + 1];
	char *colon;

	copy_str(head, sizeof(head), spec);
	colon = strchr(head, ':');
	if (!colon || colon[1] == ':')
		return 0;
	*colon = '\0';
	if (!find_builtin(head))
		return 0;
	errbuf__set(err, errlen,
		"bad modifier ':%s' in event '%s': only :p, :pp or :ppp may "
		"follow %s", colon + 1, spec, head);
	return -EINVAL;
}

int events__parse(const char *spec, struct tp_event *ev, char *err,
		  size_t errlen)
{
	char base[EVENTS_MAX_SPEC + 1];
	const struct builtin_event *b;
	struct perf_event_attr enc;
	int precise, rc;

	if (err && errlen)
		err[0] = '\0';
	rc = check_spec(spec, err, errlen);
	if (rc)
		return rc;
	precise = split_precise(spec, base, sizeof(base), err, errlen);
	if (precise < 0)
		return precise;
	if (!*base)
		return unknown_event(spec, PFM_SUCCESS, err, errlen);

	memset(ev, 0, sizeof(*ev));
	copy_str(ev->name, sizeof(ev->name), spec);

	if (memevents__is_mem(base)) {
		if (precise)
			goto precise_on_memory;
		rc = memevents__encode(base, 0, ev, err, errlen);
		if (rc) {
			memset(ev, 0, sizeof(*ev));
			return rc;
		}
		copy_str(ev->name, sizeof(ev->name), spec);
		return 0;
	}
	b = find_builtin(base);
	if (b) {
		if (precise && b->type == PERF_TYPE_SOFTWARE)
			goto precise_on_software;
		fill_builtin(ev, b, precise);
		return 0;
	}

	rc = pfm_lookup(base, &enc);
	if (rc != PFM_SUCCESS) {
		memset(ev, 0, sizeof(*ev));
		if (bad_builtin_modifier(spec, err, errlen))
			return -EINVAL;
		return unknown_event(spec, rc, err, errlen);
	}
	fill_pfm(ev, base, &enc, precise);
	if (precise && !ev->hardware)
		goto precise_on_software;
	return 0;

precise_on_memory:
	memset(ev, 0, sizeof(*ev));
	errbuf__set(err, errlen,
		"event '%s': %s is precise already (PEBS or IBS); use it "
		"without :p", spec, base);
	return -EINVAL;

precise_on_software:
	memset(ev, 0, sizeof(*ev));
	errbuf__set(err, errlen,
		"event '%s': the precise modifiers :p, :pp and :ppp apply only "
		"to hardware events; use '%s' without them", spec, base);
	return -EINVAL;
}

int events__probe(const struct perf_event_attr *attr)
{
	struct perf_event_attr a = *attr;
	int fd;

	a.size = sizeof(a);
	a.freq = 0;
	a.sample_period = EVENTS_PROBE_PERIOD;
	a.disabled = 1;
	/* System-wide on CPU 0: the same kind of open the sampler does. */
	fd = (int)syscall(__NR_perf_event_open, &a, -1, 0, -1,
		     PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

void events__auto(struct tp_event *ev)
{
	/* Non-precise cycles is deliberately not tried: where only that
	 * works (e.g. some VMs), cpu-clock is the documented choice. */
	static const char *const precise_cycles[] = {
		"cycles:ppp", "cycles:pp", "cycles:p",
	};

	for (size_t i = 0; i < 3; i++) {
		if (events__parse(precise_cycles[i], ev, NULL, 0))
			continue;
		if (events__probe(&ev->attr) == 0)
			return;
	}
	memset(ev, 0, sizeof(*ev));
	copy_str(ev->name, sizeof(ev->name), builtins[0].name);
	fill_builtin(ev, &builtins[0], 0);
}

int events__choose(const char *spec, struct tp_event *ev, char *err,
		   size_t errlen)
{
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (spec && !strcmp(spec, "auto")) {
		events__auto(ev);
		return 0;
	}
	ret = events__parse(spec, ev, err, errlen);
	if (ret)
		return ret;
	ret = events__probe(&ev->attr);
	if (ret)
		events__explain(ev, ret, err, errlen);
	return ret;
}

/* Replaces line breaks (a user-written name could hold one). */
static void one_line(char *buf)
{
	for (; *buf; buf++)
		if (*buf == '\n' || *buf == '\r')
			*buf = ' ';
}

void events__explain(const struct tp_event *ev, int err, char *buf,
		     size_t len)
{
	const char *name = ev && ev->name[0] ? ev->name : "?";
	bool hw = ev && ev->hardware;
	bool precise = ev && ev->attr.precise_ip;

	if (!buf || !len)
		return;
	if (err < 0)
		err = -err;

	switch (err) {
	case EACCES:
	case EPERM:
		snprintf(buf, len,
			 "permission denied opening perf events: run as root "
			 "or grant CAP_PERFMON and CAP_BPF");
		break;
	case EMFILE:
	case ENFILE:
		snprintf(buf, len,
			 "too many open files opening event '%s' (one per "
			 "CPU): raise the limit with 'ulimit -n'", name);
		break;
	case EBUSY:
		snprintf(buf, len,
			 "event '%s': the hardware counters are busy (in use "
			 "by another tool or the NMI watchdog): use "
			 "-e cpu-clock", name);
		break;
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
	case EINVAL:
		if (ev && ev->mem_hw) {
			snprintf(buf, len,
				 "event '%s' cannot be sampled on this machine "
				 "(%s): use -e page-faults (or minor-faults, "
				 "major-faults), whose samples carry the "
				 "faulting address", name, strerror(err));
			break;
		}
		if (hw) {
			snprintf(buf, len,
				 "event '%s' cannot be sampled on this machine "
				 "(no hardware PMU, or it does not support "
				 "sampling%s): use -e cpu-clock, which -e auto "
				 "falls back to", name,
				 precise ? " or this precise level" : "");
			break;
		}
		__attribute__((fallthrough));
	default:
		snprintf(buf, len, "cannot open event '%s': %s", name,
			 strerror(err));
		break;
	}
	one_line(buf);
}
