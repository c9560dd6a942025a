/*
 * fit.c: the fixed + per-token line and the quadratic curve through
 * prefill times, the choice between them, and the comparison of two
 * releases (see fit.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"

static int
fit_two_point(const struct fit_cell *c, struct fit *out)
{
	const struct fit_cell *s = &c[0], *l = &c[1];
	struct cell_stats ss, ls;
	double span, var[2], df[2];

	if (s->tokens > l->tokens) {
		s = &c[1];
		l = &c[0];
	}
	if (stats_cell(s->time_ns, s->n, &ss) < 0 ||
	    stats_cell(l->time_ns, l->n, &ls) < 0)
		return -1;
	span = (double)(l->tokens - s->tokens);
	df[0] = ss.n > 1 ? (double)(ss.n - 1) : 1;
	df[1] = ls.n > 1 ? (double)(ls.n - 1) : 1;

	out->per_token_ns.value = (ls.mean - ss.mean) / span;
	out->per_token_ns.se = sqrt(ss.se * ss.se + ls.se * ls.se) / span;
	var[0] = ss.se * ss.se;
	var[1] = ls.se * ls.se;
	out->per_token_ns.df = isfinite(out->per_token_ns.se) ?
	    stats_welch_df(var, df, 2) : 1;

	/* fixed = mean_s * (n_l / span) - mean_l * (n_s / span) */
	out->fixed_ns.value = ss.mean - out->per_token_ns.value * s->tokens;
	var[0] = ss.se * l->tokens / span;
	var[0] *= var[0];
	var[1] = ls.se * s->tokens / span;
	var[1] *= var[1];
	out->fixed_ns.se = sqrt(var[0] + var[1]);
	out->fixed_ns.df = isfinite(out->fixed_ns.se) ?
	    stats_welch_df(var, df, 2) : 1;
	/* fixed = (mean_s n_l - mean_l n_s) / span, per_token = (mean_l -
	 * mean_s) / span, the two means independent. */
	out->cov_ns2 = -((double)l->tokens * ss.se * ss.se +
	    (double)s->tokens * ls.se * ls.se) / (span * span);
	out->nsamples = ss.n + ls.n;
	out->lack_of_fit_p = NAN;	/* a line through two means fits */
	return 0;
}

/*
 * The lack-of-fit F test of a model of npar parameters: the cell means'
 * distance from it (k - npar df) against the spread inside the cells
 * (n - k df).  Returns its p, 0 for a bent model through noiseless
 * cells, NAN when no cell has two values or the model passes through
 * every mean.
 */
static double
lack_of_fit(const struct fit_cell *c, size_t ncells, size_t n, double rss,
    size_t npar)
{
	double pure = 0, lof, ss = 0;

	if (n <= ncells || ncells <= npar)
		return NAN;
	for (size_t i = 0; i < ncells; i++) {
		double m = 0;

		for (size_t j = 0; j < c[i].n; j++)
			m += c[i].time_ns[j];
		m /= (double)c[i].n;
		for (size_t j = 0; j < c[i].n; j++) {
			pure += (c[i].time_ns[j] - m) * (c[i].time_ns[j] - m);
			ss += c[i].time_ns[j] * c[i].time_ns[j];
		}
	}
	lof = rss - pure;
	/* Below a billionth of the times, a residual is rounding: a
	 * noiseless model that fits. */
	if (lof <= 1e-18 * ss)
		return 1;
	if (pure <= 0)
		return 0;
	return 1 - stats_f_cdf(lof / (double)(ncells - npar) /
	    (pure / (double)(n - ncells)), (double)(ncells - npar),
	    (double)(n - ncells));
}

