/*
 * history.c: an engine's history read from the store, one series per
 * metric with its change points, and its JSON (see history.h; the text,
 * CSV and HTML are history_print.c's).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/measure/hygiene.h"
#include "common/err.h"
#include "config/conf.h"
#include "store/store.h"
#include "history.h"
#include "changes.h"
#include "serve_lines.h"
#include "summary.h"

/*
 * The fit's runs of a release: the k-th run of every fit length makes
 * the k-th line (least squares over the lengths), whose slope (fixed: 0)
 * or intercept (1) is one run value; lines that give no positive cost
 * are left out.  The mean of these is the fit of the mean runs when
 * each length has as many runs; their spread carries every length's.
 */
static int
fit_runs(const struct conf_engine *eng, const struct store_release_runs *rr,
    const struct report_cells *qc, int intercept, double **out, size_t *n)
{
	double *v[CONF_MAX_LENGTHS], xbar = 0, sxx = 0;
	size_t nv[CONF_MAX_LENGTHS], k = SIZE_MAX, m = 0;
	int rc = -1;

	*out = NULL;
	*n = 0;
	memset(v, 0, sizeof(v));
	if (eng->nfit < 2)
		return 0;
	for (size_t j = 0; j < eng->nfit; j++) {
		if (report_own_run_values(store_release_runs_cell(rr,
		    &qc->fit[j]), &v[j], &nv[j]) < 0)
			goto out;
		if (nv[j] < k)
			k = nv[j];
		xbar += eng->fit[j] / (double)eng->nfit;
	}
	rc = 0;
	if (k == 0 || (*out = malloc(k * sizeof(**out))) == NULL) {
		rc = k == 0 ? 0 : -1;
		goto out;
	}
	for (size_t j = 0; j < eng->nfit; j++)
		sxx += (eng->fit[j] - xbar) * (eng->fit[j] - xbar);
	for (size_t r = 0; r < k; r++) {
		double ybar = 0, sxy = 0, slope, y;

		for (size_t j = 0; j < eng->nfit; j++)
			ybar += v[j][r] / (double)eng->nfit;
		for (size_t j = 0; j < eng->nfit; j++)
			sxy += (eng->fit[j] - xbar) * (v[j][r] - ybar);
		slope = sxy / sxx;
		y = intercept ? ybar - slope * xbar : slope;
		if (isfinite(y) && y > 0)
			(*out)[m++] = y;
	}
	*n = m;
	if (m == 0) {
		free(*out);
		*out = NULL;
	}
out:
	for (size_t j = 0; j < eng->nfit; j++)
		free(v[j]);
	return rc;
}

/* The series history_build() makes, in changes_list()'s order. */
struct series_def {
	char metric[96], what[128];
	int tokens;
	int fit;		/* 1: per-token, 2: fixed */
	int fig;		/* a serve figure's: FIG_* + 1; 0: none */
	const struct store_cell_query *q;
};

static size_t
series_defs(const struct conf_engine *eng, const struct report_cells *qc,
    struct series_def *d, size_t max)
{
	size_t nk = eng->contents.n ? eng->contents.n : 1, n = 0;

#define ADD(m_, w_, tok_, fit_, q_) do { \
	if (n < max) { \
		memset(&d[n], 0, sizeof(d[n])); \
		snprintf(d[n].metric, sizeof(d[n].metric), "%s", (m_)); \
		snprintf(d[n].what, sizeof(d[n].what), "%s", (w_)); \
		d[n].tokens = (tok_); \
		d[n].fit = (fit_); \
		d[n].q = (q_); \
		n++; \
	} \
} while (0)
	if (eng->nfit >= 2) {
		ADD("per-token", "prefill cost per token", 0, 1, NULL);
		ADD("fixed", "fixed overhead", 0, 2, NULL);
	}
	for (size_t i = 0; i < eng->nprompts; i++) {
		char m[96], w[128];

		snprintf(m, sizeof(m), "pp%d", eng->prompts[i]);
		snprintf(w, sizeof(w), "prefill of %d tokens", eng->prompts[i]);
		ADD(m, w, eng->prompts[i], 0, &qc->pp[i]);
	}
	for (size_t i = 0; i < eng->ngen * nk; i++) {
		size_t g = i / nk, k = i % nk;
		char m[96], w[128];

		if (eng->contents.n && k > 0)
			snprintf(m, sizeof(m), "tg%d/%s", eng->gen[g],
			    eng->contents.v[k]);
		else
			snprintf(m, sizeof(m), "tg%d", eng->gen[g]);
		snprintf(w, sizeof(w), "decode of %d tokens%s%s", eng->gen[g],
		    eng->contents.n ? ", " : "", eng->contents.n ?
		    eng->contents.v[k] : "");
		ADD(m, w, eng->gen[g], 0, &qc->tg[i]);
	}
