/*
 * db.c: opening and migrating the SQLite database, transactions, and
 * the statement helpers every file of the store uses (see db.h and
 * store_int.h).  All SQL of the project is in this folder.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/err.h"
#include "migrations.h"
#include "db.h"
#include "store_int.h"

/* 'bisd': marks a database as ours, so another program's is not migrated. */
#define STORE_APPLICATION_ID 0x62697364

int
store_fail(struct store *s, struct err *e, const char *what)
{
	int rc = sqlite3_extended_errcode(s->db);
	struct rlimit rl;

	if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
		return err_set(e, "database '%s' is locked by another writer "
		    "(waited %.1f s) while trying to %s", s->path,
		    (double)s->waited_ms / 1000, what);
	if ((rc & 0xff) == SQLITE_READONLY)
		return err_set(e, "database '%s' is read-only: cannot %s",
		    s->path, what);
	if ((rc & 0xff) == SQLITE_FULL)
		return err_set(e, "database '%s': disk is full: cannot %s",
		    s->path, what);
	if ((rc & 0xff) == SQLITE_NOTADB)
		return err_set(e, "'%s' is not a SQLite database", s->path);
	/*
	 * SQLite keeps no errno for a failed write: past ulimit -f (SIGXFSZ
	 * ignored) it says "disk I/O error".  Name the limit when one is set.
	 */
	if (rc == SQLITE_IOERR_WRITE && getrlimit(RLIMIT_FSIZE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY)
		return err_set(e, "database '%s': cannot %s: a write failed "
		    "under the file size limit of %llu bytes (ulimit -f): %s",
		    s->path, what, (unsigned long long)rl.rlim_cur,
		    strerror(EFBIG));
	return err_set(e, "database '%s': cannot %s: %s", s->path, what,
	    sqlite3_errmsg(s->db));
}

int
store_prepare(struct store *s, const char *sql, sqlite3_stmt **st,
    struct err *e)
{
	s->waited_ms = 0;	/* the wait this statement's message names */
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK) {
		*st = NULL;
		return store_fail(s, e, "prepare a query");
	}
	return 0;
}

/* Bind text or NULL. */
void
store_bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* Bind an integer where negative means "none". */
void
store_bind_opt_int(sqlite3_stmt *st, int i, int64_t v)
{
	if (v < 0)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, v);
}

char *
store_column_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? strdup((const char *)t) : NULL;
}

int64_t
store_column_opt_int(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 :
	    sqlite3_column_int64(st, i);
}

/* Run a statement that returns no rows. */
int
store_step_done(struct store *s, sqlite3_stmt *st, const char *what,
    struct err *e)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		store_fail(s, e, what);
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

/*
 * Bind the arguments *ap holds, one for each letter of types, to the
 * parameters from ?1 on (see store_query()).
 */
static int
bind_v(sqlite3_stmt *st, const char *types, va_list *ap)
{
	for (int i = 1; types[i - 1] != '\0'; i++) {
		const void *p;
		size_t len;

		switch (types[i - 1]) {
		case 't':
			store_bind_text(st, i, va_arg(*ap, const char *));
			break;
		case 'i':
			sqlite3_bind_int(st, i, va_arg(*ap, int));
			break;
		case 'I':
			sqlite3_bind_int64(st, i, va_arg(*ap, int64_t));
			break;
		case 'o':
			store_bind_opt_int(st, i, va_arg(*ap, int64_t));
			break;
		case 'd':
			sqlite3_bind_double(st, i, va_arg(*ap, double));
			break;
		case 'b':
			p = va_arg(*ap, const void *);
			len = va_arg(*ap, size_t);
			if (p)
				sqlite3_bind_blob64(st, i, p, len,
				    SQLITE_TRANSIENT);
			else
				sqlite3_bind_null(st, i);
			break;
		default:
			return -1;
		}
	}
	return 0;
}

static sqlite3_stmt *
query_v(struct store *s, struct err *e, const char *sql, const char *types,
    va_list *ap)
{
	sqlite3_stmt *st;

	if (store_prepare(s, sql, &st, e) < 0)
		return NULL;
	if (bind_v(st, types, ap) < 0) {
		sqlite3_finalize(st);
		err_set(e, "a query's bind types '%s' hold an unknown letter",
		    types);
		return NULL;
	}
	return st;
}

