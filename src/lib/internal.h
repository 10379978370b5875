/* Internals of libtagprof shared by its files. All hidden (the library is
 * built with -fvisibility=hidden); only the names the public header needs
 * are exported. */
#ifndef TAGPROF_LIB_INTERNAL_H
#define TAGPROF_LIB_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tagprof/tagprof.h"

#define TAGPROF_MAX_KEYS	256	/* key_idx is a u8 */
#define TAGPROF_MAX_STR		255	/* len is a u8 */

/* ---- lock.c: the one library mutex, fork-safe ---- */

/* Guards the key map's writers and the process context. */
void tagprof__lock(void);
void tagprof__unlock(void);

/* ---- keymap.c: the process key map (index = key_idx) ---- */

/* The key's index, or -ENOENT. Lock-free: keys are appended and published
 * with a release store of the count, and never removed. */
int tagprof__key_lookup(const char *key, size_t len);

/* The key's index, registering it (and republishing the process context)
 * if new. A new key becomes visible to lookups only once the context that
 * names it is published. -ENOSPC when full, -ENOMEM. */
int tagprof__key_intern(const char *key, size_t len);

/* The key array and its visible count, for the encoder. Lock held (the
 * count only grows under the lock). */
const char *const *tagprof__keys(void);
unsigned int tagprof__nkeys_locked(void);

/* ---- procctx.c: the OTEP 4719 process context ---- */

/* Publishes the context unless it is already published by this process.
 * Cheap when it is (one atomic load). 0 or -errno. */
int tagprof__ctx_ensure(void);

/* (Re)publishes with the first nkeys keys of the key map. Lock held. */
int tagprof__ctx_publish_locked(unsigned int nkeys);

/* The fork child's half of the atfork handling: the mapping was not
 * inherited (MADV_DONTFORK), so the next ensure makes a new one. */
void tagprof__ctx_forked_child(void);

/* A value of the protobuf AnyValue kinds the context uses. */
enum tagprof__val_kind {
	TAGPROF__VAL_STRING,
	TAGPROF__VAL_BOOL,
	TAGPROF__VAL_INT,
	TAGPROF__VAL_STRINGS,		/* ArrayValue of string_values */
};

struct tagprof__attr {
	const char *key;
	enum tagprof__val_kind kind;
	union {
		const char *s;
		bool b;
		int64_t i;
		struct {
			const char *const *v;
			size_t n;
		} strs;
	};
};

/* The most payload a publish writes: profilers accept 64 KiB; a publish
 * that would pass this fails with -ENOSPC and leaves the old context. */
#define TAGPROF_CTX_PAYLOAD_MAX	(60 * 1024)

/* The hook for more process attributes (tagprof.* keys): adds or replaces
 * an extra_attributes entry (copied) and republishes. 0 or -errno. */
int tagprof__ctx_set_attr(const struct tagprof__attr *a);

/* The same for n (1..8) entries with distinct keys, published at once:
 * readers see all of them or none. Lock held. On error nothing changed. */
int tagprof__ctx_set_attrs_locked(const struct tagprof__attr *a, size_t n);

/* Appends a copy of s to the TAGPROF__VAL_STRINGS entry key and
 * republishes. Lock held. -ENOENT (no such entry, or not STRINGS),
 * -ENOSPC, -ENOMEM; on error nothing changed. */
int tagprof__ctx_append_str_locked(const char *key, const char *s);

/* The registry's entry for key, or NULL. Lock held; valid until the next
 * change to the registry. */
const struct tagprof__attr *tagprof__ctx_attr_locked(const char *key);

/* ---- tags.c: register tags (tagprof_tags_declare, tagprof_tag_name) ---- */

#define TAGPROF_TAG_ATTR_REGISTER	"tagprof.tag.register"
#define TAGPROF_TAG_ATTR_FIELDS		"tagprof.tag.fields"
#define TAGPROF_TAG_ATTR_NAMES		"tagprof.tag.names"

/* Protobuf strings must be UTF-8: one bad name would make strict readers
 * drop the whole context. Rejects overlong forms, surrogates, > U+10FFFF. */
bool tagprof__utf8_valid(const unsigned char *s, size_t len);

/* ---- slotindex.c: an index of slots over a caller's array ---- */

struct tagprof__index {
	uint32_t *slot;		/* entry index + 1; 0: empty */
	size_t cap;		/* a power of two, or 0 */
	size_t n;
};

typedef uint64_t (*tagprof__index_hash)(size_t i);	/* of entry i */
typedef bool (*tagprof__index_eq)(size_t i, const void *key);

/* The slot holding key (hash h), or the empty slot where it would go.
 * cap must not be 0. */
size_t tagprof__index_probe(const struct tagprof__index *x, uint64_t h,
			    const void *key, tagprof__index_eq eq);
/* Room for one more entry; false on ENOMEM. */
bool tagprof__index_reserve(struct tagprof__index *x, tagprof__index_hash hash_of);
bool tagprof__index_rehash(struct tagprof__index *x, size_t cap,
			   tagprof__index_hash hash_of);
/* Puts entry i in the empty slot j that a probe gave. */
void tagprof__index_put(struct tagprof__index *x, size_t j, size_t i);
/* Empties slot j, moving later entries of its run back. */
void tagprof__index_delete(struct tagprof__index *x, size_t j,
			   tagprof__index_hash hash_of);

/* ---- pbenc.c: hand-written protobuf encoding of ProcessContext ---- */

/* Encodes ProcessContext{resource{res}, extra_attributes = extra} into a
 * malloc'ed buffer. 0 or -ENOMEM. */
int tagprof__pb_encode_ctx(const struct tagprof__attr *res, size_t nres,
			   const struct tagprof__attr *extra, size_t nextra,
			   uint8_t **out, size_t *out_len);

#endif
