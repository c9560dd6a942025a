/*
 * job.c: the store's queries over the job queue that bisectctl fills and
 * the daemon empties.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/err.h"
#include "common/strv.h"
#include "db.h"
#include "job.h"
#include "store_int.h"

int
store_job_enqueue(struct store *s, const char *kind, const char *engine,
    const char *args, int priority, int64_t *id, struct err *e)
{
	return store_one(s, e, "queue a job", "INSERT INTO job (kind, engine,"
	    " args, priority, created) VALUES (?1, ?2, ?3, ?4, ?5)"
	    " RETURNING id", "tttiI", "I", kind, engine, args, priority,
	    store_now(), id);
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
	char *owned[] = { j->kind, j->engine, j->args, j->state, j->result };

	strs_free(owned, sizeof(owned) / sizeof(owned[0]));
	memset(j, 0, sizeof(*j));
}

static int
job_row(sqlite3_stmt *st, void *j)
{
	store_job_row(st, j);
	return 0;
}

/* Append the rows of st (STORE_JOB_COLUMNS; NULL: it could not be
 * prepared) to out; finalizes st. */
static int
job_rows(struct store *s, sqlite3_stmt *st, struct store_jobs *out,
    struct err *e)
{
	if (st == NULL)
		return -1;
	if (store_rows(s, st, (void **)&out->v, &out->n, sizeof(*out->v),
	    job_row, "list jobs", e) < 0) {
		store_jobs_release(out);
		return -1;
	}
	return 0;
}

int
store_job_list(struct store *s, int recent, struct store_jobs *out,
    struct err *e)
{
	out->v = NULL;
	out->n = 0;
	return job_rows(s, store_query(s, e, "SELECT " STORE_JOB_COLUMNS
	    " FROM ( SELECT *, 0 AS grp FROM job WHERE state IN ('queued',"
	    " 'running') UNION ALL SELECT * FROM (SELECT *, 1 AS grp FROM job"
	    " WHERE state NOT IN ('queued', 'running')"
	    " ORDER BY finished DESC, id DESC LIMIT ?1))"
	    " ORDER BY grp, state = 'queued', priority DESC, id", "i", recent),
	    out, e);
}

int
store_job_recent(struct store *s, int64_t limit, struct store_jobs *out,
    int64_t *total, struct err *e)
{
	out->v = NULL;
	out->n = 0;
	*total = 0;
	if (store_one(s, e, "count jobs", "SELECT count(*) FROM job", "", "I",
	    total) < 0)
		return -1;
	return job_rows(s, store_query(s, e, "SELECT " STORE_JOB_COLUMNS
	    " FROM job ORDER BY id DESC LIMIT ?1", "I", limit), out, e);
}

int
store_job_prune(struct store *s, int64_t before, int64_t *n, struct err *e)
{
	*n = 0;
	if (store_begin(s, e) < 0)
		return -1;
	/* A bisect outlives its job: it is the record of what was
	 * measured, and a report reads it. */
	if (store_exec(s, e, "prune jobs", "UPDATE bisect SET job_id = NULL"
	    " WHERE job_id IN (SELECT id FROM job WHERE state NOT IN ('queued',"
	    " 'running') AND finished < ?1)", "I", before) < 0 ||
	    store_exec(s, e, "prune jobs", "DELETE FROM job WHERE state NOT IN"
	    " ('queued', 'running') AND finished < ?1", "I", before) < 0) {
		store_rollback(s);
		return -1;
	}
	*n = sqlite3_changes(s->db);
	return store_commit(s, e);
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
