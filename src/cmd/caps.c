// SPDX-License-Identifier: BSD-2-Clause
/* Capability check, so a missing privilege gets a clear message up front
 * instead of an EPERM from deep inside libbpf. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>

#include "cmd/caps.h"
#include "util/privs.h"

#define CAP_SYS_ADMIN_BIT CAP_SYS_ADMIN
#define CAP_PERFMON_BIT CAP_PERFMON
#define CAP_BPF_BIT CAP_BPF

static bool effective_caps(uint64_t *caps)
{
	char line[256];
	bool found = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %" SCNx64, caps) == 1) {
			found = true;
			break;
		}
	fclose(f);
	return found;
}

bool caps__can_profile(char *why, size_t len)
{
	uint64_t caps = 0;
	bool bpf, perfmon;

	if (!effective_caps(&caps))
		return true;	/* cannot tell: let the kernel decide */
	if (caps & (1ull << CAP_SYS_ADMIN_BIT))
		return true;
	bpf = caps & (1ull << CAP_BPF_BIT);
	perfmon = caps & (1ull << CAP_PERFMON_BIT);
	if (bpf && perfmon)
		return true;
	snprintf(why, len,
		 "missing %s%s%s: run tagprof as root, or grant CAP_BPF and "
		 "CAP_PERFMON (e.g. setcap cap_bpf,cap_perfmon+ep tagprof)",
		 bpf ? "" : "CAP_BPF", !bpf && !perfmon ? " and " : "",
		 perfmon ? "" : "CAP_PERFMON");
	return false;
}

uint64_t caps__run_set(void)
{
	return PRIV(CAP_SYS_PTRACE) | PRIV(CAP_DAC_READ_SEARCH) |
	       PRIV(CAP_CHECKPOINT_RESTORE);
}

int caps__drop(const struct caps_probe *probes, size_t n,
	       void (*log)(const char *line), char *why, size_t len)
{
	uint64_t keep = caps__run_set();
	char names[256], line[400], err[128];
	struct privs p;
	int ret;

	if (privs__get(&p)) {
		snprintf(why, len, "cannot read capabilities: %s",
			 strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int cap = probes[i].cap;

		if (!(p.eff & PRIV(cap)) || privs__lower(cap))
			continue;
		if (probes[i].works(probes[i].ctx))
			continue;	/* stays out */
		if (!privs__raise(cap) && probes[i].works(probes[i].ctx))
			keep |= PRIV(cap);
	}
	ret = privs__drop_to(keep, err, sizeof(err));
	if (ret) {
		snprintf(why, len, "cannot drop capabilities: %s", err);
		return -1;
	}
	if (privs__get(&p) || (p.prm & ~keep) || p.inh) {
		snprintf(why, len, "capabilities still held after the drop");
		return -1;
	}
	snprintf(line, sizeof(line), "capabilities kept after start-up: %s",
		 privs__names(p.prm, names, sizeof(names)));
	if (log)
		log(line);
	if (caps__run_set() & ~p.prm) {
		/* Started with CAP_BPF and CAP_PERFMON only (setcap): it
		 * samples, but names only what it may read. */
		snprintf(line, sizeof(line), "warning: without %s, processes "
			 "of other users or with more capabilities go unnamed",
			 privs__names(caps__run_set() & ~p.prm, names,
				      sizeof(names)));
		fprintf(stderr, "tagprof: %s\n", line);
	}
	return 0;
}
