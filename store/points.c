/*
 * points.c: the store's queries for analysis (the samples of one cell
 * under the comparability rule), for listing and re-parsing stored runs,
 * and for bisects and their probes.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/err.h"
#include "common/strv.h"
#include "db.h"
#include "canary.h"
#include "points.h"
#include "store_int.h"

#define CELL_FROM \
	" FROM run r JOIN weights w ON w.id = r.weights_id" \
	" JOIN machine m ON m.id = r.machine_id" \
	" JOIN definition d ON d.id = r.definition_id"
/* A release's runs and those of every release of its engine whose
 * archive has the same sha256: identical archives are identical
 * binaries, measured once. */
#define CELL_WHERE \
	" WHERE r.release_id IN (SELECT ?1 UNION SELECT t.id FROM release t" \
	" JOIN release o ON o.engine_id = t.engine_id" \
	" AND o.archive_sha256 = t.archive_sha256 WHERE o.id = ?1)" \
	" AND w.sha256 = ?2 AND m.hw_key = ?3" \
	" AND r.kind = ?4 AND r.prompt_tokens = ?5 AND r.gen_tokens = ?6" \
	" AND r.content = ?7 AND d.key = ?8"
/* The figure a sample gives under its run's definition: never one
 * clock standing in for another. */
#define CELL_TIME \
	" CASE d.clock WHEN 'engine' THEN x.engine_ns ELSE x.wall_ns END"

/* The types and arguments of CELL_WHERE's parameters for store_query(). */
#define CELL_TYPES "Itttiitt"
#define CELL_ARGS(q) (q)->release_id, (q)->weights_sha256, (q)->hw_key, \
	(q)->kind, (q)->prompt_tokens, (q)->gen_tokens, \
	(q)->content ? (q)->content : "", (q)->definition

static int
point_row(sqlite3_stmt *st, void *elem)
{
	struct store_point *p = elem;

	p->time_ns = sqlite3_column_int64(st, 0);
	p->run_id = sqlite3_column_int64(st, 1);
	p->confirm = sqlite3_column_int(st, 2);
	p->busy = sqlite3_column_int(st, 3);
	p->lower_bound = sqlite3_column_int(st, 4);
	p->idx = sqlite3_column_int(st, 5);
	p->gpu_sm_mhz = 0;
	p->gpu_energy_j = -1;
	p->gpu_mem_peak = -1;
	p->max_rss_kb = -1;
	return 0;
}

int
store_points_read(struct store *s, sqlite3_stmt *st, struct store_points *out,
    struct err *e)
{
	out->v = NULL;
	out->n = 0;
	if (store_rows(s, st, (void **)&out->v, &out->n, sizeof(*out->v),
	    point_row, "read samples", e) < 0) {
		store_points_release(out);
		return -1;
	}
	return 0;
}

int
store_cell_points(struct store *s, const struct store_cell_query *q,
    struct store_points *out, struct err *e)
{
	sqlite3_stmt *st;

	out->v = NULL;
	out->n = 0;
	if ((st = store_query(s, e, "SELECT" CELL_TIME ", r.id, r.confirm,"
	    " r.busy, d.clock = 'ttft', x.idx" CELL_FROM " JOIN sample x ON"
	    " x.run_id = r.id" CELL_WHERE " AND r.warmup = 0 AND r.failure IS"
	    " NULL AND r.throttled = 0 AND" CELL_TIME " IS NOT NULL ORDER BY"
	    " r.id, x.idx", CELL_TYPES, CELL_ARGS(q))) == NULL)
		return -1;
	return store_points_read(s, st, out, e);
}

