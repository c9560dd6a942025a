/*
 * serve_lines.c: a serve-mode report's figures, built and rendered (see
 * serve_lines.h).  A figure of a release is the mean of its runs' values
 * with the t interval over runs: the run, one server start, is the unit
 * of replication.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/analysis/stats.h"
#include "bisectd/measure/bench.h"
#include "bisectd/measure/serve_run.h"
#include "common/err.h"
#include "config/conf.h"
#include "changes.h"
#include "fields.h"
#include "page.h"
#include "report.h"
#include "serve_lines.h"
#include "store/store.h"

/* The figures beside the latencies, as stored per run. */
enum extra { X_REQ, X_TOK, X_GOOD, X_SHARE, X_LAG, X_N };
static const char *const extra_names[X_N] = { "req_per_s",
    "out_tok_per_s", "goodput_per_s", "goodput_share", "lag_p99_ms" };
static const char *const error_names[SERVE_NERRORS] = { "refused",
    "timeout", "truncated", "http", "stream", "transport" };

json_t *
serve_profile_report(const struct conf_engine *eng)
{
	char *p = serve_profile_json(eng);
	json_t *o = p ? json_loads(p, 0, NULL) : NULL;

	free(p);
	if (o == NULL)
		o = json_object();
	json_object_set_new(o, "slo_ttft_ms", eng->load.slo_ttft_ms ?
	    json_integer(eng->load.slo_ttft_ms) : json_null());
	json_object_set_new(o, "slo_tpot_ms", eng->load.slo_tpot_ms ?
	    json_integer(eng->load.slo_tpot_ms) : json_null());
	json_object_set_new(o, "max_lag_ms",
	    json_integer(eng->load.max_lag_ms));
	return o;
}

/* {"value", "ci": [lo, hi], "sd", "n"} of x[0..n-1], scaled. */
static json_t *
summary_json(const double *x, size_t n, double scale)
{
	struct cell_stats cs;
	struct estimate est;
	json_t *o = json_object();

	json_object_set_new(o, "n", json_integer((json_int_t)n));
	if (stats_cell(x, n, &cs) < 0) {
		json_object_set_new(o, "value", json_null());
		return o;
	}
	stats_mean_estimate(&cs, &est);
	json_object_set_new(o, "value", json_real(cs.mean * scale));
	json_object_set_new(o, "sd", json_real(cs.sd * scale));
	/* One run: no spread known, and the interval says so.  Every
	 * figure here, a latency, a rate or the lag, is at least zero,
	 * and so is its interval. */
	json_object_set_new(o, "ci", n > 1 ? json_pack("[f,f]", (est.lo > 0 ?
	    est.lo : 0) * scale, est.hi * scale) : json_pack("[n,n]"));
	return o;
}

static json_t *
release_serve(const struct store_serve_rows *rows)
{
	double *x = calloc(rows->n ? rows->n : 1, sizeof(*x));
	json_t *o = json_object(), *fig, *errs;
	int failed = 0, over = 0, sum[SERVE_NERRORS] = { 0 };

	if (x == NULL)
		return o;
	fig = json_object();
	errs = json_object();
	for (size_t i = 0; i < rows->n; i++) {
		failed += rows->v[i].failed;
		over += rows->v[i].run.lag_over;
		for (int k = 0; k < SERVE_NERRORS; k++)
			sum[k] += rows->v[i].run.errors[k];
	}
	for (int f = 0; f < FIG_N; f++)
		json_object_set_new(fig, conf_serve_figure_name(f),
		    summary_json(x, changes_serve_values(rows,
		    (enum conf_serve_figure)f, x), 1e-6));
	for (int k = 0; k < X_N; k++) {
		size_t m = 0;

		for (size_t i = 0; i < rows->n; i++) {
			const struct store_serve_run *r = &rows->v[i].run;
			double v = k == X_REQ ? r->req_per_s : k == X_TOK ?
			    r->out_tok_per_s : k == X_GOOD ? r->goodput_per_s :
			    k == X_SHARE ? r->goodput_share :
			    (double)r->lag_p99_ns * 1e-6;

			if (!rows->v[i].failed && isfinite(v))
				x[m++] = v;
		}
		json_object_set_new(o, extra_names[k], summary_json(x, m, 1));
	}
	free(x);
	for (int k = 0; k < SERVE_NERRORS; k++)
		json_object_set_new(errs, error_names[k], json_integer(sum[k]));
	json_object_set_new(o, "figures_ms", fig);
	json_object_set_new(o, "runs", json_integer((json_int_t)rows->n -
	    failed));
	json_object_set_new(o, "failed_runs", json_integer(failed));
	json_object_set_new(o, "client_bound_runs", json_integer(over));
	json_object_set_new(o, "failed_requests", errs);
	return o;
}

