/*
 * changepoint.c: E-divisive means over a history of releases, its
 * splits tested by permutation (see changepoint.h for the method).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "changepoint.h"

void
cp_params_init(struct cp_params *p)
{
	p->alpha = CP_ALPHA;
	p->permutations = CP_PERMUTATIONS;
	p->min_segment = CP_MIN_SEGMENT;
	p->slide_window = CP_SLIDE_WINDOW;
	p->seed = 1;
}

/* splitmix64: a small stream that is the same on every machine. */
static uint64_t
next_u64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A uniform index below n, without the modulo's bias worth naming at
 * the sizes of a history. */
static size_t
below(uint64_t *state, size_t n)
{
	return (size_t)((next_u64(state) >> 11) * (1.0 / 9007199254740992.0) *
	    (double)n);
}

/* The run values of r with its outlier runs left out, into buf (room
 * for r->n): how many are kept. */
static size_t
kept_runs(const struct cp_release *r, double *buf)
{
	memcpy(buf, r->runs, r->n * sizeof(*buf));
	return stats_drop_outliers(buf, r->n);
}

/*
 * The energy statistic's best split of x[0..n-1], as Matteson and James
 * search it: X = [0, tau) against Y = [tau, kappa) for every kappa, so
 * that a step up and back down inside the segment is one strong split,
 * not two weak ones diluted by the rest.  The statistic is
 * (a b / (a + b)) (2/(a b) B - WL / C(a,2) - WR / C(b,2)), B the sum of
 * |x_i - x_j| across X and Y, WL and WR those within each (a side of
 * one has no within term), each side at least m long.  The sums are
 * rectangles of the distance matrix's prefix sums ps ((n + 1)^2), so
 * every (tau, kappa) costs O(1).  Returns the statistic (0 when no split
 * is allowed) and tau in *at.
 */
static double
best_split(const double *x, size_t n, size_t m, double *ps, size_t *at)
{
	size_t w = n + 1;
	double best = 0;

#define PS(i, j) ps[(i) * w + (j)]
#define RECT(i0, i1, j0, j1) (PS(i1, j1) - PS(i0, j1) - PS(i1, j0) + \
	PS(i0, j0))
	*at = 0;
	if (n < 2 * m)
		return 0;
	for (size_t j = 0; j <= n; j++)
		PS(0, j) = 0;
	for (size_t i = 1; i <= n; i++) {
		double row = 0;

		PS(i, 0) = 0;
		for (size_t j = 1; j <= n; j++) {
			row += fabs(x[i - 1] - x[j - 1]);
			PS(i, j) = PS(i - 1, j) + row;
		}
	}
	for (size_t t = m; t + m <= n; t++) {
		double a = (double)t, wl = RECT(0, t, 0, t) / 2;

		for (size_t k = t + m; k <= n; k++) {
			double c = (double)(k - t), q;

			q = 2 * RECT(0, t, t, k) / (a * c);
			if (t > 1)
				q -= 2 * wl / (a * (a - 1));
			if (k - t > 1)
				q -= RECT(t, k, t, k) / (c * (c - 1));
			q *= a * c / (a + c);
			if (q > best) {
				best = q;
				*at = t;
			}
		}
	}
#undef RECT
#undef PS
	return best;
}

/*
 * The permutation p of a split of x[0..n-1] whose statistic is q: the
 * share of shuffles of the segment whose best split reaches q, the
 * observed one counted.  Stops as soon as the test cannot reach alpha
 * any more: an unchanged segment costs a few dozen shuffles, not all.
 */
static double
perm_p(const double *x, size_t n, double q, const struct cp_params *p,
    uint64_t *state, double *work, double *ps)
{
	size_t reach = 0, done, limit;

	/* (1 + reach) / (1 + P) <= alpha stays possible while reach is
	 * at most this. */
	limit = (size_t)floor(p->alpha * (double)(p->permutations + 1)) - 1;
	memcpy(work, x, n * sizeof(*work));
	for (done = 0; done < p->permutations; done++) {
		size_t at;

		for (size_t i = n - 1; i > 0; i--) {
			size_t j = below(state, i + 1);
			double t = work[i];

			work[i] = work[j];
			work[j] = t;
		}
		/* A hair of tolerance: a shuffle that gives back the same
		 * split must count as reaching it. */
		if (best_split(work, n, p->min_segment, ps, &at) >= q *
		    (1 - 1e-12) && ++reach > limit)
			return (1.0 + (double)reach) / (1.0 + (double)done + 1);
	}
	return (1.0 + (double)reach) / (1.0 + (double)p->permutations);
}

/* The mean run value of releases [from, to) as an estimate: their kept
 * runs pooled.  -1 when none is left. */
static int
segment_estimate(const struct cp_release *r, size_t from, size_t to,
    double *buf, struct estimate *e)
{
	struct cell_stats c;
	size_t n = 0;

	for (size_t i = from; i < to; i++)
		n += kept_runs(&r[i], buf + n);
	if (stats_cell(buf, n, &c) < 0)
		return -1;
	stats_mean_estimate(&c, e);
	return 0;
}

