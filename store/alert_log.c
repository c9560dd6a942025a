/*
 * alert_log.c: the store's side of alert delivery: which alert each sink
 * still owes, every attempt, the listing `bisectctl alerts` shows, and
 * the small named values the watch and the yardstick check keep.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/err.h"
#include "common/strv.h"
#include "db.h"
#include "alert_log.h"
#include "store_int.h"

void
store_alert_release(struct store_alert *a)
{
	char *owned[] = { a->kind, a->engine, a->dedup_key, a->summary,
	    a->body };

	strs_free(owned, sizeof(owned) / sizeof(owned[0]));
	memset(a, 0, sizeof(*a));
}

/* Columns 0-6 of st: id, created, kind, engine, dedup_key, summary, body. */
static int
read_alert(sqlite3_stmt *st, struct store_alert *a)
{
	a->id = sqlite3_column_int64(st, 0);
	a->created = sqlite3_column_int64(st, 1);
	a->kind = store_column_dup(st, 2);
	a->engine = store_column_dup(st, 3);
	a->dedup_key = store_column_dup(st, 4);
	a->summary = store_column_dup(st, 5);
	a->body = store_column_dup(st, 6);
	if (!a->kind || !a->engine || !a->dedup_key || !a->summary ||
	    !a->body) {
		store_alert_release(a);
		return -1;
	}
	return 0;
}

static int
due_row(sqlite3_stmt *st, void *elem)
{
	struct store_alert_due *d = elem;

	if (read_alert(st, &d->alert) < 0)
		return -1;
	d->attempts = sqlite3_column_int(st, 7);
	return 0;
}

static int
alert_row(sqlite3_stmt *st, void *elem)
{
	return read_alert(st, &((struct store_alert_row *)elem)->alert);
}

int
store_alert_enlist(struct store *s, const char *sink, const char *target,
    int64_t since, int64_t due_at, struct err *e)
{
	if (store_exec(s, e, "list the alerts a sink owes", "INSERT INTO"
	    " alert_delivery (alert_id, sink, target, next_at)"
	    " SELECT id, ?1, ?2, ?3 FROM alert WHERE created >= ?4"
	    " AND id NOT IN (SELECT alert_id FROM alert_delivery"
	    " WHERE sink = ?1)", "ttII", sink, target, due_at, since) < 0)
		return -1;
	/* Rows written before targets were stored redacted (a webhook URL
	 * with its secret path) take the form the caller shows now. */
	return store_exec(s, e, "update a sink's target", "UPDATE"
	    " alert_delivery SET target = ?2 WHERE sink = ?1 AND target != ?2",
	    "tt", sink, target);
}

void
store_alert_dues_release(struct store_alert_dues *d)
{
	for (size_t i = 0; i < d->n; i++)
		store_alert_release(&d->v[i].alert);
	free(d->v);
	d->v = NULL;
	d->n = 0;
}

int
store_alert_due(struct store *s, const char *sink, int64_t now, size_t max,
    struct store_alert_dues *out, struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	out->v = NULL;
	out->n = 0;
	if ((st = store_query(s, e, "SELECT a.id, a.created, a.kind, a.engine,"
	    " a.dedup_key, a.summary, a.body, d.attempts"
	    " FROM alert_delivery d JOIN alert a ON a.id = d.alert_id"
	    " WHERE d.sink = ?1 AND d.state = 'pending' AND d.next_at <= ?2"
	    " ORDER BY a.id LIMIT ?3", "tII", sink, now, (int64_t)max)) == NULL)
		return -1;
	if ((rc = store_rows(s, st, (void **)&out->v, &out->n,
	    sizeof(*out->v), due_row, "read the alerts due", e)) == STORE_NOMEM)
		err_set(e, "out of memory reading the alerts due");
	if (rc < 0)
		store_alert_dues_release(out);
	return rc < 0 ? -1 : 0;
}

int
store_alert_attempt_add(struct store *s, const struct store_alert_attempt *a,
    struct err *e)
{
	if (store_begin(s, e) < 0)
		return -1;
	if (store_exec(s, e, "store an alert attempt", "INSERT INTO"
	    " alert_attempt (alert_id, sink, at, ok, http_status, exit_code,"
	    " error, duration_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	    "ItIiootI", a->alert_id, a->sink, a->at, a->ok != 0,
	    (int64_t)a->http_status, (int64_t)a->exit_code,
	    a->ok ? NULL : a->error, a->duration_ms) < 0 ||
	    store_exec(s, e, "update an alert's delivery", "UPDATE"
	    " alert_delivery SET attempts = attempts + 1,"
	    " state = CASE WHEN ?3 THEN 'delivered' WHEN ?4 = 0 THEN 'failed'"
	    " ELSE 'pending' END,"
	    " next_at = CASE WHEN ?3 OR ?4 = 0 THEN next_at ELSE ?4 END,"
	    " delivered = CASE WHEN ?3 THEN ?5 ELSE delivered END"
	    " WHERE alert_id = ?1 AND sink = ?2", "ItiII", a->alert_id,
	    a->sink, a->ok != 0, a->ok ? 0 : a->next_at,
	    a->at + a->duration_ms / 1000) < 0) {
		store_rollback(s);
		return -1;
	}
	return store_commit(s, e);
}

int
store_alert_postpone(struct store *s, const char *sink, int64_t until,
    struct err *e)
{
	return store_exec(s, e, "postpone a sink's alerts", "UPDATE"
	    " alert_delivery SET next_at = ?2 WHERE sink = ?1 AND"
	    " state = 'pending' AND next_at < ?2", "tI", sink, until);
}

