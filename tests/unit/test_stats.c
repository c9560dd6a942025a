/*
 * test_stats.c: cell summaries, Student's t against tabled and closed-form
 * values, estimates and relative changes, the comparison outcome, and
 * throughput.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "bisectd/analysis/stats.h"

static void
test_cell(void)
{
	double x[] = { 4, 1, 100, 3, 2 };
	double one[] = { 7 };
	double bad[] = { 1, NAN };
	struct cell_stats c;

	CHECK_INT(stats_cell(x, 5, &c), 0);
	CHECK_INT(c.n, 5);
	CHECK_NEAR(c.mean, 22, 1e-12);
	CHECK_NEAR(c.median, 3, 1e-12);
	CHECK_NEAR(c.min, 1, 0);
	CHECK_NEAR(c.max, 100, 0);
	/* deviations -18 -21 78 -19 -20: squares sum to 7610 */
	CHECK_NEAR(c.sd, sqrt(7610 / 4.0), 1e-9);
	CHECK_NEAR(c.se, sqrt(7610 / 4.0) / sqrt(5), 1e-9);
	CHECK_NEAR(c.cv, sqrt(7610 / 4.0) / 22, 1e-12);

	CHECK_INT(stats_cell(x, 4, &c), 0);	/* even count: middle pair */
	CHECK_NEAR(c.median, 3.5, 1e-12);

	CHECK_INT(stats_cell(one, 1, &c), 0);
	CHECK_NEAR(c.sd, 0, 0);
	CHECK(isinf(c.se));

	c.n = 99;
	CHECK_INT(stats_cell(x, 0, &c), -1);
	CHECK_INT(stats_cell(bad, 2, &c), -1);
	CHECK_INT(c.n, 99);	/* untouched on failure */
}

static void
test_cell_large(void)
{
	/* More samples than the median's stack copy holds. */
	static double x[1001];
	struct cell_stats c;

	for (int i = 0; i < 1001; i++)
		x[i] = (double)((i * 7919) % 1001);	/* a permutation */
	CHECK_INT(stats_cell(x, 1001, &c), 0);
	CHECK_NEAR(c.median, 500, 0);
	CHECK_NEAR(c.mean, 500, 1e-9);
}

static void
test_t_quantile(void)
{
	/* Tabled two-sided 95% points and a few others. */
	CHECK_NEAR(stats_t_quantile(0.975, 1), 12.706204736, 1e-6);
	CHECK_NEAR(stats_t_quantile(0.975, 2), 4.302652730, 1e-7);
	CHECK_NEAR(stats_t_quantile(0.975, 5), 2.570581836, 1e-7);
	CHECK_NEAR(stats_t_quantile(0.975, 10), 2.228138852, 1e-7);
	CHECK_NEAR(stats_t_quantile(0.975, 30), 2.042272456, 1e-7);
	CHECK_NEAR(stats_t_quantile(0.975, 1e7), 1.959963985, 1e-6);
	CHECK_NEAR(stats_t_quantile(0.95, 3), 2.353363435, 1e-7);
	CHECK_NEAR(stats_t_quantile(0.995, 4), 4.604094871, 1e-7);
	CHECK_NEAR(stats_t_quantile(0.999, 1), 318.3088389, 1e-4);
	CHECK_NEAR(stats_t_quantile(0.025, 5), -2.570581836, 1e-7);
	CHECK_NEAR(stats_t_quantile(0.5, 3), 0, 0);

	/* Closed forms: df 1 is Cauchy, df 2 is algebraic. */
	for (double p = 0.01; p < 1; p += 0.07) {
		CHECK_NEAR(stats_t_quantile(p, 1), tan(M_PI * (p - 0.5)),
		    1e-8 * fmax(1, fabs(tan(M_PI * (p - 0.5)))));
		CHECK_NEAR(stats_t_quantile(p, 2),
		    (2 * p - 1) / sqrt(2 * p * (1 - p)), 1e-8);
	}

	/* Fractional df (Welch): the cdf inverts the quantile, and the
	 * quantile falls between its integer neighbours. */
	for (double df = 1.3; df < 60; df *= 1.7) {
		double q = stats_t_quantile(0.975, df);

		CHECK_NEAR(stats_t_cdf(q, df), 0.975, 1e-10);
		CHECK(q < stats_t_quantile(0.975, floor(df)));
		CHECK(q > stats_t_quantile(0.975, ceil(df)) ||
		    floor(df) == df);
	}

	CHECK(isnan(stats_t_quantile(0, 3)));
	CHECK(isnan(stats_t_quantile(1, 3)));
	CHECK(isnan(stats_t_quantile(0.9, 0)));
	CHECK(isnan(stats_t_quantile(0.9, -2)));
}

