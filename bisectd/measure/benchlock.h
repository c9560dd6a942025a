/*
 * benchlock.h: one benchmark at a time per machine.  Every path that
 * measures (the daemon, a hand-run bench, bisect --now), whatever its
 * database, takes an flock() on one lock file of the machine (see
 * benchlock_path()); the holder writes its pid and command into the
 * file so a second comer can say whom it waits for.
 *
 * The kernel drops the lock when its holder dies, so a crash never leaves
 * a stale lock.  The file is never removed (removing it would let two
 * processes lock two different files of the same name).  The descriptor
 * is close-on-exec: engines started by the holder do not inherit it.
 */
#ifndef BISECTD_BENCHLOCK_H
#define BISECTD_BENCHLOCK_H

#include <stdint.h>
#include <sys/types.h>

struct err;

struct benchlock {
	int fd;			/* the locked file, or -1 */
};

#define BENCHLOCK_INIT { -1 }

#define BENCHLOCK_WHAT_MAX 256

/* The machine's lock file, and where a machine without /run/lock keeps
 * it.  Created mode 0666 in such a shared folder, so that every user's
 * runs wait for each other's. */
#define BENCHLOCK_PATH		"/run/lock/bisectd-bench.lock"
#define BENCHLOCK_FALLBACK	"/tmp/bisectd-bench.lock"

/*
 * The lock file to use: configured (the bench-lock key) when not NULL,
 * else $BISECTD_BENCH_LOCK when set, else BENCHLOCK_PATH where /run/lock
 * is a folder we may write in, else BENCHLOCK_FALLBACK.
 */
const char *benchlock_path(const char *configured);

/* Who holds the lock, as written in the file. */
struct benchlock_holder {
	pid_t pid;		/* 0 if unknown */
	char what[BENCHLOCK_WHAT_MAX];	/* its command, "" if unknown */
};

/*
 * Called while waiting: first when the lock is found taken, then about
 * every second and whenever the holder changes.  Return nonzero to stop
 * waiting (benchlock_acquire() then returns 1).
 */
typedef int (*benchlock_wait_fn)(void *arg,
    const struct benchlock_holder *holder, int64_t waited_ms);

/*
 * Take the lock on path (created 0644 if missing), waiting for as long as
 * it is held unless fn says to stop; then write our pid and what (one
 * line, e.g. "bisectctl bench basert 0.2.4") into the file.  Returns 0
 * when taken, 1 when fn stopped the wait, -1 with e set on errors.
 */
int benchlock_acquire(struct benchlock *l, const char *path,
    const char *what, benchlock_wait_fn fn, void *arg, struct err *e);

/*
 * Take the lock if it is free: 0 when taken, 1 when held by another (its
 * holder in *holder if not NULL), -1 with e set on errors.
 */
int benchlock_try(struct benchlock *l, const char *path, const char *what,
    struct benchlock_holder *holder, struct err *e);

/* Read who holds path's lock, without taking it.  0, or -1 with e set
 * when the file cannot be read (a missing file is "nobody": pid 0). */
int benchlock_holder(const char *path, struct benchlock_holder *holder,
    struct err *e);

/* Release the lock (clearing the holder's line); harmless if not held. */
void benchlock_release(struct benchlock *l);

#endif
