/*
 * canary.c: the store's side of the output canary: its definitions and
 * every run with the text it generated.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/err.h"
#include "canary.h"
#include "store_int.h"

int
store_canary_definition_ensure(struct store *s, const char *key,
    const char *text, int64_t *id, struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	if (store_prepare(s, "INSERT INTO canary_definition (key, text,"
	    " created) VALUES (?1, ?2, ?3) ON CONFLICT (key) DO NOTHING", &st,
	    e) < 0)
		return -1;
	store_bind_text(st, 1, key);
	store_bind_text(st, 2, text);
	sqlite3_bind_int64(st, 3, store_now());
	if (store_step_done(s, st, "record a canary definition", e) < 0)
		return -1;
	if (store_prepare(s, "SELECT id FROM canary_definition WHERE key = ?1",
	    &st, e) < 0)
		return -1;
	store_bind_text(st, 1, key);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	else
		store_fail(s, e, "look up a canary definition");
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

static void
bind_bytes(sqlite3_stmt *st, int i, const char *p, size_t len)
{
	if (p)
		sqlite3_bind_blob64(st, i, p, len, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

int
store_canary_insert(struct store *s, struct store_canary_run *r,
    struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	if (store_prepare(s, "INSERT INTO canary_run (release_id, weights_id,"
	    " machine_id, definition_id, started, wall_ns, exit_code, signal,"
	    " failure, failure_detail, text, sha256, out_bytes, stderr_tail)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,"
	    " ?14) RETURNING id", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, r->release_id);
	sqlite3_bind_int64(st, 2, r->weights_id);
	sqlite3_bind_int64(st, 3, r->machine_id);
	sqlite3_bind_int64(st, 4, r->definition_id);
	sqlite3_bind_int64(st, 5, r->started);
	store_bind_opt_int(st, 6, r->end.wall_ns);
	store_bind_opt_int(st, 7, r->end.exit_code);
	store_bind_opt_int(st, 8, r->end.signal > 0 ? r->end.signal : -1);
	store_bind_text(st, 9, r->end.failure);
	store_bind_text(st, 10, r->end.failure_detail);
	bind_bytes(st, 11, r->end.failure ? NULL : r->text ? r->text : "",
	    r->text_len);
	store_bind_text(st, 12, r->end.failure ? NULL : r->sha256);
	sqlite3_bind_int64(st, 13, (int64_t)r->out_bytes);
	bind_bytes(st, 14, r->end.err_tail, r->end.err_len);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		r->id = sqlite3_column_int64(st, 0);
	else
		store_fail(s, e, "store a canary run");
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* A NUL-terminated copy of blob column i, its length in *len. */
static char *
column_bytes(sqlite3_stmt *st, int i, size_t *len)
{
	const void *p = sqlite3_column_blob(st, i);
	int n = sqlite3_column_bytes(st, i);
	char *v;

	*len = 0;
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return NULL;
	if ((v = malloc((size_t)n + 1)) == NULL)
		return NULL;
	if (n > 0)
		memcpy(v, p, (size_t)n);
	v[n] = '\0';
	*len = (size_t)n;
	return v;
}

int
store_canary_list(struct store *s, int64_t release_id, const char *def_key,
    struct store_canary_rows *out, struct err *e)
{
	sqlite3_stmt *st;
	size_t alloc = 0;
	int rc;

	out->v = NULL;
	out->n = 0;
	if (store_prepare(s, "SELECT r.id, r.started, r.failure,"
	    " r.failure_detail, r.text, r.sha256, r.wall_ns, d.key,"
	    " r.stderr_tail, d.text FROM canary_run r"
	    " JOIN canary_definition d ON d.id = r.definition_id"
	    " WHERE r.release_id = ?1 AND (?2 IS NULL OR d.key = ?2)"
	    " ORDER BY r.id", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, release_id);
	store_bind_text(st, 2, def_key);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_canary_row *r;

		if (store_grow((void **)&out->v, &alloc, out->n,
		    sizeof(*out->v)) < 0) {
			sqlite3_finalize(st);
			store_canary_rows_release(out);
			return err_set(e, "out of memory");
		}
		r = &out->v[out->n++];
		r->id = sqlite3_column_int64(st, 0);
		r->started = sqlite3_column_int64(st, 1);
		r->failure = store_column_dup(st, 2);
		r->failure_detail = store_column_dup(st, 3);
		r->text = column_bytes(st, 4, &r->text_len);
		r->sha256 = store_column_dup(st, 5);
		r->wall_ns = sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 :
		    sqlite3_column_int64(st, 6);
		r->definition = store_column_dup(st, 7);
		r->err_tail = column_bytes(st, 8, &r->err_len);
		r->definition_text = store_column_dup(st, 9);
	}
	if (rc != SQLITE_DONE) {
		store_fail(s, e, "read canary runs");
		sqlite3_finalize(st);
		store_canary_rows_release(out);
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

void
store_canary_rows_release(struct store_canary_rows *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].failure);
		free(r->v[i].failure_detail);
		free(r->v[i].text);
		free(r->v[i].sha256);
		free(r->v[i].definition);
		free(r->v[i].definition_text);
		free(r->v[i].err_tail);
	}
	free(r->v);
	r->v = NULL;
	r->n = 0;
}
