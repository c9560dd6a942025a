/*
 * release_list.c: the release_list container, the refusal of versions
 * that cannot name a release, and the {version} asset patterns every kind
 * of source matches names against (see release_list.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strv.h"
#include "common/urlenc.h"
#include "common/utf8.h"
#include "release_list.h"

#define TAG_TOKEN		"{tag}"
#define TAG_TOKEN_LEN		(sizeof(TAG_TOKEN) - 1)
#define VERSION_TOKEN		"{version}"
#define VERSION_TOKEN_LEN	(sizeof(VERSION_TOKEN) - 1)

static int
dup_field(char **dst, const char *src)
{
	*dst = NULL;
	if (src == NULL)
		return 0;
	return (*dst = strdup(src)) == NULL ? -1 : 0;
}

int
release_list_add(struct release_list *l, const struct release_info *r)
{
	struct release_info c;

	if (l->n == l->alloc) {
		size_t alloc = l->alloc ? l->alloc * 2 : 16;
		struct release_info *v = realloc(l->v, alloc * sizeof(*v));

		if (v == NULL)
			return -1;
		l->v = v;
		l->alloc = alloc;
	}
	memset(&c, 0, sizeof(c));
	if (r->refused == NULL && r->version != NULL) {
		const char *why = release_version_refusal(r->version,
		    strlen(r->version));

		if (why != NULL) {
			c.version = release_version_escape(r->version,
			    strlen(r->version));
			if (c.version == NULL ||
			    (c.refused = strdup(why)) == NULL) {
				release_info_release(&c);
				return -1;
			}
		}
	} else if (dup_field(&c.refused, r->refused) < 0)
		return -1;
	if ((c.version == NULL && dup_field(&c.version, r->version) < 0) ||
	    dup_field(&c.url, r->url) < 0 ||
	    dup_field(&c.asset, r->asset) < 0 ||
	    dup_field(&c.sha256, r->sha256) < 0 ||
	    dup_field(&c.sha256_origin, r->sha256_origin) < 0) {
		release_info_release(&c);
		return -1;
	}
	c.prerelease = r->prerelease;
	l->v[l->n++] = c;
	return 0;
}

void
release_info_release(struct release_info *r)
{
	char *owned[] = { r->version, r->url, r->asset, r->sha256,
	    r->sha256_origin, r->refused };

	strs_free(owned, sizeof(owned) / sizeof(owned[0]));
	memset(r, 0, sizeof(*r));
}

void
release_list_release(struct release_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		release_info_release(&l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = l->alloc = 0;
}

const char *
release_version_refusal(const char *version, size_t len)
{
	uint32_t cp;

	if (len == 0)
		return "empty version";
	if (len > RELEASE_VERSION_MAX)
		return "version longer than 255 bytes";
	if (memchr(version, '\0', len) != NULL)
		return "version holds a NUL byte";
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)version[i] < 0x20 ||
		    (unsigned char)version[i] == 0x7f)
			return "version holds a control byte";
	if ((len == 1 && version[0] == '.') ||
	    (len == 2 && version[0] == '.' && version[1] == '.'))
		return "version '.' or '..'";
	/* JSON, the store's listings and /metrics carry text only. */
	for (size_t i = 0, k; i < len; i += k)
		if ((k = utf8_decode((const unsigned char *)version + i,
		    len - i, &cp)) == 0)
			return "version is not valid UTF-8";
	return NULL;
}

char *
release_version_escape(const char *version, size_t len)
{
	char *out, *o;
	uint32_t cp;

	if (len > RELEASE_VERSION_MAX)
		len = RELEASE_VERSION_MAX;
	if ((out = malloc(len * 4 + 4)) == NULL)
		return NULL;
	o = out;
	for (size_t i = 0, k; i < len; i += k) {
		unsigned char c = (unsigned char)version[i];

		k = utf8_decode((const unsigned char *)version + i, len - i,
		    &cp);
		if (k > 1) {
			memcpy(o, version + i, k);
			o += k;
		} else if (k == 0 || c < 0x20 || c == 0x7f || c == '\'' ||
		    c == '"' || c == '\\') {
			o += sprintf(o, "\\x%02x", c);
			k = 1;
		} else
			*o++ = (char)c;
	}
	*o = '\0';
	return out;
}

