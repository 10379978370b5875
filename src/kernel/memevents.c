// SPDX-License-Identifier: BSD-2-Clause
/* mem-loads and mem-stores to perf_event_attr, from the kernel's own
 * description of the PMU: /sys/bus/event_source/devices/PMU/type gives the
 * attr type, PMU/events/NAME the terms ("event=0xcd,umask=0x1,ldlat=3")
 * and PMU/format/TERM where each term's bits go ("config1:0-15"). That is
 * the sysfs ABI (Documentation/ABI/testing/sysfs-bus-event_source-devices-
 * format and -events), the one perf reads too. */
#include "kernel/memevents.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/errbuf.h"

#define SYSFS_PMUS	"/sys/bus/event_source/devices"
/* Longest sysfs value read: event terms and formats are short. */
#define SYSFS_VALUE_MAX	256
#define TERMS_MAX	16

static const char *sysfs_root = SYSFS_PMUS;

void memevents__set_sysfs(const char *dir)
{
	sysfs_root = dir ? dir : SYSFS_PMUS;
}

bool memevents__is_mem(const char *name)
{
	return !strcmp(name, "mem-loads") || !strcmp(name, "mem-stores");
}

/* The first line of ROOT/pmu/rel into buf; false if it cannot be read. */
static bool read_value(const char *pmu, const char *rel, char *buf,
		       size_t len)
{
	char path[512];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", sysfs_root, pmu, rel);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return n > 0;
}

static bool has_pmu(const char *pmu)
{
	char buf[32];

	return read_value(pmu, "type", buf, sizeof(buf));
}

/* The attr word a format names: config, config1 or config2. */
static __u64 *config_word(struct perf_event_attr *a, const char *name,
			  size_t len)
{
	if (len == 6 && !strncmp(name, "config", 6))
		return &a->config;
	if (len == 7 && !strncmp(name, "config1", 7))
		return &a->config1;
	if (len == 7 && !strncmp(name, "config2", 7))
		return &a->config2;
	return NULL;
}

/* Puts value into the bits a format gives ("config:0-7,21"), lowest bits
 * of the value into the first range, as the ABI says. false for a format
 * it cannot read or a value that does not fit. */
static bool place_bits(struct perf_event_attr *a, const char *fmt,
		       uint64_t value)
{
	const char *colon = strchr(fmt, ':'), *p;
	unsigned lo, hi, used = 0;
	__u64 *w;
	char *end;

	if (!colon || !(w = config_word(a, fmt, colon - fmt)))
		return false;
	for (p = colon + 1; *p; p = *end == ',' ? end + 1 : end) {
		lo = strtoul(p, &end, 10);
		if (end == p)
			return false;
		hi = lo;
		if (*end == '-')
			hi = strtoul(end + 1, &end, 10);
		if (hi < lo || hi > 63 || (*end && *end != ','))
			return false;
		for (unsigned b = lo; b <= hi; b++, used++) {
			if (used < 64 && (value >> used) & 1)
				*w |= 1ull << b;
			else
				*w &= ~(1ull << b);
		}
	}
	return used >= 64 || value >> used == 0;
}

/* Applies one "term=value" (or a bare "term", which is 1) of an event's
 * description; a term ldlat takes *ldlat instead when it is set. */
static bool apply_term(const char *pmu, struct perf_event_attr *a, char *term,
		       uint32_t ldlat)
{
	char rel[128], fmt[SYSFS_VALUE_MAX];
	char *eq = strchr(term, '='), *end;
	uint64_t v = 1;

	if (eq) {
		*eq = '\0';
		v = strtoull(eq + 1, &end, 0);
		if (end == eq + 1 || *end)
			return false;
	}
	if (!strcmp(term, "ldlat") && ldlat)
		v = ldlat;
	snprintf(rel, sizeof(rel), "format/%s", term);
	return read_value(pmu, rel, fmt, sizeof(fmt)) && place_bits(a, fmt, v);
}

/* ev's attr from PMU's event name; false for a description it cannot
 * read (missing, or a term without a format). */
static bool encode_sysfs(const char *pmu, const char *name, uint32_t ldlat,
			 struct perf_event_attr *a)
{
	char rel[128], terms[SYSFS_VALUE_MAX], type[32], *save, *t, *end;
	unsigned long ty;
	int n = 0;