static int
fit_least_squares(const struct fit_cell *c, size_t ncells, struct fit *out)
{
	double sx = 0, sy = 0, xbar, ybar, sxx = 0, sxy = 0, rss = 0;
	double slope, icept, s2;
	size_t n = 0;

	for (size_t i = 0; i < ncells; i++)
		for (size_t j = 0; j < c[i].n; j++) {
			sx += c[i].tokens;
			sy += c[i].time_ns[j];
			n++;
		}
	if (n < 3)
		return -1;
	xbar = sx / (double)n;
	ybar = sy / (double)n;
	for (size_t i = 0; i < ncells; i++)
		for (size_t j = 0; j < c[i].n; j++) {
			double dx = c[i].tokens - xbar;

			sxx += dx * dx;
			sxy += dx * (c[i].time_ns[j] - ybar);
		}
	slope = sxy / sxx;
	icept = ybar - slope * xbar;
	for (size_t i = 0; i < ncells; i++)
		for (size_t j = 0; j < c[i].n; j++) {
			double r = c[i].time_ns[j] - (icept + slope * c[i].tokens);

			rss += r * r;
		}
	s2 = rss / (double)(n - 2);
	out->per_token_ns.value = slope;
	out->per_token_ns.se = sqrt(s2 / sxx);
	out->per_token_ns.df = (double)(n - 2);
	out->fixed_ns.value = icept;
	out->fixed_ns.se = sqrt(s2 * (1 / (double)n + xbar * xbar / sxx));
	out->fixed_ns.df = (double)(n - 2);
	out->cov_ns2 = -xbar * s2 / sxx;
	out->nsamples = n;
	out->lack_of_fit_p = lack_of_fit(c, ncells, n, rss, 2);
	return 0;
}

/*
 * A combination g of the curve's coefficients (fixed, linear, square)
 * as an estimate: its variance summed over the cells it is made of, its
 * df the pooled residuals' or by Welch-Satterthwaite over the cells.
 */
static void
curve_combo(const struct fit *f, const double g[3], struct estimate *out)
{
	const struct estimate *coef[3] = { &f->fixed_curve_ns, &f->linear_ns,
	    &f->square_ns };
	double var[FIT_MAX_CELLS], df[FIT_MAX_CELLS], sum = 0, value = 0;

	/* out may be one of the coefficients themselves. */
	for (int a = 0; a < 3; a++)
		value += g[a] * coef[a]->value;
	out->value = value;
	for (size_t i = 0; i < f->ncells; i++) {
		const struct fit_curve_cell *cc = &f->curve_cell[i];
		double d = 0;

		for (int a = 0; a < 3; a++)
			d += g[a] * cc->weight[a];
		var[i] = d * d * cc->var;
		df[i] = cc->df;
		sum += var[i];
	}
	out->se = sqrt(sum);
	out->df = f->curve_df > 0 ? f->curve_df :
	    stats_welch_df(var, df, f->ncells);
	stats_interval(out);
}

/*
 * The curve by weighted least squares on the cell means, each weighted
 * by its own spread (1 / se^2): real engines spread in proportion to
 * the time, so the long prompts' spread would otherwise set the
 * interval of the intercept, which the short ones decide.  Its se come
 * from each cell's se and df by Welch-Satterthwaite, as the two-point
 * line's do.  When a cell has one value or none of spread, that is not
 * known: then the weights are the cells' values and the se come from
 * the pooled residuals of every value, n - 3 df, as the line's least
 * squares.  The lengths are scaled to at most 1 first, so that the
 * normal equations hold numbers of one size whatever the prompt
 * lengths.  Returns 0, or -1 when fewer than 4 values leave no degree
 * of freedom.
 */
