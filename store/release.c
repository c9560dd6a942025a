/*
 * release.c: the store's queries over engines and their releases.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/err.h"
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
	sqlite3_stmt *st;
	int rc;

	if (store_prepare(s, "SELECT id FROM engine WHERE name = ?1", &st,
	    e) < 0)
		return -1;
	store_bind_text(st, 1, name);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_DONE)
		store_fail(s, e, "look up an engine");
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1;
}

int
store_engine_ensure(struct store *s, const char *name, const char *source,
    int64_t *id, struct err *e)
{
	sqlite3_stmt *st;

	if (store_prepare(s, "INSERT INTO engine (name, source) VALUES (?1, ?2)"
	    " ON CONFLICT (name) DO UPDATE SET source = excluded.source",
	    &st, e) < 0)
		return -1;
	store_bind_text(st, 1, name);
	store_bind_text(st, 2, source);
	if (store_step_done(s, st, "record an engine", e) < 0)
		return -1;
	return store_engine_find(s, name, id, e) == 0 ? 0 : -1;
}

int
store_engine_etag(struct store *s, int64_t engine_id, char **etag,
    struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	*etag = NULL;
	if (store_prepare(s, "SELECT etag FROM engine WHERE id = ?1", &st,
	    e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, engine_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*etag = store_column_dup(st, 0);
	else if (rc != SQLITE_DONE)
		store_fail(s, e, "read an engine's ETag");
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int
store_engine_set_etag(struct store *s, int64_t engine_id, const char *etag,
    struct err *e)
{
	sqlite3_stmt *st;

	if (store_prepare(s, "UPDATE engine SET etag = ?2, refreshed = ?3"
	    " WHERE id = ?1", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, engine_id);
	store_bind_text(st, 2, etag);
	sqlite3_bind_int64(st, 3, store_now());
	return store_step_done(s, st, "record an engine's ETag", e);
}

void
store_release_release(struct store_release *r)
{
	free(r->version);
	free(r->order_key);
	free(r->url);
	free(r->asset);
	free(r->expected_sha256);
	free(r->sha256_origin);
	free(r->archive_sha256);
	free(r->failure);
	memset(r, 0, sizeof(*r));
}

#define RELEASE_COLUMNS "id, engine_id, version, order_key, url, asset," \
	" expected_sha256, sha256_origin, archive_sha256, state, failure," \
	" discovered"

static void
release_from_row(sqlite3_stmt *st, struct store_release *r)
{
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
}

int
store_release_upsert(struct store *s, struct store_release *r, struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	if (store_prepare(s, "INSERT INTO release (engine_id, version,"
	    " order_key, url, asset, expected_sha256, sha256_origin, discovered)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
	    " ON CONFLICT (engine_id, version) DO UPDATE SET"
	    " order_key = excluded.order_key, url = excluded.url,"
	    " asset = excluded.asset,"
	    " expected_sha256 = coalesce(excluded.expected_sha256,"
	    "   expected_sha256),"
	    " sha256_origin = coalesce(excluded.sha256_origin, sha256_origin)"
	    " RETURNING id", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, r->engine_id);
	store_bind_text(st, 2, r->version);
	store_bind_text(st, 3, r->order_key ? r->order_key : r->version);
	store_bind_text(st, 4, r->url);
	store_bind_text(st, 5, r->asset);
	store_bind_text(st, 6, r->expected_sha256);
	store_bind_text(st, 7, r->sha256_origin);
	sqlite3_bind_int64(st, 8, store_now());
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		r->id = sqlite3_column_int64(st, 0);
	else
		store_fail(s, e, "record a release");
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

int
store_release_get(struct store *s, int64_t engine_id, const char *version,
    struct store_release *out, struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	if (store_prepare(s, "SELECT " RELEASE_COLUMNS " FROM release"
	    " WHERE engine_id = ?1 AND version = ?2", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, engine_id);
	store_bind_text(st, 2, version);
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
	size_t alloc = 0;
	int rc;

	out->v = NULL;
	out->n = 0;
	if (store_prepare(s, "SELECT " RELEASE_COLUMNS " FROM release"
	    " WHERE engine_id = ?1 AND kind = 'release'"
	    " ORDER BY order_key, version", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, engine_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (store_grow((void **)&out->v, &alloc, out->n,
		    sizeof(*out->v)) < 0) {
			sqlite3_finalize(st);
			store_release_list_release(out);
			return err_set(e, "out of memory");
		}
		release_from_row(st, &out->v[out->n++]);
	}
	if (rc != SQLITE_DONE) {
		store_fail(s, e, "list releases");
		sqlite3_finalize(st);
		store_release_list_release(out);
		return -1;
	}
	sqlite3_finalize(st);
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
	sqlite3_stmt *st;

	if (store_prepare(s, "UPDATE release SET state = ?2, failure = ?3"
	    " WHERE id = ?1", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, release_id);
	store_bind_text(st, 2, state_names[st_]);
	store_bind_text(st, 3, failure);
	return store_step_done(s, st, "update a release's state", e);
}

int
store_release_set_archive(struct store *s, int64_t release_id,
    const char *sha256, struct err *e)
{
	sqlite3_stmt *st;

	if (store_prepare(s, "UPDATE release SET archive_sha256 = ?2"
	    " WHERE id = ?1", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, release_id);
	store_bind_text(st, 2, sha256);
	return store_step_done(s, st, "record a release's archive hash", e);
}

/* --- commits --- */