static void
test_t_cdf(void)
{
	CHECK_NEAR(stats_t_cdf(0, 4), 0.5, 1e-15);
	CHECK_NEAR(stats_t_cdf(2.228138852, 10), 0.975, 1e-9);
	CHECK_NEAR(stats_t_cdf(-2.228138852, 10), 0.025, 1e-9);
	CHECK_NEAR(stats_t_cdf(1, 1), 0.75, 1e-12);	/* Cauchy */
	CHECK_NEAR(stats_t_cdf(INFINITY, 3), 1, 0);
	CHECK(isnan(stats_t_cdf(1, 0)));
}

static void
test_welch(void)
{
	double var[2] = { 1, 1 }, df[2] = { 4, 4 };
	double zero[2] = { 0, 0 };
	double var3[3] = { 2, 0, 1 }, df3[3] = { 4, 9, 2 };

	CHECK_NEAR(stats_welch_df(var, df, 2), 8, 1e-12);
	CHECK_NEAR(stats_welch_df(zero, df, 2), 8, 1e-12);
	/* 9 / (4/4 + 1/2) */
	CHECK_NEAR(stats_welch_df(var3, df3, 3), 6, 1e-12);
}

static void
test_estimates(void)
{
	struct estimate a = { 100, 3, 4, 0, 0 }, b = { 150, 4, 4, 0, 0 };
	struct estimate d, r, unknown = { 100, INFINITY, 1, 0, 0 };
	struct estimate neg = { -20, 1, 9, 0, 0 }, zero = { 0, 1, 9, 0, 0 };

	stats_interval(&a);
	CHECK_NEAR(a.lo, 100 - stats_t_quantile(0.975, 4) * 3, 1e-9);
	CHECK_NEAR(a.hi, 100 + stats_t_quantile(0.975, 4) * 3, 1e-9);

	stats_diff(&b, &a, &d);
	CHECK_NEAR(d.value, 50, 1e-12);
	CHECK_NEAR(d.se, 5, 1e-12);
	/* 625 / (81/4 + 256/4) */
	CHECK_NEAR(d.df, 625 / (81 / 4.0 + 256 / 4.0), 1e-9);

	CHECK_INT(stats_rel_change(&b, &a, &r), 0);
	CHECK_NEAR(r.value, 0.5, 1e-12);
	/* log scale: ln 1.5 +- t * sqrt(0.03^2 + (4/150)^2) */
	{
		double se = sqrt(0.03 * 0.03 + (4 / 150.0) * (4 / 150.0));
		double t = stats_t_quantile(0.975, r.df);

		CHECK_NEAR(r.lo, exp(log(1.5) - t * se) - 1, 1e-9);
		CHECK_NEAR(r.hi, exp(log(1.5) + t * se) - 1, 1e-9);
		CHECK(r.lo > 0.3 && r.hi < 0.75);
	}

	/* A negative reference (an intercept below 0): linear, over |a|. */
	b.value = -10;
	b.se = 1;
	b.df = 9;
	CHECK_INT(stats_rel_change(&b, &neg, &r), 0);
	CHECK_NEAR(r.value, 0.5, 1e-12);
	CHECK_NEAR(r.se, 0.5 * sqrt(0.05 * 0.05 + 0.1 * 0.1), 1e-12);
	CHECK_NEAR(r.hi - r.lo, 2 * stats_t_quantile(0.975, r.df) * r.se,
	    1e-9);

	CHECK_INT(stats_rel_change(&b, &zero, &r), -1);

	CHECK_INT(stats_rel_change(&a, &unknown, &r), 0);
	CHECK(isinf(r.lo) && isinf(r.hi));
	CHECK_INT(stats_outcome(&r, 0.2), OUTCOME_UNKNOWN);
}

/*
 * What stats_outcome() ('o'), stats_move() ('m') or stats_move_rate()
 * ('r') make of a relative change's interval [lo, hi] at a threshold,
 * row by row, in the case called in.
 */