#undef ADD
	return n;
}

/* A serve engine's series: each latency percentile of its load. */
static size_t
serve_defs(struct series_def *d, size_t max)
{
	size_t n = 0;

	for (int f = 0; f < FIG_N && n < max; f++, n++) {
		memset(&d[n], 0, sizeof(d[n]));
		snprintf(d[n].metric, sizeof(d[n].metric), "%s",
		    conf_serve_figure_name((enum conf_serve_figure)f));
		changes_serve_what((enum conf_serve_figure)f, d[n].what,
		    sizeof(d[n].what));
		d[n].fig = f + 1;
	}
	return n;
}

/* Release i's values for series d into p (nothing when it has none). */
static int
series_point(const struct conf_engine *eng, const struct series_def *d,
    const struct store_release_runs *rr, const struct store_serve_rows *sr,
    const struct report_cells *qc, const char *version,
    struct history_series *s)
{
	struct history_point *p = &s->v[s->n];
	struct cell_stats c;

	memset(p, 0, sizeof(*p));
	if (d->fig) {
		if ((p->runs = calloc(sr->n + 1, sizeof(*p->runs))) == NULL)
			return -1;
		p->n = changes_serve_values(sr, (enum conf_serve_figure)(d->fig -
		    1), p->runs);
		if (p->n == 0) {
			free(p->runs);
			p->runs = NULL;
		}
	} else if ((d->fit ? fit_runs(eng, rr, qc, d->fit == 2, &p->runs,
	    &p->n) : report_own_run_values(store_release_runs_cell(rr, d->q),
	    &p->runs, &p->n)) < 0)
		return -1;
	if (p->n == 0)
		return 0;
	if (stats_cell(p->runs, p->n, &c) < 0 ||
	    (p->version = strdup(version)) == NULL) {
		free(p->runs);
		return -1;
	}
	stats_mean_estimate(&c, &p->cost);
	s->n++;
	return 0;
}

int
history_build(const struct conf *c, const struct conf_engine *eng,
    struct store *s, const struct conf_metric *only, struct history *h,
    struct err *e)
{
	struct store_release_list list = { NULL, 0 };
	struct store_release_runs *rr = NULL;
	struct store_serve_rows *sr = NULL;
	struct series_def defs[CHANGES_MAX];
	struct report_cells qc;
	struct machine here;
	char hw[65], *wsha = NULL, want[96] = "";
	int64_t engine_id, *ids = NULL;
	size_t ndefs;
	int rc = -1;