	snprintf(rel, sizeof(rel), "events/%s", name);
	if (!read_value(pmu, "type", type, sizeof(type)) ||
	    !read_value(pmu, rel, terms, sizeof(terms)))
		return false;
	ty = strtoul(type, &end, 10);
	if (end == type || *end)
		return false;
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = (__u32)ty;
	for (t = strtok_r(terms, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (++n > TERMS_MAX || !apply_term(pmu, a, t, ldlat))
			return false;
	return n > 0;
}

/* Intel: the core PMU ("cpu", or "cpu_core" on a hybrid part) describes
 * mem-loads and mem-stores. NULL when neither has name. */
static const char *pebs_pmu(const char *name)
{
	static const char *const pmus[] = { "cpu", "cpu_core" };
	char rel[128], buf[SYSFS_VALUE_MAX];

	snprintf(rel, sizeof(rel), "events/%s", name);
	for (size_t i = 0; i < sizeof(pmus) / sizeof(pmus[0]); i++)
		if (read_value(pmus[i], rel, buf, sizeof(buf)))
			return pmus[i];
	return NULL;
}

static void fill_common(struct tp_event *ev, const char *name)
{
	/* The kernel fills these from the PEBS or IBS record only when
	 * asked; the BPF program reads them behind its context. */
	ev->attr.sample_type |= PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC |
				PERF_SAMPLE_WEIGHT_STRUCT;
	ev->hardware = true;
	ev->memory = true;
	ev->mem_hw = true;
	snprintf(ev->sample_type, sizeof(ev->sample_type), "%s", name);
	snprintf(ev->sample_unit, sizeof(ev->sample_unit), "count");
}

static int encode_pebs(const char *pmu, const char *name, uint32_t ldlat,
		       struct tp_event *ev, char *err, size_t errlen)
{
	char rel[128], buf[SYSFS_VALUE_MAX];
	bool loads = !strcmp(name, "mem-loads");

	/* Sapphire Rapids and later sample loads only in a group led by
	 * mem-loads-aux, which perf opens; the sampler opens one event. */
	snprintf(rel, sizeof(rel), "events/%s-aux", name);
	if (read_value(pmu, rel, buf, sizeof(buf))) {
		errbuf__set(err, errlen,
			"-e %s: this CPU's PMU (%s) samples %s only in a group "
			"led by %s-aux, which tagprof does not open yet: use "
			"-e page-faults (or minor-faults, major-faults), whose "
			"samples carry the faulting address", name, pmu,
			name, name);
		return -EOPNOTSUPP;
	}
	if (!encode_sysfs(pmu, name, loads ? ldlat : 0, &ev->attr)) {
		errbuf__set(err, errlen,
			"-e %s: cannot read the %s PMU's description under "
			"%s/%s", name, pmu, sysfs_root, pmu);
		return -EINVAL;
	}
	/* Load latency and precise stores are PEBS facilities: precise. */
	ev->attr.precise_ip = 2;
	fill_common(ev, name);
	ev->ldlat = loads ? ldlat : 0;
	ev->mem_op = 0;
	return 0;
}

/* AMD: IBS op sampling tags one op in N; the BPF program keeps the
 * loads (or stores) by their data source. */
static int encode_ibs(const char *name, struct tp_event *ev, char *err,
		      size_t errlen)
{
	char type[32], *end;
	unsigned long ty;

	if (!read_value("ibs_op", "type", type, sizeof(type)) ||
	    (ty = strtoul(type, &end, 10), end == type || *end)) {
		errbuf__set(err, errlen, "-e %s: cannot read %s/ibs_op/type",
			    name, sysfs_root);
		return -EINVAL;
	}
	memset(&ev->attr, 0, sizeof(ev->attr));
	ev->attr.size = sizeof(ev->attr);
	ev->attr.type = (__u32)ty;
	fill_common(ev, name);
	ev->ldlat = 0;
	ev->mem_op = strcmp(name, "mem-loads") ? PERF_MEM_OP_STORE :
						 PERF_MEM_OP_LOAD;
	return 0;
}

int memevents__encode(const char *name, uint32_t ldlat, struct tp_event *ev,
		      char *err, size_t errlen)
{
	const char *pmu = pebs_pmu(name);

	if (!ldlat)
		ldlat = MEMEVENTS_LDLAT_DEFAULT;
	if (pmu)
		return encode_pebs(pmu, name, ldlat, ev, err, errlen);
	if (has_pmu("ibs_op"))
		return encode_ibs(name, ev, err, errlen);
	errbuf__set(err, errlen,
		"-e %s needs Intel PEBS (a core PMU that describes %s under "
		"%s/cpu/events) or AMD IBS (the ibs_op PMU), and this machine "
		"has neither: use -e page-faults (or minor-faults, "
		"major-faults), whose samples carry the faulting address on "
		"any machine", name, name, sysfs_root);
	return -ENODEV;
}

int memevents__set_ldlat(struct tp_event *ev, uint32_t cycles, char *err,
			 size_t errlen)
{
	if (!ev->ldlat) {
		errbuf__set(err, errlen,
			"--ldlat applies to -e mem-loads on Intel PEBS only "
			"(the event is %s)", ev->name);
		return -EINVAL;
	}
	if (!cycles || cycles > MEMEVENTS_LDLAT_MAX) {
		errbuf__set(err, errlen,
			"--ldlat %u: the threshold is 1 to %u cycles", cycles,
			MEMEVENTS_LDLAT_MAX);
		return -EINVAL;
	}
	return memevents__encode("mem-loads", cycles, ev, err, errlen);
}
