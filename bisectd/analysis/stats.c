/*
 * stats.c: cell summaries, Student's t (through the regularized
 * incomplete beta function), estimates and their intervals, and the
 * comparison outcome.  See stats.h.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The median needs a sorted copy; cells are small (reps, or an engine's
 * own samples), so a bounded stack copy covers them and larger ones fall
 * back to the heap.
 */
static int
median_of(const double *x, size_t n, double *out)
{
	double stack[256], *v = stack;

	if (n > sizeof(stack) / sizeof(stack[0])) {
		v = malloc(n * sizeof(*v));
		if (v == NULL)
			return -1;
	}
	memcpy(v, x, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_double);
	*out = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	if (v != stack)
		free(v);
	return 0;
}

int
stats_cell(const double *x, size_t n, struct cell_stats *out)
{
	struct cell_stats c;
	double sum = 0, ss = 0;

	if (n == 0)
		return -1;
	c.n = n;
	c.min = c.max = x[0];
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]))
			return -1;
		sum += x[i];
		if (x[i] < c.min)
			c.min = x[i];
		if (x[i] > c.max)
			c.max = x[i];
	}
	c.mean = sum / (double)n;
	/* Two passes: the deviations are small next to the mean (a few % of
	 * a time in ns), where the one-pass formula loses them. */
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - c.mean) * (x[i] - c.mean);
	c.sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
	c.cv = c.mean != 0 ? c.sd / fabs(c.mean) : 0;
	c.se = n > 1 ? c.sd / sqrt((double)n) : INFINITY;
	if (median_of(x, n, &c.median) < 0)
		return -1;
	*out = c;
	return 0;
}

/* Where the run that starts at x[i] ends (one past its last sample). */
static size_t
run_end(const int64_t *run, size_t n, size_t i)
{
	size_t j = i + 1;

	if (run == NULL || run[i] == 0)
		return j;
	while (j < n && run[j] == run[i])
		j++;
	return j;
}

int
stats_run_value(const double *x, size_t n, enum run_summary how,
    double *out)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]))
			return -1;
		sum += x[i];
	}
	if (how == RUN_MEDIAN && n > 2)
		return median_of(x, n, out);
	*out = sum / (double)n;
	return 0;
}

int
stats_run_values(const double *x, const int64_t *run, size_t n,
    enum run_summary how, double *out, size_t *nruns)
{
	size_t k = 0;

	for (size_t i = 0; i < n; ) {
		size_t j = run_end(run, n, i);

		if (stats_run_value(x + i, j - i, how, &out[k++]) < 0)
			return -1;
		i = j;
	}
	*nruns = k;
	return 0;
}

size_t
stats_drop_outliers(double *v, size_t n)
{
	return stats_drop_outliers_upto(v, n, n / 4);
}

size_t
stats_drop_outliers_upto(double *v, size_t n, size_t most)
{
	double stack[256], *d = stack, med, mad, fence;
	size_t k = 0, out = 0;

	if (n < 5)
		return n;
	if (n > sizeof(stack) / sizeof(stack[0]) &&
	    (d = malloc(n * sizeof(*d))) == NULL)
		return n;
	if (median_of(v, n, &med) < 0)
		goto keep;
	for (size_t i = 0; i < n; i++)
		d[i] = fabs(v[i] - med);
	if (median_of(d, n, &mad) < 0 || !(mad > 0))
		goto keep;
	fence = fmax(STATS_OUTLIER_SDS * 1.4826 * mad,
	    STATS_OUTLIER_REL * fabs(med));
	for (size_t i = 0; i < n; i++)
		out += d[i] > fence;
	if (out == 0 || out > most || out * 2 >= n)
		goto keep;
	for (size_t i = 0; i < n; i++)
		if (d[i] <= fence)
			v[k++] = v[i];
	if (d != stack)
		free(d);
	return k;
keep:
	if (d != stack)
		free(d);
	return n;
}

