/*
 * status.h: what `bisectctl status --format json` prints and the
 * daemon's /api/status serves, built in one place: the daemon's own
 * status object, its schedules' next fire times, and the jobs of the
 * store with how each ended, in words.
 */
#ifndef BISECTD_STATUS_H
#define BISECTD_STATUS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* The jobs `status` shows unless asked for more. */
#define STATUS_JOBS	10

struct conf;
struct conf_engine;
struct err;
struct json_t;
struct store;
struct store_job;

/*
 * When g's watch is next queued (epoch seconds) in *next, counted as
 * the daemon counts it from the store's last fire time (s may be NULL:
 * counted from now).  0, 1 when g has no schedule, -1 with e set.
 */
int status_next_watch(const struct conf_engine *g, struct store *s,
    time_t now, time_t *next, struct err *e);

/* How a finished job ended, in words, control characters written out
 * ("" while it is queued or running).  Returns buf. */
const char *status_job_outcome(const struct store_job *j, char *buf,
    size_t len);

/*
 * The status object: "daemon" (the daemon's answer to `status` with its
 * "ok" dropped, consumed; NULL: none runs), "stale_socket", "schedules"
 * (each watch and the yardstick with its next time), "jobs" (the newest
 * limit of them, -1: all) and "jobs_total".  0 with *out (a new
 * reference), or -1 with e.
 */
int status_json(const struct conf *c, struct store *s, struct json_t *daemon,
    int stale_socket, int64_t limit, struct json_t **out, struct err *e);

#endif
