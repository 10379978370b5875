#ifndef TAGPROF_UTF8_H
#define TAGPROF_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Copies n bytes of untrusted text into out (NUL-terminated, at most
 * outlen bytes), replacing every invalid UTF-8 sequence, and NUL, with
 * U+FFFD. Never splits a character at the end. Returns the number of
 * replacements made. */
size_t utf8__sanitize(const uint8_t *in, size_t n, char *out, size_t outlen);

#endif
