/*
 * range.c: resolving "GOOD..BAD" against the store, the bisection
 * parameters of an engine, and loading a range's samples (see range.h).
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisectd/measure/bench.h"
#include "common/err.h"
#include "range.h"
#include "request.h"

static size_t
find_version(const struct store_release_list *l, const char *v)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].version, v) == 0)
			return i;
	return SIZE_MAX;
}

int
range_resolve(struct store *s, int64_t engine_id, const char *spec,
    struct range *r, struct err *e)
{
	char good[RANGE_END_MAX], bad[RANGE_END_MAX];

	memset(r, 0, sizeof(*r));
	if (range_split(spec, good, bad, e) < 0)
		return RANGE_BAD;
	if (store_release_list(s, engine_id, &r->list, e) < 0)
		return -1;
	r->lo = find_version(&r->list, good);
	r->hi = find_version(&r->list, bad);
	if (r->lo == SIZE_MAX || r->hi == SIZE_MAX) {
		err_usage(e, "no release '%s' is known (see 'bisectctl versions "
		    "ENGINE --refresh')", r->lo == SIZE_MAX ? good : bad);
		range_release(r);
		return RANGE_UNKNOWN;
	}
	if (r->lo >= r->hi) {
		err_usage(e, "'%s' must be an older release than '%s' in version "
		    "order (the range is GOOD..BAD)", good, bad);
		range_release(r);
		return RANGE_BAD;
	}
	assert(r->lo < r->hi && r->hi < r->list.n);
	return 0;
}

void
range_release(struct range *r)
{
	store_release_list_release(&r->list);
}

int
range_params(const struct conf_engine *eng, const struct bisect_request *req,
    struct bisect_params *p, struct err *e)
{
	const struct conf_metric *m = req && (int)req->metric.kind >= 0 &&
	    !bisect_request_canary(req) ? &req->metric : &eng->metric;

	bisect_params_init(p);
	p->threshold = req && req->threshold >= 0 ? req->threshold :
	    eng->threshold;
	p->reps_initial = eng->reps;
	p->reps_cap = eng->max_reps;
	p->all = req ? req->all : 0;
	p->metric.n = m->n;
	switch (m->kind) {
	case METRIC_PER_TOKEN:
	case METRIC_FIXED:
	case METRIC_PP:
		p->metric.kind = m->kind == METRIC_PER_TOKEN ?
		    BISECT_METRIC_PER_TOKEN : m->kind == METRIC_FIXED ?
		    BISECT_METRIC_FIXED : BISECT_METRIC_PP;
		for (size_t i = 0; i < eng->nfit; i++)
			p->lengths[p->nlengths++] = eng->fit[i];
		if (m->kind == METRIC_PP) {
			size_t i;

			for (i = 0; i < p->nlengths; i++)
				if (p->lengths[i] == m->n)
					break;
			if (i == p->nlengths)
				p->lengths[p->nlengths++] = m->n;
		}
		break;
	case METRIC_TG:
		p->metric.kind = BISECT_METRIC_TG;
		p->lengths[p->nlengths++] = m->n;
		break;
	case METRIC_SERVE:
		/* One serve cell: its runs' samples are their figures. */
		if (eng->mode != MODE_SERVE)
			return err_set(e, "engine %s: %s is a serve figure "
			    "(mode = serve)", eng->name, conf_serve_figure_name(
			    m->n));
		p->metric.kind = BISECT_METRIC_SERVE;
		p->lengths[p->nlengths++] = eng->load.prompt[0];
		break;
	case METRIC_MEMORY:
		/* The longest prompt the engine fits at: the context that
		 * takes the most memory. */
		p->metric.kind = BISECT_METRIC_RUN;
		for (size_t i = 0; i < eng->nfit; i++)
			if (p->nlengths == 0 || eng->fit[i] > p->lengths[0]) {
				p->lengths[0] = eng->fit[i];
				p->nlengths = 1;
			}
		break;
	case METRIC_CANARY:
		assert(!"an engine's metric is never the canary");
		break;
	}
	if (p->nlengths == 0)
		return err_set(e, "engine %s: no lengths to measure", eng->name);
	return 0;
}

int
range_cell_query(const struct bisect_params *p, size_t i,
    const struct conf_engine *eng, int64_t release_id,
    const char *weights_sha, const char *hw_key, struct store_cell_query *q,
    struct err *e)
{
	if (p->metric.kind == BISECT_METRIC_SERVE)
		return bench_cell_query(eng, "pp", eng->load.prompt[0],
		    eng->load.output[0], "", release_id, weights_sha, hw_key,
		    q, e);
	if (p->metric.kind == BISECT_METRIC_TG)
		return bench_cell_query(eng, "tg", 0, p->lengths[i],
		    eng->contents.n ? eng->contents.v[0] : "", release_id,
		    weights_sha, hw_key, q, e);
	return bench_cell_query(eng, "pp", p->lengths[i], 0, "", release_id,
	    weights_sha, hw_key, q, e);
}

