/*
 * acquire.h: getting from "engine E, version V" to a verified, unpacked
 * release directory and pinned weights, recording each step in the store:
 * the source's listing (refresh), the archive (download or local file,
 * hash checked against what the source published and what was pinned
 * before), the unpacked tree, the weights' hash.
 */
#ifndef BISECTD_ACQUIRE_H
#define BISECTD_ACQUIRE_H

#include <stdint.h>

#include "fetch/http.h"

struct conf;
struct conf_engine;
struct conf_weights;
struct err;
struct prefetch;
struct store;

struct acquire {
	const struct conf *conf;
	const struct conf_engine *eng;
	struct store *store;
	int64_t engine_id;
	http_progress_fn progress;	/* download progress, or NULL */
	void *progress_arg;
	const atomic_int *stop;	/* set: a download in progress ends now
				 * with an error; or NULL */
	/* Told of each release the source lists but bisectd refuses (its
	 * version cannot name a release), with version escaped; or NULL. */
	void (*refused)(void *arg, const char *version, const char *why);
	void *refused_arg;
	/* Archives downloaded ahead (fetch/prefetch.h), taken from here
	 * before a download of a release's own; or NULL. */
	struct prefetch *prefetch;
};

/* Record the engine in the store; fills a->engine_id. */
int acquire_init(struct acquire *a, const struct conf *conf,
    const struct conf_engine *eng, struct store *s, struct err *e);

/*
 * Ask the engine's source for its releases and store them in version
 * order.  *listed gets how many the source gave, *added how many were
 * new (either may be NULL); a GitHub 304 lists nothing and changes
 * nothing.  Releases whose version is refused are not stored: each goes
 * to a->refused, and not into *listed.
 */
int acquire_refresh(struct acquire *a, int *listed, int *added, struct err *e);

/*
 * The engine's newest release in *version (malloced): after asking its
 * source when refresh is set, else the newest the store lists, the
 * source asked only when the store lists none.  Returns 0, or -1 with e
 * set.
 */
int acquire_newest(struct acquire *a, int refresh, char **version,
    struct err *e);

struct acquired {
	int64_t release_id;
	char sha256[65];	/* the archive's */
	char *url;		/* where it came from (URL or path); malloced */
	char *dir;		/* the unpacked release root; malloced */
	int downloaded;		/* 1: fetched now, 0: from the cache */
	int unpacked;		/* 1: unpacked now */
};

void acquired_release(struct acquired *r);

/*
 * Make version available: listed (asking the source when the store does
 * not know it), its archive verified, and unpacked into
 * CACHE/releases/ENGINE/<cache_release_dirname(version)>, within the
 * engine's unpack-max and download-deadline.  A tree is reused only when
 * its unpack finished (fetch_unpack_complete()).  A first-use archive
 * hash is pinned only once the archive has unpacked.  A failure is
 * stored as the release's state and failure, so a bisect can skip it.
 */
int acquire_release(struct acquire *a, const char *version,
    struct acquired *out, struct err *e);

/*
 * The folder version of eng is unpacked into, CACHE/releases/ENGINE/NAME
 * (NAME from cache_release_dirname()), in *dir (malloced); nothing is
 * made or checked on disk.  Returns 0, or -1 with e set.
 */
int acquire_release_dir(const struct conf *conf, const struct conf_engine *eng,
    const char *version, char **dir, struct err *e);

/*
 * The path {weights} stands for: the configured path, or for weights
 * given by url their download, CACHE/archives/SHA256.  Malloced; NULL
 * when out of memory, or for url weights without a sha256 yet.
 */
char *acquire_weights_path(const struct conf *conf,
    const struct conf_weights *w, const char *sha256);

struct pinned_weights {
	int64_t weights_id;
	char sha256[65];
	uint64_t size;
	char *path;		/* malloced */
};

void pinned_weights_release(struct pinned_weights *w);

/*
 * Verify the engine's weights against the configured hash and the pin of
 * earlier jobs (stored beside the cache), hashing only when the file's
 * size, times or inode changed; weights given by url are downloaded into
 * the cache first.  Record them in the store.  A changed
 * file is an error naming both hashes: numbers measured on other weights
 * are not comparable.
 */
int acquire_weights(struct acquire *a, struct pinned_weights *out,
    struct err *e);

#endif
