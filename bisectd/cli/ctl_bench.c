/*
 * ctl_bench.c: bisectctl bench.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/acquire/bench_release.h"
#include "bisectd/measure/benchlock.h"
#include "bisectd/report/summary.h"
#include "bisectd/search/perf.h"
#include "common/err.h"
#include "ctl.h"
#include "ctl_local.h"

/* The release's fit as its report entry gives it: prefill per token and
 * fixed, each with its interval, over the fit lengths. */
static void
print_fit(struct store *s, const struct conf_engine *g, int64_t release_id,
    const char *wsha, const char *hw)
{
	struct release_figs f;
	struct err e = ERR_INIT;
	char lengths[128];
	size_t used = 0;

	for (size_t i = 0; i < g->nfit && used + 12 < sizeof(lengths); i++)
		used += (size_t)snprintf(lengths + used, sizeof(lengths) - used,
		    "%s%d", i ? "," : "", g->fit[i]);
	if (used == 0)
		snprintf(lengths, sizeof(lengths), "-");
	if (summary_release_figs(s, g, release_id, wsha, hw, &f, &e) < 0) {
		printf("fit over %s: %s\n", lengths, e.msg);
		return;
	}
	if (!f.has_fit)
		printf("fit over %s: none (a fit length has no runs)\n",
		    lengths);
	else {
		const struct estimate *pt = &f.fit.per_token_ns;
		const struct estimate *fx = &f.fit.fixed_ns;

		printf("fit over %s: prefill %.4g ms per token [%.4g, %.4g]",
		    lengths, pt->value / 1e6, pt->lo / 1e6, pt->hi / 1e6);
		if (f.fit.fixed_estimable)
			printf(", fixed %.4g ms [%.4g, %.4g]\n", fx->value / 1e6,
			    fx->lo / 1e6, fx->hi / 1e6);
		else
			printf(", fixed not estimable: %s\n", f.fit.fixed_why ?
			    f.fit.fixed_why : "the line does not fit");
		if (!(pt->lo > 0))
			printf("the per-token interval reaches zero: too few "
			    "runs for this noise (--reps N)\n");
	}
	summary_figs_release(&f);
}

/*
 * One row of the summary: a cell's, or one figure of a serve cell's
 * runs, from its samples x[0..n-1] (ns); tokens 0 gives no throughput.
 */
static void
summary_row(struct ctl *c, json_t *arr, const char *name, const double *x,
    size_t n, int tokens, int busy, int lower, double max_cv)
{
	struct cell_stats st;
	struct throughput tp;
	char flags[64] = "", ms[48], tps[48];
	int has_tp;

	if (stats_cell(x, n, &st) < 0)
		return;
	has_tp = tokens > 0 && stats_throughput(tokens, &st, &tp) == 0;
	if (st.cv > max_cv)
		strcat(flags, "noisy ");
	if (busy)
		strcat(flags, "busy ");
	/* Time to first token over HTTP: prefill is at least this. */
	if (lower)
		strcat(flags, "lower-bound ");
	if (c->format == FORMAT_JSON) {
		json_t *o = json_object();

		json_object_set_new(o, "cell", json_string(name));
		json_object_set_new(o, "n", json_integer((json_int_t)st.n));
		json_object_set_new(o, "median_ms", json_real(st.median / 1e6));
		json_object_set_new(o, "mean_ms", json_real(st.mean / 1e6));
		json_object_set_new(o, "sd_ms", json_real(st.sd / 1e6));
		json_object_set_new(o, "cv", json_real(st.cv));
		json_object_set_new(o, "tps", has_tp ? json_real(tp.tps) :
		    json_null());
		json_object_set_new(o, "tps_sd", has_tp ? json_real(tp.sd) :
		    json_null());
		json_object_set_new(o, "lower_bound", json_boolean(lower));
		json_object_set_new(o, "flags", json_string(flags));
		json_array_append_new(arr, o);
		return;
	}
	snprintf(ms, sizeof(ms), "%.2f ± %.2f", st.mean / 1e6, st.sd / 1e6);
	if (has_tp)
		snprintf(tps, sizeof(tps), "%s%8.1f ± %-5.1f", lower ? ">=" :
		    "  ", tp.tps, tp.sd);
	else
		snprintf(tps, sizeof(tps), "%10s%8s", "-", "");
	printf("%-16s %4zu %12.2f %23s %6.1f%% %s %s\n", name, st.n,
	    st.median / 1e6, ms, 100 * st.cv, tps, flags);
}

/* Print the per-cell summary of what bench just stored: a serve cell's
 * runs hold every figure (idx), a row each. */
