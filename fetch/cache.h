/*
 * cache.h: the size cap of unpacked releases (cache-max).  Releases live
 * in CACHE/releases/ENGINE/NAME/, NAME from cache_release_dirname();
 * beyond the cap the least recently used are removed (their archives in
 * CACHE/archives/ stay, so a removed release is unpacked again when it
 * is needed).
 */
#ifndef FETCH_CACHE_H
#define FETCH_CACHE_H

#include <stdint.h>

struct err;

/*
 * The name of version's folder under CACHE/releases/ENGINE/, into out
 * (CACHE_DIRNAME_MAX bytes): the version with each byte outside
 * [A-Za-z0-9._+-], and a leading '.', written as %XX ("release/1.0" ->
 * "release%2F1.0"); past CACHE_DIRNAME_MAX - 8 bytes, "%~" and the
 * version's sha256 instead.  No upstream text becomes a path as it is:
 * the name is one component, never "." or "..", never hidden, and two
 * versions never share it.  Returns 0, or -1 (libcrypto failed).
 */
#define CACHE_DIRNAME_MAX	128
int cache_release_dirname(const char *version, char out[CACHE_DIRNAME_MAX]);

/* Name of the stamp file in a release directory whose mtime says when
 * the release was last used. */
#define CACHE_LAST_USED ".last-used"

/*
 * Work directories left by a crash, named with the process id that made
 * them: ".tmp-VERSION-PID-XXXXXX" of an unpack and ".gc-VERSION-PID-N" of
 * a removal.  Both are removed once that process is gone; a ".tmp-" one
 * also once its mtime is this old (the id may have been reused).
 */
#define CACHE_STALE_SECONDS	(24 * 60 * 60)

struct cache_gc_stats {
	uint64_t releases;	/* release directories found */
	uint64_t removed;	/* of which removed */
	uint64_t removed_bytes;
	uint64_t kept_bytes;	/* what the remaining releases use */
	uint64_t stale_removed;	/* leftover work directories removed */
};

/* Called for each release removed, with its path and the bytes freed. */
typedef void (*cache_report_fn)(void *arg, const char *release_dir,
    uint64_t bytes);

/*
 * Mark the release at release_dir as used now: its CACHE_LAST_USED file
 * is created or its times set to now.  Call it whenever a release is
 * used.  Returns 0 or -1.
 */
int cache_touch(const char *release_dir, struct err *e);

/*
 * Trim CACHE/releases to max_bytes: releases are sized as du(1) does
 * (allocated blocks, hard links counted once) and removed oldest last use
 * first (CACHE_LAST_USED's mtime, else the directory's) until the rest
 * fits.  The release at keep_path (the one about to run; may be NULL) is
 * never removed, even if it alone passes the cap.  A release is first
 * renamed to ENGINE/.gc-VERSION-..., then deleted, so an interrupted
 * removal never leaves a partial release under its version's name.
 * Leftover work directories go too (see CACHE_STALE_SECONDS).
 *
 * report (may be NULL) is called with arg for each release removed;
 * stats (may be NULL) gets the totals.  A missing CACHE/releases is an
 * empty cache.  Returns 0, or -1 with e set (what was removed before the
 * error is in stats).
 */
int cache_gc(const char *cache_dir, uint64_t max_bytes, const char *keep_path,
    cache_report_fn report, void *arg, struct cache_gc_stats *stats,
    struct err *e);

#endif