static int
fit_curve(const struct fit_cell *c, size_t ncells, struct fit *out)
{
	struct cell_stats cs[FIT_MAX_CELLS];
	double m[3][3] = { { 0 } }, inv[3][3], p[FIT_MAX_CELLS][3], w[3];
	double scale = 0, det, rss = 0, chi = 0, mean = 0;
	double coef[3] = { 0, 0, 0 }, unit[3], wt[FIT_MAX_CELLS];
	size_t n = 0;
	int pooled = 0;

	for (size_t i = 0; i < ncells; i++) {
		if (stats_cell(c[i].time_ns, c[i].n, &cs[i]) < 0)
			return -1;
		scale = fmax(scale, c[i].tokens);
		n += cs[i].n;
		mean += cs[i].mean * (double)cs[i].n;
		pooled |= !(cs[i].n > 1 && cs[i].se > 0);
	}
	if (n < 4)
		return -1;
	mean /= (double)n;
	for (size_t i = 0; i < ncells; i++) {
		double x = c[i].tokens / scale;

		wt[i] = pooled ? (double)cs[i].n : 1 / (cs[i].se * cs[i].se);
		p[i][0] = 1;
		p[i][1] = x;
		p[i][2] = x * x;
		for (int a = 0; a < 3; a++)
			for (int b = 0; b < 3; b++)
				m[a][b] += wt[i] * p[i][a] * p[i][b];
	}
	/* The inverse of the symmetric m by its cofactors. */
	inv[0][0] = m[1][1] * m[2][2] - m[1][2] * m[1][2];
	inv[0][1] = m[0][2] * m[1][2] - m[0][1] * m[2][2];
	inv[0][2] = m[0][1] * m[1][2] - m[0][2] * m[1][1];
	inv[1][1] = m[0][0] * m[2][2] - m[0][2] * m[0][2];
	inv[1][2] = m[0][1] * m[0][2] - m[0][0] * m[1][2];
	inv[2][2] = m[0][0] * m[1][1] - m[0][1] * m[0][1];
	det = m[0][0] * inv[0][0] + m[0][1] * inv[0][1] + m[0][2] * inv[0][2];
	if (!(det > 0))
		return -1;
	inv[1][0] = inv[0][1];
	inv[2][0] = inv[0][2];
	inv[2][1] = inv[1][2];
	unit[0] = 1;
	unit[1] = 1 / scale;
	unit[2] = 1 / (scale * scale);
	/* Each coefficient is a sum over the cells' means: inv p w. */
	for (size_t i = 0; i < ncells; i++) {
		struct fit_curve_cell *cc = &out->curve_cell[i];

		for (int a = 0; a < 3; a++) {
			w[a] = 0;
			for (int b = 0; b < 3; b++)
				w[a] += inv[a][b] * p[i][b];
			cc->weight[a] = w[a] * wt[i] / det * unit[a];
			coef[a] += cc->weight[a] * cs[i].mean;
		}
	}
	for (size_t i = 0; i < ncells; i++) {
		double x = c[i].tokens, e = cs[i].mean - (coef[0] +
		    coef[1] * x + coef[2] * x * x);

		rss += (double)(cs[i].n - 1) * cs[i].sd * cs[i].sd +
		    (double)cs[i].n * e * e;
		if (!pooled)
			chi += e * e / (cs[i].se * cs[i].se);
	}
	out->curve_df = pooled ? (double)(n - 3) : 0;
	for (size_t i = 0; i < ncells; i++) {
		out->curve_cell[i].var = pooled ? rss / (double)(n - 3) /
		    (double)cs[i].n : cs[i].se * cs[i].se;
		out->curve_cell[i].df = (double)(cs[i].n - 1);
	}
	out->fixed_curve_ns.value = coef[0];
	out->linear_ns.value = coef[1];
	out->square_ns.value = coef[2];
	for (int a = 0; a < 3; a++) {
		struct estimate *e = a == 0 ? &out->fixed_curve_ns :
		    a == 1 ? &out->linear_ns : &out->square_ns;
		double g[3] = { 0, 0, 0 };

		g[a] = 1;
		curve_combo(out, g, e);
		for (int b = 0; b < 3; b++) {
			out->curve_cov[a][b] = 0;
			for (size_t i = 0; i < ncells; i++)
				out->curve_cov[a][b] +=
				    out->curve_cell[i].weight[a] *
				    out->curve_cell[i].weight[b] *
				    out->curve_cell[i].var;
		}
	}
	/* A bend below a billionth of the times is the rounding of a
	 * straight line, not a curve. */
	if (!(coef[2] * scale * scale > 1e-9 * fabs(mean)))
		out->curvature_p = 1;
	else if (!(out->square_ns.se > 0))
		out->curvature_p = 0;
	else
		out->curvature_p = 1 - stats_t_cdf(out->square_ns.value /
		    out->square_ns.se, out->square_ns.df);
	if (pooled)
		out->curve_lack_of_fit_p = lack_of_fit(c, ncells, n, rss, 3);
	else
		out->curve_lack_of_fit_p = ncells > 3 ? 1 - stats_f_cdf(chi /
		    (double)(ncells - 3), (double)(ncells - 3),
		    (double)(n - ncells)) : NAN;
	out->has_curve = 1;
	return 0;
}

