/*
 * wire.h: what the three sides of a remote measurement share inside
 * bisectd/remote/: the file formats' names and limits, and the small
 * readers of their JSON (spool.c writes requests, node.c reads them and
 * writes results, ingest.c reads those).
 */
#ifndef BISECTD_REMOTE_WIRE_H
#define BISECTD_REMOTE_WIRE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "remote.h"

#define REQUEST_MAX ((size_t)1 << 20)
#define RESULT_FORMAT "bisectd-result"
#define REQUEST_FORMAT "bisectd-request"
#define TRAILER "sha256 "


static inline int
valid_id(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	if (n != REMOTE_ID_LEN)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (strchr("0123456789abcdef", id[i]) == NULL)
			return 0;
	return 1;
}

static inline json_t *
opt_str(const char *s)
{
	return s ? json_string(s) : json_null();
}

static inline const char *
jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* A copy of a string field, or NULL for none; aborts on no memory as the
 * config does, since a few bytes cannot be saved for. */
static inline char *
dup_or_null(const char *s)
{
	char *p;

	if (s == NULL)
		return NULL;
	if ((p = strdup(s)) == NULL)
		abort();
	return p;
}

/* A string of a result, or dflt, as a copy. */
static inline char *
jdup(const json_t *o, const char *key, const char *dflt)
{
	return dup_or_null(jstr(o, key) ? jstr(o, key) : dflt);
}

static inline int64_t
jint(const json_t *o, const char *key, int64_t dflt)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

#endif
