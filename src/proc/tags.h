/* Register tags of one process: the declaration (which register, which bit
 * fields) and the dictionary of names, as published in its process context
 * (tagprof.tag.register, tagprof.tag.fields, tagprof.tag.names), and the
 * decoding of a sampled register value into pprof labels. */
#ifndef TAGPROF_TAGS_H
#define TAGPROF_TAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct procctx;
struct hashmap;

#define TAGS_MAX_FIELDS 8

struct tag_field {
	char name[64];
	unsigned shift, bits;
};

struct tags {
	unsigned reg;		/* enum tp_tag_reg; 0 = no declaration */
	struct tag_field fields[TAGS_MAX_FIELDS];
	size_t nfields;
	struct hashmap *names;	/* (field index, value) -> name */
};

/* The register index BPF understands for a register name on this
 * architecture ("r15", "x28"...), or 0 if it cannot read that one. */
unsigned tags__reg_index(const char *name);

/* (Re)reads the declaration and dictionary from ctx. A process without a
 * valid declaration ends with reg 0. Returns 0 or -ENOMEM. */
int tags__load(struct tags *t, const struct procctx *ctx);
void tags__clear(struct tags *t);

/* Field f's value in a tag. */
uint64_t tags__field_value(const struct tags *t, size_t f, uint64_t tag);

/* The dictionary name of a field value, or NULL. */
const char *tags__name(const struct tags *t, size_t f, uint64_t value);

/* Resolves --tag FIELD=NAME into mask/value for BPF: NAME is looked up in
 * the dictionary, else read as a decimal number. false when FIELD is not
 * declared or NAME is neither. */
bool tags__filter(const struct tags *t, const char *field, const char *name,
		  uint64_t *mask, uint64_t *value);

#endif