static int
cmp_int(const void *x, const void *y)
{
	const int *a = x, *b = y;

	return (*a > *b) - (*a < *b);
}

/* 1e9 / a cost per token and from its interval ends. */
static void
ceiling_of(const struct estimate *p, double *tps, double *lo, double *hi)
{
	*tps = p->value > 0 ? 1e9 / p->value : NAN;
	*lo = p->hi > 0 && isfinite(p->hi) ? 1e9 / p->hi : 0;
	*hi = p->lo > 0 ? 1e9 / p->lo : INFINITY;
}

/*
 * The curve's highest throughput: n / (F + a n + b n^2) peaks at n* =
 * sqrt(F / b), where it is 1 / (a + 2 sqrt(F b)); the interval from
 * that cost's by the delta method.  None (NAN) when F or b is not
 * positive.
 */
static void
curve_peak(struct fit *f)
{
	double fx = f->fixed_curve_ns.value, b = f->square_ns.value, g[3];
	struct estimate cost;

	if (!(fx > 0 && b > 0)) {
		f->model_ceiling_tps = NAN;
		f->model_ceiling_lo = 0;
		f->model_ceiling_hi = INFINITY;
		f->model_ceiling_tokens = NAN;
		return;
	}
	g[0] = sqrt(b / fx);
	g[1] = 1;
	g[2] = sqrt(fx / b);
	curve_combo(f, g, &cost);
	ceiling_of(&cost, &f->model_ceiling_tps, &f->model_ceiling_lo,
	    &f->model_ceiling_hi);
	f->model_ceiling_tokens = sqrt(fx / b);
}

/* Choose the model and fill its figures at the cells' lengths. */
static void
set_model(const struct fit_cell *c, size_t ncells, struct fit *f)
{
	int len[FIT_MAX_CELLS];

	f->model = f->has_curve && f->curvature_p < 1 - FIT_KIND_LEVEL ?
	    FIT_MODEL_CURVE : FIT_MODEL_LINE;
	for (size_t i = 0; i < ncells; i++)
		len[i] = c[i].tokens;
	qsort(len, ncells, sizeof(len[0]), cmp_int);
	for (size_t i = 0; i < ncells; i++) {
		f->per_token_at[i].tokens = len[i];
		fit_cost_at(f, len[i], &f->per_token_at[i].cost_ns);
	}
	f->nper_token_at = ncells;
	f->model_fixed_estimable = fit_model_why(f) == NULL;
	if (f->model == FIT_MODEL_LINE) {
		f->model_fixed_ns = f->fixed_ns;
		f->model_ceiling_tps = f->ceiling_tps;
		f->model_ceiling_lo = f->ceiling_lo;
		f->model_ceiling_hi = f->ceiling_hi;
		f->model_ceiling_tokens = INFINITY;
	} else {
		f->model_fixed_ns = f->fixed_curve_ns;
		curve_peak(f);
	}
}