int
stats_runs(const double *x, const int64_t *run, size_t n,
    enum run_summary how, struct run_stats *out)
{
	struct run_stats r;
	double *v, ss = 0;
	size_t df = 0;

	if (n == 0)
		return -1;
	if ((v = malloc(n * sizeof(*v))) == NULL)
		return -1;
	if (stats_run_values(x, run, n, how, v, &r.runs) < 0 ||
	    stats_cell(v, r.runs, &r.values) < 0) {
		free(v);
		return -1;
	}
	free(v);
	/* Within: each sample around its own run's mean, pooled over the
	 * runs with two or more samples (one-way analysis of variance). */
	for (size_t i = 0; i < n; ) {
		size_t j = run_end(run, n, i);
		double mean = 0;

		for (size_t m = i; m < j; m++)
			mean += x[m];
		mean /= (double)(j - i);
		for (size_t m = i; m < j; m++)
			ss += (x[m] - mean) * (x[m] - mean);
		df += j - i - 1;
		i = j;
	}
	r.samples = n;
	r.mean = r.values.mean;
	r.sd_between = r.values.sd;
	r.sd_within = df > 0 ? sqrt(ss / (double)df) : NAN;
	r.cv_between = r.values.cv;
	r.cv_within = r.mean != 0 ? r.sd_within / fabs(r.mean) : NAN;
	*out = r;
	return 0;
}

/*
 * The continued fraction of the regularized incomplete beta function
 * I_x(a, b), evaluated with the modified Lentz method; it converges fast
 * for x < (a + 1) / (a + b + 2), and the caller uses the symmetry
 * I_x(a, b) = 1 - I_{1-x}(b, a) elsewhere.
 */
static double
beta_fraction(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d, h;

	d = 1 - (a + b) * x / (a + 1);
	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 400; m++) {
		double even, odd, step;

		even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
		d = 1 + even * d;
		c = 1 + even / c;
		d = fabs(d) < tiny ? 1 / tiny : 1 / d;
		if (fabs(c) < tiny)
			c = tiny;
		h *= d * c;

		odd = -(a + m) * (a + b + m) * x /
		    ((a + 2 * m) * (a + 2 * m + 1));
		d = 1 + odd * d;
		c = 1 + odd / c;
		d = fabs(d) < tiny ? 1 / tiny : 1 / d;
		if (fabs(c) < tiny)
			c = tiny;
		step = d * c;
		h *= step;
		if (fabs(step - 1) < 1e-15)
			break;
	}
	return h;
}

static double
beta_regularized(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) +
	    a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_fraction(a, b, x) / a;
	return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double
stats_t_cdf(double t, double df)
{
	double tail;

	if (!(df > 0) || isnan(t))
		return NAN;
	if (isinf(t))
		return t > 0 ? 1 : 0;
	tail = 0.5 * beta_regularized(df / 2, 0.5, df / (df + t * t));
	return t > 0 ? 1 - tail : tail;
}

double
stats_f_cdf(double f, double d1, double d2)
{
	if (!(d1 > 0) || !(d2 > 0) || isnan(f))
		return NAN;
	if (f <= 0)
		return 0;
	if (isinf(f))
		return 1;
	return beta_regularized(d1 / 2, d2 / 2, d1 * f / (d1 * f + d2));
}

static double
t_pdf(double t, double df)
{
	return exp(lgamma((df + 1) / 2) - lgamma(df / 2) -
	    (df + 1) / 2 * log1p(t * t / df)) / sqrt(df * M_PI);
}

/*
 * A rough normal quantile for p >= 0.5 (Abramowitz & Stegun 26.2.23,
 * error below 5e-4), only a starting point for Newton's method.
 */
static double
normal_quantile_rough(double p)
{
	double q = 1 - p, w;

	if (q >= 0.5)
		return 0;
	w = sqrt(-2 * log(q));
	return w - (2.515517 + 0.802853 * w + 0.010328 * w * w) /
	    (1 + 1.432788 * w + 0.189269 * w * w + 0.001308 * w * w * w);
}

