/*
 * alert_log.c: the store's side of alert delivery: which alert each sink
 * still owes, every attempt, the listing `bisectctl alerts` shows, and
 * the small named values the watch and the yardstick check keep.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/err.h"
#include "db.h"
#include "alert_log.h"
#include "store_int.h"

void
store_alert_release(struct store_alert *a)
{
	free(a->kind);
	free(a->engine);
	free(a->dedup_key);
	free(a->summary);
	free(a->body);
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

int
store_alert_enlist(struct store *s, const char *sink, const char *target,
    int64_t since, int64_t due_at, struct err *e)
{
	sqlite3_stmt *st;

	if (store_prepare(s, "INSERT INTO alert_delivery (alert_id, sink,"
	    " target, next_at) SELECT id, ?1, ?2, ?3 FROM alert"
	    " WHERE created >= ?4 AND id NOT IN"
	    " (SELECT alert_id FROM alert_delivery WHERE sink = ?1)",
	    &st, e) < 0)
		return -1;
	store_bind_text(st, 1, sink);
	store_bind_text(st, 2, target);
	sqlite3_bind_int64(st, 3, due_at);
	sqlite3_bind_int64(st, 4, since);
	if (store_step_done(s, st, "list the alerts a sink owes", e) < 0)
		return -1;
	/* Rows written before targets were stored redacted (a webhook URL
	 * with its secret path) take the form the caller shows now. */
	if (store_prepare(s, "UPDATE alert_delivery SET target = ?2"
	    " WHERE sink = ?1 AND target != ?2", &st, e) < 0)
		return -1;
	store_bind_text(st, 1, sink);
	store_bind_text(st, 2, target);
	return store_step_done(s, st, "update a sink's target", e);
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
	size_t alloc = 0;
	int rc;

	out->v = NULL;
	out->n = 0;
	if (store_prepare(s, "SELECT a.id, a.created, a.kind, a.engine,"
	    " a.dedup_key, a.summary, a.body, d.attempts"
	    " FROM alert_delivery d JOIN alert a ON a.id = d.alert_id"
	    " WHERE d.sink = ?1 AND d.state = 'pending' AND d.next_at <= ?2"
	    " ORDER BY a.id LIMIT ?3", &st, e) < 0)
		return -1;
	store_bind_text(st, 1, sink);
	sqlite3_bind_int64(st, 2, now);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)max);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (store_grow((void **)&out->v, &alloc, out->n,
		    sizeof(*out->v)) < 0 ||
		    read_alert(st, &out->v[out->n].alert) < 0) {
			err_set(e, "out of memory reading the alerts due");
			goto fail;
		}
		out->v[out->n].attempts = sqlite3_column_int(st, 7);
		out->n++;
	}
	if (rc != SQLITE_DONE) {
		store_fail(s, e, "read the alerts due");
		goto fail;
	}
	sqlite3_finalize(st);
	return 0;
fail:
	sqlite3_finalize(st);
	store_alert_dues_release(out);
	return -1;
}

int
store_alert_attempt_add(struct store *s, const struct store_alert_attempt *a,
    struct err *e)
{
	sqlite3_stmt *st;

	if (store_begin(s, e) < 0)
		return -1;
	if (store_prepare(s, "INSERT INTO alert_attempt (alert_id, sink, at,"
	    " ok, http_status, exit_code, error, duration_ms)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", &st, e) < 0)
		goto fail;
	sqlite3_bind_int64(st, 1, a->alert_id);
	store_bind_text(st, 2, a->sink);
	sqlite3_bind_int64(st, 3, a->at);
	sqlite3_bind_int(st, 4, a->ok != 0);
	store_bind_opt_int(st, 5, a->http_status);
	store_bind_opt_int(st, 6, a->exit_code);
	store_bind_text(st, 7, a->ok ? NULL : a->error);
	sqlite3_bind_int64(st, 8, a->duration_ms);
	if (store_step_done(s, st, "store an alert attempt", e) < 0)
		goto fail;
	if (store_prepare(s, "UPDATE alert_delivery SET attempts = attempts + 1,"
	    " state = CASE WHEN ?3 THEN 'delivered' WHEN ?4 = 0 THEN 'failed'"
	    " ELSE 'pending' END,"
	    " next_at = CASE WHEN ?3 OR ?4 = 0 THEN next_at ELSE ?4 END,"
	    " delivered = CASE WHEN ?3 THEN ?5 ELSE delivered END"
	    " WHERE alert_id = ?1 AND sink = ?2", &st, e) < 0)
		goto fail;
	sqlite3_bind_int64(st, 1, a->alert_id);
	store_bind_text(st, 2, a->sink);
	sqlite3_bind_int(st, 3, a->ok != 0);
	sqlite3_bind_int64(st, 4, a->ok ? 0 : a->next_at);
	sqlite3_bind_int64(st, 5, a->at + a->duration_ms / 1000);
	if (store_step_done(s, st, "update an alert's delivery", e) < 0)
		goto fail;
	return store_commit(s, e);
fail:
	store_rollback(s);
	return -1;
}