static void
bench_summary(struct ctl *c, struct store *s, const struct conf_engine *g,
    int64_t release_id, const char *wsha, const char *hw,
    const struct bench_cell *cells, size_t n)
{
	json_t *arr = json_array();

	if (c->format != FORMAT_JSON)
		printf("%s %s, weights %s (sha256 %.12s), machine %.12s\n",
		    g->name, ctl_safe(c->argv[1]), g->weights->name, wsha, hw);
	if (c->format != FORMAT_JSON)
		printf("%-16s %4s %12s %22s %7s %14s  %s\n", "CELL", "N",
		    "MEDIAN ms", "MEAN ± SD ms", "CV", "TOK/S", "FLAGS");
	for (size_t i = 0; i < n; i++) {
		struct store_cell_query q;
		struct store_points pts;
		char name[64];
		double *x;
		int busy = 0, lower = 0, tokens = cells[i].prompt ? cells[i].prompt :
		    cells[i].gen, serve = g->mode == MODE_SERVE;

		snprintf(name, sizeof(name), "%s%d%s%s", cells[i].kind, tokens,
		    cells[i].content[0] ? "/" : "", cells[i].content);
		memset(&pts, 0, sizeof(pts));
		if (bench_cell_query(g, cells[i].kind, cells[i].prompt,
		    cells[i].gen, cells[i].content, release_id, wsha, hw, &q,
		    NULL) < 0 || store_cell_points(s, &q, &pts, NULL) < 0 ||
		    pts.n == 0) {
			if (c->format != FORMAT_JSON)
				printf("%-16s %4d %12s\n", name, 0, "-");
			store_points_release(&pts);
			continue;
		}
		if ((x = malloc(pts.n * sizeof(*x))) == NULL) {
			store_points_release(&pts);
			continue;
		}
		for (size_t k = 0; k < pts.n; k++) {
			busy |= pts.v[k].busy;
			lower |= pts.v[k].lower_bound;
		}
		for (int f = 0; f < (serve ? FIG_N : 1); f++) {
			size_t m = 0;

			for (size_t k = 0; k < pts.n; k++)
				if (!serve || pts.v[k].idx == f)
					x[m++] = (double)pts.v[k].time_ns;
			if (serve)
				snprintf(name, sizeof(name), "%s",
				    conf_serve_figure_name(f));
			summary_row(c, arr, name, x, m, serve ? 0 : tokens,
			    busy, serve ? 0 : lower, g->max_cv);
		}
		free(x);
		store_points_release(&pts);
	}
	if (c->format == FORMAT_JSON)
		ctl_print_json(arr);
	else {
		json_decref(arr);
		if (g->mode != MODE_SERVE)
			print_fit(s, g, release_id, wsha, hw);
	}
}

int
cmd_bench(struct ctl *c)
{
	const struct conf_engine *g;
	struct store *s;
	struct benchlock lock = BENCHLOCK_INIT;
	struct bench_job j;
	struct err e = ERR_INIT;
	int prompts[CONF_MAX_LENGTHS];
	size_t nprompts = 0;
	int rc;

	if (c->prompts && conf_parse_lengths(c->prompts, prompts,
	    CONF_MAX_LENGTHS, &nprompts) < 0)
		return ctl_usage_error("--prompts: expected a comma-separated "
		    "list of distinct token counts, got '%s'", c->prompts);
	if ((g = ctl_engine(c, c->argv[0])) == NULL)
		return EXIT_USAGE;
	if ((s = ctl_store(c)) == NULL)
		return EXIT_FAIL;
	if (ctl_local_begin(c, s, &lock, "bisectctl bench %s %s", g->name,
	    c->argv[1]) != 0)
		return EXIT_FAIL;
	memset(&j, 0, sizeof(j));
	j.prompts = c->prompts ? prompts : NULL;
	j.nprompts = nprompts;
	j.reps = c->reps;
	j.progress = ctl_on_progress;
	j.download = ctl_on_download;
	j.stop = &ctl_stop;
	rc = bench_release(c->conf, g, s, c->argv[1], &j, &e);
	ctl_end_line();
	benchlock_release(&lock);
	if (rc < 0) {
		rc = ctl_error("%s", e.msg);
		goto done;
	}
	bench_summary(c, s, g, j.release_id, j.weights_sha256, j.hw_key,
	    j.cells, j.ncells);
	rc = EXIT_OK;
	if (j.tally.failed > 0)
		rc = ctl_error("%d of %d runs failed; the last: %s (see "
		    "'bisectctl runs %s %s')", j.tally.failed, j.tally.runs,
		    j.tally.last_failure, g->name, c->argv[1]);
	else if (j.tally.busy > 0)
		fprintf(stderr, "bisectctl: %d runs started on a busy machine "
		    "and are flagged busy\n", j.tally.busy);
done:
	bench_job_release(&j);
	store_close(s);
	return rc;
}