static const struct cut {
	const char *in;
	char fn;
	double lo, hi, threshold;
	int want;
} cut_rows[] = {
	/* test_outcome: "outcome" */
	{ "outcome", 'o', 0.11, 0.5, 0.2, OUTCOME_DIFFERENT },
	{ "outcome", 'o', 0.09, 0.5, 0.2, OUTCOME_UNKNOWN },
	{ "outcome", 'o', -0.05, 0.09, 0.2, OUTCOME_SAME },
	/* Faster counts as the same: only slowdowns are regressions. */
	{ "outcome", 'o', -0.9, -0.5, 0.2, OUTCOME_SAME },
	{ "outcome", 'o', 0.02, 0.04, 0.03, OUTCOME_DIFFERENT },
	/* test_move: "move" */
	{ "move", 'm', 0.11, 0.5, 0.2, MOVE_SLOWER },
	{ "move", 'm', -0.5, -0.11, 0.2, MOVE_FASTER },
	{ "move", 'm', -0.09, 0.09, 0.2, MOVE_NONE },
	{ "move", 'm', -0.09, 0.11, 0.2, MOVE_UNSURE },
	{ "move", 'm', -0.11, 0.05, 0.2, MOVE_UNSURE },
	{ "move", 'm', -INFINITY, 0.05, 0.2, MOVE_UNSURE },
	{ "move", 'm', NAN, 0.05, 0.2, MOVE_UNSURE },
	/* test_move_rate: "rate" */
	{ "rate", 'r', -0.5, -0.092, 0.2, MOVE_SLOWER },
	/* a time up by 9.9%: not past the cut */
	{ "rate", 'r', -0.5, -0.09, 0.2, MOVE_UNSURE },
	{ "rate", 'r', 0.112, 0.5, 0.2, MOVE_FASTER },
	/* a time down by 9.5% */
	{ "rate", 'r', 0.105, 0.5, 0.2, MOVE_UNSURE },
	{ "rate", 'r', -0.09, 0.11, 0.2, MOVE_NONE },
	/* goodput gone */
	{ "rate", 'r', -1, -1, 0.2, MOVE_SLOWER },
	{ "rate", 'r', -1, INFINITY, 0.2, MOVE_UNSURE },
	/* A threshold of 200%, a cut of 100%: a time cannot fall by all
	 * of itself, so no rise counts as faster; stats_move() says the
	 * same of the time (-98%). */
	{ "rate", 'r', 50, 60, 2, MOVE_NONE },
	{ "rate", 'm', -0.981, -0.980, 2, MOVE_NONE },
};

/* The rows of cut_rows[] in the case called in; a row that fails is
 * named with its index and interval.  The case must have rows. */
static void
check_cuts(const char *in)
{
	int rows = 0;

	for (size_t i = 0; i < sizeof(cut_rows) / sizeof(cut_rows[0]); i++) {
		const struct cut *t = &cut_rows[i];
		struct estimate e = { 0, 0, 10, 0, 0 };
		int before = check_failures;

		if (strcmp(t->in, in) != 0)
			continue;
		rows++;
		e.lo = t->lo;
		e.hi = t->hi;
		CHECK_INT(t->fn == 'o' ? (int)stats_outcome(&e, t->threshold) :
		    t->fn == 'm' ? (int)stats_move(&e, t->threshold) :
		    (int)stats_move_rate(&e, t->threshold), t->want);
		if (check_failures > before)
			fprintf(stderr, "  cut_rows[%zu] (%s, '%c'): [%g, %g] "
			    "at %g\n", i, in, t->fn, t->lo, t->hi,
			    t->threshold);
	}
	CHECK(rows > 0);
}

static void
test_outcome(void)
{
	check_cuts("outcome");
	CHECK_STR(stats_outcome_name(OUTCOME_SAME), "same");
	CHECK_STR(stats_outcome_name(OUTCOME_DIFFERENT), "different");
	CHECK_STR(stats_outcome_name(OUTCOME_UNKNOWN), "unknown");
}

/* A metric not searched moves either way, or not, or the runs do not
 * tell; half the threshold is the cut on both sides. */
/* A relative change of value r whose log has standard error se (the
 * estimate carries it on the ratio's scale, as stats_rel_change()). */
static struct estimate
log_rel(double r, double se, double df)
{
	return (struct estimate){ r, se * (1 + r), df, NAN, NAN };
}

/*
 * The ends' sequential test at threshold 20%: its hypotheses are 0 and
 * ln 1.21 on the log scale (d = 0.1906), its cut their midpoint, ln 1.1.
 */
