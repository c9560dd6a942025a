/*
 * release.c: the store's queries over engines and their releases.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/err.h"
#include "common/strv.h"
#include "release.h"
#include "store_int.h"

static const char *const state_names[] = {
	[RELEASE_LISTED] = "listed",
	[RELEASE_FETCHED] = "fetched",
	[RELEASE_MEASURED] = "measured",
	[RELEASE_FAILED] = "failed",
};

const char *
store_release_state_name(enum release_state st)
{
	return state_names[st];
}

static enum release_state
state_parse(const char *s)
{
	for (size_t i = 0; i < sizeof(state_names) / sizeof(*state_names); i++)
		if (s && strcmp(s, state_names[i]) == 0)
			return (enum release_state)i;
	return RELEASE_LISTED;
}

int
store_engine_find(struct store *s, const char *name, int64_t *id,
    struct err *e)
{
	return store_first(s, e, "look up an engine", "SELECT id FROM engine"
	    " WHERE name = ?1", "t", "I", name, id);
}

int
store_engine_ensure(struct store *s, const char *name, const char *source,
    int64_t *id, struct err *e)
{
	if (store_exec(s, e, "record an engine", "INSERT INTO engine (name,"
	    " source) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET"
	    " source = excluded.source", "tt", name, source) < 0)
		return -1;
	return store_engine_find(s, name, id, e) == 0 ? 0 : -1;
}

int
store_engine_etag(struct store *s, int64_t engine_id, char **etag,
    struct err *e)
{
	*etag = NULL;
	return store_first(s, e, "read an engine's ETag", "SELECT etag FROM"
	    " engine WHERE id = ?1", "I", "t", engine_id, etag) < 0 ? -1 : 0;
}

int
store_engine_set_etag(struct store *s, int64_t engine_id, const char *etag,
    struct err *e)
{
	return store_exec(s, e, "record an engine's ETag", "UPDATE engine SET"
	    " etag = ?2, refreshed = ?3 WHERE id = ?1", "ItI", engine_id, etag,
	    store_now());
}

void
store_release_release(struct store_release *r)
{
	char *owned[] = { r->version, r->order_key, r->url, r->asset,
	    r->expected_sha256, r->sha256_origin, r->archive_sha256,
	    r->failure };

	strs_free(owned, sizeof(owned) / sizeof(owned[0]));
	memset(r, 0, sizeof(*r));
}

#define RELEASE_COLUMNS "id, engine_id, version, order_key, url, asset," \
	" expected_sha256, sha256_origin, archive_sha256, state, failure," \
	" discovered"

static int
release_from_row(sqlite3_stmt *st, void *elem)
{
	struct store_release *r = elem;
	const unsigned char *state;

	r->id = sqlite3_column_int64(st, 0);
	r->engine_id = sqlite3_column_int64(st, 1);
	r->version = store_column_dup(st, 2);
	r->order_key = store_column_dup(st, 3);
	r->url = store_column_dup(st, 4);
	r->asset = store_column_dup(st, 5);
	r->expected_sha256 = store_column_dup(st, 6);
	r->sha256_origin = store_column_dup(st, 7);
	r->archive_sha256 = store_column_dup(st, 8);
	state = sqlite3_column_text(st, 9);
	r->state = state_parse((const char *)state);
	r->failure = store_column_dup(st, 10);
	r->discovered = sqlite3_column_int64(st, 11);
	return 0;
}

int
store_release_upsert(struct store *s, struct store_release *r, struct err *e)
{
	return store_one(s, e, "record a release", "INSERT INTO release"
	    " (engine_id, version, order_key, url, asset, expected_sha256,"
	    " sha256_origin, discovered) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
	    " ON CONFLICT (engine_id, version) DO UPDATE SET"
	    " order_key = excluded.order_key, url = excluded.url,"
	    " asset = excluded.asset,"
	    " expected_sha256 = coalesce(excluded.expected_sha256,"
	    "   expected_sha256),"
	    " sha256_origin = coalesce(excluded.sha256_origin, sha256_origin)"
	    " RETURNING id", "IttttttI", "I", r->engine_id, r->version,
	    r->order_key ? r->order_key : r->version, r->url, r->asset,
	    r->expected_sha256, r->sha256_origin, store_now(), &r->id);
}

int
store_release_get(struct store *s, int64_t engine_id, const char *version,
    struct store_release *out, struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((st = store_query(s, e, "SELECT " RELEASE_COLUMNS " FROM release"
	    " WHERE engine_id = ?1 AND version = ?2", "It", engine_id,
	    version)) == NULL)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		release_from_row(st, out);
	else if (rc != SQLITE_DONE)
		store_fail(s, e, "read a release");
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1;
}

int
store_release_list(struct store *s, int64_t engine_id,
    struct store_release_list *out, struct err *e)
{
	sqlite3_stmt *st;

	out->v = NULL;
	out->n = 0;
	if ((st = store_query(s, e, "SELECT " RELEASE_COLUMNS " FROM release"
	    " WHERE engine_id = ?1 AND kind = 'release'"
	    " ORDER BY order_key, version", "I", engine_id)) == NULL)
		return -1;
	if (store_rows(s, st, (void **)&out->v, &out->n, sizeof(*out->v),
	    release_from_row, "list releases", e) < 0) {
		store_release_list_release(out);
		return -1;
	}
	return 0;
}

void
store_release_list_release(struct store_release_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		store_release_release(&l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

int
store_release_set_state(struct store *s, int64_t release_id,
    enum release_state st_, const char *failure, struct err *e)
{
	return store_exec(s, e, "update a release's state", "UPDATE release SET"
	    " state = ?2, failure = ?3 WHERE id = ?1", "Itt", release_id,
	    state_names[st_], failure);
}

int
store_release_set_archive(struct store *s, int64_t release_id,
    const char *sha256, struct err *e)
{
	return store_exec(s, e, "record a release's archive hash", "UPDATE"
	    " release SET archive_sha256 = ?2 WHERE id = ?1", "It", release_id,
	    sha256);
}

/* --- commits --- */

