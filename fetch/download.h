/*
 * download.h: a release archive from its URL into the content-addressed
 * cache, CACHE/archives/<sha256>, verified, never half-written under its
 * final name, resumed where an earlier attempt stopped.
 */
#ifndef FETCH_DOWNLOAD_H
#define FETCH_DOWNLOAD_H

#include <stdint.h>

#include "http.h"
#include "sha256.h"

struct err;

struct download_opts {
	const char *cache;	/* the cache root (conf's "cache") */
	const char *expected_sha256;	/* hex, or NULL: not known */
	const char *expected_origin;	/* "config", "sha256sums",
					 * "api-digest": for messages */
	const char *pinned_sha256;	/* the hash recorded for this version
					 * by an earlier download, or NULL */
	uint64_t max_bytes;	/* archive cap; 0: 16 GiB */
	const struct http_opts *http;	/* NULL: defaults */
	int allow_http;		/* plain http (applies when http is NULL) */
	http_progress_fn progress;	/* or NULL */
	void *progress_arg;
	long deadline_ms;	/* the whole download (http_opts.deadline_ms);
				 * 0: http's, else none */
	const atomic_int *stop;	/* abort when set; or NULL */
	int64_t max_speed;	/* bytes a second at most; 0: no cap */
};

#define DOWNLOAD_OPTS_INIT { NULL, NULL, NULL, NULL, 0, NULL, 0, NULL, NULL, \
	0, NULL, 0 }

/* What download_check_pinned() decides. */
enum download_pin {
	PIN_FIRST,		/* nothing recorded: record this hash */
	PIN_SAME,		/* the recorded hash again */
	PIN_CHANGED		/* a different archive under the same version:
				 * refuse it and raise an alert */
};

struct download_result {
	char sha256[SHA256_HEX_LEN + 1];	/* of the archive */
	char *path;		/* CACHE/archives/<sha256>; malloced */
	uint64_t size;
	int cached;		/* 1: it was there already, nothing fetched */
	int resumed;		/* 1: a partial file was continued */
	enum download_pin pin;	/* against opts.pinned_sha256 */
};

#define DOWNLOAD_RESULT_INIT { { 0 }, NULL, 0, 0, 0, PIN_FIRST }

/*
 * Download url into o->cache/archives/<sha256>.  The bytes stream into
 * archives/tmp/<sha256 of the URL>.part, hashed as they arrive (after a
 * resume, the whole file is hashed again before it is accepted), are
 * fsynced, checked and renamed into place, and the directory is fsynced.
 *
 * With an expected hash whose archive is already cached, nothing is
 * downloaded.  Likewise with a pinned hash and no expected one.
 * A mismatch with the expected hash deletes the file and fails naming
 * both hashes; a hash different from the pinned one is refused the same
 * way with r->pin = PIN_CHANGED, the case an alert is raised for.
 *
 * A transport failure after the retries keeps the partial file so the
 * next call resumes it, asking If-Range with the ETag its bytes came with
 * (noted beside it as tmp/<sha256 of the URL>.etag), so a file changed on
 * the server comes whole instead of spliced; any other failure removes
 * it.  A second process
 * downloading the same URL at the same time fails at once.
 * Returns 0 with r filled (release it with download_result_release()),
 * or -1 with e set.
 */
int fetch_download(const char *url, const struct download_opts *o,
    struct download_result *r, struct err *e);

void download_result_release(struct download_result *r);

/*
 * The trust-on-first-use decision for a version with no published hash:
 * prev is the hash recorded earlier (NULL or "" if none), seen the hash
 * just downloaded.  Hex case is ignored.
 */
enum download_pin download_check_pinned(const char *prev, const char *seen);

#endif
