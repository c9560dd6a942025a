/*
 * summary.c: the figures a report computes of each release from its
 * runs, kept in the store (sql/011_release_summary.sql) with the state
 * of the runs they were computed from.  A summary is returned only
 * while that state is unchanged; otherwise the release's runs are read
 * in the same snapshot, so a summary saved from them names the state
 * they had.  Saving is best effort: a read-only or busy store keeps
 * nothing and waits for nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/err.h"
#include "db.h"
#include "summary.h"
#include "store_int.h"

/*
 * The stamp of release ?1 now, "id:n,id:n,...": the run_change counts
 * of it and of every release sharing its archive, whose runs
 * store_release_runs_read() also reads (the set is RUNS_SQL's), beside
 * its summary under ?2..?4 when one is kept.  A stamp spells out the
 * set and every count, so two different states never share one; the
 * same state spelled in another order only costs a recomputation.
 */
#define GET_SQL \
	"SELECT ?1 || ':' || coalesce((SELECT n FROM run_change" \
	" WHERE release_id = ?1), 0) || coalesce((SELECT" \
	" group_concat(',' || t.id || ':' || coalesce(c.n, 0), '')" \
	" FROM release o JOIN release t ON t.engine_id = o.engine_id" \
	" AND t.archive_sha256 = o.archive_sha256 AND t.id <> o.id" \
	" LEFT JOIN run_change c ON c.release_id = t.id WHERE o.id = ?1)," \
	" '')," \
	" x.stamp, x.entry, CASE WHEN ?5 THEN x.plot END, x.runs" \
	" FROM (SELECT 1) LEFT JOIN release_summary x ON x.release_id = ?1" \
	" AND x.weights_sha256 = ?2 AND x.hw_key = ?3 AND x.config = ?4"

/*
 * The page cache while summaries are read, in KiB.  Each row is read
 * once and fills most of a page: a cache of the usual 2 MiB would hold
 * pages never read again, at the cost of the memory, and a small one
 * still keeps the indexes' pages.
 */
#define SUMMARY_CACHE_KIB 256

/*
 * Read the row of release i; a summary kept for its runs as they are
 * goes to use().  Returns SQLITE_DONE, an SQLite error, or, when use()
 * says to stop, -2 with its value in *stop.
 */
static int
read_one(sqlite3_stmt *st, size_t i, struct store_summary *out,
    int (*use)(void *, size_t, const struct store_summary_row *),
    void *arg, int *stop)
{
	struct store_summary_row row;
	const char *now, *then;
	int rc;

	if ((rc = sqlite3_step(st)) != SQLITE_ROW)
		return rc == SQLITE_DONE ? SQLITE_CORRUPT : rc;
	now = (const char *)sqlite3_column_text(st, 0);
	then = (const char *)sqlite3_column_text(st, 1);
	if ((out->stamp = strdup(now ? now : "")) == NULL)
		return SQLITE_NOMEM;
	if (then == NULL || strcmp(out->stamp, then) != 0)
		return SQLITE_DONE;
	memset(&row, 0, sizeof(row));
	row.stamp = out->stamp;
	/* Valid until the next step: asking for another column does not
	 * move them. */
	row.entry = sqlite3_column_blob(st, 2);
	row.entry_len = (size_t)sqlite3_column_bytes(st, 2);
	row.plot = sqlite3_column_blob(st, 3);
	row.plot_len = (size_t)sqlite3_column_bytes(st, 3);
	row.runs = sqlite3_column_blob(st, 4);
	row.runs_len = (size_t)sqlite3_column_bytes(st, 4);
	if (sqlite3_errcode(sqlite3_db_handle(st)) == SQLITE_NOMEM)
		return SQLITE_NOMEM;
	out->hit = 1;
	if ((*stop = use(arg, i, &row)) != 0)
		return -2;
	return SQLITE_DONE;
}