int
store_commit_ensure(struct store *s, int64_t engine_id,
    const struct store_commit_info *c, int64_t *release_id, struct err *e)
{
	char *kind = NULL;
	int commit;

	if (store_exec(s, e, "record a commit", "INSERT INTO release"
	    " (engine_id, version, order_key, kind, discovered) VALUES (?1, ?2,"
	    " '', 'commit', ?3) ON CONFLICT (engine_id, version) DO NOTHING",
	    "ItI", engine_id, c->id, store_now()) < 0 ||
	    store_one(s, e, "read a commit", "SELECT id, kind FROM release"
	    " WHERE engine_id = ?1 AND version = ?2", "It", "It", engine_id,
	    c->id, release_id, &kind) < 0)
		return -1;
	commit = kind && strcmp(kind, "commit") == 0;
	free(kind);
	if (!commit)
		return err_set(e, "a release is called '%s', like the commit",
		    c->id);
	return store_exec(s, e, "record a commit", "INSERT INTO commit_build"
	    " (release_id, subject, author, author_time)"
	    " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (release_id) DO NOTHING",
	    "IttI", *release_id, c->subject ? c->subject : "",
	    c->author ? c->author : "", c->author_time);
}

static const char *const build_states[] = { "none", "building", "built",
    "failed" };

int
store_commit_get(struct store *s, int64_t release_id,
    struct store_commit_info *out,
    struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((st = store_query(s, e, "SELECT r.version, c.subject, c.author,"
	    " c.author_time, c.state, c.builds, coalesce(c.build_ms, -1),"
	    " c.log_tail FROM commit_build c JOIN release r"
	    " ON r.id = c.release_id WHERE c.release_id = ?1", "I",
	    release_id)) == NULL)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *state = (const char *)sqlite3_column_text(st, 4);

		snprintf(out->id, sizeof(out->id), "%s",
		    (const char *)sqlite3_column_text(st, 0));
		out->subject = store_column_dup(st, 1);
		out->author = store_column_dup(st, 2);
		out->author_time = sqlite3_column_int64(st, 3);
		for (size_t i = 0; i < 4; i++)
			if (state && strcmp(state, build_states[i]) == 0)
				out->state = (enum commit_build_state)i;
		out->builds = sqlite3_column_int(st, 5);
		out->build_ms = sqlite3_column_int64(st, 6);
		out->log_tail = store_column_dup(st, 7);
	} else if (rc != SQLITE_DONE)
		store_fail(s, e, "read a commit");
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1;
}

void
store_commit_info_release(struct store_commit_info *c)
{
	free(c->subject);
	free(c->author);
	free(c->log_tail);
	c->subject = c->author = c->log_tail = NULL;
}

int
store_commit_build_start(struct store *s, int64_t release_id, struct err *e)
{
	return store_exec(s, e, "record a build", "UPDATE commit_build SET"
	    " state = 'building', builds = builds + 1 WHERE release_id = ?1",
	    "I", release_id);
}

int
store_commit_build_done(struct store *s, int64_t release_id,
    enum commit_build_state state, int64_t build_ms, const char *log_tail,
    struct err *e)
{
	return store_exec(s, e, "record a build", "UPDATE commit_build SET"
	    " state = ?2, build_ms = ?3, log_tail = ?4 WHERE release_id = ?1",
	    "ItIt", release_id, build_states[state], build_ms, log_tail);
}
