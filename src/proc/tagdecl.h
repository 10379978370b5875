/* Register tags of one process: the declaration (which register, which bit
 * fields) and the dictionary of names, as published in its process context
 * (tagprof.tag.register, tagprof.tag.fields, tagprof.tag.names), and the
 * decoding of a sampled register value into pprof labels. */
#ifndef TAGPROF_TAGDECL_H
#define TAGPROF_TAGDECL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct procctx;
struct hashmap;

#define TAGDECL_MAX_FIELDS 8

struct tag_field {
	char name[64];
	unsigned shift, bits;
};

struct tagdecl {
	unsigned reg;		/* enum tp_tag_reg; 0 = no declaration */
	struct tag_field fields[TAGDECL_MAX_FIELDS];
	size_t nfields;
	struct hashmap *names;	/* (field index, value) -> name */
};

/* The register index BPF understands for a register name on this
 * architecture ("r15", "x28"...), or 0 if it cannot read that one. */
unsigned tagdecl__reg_index(const char *name);

/* (Re)reads the declaration and dictionary from ctx. A process without a
 * valid declaration ends with reg 0. Returns 0 or -ENOMEM. */
int tagdecl__load(struct tagdecl *t, const struct procctx *ctx);
void tagdecl__clear(struct tagdecl *t);

/* Field f's value in a tag. */
uint64_t tagdecl__field_value(const struct tagdecl *t, size_t f, uint64_t tag);

/* The dictionary name of a field value, or NULL. */
const char *tagdecl__name(const struct tagdecl *t, size_t f, uint64_t value);

/* Resolves --tag FIELD=NAME into mask/value for BPF: NAME is looked up in
 * the dictionary, else read as a decimal number. false when FIELD is not
 * declared or NAME is neither. */
bool tagdecl__filter(const struct tagdecl *t, const char *field, const char *name,
		  uint64_t *mask, uint64_t *value);

#endif
