/*
 * summary.c: a report's figures of each release and the verdict's run
 * values, from the runs or from the summaries the store keeps (see
 * summary.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisectd/analysis/fit.h"
#include "bisectd/measure/bench.h"
#include "common/buf.h"
#include "common/err.h"
#include "summary.h"
#include "bisectd/search/verdict.h"

/* One value per process run of pts (with own, the confirmation runs
 * left out): *out malloced, NULL when *n is 0. */
static int
run_values(const struct store_points *pts, int own, double **out, size_t *n)
{
	double *x = malloc((pts->n ? pts->n : 1) * sizeof(*x));
	int64_t *run = malloc((pts->n ? pts->n : 1) * sizeof(*run));
	size_t m = 0;
	int rc = -1;

	*out = NULL;
	*n = 0;
	if (x != NULL && run != NULL) {
		for (size_t k = 0; k < pts->n; k++)
			if (!own || !pts->v[k].confirm) {
				x[m] = (double)pts->v[k].time_ns;
				run[m++] = pts->v[k].run_id;
			}
		rc = m ? stats_run_values(x, run, m, RUN_MEAN, x, n) : 0;
	}
	free(run);
	if (rc < 0 || *n == 0) {
		free(x);
		*n = 0;
		return rc;
	}
	*out = x;
	return 0;
}

int
report_own_run_values(const struct store_cell_runs *cell, double **out,
    size_t *n)
{
	*out = NULL;
	*n = 0;
	if (cell == NULL || cell->points.n == 0)
		return 0;
	return run_values(&cell->points, 1, out, n);
}

/* The cell's summary of its first runs and its confirmation runs apart.
 * cell may be NULL: no runs. */
static int
load_cell(const struct store_cell_runs *cell, struct cellsum *cs,
    struct err *e)
{
	const struct store_points *pts = cell ? &cell->points : NULL;
	int64_t *run;
	double *x;

	memset(cs, 0, sizeof(*cs));
	if (cell != NULL)
		cs->throttled = cell->throttled;
	if (pts == NULL || pts->n == 0)
		return 0;
	x = malloc(pts->n * sizeof(*x));
	run = malloc(pts->n * sizeof(*run));
	if (x == NULL || run == NULL) {
		free(x);
		free(run);
		return err_set(e, "out of memory");
	}
	for (int confirm = 0; confirm < 2; confirm++) {
		size_t n = 0;

		for (size_t i = 0; i < pts->n; i++) {
			if (pts->v[i].confirm != confirm)
				continue;
			x[n] = (double)pts->v[i].time_ns;
			run[n++] = pts->v[i].run_id;
			if (!confirm) {
				cs->busy |= pts->v[i].busy;
				cs->lower_bound |= pts->v[i].lower_bound;
			}
		}
		if (confirm)
			cs->confirm_ok = n > 0 && stats_runs(x, run, n,
			    RUN_MEAN, &cs->confirm) == 0;
		else
			cs->ok = n > 0 && stats_runs(x, run, n, RUN_MEAN,
			    &cs->runs) == 0;
	}
	cs->st = cs->runs.values;
	free(x);
	free(run);
	return 0;
}

int
report_cells_init(const struct conf_engine *eng, const char *wsha,
    const char *hw, struct report_cells *rc, struct err *e)
{
	size_t nk = eng->contents.n ? eng->contents.n : 1;

	memset(rc, 0, sizeof(*rc));
	if ((rc->tg = calloc(eng->ngen * nk + 1, sizeof(*rc->tg))) == NULL)
		return err_set(e, "out of memory");
	for (size_t i = 0; i < eng->nprompts; i++)
		if (bench_cell_query(eng, "pp", eng->prompts[i], 0, "", 0,
		    wsha, hw, &rc->pp[i], e) < 0)
			return -1;
	for (size_t g = 0; g < eng->ngen; g++)
		for (size_t k = 0; k < nk; k++)
			if (bench_cell_query(eng, "tg", 0, eng->gen[g],
			    eng->contents.n ? eng->contents.v[k] : "", 0, wsha,
			    hw, &rc->tg[g * nk + k], e) < 0)
				return -1;
	for (size_t i = 0; i < eng->nfit; i++)
		if (bench_cell_query(eng, "pp", eng->fit[i], 0, "", 0, wsha,
		    hw, &rc->fit[i], e) < 0)
			return -1;
	return 0;
}