static void
test_seq_change(void)
{
	struct estimate e;

	/* +30%, se 0.03: z = (0.2624 - 0.0953) / 0.03 = 5.6, the ratio's
	 * bound asks ln(200) 0.03 / 0.1906 = 0.83 */
	e = log_rel(0.30, 0.03, 1000);
	CHECK_INT(stats_seq_change(&e, 0.2, 0.005, 0.002), OUTCOME_DIFFERENT);
	/* no change: z = -3.2 against ln(500) 0.03 / 0.1906 = 0.98 */
	e = log_rel(0, 0.03, 1000);
	CHECK_INT(stats_seq_change(&e, 0.2, 0.005, 0.002), OUTCOME_SAME);
	/* on the cut, or near it: more runs */
	e = log_rel(0.10, 0.03, 1000);
	CHECK_INT(stats_seq_change(&e, 0.2, 0.005, 0.002), OUTCOME_UNKNOWN);
	e = log_rel(0.13, 0.03, 1000);	/* z = 0.90, past 0.83 */
	CHECK_INT(stats_seq_change(&e, 0.2, 0.005, 0.002), OUTCOME_DIFFERENT);
	e = log_rel(0.125, 0.03, 1000);	/* z = 0.75 < 0.83 */
	CHECK_INT(stats_seq_change(&e, 0.2, 0.005, 0.002), OUTCOME_UNKNOWN);

	/* The spread of few runs is read on t: z = 2.0 clears the normal
	 * test's 1.67 (se 0.06) at df 1000, not the same tail's 2.2 at
	 * df 4. */
	e = log_rel(exp(log(1.1) + 2.0 * 0.06) - 1, 0.06, 1000);
	CHECK_INT(stats_seq_change(&e, 0.2, 0.005, 0.002), OUTCOME_DIFFERENT);
	e.df = 4;
	CHECK_INT(stats_seq_change(&e, 0.2, 0.005, 0.002), OUTCOME_UNKNOWN);

	/* A 3x step on a noisy machine (se 0.25, df 8): the ratio against
	 * 21% would ask z >= 6.9; the one-sided interval at 0.5% clears
	 * the cut at z >= 3.36, and z is 4.0. */
	e = log_rel(2.0, 0.25, 8);
	CHECK_INT(stats_seq_change(&e, 0.2, 0.005, 0.002), OUTCOME_DIFFERENT);
	e = log_rel(2.0, 0.31, 8);	/* z = 3.24 */
	CHECK_INT(stats_seq_change(&e, 0.2, 0.005, 0.002), OUTCOME_UNKNOWN);

	/* A cost fitted at or below zero: its interval alone */
	e = (struct estimate){ -1.02, 0.01, 8, -1.05, -0.99 };
	CHECK_INT(stats_seq_change(&e, 0.2, 0.005, 0.002), OUTCOME_SAME);
	e.hi = 0.5;
	CHECK_INT(stats_seq_change(&e, 0.2, 0.005, 0.002), OUTCOME_UNKNOWN);
	/* runs that never vary: the change itself against the cut */
	e = (struct estimate){ 0.5, 0, 8, 0.5, 0.5 };
	CHECK_INT(stats_seq_change(&e, 0.2, 0.005, 0.002), OUTCOME_DIFFERENT);
	e = (struct estimate){ 0.02, 0, 8, 0.02, 0.02 };
	CHECK_INT(stats_seq_change(&e, 0.2, 0.005, 0.002), OUTCOME_SAME);
	/* no spread known, or bounds out of range: more runs */
	e = log_rel(0.5, INFINITY, 8);
	CHECK_INT(stats_seq_change(&e, 0.2, 0.005, 0.002), OUTCOME_UNKNOWN);
	e = log_rel(0.5, 0.01, 8);
	CHECK_INT(stats_seq_change(&e, 0.2, 0, 0.002), OUTCOME_UNKNOWN);
	CHECK_INT(stats_seq_change(&e, 0.2, 0.005, 0.6), OUTCOME_UNKNOWN);
}

static void
test_move(void)
{
	check_cuts("move");
	CHECK_STR(stats_move_name(MOVE_NONE), "unchanged");
	CHECK_STR(stats_move_name(MOVE_FASTER), "faster");
}

/* A rate's move is its time's: threshold 20%, cut 10%, a rate down
 * past 1/1.1 - 1 = -9.09% is slower, up past 1/0.9 - 1 = +11.1% faster;
 * a rate that fell to zero is slower, where its time has no change. */
static void
test_move_rate(void)
{
	check_cuts("rate");
}