double
stats_t_quantile(double p, double df)
{
	double lo = 0, hi = 1, t, z;

	if (!(p > 0 && p < 1) || !(df > 0))
		return NAN;
	if (p < 0.5)
		return -stats_t_quantile(1 - p, df);
	if (p == 0.5)
		return 0;
	while (stats_t_cdf(hi, df) < p) {
		lo = hi;
		hi *= 2;
		if (hi > 1e300)
			return INFINITY;
	}
	/* Cornish-Fisher's first correction moves the normal quantile
	 * toward t's heavier tail; Newton steps that leave the bracket
	 * [lo, hi] are replaced by bisection, so convergence is certain. */
	z = normal_quantile_rough(p);
	t = z + (z * z * z + z) / (4 * df);
	if (!(t > lo && t < hi))
		t = (lo + hi) / 2;
	for (int i = 0; i < 200; i++) {
		double f = stats_t_cdf(t, df) - p, next;

		if (f > 0)
			hi = t;
		else
			lo = t;
		next = t - f / t_pdf(t, df);
		if (!(next > lo && next < hi))
			next = (lo + hi) / 2;
		if (fabs(next - t) <= 1e-12 * fmax(1, fabs(t)) ||
		    hi - lo <= 1e-13 * fmax(1, hi))
			return next;
		t = next;
	}
	return t;
}

double
stats_welch_df(const double *var, const double *df, size_t k)
{
	double num = 0, den = 0, dfsum = 0;

	for (size_t i = 0; i < k; i++) {
		num += var[i];
		dfsum += df[i];
		if (var[i] > 0)
			den += var[i] * var[i] / df[i];
	}
	if (num == 0 || den == 0)
		return dfsum > 0 ? dfsum : 1;
	return num * num / den;
}

/*
 * The STATS_LEVEL quantile of t with df degrees of freedom.  A report
 * asks for the same few df thousands of times and each answer is a root
 * search, so the last few are kept, per thread: the same numbers, found
 * once.
 */
#define QUANTILE_MEMO 8

static double
level_quantile(double df)
{
	static _Thread_local double memo_df[QUANTILE_MEMO];
	static _Thread_local double memo_t[QUANTILE_MEMO];
	static _Thread_local unsigned memo_n;
	double t;

	for (unsigned i = 0; i < QUANTILE_MEMO && i < memo_n; i++)
		if (memo_df[i] == df)
			return memo_t[i];
	t = stats_t_quantile(0.5 + STATS_LEVEL / 2, df);
	memo_df[memo_n % QUANTILE_MEMO] = df;
	memo_t[memo_n % QUANTILE_MEMO] = t;
	memo_n++;
	return t;
}

void
stats_interval(struct estimate *e)
{
	double half;

	if (!isfinite(e->se)) {
		e->lo = -INFINITY;
		e->hi = INFINITY;
		return;
	}
	half = e->se == 0 ? 0 : level_quantile(e->df) * e->se;
	e->lo = e->value - half;
	e->hi = e->value + half;
}

void
stats_mean_estimate(const struct cell_stats *c, struct estimate *out)
{
	out->value = c->mean;
	out->se = c->se;
	out->df = c->n > 1 ? (double)(c->n - 1) : 1;
	stats_interval(out);
}

void
stats_diff(const struct estimate *b, const struct estimate *a,
    struct estimate *out)
{
	double var[2] = { a->se * a->se, b->se * b->se };
	double df[2] = { a->df, b->df };

	out->value = b->value - a->value;
	out->se = sqrt(var[0] + var[1]);
	out->df = isfinite(out->se) ? stats_welch_df(var, df, 2) : 1;
	stats_interval(out);
}

int
stats_rel_change(const struct estimate *b, const struct estimate *a,
    struct estimate *out)
{
	double ra, rb, var[2], df[2] = { a->df, b->df };

