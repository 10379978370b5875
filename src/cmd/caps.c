// SPDX-License-Identifier: BSD-2-Clause
/* Capability check, so a missing privilege gets a clear message up front
 * instead of an EPERM from deep inside libbpf. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd/caps.h"

#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39

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
