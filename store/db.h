/*
 * db.h: the store's database: opened, migrated, closed; its schema
 * version; explicit transactions.
 *
 * store_open() applies the embedded migrations (sql/NNN_*.sql), each in
 * one transaction, tracked by PRAGMA user_version; a database newer than
 * this binary is refused.  Connections use WAL, foreign keys and a busy
 * timeout.  Every logical write is one transaction: on any error it is
 * rolled back and the database is as it was.
 */
#ifndef STORE_DB_H
#define STORE_DB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct err;
struct store;

/* Open (creating if needed) and migrate to the latest schema. */
int store_open(const char *path, struct store **out, struct err *e);

/*
 * Open and migrate only up to version max (tests build old schemas with
 * it).  max = 0 opens without migrating.
 */
int store_open_version(const char *path, int max, struct store **out,
    struct err *e);

/*
 * Open an existing, fully migrated database for reading only: what
 * commands that only read use, so that a user who may read the database
 * but not write it (a socket-group member) can run them.  Nothing is
 * created, migrated or switched to WAL.
 */
int store_open_readonly(const char *path, struct store **out,
    struct err *e);

void store_close(struct store *s);

/* The schema version of the open database, and of this binary. */
int store_schema_version(struct store *s);
int store_latest_version(void);

/* "ok", or the first problem PRAGMA integrity_check reports (malloced). */
char *store_integrity_check(struct store *s, struct err *e);

/*
 * A number that changes whenever another connection commits a change to
 * the database (PRAGMA data_version): a reader's cache of what it
 * computed from the store is good while it stays the same.
 */
int store_data_version(struct store *s, int *version, struct err *e);

/*
 * How long a statement waits for another connection's write lock before
 * it fails (STORE_BUSY_TIMEOUT_MS, 5 s, by default; 0: not at all).
 * The daemon waits far longer: a lock is waited for, not a reason to
 * stop.  A set *stop (or NULL: none) ends the wait at once, so a job
 * waiting out a lock still stops when asked.
 */
void store_set_busy_wait(struct store *s, int ms, const atomic_int *stop);

/* The last statement failed for a lock another connection holds. */
int store_last_busy(const struct store *s);

/* Explicit transactions, for a caller's logical write spanning calls. */
int store_begin(struct store *s, struct err *e);
int store_commit(struct store *s, struct err *e);
void store_rollback(struct store *s);

#endif
