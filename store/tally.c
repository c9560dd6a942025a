/*
 * tally.c: counts over the store for the daemon's /metrics: runs by
 * engine and outcome, jobs by kind and state with their time, the newest
 * verdict of each engine.  Each is one grouped query, so a scrape reads
 * a few rows however many runs are stored.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/err.h"
#include "tally.h"
#include "store_int.h"

/* A row's three text columns and two numbers. */
static int
tally_row(sqlite3_stmt *st, void *elem)
{
	struct store_tally_row *r = elem;

	for (int i = 0; i < 3; i++)
		r->key[i] = store_column_dup(st, i);
	r->n = sqlite3_column_int64(st, 3);
	r->sum = sqlite3_column_int64(st, 4);
	return 0;
}

static int
tally(struct store *s, const char *sql, const char *what,
    struct store_tally *out, struct err *e)
{
	sqlite3_stmt *st;

	out->v = NULL;
	out->n = 0;
	if ((st = store_query(s, e, sql, "")) == NULL)
		return -1;
	if (store_rows(s, st, (void **)&out->v, &out->n, sizeof(*out->v),
	    tally_row, what, e) < 0) {
		store_tally_release(out);
		return -1;
	}
	return 0;
}

int
store_tally_runs(struct store *s, struct store_tally *out, struct err *e)
{
	return tally(s, "SELECT e.name, coalesce(r.failure, 'ok'),"
	    " CASE WHEN r.warmup THEN 'warmup' WHEN r.confirm THEN 'confirm'"
	    " ELSE 'run' END, count(*), 0"
	    " FROM run r JOIN release rl ON rl.id = r.release_id"
	    " JOIN engine e ON e.id = rl.engine_id"
	    " GROUP BY 1, 2, 3 ORDER BY 1, 2, 3", "count the runs", out, e);
}

int
store_tally_jobs(struct store *s, struct store_tally *out, struct err *e)
{
	return tally(s, "SELECT kind, state, NULL, count(*),"
	    " coalesce(sum(CASE WHEN finished >= started"
	    " THEN finished - started END), 0)"
	    " FROM job GROUP BY 1, 2 ORDER BY 1, 2", "count the jobs", out, e);
}

int
store_tally_verdicts(struct store *s, struct store_tally *out,
    struct err *e)
{
	return tally(s, "SELECT e.name, b.status, b.good || '..' || b.bad,"
	    " b.finished, b.id FROM bisect b JOIN engine e ON e.id = b.engine_id"
	    " WHERE b.id = (SELECT max(b2.id) FROM bisect b2"
	    " WHERE b2.engine_id = b.engine_id AND b2.state = 'done'"
	    " AND b2.status IS NOT NULL) ORDER BY 1",
	    "read the newest verdicts", out, e);
}

void
store_tally_release(struct store_tally *t)
{
	for (size_t i = 0; i < t->n; i++)
		for (int k = 0; k < 3; k++)
			free(t->v[i].key[k]);
	free(t->v);
	t->v = NULL;
	t->n = 0;
}