int
fit_line(const struct fit_cell *cells, size_t ncells, struct fit *out)
{
	struct fit f;
	int rc;

	if (ncells < 2 || ncells > FIT_MAX_CELLS)
		return -1;
	for (size_t i = 0; i < ncells; i++) {
		if (cells[i].tokens <= 0 || cells[i].n == 0)
			return -1;
		for (size_t j = 0; j < cells[i].n; j++)
			if (!isfinite(cells[i].time_ns[j]))
				return -1;
		for (size_t j = 0; j < i; j++)
			if (cells[j].tokens == cells[i].tokens)
				return -1;
	}
	/* Every byte set: a kept summary stores the struct as it is. */
	memset(&f, 0, sizeof(f));
	f.ncells = ncells;
	if (ncells == 2) {
		f.method = FIT_TWO_POINT;
		rc = fit_two_point(cells, &f);
	} else {
		f.method = FIT_LEAST_SQUARES;
		rc = fit_least_squares(cells, ncells, &f);
	}
	if (rc < 0)
		return -1;
	stats_interval(&f.per_token_ns);
	stats_interval(&f.fixed_ns);
	ceiling_of(&f.per_token_ns, &f.ceiling_tps, &f.ceiling_lo,
	    &f.ceiling_hi);
	f.fixed_estimable = 1;
	f.fixed_why = NULL;
	/* Below zero within the noise is an overhead of about nothing,
	 * said with its interval; below it beyond the noise, no overhead
	 * the line can give. */
	if (f.fixed_ns.hi < 0) {
		f.fixed_estimable = 0;
		f.fixed_why = "the fitted fixed overhead is negative";
	} else if (f.lack_of_fit_p < 1 - FIT_KIND_LEVEL) {
		f.fixed_estimable = 0;
		f.fixed_why = "the times do not lie on a line (lack of fit)";
	}
	f.has_curve = 0;
	f.curvature_p = 1;
	f.curve_lack_of_fit_p = NAN;
	if (ncells < 3 || fit_curve(cells, ncells, &f) < 0) {
		struct estimate none = { NAN, INFINITY, 1, -INFINITY,
		    INFINITY };

		f.fixed_curve_ns = f.linear_ns = f.square_ns = none;
		for (int a = 0; a < 3; a++)
			for (int b = 0; b < 3; b++)
				f.curve_cov[a][b] = NAN;
	}
	set_model(cells, ncells, &f);
	*out = f;
	return 0;
}

void
fit_at(const struct fit *f, double tokens, struct estimate *out)
{
	double var = f->fixed_ns.se * f->fixed_ns.se + tokens * tokens *
	    f->per_token_ns.se * f->per_token_ns.se + 2 * tokens * f->cov_ns2;

	out->value = f->fixed_ns.value + f->per_token_ns.value * tokens;
	/* Rounding can leave a hair below zero where the band is
	 * narrowest. */
	out->se = isfinite(var) ? sqrt(fmax(var, 0)) : INFINITY;
	out->df = f->per_token_ns.df;
	stats_interval(out);
}

void
fit_cost_at(const struct fit *f, double tokens, struct estimate *out)
{
	double g[3] = { 0, 1, 2 * tokens };

	if (f->model == FIT_MODEL_LINE)
		*out = f->per_token_ns;
	else
		curve_combo(f, g, out);
}

void
fit_model_at(const struct fit *f, double tokens, struct estimate *out)
{
	double g[3] = { 1, tokens, tokens * tokens };

	if (f->model == FIT_MODEL_LINE)
		fit_at(f, tokens, out);
	else
		curve_combo(f, g, out);
}

const char *
fit_model_why(const struct fit *f)
{
	if (f->model == FIT_MODEL_LINE)
		return f->fixed_why;
	if (f->fixed_curve_ns.hi < 0)
		return "the curve's fixed overhead is negative";
	if (f->curve_lack_of_fit_p < 1 - FIT_KIND_LEVEL)
		return "the times lie on neither a line nor the curve "
		    "(lack of fit)";
	return NULL;
}

const char *
fit_hint(const struct fit *f)
{
	if (f->model == FIT_MODEL_CURVE)
		return f->model_fixed_estimable ? "the cost per token grows "
		    "with length: fixed overhead from the curve's intercept" :
		    "the cost per token grows with length, but not as the "
		    "curve has it: fit over the lengths that matter";
	if (f->fixed_estimable)
		return NULL;
	if (f->ncells == 2)
		return "two lengths cannot show whether the cost per token "
		    "grows with length: measure three or more (e.g. 128, "
		    "512, 2048)";
	if (f->has_curve && f->square_ns.value < 0)
		return "the cost per token falls with length: measure longer "
		    "prompts (fit lengths well above where the line bends)";
	return "no curve stands out of the noise: more runs per cell";
}

