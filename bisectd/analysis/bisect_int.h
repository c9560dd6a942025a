/*
 * bisect_int.h: what the files of the bisection share and nothing else
 * sees: a cell's runs (adjacent samples of one process run) and the
 * index of a prompt length.
 */
#ifndef BISECTD_ANALYSIS_BISECT_INT_H
#define BISECTD_ANALYSIS_BISECT_INT_H

#include <stddef.h>

#include "stats.h"

struct bisect_cell;
struct bisect_params;
struct bisect_release;
struct bisect_verdict;

/* The runs of cell c with the confirm flag. */
size_t bisect_count_runs(const struct bisect_cell *c, int confirm);

/*
 * The values of the first count runs of cell c with the flag (each run
 * summarised as how says), into out[]; returns how many, or SIZE_MAX
 * when a sample is not finite or memory runs out.
 */
size_t bisect_take_runs(const struct bisect_cell *c, int confirm,
    size_t count, enum run_summary how, double *out);

/*
 * Outlier runs of a cell's values, as the bisection takes them out:
 * stats_drop_outliers(), but up to BISECT_OUTLIER_RUNS of them however
 * few the runs (still fewer than half).  Returns the number kept.
 */
size_t bisect_drop_outliers(double *v, size_t n);

/*
 * The range's two ends, compared run by run by the sequential test
 * (stats_seq_change() at BISECT_ENDS_ALPHA_DIFF and _SAME): from the
 * initial runs of each, one more run at a time to the end with fewer,
 * the good end on a tie (A B A B ...).  The walk replays that order over
 * the runs stored, each end's first ka and kb runs however many more a
 * later step added (a side of the probes grows); an end whose cost per
 * token reaches zero climbs the ladder of runs first.  It stops at the
 * first state that decides, or at the last one the stored runs reach:
 * the outcome is the same at every later call, so a bisect resumes where
 * it stopped.
 */
struct ends_walk {
	int ka, kb;		/* the good and the bad end's runs there */
	enum outcome outcome;
	struct estimate ea, eb;	/* the metric at ka and kb runs */
	struct estimate rel;	/* b's change over a; no spread when a's
				   metric is not above zero */
	size_t next;		/* UNKNOWN: the end whose runs are missing
				   (0 good, 1 bad); SIZE_MAX: both at the
				   cap */
	int want;		/* the runs next asks for */
};

/*
 * Walk the ends a and b (each with the initial runs stored).  Returns 0,
 * or -1 when an end has fewer runs or its metric cannot be computed.
 */
int bisect_ends_walk(const struct bisect_release *a,
    const struct bisect_release *b, const struct bisect_params *p,
    struct ends_walk *out);

/* The verdict's changes in the order of their releases. */
void bisect_verdict_sort(struct bisect_verdict *v);

/*
 * The verdict's status, reason and main change from the changes, the
 * slide and the unknown the walk found; the power figures it does not
 * state are cleared.
 */
void bisect_verdict_decide(struct bisect_verdict *v);

/* NULL when p is valid, else a static message saying what is not. */
const char *bisect_check_params(const struct bisect_params *p);

/* The index of prompt length len in p's lengths, or -1. */
int bisect_length_index(const struct bisect_params *p, int len);

#endif
