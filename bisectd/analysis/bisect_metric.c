/*
 * bisect_metric.c: a release's metric from its stored samples, run by
 * run (see bisect.h and bisect_int.h): the runs of a cell, each run's
 * value, the fit or the cell's mean that the bisection compares; and
 * the parameters that say which metric and cells.
 */
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

size_t
bisect_release_runs(const struct bisect_release *r,
    const struct bisect_params *p, int confirm)
{
	size_t k = SIZE_MAX;

	for (size_t c = 0; c < p->nlengths; c++) {
		size_t n = bisect_count_runs(&r->cells[c], confirm);

		k = n < k ? n : k;
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

int
bisect_metric_estimate(const struct bisect_release *r,
    const struct bisect_params *p, int confirm, size_t count,
    struct estimate *out)
{
	struct fit_cell cells[BISECT_MAX_CELLS];
	struct cell_stats cs;
	struct fit f;
	double *buf;
	int rc = -1, k;

	if (count == 0 || p->nlengths == 0 || p->nlengths > BISECT_MAX_CELLS)
		return -1;
	buf = malloc(p->nlengths * count * sizeof(*buf));
	if (buf == NULL)
		return -1;
	for (size_t c = 0; c < p->nlengths; c++) {
		cells[c].tokens = p->lengths[c];
		cells[c].time_ns = buf + c * count;
		cells[c].n = bisect_take_runs(&r->cells[c], confirm, count,
		    p->summary, buf + c * count);
		if (cells[c].n == SIZE_MAX || cells[c].n < count)
			goto out;
		if (!p->keep_outliers)
			cells[c].n = bisect_drop_outliers(buf + c * count,
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