void
summary_figs_release(struct release_figs *f)
{
	free(f->pp);
	free(f->tg);
	for (size_t i = 0; i < f->nfailed; i++) {
		free(f->failed[i].failure);
		free(f->failed[i].detail);
	}
	free(f->failed);
	for (size_t i = 0; i < CONF_MAX_LENGTHS; i++)
		free(f->points[i]);
	memset(f, 0, sizeof(*f));
}

static int
figs_alloc(struct release_figs *f, const struct conf_engine *eng)
{
	size_t nk = eng->contents.n ? eng->contents.n : 1;

	memset(f, 0, sizeof(*f));
	f->npp = eng->nprompts;
	f->ntg = eng->ngen * nk;
	f->pp = calloc(f->npp + 1, sizeof(*f->pp));
	f->tg = calloc(f->ntg + 1, sizeof(*f->tg));
	return f->pp && f->tg ? 0 : -1;
}

/* The median of v[0..n-1] (reordered), or 0 when n is 0. */
static double
median_or_zero(double *v, size_t n)
{
	double m = 0;

	return n > 0 && stats_run_value(v, n, RUN_MEDIAN, &m) == 0 ? m : 0;
}

/* A release's runs' GPU figures, one per run, gathered over its cells. */
struct gpu_runs {
	double *sm, *mem;
	size_t nsm, nmem;
};

/* A cell's runs into g and x: their SM clocks and peak memory; with
 * tokens (a prefill cell), its energy figures at index i. */
static int
gpu_cell(const struct store_cell_runs *cell, int tokens, size_t i,
    struct release_gpu *g, struct gpu_runs *x)
{
	const struct store_points *pts = &cell->points;
	double *ej = malloc((pts->n + 1) * 2 * sizeof(*ej)), *tpj;
	size_t k, ne = 0;

	if (ej == NULL)
		return -1;
	tpj = ej + pts->n + 1;
	g->throttled += cell->throttled;
	/* A run's samples are adjacent and share its figures. */
	for (size_t r = 0; r < pts->n; r = k) {
		const struct store_point *p = &pts->v[r];

		for (k = r + 1; k < pts->n && pts->v[k].run_id == p->run_id;
		    k++)
			;
		if (p->gpu_sm_mhz > 0)
			x->sm[x->nsm++] = p->gpu_sm_mhz;
		if (p->gpu_mem_peak >= 0)
			x->mem[x->nmem++] = (double)p->gpu_mem_peak;
		if (p->gpu_mem_peak > g->mem_peak)
			g->mem_peak = p->gpu_mem_peak;
		if (tokens > 0 && p->gpu_energy_j > 0) {
			ej[ne] = p->gpu_energy_j;
			tpj[ne++] = tokens * (double)(k - r) / p->gpu_energy_j;
		}
	}
	if (tokens > 0) {
		g->energy_runs[i] = (int)ne;
		g->energy_j[i] = median_or_zero(ej, ne);
		g->tokens_per_j[i] = median_or_zero(tpj, ne);
	}
	free(ej);
	return 0;
}

/* The release's GPU figures over its report cells. */
static int
gpu_compute(const struct store_release_runs *rr,
    const struct report_cells *qc, const struct conf_engine *eng,
    struct release_gpu *g)
{
	const struct store_cell_runs *cell;
	size_t total = 0, ntg = eng->ngen * (eng->contents.n ?
	    eng->contents.n : 1);
	struct gpu_runs x = { NULL, NULL, 0, 0 };
	int rc = 0;