	memset(h, 0, sizeof(*h));
	memset(&qc, 0, sizeof(qc));
	h->eng = eng;
	h->config_path = c ? c->path : NULL;
	if (only)
		conf_metric_name(only, want, sizeof(want));
	if ((rc = store_engine_find(s, eng->name, &engine_id, e)) != 0)
		return rc < 0 ? -1 : err_set(e, "nothing is stored for %s "
		    "yet: run 'bisectctl bench' or a bisect first", eng->name);
	rc = -1;
	if (store_release_list(s, engine_id, &list, e) < 0)
		return -1;
	h->releases = list.n;
	if (hygiene_machine(NULL, &here, e) < 0)
		goto out;
	memcpy(hw, here.hw_key, sizeof(hw));
	/* On Slurm the runs are those of the node the engine was measured
	 * on last. */
	if (list.n > 0 && eng->runner && eng->runner->kind == RUNNER_SLURM &&
	    store_slurm_range_key(s, eng->name, list.v[0].version,
	    list.v[list.n - 1].version, hw, e) < 0)
		goto out;
	if (store_weights_latest(s, eng->weights->name, &wsha, e) < 0 ||
	    report_cells_init(eng, wsha ? wsha : "", hw, &qc, e) < 0)
		goto out;
	ndefs = eng->mode == MODE_SERVE ? serve_defs(defs, CHANGES_MAX) :
	    series_defs(eng, &qc, defs, CHANGES_MAX);
	if ((h->series = calloc(ndefs + 1, sizeof(*h->series))) == NULL ||
	    (ids = calloc(list.n + 1, sizeof(*ids))) == NULL ||
	    (rr = calloc(list.n + 1, sizeof(*rr))) == NULL) {
		err_set(e, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < list.n; i++)
		ids[i] = list.v[i].id;
	if (wsha && list.n > 0 && store_release_runs_read(s, wsha, hw, ids,
	    list.n, rr, e) < 0) {
		free(rr);
		rr = NULL;
		goto out;
	}
	if (eng->mode == MODE_SERVE && serve_rows_load(s, eng, list.v, list.n,
	    wsha ? wsha : "", hw, &sr, e) < 0)
		goto out;
	for (size_t d = 0; d < ndefs; d++) {
		struct history_series *x = &h->series[h->nseries];
		struct cp_release *cr;
		struct cp_params p;

		if (want[0] && strcmp(want, defs[d].metric) != 0)
			continue;
		h->nseries++;
		memcpy(x->metric, defs[d].metric, sizeof(x->metric));
		memcpy(x->what, defs[d].what, sizeof(x->what));
		x->tokens = defs[d].tokens;
		x->serve = defs[d].fig != 0;
		if ((x->v = calloc(list.n + 1, sizeof(*x->v))) == NULL) {
			err_set(e, "out of memory");
			goto out;
		}
		for (size_t i = 0; wsha && i < list.n; i++)
			if (series_point(eng, &defs[d], &rr[i], sr ? &sr[i] :
			    NULL, &qc, list.v[i].version, x) < 0) {
				err_set(e, "out of memory");
				goto out;
			}
		if (x->n > CP_MAX_RELEASES) {
			err_set(e, "%s: %zu releases measured %s, more than the "
			    "%d the history reads", eng->name, x->n, x->metric,
			    CP_MAX_RELEASES);
			goto out;
		}
		if ((cr = calloc(x->n + 1, sizeof(*cr))) == NULL) {
			err_set(e, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < x->n; i++) {
			cr[i].runs = x->v[i].runs;
			cr[i].n = x->v[i].n;
		}
		/* A fixed seed: the same store gives the same history. */
		cp_params_init(&p);
		rc = cp_detect(cr, x->n, &p, &x->cp);
		free(cr);
		if (rc < 0) {
			err_set(e, "%s: %s: the change points cannot be "
			    "computed", eng->name, x->metric);
			goto out;
		}
		rc = -1;
	}
	if (want[0] && h->nseries == 0) {
		err_usage(e, "%s: no metric %s in its matrix", eng->name, want);
		goto out;
	}
	rc = 0;
out:
	for (size_t i = 0; rr && i < list.n; i++)
		store_release_runs_release(&rr[i]);
	free(rr);
	serve_rows_free(sr, list.n);
	free(ids);
	free(qc.tg);
	free(wsha);
	store_release_list_release(&list);
	if (rc < 0)
		history_release(h);
	return rc;
}

void
history_release(struct history *h)
{
	for (size_t i = 0; h->series && i < h->nseries; i++) {
		for (size_t k = 0; k < h->series[i].n; k++) {
			free(h->series[i].v[k].version);
			free(h->series[i].v[k].runs);
		}
		free(h->series[i].v);
	}
	free(h->series);
	memset(h, 0, sizeof(*h));
}

const char *
history_unit(const struct history_series *s)
{
	return s->tokens ? "tok/s" : s->serve || strcmp(s->metric, "fixed") ==
	    0 ? "ms" : "ms/token";
}

size_t
history_changes(const struct history *h)
{
	size_t n = 0;

	for (size_t i = 0; i < h->nseries; i++)
		n += h->series[i].cp.n;
	return n;
}

void
history_range(const struct history_series *s, const struct cp_point *p,
    size_t *from, size_t *to)
{
	*from = p->at >= p->from + 2 ? p->at - 2 : p->from;
	*to = p->at + 1 < p->to ? p->at + 1 : p->to - 1;
	if (*to >= s->n)
		*to = s->n - 1;
}

/* A figure as people read it: ms for the fit's, tok/s for a cell's. */
static double
shown(const struct history_series *s, double cost_ns)
{
	return s->tokens ? s->tokens * 1e9 / cost_ns : cost_ns / 1e6;
}

static json_t *
num(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *
point_json(const struct history *h, const struct history_series *s,
    const struct cp_point *p)
{
	const char *ctl = h->config_path ? "bisectctl -c " : "bisectctl";
	const char *path = h->config_path ? h->config_path : "";
	double v = p->rel.value, lo = p->rel.lo, hi = p->rel.hi;
	size_t a, b;
	json_t *o = json_object();

	history_range(s, p, &a, &b);
	/* A throughput's change, as changes_pair() gives it: up when
	 * faster. */
	if (s->tokens) {
		v = 1 / (1 + p->rel.value) - 1;
		lo = 1 / (1 + p->rel.hi) - 1;
		hi = 1 / (1 + p->rel.lo) - 1;
	}
	json_object_set_new(o, "at", json_integer((json_int_t)p->at));
	json_object_set_new(o, "version", json_string(s->v[p->at].version));
	json_object_set_new(o, "last_before", json_string(
	    s->v[p->at - 1].version));
	json_object_set_new(o, "direction", json_string(p->up ? "slower" :
	    "faster"));
	json_object_set_new(o, "change", num(v));
	json_object_set_new(o, "change_ci", isfinite(lo) && isfinite(hi) ?
	    json_pack("[f,f]", lo, hi) : json_null());
	json_object_set_new(o, "p", json_real(p->p));
	json_object_set_new(o, "slide", p->slide ? json_integer(p->slide) :
	    json_null());
	json_object_set_new(o, "from", json_string(s->v[a].version));
	json_object_set_new(o, "to", json_string(s->v[b].version));
	/* A bisect looks for a slowdown; a change for the better has its
	 * report alone. */
	json_object_set_new(o, "bisect", p->up ? json_sprintf("%s%s bisect "
	    "--metric %s %s %s..%s", ctl, path, s->metric, h->eng->name,
	    s->v[a].version, s->v[b].version) : json_null());
	json_object_set_new(o, "report", json_sprintf("%s%s report --metric "
	    "%s %s %s..%s", ctl, path, s->metric, h->eng->name,
	    s->v[a].version, s->v[b].version));
	return o;
}

json_t *
history_json(const struct history *h)
{
	json_t *o = json_object(), *all = json_array();

	json_object_set_new(o, "engine", json_string(h->eng->name));
	json_object_set_new(o, "releases", json_integer((json_int_t)
	    h->releases));
	json_object_set_new(o, "method", json_pack("{s:s,s:f,s:i,s:i}",
	    "name", "e-divisive", "alpha", CP_ALPHA, "permutations",
	    CP_PERMUTATIONS, "min_segment", CP_MIN_SEGMENT));
	for (size_t i = 0; i < h->nseries; i++) {
		const struct history_series *s = &h->series[i];
		json_t *x = json_object(), *rel = json_array(),
		    *cps = json_array();

		json_object_set_new(x, "metric", json_string(s->metric));
		json_object_set_new(x, "what", json_string(s->what));
		json_object_set_new(x, "unit", json_string(history_unit(s)));
		for (size_t k = 0; k < s->n; k++) {
			const struct history_point *p = &s->v[k];
			double lo = shown(s, s->tokens ? p->cost.hi :
			    p->cost.lo), hi = shown(s, s->tokens ? p->cost.lo :
			    p->cost.hi);

			json_array_append_new(rel, json_pack("{s:s,s:I,s:o,"
			    "s:o}", "version", p->version, "n", (json_int_t)
			    p->n, "value", num(shown(s, p->cost.value)), "ci",
			    isfinite(lo) && isfinite(hi) && p->cost.lo > 0 ?
			    json_pack("[f,f]", lo, hi) : json_null()));
		}
		for (size_t k = 0; k < s->cp.n; k++)
			json_array_append_new(cps, point_json(h, s,
			    &s->cp.v[k]));
		json_object_set_new(x, "releases", rel);
		json_object_set_new(x, "change_points", cps);
		json_object_set_new(x, "last_p", json_real(s->cp.last_p));
		json_array_append_new(all, x);
	}
	json_object_set_new(o, "series", all);
	return o;
}