int
store_alert_next_due(struct store *s, const char *sink, int64_t *when,
    struct err *e)
{
	sqlite3_stmt *st;
	int rc, found = 0;

	if ((st = store_query(s, e, "SELECT min(next_at) FROM alert_delivery"
	    " WHERE sink = ?1 AND state = 'pending'", "t", sink)) == NULL)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		*when = sqlite3_column_int64(st, 0);
		found = 1;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return store_fail(s, e, "read when alerts are due");
	return found ? 0 : 1;
}

static void
sink_release(struct store_alert_sink *k)
{
	free(k->sink);
	free(k->target);
	free(k->state);
	for (size_t i = 0; i < k->ntries; i++)
		free(k->tries[i].error);
	free(k->tries);
}

void
store_alert_rows_release(struct store_alert_rows *r)
{
	for (size_t i = 0; i < r->n; i++) {
		store_alert_release(&r->v[i].alert);
		for (size_t j = 0; j < r->v[i].nsinks; j++)
			sink_release(&r->v[i].sinks[j]);
		free(r->v[i].sinks);
	}
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

/* The deliveries of one alert, each with its attempts. */
static int
load_sinks(struct store *s, struct store_alert_row *row, struct err *e)
{
	sqlite3_stmt *st, *at = NULL;
	size_t alloc = 0;
	int rc;

	if ((st = store_query(s, e, "SELECT sink, target, state, attempts,"
	    " next_at, coalesce(delivered, 0) FROM alert_delivery"
	    " WHERE alert_id = ?1 ORDER BY sink", "I", row->alert.id)) == NULL)
		return -1;
	if (store_prepare(s, "SELECT at, ok, coalesce(http_status, -1),"
	    " coalesce(exit_code, -1), error, duration_ms FROM alert_attempt"
	    " WHERE alert_id = ?1 AND sink = ?2 ORDER BY id", &at, e) < 0)
		goto fail;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_alert_sink *k;
		size_t talloc = 0;

		if (store_grow((void **)&row->sinks, &alloc, row->nsinks,
		    sizeof(*row->sinks)) < 0)
			goto nomem;
		k = &row->sinks[row->nsinks++];
		k->sink = store_column_dup(st, 0);
		k->target = store_column_dup(st, 1);
		k->state = store_column_dup(st, 2);
		k->attempts = sqlite3_column_int(st, 3);
		k->next_at = sqlite3_column_int64(st, 4);
		k->delivered = sqlite3_column_int64(st, 5);
		if (!k->sink || !k->target || !k->state)
			goto nomem;
		sqlite3_reset(at);
		sqlite3_bind_int64(at, 1, row->alert.id);
		store_bind_text(at, 2, k->sink);
		while ((rc = sqlite3_step(at)) == SQLITE_ROW) {
			struct store_alert_try *t;

			if (store_grow((void **)&k->tries, &talloc,
			    k->ntries, sizeof(*k->tries)) < 0)
				goto nomem;
			t = &k->tries[k->ntries++];
			t->at = sqlite3_column_int64(at, 0);
			t->ok = sqlite3_column_int(at, 1);
			t->http_status = (long)sqlite3_column_int64(at, 2);
			t->exit_code = sqlite3_column_int(at, 3);
			t->error = store_column_dup(at, 4);
			t->duration_ms = sqlite3_column_int64(at, 5);
		}
		if (rc != SQLITE_DONE) {
			store_fail(s, e, "read alert attempts");
			goto fail;
		}
	}
	if (rc != SQLITE_DONE) {
		store_fail(s, e, "read alert deliveries");
		goto fail;
	}
	sqlite3_finalize(st);
	sqlite3_finalize(at);
	return 0;
nomem:
	err_set(e, "out of memory reading alert deliveries");
fail:
	sqlite3_finalize(st);
	sqlite3_finalize(at);
	return -1;
}

int
store_alert_list(struct store *s, int limit, struct store_alert_rows *out,
    struct err *e)
{
	return store_alert_list_engine(s, NULL, limit, out, e);
}

int
store_alert_list_engine(struct store *s, const char *engine, int limit,
    struct store_alert_rows *out, struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	out->v = NULL;
	out->n = 0;
	if ((st = store_query(s, e, "SELECT id, created, kind, engine,"
	    " dedup_key, summary, body FROM alert WHERE ?2 IS NULL OR"
	    " engine = ?2 ORDER BY id DESC LIMIT ?1", "it", limit,
	    engine)) == NULL)
		return -1;
	if ((rc = store_rows(s, st, (void **)&out->v, &out->n,
	    sizeof(*out->v), alert_row, "read alerts", e)) == STORE_NOMEM)
		err_set(e, "out of memory reading alerts");
	for (size_t i = 0; rc == 0 && i < out->n; i++)
		rc = load_sinks(s, &out->v[i], e);
	if (rc < 0)
		store_alert_rows_release(out);
	return rc < 0 ? -1 : 0;
}

int
store_state_get(struct store *s, const char *key, char **value,
    int64_t *updated, struct err *e)
{
	int rc;

	*value = NULL;
	rc = store_first(s, e, "read a watch state", "SELECT value, updated"
	    " FROM watch_state WHERE key = ?1", "t", "tI", key, value, updated);
	if (rc == 0 && *value == NULL)
		return err_set(e, "out of memory reading '%s'", key);
	return rc;
}

int
store_state_set(struct store *s, const char *key, const char *value,
    struct err *e)
{
	return store_exec(s, e, "store a watch state", "INSERT INTO watch_state"
	    " (key, value, updated) VALUES (?1, ?2, ?3) ON CONFLICT (key) DO"
	    " UPDATE SET value = excluded.value, updated = excluded.updated",
	    "ttI", key, value, store_now());
}
