/* A growing text buffer for the files `tagprof report` writes (JSON,
 * HTML). Appends never fail one by one: the first failure is kept in err
 * and later appends do nothing, so a writer checks once at the end. */
#ifndef TAGPROF_STRBUF_H
#define TAGPROF_STRBUF_H

#include <stddef.h>

struct strbuf {
	char *p;		/* NUL-terminated while len > 0 */
	size_t len, cap;
	int err;		/* 0, or the first -ENOMEM / -E2BIG */
};

void strbuf__add(struct strbuf *b, const char *s, size_t n);
void strbuf__puts(struct strbuf *b, const char *s);
__attribute__((format(printf, 2, 3)))
void strbuf__printf(struct strbuf *b, const char *fmt, ...);
/* s as a JSON string, quotes included: control characters escaped, and
 * bytes that are not UTF-8 replaced (a file name or label from a target
 * process is any bytes). */
void strbuf__json_str(struct strbuf *b, const char *s);
/* s escaped for HTML text and attribute values (& < > " '), bytes that are
 * not UTF-8 replaced. */
void strbuf__html(struct strbuf *b, const char *s);
/* A number for JSON: no exponent trouble, NaN and infinities as 0. */
void strbuf__json_num(struct strbuf *b, double v);
void strbuf__free(struct strbuf *b);

#endif
