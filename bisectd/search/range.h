/*
 * range.h: a release range GOOD..BAD of an engine as the store orders it,
 * the bisection parameters of an engine and metric, and the loader that
 * reads a range's stored samples into what the pure bisection
 * (analysis/bisect.h) takes.  The driver and the report builder both
 * read through it, so they see the same samples.
 */
#ifndef BISECTD_RANGE_H
#define BISECTD_RANGE_H

#include <stddef.h>
#include <stdint.h>

#include "bisectd/analysis/bisect.h"
#include "config/conf.h"
#include "request.h"
#include "store/store.h"

struct bisect_request;
struct err;

/* The releases GOOD..BAD of an engine as the store orders them. */
struct range {
	struct store_release_list list;	/* the whole engine's, owned */
	size_t lo, hi;			/* indices of GOOD and BAD in list */
};

/* range_resolve()'s answer to text that is no range, or a range given
 * backwards: the caller's mistake, not the store's. */
#define RANGE_BAD	(-2)
/* ... and to an end the store has no release of (yet: a refresh from the
 * source may bring it).  Both are err_usage() errors. */
#define RANGE_UNKNOWN	(-3)


/* Parse "A..B" and find both ends in the store's order.  Returns 0, -1
 * (the store failed), RANGE_BAD or RANGE_UNKNOWN (the error names the
 * missing version). */
int range_resolve(struct store *s, int64_t engine_id, const char *spec,
    struct range *r, struct err *e);
void range_release(struct range *r);

/* rel's state and failure as the store has them now: a fetch may have
 * failed (or succeeded) since the range was read. */
int range_reload(struct store *s, int64_t engine_id,
    struct store_release *rel, struct err *e);

/* What the state machine needs for a range, loaded from the store. */
struct range_data {
	struct bisect_release *rel;	/* hi - lo + 1 entries */
	struct bisect_sample **bufs;	/* per release and cell */
	size_t n;
	size_t ncells;
};

/* Bisection parameters for an engine and a request (NULL, or its
 * metric, threshold and the canary: the engine's). */
int range_params(const struct conf_engine *eng,
    const struct bisect_request *req, struct bisect_params *p,
    struct err *e);

/* The runs of each release of a range, read from the store in one pass
 * (store_release_runs_read()): what the verdict and the report read. */
struct range_runs {
	struct store_release_runs *rel;	/* hi - lo + 1, in range order */
	size_t n;
};

int range_runs_load(struct store *s, const struct range *r,
    const char *weights_sha256, const char *hw_key, struct range_runs *out,
    struct err *e);
void range_runs_release(struct range_runs *rr);

/*
 * Whether a stored sample is one the parameters' metric reads, and its
 * value into *v: every sample's time, but for a serve run only the
 * sample of the figure searched (a serve run stores all its figures,
 * one sample each, idx the figure), and for a run's value (peak memory)
 * that value, where the run has one.
 */
int range_sample_value(const struct bisect_params *p,
    const struct store_point *pt, double *v);

/*
 * The analysed samples of each release in the range for the parameters'
 * cells from its runs, under the comparability rule (the engine's
 * measurement definition of each cell, which holds the weights hash and
 * the hardware identity).  skipped (may be NULL) marks releases to step
 * over.
 */
int range_load_engine(const struct range_runs *rr,
    const struct bisect_params *p, const struct conf_engine *eng,
    const char *weights_sha256, const char *hw_key, const int *skipped,
    struct range_data *d, struct err *e);
void range_data_release(struct range_data *d);

/* The store's query for parameter cell i of the release release_id,
 * under the engine's measurement definition of that cell. */
int range_cell_query(const struct bisect_params *p, size_t i,
    const struct conf_engine *eng, int64_t release_id,
    const char *weights_sha, const char *hw_key,
    struct store_cell_query *q, struct err *e);

/* range_cell_query() of every parameter cell, for no release in
 * particular (release_id 0): the definitions are computed once. */
int range_cell_queries(const struct bisect_params *p,
    const struct conf_engine *eng, const char *weights_sha,
    const char *hw_key, struct store_cell_query q[BISECT_MAX_CELLS],
    struct err *e);

#endif