int
serve_rows_load(struct store *s, const struct conf_engine *eng,
    const struct store_release *rels, size_t n, const char *weights_sha256,
    const char *hw_key, struct store_serve_rows **out, struct err *e)
{
	struct store_cell_query q;
	struct store_serve_rows *v;

	*out = NULL;
	if (bench_cell_query(eng, "pp", eng->load.prompt[0],
	    eng->load.output[0], "", 0, weights_sha256, hw_key, &q, e) < 0)
		return -1;
	if ((v = calloc(n ? n : 1, sizeof(*v))) == NULL)
		return err_set(e, "out of memory");
	for (size_t i = 0; i < n; i++)
		if (store_serve_list(s, rels[i].id, q.definition, &v[i],
		    e) < 0) {
			serve_rows_free(v, i);
			return -1;
		}
	*out = v;
	return 0;
}

void
serve_rows_free(struct store_serve_rows *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		store_serve_rows_release(&rows[i]);
	free(rows);
}

json_t *
serve_releases_json(const struct store_serve_rows *rows, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, release_serve(&rows[i]));
	return a;
}

void
serve_release_attach(json_t *rj, json_t *serve)
{
	json_object_set(rj, "serve", serve);
	if (strcmp(rep_str(rj, "status"), "not-measured") != 0)
		return;
	if (rep_real(serve, "runs") > 0)
		json_object_set_new(rj, "status", json_string("measured"));
	else if (rep_real(serve, "failed_runs") > 0)
		json_object_set_new(rj, "status", json_string("failed"));
}

/* "12.3 ms [11.9, 12.8]" of a summary, or "-". */
static const char *
value_words(const struct report_summary *v, const char *unit, char *buf,
    size_t len)
{
	if (!isfinite(v->value))
		snprintf(buf, len, "-");
	else if (isfinite(v->lo))
		snprintf(buf, len, "%.4g%s [%.4g, %.4g]", v->value, unit, v->lo,
		    v->hi);
	else
		snprintf(buf, len, "%.4g%s [no spread]", v->value, unit);
	return buf;
}

/* "64,256" of n lengths. */
static const char *
lengths_words(const long long *v, size_t n, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%lld",
			    i ? "," : "", v[i]);
	return buf;
}

/* A target in ms, or "none". */
static const char *
target_words(double ms, char *buf, size_t len)
{
	if (isfinite(ms))
		snprintf(buf, len, "%.0f ms", ms);
	else
		snprintf(buf, len, "none");
	return buf;
}

static const char *
profile_words(const struct report_serve_profile *p, char *buf, size_t len)
{
	char pace[64], end[64], pr[128], out[128], t1[32], t2[32];

	if (strcmp(p->arrival, "concurrency") == 0)
		snprintf(pace, sizeof(pace), "%.0f in flight", p->concurrency);
	else
		snprintf(pace, sizeof(pace), "%.4g requests/s, %s arrivals",
		    p->rate, p->arrival);
	if (p->has_requests)
		snprintf(end, sizeof(end), "%.0f requests", p->requests);
	else
		snprintf(end, sizeof(end), "%.4g s", p->duration_ms / 1000);
	snprintf(buf, len, "%s, %s a run after %.0f warm-up; prompt %s words, "
	    "output %s tokens, %s dialect; targets TTFT %s, TPOT %s; a run "
	    "is client-bound past %.0f ms of lag at p99", pace, end,
	    p->warmup, lengths_words(p->prompt, p->nprompt, pr, sizeof(pr)),
	    lengths_words(p->output, p->noutput, out, sizeof(out)), p->dialect,
	    target_words(p->slo_ttft_ms, t1, sizeof(t1)),
	    target_words(p->slo_tpot_ms, t2, sizeof(t2)), p->max_lag_ms);
	return buf;
}