	if (a->value == 0)
		return -1;
	ra = a->se / a->value;
	rb = b->value != 0 ? b->se / b->value : 0;
	var[0] = ra * ra;
	var[1] = rb * rb;
	out->value = (b->value - a->value) / fabs(a->value);
	if (a->value > 0 && b->value > 0) {
		/* On the log scale the spread does not shrink with the
		 * ratio itself, and the interval is skewed as a ratio's is:
		 * an underestimated ratio no longer gets a narrow interval. */
		double l = log(b->value / a->value), half;

		out->se = sqrt(var[0] + var[1]);
		out->df = isfinite(out->se) ? stats_welch_df(var, df, 2) : 1;
		if (!isfinite(out->se)) {
			out->lo = -INFINITY;
			out->hi = INFINITY;
			return 0;
		}
		half = out->se == 0 ? 0 :
		    stats_t_quantile(0.5 + STATS_LEVEL / 2, out->df) * out->se;
		out->lo = exp(l - half) - 1;
		out->hi = exp(l + half) - 1;
		out->se *= b->value / a->value;
		return 0;
	}
	if (b->value == 0)	/* b/a = 0: only b's own spread, over |a| */
		out->se = sqrt(b->se * b->se / (a->value * a->value) +
		    var[0]);
	else
		out->se = fabs(b->value / a->value) * sqrt(var[0] + var[1]);
	out->df = isfinite(out->se) ? stats_welch_df(var, df, 2) : 1;
	stats_interval(out);
	return 0;
}

enum outcome
stats_outcome(const struct estimate *rel, double threshold)
{
	if (rel->hi < threshold / 2)
		return OUTCOME_SAME;
	if (rel->lo > threshold / 2)
		return OUTCOME_DIFFERENT;
	return OUTCOME_UNKNOWN;
}

/* Student's t at df with the upper tail that the normal has above z;
 * INFINITY where that tail is too thin to invert. */
static double
t_same_tail(double z, double df)
{
	double tail = 0.5 * erfc(z / M_SQRT2);

	return tail < 1e-12 ? INFINITY : stats_t_quantile(1 - tail, df);
}

/* The distance from the cut, in standard errors on Student's t at df,
 * at which the ratio's bound ln(1 / alpha) is reached, or the
 * one-sided interval at alpha clears the cut, whichever is nearer. */
static double
seq_need(double alpha, double se, double d, double df)
{
	double need = t_same_tail(log(1 / alpha) * se / d, df);
	double band = stats_t_quantile(1 - alpha, df);

	return band < need ? band : need;
}

enum outcome
stats_seq_change(const struct estimate *rel, double threshold,
    double alpha_diff, double alpha_same)
{
	double d = 2 * log1p(threshold / 2), l, se, z;

	/* A cost at or below zero (a slope fitted that low) has no log:
	 * its interval alone says whether it is the same. */
	if (!(rel->value > -1))
		return rel->hi < threshold / 2 ? OUTCOME_SAME :
		    OUTCOME_UNKNOWN;
	/* Runs that never vary (a peak memory) are the change itself. */
	if (rel->se == 0)
		return stats_outcome(rel, threshold);
	if (!(rel->se > 0) || !isfinite(rel->se) ||
	    !(rel->df > 0) || !(alpha_diff > 0 && alpha_diff < 0.5) ||
	    !(alpha_same > 0 && alpha_same < 0.5) || !(d > 0))
		return OUTCOME_UNKNOWN;
	l = log1p(rel->value);
	se = rel->se / (1 + rel->value);
	z = (l - d / 2) / se;
	if (z >= seq_need(alpha_diff, se, d, rel->df))
		return OUTCOME_DIFFERENT;
	if (z <= -seq_need(alpha_same, se, d, rel->df))
		return OUTCOME_SAME;
	return OUTCOME_UNKNOWN;
}