int
fit_ratio(const double *a_ns, size_t na, const double *b_ns, size_t nb,
    struct estimate *out)
{
	struct cell_stats as, bs;
	struct estimate am, bm;

	if (stats_cell(a_ns, na, &as) < 0 || stats_cell(b_ns, nb, &bs) < 0)
		return -1;
	stats_mean_estimate(&as, &am);
	stats_mean_estimate(&bs, &bm);
	if (stats_rel_change(&bm, &am, out) < 0)
		return -1;
	/* b / a - 1 measured against |a|; times are positive, so + 1 is
	 * the ratio itself. */
	out->value += 1;
	out->lo += 1;
	out->hi += 1;
	return 0;
}

const struct fit_cell *
fit_cell_find(const struct fit_cell *c, size_t n, int tokens)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].tokens == tokens)
			return &c[i];
	return NULL;
}

static int
cmp_ratio(const void *x, const void *y)
{
	const struct length_ratio *a = x, *b = y;

	return (a->tokens > b->tokens) - (a->tokens < b->tokens);
}

/*
 * A part changed: significant at FIT_KIND_LEVEL and as large as asked.
 * The kind is a claim about two parts at once, so each is held to the
 * stricter level: a part that did not move must rarely be named beside
 * the one that did.
 */
static int
part_change(const struct estimate *delta, const struct estimate *rel,
    double threshold, double level)
{
	double half;

	if (!isfinite(delta->se))
		return 0;
	half = stats_t_quantile(0.5 + level / 2, delta->df) * delta->se;
	if (delta->value - half > 0 && rel->value >= threshold)
		return 1;
	if (delta->value + half < 0 && rel->value <= -threshold)
		return -1;
	return 0;
}

static void
set_trend(struct fit_comparison *c)
{
	const struct estimate *s, *l;
	struct estimate d;

	c->trend = TREND_FLAT;
	if (c->nratios < 2)
		return;
	s = &c->ratios[0].ratio;
	l = &c->ratios[c->nratios - 1].ratio;
	stats_diff(l, s, &d);
	if (d.lo > 0)
		c->trend = TREND_RISING;
	else if (d.hi < 0)
		c->trend = TREND_FALLING;
}

/* b against a for one part: the delta, the relative change (unknown
 * when a is 0) and part_change() at level. */
static int
judge_part(const struct estimate *b, const struct estimate *a,
    double threshold, double level, struct estimate *delta,
    struct estimate *rel)
{
	stats_diff(b, a, delta);
	if (stats_rel_change(b, a, rel) < 0)
		*rel = (struct estimate){ NAN, INFINITY, 1, -INFINITY,
		    INFINITY };
	return part_change(delta, rel, threshold, level);
}

/*
 * The cost per token of b against a at each fit length.  With a curve
 * the per-token part is judged here: it changed where some length did,
 * each held to FIT_KIND_LEVEL shared among the lengths (Bonferroni), so
 * that a release whose costs did not move is named at most as often as
 * with one slope; the delta reported is the longest length's.
 */
static void
compare_costs(struct fit_comparison *c, double threshold)
{
	size_t k = c->a.nper_token_at;
	double level = 1 - (1 - FIT_KIND_LEVEL) / (double)k;
	int slower = 0, faster = 0;

	for (size_t i = 0; i < k; i++) {
		struct fit_cost_change *x = &c->per_token_at[i];
		const struct estimate *ca = &c->a.per_token_at[i].cost_ns;
		const struct estimate *cb = &c->b.per_token_at[i].cost_ns;

		x->tokens = c->a.per_token_at[i].tokens;
		x->change = judge_part(cb, ca, threshold, c->curve ? level :
		    FIT_KIND_LEVEL, &x->delta_ns, &x->rel);
		slower |= x->change > 0;
		faster |= x->change < 0;
	}
	c->nper_token_at = k;
	if (!c->curve)
		return;
	c->per_token_delta_ns = c->per_token_at[k - 1].delta_ns;
	c->per_token_rel = c->per_token_at[k - 1].rel;
	c->per_token_change = slower ? 1 : faster ? -1 : 0;
}

