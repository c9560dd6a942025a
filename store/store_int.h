/*
 * store_int.h: what the files of store/ share and nothing else sees: the
 * connection struct and the statement helpers.
 */
#ifndef STORE_STORE_INT_H
#define STORE_STORE_INT_H

#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include <sqlite3.h>

struct err;
struct store_points;

/* How long a statement waits for another connection's lock. */
#define STORE_BUSY_TIMEOUT_MS 5000

struct store {
	sqlite3 *db;
	char *path;	/* the database file, for messages; owned */
	int busy_ms;	/* how long a statement waits for a lock */
	const atomic_int *busy_stop;	/* set: stop waiting now; or NULL */
	int64_t waited_ms;	/* how long the last one waited */
};

/* Fill e from the connection's last error, worded for what was tried. */
int store_fail(struct store *s, struct err *e, const char *what);
int store_prepare(struct store *s, const char *sql, sqlite3_stmt **st,
    struct err *e);
int store_step_done(struct store *s, sqlite3_stmt *st, const char *what,
    struct err *e);
void store_bind_text(sqlite3_stmt *st, int i, const char *v);
void store_bind_opt_int(sqlite3_stmt *st, int i, int64_t v);
char *store_column_dup(sqlite3_stmt *st, int i);
/* Integer column i, or -1 when it is NULL. */
int64_t store_column_opt_int(sqlite3_stmt *st, int i);
int64_t store_now(void);

/*
 * The statement sql prepared by store_prepare(), its parameters ?1, ?2,
 * ... bound to the arguments that follow, one for each letter of types:
 *	t	const char *: text, or NULL
 *	i	int
 *	I	int64_t
 *	o	int64_t: NULL when negative (store_bind_opt_int())
 *	d	double
 *	b	const void *, size_t: a blob of that length, or NULL
 * An argument must have its letter's type exactly: cast an int given to
 * I or o.  Returns NULL with e set when it cannot be prepared.
 */
sqlite3_stmt *store_query(struct store *s, struct err *e, const char *sql,
    const char *types, ...);

/* Prepare, bind and run a statement whose rows are not read (see
 * store_query() and store_step_done()); what words the failure. */
int store_exec(struct store *s, struct err *e, const char *what,
    const char *sql, const char *types, ...);

/*
 * Prepare and bind sql as store_query() does with the arguments for in,
 * then read the columns of its first row into the pointers that follow
 * them, one for each letter of out (a NULL pointer skips its column):
 *	I	int64_t *
 *	i	int *
 *	t	char **: a malloced copy, or NULL for NULL
 * Returns 0 with the row read.  With no row: 1, the pointers untouched,
 * or when need is set -1 with e set as store_fail() words what.  On an
 * error -1 with e set.
 * store_one() is for a query that always gives a row (an aggregate, a
 * RETURNING, a row just inserted), store_first() for one that may not.
 */
int store_row(struct store *s, struct err *e, const char *what, int need,
    const char *sql, const char *in, const char *out, ...);
#define store_one(s, e, what, ...) store_row(s, e, what, 1, __VA_ARGS__)
#define store_first(s, e, what, ...) store_row(s, e, what, 0, __VA_ARGS__)

/* store_rows() ran out of memory (e says so). */
#define STORE_NOMEM (-2)

/*
 * Step st to its end, appending an element of elsize bytes to the array
 * *v (*n elements, empty at the call) for each row, which row() fills
 * from st: it returns 0, or -1 when memory runs out.  Finalizes st.
 * Returns 0; -1 with e set, worded for what; or STORE_NOMEM.  On
 * failure the elements so far, the last maybe half filled, stay in *v
 * for the caller to release.
 */
int store_rows(struct store *s, sqlite3_stmt *st, void **v, size_t *n,
    size_t elsize, int (*row)(sqlite3_stmt *, void *), const char *what,
    struct err *e);

/*
 * Step st (a SELECT of time_ns, run id, confirm, busy and lower bound,
 * in that order) to its end into *out, and finalize it.  Returns 0, or
 * -1 with e set and *out empty.
 */
int store_points_read(struct store *s, sqlite3_stmt *st,
    struct store_points *out, struct err *e);

/*
 * Make room for element n of the array *v (elsize bytes each, *alloc
 * allocated), doubling as needed; new elements are zeroed.  Returns 0, or -1 with *v untouched
 * when memory runs out.
 */
int store_grow(void **v, size_t *alloc, size_t n, size_t elsize);

struct store_sample;

/* Store samples v[0..n) of run run_id, in the caller's transaction. */
int store_samples_add(struct store *s, int64_t run_id,
    const struct store_sample *v, size_t n, struct err *e);

struct store_job;

/* The job table's columns in the order store_job_row() reads them. */
#define STORE_JOB_COLUMNS "id, kind, engine, args, priority, state," \
	" created, coalesce(started, 0), coalesce(finished, 0)," \
	" coalesce(exit_code, -1), result"

/* Fill j from a row of STORE_JOB_COLUMNS (strings malloced). */
void store_job_row(sqlite3_stmt *st, struct store_job *j);

#endif