sqlite3_stmt *
store_query(struct store *s, struct err *e, const char *sql,
    const char *types, ...)
{
	sqlite3_stmt *st;
	va_list ap;

	va_start(ap, types);
	st = query_v(s, e, sql, types, &ap);
	va_end(ap);
	return st;
}

int
store_exec(struct store *s, struct err *e, const char *what, const char *sql,
    const char *types, ...)
{
	sqlite3_stmt *st;
	va_list ap;

	va_start(ap, types);
	st = query_v(s, e, sql, types, &ap);
	va_end(ap);
	return st ? store_step_done(s, st, what, e) : -1;
}

int
store_row(struct store *s, struct err *e, const char *what, int need,
    const char *sql, const char *in, const char *out, ...)
{
	sqlite3_stmt *st;
	va_list ap;
	int rc;

	va_start(ap, out);
	if ((st = query_v(s, e, sql, in, &ap)) == NULL) {
		va_end(ap);
		return -1;
	}
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; out[i] != '\0'; i++) {
			int64_t *big;
			int *small;
			char **text;

			switch (out[i]) {
			case 'I':
				if ((big = va_arg(ap, int64_t *)) != NULL)
					*big = sqlite3_column_int64(st, i);
				break;
			case 'i':
				if ((small = va_arg(ap, int *)) != NULL)
					*small = sqlite3_column_int(st, i);
				break;
			case 't':
				if ((text = va_arg(ap, char **)) != NULL)
					*text = store_column_dup(st, i);
				break;
			}
		}
	} else if (rc != SQLITE_DONE || need)
		store_fail(s, e, what);
	va_end(ap);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE && !need ? 1 : -1;
}

int
store_rows(struct store *s, sqlite3_stmt *st, void **v, size_t *n,
    size_t elsize, int (*row)(sqlite3_stmt *, void *), const char *what,
    struct err *e)
{
	size_t alloc = 0;
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		/* Counted before row() fills it: what it leaves half done
		 * is the caller's release to free. */
		if (store_grow(v, &alloc, *n, elsize) < 0 ||
		    row(st, (char *)*v + (*n)++ * elsize) < 0) {
			sqlite3_finalize(st);
			err_set(e, "out of memory");
			return STORE_NOMEM;
		}
	}
	if (rc != SQLITE_DONE)
		store_fail(s, e, what);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int
