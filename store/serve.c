/*
 * serve.c: the store's side of serve runs (see serve.h, sql/014).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/err.h"
#include "serve.h"
#include "store_int.h"

static void
bind_real(sqlite3_stmt *st, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

int
store_serve_insert(struct store *s, const struct store_serve_run *r,
    struct err *e)
{
	sqlite3_stmt *st;

	if (store_prepare(s, "INSERT INTO serve_run (run_id, profile,"
	    " requests, ok, refused, timeout, truncated, http, stream,"
	    " transport, duration_ns, req_per_s, out_tok_per_s, goodput_per_s,"
	    " goodput_share, lag_p50_ns, lag_p99_ns, lag_max_ns, lag_over)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,"
	    " ?14, ?15, ?16, ?17, ?18, ?19)", &st, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, r->run_id);
	store_bind_text(st, 2, r->profile);
	sqlite3_bind_int(st, 3, r->requests);
	sqlite3_bind_int(st, 4, r->ok);
	for (int k = 0; k < SERVE_NERRORS; k++)
		sqlite3_bind_int(st, 5 + k, r->errors[k]);
	store_bind_opt_int(st, 11, r->duration_ns);
	bind_real(st, 12, r->req_per_s);
	bind_real(st, 13, r->out_tok_per_s);
	bind_real(st, 14, r->goodput_per_s);
	bind_real(st, 15, r->goodput_share);
	store_bind_opt_int(st, 16, r->lag_p50_ns);
	store_bind_opt_int(st, 17, r->lag_p99_ns);
	store_bind_opt_int(st, 18, r->lag_max_ns);
	sqlite3_bind_int(st, 19, r->lag_over);
	return store_step_done(s, st, "store a serve run", e);
}

static double
column_real(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN :
	    sqlite3_column_double(st, i);
}

/* The figures of a run from its samples. */
static int
read_figures(struct store *s, struct store_serve_row *w, struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	for (int k = 0; k < STORE_SERVE_FIGURES; k++)
		w->figure_ns[k] = NAN;
	if ((st = store_query(s, e, "SELECT idx, wall_ns FROM sample WHERE"
	    " run_id = ?1", "I", w->run.run_id)) == NULL)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int k = sqlite3_column_int(st, 0);

		if (k >= 0 && k < STORE_SERVE_FIGURES)
			w->figure_ns[k] = column_real(st, 1);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : store_fail(s, e, "read serve figures");
}

static int
serve_row(sqlite3_stmt *st, void *elem)
{
	struct store_serve_row *w = elem;
	struct store_serve_run *r = &w->run;

	r->run_id = sqlite3_column_int64(st, 0);
	r->profile = store_column_dup(st, 1);
	r->requests = sqlite3_column_int(st, 2);
	r->ok = sqlite3_column_int(st, 3);
	for (int k = 0; k < SERVE_NERRORS; k++)
		r->errors[k] = sqlite3_column_int(st, 4 + k);
	r->duration_ns = store_column_opt_int(st, 10);
	r->req_per_s = column_real(st, 11);
	r->out_tok_per_s = column_real(st, 12);
	r->goodput_per_s = column_real(st, 13);
	r->goodput_share = column_real(st, 14);
	r->lag_p50_ns = store_column_opt_int(st, 15);
	r->lag_p99_ns = store_column_opt_int(st, 16);
	r->lag_max_ns = store_column_opt_int(st, 17);
	r->lag_over = sqlite3_column_int(st, 18);
	w->failed = sqlite3_column_int(st, 19);
	return 0;
}

int
store_serve_list(struct store *s, int64_t release_id,
    const char *definition, struct store_serve_rows *out, struct err *e)
{
	sqlite3_stmt *st;

	memset(out, 0, sizeof(*out));
	if ((st = store_query(s, e, "SELECT v.run_id, v.profile, v.requests,"
	    " v.ok, v.refused, v.timeout, v.truncated, v.http, v.stream,"
	    " v.transport, v.duration_ns, v.req_per_s, v.out_tok_per_s,"
	    " v.goodput_per_s, v.goodput_share, v.lag_p50_ns, v.lag_p99_ns,"
	    " v.lag_max_ns, v.lag_over, r.failure IS NOT NULL"
	    " FROM serve_run v JOIN run r ON r.id = v.run_id"
	    " JOIN definition d ON d.id = r.definition_id"
	    " WHERE r.release_id = ?1 AND d.key = ?2 AND r.warmup = 0"
	    " AND r.confirm = 0 ORDER BY v.run_id", "It", release_id, definition)) == NULL)
		return -1;
	if (store_rows(s, st, (void **)&out->v, &out->n, sizeof(*out->v),
	    serve_row, "read serve runs", e) < 0) {
		store_serve_rows_release(out);
		return -1;
	}
	for (size_t i = 0; i < out->n; i++)
		if (read_figures(s, &out->v[i], e) < 0) {
			store_serve_rows_release(out);
			return -1;
		}
	return 0;
}

void
store_serve_rows_release(struct store_serve_rows *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].run.profile);
	free(r->v);
	memset(r, 0, sizeof(*r));
}
