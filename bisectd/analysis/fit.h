/*
 * fit.h: the line time = fixed + per_token * tokens through a release's
 * prefill times, with three or more lengths the curve time = fixed +
 * linear * tokens + square * tokens^2 beside it, and the comparison of
 * two releases: deltas with intervals, the slowdown ratio at each prompt
 * length and its trend, and the kind of change (per-token,
 * fixed-overhead, both, none).
 *
 * Why that curve: attention makes the cost of a prompt token grow with
 * the tokens before it, about linearly, so the whole prefill is a
 * quadratic in the length; its derivative linear + 2 square tokens is
 * the cost per token at a length, and its intercept the fixed overhead
 * the line cannot give when the growth pulls its intercept below zero.
 * Slopes per segment would need no shape, but the intercept of the
 * first segment carries that same bias (-square * n1 * n2), and they
 * leave the cost at a measured length undefined.  The curve is chosen
 * over the line when its square term is positive at FIT_KIND_LEVEL
 * (one-sided t test; the cells weighted by their spread, Welch df): on a
 * true line that happens in about 1% of fits.  A curve that bends the other way (the cost per
 * token falling with length, short prompts underusing the machine) is
 * not chosen: its intercept says nothing about a fixed cost either, and
 * the line's lack-of-fit test already flags it.
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

/* One cell's share of the curve's coefficients. */
struct fit_curve_cell {
	double weight[3];	/* d (fixed, linear, square) / d the cell's mean */
	double var;		/* the variance of that mean, as the fit has it */
	double df;		/* runs - 1 */
};

/* One prompt length's samples (not owned). */
struct fit_cell {
	int tokens;		/* prompt length, > 0 */
	const double *time_ns;	/* n wall times, ns */
	size_t n;
};

/* Which of the two a release's figures (per_token_at, model_*) are of. */
enum fit_model {
	FIT_MODEL_LINE,
	FIT_MODEL_CURVE
};

/* The cost of one prompt token at a length: the model's derivative. */
struct fit_cost {
	int tokens;
	struct estimate cost_ns;	/* ns per token, STATS_LEVEL interval */
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

	/*
	 * The curve, least squares on the cell means each weighted by its
	 * own spread (fit_line()), when there are three or more lengths and
	 * four or more values (has_curve): fixed + linear * n + square *
	 * n^2, and their covariance (ns^2 per token^(i + j), in the order
	 * fixed, linear, square).
	 */
	int has_curve;
	struct estimate fixed_curve_ns;	/* the curve's intercept, ns */
	struct estimate linear_ns;	/* ns per token: the cost at length 0 */
	struct estimate square_ns;	/* ns per token^2: half the growth of
					   the cost per token, per token */
	double curve_cov[3][3];
	/* What the curve's se are made of (fit_cost_at()): each cell's
	 * weights and variance in the cells' order, and curve_df = n - 3
	 * when the residuals are pooled, 0 for Welch over the cells. */
	struct fit_curve_cell curve_cell[FIT_MAX_CELLS];
	double curve_df;
	/* One-sided p of "square > 0"; 1 without a curve. */
	double curvature_p;
	/* The curve's own lack-of-fit F test (four or more lengths); NAN
	 * when it cannot be made. */
	double curve_lack_of_fit_p;

