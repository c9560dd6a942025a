/*
 * fit.c: the fixed + per-token line through prefill times and the
 * comparison of two releases' lines (see fit.h).
 */
#include <math.h>
#include <stdlib.h>

#include "fit.h"

static void
set_ceiling(struct fit *f)
{
	const struct estimate *p = &f->per_token_ns;

	f->ceiling_tps = p->value > 0 ? 1e9 / p->value : NAN;
	f->ceiling_lo = p->hi > 0 && isfinite(p->hi) ? 1e9 / p->hi : 0;
	f->ceiling_hi = p->lo > 0 ? 1e9 / p->lo : INFINITY;
}

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
 * The lack-of-fit F test: the cell means' distance from the line (k - 2
 * df) against the spread inside the cells (n - k df).  Returns its p, 0
 * for a bent line through noiseless cells, NAN when no cell has two
 * values.
 */
static double
lack_of_fit(const struct fit_cell *c, size_t ncells, size_t n, double rss)
{
	double pure = 0, lof;

	if (n <= ncells)
		return NAN;
	for (size_t i = 0; i < ncells; i++) {
		double m = 0;

		for (size_t j = 0; j < c[i].n; j++)
			m += c[i].time_ns[j];
		m /= (double)c[i].n;
		for (size_t j = 0; j < c[i].n; j++)
			pure += (c[i].time_ns[j] - m) * (c[i].time_ns[j] - m);
	}
	lof = rss - pure;
	if (lof <= 0)
		return 1;
	if (pure <= 0)
		return 0;
	return 1 - stats_f_cdf(lof / (double)(ncells - 2) /
	    (pure / (double)(n - ncells)), (double)(ncells - 2),
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
	out->lack_of_fit_p = lack_of_fit(c, ncells, n, rss);
	return 0;
}

int
fit_line(const struct fit_cell *cells, size_t ncells, struct fit *out)
{
	struct fit f;
	int rc;

	if (ncells < 2)
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
	set_ceiling(&f);
	f.fixed_estimable = 1;
	f.fixed_why = NULL;
	if (f.fixed_ns.value < 0) {
		f.fixed_estimable = 0;
		f.fixed_why = "the fitted fixed overhead is negative";
	} else if (f.lack_of_fit_p < 1 - FIT_KIND_LEVEL) {
		f.fixed_estimable = 0;
		f.fixed_why = "the times do not lie on a line (lack of fit)";
	}
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
    double threshold)
{
	double half;

	if (!isfinite(delta->se))
		return 0;
	half = stats_t_quantile(0.5 + FIT_KIND_LEVEL / 2, delta->df) *
	    delta->se;
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

	stats_diff(&out->b.per_token_ns, &out->a.per_token_ns,
	    &out->per_token_delta_ns);
	stats_diff(&out->b.fixed_ns, &out->a.fixed_ns, &out->fixed_delta_ns);
	if (stats_rel_change(&out->b.per_token_ns, &out->a.per_token_ns,
	    &out->per_token_rel) < 0)
		out->per_token_rel = (struct estimate){ NAN, INFINITY, 1,
		    -INFINITY, INFINITY };
	if (stats_rel_change(&out->b.fixed_ns, &out->a.fixed_ns,
	    &out->fixed_rel) < 0)
		out->fixed_rel = (struct estimate){ NAN, INFINITY, 1,
		    -INFINITY, INFINITY };
	out->per_token_change = part_change(&out->per_token_delta_ns,
	    &out->per_token_rel, threshold);
	out->fixed_change = part_change(&out->fixed_delta_ns,
	    &out->fixed_rel, threshold);
	out->fixed_estimable = out->a.fixed_estimable &&
	    out->b.fixed_estimable;
	out->fixed_why = out->a.fixed_why ? out->a.fixed_why :
	    out->b.fixed_why;
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