static int
check_args(const struct cp_release *r, size_t n, const struct cp_params *p,
    size_t *maxruns, size_t *allruns)
{
	*maxruns = *allruns = 0;
	if (p == NULL || !(p->alpha > 0 && p->alpha < 1) ||
	    p->permutations < 19 || p->permutations > 1000000 ||
	    p->min_segment < 1 || p->alpha * (double)(p->permutations + 1) <
	    1 || n > CP_MAX_RELEASES || (n > 0 && r == NULL))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (r[i].n == 0 || r[i].runs == NULL || r[i].n > SIZE_MAX / 16)
			return -1;
		for (size_t k = 0; k < r[i].n; k++)
			if (!isfinite(r[i].runs[k]) || r[i].runs[k] <= 0)
				return -1;
		if (r[i].n > *maxruns)
			*maxruns = r[i].n;
		if (*allruns > SIZE_MAX / 16 - r[i].n)
			return -1;
		*allruns += r[i].n;
	}
	return 0;
}

/*
 * Where the change between x[from] and x[to - 1] found at at lies best
 * for a step in the mean: the t within CP_REFINE releases of at (each
 * side keeping m) with the largest (a b / (a + b)) (mean_Y - mean_X)^2,
 * the likelihood's choice for one shift in normal noise.  The energy
 * statistic finds that a change is there with a level that holds for
 * any noise; its place, a notch less sharply than the means do.
 */
static size_t
refine(const double *x, size_t from, size_t to, size_t at, size_t m)
{
	size_t best_at = at, lo, hi;
	double best = -1, total = 0, left = 0;

	lo = at > from + m + CP_REFINE ? at - CP_REFINE : from + m;
	hi = at + CP_REFINE + m <= to ? at + CP_REFINE : to - m;
	for (size_t i = from; i < to; i++)
		total += x[i];
	for (size_t i = from; i < lo; i++)
		left += x[i];
	for (size_t t = lo; t <= hi; t++) {
		double a = (double)(t - from), b = (double)(to - t), d, q;

		d = (total - left) / b - left / a;
		q = a * b / (a + b) * d * d;
		if (q > best) {
			best = q;
			best_at = t;
		}
		left += x[t];
	}
	return best_at;
}

/* Each release's value and what its runs say of their own spread: the
 * kept runs' number and the squared deviations of their logarithms. */
struct levels {
	double *x, *ss;
	size_t *n;
};

/*
 * Whether releases [lo, hi) sit at one level, as a step's segment does:
 * the F test of their values' spread about their mean against the
 * spread of the runs inside each release.  Its p, small when they do
 * not; 1 when fewer than 3 releases or no spread within them.
 */
static double
level_p(const struct levels *l, size_t lo, size_t hi)
{
	double mean = 0, ssb = 0, ssw = 0, runs = 0, dfw = 0;

	if (hi < lo + 3)
		return 1;
	for (size_t i = lo; i < hi; i++) {
		mean += (double)l->n[i] * l->x[i];
		runs += (double)l->n[i];
	}
	mean /= runs;
	for (size_t i = lo; i < hi; i++) {
		ssb += (double)l->n[i] * (l->x[i] - mean) * (l->x[i] - mean);
		ssw += l->ss[i];
		dfw += (double)l->n[i] - 1;
	}
	if (!(ssw > 0) || dfw < 1)
		return 1;
	return 1 - stats_f_cdf(ssb / (double)(hi - lo - 1) / (ssw / dfw),
	    (double)(hi - lo - 1), dfw);
}

/* The least-squares slope of x[lo..hi-1] against their index. */
static double
slope(const double *x, size_t lo, size_t hi)
{
	double m = (double)(hi - lo), ibar = (m - 1) / 2, xbar = 0, sxx = 0;
	double sxy = 0;

	for (size_t i = lo; i < hi; i++)
		xbar += x[i] / m;
	for (size_t i = lo; i < hi; i++) {
		sxx += ((double)(i - lo) - ibar) * ((double)(i - lo) - ibar);
		sxy += ((double)(i - lo) - ibar) * (x[i] - xbar);
	}
	return sxx > 0 ? sxy / sxx : 0;
}

/*
 * Whether the change at c is a slide: the releases beside it, up to w
 * on each side within its segments, are not at one level (level_p() at
 * CP_ALPHA / 2 a side, so at most CP_ALPHA beside a step, whose sides
 * are flat) and move its way.  The release next to the cut on each side
 * is left out: a step placed one release off would look like a slide.
 */
static int
sliding(const struct levels *l, const struct cp_point *c, size_t w)
{
	size_t lo = c->at - c->from > w ? c->at - w : c->from;
	size_t hi = c->to - c->at > w ? c->at + w : c->to;
	double way = c->up ? 1 : -1;

	return (level_p(l, lo, c->at - 1) <= CP_ALPHA / 2 &&
	    way * slope(l->x, lo, c->at - 1) > 0) ||
	    (level_p(l, c->at + 1, hi) <= CP_ALPHA / 2 &&
	    way * slope(l->x, c->at + 1, hi) > 0);
}

