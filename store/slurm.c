/*
 * slurm.c: the store's queries over measurements placed on Slurm: the
 * requests the daemon submitted, the batch jobs carrying them out, and
 * the mark that a result entered the store (see sql/009_slurm.sql).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/err.h"
#include "common/strv.h"
#include "slurm.h"
#include "store_int.h"

#define SLURM_COLUMNS "id, request, plan, coalesce(bisect_id, 0)," \
	" coalesce(job_id, 0), engine, runner, attempt," \
	" coalesce(slurm_id, 0), state, node, pinned, hw_key, failure," \
	" detail, submitted, updated, coalesce(ingested, 0)"

static int
slurm_row(sqlite3_stmt *st, void *elem)
{
	struct store_slurm_job *j = elem;

	j->id = sqlite3_column_int64(st, 0);
	j->request = store_column_dup(st, 1);
	j->plan = store_column_dup(st, 2);
	j->bisect_id = sqlite3_column_int64(st, 3);
	j->job_id = sqlite3_column_int64(st, 4);
	j->engine = store_column_dup(st, 5);
	j->runner = store_column_dup(st, 6);
	j->attempt = sqlite3_column_int(st, 7);
	j->slurm_id = sqlite3_column_int64(st, 8);
	j->state = store_column_dup(st, 9);
	j->node = store_column_dup(st, 10);
	j->pinned = store_column_dup(st, 11);
	j->hw_key = store_column_dup(st, 12);
	j->failure = store_column_dup(st, 13);
	j->detail = store_column_dup(st, 14);
	j->submitted = sqlite3_column_int64(st, 15);
	j->updated = sqlite3_column_int64(st, 16);
	j->ingested = sqlite3_column_int64(st, 17);
	return 0;
}

void
store_slurm_job_release(struct store_slurm_job *j)
{
	char *owned[] = { j->request, j->plan, j->engine, j->runner, j->state,
	    j->node, j->pinned, j->hw_key, j->failure, j->detail };

	strs_free(owned, sizeof(owned) / sizeof(owned[0]));
	memset(j, 0, sizeof(*j));
}

int
store_slurm_add(struct store *s, const struct store_slurm_job *j, int64_t *id,
    struct err *e)
{
	return store_one(s, e, "record a Slurm job", "INSERT INTO slurm_job"
	    " (request, plan, bisect_id, job_id, engine, runner, attempt,"
	    " state, pinned, submitted, updated) VALUES (?1, ?2, nullif(?3, 0),"
	    " nullif(?4, 0), ?5, ?6, ?7, 'submitting', ?8, ?9, ?9)"
	    " RETURNING id", "ttIIttitI", "I", j->request, j->plan,
	    j->bisect_id, j->job_id, j->engine, j->runner, j->attempt,
	    j->pinned, store_now(), id);
}

/* One UPDATE of a row by id, binding ?2.. from the strings given. */
static int
update(struct store *s, const char *sql, int64_t id, int64_t n,
    const char *a, const char *b, const char *what, struct err *e)
{
	return store_exec(s, e, what, sql, "IIttI", id, n, a, b, store_now());
}

int
store_slurm_submitted(struct store *s, int64_t id, int64_t slurm_id,
    struct err *e)
{
	return update(s, "UPDATE slurm_job SET slurm_id = ?2, state ="
	    " 'PENDING', updated = ?5 WHERE id = ?1", id, slurm_id, NULL, NULL,
	    "record a Slurm job id", e);
}

int
store_slurm_seen(struct store *s, int64_t id, const char *state,
    const char *node, struct err *e)
{
	return update(s, "UPDATE slurm_job SET state = ?3, node ="
	    " coalesce(?4, node), updated = ?5 WHERE id = ?1 AND state NOT IN"
	    " ('ingested', 'failed')", id, 0, state, node,
	    "record a Slurm job's state", e);
}

int
store_slurm_fail(struct store *s, int64_t id, const char *failure,
    const char *detail, struct err *e)
{
	return update(s, "UPDATE slurm_job SET state = 'failed', failure = ?3,"
	    " detail = ?4, updated = ?5 WHERE id = ?1 AND state <> 'ingested'",
	    id, 0, failure, detail, "record a Slurm job's failure", e);
}

/* Rows of a query with ?1 and ?2 bound, into out. */
static int
list(struct store *s, const char *sql, int64_t a, const char *b,
    struct store_slurm_jobs *out, struct err *e)
{
	sqlite3_stmt *st;

	memset(out, 0, sizeof(*out));
	if ((st = store_query(s, e, sql, "It", a, b)) == NULL)
		return -1;
	if (store_rows(s, st, (void **)&out->v, &out->n, sizeof(*out->v),
	    slurm_row, "list Slurm jobs", e) < 0) {
		store_slurm_jobs_release(out);
		return -1;
	}
	return 0;
}

/* The first row of a query, into out: 0, 1 if none, -1. */
static int
one(struct store *s, const char *sql, int64_t a, const char *b,
    struct store_slurm_job *out, struct err *e)
{
	struct store_slurm_jobs l;

	if (list(s, sql, a, b, &l, e) < 0)
		return -1;
	if (l.n == 0) {
		store_slurm_jobs_release(&l);
		return 1;
	}
	*out = l.v[0];
	memset(&l.v[0], 0, sizeof(l.v[0]));
	store_slurm_jobs_release(&l);
	return 0;
}