static int
version_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+' ||
	    c == '-';
}

/*
 * Match name against pattern; every {version} must stand for the same
 * text, held in *ver and *vlen once bound.  Longest first, then shorter, so
 * "x-{version}.tar.gz" gives "1.2.3" for "x-1.2.3.tar.gz".
 */
static int
match_at(const char *p, const char *n, const char **ver, size_t *vlen)
{
	while (*p != '\0') {
		if (strncmp(p, VERSION_TOKEN, VERSION_TOKEN_LEN) == 0) {
			size_t max = 0;

			p += VERSION_TOKEN_LEN;
			if (*ver != NULL) {
				if (strncmp(n, *ver, *vlen) != 0)
					return 0;
				n += *vlen;
				continue;
			}
			while (version_char(n[max]))
				max++;
			for (size_t len = max; len >= 1; len--) {
				*ver = n;
				*vlen = len;
				if (match_at(p, n + len, ver, vlen))
					return 1;
			}
			*ver = NULL;
			*vlen = 0;
			return 0;
		}
		if (*p != *n)
			return 0;
		p++;
		n++;
	}
	return *n == '\0';
}

int
asset_match(const char *pattern, const char *name, char **version)
{
	const char *ver = NULL;
	size_t vlen = 0;

	if (version != NULL)
		*version = NULL;
	if (pattern == NULL || name == NULL ||
	    !match_at(pattern, name, &ver, &vlen))
		return 0;
	if (version != NULL) {
		if (ver == NULL)
			return 0;	/* no {version} to report */
		if ((*version = strndup(ver, vlen)) == NULL)
			return 0;
	}
	return 1;
}

/*
 * pattern with each {version} (and, when tag is not NULL, each {tag})
 * replaced in one pass, so that a tag holding "{version}" is not
 * expanded again; with encode, what replaces a token is percent-encoded.
 */
static char *
expand(const char *pattern, const char *tag, const char *version,
    int encode)
{
	size_t tl, vl, n = 1;
	const char *p;
	char *out, *o;

	tl = tag == NULL ? 0 : encode ? url_encoded_len(tag) : strlen(tag);
	vl = encode ? url_encoded_len(version) : strlen(version);
	for (p = pattern; *p; )
		if (tag && strncmp(p, TAG_TOKEN, TAG_TOKEN_LEN) == 0) {
			n += tl;
			p += TAG_TOKEN_LEN;
		} else if (strncmp(p, VERSION_TOKEN, VERSION_TOKEN_LEN) == 0) {
			n += vl;
			p += VERSION_TOKEN_LEN;
		} else {
			n++;
			p++;
		}
	if ((out = malloc(n)) == NULL)
		return NULL;
	for (p = pattern, o = out; *p; ) {
		const char *with = NULL;

		if (tag && strncmp(p, TAG_TOKEN, TAG_TOKEN_LEN) == 0) {
			with = tag;
			p += TAG_TOKEN_LEN;
		} else if (strncmp(p, VERSION_TOKEN, VERSION_TOKEN_LEN) == 0) {
			with = version;
			p += VERSION_TOKEN_LEN;
		} else
			*o++ = *p++;
		if (with && encode)
			o = url_encode_into(o, with);
		else if (with)
			o = stpcpy(o, with);
	}
	*o = '\0';
	return out;
}

char *
asset_expand(const char *pattern, const char *version)
{
	return expand(pattern, NULL, version, 0);
}

char *
url_expand(const char *pattern, const char *tag, const char *version)
{
	return expand(pattern, tag, version, strstr(pattern, "://") != NULL);
}