/* Holm's step-down: the smallest p against alpha / n, the next against
 * alpha / (n - 1), ...; the first that fails stops it. */
static void
test_holm(void)
{
	const double p[] = { 0.04, 0.001, 0.03, 0.2, 0.012 };
	int reject[5];
	struct estimate e = { 0.5, 0.1, 20, 0, 0 };

	stats_holm(p, 5, 0.05, reject);
	/* 0.001 <= 0.01, 0.012 <= 0.0125, 0.03 > 0.0167: stop. */
	CHECK_INT(reject[1], 1);
	CHECK_INT(reject[4], 1);
	CHECK_INT(reject[2], 0);
	CHECK_INT(reject[0], 0);
	CHECK_INT(reject[3], 0);
	/* Bonferroni would reject only 0.001 (0.012 > 0.01). */
	stats_holm(p, 1, 0.05, reject);
	CHECK_INT(reject[0], 1);
	/* A change of +50% with se 10% against a cut of 10%: t = 4. */
	CHECK(stats_slower_p(&e, 0.1) < 0.001);
	e.value = 0.1;
	CHECK_NEAR(stats_slower_p(&e, 0.1), 0.5, 1e-9);
	e.se = INFINITY;
	CHECK_NEAR(stats_slower_p(&e, 0.1), 1, 0);
}

static void
test_throughput(void)
{
	/* pp512 of the seed's 0.2.3: 636.4 ms, spread +-2 ms. */
	double t[] = { 634.4e6, 635.4e6, 636.4e6, 637.4e6, 638.4e6 };
	struct cell_stats c;
	struct throughput tp;

	CHECK_INT(stats_cell(t, 5, &c), 0);
	CHECK_INT(stats_throughput(512, &c, &tp), 0);
	CHECK_NEAR(tp.tps, 512 / 0.6364, 1e-6);
	CHECK_NEAR(tp.cv, c.cv, 1e-15);
	CHECK_NEAR(tp.sd, tp.tps * c.cv, 1e-9);
	CHECK(tp.lo < tp.tps && tp.tps < tp.hi);
	CHECK_NEAR(tp.hi, 512e9 / (636.4e6 - stats_t_quantile(0.975, 4) *
	    c.se), 1e-6);
	CHECK_INT(tp.n, 5);

	CHECK_INT(stats_throughput(0, &c, &tp), -1);
	c.mean = 0;
	CHECK_INT(stats_throughput(512, &c, &tp), -1);
}

/* Runs of several samples: run values, and spread between and within. */
static void
test_runs(void)
{
	const double x[6] = { 10, 12, 20, 22, 30, 5 };
	const int64_t run[6] = { 1, 1, 2, 2, 2, 0 };
	double v[6];
	size_t n;
	struct run_stats r;

	CHECK_INT(stats_run_values(x, run, 6, RUN_MEAN, v, &n), 0);
	CHECK_INT(n, 3);
	CHECK_NEAR(v[0], 11, 1e-12);
	CHECK_NEAR(v[1], 24, 1e-12);
	CHECK_NEAR(v[2], 5, 1e-12);
	CHECK_INT(stats_run_values(x, run, 6, RUN_MEDIAN, v, &n), 0);
	CHECK_NEAR(v[0], 11, 1e-12);	/* two samples: their mean */
	CHECK_NEAR(v[1], 22, 1e-12);
	CHECK_INT(stats_run_values(x, NULL, 6, RUN_MEAN, v, &n), 0);
	CHECK_INT(n, 6);

	CHECK_INT(stats_runs(x, run, 6, RUN_MEAN, &r), 0);
	CHECK_INT(r.runs, 3);
	CHECK_INT(r.samples, 6);
	CHECK_NEAR(r.mean, 40.0 / 3, 1e-12);
	CHECK_NEAR(r.sd_between, sqrt((pow(11 - 40.0 / 3, 2) +
	    pow(24 - 40.0 / 3, 2) + pow(5 - 40.0 / 3, 2)) / 2), 1e-12);
	/* (1 + 1) + (16 + 4 + 36) over 1 + 2 df */
	CHECK_NEAR(r.sd_within, sqrt(58.0 / 3), 1e-12);
	CHECK_NEAR(r.cv_within, sqrt(58.0 / 3) / (40.0 / 3), 1e-12);
	CHECK_INT(r.values.n, 3);
	CHECK_INT(stats_runs(x, NULL, 3, RUN_MEAN, &r), 0);
	CHECK(isnan(r.sd_within));	/* one sample per run */
	CHECK_INT(stats_runs(x, run, 0, RUN_MEAN, &r), -1);
}

