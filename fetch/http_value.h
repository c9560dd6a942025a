/*
 * http_value.h: header values read without libcurl, for http.c.
 */
#ifndef FETCH_HTTP_VALUE_H
#define FETCH_HTTP_VALUE_H

#include <stddef.h>

/* 1 when s holds no CR or LF. */
int http_no_newline(const char *s);

/* Trimmed copy of a header value; malloced. */
char *http_value_dup(const char *v, size_t len);

/* The URL of the rel="next" entry of a Link value, malloced, or NULL. */
char *http_link_next(const char *v, size_t len);

/* A strong ETag (If-Range takes no weak one) of sane length, copied;
 * NULL if none. */
char *http_strong_etag(const char *etag);

#endif
