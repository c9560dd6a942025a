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
/* Slurm jobs that ended shown after those in flight. */
#define STATUS_SLURM_ENDED	5

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

/*
 * A job's stored arguments (JSON text) as the JSON value the status
 * object carries: the object, or the text as a string where it is not
 * one (no bisectd writes such, an older store might).  A new reference;
 * NULL when memory runs out.
 */
struct json_t *status_job_args_json(const char *args);

/*
 * A job's arguments (status_job_args_json()'s value; a string is read as
 * the stored text) as the command line that would queue them: "0.2.0..
 * 0.2.6 --all --metric pp512 --threshold 5%", "0.2.4 --prompts 128,512
 * --reps 3", "yardstick check", "" for a plain watch; the text as it is
 * where they are not what a job of that kind holds.  Control characters
 * written out.  Returns buf.
 */
const char *status_job_args_text(const char *kind, const struct json_t *args,
    char *buf, size_t len);

/* How a finished job ended, in words, control characters written out
 * ("" while it is queued or running).  Returns buf. */
const char *status_job_outcome(const struct store_job *j, char *buf,
    size_t len);

/*
 * The measurements placed on Slurm: every job in flight, then the newest
 * STATUS_SLURM_ENDED that ended, oldest first, each with its Slurm id,
 * state, node and age in seconds at now.  0 with *out (a new
 * reference), -1 with e.
 */
int status_slurm_json(struct store *s, time_t now, struct json_t **out,
    struct err *e);

/*
 * The status object: "daemon" (the daemon's answer to `status` with its
 * "ok" dropped, consumed; NULL: none runs), "stale_socket", "schedules"
 * (each watch and the yardstick with its next time), "jobs" (the newest
 * limit of them, -1: all), "jobs_total", "slurm_jobs"
 * (status_slurm_json) and "bench_lock" (status_bench_lock_json()).  0
 * with *out (a new reference), or -1 with e.
 */
/* The machine's benchmark lock: "path", "held", and its holder's "pid"
 * and "what" (or "error" when it cannot be read). */
struct json_t *status_bench_lock_json(const struct conf *c);

int status_json(const struct conf *c, struct store *s, struct json_t *daemon,
    int stale_socket, int64_t limit, struct json_t **out, struct err *e);

#endif
