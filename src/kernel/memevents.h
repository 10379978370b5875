/* The memory-access events -e mem-loads and -e mem-stores, encoded for the
 * PMU this machine has: Intel PEBS (the core PMU's mem-loads and mem-stores
 * events, load latency above a threshold) or AMD IBS (op sampling, whose
 * samples the BPF program keeps when they are loads, or stores). Each
 * sample asks the kernel for its data address, data source and weight.
 * The software page-fault events (events.c) carry an address everywhere. */
#ifndef TAGPROF_MEMEVENTS_H
#define TAGPROF_MEMEVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/events.h"

/* perf mem's default load-latency threshold, in cycles. */
#define MEMEVENTS_LDLAT_DEFAULT	30
/* The largest threshold the PEBS load-latency facility takes (16 bits). */
#define MEMEVENTS_LDLAT_MAX	65535

/* Whether name (without modifiers) is mem-loads or mem-stores. */
bool memevents__is_mem(const char *name);

/* Encodes mem-loads (with ldlat cycles; 0: the default) or mem-stores into
 * ev, whose name is set. Returns 0, or -ENODEV with a message naming what
 * to use instead when the machine has neither PEBS nor IBS, -EOPNOTSUPP
 * when its PMU needs what tagprof does not do (an auxiliary group
 * leader), -EINVAL for a PMU description it cannot read. */
int memevents__encode(const char *name, uint32_t ldlat, struct tp_event *ev,
		      char *err, size_t errlen);

/* --ldlat CYCLES on a chosen event: 0, or -EINVAL when ev is not a PEBS
 * mem-loads or cycles is out of range (message in err). */
int memevents__set_ldlat(struct tp_event *ev, uint32_t cycles, char *err,
			 size_t errlen);

/* Where the PMUs are described (default /sys/bus/event_source/devices):
 * for tests, which build a PMU's description in a directory. */
void memevents__set_sysfs(const char *dir);

#endif
