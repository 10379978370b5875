/* Event selection: `-e` specs to perf_event_attr. */
#ifndef TAGPROF_EVENTS_H
#define TAGPROF_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct tp_event {
	struct perf_event_attr attr;  /* type, config*, precise_ip set */
	char name[128];        /* as the user wrote it, e.g. "cycles:pp" */
	char sample_type[128]; /* pprof value type: "cpu" or the event name
				  without modifiers, e.g. "cycles" */
	char sample_unit[32];  /* "nanoseconds" for cpu-clock, else "count" */
	bool software_clock;   /* cpu-clock: period is in nanoseconds */
	bool hardware;         /* needs a hardware PMU */
	/* Memory-access events: each sample carries the data address
	 * (ctx->addr); mem-loads and mem-stores also the data source and,
	 * for loads, the latency (memevents.h). */
	bool memory;
	bool mem_hw;           /* PEBS or IBS: data source and weight */
	uint32_t ldlat;        /* mem-loads on PEBS: the latency threshold
				  in cycles, 0 when none applies */
	uint32_t mem_op;       /* IBS, which tags any op: keep the samples
				  whose data source is this PERF_MEM_OP_*
				  (LOAD or STORE); 0: keep all */
};

/* Parses spec: cpu-clock, cycles, instructions, ref-cycles, the page-fault
 * events (page-faults or faults, minor-faults, major-faults), mem-loads and
 * mem-stores (memevents.h), or a libpfm4
 * event name (INST_RETIRED.PREC_DIST, MEM_INST_RETIRED.ALL_LOADS, or
 * PMU::EVENT:UMASK), each optionally followed by :p, :pp or :ppp which set
 * precise_ip to 1..3. "auto" is not handled here (see events__auto).
 * Returns 0, or -EINVAL with a message in err that lists the valid forms. */
int events__parse(const char *spec, struct tp_event *ev, char *err,
		  size_t errlen);

/* Opens attr (with a sample period) on one CPU system-wide and closes it,
 * to learn whether this machine can sample it. Returns 0 or -errno. */
int events__probe(const struct perf_event_attr *attr);

/* "auto": the most precise cycles event this machine can sample
 * (cycles:ppp, :pp, :p), else cpu-clock. Never fails. */
void events__auto(struct tp_event *ev);

/* The event for a -e spec or a config's event setting, as record and the
 * agent take it: "auto" is events__auto; any other spec is parsed and
 * probed, so a name this machine cannot sample fails here, before
 * anything starts. Returns 0, or -errno with a one-line reason in err
 * (events__parse's, or events__explain's for a failed probe). */
int events__choose(const char *spec, struct tp_event *ev, char *err,
		   size_t errlen);

/* A clear, one-line reason why attr cannot be sampled here, naming the
 * fallback; for errors from events__probe/perf_event_open. */
void events__explain(const struct tp_event *ev, int err, char *buf,
		     size_t len);

#endif