/* The latencies shown per release: p50, p90 and p99 of each. */
static void
release_text(const struct report_release *r, FILE *out, int md)
{
	const struct report_serve *sv = &r->serve;
	char a[96], b[96], c[96], d[96], f[96];
	int nerr = 0;

	fprintf(out, "%s%s: %lld runs", md ? "- " : "  ", r->version,
	    sv->runs);
	if (sv->failed_runs > 0)
		fprintf(out, ", %lld failed", sv->failed_runs);
	if (sv->client_bound_runs > 0)
		fprintf(out, ", %lld client-bound (flag client-bound)",
		    sv->client_bound_runs);
	for (size_t i = 0; i < sv->nerrors; i++)
		if (sv->errors[i].count > 0)
			fprintf(out, "%s%s %lld", nerr++ ? ", " :
			    "; failed requests: ", sv->errors[i].type,
			    sv->errors[i].count);
	fputc('\n', out);
	if (sv->runs == 0)
		return;
	for (int l = 0; l < FIG_N; l += 3) {
		const char *first = conf_serve_figure_name(l);
		char name[16];

		snprintf(name, sizeof(name), "%.*s", (int)(strchr(first, '-') -
		    first), first);
		fprintf(out, "%s%-5s p50 %s, p90 %s, p99 %s\n", md ? "  - " :
		    "    ", name, value_words(report_serve_figure(sv, first),
		    " ms", a, sizeof(a)), value_words(report_serve_figure(sv,
		    conf_serve_figure_name(l + 1)), " ms", b, sizeof(b)),
		    value_words(report_serve_figure(sv,
		    conf_serve_figure_name(l + 2)), " ms", c, sizeof(c)));
	}
	fprintf(out, "%sthroughput %s requests/s, %s output tokens/s; "
	    "goodput %s requests/s (share %s); client lag p99 %s\n", md ?
	    "  - " : "    ", value_words(&sv->req_per_s, "", a, sizeof(a)),
	    value_words(&sv->out_tok_per_s, "", b, sizeof(b)),
	    value_words(&sv->goodput_per_s, "", c, sizeof(c)),
	    value_words(&sv->goodput_share, "", d, sizeof(d)),
	    value_words(&sv->lag_p99_ms, " ms", f, sizeof(f)));
}

void
serve_text(const struct report *rp, FILE *out, int md)
{
	char buf[1024];

	if (!rp->serve_profile.ok)
		return;
	fprintf(out, md ? "\n**Under load** (%s; each figure the mean over "
	    "runs, one server start each, with its 95%% interval)\n\n" :
	    "\nunder load (%s; each figure the mean over runs, one server "
	    "start each, with its 95%% interval):\n", profile_words(
	    &rp->serve_profile, buf, sizeof(buf)));
	for (size_t i = 0; i < rp->nreleases; i++)
		if (rp->releases[i].serve.ok)
			release_text(&rp->releases[i], out, md);
}

/* The figures of the table, in its columns' order. */
static const char *const html_cols[] = { "ttft-p50", "ttft-p90",
    "ttft-p99", "tpot-p50", "tpot-p90", "itl-p90", "e2e-p90" };
#define NCOLS (sizeof(html_cols) / sizeof(html_cols[0]))

/* TTFT p50, p90 and p99 of release i of rp. */
static const struct report_summary *
ttft(const struct report *rp, size_t i, int k)
{
	return report_serve_figure(&rp->releases[i].serve,
	    conf_serve_figure_name(FIG_TTFT_P50 + k));
}

/* TTFT p50, p90 and p99 per release, one line each, every dot with its
 * interval. */
