/*
 * stats.h: the statistics every figure carries: per-cell summaries, the
 * Student-t distribution, estimates with intervals, throughput, and the
 * three-way comparison outcome (same, different, unknown) the bisection
 * decides on.  Pure functions over arrays; no I/O, no allocation.
 *
 * Times are nanoseconds.  An estimate whose spread cannot be known (a
 * cell with a single sample) has se = INFINITY and an infinite interval,
 * so that it can never decide a comparison.
 */
#ifndef BISECTD_STATS_H
#define BISECTD_STATS_H

#include <stddef.h>
#include <stdint.h>

/* The confidence level of every interval the analysis reports. */
#define STATS_LEVEL 0.95

/* One matrix cell's samples, summarised. */
struct cell_stats {
	size_t n;
	double mean;
	double sd;		/* sample standard deviation (n - 1); 0 when n == 1 */
	double cv;		/* sd / |mean|; 0 when mean is 0 */
	double min, max;
	double median;
	double se;		/* sd / sqrt(n); INFINITY when n == 1 */
};

/*
 * How the samples of one process run become that run's one value.  The
 * run is the unit of replication: samples inside it share the process's
 * start (page cache, memory placement, clocks), so they are not
 * independent repetitions.  docs/statistics.md gives the measured choice.
 */
enum run_summary {
	RUN_MEAN,		/* the mean of the run's samples */
	RUN_MEDIAN		/* their median */
};

/* A cell of runs of one or more samples each: both levels of spread. */
struct run_stats {
	size_t runs;		/* process runs: the unit of replication */
	size_t samples;		/* every sample of every run */
	double mean;		/* mean of the run values */
	double sd_between;	/* sd of the run values (runs - 1); 0 when 1 run */
	double sd_within;	/* pooled sd of samples around their run's mean;
				   NAN when no run has two samples */
	double cv_between;	/* sd_between / |mean| */
	double cv_within;	/* sd_within / |mean|; NAN like sd_within */
	struct cell_stats values;	/* the run values summarised */
};

/*
 * A figure with its uncertainty: value, standard error, the degrees of
 * freedom of its t distribution, and the STATS_LEVEL interval [lo, hi].
 */
struct estimate {
	double value;
	double se;		/* INFINITY: unknown spread */
	double df;		/* > 0; may be fractional (Welch) */
	double lo, hi;
};

/* The outcome of comparing two releases on one metric (after Pinpoint). */
enum outcome {
	OUTCOME_SAME,		/* confidently no change that matters */
	OUTCOME_DIFFERENT,	/* confidently a change in the asked direction */
	OUTCOME_UNKNOWN		/* neither: more samples needed */
};

/* Prefill or decode throughput derived from a cell's times. */
struct throughput {
	size_t n;
	double tps;		/* tokens / mean time */
	double sd;		/* spread of tps, by the delta method: tps * cv */
	double cv;		/* equals the times' cv */
	double lo, hi;		/* tokens / the time interval's ends */
};

/*
 * Summarise n samples x[0..n-1].  Returns 0, or -1 when n is 0 or a
 * sample is not finite (out is left untouched then).
 */
int stats_cell(const double *x, size_t n, struct cell_stats *out);

/* The value of one run of n > 0 samples x[0..n-1]; 0, or -1 when a sample
 * is not finite or memory runs out. */
int stats_run_value(const double *x, size_t n, enum run_summary how,
    double *out);

/*
 * The run values of samples x[0..n-1]: consecutive samples with the same
 * run[i] form one run (the store orders samples by run), and a run id of
 * 0 is a run of its own.  run may be NULL: every sample is its own run.
 * Writes one value per run, in order, to out (room for n) and their
 * number to *nruns.  Returns 0, or -1 when a sample is not finite or
 * memory runs out.
 */
int stats_run_values(const double *x, const int64_t *run, size_t n,
    enum run_summary how, double *out, size_t *nruns);

