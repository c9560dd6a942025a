/*
 * request.h: what a bisect or a report of a range is asked for, as one
 * typed value: the metric searched (or the output canary), the
 * threshold, every change or the first, releases or commits.  bisectctl
 * fills it from its options, the daemon's HTTP server from a query, and
 * the queue keeps it as its job's arguments: bisect_request_json() and
 * bisect_request_from_json() are the one encoding.
 */
#ifndef BISECTD_SEARCH_REQUEST_H
#define BISECTD_SEARCH_REQUEST_H

#include "config/conf.h"

struct err;

struct bisect_request {
	struct conf_metric metric;	/* kind -1: the engine's; METRIC_CANARY:
					 * the first change of the canary's
					 * text */
	double threshold;		/* a fraction; < 0: the engine's */
	int all;			/* every change point, not the first */
	int commits;			/* the range's ends are commits (or
					 * tags) of the engine's repository */
};

/* The engine's metric and threshold, the first change, releases. */
void bisect_request_init(struct bisect_request *r);

/* The request asks for the output canary, not a time. */
int bisect_request_canary(const struct bisect_request *r);

/*
 * The metric and the threshold as people write them (per-token, fixed,
 * ppN, tgN or output; 20%), each left as it is when NULL.  0, or which
 * of them does not read: BISECT_REQUEST_BAD_METRIC or _THRESHOLD, for the
 * caller's message (bisectctl's option, the query's parameter).
 */
#define BISECT_REQUEST_BAD_METRIC	1
#define BISECT_REQUEST_BAD_THRESHOLD	2
int bisect_request_set(struct bisect_request *r, const char *metric,
    const char *threshold);

/*
 * The queued job's arguments: {"range", "metric" (its name, or null for
 * the engine's), "threshold" (the fraction, or null), "all", "commits"},
 * compact JSON, malloced; NULL when memory runs out.  The threshold may
 * also be read back as a percentage's text, "20%".
 */
char *bisect_request_json(const struct bisect_request *r, const char *range);

/*
 * A job's arguments back into r, and *range (malloced).  -1 with e
 * naming what is wrong ("bisect job: ...").
 */
int bisect_request_from_json(const char *json, struct bisect_request *r,
    char **range, struct err *e);

/* Split "A..B" into its ends (each shorter than RANGE_END_MAX): 0, or
 * -1 with an err_usage() error. */
#define RANGE_END_MAX	256
int range_split(const char *spec, char good[RANGE_END_MAX],
    char bad[RANGE_END_MAX], struct err *e);

#endif
