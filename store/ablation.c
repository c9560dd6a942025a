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
	return store_one(s, e, "record an ablation", "INSERT INTO ablation"
	    " (job_id, engine_id, release_id, created) VALUES (?1, ?2, ?3, ?4)"
	    " RETURNING id", "oIII", "I", job_id > 0 ? job_id : -1, engine_id,
	    release_id, store_now(), id);
}

int
store_ablation_finish(struct store *s, int64_t id, const char *state,
    const char *status, const char *result, struct err *e)
{
	return store_exec(s, e, "finish an ablation", "UPDATE ablation SET"
	    " state = ?2, status = ?3, result = ?4, finished = ?5"
	    " WHERE id = ?1", "ItttI", id, state, status, result, store_now());
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
	if ((st = store_query(s, e, "SELECT CASE d.clock WHEN 'engine' THEN"
	    " x.engine_ns ELSE x.wall_ns END AS t, r.id, r.confirm, r.busy,"
	    " d.clock = 'ttft' FROM ablation_run a"
	    " JOIN run r ON r.id = a.run_id"
	    " JOIN definition d ON d.id = r.definition_id"
	    " JOIN sample x ON x.run_id = r.id"
	    " WHERE a.ablation_id = ?1 AND a.variant = ?2 AND r.kind = 'pp'"
	    " AND r.prompt_tokens = ?3 AND r.warmup = 0 AND r.failure IS NULL"
	    " AND r.throttled = 0 AND d.key = ?4 AND t IS NOT NULL"
	    " ORDER BY r.id, x.idx", "Itit", ablation_id, variant,
	    prompt_tokens, def_key)) == NULL)
		return -1;
	return store_points_read(s, st, out, e);
}

int
store_ablation_failures(struct store *s, int64_t ablation_id,
    const char *variant, int64_t *n, char **failure, char **detail,
    char **stderr_tail, struct err *e)
{
	*n = 0;
	*failure = *detail = *stderr_tail = NULL;
	if (store_first(s, e, "read an ablation's failed runs", "SELECT"
	    " r.failure, r.failure_detail, count(*) OVER (), r.stderr_tail"
	    " FROM ablation_run a JOIN run r ON r.id = a.run_id"
	    " WHERE a.ablation_id = ?1 AND a.variant = ?2"
	    " AND r.failure IS NOT NULL ORDER BY r.id DESC LIMIT 1", "It",
	    "ttIt", ablation_id, variant, failure, detail, n,
	    stderr_tail) < 0)
		return -1;
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
	int rc;

	if (text)
		rc = store_first(s, e, "read an ablation", "SELECT result FROM"
		    " ablation WHERE release_id = ?1 AND state = ?2 ORDER BY"
		    " id DESC LIMIT 1", "It", "t", release_id, state, text);
	else
		rc = store_first(s, e, "read an ablation", "SELECT id FROM"
		    " ablation WHERE release_id = ?1 AND state = ?2 ORDER BY"
		    " id DESC LIMIT 1", "It", "I", release_id, state, id);
	return rc < 0 ? -1 : 0;
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
