// SPDX-License-Identifier: BSD-2-Clause
/* Capability sets through the raw system calls (linux/capability.h), so
 * the agent can drop what it no longer needs once it has started. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "util/privs.h"

/* Names of the capabilities the agent may hold or report; others print
 * as their number. */
static const char *const names[] = {
	[CAP_CHOWN] = "CAP_CHOWN", [CAP_DAC_OVERRIDE] = "CAP_DAC_OVERRIDE",
	[CAP_DAC_READ_SEARCH] = "CAP_DAC_READ_SEARCH",
	[CAP_FOWNER] = "CAP_FOWNER", [CAP_SETPCAP] = "CAP_SETPCAP",
	[CAP_SYS_PTRACE] = "CAP_SYS_PTRACE", [CAP_SYS_ADMIN] = "CAP_SYS_ADMIN",
	[CAP_SYSLOG] = "CAP_SYSLOG", [CAP_PERFMON] = "CAP_PERFMON",
	[CAP_BPF] = "CAP_BPF",
	[CAP_CHECKPOINT_RESTORE] = "CAP_CHECKPOINT_RESTORE",
};

int privs__get(struct privs *p)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = { 0 };

	if (syscall(SYS_capget, &h, d))
		return -errno;
	p->eff = d[0].effective | (uint64_t)d[1].effective << 32;
	p->prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	p->inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	return 0;
}

int privs__set(const struct privs *p)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {
		{ (uint32_t)p->eff, (uint32_t)p->prm, (uint32_t)p->inh },
		{ (uint32_t)(p->eff >> 32), (uint32_t)(p->prm >> 32),
		  (uint32_t)(p->inh >> 32) },
	};

	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

static int change_eff(int cap, bool on)
{
	struct privs p;
	int err = privs__get(&p);

	if (err)
		return err;
	if (on && !(p.prm & PRIV(cap)))
		return -EPERM;
	p.eff = on ? p.eff | PRIV(cap) : p.eff & ~PRIV(cap);
	return privs__set(&p);
}

int privs__lower(int cap)
{
	return change_eff(cap, false);
}

int privs__raise(int cap)
{
	return change_eff(cap, true);
}

int privs__drop_to(uint64_t keep, char *err, size_t len)
{
	struct privs p;
	int ret = privs__get(&p);

	if (ret) {
		snprintf(err, len, "capget: %s", strerror(-ret));
		return ret;
	}
	/* The bounding set first: dropping from it needs CAP_SETPCAP in the
	 * effective set, which the capset below takes away. Without it (a
	 * service given only the capabilities it needs) the bounding set is
	 * the service manager's to cut, and no_new_privs stops exec from
	 * gaining anything anyway. */
	if (p.eff & PRIV(CAP_SETPCAP)) {
		for (int cap = 0; cap <= CAP_LAST_CAP; cap++) {
			if (keep & PRIV(cap))
				continue;
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL) {
				ret = -errno;
				snprintf(err, len, "PR_CAPBSET_DROP %d: %s", cap,
					 strerror(errno));
				return ret;
			}
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) &&
	    errno != EINVAL) {
		ret = -errno;
		snprintf(err, len, "clearing ambient capabilities: %s",
			 strerror(errno));
		return ret;
	}
	p.prm &= keep;
	p.eff = p.prm;
	p.inh = 0;
	ret = privs__set(&p);
	if (ret) {
		snprintf(err, len, "capset: %s", strerror(-ret));
		return ret;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		ret = -errno;
		snprintf(err, len, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return ret;
	}
	return 0;
}

int privs__drop_thread(void)
{
	struct privs p = { 0 };

	return privs__set(&p);
}

const char *privs__names(uint64_t mask, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int cap = 0; cap < 64 && at < len; cap++) {
		if (!(mask & PRIV(cap)))
			continue;
		if (cap < (int)(sizeof(names) / sizeof(names[0])) && names[cap])
			at += snprintf(buf + at, len - at, "%s%s", at ? " " : "",
				       names[cap]);
		else
			at += snprintf(buf + at, len - at, "%scap_%d",
				       at ? " " : "", cap);
	}
	if (!buf[0])
		snprintf(buf, len, "none");
	return buf;
}
