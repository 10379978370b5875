#ifndef TAGPROF_CAPS_H
#define TAGPROF_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when this process may load BPF programs and open system-wide perf
 * events (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN). Otherwise writes a
 * one-line explanation into why. */
bool caps__can_profile(char *why, size_t len);

/* A capability kept only if the work after start-up fails without it:
 * works() runs with cap out of the effective set, then, if it failed,
 * with it back; cap is kept only when that second run works. */
struct caps_probe {
	int cap;
	bool (*works)(void *ctx);
	void *ctx;
};

/* What tagprof keeps for the whole run, after start-up (README,
 * "Privileges"): reading other processes' memory and maps, opening the
 * files they map, and /proc/PID/map_files. */
uint64_t caps__run_set(void);

/* After start-up (BPF loaded and attached, perf events open): keeps
 * caps__run_set() plus each probe's capability the probe needs, of those
 * held; drops the rest from every set of this thread (threads started
 * later inherit that), sets no_new_privs, and logs the kept set with
 * `log`. 0, or -1 with a one-line reason in why. */
int caps__drop(const struct caps_probe *probes, size_t n,
	       void (*log)(const char *line), char *why, size_t len);

#endif