/*
 * Outlier runs: with 5 or more run values v[0..n-1], those both more
 * than STATS_OUTLIER_SDS robust standard deviations (1.4826 x the median
 * absolute deviation) and more than STATS_OUTLIER_REL x the median away
 * from the median are taken out, keeping the order of the rest: a run
 * the process start made twice as slow or more (or, at the other end,
 * a run that took no time), not the tail of ordinary noise.
 * Nothing is taken out when the deviation is 0 or more than a quarter
 * would go (then the cell is not "a few bad runs").  Returns the number
 * kept, or n when memory runs out.
 */
#define STATS_OUTLIER_SDS 5.0
#define STATS_OUTLIER_REL 1.0
size_t stats_drop_outliers(double *v, size_t n);

/*
 * The same, with at most `most` runs taken out instead of a quarter
 * (never half or more: the median and the deviation that set the fence
 * are then no longer the ordinary runs').
 */
size_t stats_drop_outliers_upto(double *v, size_t n, size_t most);

/*
 * Summarise a cell of runs (grouped as stats_run_values() does): the run
 * values' statistics, and the between-run and within-run spread.
 * Returns 0, or -1 when n is 0, a sample is not finite, or memory runs
 * out.
 */
int stats_runs(const double *x, const int64_t *run, size_t n,
    enum run_summary how, struct run_stats *out);

/* P(T <= t) for Student's t with df > 0 degrees of freedom (NAN if df <= 0). */
double stats_t_cdf(double t, double df);

/*
 * The p-quantile of Student's t with df > 0 (fractional allowed): the t
 * with P(T <= t) = p, accurate to about 1e-9.  NAN when p is outside
 * (0, 1) or df <= 0.
 */
double stats_t_quantile(double p, double df);

/* P(F <= f) for Fisher's F with d1, d2 > 0 degrees of freedom (NAN if not). */
double stats_f_cdf(double f, double d1, double d2);

/*
 * Welch-Satterthwaite degrees of freedom of a sum of k independent terms,
 * term i having variance var[i] with df[i] degrees of freedom:
 * (sum var)^2 / sum(var^2 / df).  When every variance is 0 the result is
 * sum(df), so a noiseless figure keeps a finite df.
 */
double stats_welch_df(const double *var, const double *df, size_t k);

/* The mean of a cell as an estimate (df = n - 1, or 1 with se INFINITY). */
void stats_mean_estimate(const struct cell_stats *c, struct estimate *out);

/* Fill e->lo and e->hi from value, se and df at STATS_LEVEL. */
void stats_interval(struct estimate *e);

/* b - a for independent estimates; Welch-Satterthwaite df. */
void stats_diff(const struct estimate *b, const struct estimate *a,
    struct estimate *out);

/*
 * The relative change b / a - 1 of independent estimates, by the delta
 * method: se = |b/a| * sqrt((se_a/a)^2 + (se_b/b)^2), Welch df over the two
 * relative variances.  a's sign is taken as the reference: a negative
 * reference (an intercept below zero) divides by |a|.  Returns -1 when a
 * is 0 (no relative change exists), else 0.
 */
int stats_rel_change(const struct estimate *b, const struct estimate *a,
    struct estimate *out);

/*
 * The three-way outcome on a relative change of a cost (positive =
 * slower) against threshold (a fraction, 0.20 for 20%), cut at half the
 * threshold, the middle of the indifference zone 0..threshold:
 *   DIFFERENT  the interval lies wholly above threshold / 2;
 *   SAME       the interval lies wholly below threshold / 2 (faster
 *              counts as the same: only slowdowns are regressions);
 *   UNKNOWN    otherwise: more samples are needed.
 * A change of threshold or more is found, one of 0 is not, and one in
 * between may go either way.  docs/statistics.md gives the figures.
 */
enum outcome stats_outcome(const struct estimate *rel, double threshold);

