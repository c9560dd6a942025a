/*
 * perf.h: the bisection driver.  It loads what the store holds for a
 * release range, asks the pure state machine (bisect.h) for the next
 * action, carries it out (fetch, measure, confirm), stores the result
 * and asks again, until a verdict.  Because the state machine reads only
 * stored samples, an interrupted bisect resumes where it stopped and
 * samples already stored are reused.
 */
#ifndef BISECTD_SEARCH_PERF_H
#define BISECTD_SEARCH_PERF_H

#include <stdatomic.h>
#include <stdint.h>

#include "bisectd/analysis/bisect.h"
#include "config/conf.h"
#include "store/store.h"
#include "range.h"
#include "request.h"

struct bench_progress;
struct err;
struct json_t;

struct perf_opts {
	struct bisect_request req;	/* with commits, spec names two
					 * commits (or tags) of the engine's
					 * repository: the commits between are
					 * bisected, each built */
	int64_t job_id;			/* 0: run in the foreground */
	void (*progress)(void *arg, const struct bench_progress *p);
	void (*note)(void *arg, const char *line);	/* probe log lines */
	void *arg;
	const atomic_int *stop;
};

/*
 * Bisect spec ("GOOD..BAD") for eng to a verdict.  On return 0, *verdict
 * is the verdict as search/verdict_json.h shapes it (new reference) and
 * *status its status.  Returns -1 with e set when the tool or the
 * infrastructure failed.
 */
int perf_bisect(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *spec, const struct perf_opts *o,
    struct json_t **verdict, enum bisect_status *status, struct err *e);

/*
 * What perf_bisect() would start with, without fetching or running
 * anything: the range's releases as the store knows them (the source is
 * asked when an end is unknown, as the bisect does), the parameters,
 * and for both ends the exact command of each cell, with {bin} the
 * folder the release unpacks to.  *plan (new reference): {"engine",
 * "range", "metric", "threshold", "all", "reps", "warmup", "points"
 * ("releases" or "commits"), "releases": [{"version", "state"}],
 * "commands": [{"version", "cell", "command"}]}, each command as
 * bench_command_line() writes it.  With o->commits the range is of
 * commits (the repository cloned or fetched, nothing built): each entry
 * of "releases" adds "subject" and "build", and the plan adds
 * "first_parent" and "builds": [{"commit", "cached", "commands"}], the
 * build lines each end would run.  Returns 0, or -1 with e set.
 */
int perf_plan(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *spec, const struct perf_opts *o,
    struct json_t **plan, struct err *e);

#endif