static void
percentile_plot(FILE *out, const struct report *rp)
{
	static const char *const cls[3] = { "p50", "p90", "p99" };
	size_t i, n = rp->nreleases;
	struct plot_axes a = { -0.5, (double)n - 0.5, 0, -INFINITY };

	for (i = 0; i < n; i++)
		for (int k = 0; k < 3; k++) {
			const struct report_summary *v = ttft(rp, i, k);

			if (isfinite(v->value))
				a.y1 = fmax(a.y1, isfinite(v->hi) ? v->hi :
				    v->value);
		}
	if (!isfinite(a.y1))
		return;
	svg_nice_range(&a.y0, &a.y1);
	svg_open(out, "serve-plot", "Time to first token under load (ms)");
	svg_axes(out, &a, 0, "release (version order)",
	    "time to first token (ms)");
	for (int k = 0; k < 3; k++) {
		int open = 0;

		fprintf(out, "<path class=\"serve %s\" fill=\"none\" d=\"",
		    cls[k]);
		for (i = 0; i < n; i++) {
			const struct report_summary *v = ttft(rp, i, k);

			/* A release without a figure breaks the line. */
			if (!isfinite(v->value)) {
				open = 0;
				continue;
			}
			svg_xy(out, open ? "L" : "M", svg_px(&a, (double)i),
			    svg_py(&a, v->value));
			open = 1;
		}
		fputs("\"/>\n", out);
		for (i = 0; i < n; i++) {
			const struct report_summary *v = ttft(rp, i, k);
			double x = svg_px(&a, (double)i);

			if (!isfinite(v->value))
				continue;
			if (isfinite(v->lo))
				fprintf(out, "<line class=\"ci\" x1=\"%.1f\" "
				    "x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n",
				    x, x, svg_py(&a, v->lo), svg_py(&a, v->hi));
			fprintf(out, "<circle class=\"serve %s\" cx=\"%.1f\" "
			    "cy=\"%.1f\" r=\"3\"><title>", cls[k], x,
			    svg_py(&a, v->value));
			html_esc(out, rp->releases[i].version);
			fprintf(out, " TTFT %s: %.4g ms</title></circle>\n",
			    cls[k], v->value);
		}
	}
	for (i = 0; i < n; i++) {
		fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
		    svg_px(&a, (double)i), PLOT_H - PAD_B + 16);
		html_esc(out, rp->releases[i].version);
		fputs("</text>\n", out);
	}
	fputs("</svg>\n", out);
}

/* A table cell of a figure: "12.3 [11.9, 12.8]". */
static void
summary_cell(FILE *out, const struct report_summary *v)
{
	fputs("<td>", out);
	html_num_lohi(out, v->value, v->lo, v->hi, 0, 1);
	fputs("</td>", out);
}

void
serve_html(const struct report *rp, FILE *out)
{
	char buf[1024];

	if (!rp->serve_profile.ok)
		return;
	fputs("<section id=\"serve\">\n<h2>Under load</h2>\n<p>", out);
	html_esc(out, profile_words(&rp->serve_profile, buf, sizeof(buf)));
	fputs(". Each figure is the mean over runs, one server start each, "
	    "with its 95% interval; ms.</p>\n", out);
	percentile_plot(out, rp);
	fputs("<table>\n<tr><th>release</th><th>runs</th>", out);
	for (size_t c = 0; c < NCOLS; c++)
		html_markup(out, "<th>", html_cols[c], "</th>", NULL);
	fputs("<th>requests/s</th><th>goodput/s</th><th>lag p99</th>"
	    "</tr>\n", out);
	for (size_t i = 0; i < rp->nreleases; i++) {
		const struct report_serve *sv = &rp->releases[i].serve;

		if (!sv->ok)
			continue;
		html_markup(out, "<tr><td>", rp->releases[i].version, "</td>",
		    NULL);
		fprintf(out, "<td>%lld", sv->runs);
		if (sv->failed_runs > 0)
			fprintf(out, " (%lld failed)", sv->failed_runs);
		fputs("</td>", out);
		for (size_t c = 0; c < NCOLS; c++)
			summary_cell(out, report_serve_figure(sv, html_cols[c]));
		summary_cell(out, &sv->req_per_s);
		summary_cell(out, &sv->goodput_per_s);
		summary_cell(out, &sv->lag_p99_ms);
		fputs("</tr>\n", out);
	}
	fputs("</table>\n</section>\n", out);
}
