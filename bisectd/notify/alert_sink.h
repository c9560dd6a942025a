/*
 * alert_sink.h: alerts and their delivery.  Any part records an alert in the
 * store (store_alert_record: kind, engine, dedup key, one-line summary,
 * JSON body); the daemon then calls alert_deliver_pending(), which hands
 * each alert to every configured sink ([alert "NAME"]: webhook, command
 * or email), stores every attempt, and retries failures with
 * exponential backoff.
 */
#ifndef BISECTD_ALERT_H
#define BISECTD_ALERT_H

#include <stddef.h>
#include <stdint.h>

struct conf;
struct err;
struct json_t;
struct store;

/* Levels passed to the log callbacks: syslog(3)'s numbers. */
#define ALERT_LOG_ERR		3
#define ALERT_LOG_WARNING	4
#define ALERT_LOG_INFO		6
#define ALERT_LOG_DEBUG		7

struct alert_opts {
	/* Where delivery failures and successes are told (may be NULL). */
	void (*log)(void *arg, int level, const char *msg);
	void *arg;
};

/* Delivery timing: the first retry after ALERT_RETRY_BASE_S, doubling up
 * to ALERT_RETRY_MAX_S; after ALERT_MAX_ATTEMPTS failures a sink gives
 * the alert up.  One attempt never takes longer than ALERT_TIMEOUT_MS. */
#define ALERT_RETRY_BASE_S	30
#define ALERT_RETRY_MAX_S	(6 * 3600)
#define ALERT_MAX_ATTEMPTS	12
#define ALERT_TIMEOUT_MS	10000

/*
 * Deliver every alert that some sink has not yet delivered and whose
 * next attempt is due (now >= next attempt time), one attempt per alert
 * and sink per call.  Every attempt is stored (time, ok, HTTP status or
 * exit code, error); a failed one schedules the next attempt with
 * backoff.  A failing sink never makes this return -1: -1 only when the
 * store fails.  Sinks added to the configuration later also get the
 * alerts recorded before them.
 */
int alert_deliver_pending(const struct conf *c, struct store *s,
    const struct alert_opts *o, struct err *e);

/* alert_deliver_pending() as if the clock showed now (epoch seconds):
 * how tests step past a backoff without waiting for it. */
int alert_deliver_at(const struct conf *c, struct store *s,
    const struct alert_opts *o, int64_t now, struct err *e);

/*
 * The earliest time (epoch seconds) a pending delivery is due, in *when,
 * so the daemon can sleep until then: 0 and *when set, or 1 when nothing
 * is pending, or -1.
 */
int alert_next_due(const struct conf *c, struct store *s, int64_t *when,
    struct err *e);

/* Where a regression alert points its reader; either may be NULL. */
struct alert_where {
	const char *report;	/* the command that shows the report */
	const char *machine;	/* "HOST (CPU model)" */
	/* A matrix's cell: the other cells over the same range, in words
	 * ("m/a/x: no regression (...); m/b/x: ..."), or NULL. */
	const char *cells;
};

/*
 * Record the alert for a regression verdict (as search/perf.h's perf_bisect
 * returns it) of eng over spec "GOOD..BAD", once per engine, range and
 * metric (the dedup key).  The summary is alert_regression_text()'s
 * line; the body also carries `report` and `machine` from w.  Returns 0
 * when recorded, 1 when that regression had been alerted already, -1 on
 * error.
 */
int alert_record_regression(struct store *s, const char *engine,
    const char *spec, const char *metric, const struct json_t *verdict,
    const struct alert_where *w, struct err *e);

/*
 * Record the alert for a gradual verdict (status "gradual", a slide: no
 * one release the cause) of eng over spec, once per engine, slide and
 * metric: its summary says the total change with its interval, the
 * releases it spreads over and the change a release, e.g. "basert: a
 * slide from 0.3.0 to 0.3.8, per-token cost +62.0% [+55.1%, +69.2%]
 * over 8 releases (+6.2% a release)"; the body carries the verdict, w's
 * report and machine.  0 when recorded, 1 when alerted already, -1 on
 * error.
 */
int alert_record_gradual(struct store *s, const char *engine,
    const char *spec, const char *metric, const struct json_t *verdict,
    const struct alert_where *w, struct err *e);

/*
 * The one-line summary of a regression verdict, into buf (len bytes),
 * with one named figure: the metric's factor from `confirm_change` (the
 * interleaved re-measurement of the boundary) when there is one, else
 * from `metric_change` (the search's samples), e.g. "basert 0.2.4:
 * per-token cost x3.56 since 0.2.3 (confirm_change, interleaved
 * re-measurement), confirmed, on HOST (CPU); report: bisectctl -c CONF
 * report basert 0.2.0..0.2.6".  w may be NULL.  Returns buf.
 */
const char *alert_regression_text(const char *engine, const char *metric,
    const struct json_t *verdict, const struct alert_where *w, char *buf,
    size_t len);

#endif