	/*
	 * The chosen model (FIT_MODEL_CURVE when curvature_p < 1 -
	 * FIT_KIND_LEVEL) and its figures.  Under the line they repeat the
	 * line's: the slope at every length, fixed_ns, the ceiling.
	 */
	enum fit_model model;
	struct fit_cost per_token_at[FIT_MAX_CELLS];	/* ascending tokens */
	size_t nper_token_at;
	struct estimate model_fixed_ns;
	/* 0 when the chosen model's intercept is not the fixed cost: the
	 * line's fixed_estimable, or for the curve a negative intercept or
	 * a significant lack of fit of the curve itself (fit_model_why()). */
	int model_fixed_estimable;
	/*
	 * The most tokens per second a prompt reaches, with its interval
	 * (as ceiling_*): under the line 1e9 / slope, approached as prompts
	 * grow (model_ceiling_tokens INFINITY); under the curve the peak of
	 * tokens / time, at model_ceiling_tokens = sqrt(fixed / square),
	 * beyond which each token costs more than the prompt's average
	 * (NAN when the curve's fixed or square is not positive).  Not 1e9
	 * over the cost at the longest length: where the cost grows, that
	 * is the next token's rate, below what the prompt measured.
	 */
	double model_ceiling_tps, model_ceiling_lo, model_ceiling_hi;
	double model_ceiling_tokens;
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

/* The cost per token of b against a at one fit length. */
struct fit_cost_change {
	int tokens;
	struct estimate delta_ns;	/* b - a, ns per token */
	struct estimate rel;		/* b / a - 1 */
	int change;			/* +1, -1, 0 as per_token_change */
};

/*
 * The figures the kind rests on are those of the chosen models: the
 * lines' unless a curve is chosen for a or b (curve set), then each
 * release's own chosen model.
 */
struct fit_comparison {
	struct fit a, b;			/* a: older (good), b: newer */
	int curve;				/* a or b chose the curve */
	/* b - a: the lines' slopes; with a curve, the cost per token at
	 * the longest fit length. */
	struct estimate per_token_delta_ns;
	struct estimate fixed_delta_ns;		/* b - a, model intercepts */
	struct estimate per_token_rel;		/* b / a - 1 */
	struct estimate fixed_rel;		/* (b - a) / |a| */
	/* The cost per token at each fit length, ascending (under two
	 * lines every entry is the slopes'). */
	struct fit_cost_change per_token_at[FIT_MAX_CELLS];
	size_t nper_token_at;
	/* +1 slower, -1 faster, 0 indistinguishable: a part changed only
	 * when its delta's FIT_KIND_LEVEL interval excludes 0 AND
	 * |rel| >= threshold.  With a curve the per-token part changed when
	 * it did at some fit length, each length held to FIT_KIND_LEVEL
	 * shared among the lengths (Bonferroni): +1 when any length is
	 * slower, else -1 when any is faster. */
	int per_token_change;
	int fixed_change;
	/* Both intercepts are the fixed cost (model_fixed_estimable of a
	 * and b); otherwise fixed_change is 0 and the kind is judged on the
	 * per-token part and the ratio trend alone, so it is never
	 * KIND_BOTH. */
	int fixed_estimable;
	const char *fixed_why;	/* static: a's or b's reason */
	const char *hint;	/* static: fit_hint() of a, else of b; NULL */
	enum change_kind kind;
	struct length_ratio ratios[FIT_MAX_CELLS];	/* ascending tokens */
	size_t nratios;
	enum ratio_trend trend;	/* longest vs shortest ratio, significant */
};

/*
 * Fit the line through cells[0..ncells-1], each a distinct prompt length,
 * and with three or more the curve, and choose between them (above).
 * Two cells: per_token = (mean_long - mean_short) / (n_long - n_short),
 * its se from the two means' se, df by Welch-Satterthwaite; fixed is the
 * intercept of the same line.  Three or more: least squares over every
 * sample, se from the residuals, df = samples - 2, and the lack-of-fit F
 * test of the cell means against the line (pure error from the spread
 * inside the cells).  The values of a cell are independent replicates:
 * one per process run (stats_run_values()).  A cell with a single
 * sample gives an unknown spread (se INFINITY) in the two-point fit.
 * Returns 0, or -1 when fewer than two cells, two cells share a length,
 * a length is <= 0, a cell is empty or holds a non-finite time, the
 * least-squares fit has fewer than 3 samples, or more than FIT_MAX_CELLS
 * cells are given.
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
 * The chosen model's cost per token at a length (any, not only a
 * cell's): the line's slope, or the curve's linear + 2 square tokens
 * with its se from the covariance, n - 3 df, and the STATS_LEVEL
 * interval.
 */
void fit_cost_at(const struct fit *f, double tokens, struct estimate *out);

/* The chosen model's time at a length with its band: fit_at() for the
 * line, the curve's fixed + linear n + square n^2 otherwise. */
void fit_model_at(const struct fit *f, double tokens, struct estimate *out);

/* Why the chosen model's intercept is not the fixed cost (static), or
 * NULL when it is (model_fixed_estimable). */
const char *fit_model_why(const struct fit *f);

/*
 * What to do about, or make of, a release's fixed part, for the report
 * to show beside it (static), or NULL when nothing needs saying: the
 * curve chosen, "the cost per token grows with length: fixed overhead
 * from the curve's intercept"; two lengths that leave the line's
 * intercept below zero, to measure a third; a line bent the other way,
 * to fit above where it bends.
 */
const char *fit_hint(const struct fit *f);

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