enum move
stats_move(const struct estimate *rel, double threshold)
{
	double cut = threshold / 2;

	if (!isfinite(rel->lo) || !isfinite(rel->hi))
		return MOVE_UNSURE;
	if (rel->lo > cut)
		return MOVE_SLOWER;
	if (rel->hi < -cut)
		return MOVE_FASTER;
	if (rel->lo > -cut && rel->hi < cut)
		return MOVE_NONE;
	return MOVE_UNSURE;
}

enum move
stats_move_rate(const struct estimate *rel, double threshold)
{
	double cut = threshold / 2;
	double down = 1 / (1 + cut) - 1;
	/* A time cannot fall by all of itself: past that no rise of the
	 * rate counts as faster. */
	double up = cut < 1 ? 1 / (1 - cut) - 1 : INFINITY;

	if (!isfinite(rel->lo) || !isfinite(rel->hi))
		return MOVE_UNSURE;
	if (rel->hi < down)
		return MOVE_SLOWER;
	if (rel->lo > up)
		return MOVE_FASTER;
	if (rel->lo > down && rel->hi < up)
		return MOVE_NONE;
	return MOVE_UNSURE;
}

double
stats_slower_p(const struct estimate *rel, double cut)
{
	double p;

	if (!isfinite(rel->value) || !(rel->se > 0) || !isfinite(rel->se))
		return rel->se == 0 && rel->value > cut ? 0 : 1;
	p = 1 - stats_t_cdf((rel->value - cut) / rel->se, rel->df);
	return isfinite(p) ? p : 1;
}

