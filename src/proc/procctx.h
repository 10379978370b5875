/* Reader of a process's OpenTelemetry process context (OTEP 4719): the
 * OTEL_CTX mapping, its Resource, and the thread-context key map. */
#ifndef TAGPROF_PROCCTX_H
#define TAGPROF_PROCCTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROCCTX_MAX_KEYS 256
#define PROCCTX_MAX_PAYLOAD 65536

struct procctx_attr {		/* one extra attribute, e.g. tagprof.tag.* */
	char *key;
	char *str;		/* string value, or NULL */
	int64_t num;		/* int value when str is NULL */
	char **list;		/* array of strings, or NULL */
	size_t nlist;
};

struct procctx {
	uint64_t header_addr;	/* where OTEL_CTX lives; 0 = not found yet */
	uint64_t published_at;	/* of the payload decoded below */
	uint64_t refused_at;	/* of the last payload refused, not re-read */
	char *service_name;
	char *schema_version;	/* threadlocal.schema_version */
	char **keys;		/* threadlocal.attribute_key_map, by key_idx */
	size_t nkeys;
	struct procctx_attr *attrs;	/* other extra attributes */
	size_t nattrs;
};

/* Reads (or refreshes) pid's process context into ctx, following the
 * 4719 reading protocol: header, payload, then published_at again.
 * Returns 0 (ctx updated), 1 (unchanged since the last read, or the same
 * payload as the last refused one), -ENOENT (no OTEL_CTX mapping), -EAGAIN
 * (kept changing while read), -EINVAL (bad header), a refusal of
 * procctx__decode, or -errno. A refused payload is returned as refused
 * once, then as unchanged until the process publishes another. On error
 * ctx keeps its previous content. */
int procctx__read(int pid, struct procctx *ctx);

/* The same protocol on the context header at addr, with the target's
 * memory read by read (0 or -errno, as procfs__read_mem): for a caller
 * that has the memory some other way, as the fuzzer does, whose bytes
 * change between reads. */
typedef int (*procctx_mem_fn)(void *arg, uint64_t addr, void *buf, size_t len);
int procctx__read_with(struct procctx *ctx, uint64_t addr, procctx_mem_fn read,
		       void *arg);

/* The address of m when it is one that can hold the context (its name and
 * size: the header is checked when read), else 0. For a caller that reads
 * the maps for more than this: it sets ctx->header_addr, and
 * procctx__read reads there without looking again. */
struct procfs_map;
uint64_t procctx__mapping(const struct procfs_map *m);

/* Decodes a payload in either published form, a ProcessContext or a bare
 * Resource (pbcheck__form tells which), into out (zeroed by the caller).
 * Returns 0; -ELOOP when the payload is refused unread (AnyValues nested
 * too deep, or too many fields: pbcheck.h); -EBADMSG when it is neither a
 * valid ProcessContext nor a valid Resource; or -ENOMEM. */
int procctx__decode(const uint8_t *buf, size_t len, struct procctx *out);

/* Frees what ctx holds and zeroes it. Accepts NULL. */
void procctx__clear(struct procctx *ctx);

/* The extra attribute named key, or NULL. */
const struct procctx_attr *procctx__attr(const struct procctx *ctx,
					 const char *key);

#endif