int
store_commit_ensure(struct store *s, int64_t engine_id,
    const struct store_commit_info *c, int64_t *release_id, struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	if (store_prepare(s, "INSERT INTO release (engine_id, version,"
	    " order_key, kind, discovered) VALUES (?1, ?2, '', 'commit', ?3)"
	    " ON CONFLICT (engine_id, version) DO NOTHING", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, engine_id);
	store_bind_text(st, 2, c->id);
	sqlite3_bind_int64(st, 3, store_now());
	if (store_step_done(s, st, "record a commit", e) < 0)
		return -1;
	if (store_prepare(s, "SELECT id, kind FROM release WHERE engine_id = ?1"
	    " AND version = ?2", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, engine_id);
	store_bind_text(st, 2, c->id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*release_id = sqlite3_column_int64(st, 0);
		if (strcmp((const char *)sqlite3_column_text(st, 1),
		    "commit") != 0)
			rc = -2;
	} else
		store_fail(s, e, "read a commit");
	sqlite3_finalize(st);
	if (rc == -2)
		return err_set(e, "a release is called '%s', like the commit",
		    c->id);
	if (rc != SQLITE_ROW)
		return -1;
	if (store_prepare(s, "INSERT INTO commit_build (release_id, subject,"
	    " author, author_time) VALUES (?1, ?2, ?3, ?4)"
	    " ON CONFLICT (release_id) DO NOTHING", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, *release_id);
	store_bind_text(st, 2, c->subject ? c->subject : "");
	store_bind_text(st, 3, c->author ? c->author : "");
	sqlite3_bind_int64(st, 4, c->author_time);
	return store_step_done(s, st, "record a commit", e);
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
	if (store_prepare(s, "SELECT r.version, c.subject, c.author,"
	    " c.author_time, c.state, c.builds, coalesce(c.build_ms, -1),"
	    " c.log_tail FROM commit_build c JOIN release r"
	    " ON r.id = c.release_id WHERE c.release_id = ?1", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, release_id);
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
	sqlite3_stmt *st;

	if (store_prepare(s, "UPDATE commit_build SET state = 'building',"
	    " builds = builds + 1 WHERE release_id = ?1", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, release_id);
	return store_step_done(s, st, "record a build", e);
}

int
store_commit_build_done(struct store *s, int64_t release_id,
    enum commit_build_state state, int64_t build_ms, const char *log_tail,
    struct err *e)
{
	sqlite3_stmt *st;

	if (store_prepare(s, "UPDATE commit_build SET state = ?2,"
	    " build_ms = ?3, log_tail = ?4 WHERE release_id = ?1", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, release_id);
	store_bind_text(st, 2, build_states[state]);
	sqlite3_bind_int64(st, 3, build_ms);
	store_bind_text(st, 4, log_tail);
	return store_step_done(s, st, "record a build", e);
}
