/*
 * driver.h: the bisection driver.  It loads what the store holds for a
 * release range, asks the pure state machine (bisect.h) for the next
 * action, carries it out (fetch, measure, confirm), stores the result
 * and asks again, until a verdict.  Because the state machine reads only
 * stored samples, an interrupted bisect resumes where it stopped and
 * samples already stored are reused.
 */
#ifndef BISECTD_DRIVER_H
#define BISECTD_DRIVER_H

#include <signal.h>
#include <stdint.h>

#include "bisect.h"
#include "conf.h"
#include "store.h"

struct bench_progress;
struct err;

/* The releases GOOD..BAD of an engine as the store orders them. */
struct range {
	struct store_release_list list;	/* the whole engine's, owned */
	size_t lo, hi;			/* indices of GOOD and BAD in list */
};

/* Parse "A..B" and find both ends in the store's order (asking the source
 * when one is unknown).  Errors name the missing version. */
int range_resolve(struct store *s, int64_t engine_id, const char *spec,
    struct range *r, struct err *e);
void range_release(struct range *r);

/* What the state machine needs for a range, loaded from the store. */
struct range_data {
	struct bisect_release *rel;	/* hi - lo + 1 entries */
	struct bisect_sample **bufs;	/* per release and cell */
	size_t n;
	size_t ncells;
};

/* Bisection parameters for an engine and a metric (NULL: the engine's);
 * threshold < 0 means the engine's. */
int driver_params(const struct conf_engine *eng,
    const struct conf_metric *metric, double threshold, int all,
    struct bisect_params *p, struct err *e);

/*
 * Load the analysed samples of each release in the range for the
 * parameters' cells, under the comparability rule (weights hash and
 * hardware identity).  skipped (may be NULL) marks releases to step over.
 */
int range_load(struct store *s, const struct range *r,
    const struct bisect_params *p, const char *weights_sha256,
    const char *hw_key, const int *skipped, struct range_data *d,
    struct err *e);
/* range_load() for an engine's decode cells too (metric tgN). */
int range_load_engine(struct store *s, const struct range *r,
    const struct bisect_params *p, const struct conf_engine *eng,
    const char *weights_sha256, const char *hw_key, const int *skipped,
    struct range_data *d, struct err *e);
void range_data_release(struct range_data *d);

struct driver_opts {
	struct conf_metric metric;	/* kind -1: the engine's */
	double threshold;		/* < 0: the engine's */
	int all;
	int64_t job_id;			/* 0: run in the foreground */
	void (*progress)(void *arg, const struct bench_progress *p);
	void (*note)(void *arg, const char *line);	/* probe log lines */
	void *arg;
	volatile sig_atomic_t *stop;
};

/*
 * Bisect spec ("GOOD..BAD") for eng to a verdict.  On return 0, *verdict
 * is the verdict as a JSON object (a json_t *, caller decrefs) and
 * *status its status.  Returns -1 with e set when the tool or the
 * infrastructure failed.
 */
int driver_bisect(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *spec, const struct driver_opts *o,
    void **verdict, enum bisect_status *status, struct err *e);

/* The exit code DESIGN.md gives a verdict status: 0, 3 or 4. */
int driver_exit_code(enum bisect_status s);

#endif