void
store_points_release(struct store_points *p)
{
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

int
store_cell_failures(struct store *s, const struct store_cell_query *q,
    int *count, struct err *e)
{
	return store_one(s, e, "count failed runs", "SELECT count(*)" CELL_FROM
	    CELL_WHERE " AND r.failure IS NOT NULL", CELL_TYPES, "i",
	    CELL_ARGS(q), count);
}

int
store_cell_outcomes(struct store *s, const struct store_cell_query *q,
    int *ok, int *bad, struct err *e)
{
	/* A run that succeeded without a sample is as bad as a failed one:
	 * it never counts toward the repetitions asked for. */
	return store_one(s, e, "count runs", "SELECT coalesce(sum(r.warmup = 0"
	    " AND r.failure IS NULL AND EXISTS (SELECT 1 FROM sample x WHERE"
	    " x.run_id = r.id AND" CELL_TIME " IS NOT NULL)), 0),"
	    " coalesce(sum(r.failure IS NOT NULL OR (r.warmup = 0 AND NOT"
	    " EXISTS (SELECT 1 FROM sample x WHERE x.run_id = r.id AND"
	    CELL_TIME " IS NOT NULL))), 0)" CELL_FROM CELL_WHERE, CELL_TYPES,
	    "ii", CELL_ARGS(q), ok, bad);
}

static char *
blob_dup(sqlite3_stmt *st, int i, size_t *len)
{
	const void *p = sqlite3_column_blob(st, i);
	int n = sqlite3_column_bytes(st, i);
	char *c;

	*len = 0;
	if (p == NULL)
		return NULL;
	if ((c = malloc((size_t)n + 1)) == NULL)
		return NULL;
	memcpy(c, p, (size_t)n);
	c[n] = '\0';
	*len = (size_t)n;
	return c;
}

static double
opt_double(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 :
	    sqlite3_column_double(st, i);
}

/* A run's GPU figures from column i on, as bind_gpu() stored them. */
static void
read_gpu(sqlite3_stmt *st, int i, struct store_run_gpu *g)
{
	g->samples = (int)store_column_opt_int(st, i);
	if (g->samples < 0)
		g->samples = 0;
	g->sm_mhz = opt_double(st, i + 1);
	g->mem_mhz = opt_double(st, i + 2);
	g->temp_max_c = (int)store_column_opt_int(st, i + 3);
	g->power_w = opt_double(st, i + 4);
	g->util_pct = opt_double(st, i + 5);
	g->throttle = store_column_opt_int(st, i + 6);
	g->mem_peak = store_column_opt_int(st, i + 7);
	g->energy_j = opt_double(st, i + 8);
	g->throttled = sqlite3_column_int(st, i + 9);
}

static int
run_row(sqlite3_stmt *st, void *elem)
{
	struct store_run_row *r = elem;

	r->id = sqlite3_column_int64(st, 0);
	r->kind = store_column_dup(st, 1);
	r->prompt_tokens = sqlite3_column_int(st, 2);
	r->gen_tokens = sqlite3_column_int(st, 3);
	r->content = store_column_dup(st, 4);
	r->rep = sqlite3_column_int(st, 5);
	r->warmup = sqlite3_column_int(st, 6);
	r->confirm = sqlite3_column_int(st, 7);
	r->busy = sqlite3_column_int(st, 8);
	r->started = sqlite3_column_int64(st, 9);
	r->wall_ns = store_column_opt_int(st, 10);
	r->exit_code = (int)store_column_opt_int(st, 11);
	r->signal = sqlite3_column_int(st, 12);
	r->failure = store_column_dup(st, 13);
	r->failure_detail = store_column_dup(st, 14);
	r->out = blob_dup(st, 15, &r->out_len);
	r->err_tail = blob_dup(st, 16, &r->err_len);
	r->parser = store_column_dup(st, 17);
	r->mode = store_column_dup(st, 18);
	r->user_ns = store_column_opt_int(st, 19);
	r->sys_ns = store_column_opt_int(st, 20);
	r->max_rss_kb = store_column_opt_int(st, 21);
	r->busy_share = sqlite3_column_type(st, 22) == SQLITE_NULL ?
	    -1 : sqlite3_column_double(st, 22);
	r->nsamples = sqlite3_column_int(st, 23);
	r->definition = store_column_dup(st, 24);
	r->definition_text = store_column_dup(st, 25);
	r->engine_ms = sqlite3_column_type(st, 26) == SQLITE_NULL ?
	    -1 : sqlite3_column_double(st, 26);
	r->clock = store_column_dup(st, 27);
	r->info = store_column_dup(st, 28);
	r->loadavg = sqlite3_column_type(st, 29) == SQLITE_NULL ?
	    -1 : sqlite3_column_double(st, 29);
	r->out_truncated = sqlite3_column_int(st, 30);
	r->machine_id = sqlite3_column_int64(st, 31);
	read_gpu(st, 32, &r->gpu);
	return 0;
}

int
store_run_list(struct store *s, int64_t release_id, struct store_run_rows *out,
    struct err *e)
{
	sqlite3_stmt *st;

	out->v = NULL;
	out->n = 0;
	if ((st = store_query(s, e, "SELECT r.id, r.kind, r.prompt_tokens,"
	    " r.gen_tokens, r.content, r.rep, r.warmup, r.confirm, r.busy,"
	    " r.started, r.wall_ns, r.exit_code, r.signal, r.failure,"
	    " r.failure_detail, r.stdout, r.stderr_tail, r.parser, r.mode,"
	    " r.user_ns, r.sys_ns, r.max_rss_kb, r.busy_share,"
	    " (SELECT count(*) FROM sample x WHERE x.run_id = r.id),"
	    " d.key, d.text, (SELECT avg(x.engine_ns) / 1e6 FROM sample x"
	    " WHERE x.run_id = r.id), d.clock, r.info, r.loadavg,"
	    " r.stdout_truncated, r.machine_id, r.gpu_samples, r.gpu_sm_mhz,"
	    " r.gpu_mem_mhz, r.gpu_temp_max_c, r.gpu_power_w, r.gpu_util_pct,"
	    " r.gpu_throttle, r.gpu_mem_peak, r.gpu_energy_j, r.throttled"
	    " FROM run r LEFT JOIN definition d"
	    " ON d.id = r.definition_id WHERE r.release_id = ?1 ORDER BY r.id",
	    "I", release_id)) == NULL)
		return -1;
	if (store_rows(s, st, (void **)&out->v, &out->n, sizeof(*out->v),
	    run_row, "list runs", e) < 0) {
		store_run_rows_release(out);
		return -1;
	}
	return 0;
}

void
store_run_rows_release(struct store_run_rows *rows)
{
	for (size_t i = 0; i < rows->n; i++) {
		struct store_run_row *r = &rows->v[i];

		free(r->kind);
		free(r->content);
		free(r->failure);
		free(r->failure_detail);
		free(r->out);
		free(r->err_tail);
		free(r->parser);
		free(r->mode);
		free(r->clock);
		free(r->info);
		free(r->definition);
		free(r->definition_text);
	}
	free(rows->v);
	rows->v = NULL;
	rows->n = 0;
}

int
store_run_resample(struct store *s, int64_t run_id,
    const struct store_sample *samples, size_t n, const char *failure,
    const char *failure_detail, const char *info, int64_t definition_id,
    struct err *e)
{
	if (store_begin(s, e) < 0)
		return -1;
	if (store_exec(s, e, "remove old samples", "DELETE FROM sample"
	    " WHERE run_id = ?1", "I", run_id) < 0 ||
	    store_exec(s, e, "update a run", "UPDATE run SET failure = ?2,"
	    " failure_detail = ?3, info = coalesce(?4, info), definition_id ="
	    " coalesce(?5, definition_id) WHERE id = ?1", "Ittto", run_id,
	    failure, failure_detail, info,
	    definition_id > 0 ? definition_id : -1) < 0 ||
	    store_samples_add(s, run_id, samples, n, e) < 0) {
		store_rollback(s);
		return -1;
	}
	return store_commit(s, e);
}

int
store_bisect_open(struct store *s, struct store_bisect *b, int *resumed,
    struct err *e)
{
	int rc;

	*resumed = 0;
	if ((rc = store_first(s, e, "look up a bisect", "SELECT id FROM bisect"
	    " WHERE engine_id = ?1 AND good = ?2 AND bad = ?3 AND metric = ?4"
	    " AND threshold = ?5 AND all_changes = ?6 AND state = 'running'"
	    " ORDER BY id DESC LIMIT 1", "Itttdi", "I", b->engine_id, b->good,
	    b->bad, b->metric, b->threshold, b->all, &b->id)) <= 0) {
		*resumed = rc == 0;
		return rc;
	}
	return store_one(s, e, "record a bisect", "INSERT INTO bisect (job_id,"
	    " engine_id, good, bad, metric, threshold, all_changes, weights_id,"
	    " machine_id, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,"
	    " ?10) RETURNING id", "oItttdiooI", "I",
	    b->job_id > 0 ? b->job_id : -1, b->engine_id, b->good, b->bad,
	    b->metric, b->threshold, b->all,
	    b->weights_id > 0 ? b->weights_id : -1,
	    b->machine_id > 0 ? b->machine_id : -1, store_now(), &b->id);
}

int
store_probe_count(struct store *s, int64_t bisect_id, int *n, struct err *e)
{
	return store_one(s, e, "count probes", "SELECT count(*) FROM probe"
	    " WHERE bisect_id = ?1", "I", "i", bisect_id, n);
}

int
store_probe_add(struct store *s, int64_t bisect_id, const char *action,
    int64_t release_id, int64_t other_id, int reps, struct err *e)
{
	return store_exec(s, e, "record a probe", "INSERT INTO probe"
	    " (bisect_id, seq, action, release_id, other_id, reps, created)"
	    " VALUES (?1, (SELECT count(*) FROM probe WHERE bisect_id = ?1),"
	    " ?2, ?3, ?4, ?5, ?6)", "ItIoiI", bisect_id, action, release_id,
	    other_id > 0 ? other_id : -1, reps, store_now());
}

static int
id_row(sqlite3_stmt *st, void *id)
{
	*(int64_t *)id = sqlite3_column_int64(st, 0);
	return 0;
}

int
store_probe_skipped(struct store *s, int64_t bisect_id, int64_t **ids,
    size_t *n, struct err *e)
{
	sqlite3_stmt *st;

	*ids = NULL;
	*n = 0;
	if ((st = store_query(s, e, "SELECT DISTINCT release_id FROM probe"
	    " WHERE bisect_id = ?1 AND action = 'skip'", "I",
	    bisect_id)) == NULL)
		return -1;
	if (store_rows(s, st, (void **)ids, n, sizeof(**ids), id_row,
	    "read skipped releases", e) < 0) {
		free(*ids);
		*ids = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

int
store_bisect_finish(struct store *s, int64_t bisect_id, const char *state,
    const char *status, const char *verdict_json, struct err *e)
{
	return store_exec(s, e, "finish a bisect", "UPDATE bisect SET"
	    " state = ?2, status = ?3, verdict = ?4, finished = ?5"
	    " WHERE id = ?1", "ItttI", bisect_id, state, status, verdict_json,
	    store_now());
}

int
store_bisect_latest(struct store *s, int64_t engine_id, const char *good,
    const char *bad, const char *metric, char **json, struct err *e)
{
	*json = NULL;
	return store_first(s, e, "read a verdict", "SELECT verdict FROM bisect"
	    " WHERE engine_id = ?1 AND good = ?2 AND bad = ?3 AND metric = ?4"
	    " AND state = 'done' ORDER BY id DESC LIMIT 1", "Ittt", "t",
	    engine_id, good, bad, metric, json) < 0 ? -1 : 0;
}

static int
bisect_row(sqlite3_stmt *st, void *elem)
{
	struct store_bisect_row *r = elem;

	r->id = sqlite3_column_int64(st, 0);
	r->good = store_column_dup(st, 1);
	r->bad = store_column_dup(st, 2);
	r->metric = store_column_dup(st, 3);
	r->status = store_column_dup(st, 4);
	r->verdict = store_column_dup(st, 5);
	r->finished = sqlite3_column_int64(st, 6);
	return r->good && r->bad && r->metric && r->status && r->verdict ?
	    0 : -1;
}

int
store_bisect_recent(struct store *s, int64_t engine_id, int limit,
    struct store_bisect_rows *out, struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	out->v = NULL;
	out->n = 0;
	/* The verdicts tally.c counts: done, with a status. */
	if ((st = store_query(s, e, "SELECT id, good, bad, metric, status,"
	    " verdict, coalesce(finished, 0) FROM bisect b"
	    " WHERE engine_id = ?1 AND"
	    " id = (SELECT max(id) FROM bisect b2 WHERE b2.engine_id ="
	    " b.engine_id AND b2.good = b.good AND b2.bad = b.bad AND"
	    " b2.metric = b.metric AND b2.state = 'done' AND b2.status IS NOT"
	    " NULL AND b2.verdict IS NOT NULL) ORDER BY id DESC LIMIT ?2",
	    "Ii", engine_id, limit)) == NULL)
		return -1;
	if ((rc = store_rows(s, st, (void **)&out->v, &out->n,
	    sizeof(*out->v), bisect_row, "read the bisects", e)) == STORE_NOMEM)
		err_set(e, "out of memory reading the bisects");
	if (rc < 0)
		store_bisect_rows_release(out);
	return rc < 0 ? -1 : 0;
}

void
store_bisect_rows_release(struct store_bisect_rows *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct store_bisect_row *b = &r->v[i];
		char *owned[] = { b->good, b->bad, b->metric, b->status,
		    b->verdict };

		strs_free(owned, sizeof(owned) / sizeof(owned[0]));
	}
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

static int
sample_row(sqlite3_stmt *st, void *elem)
{
	struct store_sample *x = elem;

	x->prompt_tokens = sqlite3_column_int(st, 0);
	x->gen_tokens = sqlite3_column_int(st, 1);
	x->wall_ns = sqlite3_column_int64(st, 2);
	x->engine_ns = store_column_opt_int(st, 3);
	x->user_ns = store_column_opt_int(st, 4);
	x->sys_ns = store_column_opt_int(st, 5);
	x->max_rss_kb = store_column_opt_int(st, 6);
	return 0;
}

int
store_run_samples(struct store *s, int64_t run_id, struct store_sample **v,
    size_t *n, struct err *e)
{
	sqlite3_stmt *st;

	*v = NULL;
	*n = 0;
	if ((st = store_query(s, e, "SELECT prompt_tokens, gen_tokens, wall_ns,"
	    " engine_ns, user_ns, sys_ns, max_rss_kb FROM sample WHERE"
	    " run_id = ?1 ORDER BY idx", "I", run_id)) == NULL)
		return -1;
	if (store_rows(s, st, (void **)v, n, sizeof(**v), sample_row,
	    "read a run's samples", e) < 0) {
		free(*v);
		*v = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}
