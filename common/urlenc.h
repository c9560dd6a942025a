/*
 * urlenc.h: a name from outside (a release's tag or version, an engine's
 * name) made one part of a URL: percent-encoded, so that a '#', '?',
 * '/', '%', a space or a non-ASCII byte in it is data, never a fragment,
 * a query, another path segment or an escape of its own.
 */
#ifndef COMMON_URLENC_H
#define COMMON_URLENC_H

#include <stddef.h>

/* The bytes url_encode_into() writes for s, its NUL not counted. */
size_t url_encoded_len(const char *s);

/*
 * s written to out with every byte but RFC 3986's unreserved ones
 * (ALPHA, DIGIT, '-', '.', '_', '~') as %XX; out holds
 * url_encoded_len(s) + 1 bytes.  Returns the end of what it wrote, where
 * it put the NUL.
 */
char *url_encode_into(char *out, const char *s);

#endif
