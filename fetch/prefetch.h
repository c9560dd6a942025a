/*
 * prefetch.h: archives downloaded ahead, on threads of their own, side by
 * side, while the releases before them are measured (a bisect's next
 * probes, as mozregression fetches both builds its next step may need).
 * The threads only download, at a capped rate and the lowest CPU priority, into the
 * content-addressed cache (fetch_download()); the unpacking stays with
 * the caller, between runs.  A release the caller needs is taken from
 * here: done, it is used as it is; under way, its download is stopped
 * and the caller's own resumes it at full speed; queued, it is dropped.
 * A failed prefetch is forgotten: the caller's download fails or works
 * on its own and says why.
 */
#ifndef FETCH_PREFETCH_H
#define FETCH_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct prefetch;

/* What every download of a prefetch shares. */
struct prefetch_opts {
	const char *cache;	/* the cache root; borrowed */
	int allow_http;
	long deadline_ms;	/* one archive's download; 0: none */
	int64_t max_speed;	/* bytes a second; 0: no cap */
	size_t max_queued;	/* downloads waiting or under way at most,
				 * and the threads that run them (16 at
				 * most) */
};

/* One archive to fetch ahead; the strings are copied. */
struct prefetch_item_spec {
	const char *version;
	const char *url;		/* http(s) */
	const char *expected_sha256;	/* or NULL */
	const char *expected_origin;	/* or NULL */
	const char *pinned_sha256;	/* or NULL */
};

/* Start the prefetch threads.  Returns 0, or -1 with e set. */
int prefetch_new(const struct prefetch_opts *o, struct prefetch **out,
    struct err *e);

/*
 * Queue an archive: 1 when queued, 0 when it is known already (queued,
 * under way, done or failed), the queue is full or it has no version
 * or URL, -1 when memory runs out.
 */
int prefetch_want(struct prefetch *p, const struct prefetch_item_spec *s);

/*
 * The archive of version if it was fetched ahead: 1 with its hash in
 * sha and its cache path in *path (malloced), after waiting for a
 * download under way to stop; else 0, and the caller downloads it (a
 * stopped download's bytes are kept for it to resume).  Either way the
 * version is forgotten here.
 */
int prefetch_take(struct prefetch *p, const char *version, char sha[65],
    char **path);

/* Counts, for notes and tests: downloads done ahead and taken done. */
struct prefetch_stats {
	size_t done, failed, taken_done, taken_stopped, dropped;
};
void prefetch_stats(struct prefetch *p, struct prefetch_stats *out);

/* Stop the downloads under way, join the threads, free everything.
 * NULL is a no-op. */
void prefetch_free(struct prefetch *p);

#endif