/*
 * The same outcome by a sequential test, for a comparison whose runs
 * arrive one at a time (the bisection's two ends): Wald's sequential
 * probability ratio test of two simple hypotheses on the log of the
 * ratio, no change (0) and a slowdown of (1 + threshold / 2)^2 - 1 (21%
 * at a threshold of 20%), whose midpoint on the log scale is the cut of
 * stats_outcome().  With a normal likelihood at rel's standard error,
 * the log likelihood ratio is d (l - d / 2) / se^2 (l = ln(1 + rel), d
 * the slowdown's log), and
 *   DIFFERENT  it reaches ln(1 / alpha_diff), or the one-sided interval
 *              at alpha_diff lies wholly above the cut (a change far
 *              beyond the hypotheses, which the ratio weighs slowly);
 *   SAME       it falls to -ln(1 / alpha_same), or the one-sided
 *              interval at alpha_same lies wholly below the cut;
 *   UNKNOWN    otherwise (or rel has no spread): one more run.
 * A change to a cost at or below zero (rel <= -1) has no log: it is
 * SAME when its interval lies below the cut, else UNKNOWN.  A change
 * whose runs never vary (se 0: a peak memory) is judged by its value, as
 * stats_outcome() does.
 * The standard error of a few runs is estimated: the z the normal test
 * asks for is read on Student's t at rel's df (the same tail), so a
 * spread that came out small by chance decides less early.  A change of
 * 0 or less is called DIFFERENT with probability about alpha_diff, one
 * of the slowdown or more SAME about alpha_same (Wald's bounds);
 * tests/unit/test_bisect.c (test_ends_seq) measures both.
 */
enum outcome stats_seq_change(const struct estimate *rel, double threshold,
    double alpha_diff, double alpha_same);

/*
 * Ranks of n figures where larger is better, by their intervals
 * [lo[i], hi[i]]: rank[i] is 1 + the number of figures whose interval
 * lies wholly above i's, so that figures whose intervals overlap share
 * a rank (a tie) and a figure ranks below another only when the two
 * intervals are apart; an interval may reach INFINITY (a throughput
 * whose time interval reaches zero).  A figure with a NAN end (not
 * measured) gets rank 0 and counts for no other.
 */
void stats_rank_intervals(const double *lo, const double *hi, size_t n,
    int *rank);

/*
 * Throughput of a cell of times (ns) for tokens tokens.  Returns 0, or -1
 * when tokens <= 0 or the mean time is not positive.
 */
int stats_throughput(int tokens, const struct cell_stats *time_ns,
    struct throughput *out);

/*
 * Where a relative change of a cost (positive = slower) stands against
 * half the threshold, both ways, for a metric that was not searched:
 *   MOVE_SLOWER  the interval lies wholly above +threshold / 2;
 *   MOVE_FASTER  wholly below -threshold / 2;
 *   MOVE_NONE    wholly between the two;
 *   MOVE_UNSURE  otherwise (or not finite): the runs do not tell.
 */
enum move { MOVE_NONE, MOVE_SLOWER, MOVE_FASTER, MOVE_UNSURE };
enum move stats_move(const struct estimate *rel, double threshold);

/*
 * The same for a rate's relative change (b / a - 1 of requests or
 * tokens a second, up when faster), judged as the time that is its
 * inverse would be: a rate down past 1 / (1 + cut) - 1 is a time up past
 * cut, slower.  A rate that falls to zero (goodput) still has a change,
 * where its time would have none.
 */
enum move stats_move_rate(const struct estimate *rel, double threshold);

/*
 * The one-sided p value of "slower by more than cut" for a relative
 * change of a cost: 1 - T_df((value - cut) / se); 1 when the spread is
 * unknown.  Small p: the runs show a slowdown past cut.
 */
double stats_slower_p(const struct estimate *rel, double cut);

/*
 * Holm's step-down procedure over p[0..n-1] (n <= 256) at family-wise
 * level alpha: reject[i] set for the hypotheses rejected.  The chance
 * that any true one is rejected stays at most alpha, whatever the
 * dependence between them.
 */
