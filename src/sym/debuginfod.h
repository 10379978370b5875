/* Debug files from debuginfod servers, fetched in the background.
 *
 * A debuginfod server hands out a binary's debug file by its GNU build ID
 * (elfutils' debuginfod, and the servers every major distribution runs).
 * When no debug file is found on the host (debuginfo.h), the symbol cache
 * asks the servers named in DEBUGINFOD_URLS through libdebuginfod, which is
 * loaded with dlopen on first use. The library keeps its own cache
 * (DEBUGINFOD_CACHE_PATH) and honours its own settings (DEBUGINFOD_TIMEOUT,
 * DEBUGINFOD_MAXTIME, DEBUGINFOD_MAXSIZE, DEBUGINFOD_RETRY_LIMIT).
 *
 * One worker thread asks, one build ID at a time, so sampling and window
 * writes never wait on the network: the caller hands build IDs in and
 * takes results out, neither of which blocks. A server is not trusted:
 * each fetch is bounded in time and size, and a file is used only when it
 * is ELF with symbols or DWARF and carries the build ID asked for. Every
 * outcome is counted by the caller from the results. */
#ifndef TAGPROF_DEBUGINFOD_H
#define TAGPROF_DEBUGINFOD_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define DEBUGINFOD_SONAME	"libdebuginfod.so.1"
/* Bounds of one fetch, unless TAGPROF_DEBUGINFOD_MAXTIME (seconds) and
 * TAGPROF_DEBUGINFOD_MAX_MB say otherwise: whatever the library's own
 * settings, a fetch ends. */
#define DEBUGINFOD_MAXTIME_DEFAULT	60
#define DEBUGINFOD_MAX_MB_DEFAULT	1024
#define DEBUGINFOD_ID_MAX	128	/* hex digits of a build ID */
#define DEBUGINFOD_PENDING_MAX	256	/* build IDs waiting their turn */
#define DEBUGINFOD_ASKED_MAX	4096	/* build IDs asked in a run */

enum debuginfod_outcome {
	DEBUGINFOD_FETCHED,	/* checked: syms and path are set */
	DEBUGINFOD_NOT_FOUND,	/* no server has it */
	DEBUGINFOD_TIMED_OUT,	/* over the time bound, or the library's */
	DEBUGINFOD_REFUSED,	/* another build, too big, not a debug file */
	DEBUGINFOD_FAILED,	/* server unreachable, or another error */
	DEBUGINFOD_ABANDONED,	/* stopped at exit */
};

struct elfsym;

struct debuginfod_result {
	char build_id[DEBUGINFOD_ID_MAX + 1];
	enum debuginfod_outcome outcome;
	struct elfsym *syms;	/* the debug file's symbols, checked */
	char *path;		/* where it is, for its DWARF (malloc'd) */
};

struct debuginfod;

/* The URLs to ask: urls when it is not NULL (the flag or config key; ""
 * turns fetching off), else DEBUGINFOD_URLS. NULL when there are none. */
const char *debuginfod__urls(const char *urls);

/* Loads the library and starts the worker; urls as debuginfod__urls
 * returned. sym_max bounds a debug file's symbol tables (elfsym__open_fd).
 * NULL with the reason in err. */
struct debuginfod *debuginfod__new(const char *urls, uint64_t sym_max,
				   char *err, size_t errlen);

/* Asks for the debug file of build_id (lower-case hex). 0; -EEXIST when it
 * was asked before; -ENOSPC when too many are waiting or were asked. */
int debuginfod__request(struct debuginfod *d, const char *build_id);

/* Moves one finished fetch into r (the caller owns syms and path; see
 * debuginfod_result__free). false when none is finished. */
bool debuginfod__take(struct debuginfod *d, struct debuginfod_result *r);

void debuginfod_result__free(struct debuginfod_result *r);

/* Stops the worker, abandoning a fetch under way within about a second
 * (the library checks back that often), and frees everything. */
void debuginfod__free(struct debuginfod *d);	/* accepts NULL */

#endif
