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
/* The integer a PRAGMA query sql returns; what: for the message. */
int store_pragma_int(struct store *s, const char *sql, int *out,
    const char *what, struct err *e);
void store_bind_opt_int(sqlite3_stmt *st, int i, int64_t v);
char *store_column_dup(sqlite3_stmt *st, int i);
int64_t store_now(void);

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

struct store_job;

/* The job table's columns in the order store_job_row() reads them. */
#define STORE_JOB_COLUMNS "id, kind, engine, args, priority, state," \
	" created, coalesce(started, 0), coalesce(finished, 0)," \
	" coalesce(exit_code, -1), result"

/* Fill j from a row of STORE_JOB_COLUMNS (strings malloced). */
void store_job_row(sqlite3_stmt *st, struct store_job *j);

#endif
