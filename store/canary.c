/*
 * canary.c: the store's side of the output canary: its definitions and
 * every run with the text it generated.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/err.h"
#include "common/strv.h"
#include "canary.h"
#include "store_int.h"

int
store_canary_definition_ensure(struct store *s, const char *key,
    const char *text, int64_t *id, struct err *e)
{
	if (store_exec(s, e, "record a canary definition", "INSERT INTO"
	    " canary_definition (key, text, created) VALUES (?1, ?2, ?3)"
	    " ON CONFLICT (key) DO NOTHING", "ttI", key, text, store_now()) < 0)
		return -1;
	return store_one(s, e, "look up a canary definition", "SELECT id FROM"
	    " canary_definition WHERE key = ?1", "t", "I", key, id);
}

int
store_canary_insert(struct store *s, struct store_canary_run *r,
    struct err *e)
{
	return store_one(s, e, "store a canary run", "INSERT INTO canary_run"
	    " (release_id, weights_id, machine_id, definition_id, started,"
	    " wall_ns, exit_code, signal, failure, failure_detail, text,"
	    " sha256, out_bytes, stderr_tail) VALUES (?1, ?2, ?3, ?4, ?5, ?6,"
	    " ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) RETURNING id",
	    "IIIIIooottbtIb", "I",
	    r->release_id, r->weights_id, r->machine_id, r->definition_id,
	    r->started, r->end.wall_ns, (int64_t)r->end.exit_code,
	    (int64_t)(r->end.signal > 0 ? r->end.signal : -1), r->end.failure,
	    r->end.failure_detail,
	    r->end.failure ? NULL : r->text ? r->text : "", r->text_len,
	    r->end.failure ? NULL : r->sha256, (int64_t)r->out_bytes,
	    r->end.err_tail, r->end.err_len, &r->id);
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

static int
canary_row(sqlite3_stmt *st, void *elem)
{
	struct store_canary_row *r = elem;

	r->id = sqlite3_column_int64(st, 0);
	r->started = sqlite3_column_int64(st, 1);
	r->failure = store_column_dup(st, 2);
	r->failure_detail = store_column_dup(st, 3);
	r->text = column_bytes(st, 4, &r->text_len);
	r->sha256 = store_column_dup(st, 5);
	r->wall_ns = store_column_opt_int(st, 6);
	r->definition = store_column_dup(st, 7);
	r->err_tail = column_bytes(st, 8, &r->err_len);
	r->definition_text = store_column_dup(st, 9);
	return 0;
}

int
store_canary_list(struct store *s, int64_t release_id, const char *def_key,
    struct store_canary_rows *out, struct err *e)
{
	sqlite3_stmt *st;

	out->v = NULL;
	out->n = 0;
	if ((st = store_query(s, e, "SELECT r.id, r.started, r.failure,"
	    " r.failure_detail, r.text, r.sha256, r.wall_ns, d.key,"
	    " r.stderr_tail, d.text FROM canary_run r"
	    " JOIN canary_definition d ON d.id = r.definition_id"
	    " WHERE r.release_id = ?1 AND (?2 IS NULL OR d.key = ?2)"
	    " ORDER BY r.id", "It", release_id, def_key)) == NULL)
		return -1;
	if (store_rows(s, st, (void **)&out->v, &out->n, sizeof(*out->v),
	    canary_row, "read canary runs", e) < 0) {
		store_canary_rows_release(out);
		return -1;
	}
	return 0;
}

void
store_canary_rows_release(struct store_canary_rows *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct store_canary_row *c = &r->v[i];
		char *owned[] = { c->failure, c->failure_detail, c->text,
		    c->sha256, c->definition, c->definition_text,
		    c->err_tail };

		strs_free(owned, sizeof(owned) / sizeof(owned[0]));
	}
	free(r->v);
	r->v = NULL;
	r->n = 0;
}
