/*
 * fit.h: the line time = fixed + per_token * tokens through a release's
 * prefill times, and the comparison of two releases' lines: deltas with
 * intervals, the slowdown ratio at each prompt length and its trend, and
 * the kind of change (per-token, fixed-overhead, both, none).
 *
 * Pure: arrays in, structs out.  Times are ns inside; the *_ms figures a
 * report prints are these divided by 1e6.
 */
#ifndef BISECTD_FIT_H
#define BISECTD_FIT_H

#include <stddef.h>

#include "stats.h"

#define FIT_MAX_CELLS 32

/* The confidence at which a part (per-token, fixed) is said to have
 * changed; the intervals reported stay at STATS_LEVEL. */
#define FIT_KIND_LEVEL 0.99

/* One prompt length's samples (not owned). */
struct fit_cell {
	int tokens;		/* prompt length, > 0 */
	const double *time_ns;	/* n wall times, ns */
	size_t n;
};

enum fit_method {
	FIT_TWO_POINT,		/* two lengths: the line through the two means */
	FIT_LEAST_SQUARES	/* three or more: ordinary least squares on samples */
};

struct fit {
	enum fit_method method;
	size_t ncells;
	size_t nsamples;
	struct estimate per_token_ns;	/* the slope, ns per prompt token */
	struct estimate fixed_ns;	/* the intercept, ns */
	/* The covariance of the intercept and slope estimates (ns^2 per
	 * token): what fit_at() needs besides their se. */
	double cov_ns2;
	double ceiling_tps;	/* 1e9 / per_token_ns; NAN if the slope <= 0 */
	double ceiling_lo;	/* from the slope's interval; 0 if unbounded */
	double ceiling_hi;	/* INFINITY when the slope's interval reaches 0 */
	/*
	 * 0 when the line does not fit the lengths: a negative fixed
	 * overhead, or with three or more lengths a lack of fit significant
	 * at FIT_KIND_LEVEL (short prompts bend the line).  The intercept is
	 * then an artefact and is not to be reported as the fixed cost.
	 */
	int fixed_estimable;
	const char *fixed_why;	/* static, NULL when estimable */
	double lack_of_fit_p;	/* the F test's p; NAN when it cannot be made */
};

enum change_kind {
	KIND_NONE,		/* neither part changed beyond the noise and threshold */
	KIND_PER_TOKEN,
	KIND_FIXED_OVERHEAD,
	KIND_BOTH
};

enum ratio_trend {
	TREND_FLAT,		/* no significant change of the ratio with length */
	TREND_RISING,		/* slowdown grows with length: per-token cost */
	TREND_FALLING		/* slowdown fades with length: fixed overhead */
};

/* The slowdown b / a at one prompt length, mean over mean. */
struct length_ratio {
	int tokens;
	struct estimate ratio;	/* value, se, df and the interval */
};

struct fit_comparison {
	struct fit a, b;			/* a: older (good), b: newer */
	struct estimate per_token_delta_ns;	/* b - a */
	struct estimate fixed_delta_ns;		/* b - a */
	struct estimate per_token_rel;		/* b / a - 1 */
	struct estimate fixed_rel;		/* (b - a) / |a| */
	/* +1 slower, -1 faster, 0 indistinguishable: a part changed only
	 * when its delta's FIT_KIND_LEVEL interval excludes 0 AND
	 * |rel| >= threshold. */
	int per_token_change;
	int fixed_change;
	/* Both lines fit (fixed_estimable of a and b); otherwise fixed_change
	 * is 0 and the kind is judged on the per-token part and the ratio
	 * trend alone, so it is never KIND_BOTH. */
	int fixed_estimable;
	const char *fixed_why;	/* static: a's or b's reason */
	enum change_kind kind;
	struct length_ratio ratios[FIT_MAX_CELLS];	/* ascending tokens */
	size_t nratios;
	enum ratio_trend trend;	/* longest vs shortest ratio, significant */
};

/*
 * Fit the line through cells[0..ncells-1], each a distinct prompt length.
 * Two cells: per_token = (mean_long - mean_short) / (n_long - n_short),
 * its se from the two means' se, df by Welch-Satterthwaite; fixed is the
 * intercept of the same line.  Three or more: least squares over every
 * sample, se from the residuals, df = samples - 2, and the lack-of-fit F
 * test of the cell means against the line (pure error from the spread
 * inside the cells).  The values of a cell are independent replicates:
 * one per process run (stats_run_values()).  A cell with a single
 * sample gives an unknown spread (se INFINITY) in the two-point fit.
 * Returns 0, or -1 when fewer than two cells, two cells share a length,
 * a length is <= 0, a cell is empty or holds a non-finite time, or the
 * least-squares fit has fewer than 3 samples.
 */
int fit_line(const struct fit_cell *cells, size_t ncells, struct fit *out);

/*
 * The fitted line's time at a prompt length (which need not be one of
 * the cells'): fixed + per_token * tokens, its se from both estimates'
 * variances and their covariance, the slope's df, and the STATS_LEVEL
 * interval: the band around the line.  At 0 it is the intercept.
 */
void fit_at(const struct fit *f, double tokens, struct estimate *out);

/*
 * Compare releases a and b.  Their cells are matched by tokens; the fits
 * use the lengths in fit_lengths[0..nfit-1] (every common length when
 * fit_lengths is NULL) and the ratios every common length.  threshold is
 * a fraction (0.20).  Returns 0, or -1 when fewer than two fit lengths
 * exist in both, a fit fails, or more than FIT_MAX_CELLS lengths are
 * given.
 */
int fit_compare(const struct fit_cell *a, size_t na,
    const struct fit_cell *b, size_t nb,
    const int *fit_lengths, size_t nfit, double threshold,
    struct fit_comparison *out);

/*
 * The ratio b / a of two cells' mean times (delta method, Welch df).
 * Returns 0, or -1 when a cell is empty, not finite, or a's mean is 0.
 */
int fit_ratio(const double *a_ns, size_t na, const double *b_ns, size_t nb,
    struct estimate *out);

/* The cell of c[0..n-1] at tokens, or NULL. */
const struct fit_cell *fit_cell_find(const struct fit_cell *c, size_t n,
    int tokens);

/* "per-token", "fixed-overhead", "both", "none": the report's words. */
const char *fit_kind_name(enum change_kind k);

/* "flat", "rising", "falling". */
const char *fit_trend_name(enum ratio_trend t);

#endif