exec(struct store *s, const char *sql, const char *what, struct err *e)
{
	char *msg = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		store_fail(s, e, what);
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

int
store_data_version(struct store *s, int *version, struct err *e)
{
	if (store_one(s, NULL, "read the data version", "PRAGMA data_version",
	    "", "i", version) < 0)
		return err_set(e, "database '%s': cannot read its data "
		    "version", s->path);
	return 0;
}

int
store_begin(struct store *s, struct err *e)
{
	return exec(s, "BEGIN IMMEDIATE", "begin a transaction", e);
}

int
store_commit(struct store *s, struct err *e)
{
	if (exec(s, "COMMIT", "commit", e) < 0) {
		store_rollback(s);
		return -1;
	}
	return 0;
}

void
store_rollback(struct store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

int
store_latest_version(void)
{
	return (int)migrations_count;
}

int
store_schema_version(struct store *s)
{
	int v = -1;

	store_one(s, NULL, "read the schema version", "PRAGMA user_version",
	    "", "i", &v);
	return v;
}

/* Apply migration m in one transaction with its user_version bump. */
static int
migrate_one(struct store *s, const struct migration *m, struct err *e)
{
	char bump[96];
	int current;

	if (store_begin(s, e) < 0)
		return err_prefix(e, "cannot migrate to schema %d (%s)",
		    m->version, m->name);
	/*
	 * Another process may have migrated between our look at the
	 * version and taking the write lock: look again under the lock.
	 */
	if (store_one(s, e, "read the schema version", "PRAGMA user_version",
	    "", "i", &current) < 0)
		goto fail;
	if (current >= m->version) {
		store_rollback(s);
		return 0;
	}
	if (exec(s, m->sql, "apply the migration", e) < 0)
		goto fail;
	snprintf(bump, sizeof(bump), "PRAGMA user_version = %d", m->version);
	if (exec(s, bump, "record the schema version", e) < 0)
		goto fail;
	if (m->version == 1) {
		snprintf(bump, sizeof(bump), "PRAGMA application_id = %d",
		    STORE_APPLICATION_ID);
		if (exec(s, bump, "mark the database", e) < 0)
			goto fail;
	}
	if (store_commit(s, e) < 0)
		return err_prefix(e, "cannot migrate to schema %d (%s)",
		    m->version, m->name);
	return 0;
fail:
	store_rollback(s);
	return err_prefix(e, "cannot migrate to schema %d (%s)", m->version,
	    m->name);
}

/*
 * An empty file, or one that carries our application id, is ours.  This
 * reads the header only, so that another program's database is refused
 * before anything (the switch to WAL above all) changes a byte of it.
 */
static int
check_ours(struct store *s, int *version, struct err *e)
{
	int appid, tables;

	/* One statement, so one read transaction: read one at a time, a
	 * migration committed in between by another process showed its
	 * tables beside the header of the empty file before it, and the
	 * database looked like another program's. */
	if (store_one(s, e, "read the schema version", "SELECT (SELECT"
	    " user_version FROM pragma_user_version), (SELECT application_id"
	    " FROM pragma_application_id), (SELECT count(*) FROM"
	    " sqlite_schema)", "", "iii", version, &appid, &tables) < 0)
		return -1;
	if (appid != STORE_APPLICATION_ID && (*version != 0 || tables != 0))
		return err_set(e, "'%s' is a SQLite database of another "
		    "program, not bisectd's", s->path);
	if (*version > store_latest_version())
		return err_set(e, "database '%s' has schema version %d, newer "
		    "than this bisectd's %d: use a newer bisectd (a database is "
		    "never downgraded)", s->path, *version,
		    store_latest_version());
	return 0;
}

static int
migrate(struct store *s, int max, struct err *e)
{
	int version;

	if (check_ours(s, &version, e) < 0)
		return -1;
	for (int v = version; v < max; v++)
		if (migrate_one(s, &migrations[v], e) < 0)
			return -1;
	return 0;
}

/*
 * Switching a new database to WAL needs an exclusive lock, and SQLite
 * does not call the busy handler for it: several processes opening one
 * new database at once retry here, within the same busy timeout.
 */
static int
set_wal(struct store *s, struct err *e)
{
	for (int waited = 0;; waited += 20) {
		sqlite3_stmt *st;
		char *mode = NULL;
		int rc;

		if (store_prepare(s, "PRAGMA journal_mode = WAL", &st, e) < 0)
			return -1;
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			mode = store_column_dup(st, 0);
		sqlite3_finalize(st);
		if (mode) {
			free(mode);
			return 0;
		}
		if ((rc & 0xff) != SQLITE_BUSY || waited >= s->busy_ms) {
			s->waited_ms = waited;
			return store_fail(s, e, "switch to WAL mode");
		}
		sqlite3_sleep(20);
	}
}

/*
 * A new database is created 0600 here, before SQLite sees it: SQLite
 * gives its -wal and -shm files the database's mode, and the runs, the
 * alerts and the queue are nobody else's business.  An existing file
 * keeps the mode its owner gave it (0640 lets a group read, as
 * `bisectctl status` for socket-group members needs).
 */
static int
create_private(const char *path, struct err *e)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	if (fd < 0 && errno != EEXIST)
		return err_errno(e, "cannot create database '%s'", path);
	if (fd >= 0)
		close(fd);
	return 0;
}

/* A connection to path with the store's settings, or NULL with e set. */
/*
 * SQLite's busy handler: wait for another connection's lock, 1 ms at
 * first, then longer, up to s->busy_ms in all; how long it waited is
 * kept for the message when it gives up.
 */
static int
busy_wait(void *arg, int tries)
{
	struct store *s = arg;
	int ms = tries < 10 ? 1 << (tries / 2) : 100;

	if (tries == 0)
		s->waited_ms = 0;
	if (s->waited_ms >= s->busy_ms || (s->busy_stop && *s->busy_stop))
		return 0;
	if (ms > s->busy_ms - s->waited_ms)
		ms = (int)(s->busy_ms - s->waited_ms);
	sqlite3_sleep(ms);
	s->waited_ms += ms;
	return 1;
}

void
store_set_busy_wait(struct store *s, int ms, const atomic_int *stop)
{
	s->busy_ms = ms;
	s->busy_stop = stop;
}

int
store_last_busy(const struct store *s)
{
	int rc = sqlite3_extended_errcode(s->db) & 0xff;

	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

static struct store *
open_conn(const char *path, int flags, struct err *e)
{
	struct store *s;
	int rc;

	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->path = strdup(path)) == NULL) {
		free(s);
		err_errno(e, "cannot open database '%s'", path);
		return NULL;
	}
	rc = sqlite3_open_v2(path, &s->db, flags | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		if (s->db)
			err_set(e, "cannot open database '%s': %s", path,
			    sqlite3_errmsg(s->db));
		else
			err_set(e, "cannot open database '%s': out of memory",
			    path);
		store_close(s);
		return NULL;
	}
	sqlite3_extended_result_codes(s->db, 1);
	s->busy_ms = STORE_BUSY_TIMEOUT_MS;
	sqlite3_busy_handler(s->db, busy_wait, s);
	return s;
}