int
store_slurm_active(struct store *s, int64_t bisect_id, const char *plan,
    struct store_slurm_job *out, struct err *e)
{
	return one(s, "SELECT " SLURM_COLUMNS " FROM slurm_job WHERE"
	    " coalesce(bisect_id, 0) = ?1 AND plan = ?2 AND state NOT IN"
	    " ('ingested', 'failed') ORDER BY id DESC LIMIT 1", bisect_id,
	    plan, out, e);
}

int
store_slurm_get(struct store *s, const char *request,
    struct store_slurm_job *out, struct err *e)
{
	return one(s, "SELECT " SLURM_COLUMNS " FROM slurm_job WHERE"
	    " request = ?2 AND ?1 = ?1", 0, request, out, e);
}

/* The count a query with ?1 and ?2 bound gives, into *n. */
static int
count(struct store *s, const char *sql, int64_t a, const char *b, int *n,
    const char *what, struct err *e)
{
	*n = 0;
	return store_one(s, e, what, sql, "It", "i", a, b, n);
}

int
store_slurm_attempts(struct store *s, int64_t bisect_id, const char *plan,
    int *n, struct err *e)
{
	return count(s, "SELECT count(*) FROM slurm_job WHERE"
	    " coalesce(bisect_id, 0) = ?1 AND plan = ?2", bisect_id, plan, n,
	    "count Slurm jobs", e);
}

int
store_slurm_pin(struct store *s, int64_t bisect_id,
    struct store_slurm_job *out, struct err *e)
{
	/* The newest ingested job's node, unless a job of the bisect
	 * submitted after it failed on that node with the node's fault. */
	return one(s, "SELECT " SLURM_COLUMNS " FROM slurm_job AS i WHERE"
	    " coalesce(bisect_id, 0) = ?1 AND state = 'ingested' AND ?2 IS NULL"
	    " AND NOT EXISTS (SELECT 1 FROM slurm_job AS f WHERE"
	    " f.bisect_id = i.bisect_id AND f.id > i.id AND f.failure ="
	    " 'slurm-node-fail' AND f.node = i.node)"
	    " AND i.id = (SELECT max(id) FROM slurm_job WHERE"
	    " coalesce(bisect_id, 0) = ?1 AND state = 'ingested')",
	    bisect_id, NULL, out, e);
}

int
store_slurm_claim(struct store *s, int64_t id, const char *node,
    const char *hw_key, struct err *e)
{
	if (update(s, "UPDATE slurm_job SET state = 'ingested', node ="
	    " coalesce(?3, node), hw_key = ?4, ingested = ?5, updated = ?5"
	    " WHERE id = ?1 AND state <> 'ingested' AND ?2 = ?2", id, 0, node,
	    hw_key, "mark a Slurm job's result ingested", e) < 0)
		return -1;
	return sqlite3_changes(s->db) == 1 ? 0 : 1;
}

int
store_slurm_range_key(struct store *s, const char *engine, const char *good,
    const char *bad, char hw_key[65], struct err *e)
{
	char *key = NULL;
	int rc;

	/* The range's newest bisect's node, else the engine's newest. */
	if ((rc = store_first(s, e, "find a node's key", "SELECT j.hw_key FROM"
	    " slurm_job j LEFT JOIN bisect b ON b.id = j.bisect_id WHERE"
	    " j.engine = ?1 AND j.state = 'ingested' AND j.hw_key IS NOT NULL"
	    " ORDER BY (b.good = ?2 AND b.bad = ?3) DESC, j.id DESC LIMIT 1",
	    "ttt", "t", engine, good, bad, &key)) == 0)
		snprintf(hw_key, 65, "%s", key ? key : "");
	free(key);
	return rc;
}

int
store_slurm_list(struct store *s, int64_t job_id, int active,
    struct store_slurm_jobs *out, struct err *e)
{
	if (active)
		return list(s, "SELECT " SLURM_COLUMNS " FROM slurm_job WHERE"
		    " (?1 = 0 OR job_id = ?1) AND state NOT IN ('ingested',"
		    " 'failed') AND ?2 IS NULL ORDER BY id", job_id, NULL, out, e);
	return list(s, "SELECT " SLURM_COLUMNS " FROM slurm_job WHERE"
	    " (?1 = 0 OR job_id = ?1) AND ?2 IS NULL ORDER BY id", job_id,
	    NULL, out, e);
}

int
store_slurm_anchor(struct store *s, int64_t bisect_id, int *n, struct err *e)
{
	*n = 0;
	if (bisect_id == 0)
		return 0;
	return count(s, "SELECT count(*) FROM slurm_job WHERE bisect_id = ?1"
	    " AND failure = 'slurm-node-fail' AND ?2 IS NULL", bisect_id, NULL,
	    n, "count node failures", e);
}

int
store_slurm_range_jobs(struct store *s, const char *engine, const char *good,
    const char *bad, struct store_slurm_jobs *out, struct err *e)
{
	int64_t bisect_id = 0;

	out->v = NULL;
	out->n = 0;
	if (store_one(s, e, "find a range's bisect", "SELECT max(j.bisect_id)"
	    " FROM slurm_job j JOIN bisect b ON b.id = j.bisect_id WHERE"
	    " j.engine = ?1 AND b.good = ?2 AND b.bad = ?3", "ttt", "I", engine,
	    good, bad, &bisect_id) < 0)
		return -1;
	if (bisect_id == 0)
		return 0;
	return list(s, "SELECT " SLURM_COLUMNS " FROM slurm_job WHERE"
	    " bisect_id = ?1 AND ?2 IS NULL ORDER BY id", bisect_id, NULL,
	    out, e);
}

void
store_slurm_jobs_release(struct store_slurm_jobs *l)
{
	for (size_t i = 0; i < l->n; i++)
		store_slurm_job_release(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}
