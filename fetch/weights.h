/*
 * weights.h: pinning the weights every compared run must share.  A
 * weights file or directory is hashed once; the hash is kept with a stamp
 * of its metadata, which the caller stores, and hashed again only when
 * the stamp changes.  A hash that differs from the configured or the
 * pinned one stops the job instead of producing incomparable numbers.
 *
 * A directory's hash is the sha256 of its manifest: one line
 *	RELATIVE-PATH SIZE SHA256\n
 * per regular file below it (symlinks followed, as in a Hugging Face
 * snapshot; names starting with '.' skipped with everything under them,
 * such as .git and .cache), RELATIVE-PATH with '/' separators and no
 * leading "./", SIZE in decimal bytes, SHA256 in lowercase hex, the lines
 * sorted bytewise by path.  The same in the shell:
 *
 *	cd DIR && find -L . -name '.?*' -prune -o -type f -print |
 *	  sed 's|^\./||' | LC_ALL=C sort | while IFS= read -r f; do
 *	    printf '%s %s %s\n' "$f" "$(stat -L -c %s "$f")" \
 *	      "$(sha256sum < "$f" | cut -d' ' -f1)"; done | sha256sum
 */
#ifndef FETCH_WEIGHTS_H
#define FETCH_WEIGHTS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "http.h"

struct conf_weights;
struct err;

#define WEIGHTS_MAX_FILES	100000	/* files in a weights directory */

/*
 * What was hashed, as the caller stores it between runs.  ctime is kept
 * besides size, mtime and inode because a copy that restores the old
 * mtime over the same inode (cp --preserve=timestamps) changes only it.
 */
struct weights_stamp {
	uint64_t size;		/* bytes; a directory: of all its files */
	int64_t mtime_ns;	/* the newest modification time */
	int64_t ctime_ns;	/* the newest status change time */
	uint64_t inode;		/* of the file or the directory */
	uint64_t dev;
	uint64_t nfiles;	/* 1 for a file */
	char meta[65];		/* a directory: sha256 over each file's path,
				 * size, times, inode and device; "" for a file */
	char sha256[65];	/* the pinned hash; "" when none yet */
};

#define WEIGHTS_STAMP_INIT { 0, 0, 0, 0, 0, 0, "", "" }

/* Longest text weights_stamp_format() writes, with the NUL. */
#define WEIGHTS_STAMP_TEXT_MAX	256

/*
 * Check the weights at path against expected (64 hex digits, or NULL)
 * and against the hash pinned in *cached (if cached->sha256 is set),
 * hashing only when the metadata differs from *cached.  The configured
 * hash wins: with expected set, a matching file is re-pinned even if it
 * differs from the pin.  On success *cached holds the new stamp and the
 * pin, and hex_out the hash.  On a mismatch e names the file and both
 * hashes, *cached is left as it was (the old pin keeps failing until the
 * file is restored or the configuration changes) and hex_out still gets
 * the hash found.  A file that changes while being hashed is an error.
 *
 * Returns 0 (the stamp matched: nothing was read), 1 (hashed), or -1.
 */
int weights_verify_path(const char *path, const char *expected,
    struct weights_stamp *cached, char hex_out[65], struct err *e);

/*
 * The same for a [weights] section given by path: its path and sha256.
 * Weights given by url are an error here: see weights_fetch().
 */
int weights_verify(const struct conf_weights *w, struct weights_stamp *cached,
    char hex_out[65], struct err *e);

struct weights_fetch_opts {
	const char *cache;	/* the cache root (conf's "cache") */
	int allow_http;		/* plain http, for loopback tests only */
	http_progress_fn progress;	/* or NULL */
	void *progress_arg;
	long deadline_ms;	/* the whole download, as an archive's
				 * (download_opts); 0: http's */
	const atomic_int *stop;	/* the download ends when set; or NULL */
};

#define WEIGHTS_FETCH_OPTS_INIT { NULL, 0, NULL, NULL, 0, NULL }

/*
 * A [weights] section given by url (a single file): downloaded like a
 * release archive into CACHE/archives/<sha256> (fetch_download: hashed
 * while streaming, resumed, checked against w->sha256 when set, never
 * half-written under its name; up to 1 TiB) unless the configured or
 * pinned hash is already there, then checked with weights_verify_path(),
 * whose rules and return values apply.  *path_out gets the cached file's
 * path (malloced; NULL on error) for {weights}.
 */
int weights_fetch(const struct conf_weights *w,
    const struct weights_fetch_opts *o, struct weights_stamp *cached,
    char hex_out[65], char **path_out, struct err *e);

/* The hash of a file, or of a directory as defined above, without any
 * stamp.  Returns 0 or -1. */
int weights_hash(const char *path, char hex_out[65], struct err *e);

/* The stamp as one line of text for storage ("v1 ..."); buf holds at
 * least WEIGHTS_STAMP_TEXT_MAX bytes. */
void weights_stamp_format(const struct weights_stamp *s, char *buf,
    size_t len);

/* Read what weights_stamp_format() wrote.  Returns 0, or -1 (and an
 * empty stamp) when text is not such a line. */
int weights_stamp_parse(const char *text, struct weights_stamp *s);

#endif