/* Insert at into the sorted cuts c[0..*nc-1]. */
static void
add_cut(size_t *c, size_t *nc, size_t at)
{
	size_t i = *nc;

	while (i > 0 && c[i - 1] > at) {
		c[i] = c[i - 1];
		i--;
	}
	c[i] = at;
	(*nc)++;
}

int
cp_detect(const struct cp_release *r, size_t n, const struct cp_params *p,
    struct cp_result *out)
{
	/* cuts: 0, the change points found, n; sorted. */
	size_t cuts[CP_MAX_POINTS + 2], ncuts = 0, maxruns, allruns;
	double *x = NULL, *work = NULL, *buf = NULL, *ps = NULL;
	struct levels lv = { NULL, NULL, NULL };
	uint64_t state;
	struct cp_result res;
	int rc = -1;

	if (check_args(r, n, p, &maxruns, &allruns) < 0)
		return -1;
	memset(&res, 0, sizeof(res));
	res.last_p = 1;
	x = malloc((n ? n : 1) * sizeof(*x));
	work = malloc((n ? n : 1) * sizeof(*work));
	buf = malloc((allruns > maxruns ? allruns : maxruns ? maxruns : 1) *
	    sizeof(*buf));
	ps = malloc((n + 1) * (n + 1) * sizeof(*ps));
	lv.ss = malloc((n ? n : 1) * sizeof(*lv.ss));
	lv.n = malloc((n ? n : 1) * sizeof(*lv.n));
	lv.x = x;
	if (x == NULL || work == NULL || buf == NULL || ps == NULL ||
	    lv.ss == NULL || lv.n == NULL)
		goto out;
	for (size_t i = 0; i < n; i++) {
		size_t k = kept_runs(&r[i], buf);
		double s = 0;

		for (size_t j = 0; j < k; j++)
			s += log(buf[j]);
		x[i] = s / (double)k;
		lv.n[i] = k;
		lv.ss[i] = 0;
		for (size_t j = 0; j < k; j++)
			lv.ss[i] += (log(buf[j]) - x[i]) * (log(buf[j]) - x[i]);
	}
	state = p->seed;
	cuts[ncuts++] = 0;
	cuts[ncuts++] = n;
	while (ncuts - 2 < CP_MAX_POINTS) {
		size_t seg = 0, at = 0, tau;
		double q = 0, qs;

		/* The segment whose best split is the strongest. */
		for (size_t s = 0; s + 1 < ncuts; s++) {
			qs = best_split(x + cuts[s], cuts[s + 1] - cuts[s],
			    p->min_segment, ps, &tau);
			if (qs > q) {
				q = qs;
				seg = s;
				at = cuts[s] + tau;
			}
		}
		if (q <= 0)
			break;
		res.last_p = perm_p(x + cuts[seg], cuts[seg + 1] - cuts[seg], q,
		    p, &state, work, ps);
		if (res.last_p > p->alpha)
			break;
		add_cut(cuts, &ncuts, at);
		res.v[res.n].at = at;
		res.v[res.n].stat = q;
		res.v[res.n].p = res.last_p;
		res.n++;
	}
	/* In release order, each with the segments on its two sides. */
	for (size_t i = 1; i < res.n; i++)
		for (size_t j = i; j > 0 && res.v[j - 1].at > res.v[j].at; j--) {
			struct cp_point t = res.v[j];

			res.v[j] = res.v[j - 1];
			res.v[j - 1] = t;
		}
	/* Each placed between its neighbours (the one before placed
	 * already), then measured between them as placed. */
	for (size_t i = 0; i < res.n; i++)
		res.v[i].at = refine(x, i > 0 ? res.v[i - 1].at : 0,
		    cuts[i + 2], res.v[i].at, p->min_segment);
	for (size_t i = 0; i < res.n; i++) {
		struct cp_point *c = &res.v[i];
		struct estimate a, b;

		c->from = i > 0 ? res.v[i - 1].at : 0;
		c->to = i + 1 < res.n ? res.v[i + 1].at : n;
		if (segment_estimate(r, c->from, c->at, buf, &a) < 0 ||
		    segment_estimate(r, c->at, c->to, buf, &b) < 0 ||
		    stats_rel_change(&b, &a, &c->rel) < 0)
			goto out;
		c->up = c->rel.value > 0;
		if (p->slide_window == 0)
			continue;
		/* Two points the same way close together are one slide cut
		 * twice; a point alone, one whose sides still trend. */
		if (i > 0 && res.v[i - 1].up == c->up && c->at -
		    res.v[i - 1].at <= p->slide_window / 2 + 2) {
			if (res.v[i - 1].slide == 0)
				res.v[i - 1].slide = (int)++res.nslides;
			c->slide = res.v[i - 1].slide;
		} else if (sliding(&lv, c, p->slide_window))
			c->slide = (int)++res.nslides;
	}
	*out = res;
	rc = 0;
out:
	free(x);
	free(work);
	free(buf);
	free(ps);
	free(lv.ss);
	free(lv.n);
	return rc;
}
