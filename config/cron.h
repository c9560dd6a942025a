/*
 * cron.h: 5-field cron expressions (minute hour day-of-month month
 * day-of-week), as in crontab(5): "*", lists, ranges, steps, month and day
 * names, 0 or 7 for Sunday, and the @hourly/@daily/@weekly/@monthly/
 * @yearly shorthands.  Parsing and the next-fire computation are pure.
 */
#ifndef CONFIG_CRON_H
#define CONFIG_CRON_H

#include <stdint.h>
#include <time.h>

struct cron {
	uint64_t minute;	/* bit i: minute i matches (0-59) */
	uint32_t hour;		/* 0-23 */
	uint32_t dom;		/* bits 1-31 */
	uint16_t month;		/* bits 1-12 */
	uint8_t dow;		/* bits 0-6, Sunday = 0 */
	int dom_star;		/* day-of-month field was "*" */
	int dow_star;		/* day-of-week field was "*" */
};

/*
 * Parse expr.  Returns 0, or -1 with a message naming the bad field in
 * why (a static string).
 */
int cron_parse(const char *expr, struct cron *c, const char **why);

/*
 * The first time strictly after `after` at which c fires, in the local
 * time zone.  cron's day rule: when both day-of-month and day-of-week
 * are restricted, a day matches if either does.  A local time that does
 * not exist (a DST gap) fires at the first minute after the gap; a local
 * time that exists twice (DST end) fires once, the first time.
 * Returns 0, or -1 if nothing matches within eight years (e.g. "0 0 31 2 *").
 */
int cron_next(const struct cron *c, time_t after, time_t *next);

/*
 * When a schedule fires next, counted as the daemon counts: from its
 * last fire time `last`, or from `now` when it never fired (last 0).
 * *next <= now means it is due now: missed while no daemon ran, it runs
 * at the daemon's start.  0, or -1 as cron_next().
 */
int cron_next_due(const struct cron *c, time_t last, time_t now,
    time_t *next);

#endif