void
stats_holm(const double *p, size_t n, double alpha, int *reject)
{
	size_t order[256], k;

	if (n > 256)
		n = 256;
	for (size_t i = 0; i < n; i++) {
		reject[i] = 0;
		order[i] = i;
	}
	/* Insertion sort by p: n is a matrix's metrics. */
	for (size_t i = 1; i < n; i++)
		for (k = i; k > 0 && p[order[k]] < p[order[k - 1]]; k--) {
			size_t t = order[k];

			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	for (k = 0; k < n; k++) {
		if (!(p[order[k]] <= alpha / (double)(n - k)))
			break;
		reject[order[k]] = 1;
	}
}

const char *
stats_move_name(enum move m)
{
	switch (m) {
	case MOVE_NONE: return "unchanged";
	case MOVE_SLOWER: return "slower";
	case MOVE_FASTER: return "faster";
	case MOVE_UNSURE: return "unsure";
	}
	return "?";
}

int
stats_throughput(int tokens, const struct cell_stats *time_ns,
    struct throughput *out)
{
	struct estimate m;

	if (tokens <= 0 || !(time_ns->mean > 0))
		return -1;
	stats_mean_estimate(time_ns, &m);
	out->n = time_ns->n;
	out->tps = tokens * 1e9 / time_ns->mean;
	out->cv = time_ns->cv;
	out->sd = out->tps * time_ns->cv;
	out->lo = m.hi > 0 && isfinite(m.hi) ? tokens * 1e9 / m.hi : 0;
	out->hi = m.lo > 0 ? tokens * 1e9 / m.lo : INFINITY;
	return 0;
}

const char *
stats_outcome_name(enum outcome o)
{
	switch (o) {
	case OUTCOME_SAME:
		return "same";
	case OUTCOME_DIFFERENT:
		return "different";
	case OUTCOME_UNKNOWN:
		break;
	}
	return "unknown";
}

/* ln of a normal density of x around c with variance v, less its constant. */
static double
log_normal(double x, double c, double v)
{
	return -(x - c) * (x - c) / (2 * v) - log(v) / 2;
}

enum seq_side
stats_seq_classify(const struct seq_arm *probe, const struct seq_arm *good,
    const struct seq_arm *bad, double alpha, double *llr)
{
	const struct seq_arm *arm[3] = { probe, good, bad };
	double x[3], num = 0, den = 0, s2, k, ig, ib, lg, lb, ln, cut;

	for (int i = 0; i < 3; i++) {
		const struct estimate *e = arm[i]->est;
		double r;

		if (!(e->value > 0) || arm[i]->runs < 1)
			return SEQ_MORE;
		x[i] = log(e->value);
		r = e->se / e->value;
		if (!isfinite(r) || !(e->df > 0))
			continue;	/* no spread of its own yet */
		num += e->df * r * r * arm[i]->runs;
		den += e->df;
	}
	if (!(den > 0) || !(alpha > 0 && alpha < 0.5))
		return SEQ_MORE;
	/* Runs that never vary (a peak memory): the values themselves. */
	if (num == 0) {
		if (x[0] == x[1] || (x[0] - x[1]) * (x[2] - x[1]) < 0)
			return SEQ_GOOD;	/* at or beyond the good side */
		if (x[0] == x[2] || (x[0] - x[2]) * (x[1] - x[2]) < 0)
			return SEQ_BAD;
		return SEQ_NEITHER;
	}
	s2 = num / den;
	k = 1.0 / probe->runs;
	ig = 1.0 / good->runs;
	ib = 1.0 / bad->runs;
	lg = log_normal(x[0], x[1], s2 * (k + ig));
	lb = log_normal(x[0], x[2], s2 * (k + ib));
	ln = log_normal(x[0], (x[1] + x[2]) / 2, s2 * (k + (ig + ib) / 4));
	if (llr != NULL) {
		llr[0] = lb - lg;
		llr[1] = ln - lg;
		llr[2] = ln - lb;
	}
	/* Two wrong outcomes for each truth, alpha / 2 each. */
	cut = log(2 / alpha);
	if (ln - lg >= cut && ln - lb >= cut)
		return SEQ_NEITHER;
	if (lg - lb >= cut && ln - lg < cut)
		return SEQ_GOOD;
	if (lb - lg >= cut && ln - lb < cut)
		return SEQ_BAD;
	return SEQ_MORE;
}

double
stats_log_se(const struct estimate *a, const struct estimate *b)
{
	double ra, rb;

	if (!(a->value > 0 && b->value > 0))
		return INFINITY;
	ra = a->se / a->value;
	rb = b->se / b->value;
	return sqrt(ra * ra + rb * rb);
}

void
stats_pool_add(struct stats_pool *p, const struct estimate *e, int runs)
{
	double r = e->se / e->value;

	if (!(e->value > 0) || runs < 1)
		return;
	p->sx += runs * log(e->value);
	p->runs += runs;
	if (isfinite(r) && e->df > 0) {
		p->sv += e->df * r * r * runs;
		p->sdf += e->df;
	}
	p->est.value = exp(p->sx / p->runs);
	p->est.df = p->sdf > 0 ? p->sdf : 1;
	p->est.se = p->sdf > 0 ? p->est.value * sqrt(p->sv / p->sdf /
	    p->runs) : INFINITY;
}

void
stats_mid_diff(const struct estimate *m, const struct estimate *lo,
    const struct estimate *hi, struct estimate *out)
{
	double var[3], df[3] = { m->df, lo->df, hi->df };

	var[0] = m->se * m->se;
	var[1] = lo->se * lo->se / 4;
	var[2] = hi->se * hi->se / 4;
	out->value = m->value - (lo->value + hi->value) / 2;
	out->se = sqrt(var[0] + var[1] + var[2]);
	out->df = isfinite(out->se) ? stats_welch_df(var, df, 3) : 1;
	stats_interval(out);
}

void
stats_rank_intervals(const double *lo, const double *hi, size_t n, int *rank)
{
	for (size_t i = 0; i < n; i++) {
		rank[i] = 0;
		if (isnan(lo[i]) || isnan(hi[i]))
			continue;
		rank[i] = 1;
		for (size_t j = 0; j < n; j++)
			if (j != i && !isnan(lo[j]) && !isnan(hi[j]) &&
			    lo[j] > hi[i])
				rank[i]++;
	}
}