void stats_holm(const double *p, size_t n, double alpha, int *reject);

/*
 * A sequential test of where one release (the probe) lies between two
 * measured ones, after Wald's sequential probability ratio test.  Three
 * simple hypotheses on the log of the probe's true value: G, it equals
 * the good side's; B, the bad side's; N, the midpoint of the two (a
 * release strictly between, as on a slide).  The probe's runs arrive one
 * at a time; after each, the log likelihood ratios of the three from the
 * probe's mean so far, the sides' uncertainty included, decide:
 *   SEQ_GOOD     G over B by ln(2 / alpha), and N not over G by as much;
 *   SEQ_BAD      B over G by ln(2 / alpha), and N not over B by as much;
 *   SEQ_NEITHER  N over both G and B by ln(2 / alpha);
 *   SEQ_MORE     none yet: another run of the probe (or of a side).
 * A probe beyond a side (slower than the bad one) is that side's.  The
 * per-run spread is pooled over the three estimates (each se * sqrt(runs)
 * relative to its value, weighted by its df): releases of one engine
 * share the machine's noise, so the probe's first few runs need no
 * spread of their own.
 *
 * The bound: a likelihood ratio against the truth, a martingale under
 * it, ever exceeds 2 / alpha with probability at most alpha / 2 (Ville's
 * inequality), so a probe that is like one side is called the other or
 * neither with probability at most alpha.  The second condition of GOOD
 * and BAD is loose on purpose: a probe between the sides placed on one
 * of them is not a wrong release (the walk then finds the slide by the
 * pair it arrives at, see bisect.h).  The bound is exact for a known
 * spread and known sides; with both estimated from runs it holds
 * approximately, which tests/unit/test_bisect_seq.c measures on seeded
 * trials.
 */
enum seq_side { SEQ_MORE, SEQ_GOOD, SEQ_BAD, SEQ_NEITHER };

struct seq_arm {
	const struct estimate *est;	/* the metric at runs runs */
	int runs;
};

/*
 * Classify probe between good and bad at error bound alpha (0 < alpha
 * < 0.5).  llr[] (may be NULL) gets ln L(B)/L(G), ln L(N)/L(G) and
 * ln L(N)/L(B).  SEQ_MORE when a value is not above zero or no spread is
 * known.  Runs that never vary (every spread known and 0: a peak
 * memory) are placed by their values: at or below the good side GOOD,
 * at or beyond the bad one BAD, between them NEITHER; llr[] is then
 * left as it was.
 */
enum seq_side stats_seq_classify(const struct seq_arm *probe,
    const struct seq_arm *good, const struct seq_arm *bad, double alpha,
    double *llr);

/* The standard error of ln(b / a) for independent estimates; INFINITY
 * when a value is not above zero. */
double stats_log_se(const struct estimate *a, const struct estimate *b);

/*
 * Estimates of one value pooled on the log scale, as the sequential test
 * takes a side: releases taken as equal, each est at runs runs; the
 * pooled est is the runs-weighted mean of the logs, its se from the
 * per-run relative spread pooled by df.  Start from all zeros; an
 * estimate not above zero is left out.
 */
struct stats_pool {
	double sx, sv, sdf;
	int runs;
	struct estimate est;
};

void stats_pool_add(struct stats_pool *p, const struct estimate *e,
    int runs);

/* m - (lo + hi) / 2 for independent estimates, Welch df: where m lies
 * against the midpoint of lo and hi. */
void stats_mid_diff(const struct estimate *m, const struct estimate *lo,
    const struct estimate *hi, struct estimate *out);

/* "unchanged", "slower", "faster", "unsure". */
const char *stats_move_name(enum move m);

/* Name of an outcome: "same", "different", "unknown". */
const char *stats_outcome_name(enum outcome o);

#endif