	memset(g, 0, sizeof(*g));
	g->mem_peak = -1;
	for (size_t i = 0; i < rr->ncells; i++)
		total += rr->cells[i].points.n;
	if ((x.sm = malloc((total + 1) * 2 * sizeof(*x.sm))) == NULL)
		return -1;
	x.mem = x.sm + total + 1;
	for (size_t i = 0; i < eng->nprompts && rc == 0; i++)
		if ((cell = store_release_runs_cell(rr, &qc->pp[i])) != NULL)
			rc = gpu_cell(cell, eng->prompts[i], i, g, &x);
	for (size_t i = 0; i < ntg && rc == 0; i++)
		if ((cell = store_release_runs_cell(rr, &qc->tg[i])) != NULL)
			rc = gpu_cell(cell, 0, 0, g, &x);
	g->runs = (int)x.nsm;
	if (x.nmem > 0 && stats_cell(x.mem, x.nmem, &g->mem) < 0)
		memset(&g->mem, 0, sizeof(g->mem));
	g->sm_mhz = median_or_zero(x.sm, x.nsm);
	free(x.sm);
	return rc;
}

static int
figs_compute(const struct store_release_runs *rr,
    const struct report_cells *qc, const struct conf_engine *eng,
    struct release_figs *f, struct err *e)
{
	struct fit_cell fc[FIT_MAX_CELLS];
	double *fit_x[FIT_MAX_CELLS];
	size_t nfc = 0;
	int rc = -1;

