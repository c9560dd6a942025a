/*
 * watch.h: the daemon's periodic jobs beside the queue's bisects: the
 * watch of an engine's source for new releases (bench, compare with the
 * last known good, confirm, alert), and the yardstick check (is the
 * reference release still the fastest of the configured engines?).
 */
#ifndef BISECTD_WATCH_H
#define BISECTD_WATCH_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

struct bench_progress;
struct conf;
struct conf_engine;
struct err;
struct json_t;
struct store;

struct watch_opts {
	const atomic_int *stop;	/* set: stop at the next run; or NULL */
	/* Progress and problems, syslog(3) levels (alert_sink.h's ALERT_LOG_*);
	 * may be NULL. */
	void (*log)(void *arg, int level, const char *msg);
	void *arg;
	/* Each run's progress, as a bisect's (with arg); may be NULL. */
	void (*progress)(void *arg, const struct bench_progress *p);
	int64_t job_id;			/* the queue's job, or 0 */
	/* When not NULL: the last comparison's range ("GOOD..BAD") and
	 * verdict JSON (new reference), left NULL when nothing was
	 * compared.  The caller frees both. */
	char **compared;
	struct json_t **verdict;
};

/*
 * Watch eng: ask its source for new releases; when there are some,
 * compare the newest with the last known good (the newest release an
 * earlier watch found good, else the release before the new ones) by a
 * bisect over LAST_GOOD..NEWEST run in place: both ends measured, a
 * regression confirmed by interleaved re-measurement, and the releases
 * between bisected.  A confirmed regression beyond the threshold records
 * one alert (kind "regression", deduplicated by engine, range and
 * metric); no regression moves the last known good to the newest.
 *
 * Returns the exit code the README documents: 0 (nothing new, or no regression), 3
 * (a regression), 4 (inconclusive; the last known good stays); or -1
 * with e set when the source, a download or the store failed (no alert
 * is recorded for that: the next scheduled watch tries again).
 */
int watch_run(const struct conf *c, const struct conf_engine *eng,
    struct store *s, const struct watch_opts *o, struct err *e);

/*
 * When the yardstick check is next due (epoch seconds): the last check
 * plus [yardstick] every, or now when there was none.  1 when no
 * yardstick is configured, 0 with *when set, -1 on error.
 */
int yardstick_next(const struct conf *c, struct store *s, int64_t *when,
    struct err *e);

/*
 * Re-measure the yardstick release and every engine's latest release on
 * each engine's fit cells and rank them by the yardstick engine's metric
 * (per-token cost, fixed overhead, or ppN/tgN throughput).  When another
 * engine is faster beyond the noise, record an alert (kind "yardstick",
 * deduplicated per fastest engine and version), flagged "weights differ"
 * when the engines use different weights.  Stores the check's time.
 * Returns 0 (the yardstick is the fastest or indistinguishable), 3 (it
 * is not), or -1 with e set.
 */
int yardstick_run(const struct conf *c, struct store *s,
    const struct watch_opts *o, struct err *e);

#endif
