/*
 * alert_log.h: alerts recorded once, their delivery to each sink, every
 * attempt, and the watch's and yardstick's small named values.
 */
#ifndef STORE_ALERT_LOG_H
#define STORE_ALERT_LOG_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct store;

/* --- alerts --- */
/*
 * Record an alert once per dedup_key: returns 0 when recorded, 1 when an
 * alert with that key exists already, -1 on error.
 */
int store_alert_record(struct store *s, const char *kind, const char *engine,
    const char *dedup_key, const char *summary, const char *body,
    struct err *e);

/* --- alert delivery, watch and yardstick state --- */
struct store_alert {
	int64_t id;
	int64_t created;
	char *kind, *engine, *dedup_key, *summary;	/* malloced */
	char *body;		/* the alert's JSON; malloced */
};
void store_alert_release(struct store_alert *a);

/*
 * Give sink (target: its URL, command or addresses as they may be shown,
 * for the listing) a delivery due at due_at of every alert recorded at or
 * after since that it has none of yet: new alerts, and for a sink added
 * to the configuration the recent ones, never an old backlog.  The
 * sink's earlier rows take this target too.  due_at is the caller's
 * clock, so the rows are due in the pass that enlists them even when
 * the clock turned a second since the pass began.
 */
int store_alert_enlist(struct store *s, const char *sink, const char *target,
    int64_t since, int64_t due_at, struct err *e);

struct store_alert_due {
	struct store_alert alert;
	int attempts;		/* made before this one */
};

struct store_alert_dues {
	struct store_alert_due *v;	/* malloced */
	size_t n;
};

/* The pending deliveries of sink due at now (next_at <= now), oldest
 * alert first, at most max. */
int store_alert_due(struct store *s, const char *sink, int64_t now,
    size_t max, struct store_alert_dues *out, struct err *e);
void store_alert_dues_release(struct store_alert_dues *d);

struct store_alert_attempt {
	int64_t alert_id;
	const char *sink;
	int64_t at;		/* Unix time it started */
	int ok;
	long http_status;	/* -1: none */
	int exit_code;		/* -1: none */
	const char *error;	/* NULL when ok */
	int64_t duration_ms;
	int64_t next_at;	/* failed: when to retry; 0: give up */
};

/* Store an attempt and move its delivery to delivered, failed, or
 * pending until next_at, in one transaction. */
int store_alert_attempt_add(struct store *s,
    const struct store_alert_attempt *a, struct err *e);

/* Move every pending delivery of sink due before until to until,
 * without counting an attempt: a receiver that is down is not asked
 * again for each alert in turn. */
int store_alert_postpone(struct store *s, const char *sink, int64_t until,
    struct err *e);

/* The earliest next attempt of sink's pending deliveries: 0 and *when,
 * 1 if none is pending, -1. */
int store_alert_next_due(struct store *s, const char *sink, int64_t *when,
    struct err *e);

struct store_alert_try {
	int64_t at;
	int ok;
	long http_status;	/* -1: none */
	int exit_code;		/* -1: none */
	char *error;		/* or NULL; malloced */
	int64_t duration_ms;
};

struct store_alert_sink {
	char *sink, *target, *state;	/* malloced */
	int attempts;
	int64_t next_at;
	int64_t delivered;	/* 0: not yet */
	struct store_alert_try *tries;	/* oldest first; malloced */
	size_t ntries;
};

struct store_alert_row {
	struct store_alert alert;
	struct store_alert_sink *sinks;	/* by name; malloced */
	size_t nsinks;
};

struct store_alert_rows {
	struct store_alert_row *v;	/* newest first; malloced */
	size_t n;
};

/* The newest limit alerts with their deliveries and attempts. */
int store_alert_list(struct store *s, int limit, struct store_alert_rows *out,
    struct err *e);
/* The same of one engine's alerts (engine NULL: every engine's). */
int store_alert_list_engine(struct store *s, const char *engine, int limit,
    struct store_alert_rows *out, struct err *e);
void store_alert_rows_release(struct store_alert_rows *r);

/* A named value of watch_state: 0 with *value (malloced) and *updated
 * (may be NULL), 1 if unset, -1. */
int store_state_get(struct store *s, const char *key, char **value,
    int64_t *updated, struct err *e);
int store_state_set(struct store *s, const char *key, const char *value,
    struct err *e);

#endif
