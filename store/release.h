/*
 * release.h: engines, their releases in version order, and commits
 * (release rows of kind 'commit').
 */
#ifndef STORE_RELEASE_H
#define STORE_RELEASE_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct store;

/* --- engines and releases --- */
int store_engine_ensure(struct store *s, const char *name, const char *source,
    int64_t *id, struct err *e);
/* 0 and *id, or 1 if the store has never seen the engine, or -1. */
int store_engine_find(struct store *s, const char *name, int64_t *id,
    struct err *e);
int store_engine_etag(struct store *s, int64_t engine_id, char **etag,
    struct err *e);
int store_engine_set_etag(struct store *s, int64_t engine_id,
    const char *etag, struct err *e);

enum release_state { RELEASE_LISTED, RELEASE_FETCHED, RELEASE_MEASURED,
	RELEASE_FAILED };

struct store_release {
	int64_t id;
	int64_t engine_id;
	char *version;
	char *order_key;
	char *url;		/* or NULL */
	char *asset;		/* or NULL */
	char *expected_sha256;	/* or NULL */
	char *sha256_origin;	/* or NULL */
	char *archive_sha256;	/* or NULL */
	enum release_state state;
	char *failure;		/* or NULL */
	int64_t discovered;
};

void store_release_release(struct store_release *r);
const char *store_release_state_name(enum release_state st);

/*
 * Insert a release, or update its url/asset/expected hash if the version
 * is known (its state, archive hash and runs are kept).  r->id is set.
 */
int store_release_upsert(struct store *s, struct store_release *r,
    struct err *e);

/* 0 and *out filled, 1 if no such version, -1 on error. */
int store_release_get(struct store *s, int64_t engine_id, const char *version,
    struct store_release *out, struct err *e);

struct store_release_list {
	struct store_release *v;
	size_t n;
};

/* All releases of the engine in version order. */
int store_release_list(struct store *s, int64_t engine_id,
    struct store_release_list *out, struct err *e);
void store_release_list_release(struct store_release_list *l);

/* --- commits (release rows of kind 'commit') --- */
enum commit_build_state { COMMIT_BUILD_NONE, COMMIT_BUILD_RUNNING,
	COMMIT_BUILD_DONE, COMMIT_BUILD_FAILED };

struct store_commit_info {
	char id[41];		/* the commit id, also its release's version */
	char *subject;		/* upstream text; malloced */
	char *author;		/* upstream text; malloced */
	int64_t author_time;	/* Unix seconds */
	enum commit_build_state state;
	int builds;		/* builds started, interrupted ones included */
	int64_t build_ms;	/* the last finished build's, or -1 */
	char *log_tail;		/* a failed build's output tail, or NULL */
};

/*
 * Record commit c of the engine as a release of kind 'commit' (version:
 * its id) with its description, or find it; *release_id is its row.  A
 * release of the source's called like the commit is an error.  Releases
 * listed by store_release_list() never include commits.
 */
int store_commit_ensure(struct store *s, int64_t engine_id,
    const struct store_commit_info *c, int64_t *release_id, struct err *e);

/* 0 and *out filled (free with store_commit_info_release()), 1 when the
 * release is no commit, -1 on error. */
int store_commit_get(struct store *s, int64_t release_id,
    struct store_commit_info *out, struct err *e);
void store_commit_info_release(struct store_commit_info *c);

/* A build of the commit starts: state 'building', one more build. */
int store_commit_build_start(struct store *s, int64_t release_id,
    struct err *e);

/* A build ended as state (built or failed), with its log tail. */
int store_commit_build_done(struct store *s, int64_t release_id,
    enum commit_build_state state, int64_t build_ms, const char *log_tail,
    struct err *e);

int store_release_set_state(struct store *s, int64_t release_id,
    enum release_state st, const char *failure, struct err *e);
int store_release_set_archive(struct store *s, int64_t release_id,
    const char *sha256, struct err *e);

#endif
