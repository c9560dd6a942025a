/*
 * bisect_metric.c: a release's metric from its stored samples, run by
 * run (see bisect.h and bisect_int.h): the runs of a cell, each run's
 * value, the fit or the cell's mean that the bisection compares; and
 * the parameters that say which metric and cells.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "bisect_int.h"
#include "fit.h"
#include "stats.h"

/* Where the run that starts at sample i of c ends (one past it). */
static size_t
run_end(const struct bisect_cell *c, size_t i)
{
	size_t j = i + 1;

	if (c->samples[i].run == 0)
		return j;
	while (j < c->n && c->samples[j].run == c->samples[i].run)
		j++;
	return j;
}

size_t
bisect_count_runs(const struct bisect_cell *c, int confirm)
{
	size_t k = 0;

	for (size_t i = 0; i < c->n; i = run_end(c, i))
		k += (c->samples[i].confirm != 0) == (confirm != 0);
	return k;
}

/*
 * Each cell's share of r's runs (bisect_cell_runs()) into share[]: 1
 * for every cell, but in a fit of two lengths each cell's part of the
 * metric's spread, told from the median of its first initial runs: with
 * the spread between runs a constant fraction of the time, a cell adds
 * (its weight in the metric x its time)^2 / n to the metric's variance,
 * and runs in proportion to weight x time make that sum the smallest
 * for the runs spent (Neyman's allocation).  The medians, not the
 * spreads: a spread from five runs is too rough to steer by, and a cell
 * given few runs because its spread came out small would keep that
 * small spread in every test that follows.
 */
static void
cell_shares(const struct bisect_release *r, const struct bisect_params *p,
    int confirm, double *share)
{
	double part[2], stack[16], *v = stack;
	size_t init = (size_t)p->reps_initial;

	for (size_t c = 0; c < p->nlengths; c++)
		share[c] = 1;
	if (p->nlengths != 2 || (p->metric.kind != BISECT_METRIC_PER_TOKEN &&
	    p->metric.kind != BISECT_METRIC_FIXED))
		return;
	if (init > sizeof(stack) / sizeof(stack[0]) &&
	    (v = malloc(init * sizeof(*v))) == NULL)
		return;
	for (size_t c = 0; c < 2; c++) {
		struct cell_stats cs;
		/* per token = (t1 - t0) / span; fixed = (t0 L1 - t1 L0) /
		 * span: the weight of cell c is the other length. */
		double w = p->metric.kind == BISECT_METRIC_PER_TOKEN ? 1 :
		    (double)p->lengths[1 - c];

		part[c] = NAN;
		if (bisect_take_runs(&r->cells[c], confirm, init, p->summary,
		    v) != init || stats_cell(v, init, &cs) < 0)
			break;
		part[c] = w * cs.median;
	}
	if (v != stack)
		free(v);
	if (!(part[0] > 0) || !(part[1] > 0) || !isfinite(part[0]) ||
	    !isfinite(part[1]))
		return;
	share[0] = part[0] >= part[1] ? 1 : part[0] / part[1];
	share[1] = part[1] >= part[0] ? 1 : part[1] / part[0];
}

/* The runs a cell of share s takes at level k. */
static size_t
share_runs(double s, size_t k, size_t init)
{
	double want;

	if (s >= 1 || k <= init)
		return k;
	want = ceil((double)k * s - 1e-9);
	return want > (double)init ? (size_t)want : init;
}

void
bisect_cell_runs(const struct bisect_release *r,
    const struct bisect_params *p, int confirm, size_t k, size_t *count)
{
	double share[BISECT_MAX_CELLS];

	cell_shares(r, p, confirm, share);
	for (size_t c = 0; c < p->nlengths; c++)
		count[c] = share_runs(share[c], k, (size_t)p->reps_initial);
}

size_t
bisect_release_runs(const struct bisect_release *r,
    const struct bisect_params *p, int confirm)
{
	double share[BISECT_MAX_CELLS];
	size_t k = SIZE_MAX, init = (size_t)p->reps_initial;

	cell_shares(r, p, confirm, share);
	for (size_t c = 0; c < p->nlengths; c++) {
		size_t n = bisect_count_runs(&r->cells[c], confirm), m = n;

		/* The highest level whose runs cell c holds: share_runs()
		 * is at most n while k s - 1e-9 is. */
		if (share[c] < 1 && n >= init) {
			double most = floor(((double)n + 1e-9) / share[c]);

			m = most < (double)SIZE_MAX / 2 ? (size_t)most :
			    SIZE_MAX / 2;
		}
		k = m < k ? m : k;
	}
	return k;
}

size_t
bisect_take_runs(const struct bisect_cell *c, int confirm, size_t count,
    enum run_summary how, double *out)
{
	double stack[64], *x = stack;
	size_t k = 0, i, j;
	int rc;

	for (i = 0; i < c->n && k < count; i = j) {
		j = run_end(c, i);
		if ((c->samples[i].confirm != 0) != (confirm != 0))
			continue;
		if (j - i > sizeof(stack) / sizeof(stack[0]) &&
		    (x = malloc((j - i) * sizeof(*x))) == NULL)
			return SIZE_MAX;
		for (size_t m = i; m < j; m++)
			x[m - i] = c->samples[m].time_ns;
		rc = stats_run_value(x, j - i, how, &out[k++]);
		if (x != stack) {
			free(x);
			x = stack;
		}
		if (rc < 0)
			return SIZE_MAX;
	}
	return k;
}

