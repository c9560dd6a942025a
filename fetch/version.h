/*
 * version.h: the order of release versions, as a comparison and as a key
 * whose byte order is the same order (for an ORDER BY column in SQLite).
 *
 * A version is read as a sequence of tokens: numbers (runs of digits,
 * compared by value, of any length), letters (compared by byte), other
 * characters (compared by byte), and a pre-release mark.  Tokens of
 * different kinds order as
 *
 *	pre-release mark < end of version < number < letter < other
 *
 * so "0.2.10" follows "0.2.9", "b11382" follows "b999", "1.0.1" and
 * "1.0a" (a post-release letter, as in OpenSSL's 1.1.1a) follow "1.0".
 * The pre-release mark is written for
 *	- '~' (Debian's convention): "1.0~rc1" < "1.0";
 *	- '-' followed by a letter (semver): "1.0.0-rc1" < "1.0.0",
 *	  "1.0.0-alpha" < "1.0.0-beta" < "1.0.0";
 *	- one of the words alpha, beta, pre, preview, rc, dev (any case)
 *	  right after a digit, or after a digit and one '.' or '_':
 *	  "1.0rc1" < "1.0", "2.0.beta2" < "2.0".
 * A '-' before a digit is an ordinary character: "1.0.0-1" > "1.0.0".
 * Versions equal by this order but spelled differently ("1.01", "1.1")
 * are ordered by their bytes, so the order is total.
 *
 * A leading 'v' (git tags) is the caller's to strip.
 */
#ifndef FETCH_VERSION_H
#define FETCH_VERSION_H

/* <0, 0 or >0 as a sorts before, equal to, or after b. */
int version_cmp(const char *a, const char *b);

/* The same for qsort() over an array of char * (a pointer to each). */
int version_cmp_qsort(const void *a, const void *b);

/*
 * A printable ASCII string whose strcmp() order (SQLite's BINARY
 * collation) equals version_cmp()'s order; equal only for equal versions.
 * Malloced (caller frees); NULL when out of memory.
 */
char *version_key(const char *v);

#endif