int
range_runs_load(struct store *s, const struct range *r,
    const char *weights_sha256, const char *hw_key, struct range_runs *out,
    struct err *e)
{
	int64_t *ids;
	int rc;

	memset(out, 0, sizeof(*out));
	out->n = r->hi - r->lo + 1;
	out->rel = calloc(out->n, sizeof(*out->rel));
	ids = calloc(out->n, sizeof(*ids));
	if (out->rel == NULL || ids == NULL) {
		free(ids);
		range_runs_release(out);
		return err_set(e, "out of memory");
	}
	for (size_t i = 0; i < out->n; i++)
		ids[i] = r->list.v[r->lo + i].id;
	rc = store_release_runs_read(s, weights_sha256, hw_key, ids, out->n,
	    out->rel, e);
	free(ids);
	if (rc < 0) {
		free(out->rel);
		memset(out, 0, sizeof(*out));
	}
	return rc;
}

void
range_runs_release(struct range_runs *rr)
{
	if (rr->rel)
		for (size_t i = 0; i < rr->n; i++)
			store_release_runs_release(&rr->rel[i]);
	free(rr->rel);
	memset(rr, 0, sizeof(*rr));
}

int
range_cell_queries(const struct bisect_params *p,
    const struct conf_engine *eng, const char *weights_sha,
    const char *hw_key, struct store_cell_query q[BISECT_MAX_CELLS],
    struct err *e)
{
	for (size_t c = 0; c < p->nlengths; c++)
		if (range_cell_query(p, c, eng, 0, weights_sha, hw_key, &q[c],
		    e) < 0)
			return -1;
	return 0;
}

int
range_sample_value(const struct bisect_params *p,
    const struct store_point *pt, double *v)
{
	int64_t x;

	switch (p->metric.kind) {
	case BISECT_METRIC_SERVE:
		*v = (double)pt->time_ns;
		return pt->idx == p->metric.n;
	case BISECT_METRIC_RUN:
		/* Every sample of the run holds the run's figure. */
		x = p->metric.n == MEM_GPU ? pt->gpu_mem_peak :
		    pt->max_rss_kb >= 0 ? pt->max_rss_kb * 1024 : -1;
		*v = (double)x;
		return x > 0;
	default:
		*v = (double)pt->time_ns;
		return 1;
	}
}

int
range_load_engine(const struct range_runs *rr, const struct bisect_params *p,
    const struct conf_engine *eng, const char *weights_sha256,
    const char *hw_key, const int *skipped, struct range_data *d,
    struct err *e)
{
	struct store_cell_query q[BISECT_MAX_CELLS];

	memset(d, 0, sizeof(*d));
	if (range_cell_queries(p, eng, weights_sha256, hw_key, q, e) < 0)
		return -1;
	d->n = rr->n;
	d->ncells = p->nlengths;
	d->rel = calloc(d->n, sizeof(*d->rel));
	d->bufs = calloc(d->n * d->ncells, sizeof(*d->bufs));
	if (d->rel == NULL || d->bufs == NULL) {
		range_data_release(d);
		return err_set(e, "out of memory");
	}
	for (size_t i = 0; i < d->n; i++) {
		d->rel[i].skipped = skipped ? skipped[i] : 0;
		for (size_t c = 0; c < d->ncells; c++) {
			const struct store_cell_runs *cell =
			    store_release_runs_cell(&rr->rel[i], &q[c]);
			size_t n = cell ? cell->points.n : 0, m = 0;
			struct bisect_sample *b;

			b = calloc(n ? n : 1, sizeof(*b));
			if (b == NULL) {
				range_data_release(d);
				return err_set(e, "out of memory");
			}
			for (size_t k = 0; k < n; k++) {
				const struct store_point *pt =
				    &cell->points.v[k];

				if (!range_sample_value(p, pt, &b[m].time_ns))
					continue;
				b[m].run = pt->run_id;
				b[m].confirm = pt->confirm;
				b[m].sm_mhz = pt->gpu_sm_mhz;
				m++;
			}
			d->bufs[i * d->ncells + c] = b;
			d->rel[i].cells[c].samples = b;
			d->rel[i].cells[c].n = m;
		}
	}
	return 0;
}

void
range_data_release(struct range_data *d)
{
	if (d->bufs)
		for (size_t i = 0; i < d->n * d->ncells; i++)
			free(d->bufs[i]);
	free(d->bufs);
	free(d->rel);
	memset(d, 0, sizeof(*d));
}

int
range_reload(struct store *s, int64_t engine_id, struct store_release *rel,
    struct err *e)
{
	struct store_release now;

	if (store_release_get(s, engine_id, rel->version, &now, e) != 0)
		return -1;
	rel->state = now.state;
	free(rel->failure);
	rel->failure = now.failure;
	now.failure = NULL;
	store_release_release(&now);
	return 0;
}