size_t
bisect_drop_outliers(double *v, size_t n)
{
	size_t most = n / 4 > BISECT_OUTLIER_RUNS ? n / 4 :
	    BISECT_OUTLIER_RUNS;

	return stats_drop_outliers_upto(v, n, most);
}

int
bisect_length_index(const struct bisect_params *p, int len)
{
	for (size_t i = 0; i < p->nlengths; i++)
		if (p->lengths[i] == len)
			return (int)i;
	return -1;
}

/* The metric from the first runs[c] runs of each cell c. */
static int
metric_of(const struct bisect_release *r, const struct bisect_params *p,
    int confirm, const size_t *runs, struct estimate *out)
{
	struct fit_cell cells[BISECT_MAX_CELLS];
	struct cell_stats cs;
	struct fit f;
	size_t most = 0;
	double *buf;
	int rc = -1, k;

	if (p->nlengths == 0 || p->nlengths > BISECT_MAX_CELLS)
		return -1;
	for (size_t c = 0; c < p->nlengths; c++) {
		if (runs[c] == 0)
			return -1;
		most = runs[c] > most ? runs[c] : most;
	}
	buf = malloc(p->nlengths * most * sizeof(*buf));
	if (buf == NULL)
		return -1;
	for (size_t c = 0; c < p->nlengths; c++) {
		cells[c].tokens = p->lengths[c];
		cells[c].time_ns = buf + c * most;
		cells[c].n = bisect_take_runs(&r->cells[c], confirm, runs[c],
		    p->summary, buf + c * most);
		if (cells[c].n == SIZE_MAX || cells[c].n < runs[c])
			goto out;
		if (!p->keep_outliers)
			cells[c].n = bisect_drop_outliers(buf + c * most,
			    cells[c].n);
	}
	switch (p->metric.kind) {
	case BISECT_METRIC_PER_TOKEN:
	case BISECT_METRIC_FIXED:
		if (fit_line(cells, p->nlengths, &f) < 0)
			goto out;
		*out = p->metric.kind == BISECT_METRIC_PER_TOKEN ?
		    f.per_token_ns : f.model_fixed_ns;
		rc = 0;
		break;
	case BISECT_METRIC_PP:
	case BISECT_METRIC_TG:
	case BISECT_METRIC_SERVE:
	case BISECT_METRIC_RUN:
		k = p->metric.kind == BISECT_METRIC_SERVE ||
		    p->metric.kind == BISECT_METRIC_RUN ? 0 :
		    bisect_length_index(p, p->metric.n);
		if (k < 0 || stats_cell(cells[k].time_ns, cells[k].n, &cs) < 0)
			goto out;
		stats_mean_estimate(&cs, out);
		rc = 0;
		break;
	}
out:
	free(buf);
	return rc;
}

int
bisect_metric_estimate(const struct bisect_release *r,
    const struct bisect_params *p, int confirm, size_t count,
    struct estimate *out)
{
	size_t runs[BISECT_MAX_CELLS];

	if (count == 0 || p->nlengths == 0 || p->nlengths > BISECT_MAX_CELLS)
		return -1;
	bisect_cell_runs(r, p, confirm, count, runs);
	return metric_of(r, p, confirm, runs, out);
}

int
bisect_metric_all(const struct bisect_release *r,
    const struct bisect_params *p, struct estimate *out)
{
	size_t runs[BISECT_MAX_CELLS];

	if (p->nlengths == 0 || p->nlengths > BISECT_MAX_CELLS)
		return -1;
	for (size_t c = 0; c < p->nlengths; c++)
		runs[c] = bisect_count_runs(&r->cells[c], 0);
	return metric_of(r, p, 0, runs, out);
}

void
bisect_params_init(struct bisect_params *p)
{
	memset(p, 0, sizeof(*p));
	p->metric.kind = BISECT_METRIC_PER_TOKEN;
	p->threshold = 0.20;
	p->reps_initial = 5;
	p->reps_cap = 320;
	p->summary = RUN_MEAN;
}

const char *
bisect_check_params(const struct bisect_params *p)
{
	if (!(p->threshold > 0 && p->threshold < 100))
		return "threshold must be a positive fraction";
	if (p->reps_initial < 2 || p->reps_cap < p->reps_initial)
		return "repetitions: need 2 <= initial <= cap";
	if (p->nlengths == 0 || p->nlengths > BISECT_MAX_CELLS)
		return "lengths: need 1 to 32 cells";
	for (size_t i = 0; i < p->nlengths; i++) {
		if (p->lengths[i] <= 0)
			return "lengths must be positive";
		for (size_t j = 0; j < i; j++)
			if (p->lengths[j] == p->lengths[i])
				return "lengths must be distinct";
	}
	switch (p->metric.kind) {
	case BISECT_METRIC_PER_TOKEN:
	case BISECT_METRIC_FIXED:
		if (p->nlengths < 2)
			return "a fit metric needs two or more prompt lengths";
		break;
	case BISECT_METRIC_PP:
		if (bisect_length_index(p, p->metric.n) < 0)
			return "a ppN metric needs N among the lengths";
		break;
	case BISECT_METRIC_TG:
		if (p->nlengths != 1 || p->lengths[0] != p->metric.n)
			return "a tgN metric needs exactly the length N";
		break;
	case BISECT_METRIC_SERVE:
	case BISECT_METRIC_RUN:
		if (p->nlengths != 1)
			return "a serve figure or a run's value needs exactly "
			    "one cell";
		break;
	default:
		return "unknown metric";
	}
	return NULL;
}