int
store_open_version(const char *path, int max, struct store **out,
    struct err *e)
{
	struct store *s;
	int version;

	*out = NULL;
	if (create_private(path, e) < 0 ||
	    (s = open_conn(path, SQLITE_OPEN_READWRITE, e)) == NULL)
		return -1;
	if (sqlite3_db_readonly(s->db, "main") == 1) {
		err_set(e, "database '%s' is read-only: bisectd needs to "
		    "write it", path);
		goto fail;
	}
	/* Reading the header first tells a foreign file from a database. */
	if (check_ours(s, &version, e) < 0)
		goto fail;
	if (exec(s, "PRAGMA foreign_keys = ON", "enable foreign keys", e) < 0)
		goto fail;
	if (set_wal(s, e) < 0)
		goto fail;
	if (exec(s, "PRAGMA synchronous = NORMAL", "set synchronous", e) < 0)
		goto fail;
	if (max < 0 || max > store_latest_version())
		max = store_latest_version();
	if (migrate(s, max, e) < 0)
		goto fail;
	*out = s;
	return 0;
fail:
	store_close(s);
	return -1;
}

int
store_open_readonly(const char *path, struct store **out, struct err *e)
{
	struct store *s;
	int version;

	*out = NULL;
	if ((s = open_conn(path, SQLITE_OPEN_READONLY, e)) == NULL)
		return -1;
	if (check_ours(s, &version, e) < 0)
		goto fail;
	if (version < store_latest_version()) {
		err_set(e, "database '%s' has schema version %d and needs "
		    "migrating to %d: run bisectd, or a bisectctl command "
		    "that writes, as a user who may write it", path, version,
		    store_latest_version());
		goto fail;
	}
	*out = s;
	return 0;
fail:
	store_close(s);
	return -1;
}

int
store_open(const char *path, struct store **out, struct err *e)
{
	return store_open_version(path, -1, out, e);
}

void
store_close(struct store *s)
{
	if (s == NULL)
		return;
	sqlite3_close(s->db);
	free(s->path);
	free(s);
}

char *
store_integrity_check(struct store *s, struct err *e)
{
	char *res = NULL;

	store_one(s, e, "check integrity", "PRAGMA integrity_check", "", "t",
	    &res);
	return res;
}

int
store_grow(void **v, size_t *alloc, size_t n, size_t elsize)
{
	size_t want;
	void *p;

	if (n < *alloc)
		return 0;
	want = *alloc ? *alloc * 2 : 16;
	if ((p = realloc(*v, want * elsize)) == NULL)
		return -1;
	memset((char *)p + *alloc * elsize, 0, (want - *alloc) * elsize);
	*v = p;
	*alloc = want;
	return 0;
}

int64_t
store_now(void)
{
	return (int64_t)time(NULL);
}
