/* Settings of `tagprof agent`: defaults, a config file, then flags. */
#ifndef TAGPROF_CONFIG_H
#define TAGPROF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct agent_config {
	char *output_dir;	/* default /var/lib/tagprof */
	uint64_t window_s;	/* seconds per pprof window, default 60 */
	uint64_t freq;		/* -F, default 19 */
	uint64_t count;		/* -c: a sample every count events instead
				 * of freq per second; 0: by freq */
	char *event;		/* -e, default "auto" */
	char *push_url;		/* Pyroscope-compatible server, or NULL */
	char *push_auth_file;	/* bearer token or user:password, or NULL */
	char *debuginfod_urls;	/* NULL: $DEBUGINFOD_URLS; "": none */
	uint64_t retain_files;	/* 0 = no limit; default 1440 */
	uint64_t retain_bytes;	/* 0 = no limit; default 1 GiB */
	uint64_t max_memory;	/* bytes; default 64 MiB */
	int verbose;
	int unwind;		/* enum tp_unwind_mode; default auto */
	uint32_t stack_bytes;	/* stack copied for CFI; default 8192 */
	bool timeline;		/* per-sample windows; default false */
	uint32_t ldlat;		/* -e mem-loads on PEBS: the load-latency
				 * threshold in cycles; 0: the default */
};

/* Fills c with the defaults. */
void config__defaults(struct agent_config *c);

/* Reads a config file: one "key = value" per line, '#' starts a comment,
 * blank lines ignored; keys are the long option names (output-dir, window,
 * freq, event, push-url, push-auth-file, retain-files, retain-bytes,
 * max-memory, verbose, unwind, stack-bytes, debuginfod-urls, timeline,
 * ldlat, count).
 * Sizes take K, M, G (powers
 * of 1024), durations s,
 * m, h. Settings it names replace those in c. Returns 0, or -EINVAL with
 * "FILE:LINE: what is wrong" in err for the first bad line (c is then
 * unchanged), or -errno when the file cannot be read. */
int config__load(struct agent_config *c, const char *path, char *err,
		 size_t errlen);

/* Sets one setting by its key, as a flag or config line would. Returns 0
 * or -EINVAL with a message in err. */
int config__set(struct agent_config *c, const char *key, const char *value,
		char *err, size_t errlen);

/* Copies src into dst (strings duplicated). 0 or -ENOMEM. */
int config__copy(struct agent_config *dst, const struct agent_config *src);

void config__free(struct agent_config *c);	/* frees strings; accepts NULL */

/* "64M" -> 67108864; false if not a size. */
bool config__parse_size(const char *s, uint64_t *out);
/* "90", "90s", "5m", "1h" -> seconds; false if not a duration. */
bool config__parse_duration(const char *s, uint64_t *out);

#endif
