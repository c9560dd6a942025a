/*
 * job_worker.c: the daemon's side of the job queue: picking the next job,
 * ending it, putting it back, cancels, recovery after a crash, and the
 * last fire time of each schedule.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/err.h"
#include "db.h"
#include "job.h"
#include "store_int.h"

/* Step a statement that returns at most one job row. */
static int
job_one(struct store *s, sqlite3_stmt *st, struct store_job *out,
    const char *what, struct err *e)
{
	int rc = sqlite3_step(st);

	memset(out, 0, sizeof(*out));
	if (rc == SQLITE_ROW) {
		store_job_row(st, out);
		sqlite3_finalize(st);
		if (out->kind == NULL || out->engine == NULL ||
		    out->args == NULL || out->state == NULL) {
			store_job_release(out);
			return err_set(e, "%s: out of memory", what);
		}
		return 0;
	}
	if (rc != SQLITE_DONE) {
		store_fail(s, e, what);
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return 1;
}

/*
 * A job's start is its first: one taken up again after a stop or a
 * kill -9 keeps it, so that its duration is the whole of its work, not
 * the last piece.
 */
int
store_job_pick(struct store *s, struct store_job *out, struct err *e)
{
	sqlite3_stmt *st;

	if (store_prepare(s, "UPDATE job SET state = 'running', started = coalesce(started, ?1),"
	    " cancel_requested = 0 WHERE id = (SELECT id FROM job"
	    " WHERE state = 'queued' ORDER BY priority DESC, id LIMIT 1)"
	    " RETURNING " STORE_JOB_COLUMNS, &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, store_now());
	return job_one(s, st, out, "pick a job", e);
}

int
store_job_claim(struct store *s, int64_t id, struct store_job *out,
    struct err *e)
{
	sqlite3_stmt *st;

	if (store_prepare(s, "UPDATE job SET state = 'running', started = coalesce(started, ?1),"
	    " cancel_requested = 0 WHERE id = ?2 AND state = 'queued'"
	    " RETURNING " STORE_JOB_COLUMNS, &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, store_now());
	sqlite3_bind_int64(st, 2, id);
	return job_one(s, st, out, "take a job", e);
}

int
store_job_get(struct store *s, int64_t id, struct store_job *out,
    struct err *e)
{
	sqlite3_stmt *st;

	if (store_prepare(s, "SELECT " STORE_JOB_COLUMNS " FROM job WHERE id = ?1",
	    &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	return job_one(s, st, out, "read a job", e);
}

int
store_job_finish(struct store *s, int64_t id, const char *state,
    int exit_code, const char *result, struct err *e)
{
	sqlite3_stmt *st;

	if (store_prepare(s, "UPDATE job SET state = ?2, exit_code = ?3,"
	    " result = ?4, finished = ?5 WHERE id = ?1", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	store_bind_text(st, 2, state);
	sqlite3_bind_int(st, 3, exit_code);
	store_bind_text(st, 4, result);
	sqlite3_bind_int64(st, 5, store_now());
	return store_step_done(s, st, "finish a job", e);
}

int
store_job_requeue(struct store *s, int64_t id, struct err *e)
{
	sqlite3_stmt *st;

	if (store_prepare(s, "UPDATE job SET state = 'queued' WHERE id = ?1"
	    " AND state = 'running'", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	return store_step_done(s, st, "requeue a job", e);
}

int
store_job_recover(struct store *s, int *n, struct err *e)
{
	sqlite3_stmt *st;

	*n = 0;
	if (store_begin(s, e) < 0)
		return -1;
	if (store_prepare(s, "UPDATE job SET state = 'cancelled',"
	    " finished = ?1, exit_code = 1, result = 'cancelled'"
	    " WHERE state = 'running' AND cancel_requested", &st, e) < 0)
		goto fail;
	sqlite3_bind_int64(st, 1, store_now());
	if (store_step_done(s, st, "recover jobs", e) < 0)
		goto fail;
	if (store_prepare(s, "UPDATE job SET state = 'queued'"
	    " WHERE state = 'running'", &st, e) < 0)
		goto fail;
	if (store_step_done(s, st, "recover jobs", e) < 0)
		goto fail;
	*n = sqlite3_changes(s->db);
	return store_commit(s, e);
fail:
	store_rollback(s);
	return -1;
}

/* Run an UPDATE of one job bound to id (?1) and now (?2); *changed says
 * whether it matched. */
static int
job_update(struct store *s, const char *sql, int64_t id, int *changed,
    struct err *e)
{
	sqlite3_stmt *st;

	if (store_prepare(s, sql, &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_bind_parameter_count(st) >= 2)
		sqlite3_bind_int64(st, 2, store_now());
	if (store_step_done(s, st, "cancel a job", e) < 0)
		return -1;
	*changed = sqlite3_changes(s->db) > 0;
	return 0;
}

int
store_job_cancel(struct store *s, int64_t id, struct err *e)
{
	sqlite3_stmt *st;
	int changed, rc;

	/* Each step is one statement guarded by the state it expects, so a
	 * pick in between moves the job to the next step, never past it. */
	if (job_update(s, "UPDATE job SET state = 'cancelled', finished = ?2,"
	    " exit_code = 1, result = 'cancelled'"
	    " WHERE id = ?1 AND state = 'queued'", id, &changed, e) < 0)
		return -1;
	if (changed)
		return STORE_CANCEL_DONE;
	if (job_update(s, "UPDATE job SET cancel_requested = 1"
	    " WHERE id = ?1 AND state = 'running'", id, &changed, e) < 0)
		return -1;
	if (changed)
		return STORE_CANCEL_RUNNING;
	if (store_prepare(s, "SELECT 1 FROM job WHERE id = ?1", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return STORE_CANCEL_FINISHED;
	if (rc == SQLITE_DONE)
		return STORE_CANCEL_NONE;
	return store_fail(s, e, "cancel a job");
}

int
store_job_cancel_requested(struct store *s, int64_t id, int *yes,
    struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	*yes = 0;
	if (store_prepare(s, "SELECT cancel_requested FROM job WHERE id = ?1",
	    &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*yes = sqlite3_column_int(st, 0) != 0;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(s, e, "read a job's cancel request");
	return 0;
}

int
store_schedule_last(struct store *s, const char *name, int64_t *when,
    struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	if (store_prepare(s, "SELECT last_fire FROM schedule_fire"
	    " WHERE name = ?1", &st, e) < 0)
		return -1;
	store_bind_text(st, 1, name);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*when = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE)
		return 1;
	return store_fail(s, e, "read a schedule");
}

int
store_schedule_set(struct store *s, const char *name, int64_t when,
    struct err *e)
{
	sqlite3_stmt *st;

	if (store_prepare(s, "INSERT INTO schedule_fire (name, last_fire)"
	    " VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE"
	    " SET last_fire = excluded.last_fire", &st, e) < 0)
		return -1;
	store_bind_text(st, 1, name);
	sqlite3_bind_int64(st, 2, when);
	return store_step_done(s, st, "record a schedule", e);
}