	memset(fit_x, 0, sizeof(fit_x));
	if (figs_alloc(f, eng) < 0)
		return err_set(e, "out of memory");
	for (size_t i = 0; i < f->npp; i++) {
		const struct store_cell_runs *cell =
		    store_release_runs_cell(rr, &qc->pp[i]);

		if (load_cell(cell, &f->pp[i], e) < 0)
			goto out;
		if ((f->pp[i].ok || f->pp[i].confirm_ok) &&
		    run_values(&cell->points, 0, &f->points[i],
		    &f->npoints[i]) < 0) {
			err_set(e, "out of memory");
			goto out;
		}
	}
	for (size_t i = 0; i < f->ntg; i++)
		if (load_cell(store_release_runs_cell(rr, &qc->tg[i]),
		    &f->tg[i], e) < 0)
			goto out;
	for (size_t i = 0; i < eng->nfit; i++) {
		/* The release's own first runs, as its table shows them. */
		if (report_own_run_values(store_release_runs_cell(rr,
		    &qc->fit[i]), &fit_x[nfc], &fc[nfc].n) < 0) {
			err_set(e, "out of memory");
			goto out;
		}
		/* Runs far from the cell's others out, as the bisect takes
		 * them out: one process three times slow bends the line. */
		fc[nfc].n = stats_drop_outliers(fit_x[nfc], fc[nfc].n);
		if (fc[nfc].n == 0)
			continue;
		fc[nfc].tokens = eng->fit[i];
		fc[nfc].time_ns = fit_x[nfc];
		nfc++;
	}
	if (nfc >= 2 && fit_line(fc, nfc, &f->fit) == 0) {
		f->has_fit = 1;
		if (f->fit.fixed_why) {
			snprintf(f->why, sizeof(f->why), "%s",
			    f->fit.fixed_why);
			f->fit.fixed_why = f->why;
		}
	}
	if (gpu_compute(rr, qc, eng, &f->gpu) < 0) {
		err_set(e, "out of memory");
		goto out;
	}
	if (rr->nfailed > 0 && (f->failed = calloc(rr->nfailed,
	    sizeof(*f->failed))) == NULL) {
		err_set(e, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < rr->nfailed; i++, f->nfailed++) {
		struct store_failed_run *x = &f->failed[i];

		x->run_id = rr->failed[i].run_id;
		x->failure = strdup(rr->failed[i].failure);
		x->detail = rr->failed[i].detail ?
		    strdup(rr->failed[i].detail) : NULL;
		if (x->failure == NULL || (x->detail == NULL &&
		    rr->failed[i].detail)) {
			f->nfailed++;
			err_set(e, "out of memory");
			goto out;
		}
	}
	rc = 0;
out:
	for (size_t i = 0; i < nfc; i++)
		free(fit_x[i]);
	if (rc < 0)
		summary_figs_release(f);
	return rc;
}

/*
 * The metric of release k of d from every search run of each cell, for
 * the plot of the metric across the range; 0 when it has none.
 */
static int
release_metric_of(const struct range_data *d, const struct bisect_params *p,
    size_t k, struct estimate *est)
{
	if (d->ncells == 0)
		return 0;
	return bisect_metric_all(&d->rel[k], p, est) == 0;
}

/* The sha256 of the sources that compute a summary (generated by
 * summary_code.cmake): a build that computes differently reads none of
 * another's summaries. */
extern const char report_summary_code[];

static int
fp_query(struct buf *b, const struct store_cell_query *q)
{
	return buf_printf(b, "%s %d %d %s %s\n", q->kind, q->prompt_tokens,
	    q->gen_tokens, q->content ? q->content : "", q->definition);
}

int
summary_config(const struct conf_engine *eng, const struct bisect_params *p,
    const struct report_cells *qc, const struct store_cell_query *pq,
    char hex[SHA256_HEX_LEN + 1], struct err *e)
{
	struct buf b = BUF_INIT(1 << 20);
	size_t nk = eng->contents.n ? eng->contents.n : 1;
	int rc, bad;

	bad = buf_printf(&b, "code %s\nabi %zu %zu %zu %zu %d\n"
	    "max_cv %.17g\n", report_summary_code, sizeof(struct cellsum),
	    sizeof(struct fit), sizeof(struct estimate), sizeof(void *),
	    (int)*(const unsigned char *)&(const int){ 1 }, eng->max_cv);
	for (size_t i = 0; i < eng->nprompts; i++) {
		bad |= buf_printf(&b, "prompt %d ", eng->prompts[i]);
		bad |= fp_query(&b, &qc->pp[i]);
	}
	for (size_t i = 0; i < eng->ngen * nk; i++) {
		bad |= buf_printf(&b, "gen %d ", eng->gen[i / nk]);
		bad |= fp_query(&b, &qc->tg[i]);
	}
	for (size_t i = 0; i < eng->nfit; i++) {
		bad |= buf_printf(&b, "fit %d ", eng->fit[i]);
		bad |= fp_query(&b, &qc->fit[i]);
	}
	bad |= buf_printf(&b, "metric %d %d threshold %.17g reps %d %d all %d "
	    "summary %d outliers %d\n", (int)p->metric.kind, p->metric.n,
	    p->threshold, p->reps_initial, p->reps_cap, p->all,
	    (int)p->summary, p->keep_outliers);
	for (size_t c = 0; c < p->nlengths; c++) {
		bad |= buf_printf(&b, "length %d ", p->lengths[c]);
		bad |= fp_query(&b, &pq[c]);
	}
	rc = !bad ? sha256_buf(b.data, b.len, hex) : -1;
	buf_release(&b);
	return rc < 0 ? err_set(e, "cannot hash the report's settings") : 0;
}

/*
 * The verdict's part of a summary: whether the release's runs fail
 * (judge_runs_fail()), then for each parameter cell its runs, each as
 * one sample whose time is the run's value (p->summary of its samples):
 * bisect_next() summarises a one-sample run to that same value, so the
 * verdict is the one its samples give.  As bytes: the flag, then per
 * cell a count and count records of run id, value, SM clock and
 * confirm flag.
 */
#define RUN_RECORD (sizeof(int64_t) + 2 * sizeof(double) + 1)

static int
runs_encode(const struct store_release_runs *rr,
    const struct bisect_params *p, const struct store_cell_query *pq,
    struct buf *out)
{
	unsigned char fail = (unsigned char)judge_runs_fail(rr, p, pq);
	double stack[64];
	int bad = buf_add(out, &fail, 1);

