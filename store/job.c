/*
 * job.c: the store's queries over the job queue that bisectctl fills and
 * the daemon empties.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/err.h"
#include "db.h"
#include "job.h"
#include "store_int.h"

int
store_job_enqueue(struct store *s, const char *kind, const char *engine,
    const char *args, int priority, int64_t *id, struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	if (store_prepare(s, "INSERT INTO job (kind, engine, args, priority,"
	    " created) VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id", &st, e) < 0)
		return -1;
	store_bind_text(st, 1, kind);
	store_bind_text(st, 2, engine);
	store_bind_text(st, 3, args);
	sqlite3_bind_int(st, 4, priority);
	sqlite3_bind_int64(st, 5, store_now());
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : store_fail(s, e, "queue a job");
}

void
store_job_row(sqlite3_stmt *st, struct store_job *j)
{
	j->id = sqlite3_column_int64(st, 0);
	j->kind = store_column_dup(st, 1);
	j->engine = store_column_dup(st, 2);
	j->args = store_column_dup(st, 3);
	j->priority = sqlite3_column_int(st, 4);
	j->state = store_column_dup(st, 5);
	j->created = sqlite3_column_int64(st, 6);
	j->started = sqlite3_column_int64(st, 7);
	j->finished = sqlite3_column_int64(st, 8);
	j->exit_code = sqlite3_column_int(st, 9);
	j->result = store_column_dup(st, 10);
}

void
store_job_release(struct store_job *j)
{
	free(j->kind);
	free(j->engine);
	free(j->args);
	free(j->state);
	free(j->result);
	memset(j, 0, sizeof(*j));
}

/* Append the rows of st (STORE_JOB_COLUMNS) to out; finalizes st. */
static int
job_rows(struct store *s, sqlite3_stmt *st, struct store_jobs *out,
    struct err *e)
{
	size_t alloc = 0;
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (store_grow((void **)&out->v, &alloc, out->n,
		    sizeof(*out->v)) < 0) {
			sqlite3_finalize(st);
			store_jobs_release(out);
			return err_set(e, "out of memory");
		}
		store_job_row(st, &out->v[out->n++]);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		store_jobs_release(out);
		return store_fail(s, e, "list jobs");
	}
	return 0;
}

int
store_job_list(struct store *s, int recent, struct store_jobs *out,
    struct err *e)
{
	sqlite3_stmt *st;

	out->v = NULL;
	out->n = 0;
	if (store_prepare(s, "SELECT " STORE_JOB_COLUMNS " FROM ("
	    " SELECT *, 0 AS grp FROM job WHERE state IN ('queued', 'running')"
	    " UNION ALL SELECT * FROM (SELECT *, 1 AS grp FROM job"
	    " WHERE state NOT IN ('queued', 'running')"
	    " ORDER BY finished DESC, id DESC LIMIT ?1))"
	    " ORDER BY grp, state = 'queued', priority DESC, id", &st, e) < 0)
		return -1;
	sqlite3_bind_int(st, 1, recent);
	return job_rows(s, st, out, e);
}

int
store_job_recent(struct store *s, int64_t limit, struct store_jobs *out,
    int64_t *total, struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	out->v = NULL;
	out->n = 0;
	*total = 0;
	if (store_prepare(s, "SELECT count(*) FROM job", &st, e) < 0)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*total = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return store_fail(s, e, "count jobs");
	if (store_prepare(s, "SELECT " STORE_JOB_COLUMNS " FROM job"
	    " ORDER BY id DESC LIMIT ?1", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, limit);
	return job_rows(s, st, out, e);
}

int
store_job_prune(struct store *s, int64_t before, int64_t *n, struct err *e)
{
	sqlite3_stmt *st;

	*n = 0;
	if (store_begin(s, e) < 0)
		return -1;
	/* A bisect outlives its job: it is the record of what was
	 * measured, and a report reads it. */
	if (store_prepare(s, "UPDATE bisect SET job_id = NULL WHERE job_id IN"
	    " (SELECT id FROM job WHERE state NOT IN ('queued', 'running')"
	    " AND finished < ?1)", &st, e) < 0)
		goto fail;
	sqlite3_bind_int64(st, 1, before);
	if (store_step_done(s, st, "prune jobs", e) < 0)
		goto fail;
	if (store_prepare(s, "DELETE FROM job WHERE state NOT IN ('queued',"
	    " 'running') AND finished < ?1", &st, e) < 0)
		goto fail;
	sqlite3_bind_int64(st, 1, before);
	if (store_step_done(s, st, "prune jobs", e) < 0)
		goto fail;
	*n = sqlite3_changes(s->db);
	return store_commit(s, e);
fail:
	store_rollback(s);
	return -1;
}

void
store_jobs_release(struct store_jobs *jobs)
{
	for (size_t i = 0; i < jobs->n; i++)
		store_job_release(&jobs->v[i]);
	free(jobs->v);
	jobs->v = NULL;
	jobs->n = 0;
}
