/*
 * ablation.c: the store's side of ablations: the ablation rows, the
 * samples of each of their variants, and the newest finished report.
 * The runs themselves are stored by run.c, tagged with their ablation.
 */
#include <sqlite3.h>

#include "common/err.h"
#include "summary.h"
#include "ablation.h"
#include "store_int.h"

int
store_ablation_open(struct store *s, int64_t job_id, int64_t engine_id,
    int64_t release_id, int64_t *id, struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	if (store_prepare(s, "INSERT INTO ablation (job_id, engine_id,"
	    " release_id, created) VALUES (?1, ?2, ?3, ?4) RETURNING id", &st,
	    e) < 0)
		return -1;
	store_bind_opt_int(st, 1, job_id > 0 ? job_id : -1);
	sqlite3_bind_int64(st, 2, engine_id);
	sqlite3_bind_int64(st, 3, release_id);
	sqlite3_bind_int64(st, 4, store_now());
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	else
		store_fail(s, e, "record an ablation");
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

int
store_ablation_finish(struct store *s, int64_t id, const char *state,
    const char *status, const char *result, struct err *e)
{
	sqlite3_stmt *st;

	if (store_prepare(s, "UPDATE ablation SET state = ?2, status = ?3,"
	    " result = ?4, finished = ?5 WHERE id = ?1", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	store_bind_text(st, 2, state);
	store_bind_text(st, 3, status);
	store_bind_text(st, 4, result);
	sqlite3_bind_int64(st, 5, store_now());
	return store_step_done(s, st, "finish an ablation", e);
}

int
store_ablation_points(struct store *s, int64_t ablation_id,
    const char *variant, int prompt_tokens, const char *def_key,
    struct store_points *out, struct err *e)
{
	sqlite3_stmt *st;

	out->v = NULL;
	out->n = 0;
	/* The definition's clock, as for any cell: never one figure
	 * standing in for another. */
	if (store_prepare(s, "SELECT CASE d.clock WHEN 'engine' THEN"
	    " x.engine_ns ELSE x.wall_ns END AS t, r.id, r.confirm, r.busy,"
	    " d.clock = 'ttft' FROM ablation_run a"
	    " JOIN run r ON r.id = a.run_id"
	    " JOIN definition d ON d.id = r.definition_id"
	    " JOIN sample x ON x.run_id = r.id"
	    " WHERE a.ablation_id = ?1 AND a.variant = ?2 AND r.kind = 'pp'"
	    " AND r.prompt_tokens = ?3 AND r.warmup = 0 AND r.failure IS NULL"
	    " AND r.throttled = 0 AND d.key = ?4 AND t IS NOT NULL"
	    " ORDER BY r.id, x.idx", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, ablation_id);
	store_bind_text(st, 2, variant);
	sqlite3_bind_int(st, 3, prompt_tokens);
	store_bind_text(st, 4, def_key);
	return store_points_read(s, st, out, e);
}

int
store_ablation_failures(struct store *s, int64_t ablation_id,
    const char *variant, int64_t *n, char **failure, char **detail,
    char **stderr_tail, struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	*n = 0;
	*failure = *detail = *stderr_tail = NULL;
	if (store_prepare(s, "SELECT r.failure, r.failure_detail, count(*)"
	    " OVER (), r.stderr_tail FROM ablation_run a"
	    " JOIN run r ON r.id = a.run_id"
	    " WHERE a.ablation_id = ?1 AND a.variant = ?2"
	    " AND r.failure IS NOT NULL ORDER BY r.id DESC LIMIT 1", &st,
	    e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, ablation_id);
	store_bind_text(st, 2, variant);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*failure = store_column_dup(st, 0);
		*detail = store_column_dup(st, 1);
		*n = sqlite3_column_int64(st, 2);
		*stderr_tail = store_column_dup(st, 3);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(s, e, "read an ablation's failed runs");
	return 0;
}

/*
 * The first column of the newest ablation of release_id in state, into
 * *id or (malloced) *text; both left 0 / NULL when there is none.
 */
static int
newest(struct store *s, int64_t release_id, const char *state, int64_t *id,
    char **text, struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	if (store_prepare(s, text ? "SELECT result FROM ablation WHERE"
	    " release_id = ?1 AND state = ?2 ORDER BY id DESC LIMIT 1" :
	    "SELECT id FROM ablation WHERE release_id = ?1 AND state = ?2"
	    " ORDER BY id DESC LIMIT 1", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, release_id);
	store_bind_text(st, 2, state);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && text)
		*text = store_column_dup(st, 0);
	else if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 :
	    store_fail(s, e, "read an ablation");
}

int
store_ablation_unfinished(struct store *s, int64_t release_id, int64_t *id,
    struct err *e)
{
	*id = 0;
	return newest(s, release_id, "running", id, NULL, e);
}

int
store_ablation_latest(struct store *s, int64_t release_id, char **json,
    struct err *e)
{
	*json = NULL;
	return newest(s, release_id, "done", NULL, json, e);
}