/* Outlier runs: a run 3x slow goes, ordinary spread stays. */
static void
test_outliers(void)
{
	double v[8] = { 100, 104, 97, 300, 101, 99, 103, 96 };
	double w[8] = { 100, 140, 60, 130, 70, 120, 80, 150 };
	double two[8] = { 100, 300, 101, 310, 99, 98 };
	double same[5] = { 5, 5, 5, 5, 9 };
	double three[7] = { 100, 300, 101, 310, 99, 320, 102 };

	CHECK_INT(stats_drop_outliers(v, 8), 7);
	CHECK_NEAR(v[3], 101, 0);	/* the order of the rest is kept */
	CHECK_NEAR(v[6], 96, 0);
	CHECK_INT(stats_drop_outliers(w, 8), 8);	/* CV 30%: all stay */
	CHECK_INT(stats_drop_outliers(two, 6), 6);	/* 2 of 6: not a few */
	CHECK_INT(stats_drop_outliers(same, 5), 5);	/* no deviation */
	CHECK_INT(stats_drop_outliers(v, 4), 4);	/* too few to judge */

	/* Up to a count: two of six go when two may, never half. */
	CHECK_INT(stats_drop_outliers_upto(two, 6, 2), 4);
	CHECK_NEAR(two[1], 101, 0);
	CHECK_NEAR(two[3], 98, 0);
	CHECK_INT(stats_drop_outliers_upto(three, 6, 3), 6);
	CHECK_INT(stats_drop_outliers_upto(three, 7, 3), 4);
	CHECK_INT(stats_drop_outliers_upto(v, 4, 2), 4);
}

/* Fisher's F against closed forms: F(2, 2) and F(1, d) = t(d)^2. */
static void
test_f_cdf(void)
{
	for (double f = 0.25; f < 20; f *= 2) {
		CHECK_NEAR(stats_f_cdf(f, 2, 2), f / (1 + f), 1e-10);
		CHECK_NEAR(stats_f_cdf(f, 1, 7),
		    2 * stats_t_cdf(sqrt(f), 7) - 1, 1e-10);
	}
	CHECK_NEAR(stats_f_cdf(0, 3, 4), 0, 0);
	CHECK(isnan(stats_f_cdf(1, 0, 4)));
}

/* Ranks by intervals: apart ranks apart, overlapping ones tie, a chain
 * of overlaps ranks only its ends apart, an unbounded one overlaps
 * those above it, an unmeasured figure is unranked. */
static void
test_rank(void)
{
	double lo[] = { 90, 40, 50, NAN, 105 }, hi[] = { 110, 60, 70, NAN,
	    120 };
	double clo[] = { 0, 8, 18 }, chi[] = { 10, 20, 30 };
	double ulo[] = { 5, 50 }, uhi[] = { INFINITY, 60 };
	int r[5];

	stats_rank_intervals(lo, hi, 5, r);
	CHECK_INT(r[0], 1);
	CHECK_INT(r[4], 1);
	CHECK_INT(r[1], 3);
	CHECK_INT(r[2], 3);
	CHECK_INT(r[3], 0);
	stats_rank_intervals(clo, chi, 3, r);
	CHECK_INT(r[2], 1);
	CHECK_INT(r[1], 1);
	CHECK_INT(r[0], 2);
	/* Unbounded above: it overlaps whatever lies above its low end. */
	stats_rank_intervals(ulo, uhi, 2, r);
	CHECK_INT(r[0], 1);
	CHECK_INT(r[1], 1);
}

int
main(void)
{
	check_tmpdir("stats");
	CHECK_CASE(test_cell);
	CHECK_CASE(test_cell_large);
	CHECK_CASE(test_t_quantile);
	CHECK_CASE(test_t_cdf);
	CHECK_CASE(test_welch);
	CHECK_CASE(test_estimates);
	CHECK_CASE(test_outcome);
	CHECK_CASE(test_seq_change);
	CHECK_CASE(test_move);
	CHECK_CASE(test_move_rate);
	CHECK_CASE(test_holm);
	CHECK_CASE(test_throughput);
	CHECK_CASE(test_runs);
	CHECK_CASE(test_f_cdf);
	CHECK_CASE(test_outliers);
	CHECK_CASE(test_rank);
	return check_done();
}
