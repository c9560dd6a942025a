/*
 * verdict.c: judging a release range from the store (see verdict.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "verdict_json.h"
#include "common/err.h"
#include "verdict.h"

int
verdict_exit_code(enum bisect_status s)
{
	switch (s) {
	case BISECT_REGRESSION:
	case BISECT_GRADUAL:	/* a regression, spread over releases */
		return 3;
	case BISECT_UNKNOWN:
		return 4;
	case BISECT_NO_REGRESSION:
	default:
		return 0;
	}
}

/* Whether release i of the range cannot be measured, and why. */
static int
release_failed(const struct range *r, size_t i, const int *runs_fail,
    const char **why)
{
	const struct store_release *rel = &r->list.v[r->lo + i];

	if (rel->state == RELEASE_FAILED) {
		*why = rel->failure ? rel->failure : "it cannot be fetched";
		return 1;
	}
	if (runs_fail[i]) {
		*why = runs_fail[i] == 2 ? "the GPU throttled during most of "
		    "its runs" : "its runs fail";
		return 1;
	}
	return 0;
}

int
judge_runs_fail(const struct store_release_runs *rr,
    const struct bisect_params *p, const struct store_cell_query *q)
{
	for (size_t c = 0; c < p->nlengths; c++) {
		const struct store_cell_runs *cell =
		    store_release_runs_cell(rr, &q[c]);

		if (cell != NULL && cell->bad > cell->ok)
			return 1;
	}
	/* Throttled runs count as measured but are not analysed: a GPU
	 * that throttles on most runs would be measured without end. */
	for (size_t c = 0; c < p->nlengths; c++) {
		const struct store_cell_runs *cell =
		    store_release_runs_cell(rr, &q[c]);

		if (cell != NULL && cell->throttled > cell->ok -
		    cell->throttled)
			return 2;
	}
	return 0;
}

int
judge_range(struct store *s, const struct range *r,
    const struct bisect_params *p, const struct conf_engine *eng,
    const char *wsha, const char *hw, struct judgement *j, struct err *e)
{
	struct range_runs rr;
	int rc;

	memset(j, 0, sizeof(*j));
	if (range_runs_load(s, r, wsha, hw, &rr, e) < 0)
		return -1;
	rc = judge_range_runs(&rr, r, p, eng, wsha, hw, j, e);
	range_runs_release(&rr);
	return rc;
}

int
judge_range_runs(const struct range_runs *rr, const struct range *r,
    const struct bisect_params *p, const struct conf_engine *eng,
    const char *wsha, const char *hw, struct judgement *j, struct err *e)
{
	struct store_cell_query q[BISECT_MAX_CELLS];
	struct range_data d;
	int *runs_fail;
	int rc;

	memset(j, 0, sizeof(*j));
	if (range_cell_queries(p, eng, wsha, hw, q, e) < 0)
		return -1;
	if ((runs_fail = calloc(rr->n + 1, sizeof(*runs_fail))) == NULL)
		return err_set(e, "out of memory");
	for (size_t i = 0; i < rr->n; i++)
		runs_fail[i] = judge_runs_fail(&rr->rel[i], p, q);
	if (range_load_engine(rr, p, eng, wsha, hw, NULL, &d, e) < 0) {
		free(runs_fail);
		return -1;
	}
	rc = judge_range_data(r, p, eng, runs_fail, &d, j, e);
	free(runs_fail);
	return rc;
}

/* The GPU clocks of releases a and b of d into *ca and *cb; 1 when they
 * differ. */
static int
pair_clocks(const struct range_data *d, size_t a, size_t b, double *ca,
    double *cb)
{
	*ca = bisect_release_clock(&d->rel[a], d->ncells);
	*cb = bisect_release_clock(&d->rel[b], d->ncells);
	return bisect_clocks_differ(*ca, *cb);
}

/* The sides' clocks into j (see struct judgement): a change whose pair
 * ran at clocks apart is not confirmed, nor the main one when the ends
 * did. */
static void
judge_clocks(struct judgement *j)
{
	const struct range_data *d = &j->data;
	struct bisect_verdict *v = &j->v;
	struct bisect_change *c;
	double a, b;

	for (size_t i = 0; i < v->nchanges; i++) {
		c = &v->changes[i];
		if (pair_clocks(d, c->last_good, c->first_bad, &a, &b))
			c->confirmed = 0;
	}
	j->clock_good = 0;
	j->clock_bad = d->n - 1;
	j->clocks_differ = pair_clocks(d, 0, d->n - 1, &j->good_sm_mhz,
	    &j->bad_sm_mhz);
	if (v->nchanges == 0)
		return;
	c = &v->changes[v->main];
	if (j->clocks_differ)
		c->confirmed = 0;
	/* The pair's figures, unless only the ends differ. */
	if (pair_clocks(d, c->last_good, c->first_bad, &a, &b) ||
	    !j->clocks_differ) {
		j->clock_good = c->last_good;
		j->clock_bad = c->first_bad;
		j->good_sm_mhz = a;
		j->bad_sm_mhz = b;
		j->clocks_differ = bisect_clocks_differ(a, b);
	}
	/* The reason the walk gave says it held interleaved: so it did,
	 * on GPUs that ran at other clocks. */
	if (v->status == BISECT_REGRESSION && !c->confirmed &&
	    (j->clocks_differ || pair_clocks(d, c->last_good, c->first_bad,
	    &a, &b)))
		v->reason = "change point found, but its two sides ran at GPU "
		    "clocks more than 1% apart: not confirmed (lock the "
		    "clocks, see docs/gpu.md)";
}