int
fit_compare(const struct fit_cell *a, size_t na,
    const struct fit_cell *b, size_t nb,
    const int *fit_lengths, size_t nfit, double threshold,
    struct fit_comparison *out)
{
	struct fit_cell fa[FIT_MAX_CELLS], fb[FIT_MAX_CELLS];
	size_t nf = 0;

	if (na > FIT_MAX_CELLS || nb > FIT_MAX_CELLS || nfit > FIT_MAX_CELLS)
		return -1;
	out->nratios = 0;
	for (size_t i = 0; i < na; i++) {
		const struct fit_cell *bc = fit_cell_find(b, nb, a[i].tokens);
		struct length_ratio *r = &out->ratios[out->nratios];
		int use = fit_lengths == NULL;

		if (bc == NULL)
			continue;
		for (size_t k = 0; k < nfit && !use; k++)
			use = fit_lengths[k] == a[i].tokens;
		if (use) {
			fa[nf] = a[i];
			fb[nf] = *bc;
			nf++;
		}
		r->tokens = a[i].tokens;
		if (fit_ratio(a[i].time_ns, a[i].n, bc->time_ns, bc->n,
		    &r->ratio) == 0)
			out->nratios++;
	}
	if (nf < 2 || fit_line(fa, nf, &out->a) < 0 ||
	    fit_line(fb, nf, &out->b) < 0)
		return -1;
	qsort(out->ratios, out->nratios, sizeof(out->ratios[0]), cmp_ratio);

	out->curve = out->a.model == FIT_MODEL_CURVE ||
	    out->b.model == FIT_MODEL_CURVE;
	compare_costs(out, threshold);
	if (!out->curve)
		out->per_token_change = judge_part(&out->b.per_token_ns,
		    &out->a.per_token_ns, threshold, FIT_KIND_LEVEL,
		    &out->per_token_delta_ns, &out->per_token_rel);
	out->fixed_change = judge_part(&out->b.model_fixed_ns,
	    &out->a.model_fixed_ns, threshold, FIT_KIND_LEVEL,
	    &out->fixed_delta_ns, &out->fixed_rel);
	out->fixed_estimable = out->a.model_fixed_estimable &&
	    out->b.model_fixed_estimable;
	out->fixed_why = fit_model_why(&out->a) ? fit_model_why(&out->a) :
	    fit_model_why(&out->b);
	out->hint = fit_hint(&out->a) ? fit_hint(&out->a) : fit_hint(&out->b);
	set_trend(out);
	if (!out->fixed_estimable) {
		/* The intercept is an artefact of a bent line: the kind rests
		 * on the slope and on how the slowdown varies with length. */
		const struct estimate *r0 = &out->ratios[0].ratio;

		out->fixed_change = 0;
		if (out->per_token_change)
			out->kind = KIND_PER_TOKEN;
		else if (out->trend == TREND_FALLING && out->nratios > 0 &&
		    r0->lo > 1 && r0->value - 1 >= threshold)
			out->kind = KIND_FIXED_OVERHEAD;
		else
			out->kind = KIND_NONE;
		return 0;
	}
	if (out->per_token_change && out->fixed_change)
		out->kind = KIND_BOTH;
	else if (out->per_token_change)
		out->kind = KIND_PER_TOKEN;
	else if (out->fixed_change)
		out->kind = KIND_FIXED_OVERHEAD;
	else
		out->kind = KIND_NONE;
	return 0;
}

const char *
fit_kind_name(enum change_kind k)
{
	switch (k) {
	case KIND_PER_TOKEN:
		return "per-token";
	case KIND_FIXED_OVERHEAD:
		return "fixed-overhead";
	case KIND_BOTH:
		return "both";
	case KIND_NONE:
		break;
	}
	return "none";
}

const char *
fit_trend_name(enum ratio_trend t)
{
	switch (t) {
	case TREND_RISING:
		return "rising";
	case TREND_FALLING:
		return "falling";
	case TREND_FLAT:
		break;
	}
	return "flat";
}