	for (size_t c = 0; c < p->nlengths; c++) {
		const struct store_cell_runs *cell =
		    store_release_runs_cell(rr, &pq[c]);
		const struct store_points *pts = cell ? &cell->points : NULL;
		uint64_t nruns = 0;
		size_t at = out->len, i, k;

		bad |= buf_add(out, &nruns, sizeof(nruns));
		for (i = 0; pts && i < pts->n; i = k) {
			double *x = stack, value;
			unsigned char confirm = pts->v[i].confirm != 0;
			size_t nx = 0;
			int rc;

			for (k = i; k < pts->n &&
			    pts->v[k].run_id == pts->v[i].run_id; k++)
				;
			if (k - i > sizeof(stack) / sizeof(stack[0]) &&
			    (x = malloc((k - i) * sizeof(*x))) == NULL)
				return -1;
			for (size_t m = i; m < k; m++)
				if (range_sample_value(p, &pts->v[m], &x[nx]))
					nx++;
			rc = nx ? stats_run_value(x, nx, p->summary, &value) : 1;
			if (x != stack)
				free(x);
			if (rc < 0)
				return -1;
			if (rc > 0)
				continue;	/* none of the metric's */
			bad |= buf_add(out, &pts->v[i].run_id, sizeof(int64_t));
			bad |= buf_add(out, &value, sizeof(value));
			bad |= buf_add(out, &pts->v[i].gpu_sm_mhz,
			    sizeof(double));
			bad |= buf_add(out, &confirm, 1);
			nruns++;
		}
		if (!bad)
			memcpy(out->data + at, &nruns, sizeof(nruns));
	}
	return bad ? -1 : 0;
}

/* Release i of d and runs_fail[i] from its runs blob; -1 when the blob
 * is not one runs_encode() wrote for p->nlengths cells. */
static int
runs_decode(const unsigned char *v, size_t len,
    const struct bisect_params *p, struct range_data *d, size_t i,
    int *runs_fail)
{
	const unsigned char *end = v + len;

	if (len < 1)
		return -1;
	*runs_fail = *v++;
	for (size_t c = 0; c < p->nlengths; c++) {
		struct bisect_sample *b;
		uint64_t n;

		if ((size_t)(end - v) < sizeof(n))
			return -1;
		memcpy(&n, v, sizeof(n));
		v += sizeof(n);
		if (n > (size_t)(end - v) / RUN_RECORD)
			return -1;
		if ((b = calloc(n ? n : 1, sizeof(*b))) == NULL)
			return -1;
		for (size_t k = 0; k < n; k++) {
			memcpy(&b[k].run, v, sizeof(int64_t));
			memcpy(&b[k].time_ns, v + sizeof(int64_t),
			    sizeof(double));
			memcpy(&b[k].sm_mhz, v + sizeof(int64_t) +
			    sizeof(double), sizeof(double));
			b[k].confirm = v[RUN_RECORD - 1];
			v += RUN_RECORD;
		}
		d->bufs[i * d->ncells + c] = b;
		d->rel[i].cells[c].samples = b;
		d->rel[i].cells[c].n = n;
	}
	return v == end ? 0 : -1;
}

/*
 * A release's figures as the store keeps them, in this build's own
 * layout (the summaries' config key holds the hash of the sources and
 * the sizes of the structs, so no other build reads them): entry has
 * the counts, the GPU figures, the cells, the fit, the metric and the
 * failed runs; plot
 * the run values of each prompt length.
 */
struct figs_head {
	uint32_t npp, ntg, nfailed;
	int32_t has_fit, has_metric;
};

static int
figs_encode(const struct release_figs *f, struct buf *entry,
    struct buf *plot)
{
	struct figs_head h;
	int bad;