int
judge_range_data(const struct range *r, const struct bisect_params *p,
    const struct conf_engine *eng, const int *runs_fail,
    struct range_data *given, struct judgement *j, struct err *e)
{
	size_t n = r->hi - r->lo + 1;
	const char *why[2] = { NULL, NULL };
	const char *name = eng->name;
	struct range_data *d = &j->data;

	memset(j, 0, sizeof(*j));
	if ((j->failed = calloc(n, sizeof(*j->failed))) == NULL) {
		range_data_release(given);
		return err_set(e, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		const char *w = NULL;
		int rc = release_failed(r, i, runs_fail, &w);

		j->failed[i] = rc;
		if (rc && (i == 0 || i == n - 1))
			why[i != 0] = w;
	}
	if (why[0] || why[1]) {
		size_t i = why[0] ? 0 : n - 1;
		const char *v = r->list.v[r->lo + i].version;

		range_data_release(given);
		j->end_failed = 1;
		j->exit_code = 1;
		snprintf(j->why, sizeof(j->why), "cannot measure the range's "
		    "%s end %s: %s; see 'bisectctl runs %s %s'", i ? "bad" :
		    "good", v, why[i != 0], name, v);
		return 0;
	}
	*d = *given;
	memset(given, 0, sizeof(*given));
	for (size_t i = 0; i < d->n; i++)
		d->rel[i].skipped = j->failed[i];
	if (bisect_next(d->rel, d->n, p, &j->act, &j->v) < 0) {
		err_set(e, "bisect: %s", j->act.error ? j->act.error :
		    "failed");
		goto fail;
	}
	if (j->act.kind == BISECT_DONE) {
		j->done = 1;
		judge_clocks(j);
		j->exit_code = verdict_exit_code(j->v.status);
		return 0;
	}
	/* Not decided: nothing at all to compare, or not enough yet. */
	j->exit_code = 4;
	snprintf(j->why, sizeof(j->why), "the store does not hold enough "
	    "samples to decide; run 'bisectctl bisect %s %s..%s'", name,
	    r->list.v[r->lo].version, r->list.v[r->hi].version);
	for (size_t c = 0; c < d->ncells; c++)
		for (size_t k = 0; k < 2; k++)
			if (d->rel[k ? n - 1 : 0].cells[c].n == 0 &&
			    j->exit_code != 1) {
				j->exit_code = 1;
				snprintf(j->why, sizeof(j->why), "no samples "
				    "of %s %s under the current measurement "
				    "definition; run 'bisectctl bisect %s "
				    "%s..%s'", name,
				    r->list.v[k ? r->hi : r->lo].version, name,
				    r->list.v[r->lo].version,
				    r->list.v[r->hi].version);
			}
	return 0;
fail:
	judgement_release(j);
	return -1;
}

void
judgement_release(struct judgement *j)
{
	free(j->failed);
	bisect_verdict_release(&j->v);
	range_data_release(&j->data);
	memset(j, 0, sizeof(*j));
}

json_t *
judgement_json(const struct judgement *j, const struct range *r)
{
	json_t *o;

	if (j->done) {
		o = verdict_json(&j->v, &r->list.v[r->lo]);
		/* Where both sides' clocks were read; nothing otherwise. */
		if (j->good_sm_mhz > 0 && j->bad_sm_mhz > 0)
			json_object_set_new(o, "clocks", json_pack("{s:s,s:s,"
			    "s:f,s:f,s:b}", "good", r->list.v[r->lo +
			    j->clock_good].version, "bad", r->list.v[r->lo +
			    j->clock_bad].version, "good_sm_mhz",
			    j->good_sm_mhz, "bad_sm_mhz", j->bad_sm_mhz,
			    "differ", j->clocks_differ));
		return o;
	}
	o = json_object();
	json_object_set_new(o, "status", json_string("unknown"));
	json_object_set_new(o, "reason", json_string(j->why));
	json_object_set_new(o, "first_bad", json_null());
	json_object_set_new(o, "last_good", json_null());
	json_object_set_new(o, "candidates", json_array());
	json_object_set_new(o, "kind", json_string("unknown"));
	json_object_set_new(o, "confirmed", json_false());
	json_object_set_new(o, "change_points", json_array());
	return o;
}