int
store_alert_postpone(struct store *s, const char *sink, int64_t until,
    struct err *e)
{
	sqlite3_stmt *st;

	if (store_prepare(s, "UPDATE alert_delivery SET next_at = ?2"
	    " WHERE sink = ?1 AND state = 'pending' AND next_at < ?2",
	    &st, e) < 0)
		return -1;
	store_bind_text(st, 1, sink);
	sqlite3_bind_int64(st, 2, until);
	return store_step_done(s, st, "postpone a sink's alerts", e);
}

int
store_alert_next_due(struct store *s, const char *sink, int64_t *when,
    struct err *e)
{
	sqlite3_stmt *st;
	int rc, found = 0;

	if (store_prepare(s, "SELECT min(next_at) FROM alert_delivery"
	    " WHERE sink = ?1 AND state = 'pending'", &st, e) < 0)
		return -1;
	store_bind_text(st, 1, sink);
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

	if (store_prepare(s, "SELECT sink, target, state, attempts, next_at,"
	    " coalesce(delivered, 0) FROM alert_delivery WHERE alert_id = ?1"
	    " ORDER BY sink", &st, e) < 0)
		return -1;
	if (store_prepare(s, "SELECT at, ok, coalesce(http_status, -1),"
	    " coalesce(exit_code, -1), error, duration_ms FROM alert_attempt"
	    " WHERE alert_id = ?1 AND sink = ?2 ORDER BY id", &at, e) < 0)
		goto fail;
	sqlite3_bind_int64(st, 1, row->alert.id);
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
	size_t alloc = 0;
	int rc;

	out->v = NULL;
	out->n = 0;
	if (store_prepare(s, "SELECT id, created, kind, engine, dedup_key,"
	    " summary, body FROM alert WHERE ?2 IS NULL OR engine = ?2"
	    " ORDER BY id DESC LIMIT ?1", &st, e) < 0)
		return -1;
	sqlite3_bind_int(st, 1, limit);
	if (engine)
		store_bind_text(st, 2, engine);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (store_grow((void **)&out->v, &alloc, out->n,
		    sizeof(*out->v)) < 0 ||
		    read_alert(st, &out->v[out->n].alert) < 0) {
			err_set(e, "out of memory reading alerts");
			goto fail;
		}
		out->n++;
	}
	if (rc != SQLITE_DONE) {
		store_fail(s, e, "read alerts");
		goto fail;
	}
	sqlite3_finalize(st);
	st = NULL;
	for (size_t i = 0; i < out->n; i++)
		if (load_sinks(s, &out->v[i], e) < 0)
			goto fail;
	return 0;
fail:
	sqlite3_finalize(st);
	store_alert_rows_release(out);
	return -1;
}

int
store_state_get(struct store *s, const char *key, char **value,
    int64_t *updated, struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	*value = NULL;
	if (store_prepare(s, "SELECT value, updated FROM watch_state"
	    " WHERE key = ?1", &st, e) < 0)
		return -1;
	store_bind_text(st, 1, key);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if ((*value = store_column_dup(st, 0)) == NULL) {
			sqlite3_finalize(st);
			return err_set(e, "out of memory reading '%s'", key);
		}
		if (updated)
			*updated = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return 1;
	if (rc != SQLITE_ROW)
		return store_fail(s, e, "read a watch state");
	return 0;
}

int
store_state_set(struct store *s, const char *key, const char *value,
    struct err *e)
{
	sqlite3_stmt *st;

	if (store_prepare(s, "INSERT INTO watch_state (key, value, updated)"
	    " VALUES (?1, ?2, ?3) ON CONFLICT (key) DO UPDATE SET"
	    " value = excluded.value, updated = excluded.updated", &st, e) < 0)
		return -1;
	store_bind_text(st, 1, key);
	store_bind_text(st, 2, value);
	sqlite3_bind_int64(st, 3, store_now());
	return store_step_done(s, st, "store a watch state", e);
}
