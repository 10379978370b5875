/* JIT symbol maps: /tmp/perf-PID.map, the format perf reads. Each line is
 * "START SIZE name", START and SIZE in hex (an optional 0x), the name the
 * rest of the line (it may hold spaces). Runtimes (V8 --perf-basic-prof,
 * the JVM's perf-map-agent, LuaJIT, .NET, Wasm engines) append a line per
 * function they compile. The file belongs to the profiled process, so it
 * is read as untrusted input: sizes and line counts are bounded and lines
 * that do not parse are skipped and counted. */
#ifndef TAGPROF_PERFMAP_H
#define TAGPROF_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PERFMAP_FILE_MAX	(64u << 20)	/* bytes read of one map */
#define PERFMAP_ENTRIES_MAX	(1u << 20)	/* entries kept of one map */
#define PERFMAP_NAME_MAX	1024		/* bytes of a name; longer cut */

struct perfmap;

struct perfmap_stats {
	uint64_t lines;		/* lines looked at */
	uint64_t entries;	/* lines kept */
	uint64_t bad_lines;	/* lines that are not "START SIZE name" */
	bool truncated;		/* over PERFMAP_FILE_MAX or _ENTRIES_MAX, or
				 * parsed past the memory bound */
};

/* Parses len bytes of map text. Invalid UTF-8 in names is replaced with
 * U+FFFD. When an address is in more than one entry, the later line wins
 * (a runtime reusing freed code memory). NULL only on ENOMEM. */
struct perfmap *perfmap__parse(const char *buf, size_t len,
			       struct perfmap_stats *st);

/* Reads the map at path: a regular file, not a symbolic link, owned by
 * owner or root; at most PERFMAP_FILE_MAX bytes of it (the rest is left,
 * and st->truncated set). The map it makes holds at most max_bytes
 * (perfmap__bytes, less the struct): a file larger than max_bytes is
 * refused before any of it is read, and a smaller one that parses into
 * more (short lines) is cut there (st->truncated). Reading costs one
 * small buffer beyond the map. 0 with *out set, or -errno (-EPERM:
 * another owner; -ENOEXEC: not a regular file; -EFBIG: over max_bytes). */
int perfmap__read(const char *path, uid_t owner, size_t max_bytes,
		  struct perfmap **out, struct perfmap_stats *st);

/* The name of the entry holding addr (owned by m), its start in *start;
 * NULL when no entry holds it. */
const char *perfmap__lookup(const struct perfmap *m, uint64_t addr,
			    uint64_t *start);

size_t perfmap__count(const struct perfmap *m);
size_t perfmap__bytes(const struct perfmap *m);	/* memory it holds */
void perfmap__free(struct perfmap *m);		/* accepts NULL */

#endif