	memset(&h, 0, sizeof(h));
	h.npp = (uint32_t)f->npp;
	h.ntg = (uint32_t)f->ntg;
	h.nfailed = (uint32_t)f->nfailed;
	h.has_fit = f->has_fit;
	h.has_metric = f->has_metric;
	bad = buf_add(entry, &h, sizeof(h));
	bad |= buf_add(entry, &f->gpu, sizeof(f->gpu));
	bad |= buf_add(entry, f->pp, f->npp * sizeof(*f->pp));
	bad |= buf_add(entry, f->tg, f->ntg * sizeof(*f->tg));
	if (f->has_fit) {
		struct fit fit = f->fit;
		uint32_t len = fit.fixed_why ? (uint32_t)strlen(f->why) : 0;

		fit.fixed_why = NULL;
		bad |= buf_add(entry, &fit, sizeof(fit));
		bad |= buf_add(entry, &len, sizeof(len));
		bad |= buf_add(entry, f->why, len);
	}
	if (f->has_metric)
		bad |= buf_add(entry, &f->metric, sizeof(f->metric));
	for (size_t i = 0; i < f->nfailed; i++) {
		const struct store_failed_run *x = &f->failed[i];
		int32_t flen = (int32_t)strlen(x->failure);
		int32_t dlen = x->detail ? (int32_t)strlen(x->detail) : -1;

		bad |= buf_add(entry, &x->run_id, sizeof(x->run_id));
		bad |= buf_add(entry, &flen, sizeof(flen));
		bad |= buf_add(entry, x->failure, (size_t)flen);
		bad |= buf_add(entry, &dlen, sizeof(dlen));
		if (dlen > 0)
			bad |= buf_add(entry, x->detail, (size_t)dlen);
	}
	for (size_t i = 0; i < f->npp; i++) {
		uint64_t n = f->npoints[i];

		bad |= buf_add(plot, &n, sizeof(n));
		bad |= buf_add(plot, f->points[i], n * sizeof(double));
	}
	/* An empty blob is stored as NULL: never empty. */
	bad |= buf_add(plot, "", 1);
	return bad ? -1 : 0;
}

/* The next len bytes of *v (before end) into to; -1 when short. */
static int
take(const unsigned char **v, const unsigned char *end, void *to,
    size_t len)
{
	if ((size_t)(end - *v) < len)
		return -1;
	if (len)
		memcpy(to, *v, len);
	*v += len;
	return 0;
}

/* A malloced string of the next len bytes of *v; NULL when short or
 * out of memory. */
static char *
take_str(const unsigned char **v, const unsigned char *end, size_t len)
{
	char *str;

	if ((size_t)(end - *v) < len || (str = malloc(len + 1)) == NULL)
		return NULL;
	memcpy(str, *v, len);
	str[len] = '\0';
	*v += len;
	return str;
}

/* f from the blobs figs_encode() wrote (plot NULL: no points); -1 when
 * they are not such blobs for eng's cells. */
static int
figs_decode(const void *entry, size_t entry_len, const void *plot,
    size_t plot_len, const struct conf_engine *eng, struct release_figs *f)
{
	const unsigned char *v = entry, *end = v + entry_len;
	struct figs_head h;

	if (figs_alloc(f, eng) < 0 || take(&v, end, &h, sizeof(h)) < 0 ||
	    h.npp != f->npp || h.ntg != f->ntg ||
	    take(&v, end, &f->gpu, sizeof(f->gpu)) < 0 ||
	    take(&v, end, f->pp, f->npp * sizeof(*f->pp)) < 0 ||
	    take(&v, end, f->tg, f->ntg * sizeof(*f->tg)) < 0)
		goto bad;
	if ((f->has_fit = h.has_fit != 0)) {
		uint32_t len;

		if (take(&v, end, &f->fit, sizeof(f->fit)) < 0 ||
		    take(&v, end, &len, sizeof(len)) < 0 ||
		    len >= sizeof(f->why) || take(&v, end, f->why, len) < 0)
			goto bad;
		f->why[len] = '\0';
		f->fit.fixed_why = len ? f->why : NULL;
	}
	if ((f->has_metric = h.has_metric != 0) &&
	    take(&v, end, &f->metric, sizeof(f->metric)) < 0)
		goto bad;
	if (h.nfailed > (size_t)(end - v) ||
	    (f->failed = calloc(h.nfailed + 1, sizeof(*f->failed))) == NULL)
		goto bad;
	for (; f->nfailed < h.nfailed; f->nfailed++) {
		struct store_failed_run *x = &f->failed[f->nfailed];
		int32_t flen, dlen;

		if (take(&v, end, &x->run_id, sizeof(x->run_id)) < 0 ||
		    take(&v, end, &flen, sizeof(flen)) < 0 || flen < 0 ||
		    (x->failure = take_str(&v, end, (size_t)flen)) == NULL ||
		    take(&v, end, &dlen, sizeof(dlen)) < 0 ||
		    (dlen >= 0 && (x->detail = take_str(&v, end,
		    (size_t)dlen)) == NULL))
			goto bad;
	}
	if (v != end)
		goto bad;
	if (plot == NULL)
		return 0;
	v = plot;
	end = v + plot_len;
	for (size_t i = 0; i < f->npp; i++) {
		uint64_t n;

		if (take(&v, end, &n, sizeof(n)) < 0 ||
		    n > (size_t)(end - v) / sizeof(double) ||
		    (f->points[i] = malloc((n ? n : 1) *
		    sizeof(double))) == NULL ||
		    take(&v, end, f->points[i], n * sizeof(double)) < 0)
			goto bad;
		f->npoints[i] = n;
	}
	if (end - v == 1)
		return 0;
bad:
	summary_figs_release(f);
	return -1;
}

void
summary_release(struct report_summaries *x, size_t n)
{
	for (size_t i = 0; x->figs && i < n; i++) {
		free(x->figs[i].entry);
		free(x->figs[i].plot);
	}
	free(x->figs);
	free(x->runs_fail);
	range_data_release(&x->d);
	memset(x, 0, sizeof(*x));
}

/*
 * A summary computed from a release's runs, as the store keeps it (the
 * blobs); the report reads it back like one it kept, so that a kept one
 * and a new one give the same bytes.
 */
static int
summary_compute(struct store_summary *x, const struct report_cells *qc,
    const struct conf_engine *eng, const struct bisect_params *p,
    const struct store_cell_query *pq, struct err *e)
{
	struct buf runs = BUF_INIT(SIZE_MAX / 2);
	struct buf entry = BUF_INIT(SIZE_MAX / 2);
	struct buf plot = BUF_INIT(SIZE_MAX / 2);
	struct release_figs f;
	struct range_data one;
	int fail, rc = -1;

	memset(&one, 0, sizeof(one));
	if (figs_compute(&x->runs_read, qc, eng, &f, e) < 0)
		return -1;
	/* The metric from the run values the verdict reads. */
	one.n = 1;
	one.ncells = p->nlengths;
	one.rel = calloc(1, sizeof(*one.rel));
	one.bufs = calloc(one.ncells + 1, sizeof(*one.bufs));
	if (one.rel == NULL || one.bufs == NULL ||
	    runs_encode(&x->runs_read, p, pq, &runs) < 0 ||
	    runs_decode((const unsigned char *)runs.data, runs.len, p, &one,
	    0, &fail) < 0) {
		err_set(e, "out of memory");
		goto out;
	}
	f.has_metric = release_metric_of(&one, p, 0, &f.metric);
	if (figs_encode(&f, &entry, &plot) < 0) {
		err_set(e, "out of memory");
		goto out;
	}
	x->entry_len = entry.len;
	x->entry = buf_take(&entry);
	x->plot_len = plot.len;
	x->plot = buf_take(&plot);
	x->runs_len = runs.len;
	x->runs = buf_take(&runs);
	store_release_runs_release(&x->runs_read);
	rc = x->entry && x->plot && x->runs ? 0 : err_set(e, "out of memory");
out:
	summary_figs_release(&f);
	range_data_release(&one);
	buf_release(&runs);
	buf_release(&entry);
	buf_release(&plot);
	return rc;
}

/* Where summary_load() takes the summaries kept, as they are read. */
struct decode_ctx {
	struct report_summaries *out;
	const struct conf_engine *eng;
	const struct bisect_params *p;
	int plot;
	struct err *e;
};

/* A malloced copy of len bytes at v (NULL for NULL). */
static int
copy_bytes(const void *v, size_t len, void **out)
{
	*out = NULL;
	if (v == NULL)
		return 0;
	if ((*out = malloc(len ? len : 1)) == NULL)
		return -1;
	memcpy(*out, v, len);
	return 0;
}

/*
 * Take summary i into the report: its verdict data decoded, its figures
 * decoded once to check them and kept as a copy of the bytes.  1 when
 * it cannot be read back, -1 with c->e set for want of memory.
 */
static int
take_one(struct decode_ctx *c, size_t i, const void *entry,
    size_t entry_len, const void *plot, size_t plot_len, const void *runs,
    size_t runs_len)
{
	struct summary_bytes *b = &c->out->figs[i];
	struct release_figs f;

	if (!c->plot)
		plot = NULL;
	if (figs_decode(entry, entry_len, plot, plot_len, c->eng, &f) < 0)
		return 1;
	summary_figs_release(&f);
	if (runs_decode(runs, runs_len, c->p, &c->out->d, i,
	    &c->out->runs_fail[i]) < 0)
		return 1;
	b->entry_len = entry_len;
	b->plot_len = plot_len;
	if (copy_bytes(entry, entry_len, &b->entry) < 0 ||
	    copy_bytes(plot, plot_len, &b->plot) < 0)
		return err_set(c->e, "out of memory");
	return 0;
}

static int
take_kept(void *arg, size_t i, const struct store_summary_row *row)
{
	return take_one(arg, i, row->entry, row->entry_len, row->plot,
	    row->plot_len, row->runs, row->runs_len);
}

int
summary_figs(const struct report_summaries *x, size_t i,
    const struct conf_engine *eng, struct release_figs *f)
{
	const struct summary_bytes *b = &x->figs[i];

	return figs_decode(b->entry, b->entry_len, b->plot, b->plot_len, eng,
	    f);
}

int
summary_load(struct store *s, const struct store_summary_key *k,
    const int64_t *ids, size_t n, int plot, const struct report_cells *qc,
    const struct conf_engine *eng, const struct bisect_params *p,
    const struct store_cell_query *pq, struct report_summaries *out,
    struct err *e)
{
	struct store_summary *sum = calloc(n ? n : 1, sizeof(*sum));
	struct store_summary_row *rows = calloc(n ? n : 1, sizeof(*rows));
	struct decode_ctx dc = { out, eng, p, plot, e };
	struct range_data *d = &out->d;
	size_t nrows = 0, i;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->figs = calloc(n ? n : 1, sizeof(*out->figs));
	out->runs_fail = calloc(n ? n : 1, sizeof(*out->runs_fail));
	d->n = n;
	d->ncells = p->nlengths;
	d->rel = calloc(n ? n : 1, sizeof(*d->rel));
	d->bufs = calloc((n ? n : 1) * d->ncells + 1, sizeof(*d->bufs));
	if (sum == NULL || rows == NULL || !out->figs || !out->runs_fail ||
	    !d->rel || !d->bufs) {
		err_set(e, "out of memory");
		goto out;
	}
	/* A kept summary is taken straight from the store's bytes. */
	if ((rc = store_summary_read(s, k, plot, ids, n, sum, take_kept,
	    &dc, e)) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		if (sum[i].hit)
			continue;
		if (summary_compute(&sum[i], qc, eng, p, pq, e) < 0) {
			rc = -1;
			goto out;
		}
		rows[nrows].release_id = ids[i];
		rows[nrows].stamp = sum[i].stamp;
		rows[nrows].entry = sum[i].entry;
		rows[nrows].entry_len = sum[i].entry_len;
		rows[nrows].plot = sum[i].plot;
		rows[nrows].plot_len = sum[i].plot_len;
		rows[nrows].runs = sum[i].runs;
		rows[nrows].runs_len = sum[i].runs_len;
		nrows++;
		/* What was just encoded is read back as a kept one is. */
		if ((rc = take_one(&dc, i, sum[i].entry, sum[i].entry_len,
		    sum[i].plot, sum[i].plot_len, sum[i].runs,
		    sum[i].runs_len)) != 0)
			goto out;
	}
	if (k->config) {
		struct err ignored = ERR_INIT;

		/* Not kept is only slower next time. */
		store_summary_save(s, k, rows, nrows, &ignored);
	}
	rc = 0;
out:
	for (i = 0; sum != NULL && i < n; i++)
		store_summary_release(&sum[i]);
	free(sum);
	free(rows);
	if (rc != 0)
		summary_release(out, n);
	return rc;
}

int
summary_release_figs(struct store *s, const struct conf_engine *eng,
    int64_t release_id, const char *wsha, const char *hw,
    struct release_figs *f, struct err *e)
{
	struct store_release_runs rr;
	struct report_cells qc;
	int rc;

	memset(f, 0, sizeof(*f));
	if (report_cells_init(eng, wsha, hw, &qc, e) < 0)
		return -1;
	if (store_release_runs_read(s, wsha, hw, &release_id, 1, &rr,
	    e) < 0) {
		free(qc.tg);
		return -1;
	}
	rc = figs_compute(&rr, &qc, eng, f, e);
	store_release_runs_release(&rr);
	free(qc.tg);
	return rc;
}
