/*
 * release_list.h: what a source lists, as values: each release's version,
 * archive URL, asset name and expected hash; the check that a version can
 * name a release; the {version} asset patterns.
 */
#ifndef FETCH_RELEASE_LIST_H
#define FETCH_RELEASE_LIST_H

#include <stddef.h>

struct release_info {
	char *version;		/* as the source names it, leading 'v' of a
				 * git tag removed; malloced */
	char *url;		/* the archive's URL, or an absolute path for
				 * dir: sources; malloced */
	char *asset;		/* the archive's file name; malloced */
	char *sha256;		/* expected hash, lowercase hex, or NULL */
	char *sha256_origin;	/* where it came from: "config", "sha256sums",
				 * "api-digest" (proves the transfer, not the
				 * publisher); NULL when sha256 is NULL */
	int prerelease;
	char *refused;		/* NULL, or why this release is refused (its
				 * version cannot name a release, see
				 * release_version_refusal()); version then
				 * holds the text escaped.  malloced */
};

struct release_list {
	struct release_info *v;	/* owned */
	size_t n;
	size_t alloc;
};

#define RELEASE_LIST_INIT { NULL, 0, 0 }

/*
 * Add a copy of r; takes nothing from r.  A version that
 * release_version_refusal() refuses is added with refused set and its
 * text escaped, so a listing shows it and nothing is made of it.
 */
int release_list_add(struct release_list *l, const struct release_info *r);

/*
 * Why the len bytes at version cannot name a release, or NULL when they
 * can: empty, a NUL or another control byte, "." or "..", longer than
 * RELEASE_VERSION_MAX, not valid UTF-8.  A '/' is allowed (GitHub has
 * "release/1.0"): no path is ever made from a version (see
 * cache_release_dirname()).
 */
#define RELEASE_VERSION_MAX	255
const char *release_version_refusal(const char *version, size_t len);

/* The len bytes at version printable: control bytes, quotes, '\' and
 * bytes that are not UTF-8 as \xHH, cut after RELEASE_VERSION_MAX
 * bytes.  malloced. */
char *release_version_escape(const char *version, size_t len);
void release_list_release(struct release_list *l);
void release_info_release(struct release_info *r);

/*
 * Match name against an asset pattern in which "{version}" stands for one
 * or more of [A-Za-z0-9._+-].  On a match returns 1 and, if version is not
 * NULL, a malloced copy of the version part.  0 if it does not match.
 */
int asset_match(const char *pattern, const char *name, char **version);

/* The pattern with {version} replaced: a name, as it is; malloced, NULL
 * when out of memory. */
char *asset_expand(const char *pattern, const char *version);

/*
 * A place to fetch from: pattern with every {version} and, when tag is
 * not NULL, every {tag} replaced in one pass.  In a URL ("scheme://...")
 * what replaces them is percent-encoded (common/urlenc.h): a tag "1.0#x"
 * asks for ".../1.0%23x/...", never for ".../1.0" with a fragment.  A
 * path keeps them as they are.  malloced, NULL when out of memory.
 */
char *url_expand(const char *pattern, const char *tag, const char *version);

#endif
