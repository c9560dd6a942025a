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

/* Step a statement that returns at most one job row (NULL: it could
 * not be prepared). */
static int
job_one(struct store *s, sqlite3_stmt *st, struct store_job *out,
    const char *what, struct err *e)
{
	int rc;

	if (st == NULL)
		return -1;
	rc = sqlite3_step(st);
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
	return job_one(s, store_query(s, e, "UPDATE job SET state = 'running',"
	    " started = coalesce(started, ?1), cancel_requested = 0"
	    " WHERE id = (SELECT id FROM job WHERE state = 'queued'"
	    " ORDER BY priority DESC, id LIMIT 1) RETURNING " STORE_JOB_COLUMNS,
	    "I", store_now()), out, "pick a job", e);
}

int
store_job_claim(struct store *s, int64_t id, struct store_job *out,
    struct err *e)
{
	return job_one(s, store_query(s, e, "UPDATE job SET state = 'running',"
	    " started = coalesce(started, ?1), cancel_requested = 0"
	    " WHERE id = ?2 AND state = 'queued' RETURNING " STORE_JOB_COLUMNS,
	    "II", store_now(), id), out, "take a job", e);
}

int
store_job_get(struct store *s, int64_t id, struct store_job *out,
    struct err *e)
{
	return job_one(s, store_query(s, e, "SELECT " STORE_JOB_COLUMNS
	    " FROM job WHERE id = ?1", "I", id), out, "read a job", e);
}

int
store_job_finish(struct store *s, int64_t id, const char *state,
    int exit_code, const char *result, struct err *e)
{
	return store_exec(s, e, "finish a job", "UPDATE job SET state = ?2,"
	    " exit_code = ?3, result = ?4, finished = ?5 WHERE id = ?1",
	    "ItitI", id, state, exit_code, result, store_now());
}

int
store_job_requeue(struct store *s, int64_t id, struct err *e)
{
	return store_exec(s, e, "requeue a job", "UPDATE job SET state ="
	    " 'queued' WHERE id = ?1 AND state = 'running'", "I", id);
}

int
store_job_recover(struct store *s, int *n, struct err *e)
{
	*n = 0;
	if (store_begin(s, e) < 0)
		return -1;
	if (store_exec(s, e, "recover jobs", "UPDATE job SET state ="
	    " 'cancelled', finished = ?1, exit_code = 1, result = 'cancelled'"
	    " WHERE state = 'running' AND cancel_requested", "I",
	    store_now()) < 0 ||
	    store_exec(s, e, "recover jobs", "UPDATE job SET state = 'queued'"
	    " WHERE state = 'running'", "") < 0) {
		store_rollback(s);
		return -1;
	}
	*n = sqlite3_changes(s->db);
	return store_commit(s, e);
}

/* Run an UPDATE of one job bound to id (?1) and, with types "II", now
 * (?2); *changed says whether it matched. */
static int
job_update(struct store *s, const char *sql, const char *types, int64_t id,
    int *changed, struct err *e)
{
	if (store_exec(s, e, "cancel a job", sql, types, id, store_now()) < 0)
		return -1;
	*changed = sqlite3_changes(s->db) > 0;
	return 0;
}

int
store_job_cancel(struct store *s, int64_t id, struct err *e)
{
	int changed, rc;

	/* Each step is one statement guarded by the state it expects, so a
	 * pick in between moves the job to the next step, never past it. */
	if (job_update(s, "UPDATE job SET state = 'cancelled', finished = ?2,"
	    " exit_code = 1, result = 'cancelled'"
	    " WHERE id = ?1 AND state = 'queued'", "II", id, &changed, e) < 0)
		return -1;
	if (changed)
		return STORE_CANCEL_DONE;
	if (job_update(s, "UPDATE job SET cancel_requested = 1"
	    " WHERE id = ?1 AND state = 'running'", "I", id, &changed,
	    e) < 0)
		return -1;
	if (changed)
		return STORE_CANCEL_RUNNING;
	if ((rc = store_first(s, e, "cancel a job", "SELECT 1 FROM job"
	    " WHERE id = ?1", "I", "", id)) < 0)
		return -1;
	return rc == 0 ? STORE_CANCEL_FINISHED : STORE_CANCEL_NONE;
}

int
store_job_cancel_requested(struct store *s, int64_t id, int *yes,
    struct err *e)
{
	int requested = 0;

	*yes = 0;
	if (store_first(s, e, "read a job's cancel request", "SELECT"
	    " cancel_requested FROM job WHERE id = ?1", "I", "i", id,
	    &requested) < 0)
		return -1;
	*yes = requested != 0;
	return 0;
}

int
store_schedule_last(struct store *s, const char *name, int64_t *when,
    struct err *e)
{
	return store_first(s, e, "read a schedule", "SELECT last_fire FROM"
	    " schedule_fire WHERE name = ?1", "t", "I", name, when);
}

int
store_schedule_set(struct store *s, const char *name, int64_t when,
    struct err *e)
{
	return store_exec(s, e, "record a schedule", "INSERT INTO schedule_fire"
	    " (name, last_fire) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE"
	    " SET last_fire = excluded.last_fire", "tI", name, when);
}
