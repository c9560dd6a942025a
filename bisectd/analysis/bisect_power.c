/*
 * bisect_power.c: the power figures of the bisection (see bisect.h):
 * what a comparison could have found, and what an undecided one lacks.
 */
#include <math.h>

#include "bisect.h"

/* t at 95% two-sided plus t at the power: the distance, in standard
 * errors, between a true effect and the cut that the interval clears
 * with probability BISECT_POWER. */
static double
power_quantiles(double df)
{
	return stats_t_quantile(0.5 + STATS_LEVEL / 2, df) +
	    stats_t_quantile(BISECT_POWER, df);
}

/*
 * The further runs per release after which a comparison whose estimate
 * lies dist from its cut, with standard error se at runs runs, would
 * likely clear the cut: the se shrinks as 1 / sqrt(runs).  -1 when no
 * number would (dist 0, or more than a million runs).
 */
long
bisect_runs_to_decide(double dist, double se, double df, int runs)
{
	double want;

	if (!(dist > 0) || !isfinite(se) || runs <= 0)
		return -1;
	want = runs * pow(power_quantiles(df) * se / dist, 2);
	if (!(want < 1e6))
		return -1;
	return want > runs + 1 ? (long)ceil(want - runs) : 1;
}

double
bisect_detectable(const struct estimate *a, const struct estimate *b,
    double threshold, double df)
{
	double c = 1 + threshold / 2, q = power_quantiles(df), ra, lo, hi;

	if (!(a->value > 0) || !isfinite(a->se) || !isfinite(b->se))
		return INFINITY;
	if (b->value > 0)
		return c * exp(q * stats_log_se(a, b)) - 1;
	/*
	 * b at or below zero has no spread on the log scale; a slowdown d
	 * would put it at a (1 + d) with its own standard error, so d
	 * solves d = f(d) = c exp(q sqrt(ra^2 + rb(d)^2)) - 1 with
	 * rb(d) = b.se / (a (1 + d)).  f falls as d grows, so the root is
	 * between threshold / 2 (f is never below it) and f(threshold / 2).
	 */
	ra = a->se / a->value;
	lo = threshold / 2;
	hi = c * exp(q * hypot(ra, b->se / (a->value * c))) - 1;
	if (!isfinite(hi))
		return INFINITY;
	for (int i = 0; i < 200 && hi - lo > 1e-12 * (1 + hi); i++) {
		double d = lo + (hi - lo) / 2;

		if (c * exp(q * hypot(ra, b->se / (a->value * (1 + d)))) -
		    1 > d)
			lo = d;
		else
			hi = d;
	}
	return lo + (hi - lo) / 2;
}