int
store_summary_read(struct store *s, const struct store_summary_key *k,
    int plot, const int64_t *release_ids, size_t n,
    struct store_summary *out,
    int (*use)(void *, size_t, const struct store_summary_row *),
    void *arg, struct err *e)
{
	sqlite3_stmt *st = NULL;
	int64_t *missed = NULL;
	struct store_release_runs *runs = NULL;
	int own = sqlite3_get_autocommit(s->db), rc = SQLITE_DONE, stop = 0;
	int cache = 0;
	size_t i, nmissed = 0;
	char sql[64];

	memset(out, 0, n * sizeof(*out));
	if ((missed = malloc((n ? n : 1) * sizeof(*missed))) == NULL)
		return err_set(e, "out of memory");
	/* One snapshot: each stamp names the runs read beside it. */
	if (own && sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) !=
	    SQLITE_OK) {
		free(missed);
		return store_fail(s, e, "begin reading summaries");
	}
	if (store_prepare(s, GET_SQL, &st, e) < 0) {
		rc = -1;
		goto done;
	}
	if (store_one(s, NULL, "read the cache size", "PRAGMA cache_size", "",
	    "i", &cache) == 0 &&
	    (cache > 0 || cache < -SUMMARY_CACHE_KIB)) {
		snprintf(sql, sizeof(sql), "PRAGMA cache_size = %d",
		    -SUMMARY_CACHE_KIB);
		sqlite3_exec(s->db, sql, NULL, NULL, NULL);
	} else
		cache = 0;
	store_bind_text(st, 2, k->weights_sha256);
	store_bind_text(st, 3, k->hw_key);
	store_bind_text(st, 4, k->config);
	sqlite3_bind_int(st, 5, plot != 0);
	for (i = 0; i < n && rc == SQLITE_DONE; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, release_ids[i]);
		rc = read_one(st, i, &out[i], use, arg, &stop);
		if (rc == SQLITE_DONE && !out[i].hit)
			missed[nmissed++] = release_ids[i];
	}
	if (rc == -2) {
		rc = SQLITE_DONE;	/* stop, not an error */
	} else if (rc == SQLITE_NOMEM) {
		err_set(e, "out of memory");
		rc = -1;
	} else if (rc != SQLITE_DONE) {
		store_fail(s, e, "read a release's summary");
		rc = -1;
	} else if (nmissed > 0) {
		if ((runs = calloc(nmissed, sizeof(*runs))) == NULL)
			rc = err_set(e, "out of memory");
		else if (store_release_runs_read(s, k->weights_sha256,
		    k->hw_key, missed, nmissed, runs, e) < 0)
			rc = -1;
		for (i = 0, nmissed = 0; rc == SQLITE_DONE && i < n; i++)
			if (!out[i].hit)
				out[i].runs_read = runs[nmissed++];
	}
done:
	sqlite3_finalize(st);
	if (cache != 0) {
		snprintf(sql, sizeof(sql), "PRAGMA cache_size = %d", cache);
		sqlite3_exec(s->db, sql, NULL, NULL, NULL);
	}
	if (own)
		sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	free(missed);
	free(runs);
	if (rc == SQLITE_DONE && stop == 0)
		return 0;
	for (i = 0; i < n; i++)
		store_summary_release(&out[i]);
	return stop != 0 ? stop : -1;
}

void
store_summary_release(struct store_summary *x)
{
	free(x->stamp);
	free(x->entry);
	free(x->plot);
	free(x->runs);
	store_release_runs_release(&x->runs_read);
	memset(x, 0, sizeof(*x));
}

int
store_summary_save(struct store *s, const struct store_summary_key *k,
    const struct store_summary_row *rows, size_t n, struct err *e)
{
	sqlite3_stmt *put = NULL, *drop = NULL;
	int rc;

	if (n == 0 || sqlite3_db_readonly(s->db, "main") != 0 ||
	    !sqlite3_get_autocommit(s->db))
		return 1;
	/* A bisect writing holds the lock for a while: keep nothing
	 * rather than wait for it. */
	{
		int busy_ms = s->busy_ms;

		s->busy_ms = 0;
		rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
		s->busy_ms = busy_ms;
	}
	if (rc != SQLITE_OK)
		return (rc & 0xff) == SQLITE_BUSY ||
		    (rc & 0xff) == SQLITE_READONLY ? 1 :
		    store_fail(s, e, "begin saving summaries");
	if (store_prepare(s, "INSERT OR REPLACE INTO release_summary"
	    " (release_id, weights_sha256, hw_key, config, stamp, entry,"
	    " plot, runs) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", &put,
	    e) < 0 ||
	    store_prepare(s, "DELETE FROM release_summary WHERE"
	    " release_id = ?1 AND stamp <> ?2", &drop, e) < 0) {
		rc = -1;
		goto done;
	}
	store_bind_text(put, 2, k->weights_sha256);
	store_bind_text(put, 3, k->hw_key);
	store_bind_text(put, 4, k->config);
	rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct store_summary_row *r = &rows[i];

		/* What an older state left can never be read again. */
		sqlite3_reset(drop);
		sqlite3_bind_int64(drop, 1, r->release_id);
		store_bind_text(drop, 2, r->stamp);
		if (sqlite3_step(drop) != SQLITE_DONE) {
			rc = store_fail(s, e, "drop old summaries");
			break;
		}
		sqlite3_reset(put);
		sqlite3_bind_int64(put, 1, r->release_id);
		store_bind_text(put, 5, r->stamp);
		sqlite3_bind_blob(put, 6, r->entry, (int)r->entry_len,
		    SQLITE_STATIC);
		sqlite3_bind_blob(put, 7, r->plot, (int)r->plot_len,
		    SQLITE_STATIC);
		sqlite3_bind_blob(put, 8, r->runs, (int)r->runs_len,
		    SQLITE_STATIC);
		if (sqlite3_step(put) != SQLITE_DONE)
			rc = store_fail(s, e, "save a summary");
	}
done:
	sqlite3_finalize(put);
	sqlite3_finalize(drop);
	if (rc == 0)
		return store_commit(s, e);
	store_rollback(s);
	return -1;
}

int
store_summary_count(struct store *s, int64_t *n, struct err *e)
{
	*n = 0;
	return store_one(s, e, "count summaries", "SELECT count(*) FROM"
	    " release_summary", "", "I", n);
}
