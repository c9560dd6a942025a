/*
 * html.c: a report as one self-contained HTML page with inline SVG
 * plots (see html.h).  The page is written in XHTML syntax (void
 * elements closed, every attribute quoted, every string escaped), so a
 * browser and an XML parser read the same tree.  Nothing in it runs: a
 * release's plot is picked with <details>, not a script.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/analysis/bisect.h"
#include "bisectd/analysis/stats.h"
#include "fields.h"
#include "gpu_lines.h"
#include "serve_lines.h"
#include "html.h"
#include "page.h"
#include "report.h"
#include "text_escape.h"


/* The releases a time plot shows: their points and fitted bands. */
struct fit_series {
	const struct report_release *rel;
	const char *cls;	/* "good" or "bad" */
};

static void
fit_extent(const struct fit_series *s, size_t n, struct plot_axes *a)
{
	a->x0 = 0;
	a->x1 = 0;
	a->y0 = 0;
	a->y1 = 0;
	for (size_t k = 0; k < n; k++) {
		const json_t *p;
		size_t i;

		json_array_foreach(s[k].rel->points, i, p) {
			a->x1 = fmax(a->x1, rep_at(p, 0));
			a->y1 = fmax(a->y1, rep_at(p, 1));
		}
		json_array_foreach(s[k].rel->fit_band, i, p) {
			a->x1 = fmax(a->x1, rep_at(p, 0));
			a->y1 = fmax(a->y1, rep_at(p, 3));
		}
	}
	svg_nice_range(&a->x0, &a->x1);
	svg_nice_range(&a->y0, &a->y1);
}

/* The band (lo up, hi back down) and the fitted line of one release. */
static void
fit_band(FILE *out, const struct plot_axes *a, const struct fit_series *s)
{
	const json_t *band = s->rel->fit_band, *p;
	size_t i, n = json_array_size(band);

	if (n < 2)
		return;
	fprintf(out, "<path class=\"band-%s\" d=\"", s->cls);
	for (i = 0; i < n; i++) {
		p = json_array_get(band, i);
		svg_xy(out, i ? "L" : "M", svg_px(a, rep_at(p, 0)),
		    svg_py(a, fmax(a->y0, rep_at(p, 2))));
	}
	for (i = n; i-- > 0;) {
		p = json_array_get(band, i);
		svg_xy(out, "L", svg_px(a, rep_at(p, 0)),
		    svg_py(a, fmin(a->y1, rep_at(p, 3))));
	}
	fprintf(out, "Z\"/>\n<path class=\"line-%s\" d=\"", s->cls);
	for (i = 0; i < n; i++) {
		p = json_array_get(band, i);
		svg_xy(out, i ? "L" : "M", svg_px(a, rep_at(p, 0)),
		    svg_py(a, rep_at(p, 1)));
	}
	fputs("\"/>\n", out);
}

/* "0.2.4: 0.3281 ms/token [0.31, 0.34], ceiling 3048 tok/s", or for a
 * curve "0.2.4: curve, 0.026 ms/token at 64 to 0.071 at 512, peak 9000
 * tok/s". */
static void
fit_caption(FILE *out, const struct report_release *rel)
{
	const struct report_fit *f = &rel->fit;

	html_esc(out, rel->version);
	fputs(": ", out);
	if (!isfinite(f->per_token.value)) {
		fputs("no fit", out);
		return;
	}
	if (f->curve) {
		static const struct report_cost_at none = { 0,
		    { NAN, NAN, NAN } };
		const struct report_cost_at *first = f->ncost_at ?
		    &f->cost_at[0] : &none;
		const struct report_cost_at *last = f->ncost_at ?
		    &f->cost_at[f->ncost_at - 1] : &none;

		/* The cost of a token grows along the curve: at its ends. */
		fprintf(out, "curve, %.4g ms/token at %lld to %.4g at %lld",
		    first->ms.value, first->tokens, last->ms.value,
		    last->tokens);
	} else {
		html_num_lohi(out, f->per_token.value, f->per_token.lo,
		    f->per_token.hi, 0, 1);
		fputs(" ms/token", out);
	}
	if (isfinite(f->ceiling.value))
		fprintf(out, ", %s %.0f tok/s", isfinite(f->ceiling_tokens) ?
		    "peak" : "ceiling", f->ceiling.value);
}

/*
 * Time against prompt length for one or two releases: every process run
 * a dot, the fitted line, its 95% band, and the per-token cost and
 * ceiling written on it.
 */
static void
fit_plot(FILE *out, const char *id, const char *title,
    const struct fit_series *s, size_t n)
{
	struct plot_axes a;

	fit_extent(s, n, &a);
	svg_open(out, id, title);
	svg_axes(out, &a, 1, "prompt length (tokens)", "time per run (ms)");
	for (size_t k = 0; k < n; k++)
		fit_band(out, &a, &s[k]);
	for (size_t k = 0; k < n; k++) {
		const json_t *p;
		size_t i;

		fprintf(out, "<g class=\"runs\" data-release=\"%zu\">\n", k);
		json_array_foreach(s[k].rel->points, i, p) {
			fputs("<circle class=\"run ", out);
			fputs(s[k].cls, out);
			fputs("\" cx=\"", out);
			svg_coord(out, svg_px(&a, rep_at(p, 0)));
			fputs("\" cy=\"", out);
			svg_coord(out, svg_py(&a, rep_at(p, 1)));
			fputs("\" r=\"2.6\"/>\n", out);
		}
		fputs("</g>\n", out);
	}
	for (size_t k = 0; k < n; k++) {
		/* The legend in the upper left, where lines through zero
		 * leave room. */
		double y = PAD_T + 14 + 16 * (double)k;

		fprintf(out, "<circle class=\"%s\" cx=\"%d\" cy=\"%.1f\" "
		    "r=\"3.5\"/><text x=\"%d\" y=\"%.1f\">", s[k].cls,
		    PAD_L + 12, y - 4, PAD_L + 20, y);
		fit_caption(out, s[k].rel);
		fputs("</text>\n", out);
	}
	fputs("</svg>\n", out);
}

static const struct report_release *
find_release(const struct report *rp, const char *version, size_t *idx)
{
	for (size_t i = 0; i < rp->nreleases; i++)
		if (*version && strcmp(rp->releases[i].version, version) == 0) {
			if (idx)
				*idx = i;
			return &rp->releases[i];
		}
	return NULL;
}

/* Past this ratio of their longest times, the boundary pair gets a
 * panel each. */
#define PANEL_RATIO 5

/* The longest time a release's plot shows: its runs' and band's. */
static double
series_top(const struct report_release *rel)
{
	const json_t *p;
	double top = 0;
	size_t i;

	json_array_foreach(rel->points, i, p)
		top = fmax(top, rep_at(p, 1));
	json_array_foreach(rel->fit_band, i, p)
		top = fmax(top, rep_at(p, 3));
	return top;
}

static void
section_fit(FILE *out, const struct report *rp)
{
	const struct report_release *good, *bad;
	struct fit_series s[2];
	size_t shown = 0;

	good = find_release(rp, rp->verdict.change.last_good, NULL);
	bad = find_release(rp, rp->verdict.change.first_bad, NULL);
	fputs("<section id=\"fit\">\n<h2>Time against prompt length</h2>\n",
	    out);
	if (good == NULL || bad == NULL) {
		/* No boundary: the range's ends. */
		good = rp->nreleases ? &rp->releases[0] : NULL;
		bad = rp->nreleases ? &rp->releases[rp->nreleases - 1] : NULL;
		fputs("<p>No boundary was found: the range's ends.</p>\n", out);
	}
	s[0].rel = good;
	s[0].cls = "good";
	s[1].rel = bad;
	s[1].cls = "bad";
	fputs("<p>Each dot is one process run (its samples' mean); the line "
	    "is the fit time = fixed + per-token × length over the lengths "
	    "fitted, the band its 95% interval.</p>\n", out);
	if (good && bad && fmax(series_top(good), series_top(bad)) >
	    PANEL_RATIO * fmin(series_top(good), series_top(bad))) {
		/* On one linear axis the fast release would be a flat line
		 * along the bottom: a panel each. */
		fprintf(out, "<p>The two differ more than %d× in time: each "
		    "has its own axis.</p>\n<div class=\"panels\">\n",
		    PANEL_RATIO);
		fit_plot(out, "fit-boundary", "Time against prompt length, "
		    "last good release", &s[0], 1);
		fit_plot(out, "fit-boundary-bad", "Time against prompt "
		    "length, first bad release", &s[1], 1);
		fputs("</div>\n", out);
	} else
		fit_plot(out, "fit-boundary", "Time against prompt length, "
		    "boundary pair", s, good && bad ? 2 : 0);
	fputs("<h3>Any measured release</h3>\n", out);
	for (size_t i = 0; i < rp->nreleases; i++) {
		const struct report_release *r = &rp->releases[i];
		char id[48];

		if (json_array_size(r->points) == 0 &&
		    !isfinite(r->fit.per_token.value))
			continue;
		snprintf(id, sizeof(id), "fit-%zu", i);
		fputs("<details><summary>", out);
		html_esc(out, r->version);
		fputs("</summary>\n", out);
		s[0].rel = r;
		s[0].cls = "good";
		fit_plot(out, id, "Time against prompt length", s, 1);
		fputs("</details>\n", out);
		shown++;
	}
	if (shown == 0)
		fputs("<p>No release of the range is measured.</p>\n", out);
	fputs("</section>\n", out);
}

/* "per-token cost (ms/token)" and the like, for the metric's axis. */
static void
metric_label(const char *metric, char *buf, size_t len)
{
	if (strcmp(metric, "per-token") == 0)
		snprintf(buf, len, "per-token cost (ms/token)");
	else if (strcmp(metric, "fixed") == 0)
		snprintf(buf, len, "fixed overhead (ms)");
	else if (strncmp(metric, "pp", 2) == 0)
		snprintf(buf, len, "prefill of %s tokens (ms)", metric + 2);
	else if (strncmp(metric, "tg", 2) == 0)
		snprintf(buf, len, "decode of %s tokens (ms)", metric + 2);
	else
		snprintf(buf, len, "%s", metric);
}

/* A relative change as people say it: +12.5%, -30.0%, and past doubling
 * a factor, 24.5× rather than +2352.8%. */
static void
change_label(FILE *out, double change)
{
	if (change >= 1)
		fprintf(out, "%.3g×", 1 + change);
	else
		fprintf(out, "%+.1f%%", 100 * change);
}

/* The x of the midpoint between releases i and j. */
static double
between(const struct plot_axes *a, size_t i, size_t j)
{
	return (svg_px(a, (double)i) + svg_px(a, (double)j)) / 2;
}

/*
 * The bisected metric across the range in version order: a dot and its
 * 95% interval per measured release, a grey mark for one not measured
 * (a gap), a cross for a skipped or failed one, and a dashed line at
 * every change point.
 */
static void
section_metric(FILE *out, const struct report *rp)
{
	size_t i, n = rp->nreleases, every;
	struct plot_axes a = { -0.5, (double)n - 0.5, INFINITY, -INFINITY };
	char label[96];

	metric_label(rp->metric, label, sizeof(label));
	for (i = 0; i < n; i++) {
		const struct report_ms *m = &rp->releases[i].metric;

		if (!isfinite(m->value))
			continue;
		a.y0 = fmin(a.y0, isfinite(m->lo) ? m->lo : m->value);
		a.y1 = fmax(a.y1, isfinite(m->hi) ? m->hi : m->value);
	}
	if (a.y0 > 0 && a.y0 < a.y1 * 0.5)
		a.y0 = 0;
	svg_nice_range(&a.y0, &a.y1);
	fputs("<section id=\"metric\">\n<h2>", out);
	html_esc(out, rp->metric);
	fputs(" across the range</h2>\n<p>In version order; a dot and its "
	    "95% interval per measured release, a grey mark for one not "
	    "measured, a cross for one skipped or failed, a dashed line at "
	    "each change point.</p>\n", out);
	svg_open(out, "metric-plot", label);
	svg_axes(out, &a, 0, "release (version order)", label);
	/* About ten version labels, whatever the range's length. */
	every = n > 10 ? (n + 9) / 10 : 1;
	for (i = 0; i < n; i++) {
		const struct report_release *r = &rp->releases[i];
		const char *st = r->status;
		const struct report_ms *m = &r->metric;
		double x = svg_px(&a, (double)i), v = m->value;

		if (i % every == 0 || i == n - 1) {
			fprintf(out, "<text x=\"%.1f\" y=\"%d\" "
			    "text-anchor=\"middle\">", x, PLOT_H - PAD_B + 16);
			html_esc(out, r->version);
			fputs("</text>\n", out);
		}
		if (strcmp(st, "skipped") == 0 || strcmp(st, "failed") == 0) {
			double y = PLOT_H - PAD_B - 8;

			fprintf(out, "<path class=\"%s\" d=\"M%.1f %.1fL%.1f "
			    "%.1fM%.1f %.1fL%.1f %.1f\"><title>", st, x - 4,
			    y - 4, x + 4, y + 4, x - 4, y + 4, x + 4, y - 4);
			html_esc(out, r->version);
			fprintf(out, " %s</title></path>\n", st);
			continue;
		}
		if (!isfinite(v)) {
			fprintf(out, "<circle class=\"gap\" cx=\"%.1f\" "
			    "cy=\"%d\" r=\"3\"><title>", x, PLOT_H - PAD_B - 8);
			html_esc(out, r->version);
			fputs(" not measured</title></circle>\n", out);
			continue;
		}
		if (isfinite(m->lo) && isfinite(m->hi))
			fprintf(out, "<line class=\"ci\" x1=\"%.1f\" "
			    "x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n", x, x,
			    svg_py(&a, m->lo), svg_py(&a, m->hi));
		fprintf(out, "<circle class=\"metric\" cx=\"%.1f\" cy=\"%.1f\" "
		    "r=\"3\"><title>", x, svg_py(&a, v));
		html_esc(out, r->version);
		fprintf(out, ": %.4g</title></circle>\n", v);
	}
	for (i = 0; i < rp->verdict.npoints; i++) {
		const struct report_point *cp = &rp->verdict.points[i];
		size_t g, b;

		if (find_release(rp, cp->last_good, &g) == NULL ||
		    find_release(rp, cp->first_bad, &b) == NULL)
			continue;
		fprintf(out, "<line class=\"change\" x1=\"%.1f\" x2=\"%.1f\" "
		    "y1=\"%d\" y2=\"%d\"/><text x=\"%.1f\" y=\"%d\" "
		    "text-anchor=\"middle\">", between(&a, g, b),
		    between(&a, g, b), PAD_T, PLOT_H - PAD_B,
		    between(&a, g, b), PAD_T + 10);
		change_label(out, cp->metric_change.value);
		fputs("</text>\n", out);
	}
	fputs("</svg>\n</section>\n", out);
}

/*
 * "Times slower" by prompt length, the main change's, each with its 95%
 * interval as an error bar (a bar followed by its dot), and its trend.
 */
static void
section_ratios(FILE *out, const struct report_verdict *v)
{
	struct plot_axes a = { 0, 0, 1, 1 };
	size_t i;
	int first;

	if (v->nratios == 0)
		return;
	/* A ratio there is none of has no dot, never one at 0x. */
	for (i = 0; i < v->nratios; i++) {
		const struct report_ratio *r = &v->ratios[i];

		if (!isfinite(r->value))
			continue;
		a.x1 = fmax(a.x1, atof(r->tokens));
		a.y0 = fmin(a.y0, r->value);
		a.y1 = fmax(a.y1, r->value);
		if (isfinite(r->lo) && isfinite(r->hi)) {
			a.y0 = fmin(a.y0, r->lo);
			a.y1 = fmax(a.y1, r->hi);
		}
	}
	a.y0 = fmin(a.y0, 1);
	svg_nice_range(&a.x0, &a.x1);
	svg_nice_range(&a.y0, &a.y1);
	fputs("<section id=\"ratios\">\n<h2>Times slower by prompt length"
	    "</h2>\n<p>First bad over last good, mean time over mean time, "
	    "with its 95% interval; trend: <strong>", out);
	html_esc(out, v->ratio_trend);
	fputs("</strong> (rising: the cost per token grew; falling: a fixed "
	    "overhead).</p>\n", out);
	svg_open(out, "ratio-plot", "Times slower by prompt length");
	svg_axes(out, &a, 1, "prompt length (tokens)", "times slower (×)");
	fprintf(out, "<line class=\"one\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" "
	    "y2=\"%.1f\"/>\n<path class=\"ratio-line\" d=\"", PAD_L,
	    PLOT_W - PAD_R, svg_py(&a, 1), svg_py(&a, 1));
	for (i = 0, first = 1; i < v->nratios; i++)
		if (isfinite(v->ratios[i].value)) {
			fprintf(out, "%c%.1f %.1f", first ? 'M' : 'L',
			    svg_px(&a, atof(v->ratios[i].tokens)),
			    svg_py(&a, v->ratios[i].value));
			first = 0;
		}
	fputs("\"/>\n", out);
	for (i = 0; i < v->nratios; i++) {
		const struct report_ratio *r = &v->ratios[i];
		double cx = svg_px(&a, atof(r->tokens)), lo = r->lo;
		double hi = r->hi;

		if (!isfinite(r->value))
			continue;
		if (isfinite(lo) && isfinite(hi))
			fprintf(out, "<path class=\"ratio-ci\" data-lo=\"%.4g\" "
			    "data-hi=\"%.4g\" d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1f"
			    "M%.1f %.1fH%.1f\"/>\n", lo, hi, cx, svg_py(&a, lo),
			    svg_py(&a, hi), cx - 4, svg_py(&a, lo), cx + 4, cx - 4,
			    svg_py(&a, hi), cx + 4);
		/* The figure beside the dot: the bar runs above and below. */
		fprintf(out, "<circle class=\"ratio\" cx=\"%.1f\" cy=\"%.1f\" "
		    "r=\"3.5\"/><text x=\"%.1f\" y=\"%.1f\">%.2f×</text>\n",
		    cx, svg_py(&a, r->value), cx + 8, svg_py(&a, r->value) + 4,
		    r->value);
	}
	fputs("</svg>\n</section>\n", out);
}

/* --- the output canary --- */

/* The report's verdict is the output canary's (bisect --metric output). */
static int
is_output(const struct report *rp)
{
	return strcmp(rp->metric, "output") == 0;
}

/* The first 12 hex digits of a sha256, as the other formats show it. */
static const char *
short_hash(const char *sha256, char *buf, size_t len)
{
	snprintf(buf, len, "%.12s", sha256);
	return buf;
}

/* "token 8: <before> → <after>", the first differing tokens. */
static void
text_diff(FILE *out, long long token, const char *before, const char *after)
{
	fprintf(out, "token %lld: ", token);
	html_markup(out, "<code class=\"before\">", before,
	    "</code> → <code class=\"after\">", after, "</code>", NULL);
}

/*
 * The canary of each release, one row each: the hash of its text (its
 * state when it has none, with why), and whether the text changed since
 * the release before with a text, with the first differing tokens.  A
 * row's class is its state, or "changed".  Nothing without a canary.
 */
static void
section_canary(FILE *out, const struct report *rp)
{
	const json_t *k, *d;
	char h[16];

	if (!report_has_canary(rp))
		return;
	fputs("<section id=\"canary\">\n<h2>Output canary</h2>\n<p>The "
	    "sha256 of the text each release generates from the canary "
	    "prompt (its first 12 hex digits), run twice: two runs that "
	    "differ make a release nondeterministic, and its text is never "
	    "compared.</p>\n<div class=\"cells\"><table class=\"canary\">\n"
	    "<thead><tr><th>release</th><th>canary</th><th>status</th>"
	    "<th>since the release before</th></tr></thead>\n<tbody>\n",
	    out);
	for (size_t i = 0; i < rp->nreleases; i++) {
		const char *st;

		k = rp->releases[i].canary;
		if (!json_is_object(k))
			continue;
		st = rep_str(k, "status");
		fputs("<tr class=\"", out);
		html_esc(out, json_is_true(json_object_get(k, "changed")) ?
		    "changed" : st);
		html_markup(out, "\"><td>", rp->releases[i].version,
		    "</td><td>", NULL);
		if (*rep_str(k, "sha256"))
			html_markup(out, "<code title=\"", rep_str(k, "sha256"),
			    "\">", short_hash(rep_str(k, "sha256"), h,
			    sizeof(h)), "</code>", NULL);
		else
			fputs("–", out);
		html_markup(out, "</td><td>", st, NULL);
		if (strcmp(st, "deterministic") != 0 && *rep_str(k, "detail"))
			html_markup(out, ": ", rep_str(k, "detail"), NULL);
		fputs("</td><td>", out);
		if (json_is_true(json_object_get(k, "changed"))) {
			html_markup(out, "changed since ", rep_str(k, "since"),
			    " at ", NULL);
			d = json_object_get(k, "diff");
			text_diff(out, (long long)json_integer_value(
			    json_object_get(d, "token")), rep_str(d, "before"),
			    rep_str(d, "after"));
		} else if (json_is_false(json_object_get(k, "changed")))
			html_markup(out, "same as ", rep_str(k, "since"), NULL);
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table></div>\n</section>\n", out);
}

/* --- the verdict and the cells --- */


/* A gradual verdict's slide: its span, its change, its largest steps. */
static void
verdict_slide(FILE *out, const struct report_gradual *g)
{
	html_verdict_item(out, "a slide");
	html_esc(out, g->from);
	fputs(" to ", out);
	html_esc(out, g->to);
	fprintf(out, ", %zu releases; no one release is its cause</dd>\n",
	    g->nreleases);
	html_verdict_item(out, "total change");
	html_num_lohi(out, g->total.value, g->total.lo, g->total.hi, 1, 100);
	fputs("%</dd>\n", out);
	html_verdict_item(out, "change a release");
	html_num_lohi(out, g->per_release.value, g->per_release.lo,
	    g->per_release.hi, 1, 100);
	fputs("%</dd>\n", out);
	for (size_t i = 0; i < g->nsteps; i++) {
		html_verdict_item(out, i ? "next step" : "largest step");
		html_esc(out, g->steps[i].from);
		fputs(" &#8594; ", out);
		html_esc(out, g->steps[i].to);
		fprintf(out, ": %+.1f%%</dd>\n", 100 *
		    g->steps[i].change.value);
	}
}

/* The kind, and the per-token and fixed changes of the pair's fit. */
static void
verdict_kind(FILE *out, const struct report_verdict *v)
{
	const struct report_ms *p = &v->per_token_delta, *f = &v->fixed_delta;

	html_verdict_item(out, "kind");
	html_esc(out, v->change.kind);
	fputs("</dd>\n", out);
	if (!v->has_deltas)
		return;
	html_verdict_item(out, "per-token cost change");
	html_num_lohi(out, p->value, p->lo, p->hi, 1, 1);
	fputs(" ms/token (95% interval)</dd>\n", out);
	html_verdict_item(out, "fixed overhead change");
	if (*v->fixed_not_estimable) {
		fputs("not estimable: ", out);
		html_esc(out, v->fixed_not_estimable);
	} else {
		html_num_lohi(out, f->value, f->lo, f->hi, 1, 1);
		fputs(" ms (95% interval)", out);
	}
	fputs("</dd>\n", out);
}

/* The changes of the metric, the power, where an unknown stopped. */
static void
verdict_figures(FILE *out, const struct report_verdict *v)
{
	const struct report_rel *m = &v->change.metric_change;
	const struct report_inconclusive *u = &v->inconclusive;

	if (isfinite(m->value)) {
		html_verdict_item(out, "change of the metric");
		fprintf(out, "%+.1f%%", 100 * m->value);
		if (isfinite(m->lo) && isfinite(m->hi))
			fprintf(out, " [%+.1f%%, %+.1f%%]", 100 * m->lo,
			    100 * m->hi);
		fputs("</dd>\n", out);
	}
	if (isfinite(v->endpoints_change)) {
		html_verdict_item(out, "ends of the range");
		fprintf(out, "%+.1f%%</dd>\n", 100 * v->endpoints_change);
	}
	gpu_clocks_html(&v->clocks, out);
	if (isfinite(v->detectable_change)) {
		html_verdict_item(out, "smallest detectable change");
		fprintf(out, "%.1f%% (%d%% of the time, at %lld runs per "
		    "cell)</dd>\n", 100 * v->detectable_change,
		    (int)(100 * BISECT_POWER + 0.5), v->runs_per_release);
	}
	if (v->more_runs_said && v->more_runs >= 0) {
		html_verdict_item(out, "to decide");
		fprintf(out, "about %lld more runs per cell</dd>\n",
		    v->more_runs);
	}
	if (u->ok) {
		html_verdict_item(out, "inconclusive");
		html_esc(out, u->from);
		fputs(" → ", out);
		html_esc(out, u->to);
		fprintf(out, ": %+.1f%%</dd>\n", 100 * u->change.value);
	}
}

/* The archives that matter and the commands, then each cell's. */
static void
section_reproduce(FILE *out, const struct report_reproduce *r)
{
	size_t i;

	fputs("<h3>Reproduce</h3>\n<pre>", out);
	for (i = 0; i < r->narchives; i++)
		html_markup(out, "# archive ", r->archives[i].version, ": ",
		    r->archives[i].url, " sha256 ", r->archives[i].sha256,
		    "\n", NULL);
	for (i = 0; i < r->ncommands; i++) {
		html_esc(out, r->commands[i]);
		fputc('\n', out);
	}
	fputs("</pre>\n", out);
	if (r->nruns == 0)
		return;
	fprintf(out, "<details class=\"runs\"><summary>Each cell as a run "
	    "executed it (%zu command lines)</summary>\n<pre>", r->nruns);
	for (i = 0; i < r->nruns; i++)
		html_markup(out, "# ", r->runs[i].version, " ",
		    r->runs[i].cell, "\n", r->runs[i].command, "\n", NULL);
	fputs("</pre>\n</details>\n", out);
}

static void
section_verdict(FILE *out, const struct report *rpt)
{
	const struct report_verdict *v = &rpt->verdict;
	char h1[16], h2[16];
	size_t i;

	fputs("<section id=\"verdict\">\n<h2>Verdict</h2>\n<p><span "
	    "class=\"status ", out);
	html_esc(out, v->status);
	fputs("\">", out);
	html_esc(out, v->status);
	fputs("</span> ", out);
	html_esc(out, v->reason);
	fputs("</p>\n<dl class=\"verdict\">\n", out);
	if (*v->change.first_bad) {
		html_verdict_item(out, "first bad");
		html_esc(out, v->change.first_bad);
		fputs("</dd>\n", out);
		html_verdict_item(out, "last good");
		html_esc(out, v->change.last_good);
		fputs("</dd>\n", out);
	}
	if (v->ncandidates > 1) {
		html_verdict_item(out, "candidates");
		for (i = 0; i < v->ncandidates; i++) {
			fputs(i ? ", " : "", out);
			html_esc(out, v->candidates[i]);
		}
		fputs(" (releases between could not be measured)</dd>\n", out);
	}
	if (v->gradual.ok)
		verdict_slide(out, &v->gradual);
	verdict_kind(out, v);
	verdict_figures(out, v);
	if (is_output(rpt)) {
		if (v->diff.ok) {
			html_verdict_item(out, "texts");
			html_markup(out, "<code>", short_hash(
			    v->last_good_sha256, h1, sizeof(h1)),
			    "</code> → <code>", short_hash(v->first_bad_sha256,
			    h2, sizeof(h2)), "</code>"
			    " (sha256, compared exactly)</dd>\n", NULL);
			html_verdict_item(out, "first difference");
			text_diff(out, v->diff.token, v->diff.before,
			    v->diff.after);
			fputs("</dd>\n", out);
		}
	} else {
		html_verdict_item(out, "confirmed");
		fputs(v->change.confirmed ?
		    "yes, by an interleaved re-measurement" : "no", out);
		fputs("</dd>\n", out);
	}
	fputs("</dl>\n", out);
	if (v->npoints > 1) {
		fputs("<p>Change points:</p>\n<ul>\n", out);
		for (i = 0; i < v->npoints; i++) {
			const struct report_point *p = &v->points[i];

			fputs("<li>", out);
			html_esc(out, p->last_good);
			fputs(" → ", out);
			html_esc(out, p->first_bad);
			fprintf(out, ": %+.1f%%, ", 100 *
			    p->metric_change.value);
			html_esc(out, p->kind);
			fputs(p->confirmed ? ", confirmed" : "", out);
			fputs("</li>\n", out);
		}
		fputs("</ul>\n", out);
	}
	section_reproduce(out, &rpt->reproduce);
	fputs("</section>\n", out);
}

/* One row per cell of a release; failures under it. */
static void
cell_rows(FILE *out, const struct report_release *r, size_t *nrows)
{
	int any = 0;

	for (size_t k = 0; k < r->ncells; k++) {
		const struct report_cell *c = &r->cells[k].c;

		fputs("<tr><td>", out);
		if (!any) {
			html_esc(out, r->version);
			fputs("</td><td>", out);
			html_esc(out, r->status);
		} else
			fputs("</td><td>", out);
		fprintf(out, "</td><td>%s", report_group_name(
		    r->cells[k].group));
		html_esc(out, r->cells[k].key);
		fprintf(out, "</td><td>%lld</td><td>%.4g</td><td>%.4g ± %.3g"
		    "</td><td>%.1f%%</td><td>", c->n, c->ms_median, c->ms,
		    c->ms_sd, 100 * c->cv);
		for (size_t i = 0; i < r->nflags; i++) {
			fputs(i ? ", " : "", out);
			html_esc(out, r->flags[i]);
		}
		fputs("</td></tr>\n", out);
		any = 1;
		(*nrows)++;
	}
	if (!any) {
		fputs("<tr><td>", out);
		html_esc(out, r->version);
		fputs("</td><td>", out);
		html_esc(out, r->status);
		fputs("</td><td></td><td></td><td></td><td></td><td></td>"
		    "<td></td></tr>\n", out);
		(*nrows)++;
	}
	for (size_t i = 0; i < r->nfailures; i++) {
		if (i == 5) {
			fprintf(out, "<tr><td></td><td colspan=\"7\" "
			    "class=\"fail\">… %zu failures in all "
			    "(bisectctl runs)</td></tr>\n", r->nfailures);
			break;
		}
		fputs("<tr><td></td><td colspan=\"7\" class=\"fail\">failed: ",
		    out);
		html_esc(out, r->failures[i].reason);
		fputs(": ", out);
		html_esc(out, r->failures[i].detail);
		fputs("</td></tr>\n", out);
	}
}

static void
section_cells(FILE *out, const struct report *rp)
{
	size_t nrows = 0;

	fputs("<section id=\"cells\">\n<h2>Cells</h2>\n<p>Times of one "
	    "process run (ms); n counts runs, CV is the spread between them."
	    "</p>\n<div class=\"cells\"><table>\n<thead><tr><th>release</th>"
	    "<th>status</th><th>cell</th><th>n</th><th>median ms</th>"
	    "<th>mean ± sd ms</th><th>CV</th><th>flags</th></tr></thead>\n"
	    "<tbody>\n", out);
	for (size_t i = 0; i < rp->nreleases; i++)
		cell_rows(out, &rp->releases[i], &nrows);
	fputs("</tbody></table></div>\n</section>\n", out);
}

/* "basert 0.2.0..0.2.6" */
static void
range_name(FILE *out, const struct report *rp)
{
	html_esc(out, rp->engine);
	fputc(' ', out);
	html_esc(out, rp->from);
	fputs("..", out);
	html_esc(out, rp->to);
}


static void
page_header(FILE *out, const struct report *rp)
{
	const struct report_machine *m = &rp->machine;

	html_page_open(out);
	range_name(out, rp);
	fputs(": ", out);
	html_esc(out, rp->verdict.status);
	fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>",
	    html_page_style);
	range_name(out, rp);
	fputs("</h1>\n<p class=\"meta\">metric ", out);
	html_esc(out, rp->metric);
	if (is_output(rp))
		fputs(" (the canary's texts compared exactly); weights ", out);
	else
		fprintf(out, ", threshold %.3g%%; weights ", 100 *
		    rp->threshold);
	html_esc(out, rp->weights);
	fputs(" sha256 ", out);
	html_esc(out, rp->weights_sha256 && *rp->weights_sha256 ?
	    rp->weights_sha256 : "(not pinned yet)");
	fputs("</p>\n", out);
	if (m->ok) {
		fputs("<p class=\"meta\">machine ", out);
		html_esc(out, m->cpu_model);
		fprintf(out, ", %lld cores, %.1f GiB, ", m->cores,
		    (double)m->mem_bytes / (1 << 30));
		html_esc(out, m->arch);
		fputs("; ", out);
		html_esc(out, m->os);
		fputs(", kernel ", out);
		html_esc(out, m->kernel);
		fputs(", host ", out);
		html_esc(out, m->hostname ? m->hostname : "");
		fputs("</p>\n", out);
	}
	{
		const json_t *x;
		size_t i;

		json_array_foreach(rp->reanchored, i, x) {
			fputs("<p class=\"meta\">re-anchored: ", out);
			html_esc(out, *rep_str(x, "why") ? rep_str(x, "why") :
			    rep_str(x, "from"));
			fputs("; the ends were measured again on node ", out);
			html_esc(out, rep_str(x, "to"));
			fputs("</p>\n", out);
		}
	}
}

/* Release i's decode cell under key; NULL: none. */
static const struct report_cell *
decode_cell(const struct report *rp, size_t i, const char *key)
{
	return report_release_cell(&rp->releases[i], REPORT_TG, key);
}

/*
 * Decode beside prefill: per decode cell, its tok/s across the range in
 * version order, a dot and its 95% interval per release that measured
 * it (the ends and the boundary pairs at least), a dashed line at every
 * change point.  The field report's lesson: whoever watches one number
 * misses the regression in the other.
 */
static void
section_decode(FILE *out, const struct report *rp)
{
	const struct report_verdict *v = &rp->verdict;
	const struct report_release *keys = NULL;
	size_t i, n = rp->nreleases, every = n > 10 ? (n + 9) / 10 : 1;

	/* The decode cells of the first release that has any. */
	for (i = 0; i < rp->nreleases && keys == NULL; i++)
		for (size_t k = 0; k < rp->releases[i].ncells; k++)
			if (rp->releases[i].cells[k].group == REPORT_TG) {
				keys = &rp->releases[i];
				break;
			}
	if (keys == NULL)
		return;
	fputs("<section id=\"decode\">\n<h2>Decode across the range</h2>\n"
	    "<p>Decode throughput beside the prefill figures, in version "
	    "order: a dot and its 95% interval per release that measured it "
	    "(the whole matrix is measured on the ends and each boundary "
	    "pair), a dashed line at each change point.</p>\n", out);
	for (size_t kc = 0; kc < keys->ncells; kc++) {
		struct plot_axes a = { -0.5, (double)n - 0.5, INFINITY,
		    -INFINITY };
		const char *key = keys->cells[kc].key;
		char id[128], title[160];

		if (keys->cells[kc].group != REPORT_TG)
			continue;
		for (i = 0; i < n; i++) {
			const struct report_cell *x = decode_cell(rp, i, key);
			double t = x ? x->tps : NAN, sd = x ? x->sd : NAN;
			double k = x ? (double)x->n : 0;
			double h = k > 1 ? stats_t_quantile(0.975, k - 1) *
			    sd / sqrt(k) : 0;

			if (!isfinite(t))
				continue;
			a.y0 = fmin(a.y0, t - (isfinite(h) ? h : 0));
			a.y1 = fmax(a.y1, t + (isfinite(h) ? h : 0));
		}
		if (a.y0 > 0 && a.y0 < a.y1 * 0.5)
			a.y0 = 0;
		svg_nice_range(&a.y0, &a.y1);
		/* tg32/prose: an id of letters, digits and dashes. */
		snprintf(id, sizeof(id), "decode-tg%s", key);
		for (char *q = id; *q; q++)
			if (*q == '/')
				*q = '-';
		snprintf(title, sizeof(title), "decode tg%s (tok/s)", key);
		svg_open(out, id, title);
		svg_axes(out, &a, 0, "release (version order)", title);
		for (i = 0; i < n; i++) {
			const struct report_cell *x = decode_cell(rp, i, key);
			double px = svg_px(&a, (double)i);
			double t = x ? x->tps : NAN, sd = x ? x->sd : NAN;
			double k = x ? (double)x->n : 0;
			double h = k > 1 ? stats_t_quantile(0.975, k - 1) *
			    sd / sqrt(k) : NAN;

			if (i % every == 0 || i == n - 1) {
				fprintf(out, "<text x=\"%.1f\" y=\"%d\" "
				    "text-anchor=\"middle\">", px, PLOT_H -
				    PAD_B + 16);
				html_esc(out, rp->releases[i].version);
				fputs("</text>\n", out);
			}
			if (!isfinite(t))
				continue;
			if (isfinite(h))
				fprintf(out, "<line class=\"ci\" x1=\"%.1f\" "
				    "x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n",
				    px, px, svg_py(&a, t - h), svg_py(&a,
				    t + h));
			fprintf(out, "<circle class=\"metric\" cx=\"%.1f\" "
			    "cy=\"%.1f\" r=\"3\"><title>", px, svg_py(&a, t));
			html_esc(out, rp->releases[i].version);
			fprintf(out, ": %.4g tok/s (%lld runs)</title></circle>"
			    "\n", t, (long long)k);
		}
		for (i = 0; i < v->npoints; i++) {
			size_t g, b;

			if (find_release(rp, v->points[i].last_good,
			    &g) == NULL || find_release(rp,
			    v->points[i].first_bad, &b) == NULL)
				continue;
			fprintf(out, "<line class=\"change\" x1=\"%.1f\" "
			    "x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>\n",
			    between(&a, g, b), between(&a, g, b), PAD_T,
			    PLOT_H - PAD_B);
		}
		fputs("</svg>\n", out);
	}
	fputs("</section>\n", out);
}

/*
 * What else changed: a table per pair of releases (the ends, each
 * boundary), every metric of the matrix with its change, interval and
 * standing against half the threshold; slowdowns marked.
 */
static void
section_else_changed(FILE *out, const struct report *rp)
{
	double cut = rp->threshold / 2;
	const char *from = NULL, *to = NULL;
	char interval[64];

	if (rp->nchanges == 0)
		return;
	fprintf(out, "<section id=\"else-changed\">\n<h2>What else changed"
	    "</h2>\n<p>Every metric of the matrix, not only the one searched: "
	    "a move counts past half the threshold (%.3g%%) either way; "
	    "throughputs (tok/s) rise when faster, costs (ms) when "
	    "slower.</p>\n", 100 * cut);
	for (size_t i = 0; i < rp->nchanges; i++) {
		const struct report_change *x = &rp->changes[i];

		if (from == NULL || strcmp(from, x->from) != 0 ||
		    strcmp(to, x->to) != 0) {
			if (from != NULL)
				fputs("</tbody></table>\n", out);
			from = x->from;
			to = x->to;
			fputs("<table class=\"changes\"><caption>", out);
			html_esc(out, from);
			fputs(" → ", out);
			html_esc(out, to);
			fputs("</caption>\n<thead><tr><th>metric</th><th>change"
			    "</th><th>95% interval</th><th>moved</th></tr>"
			    "</thead><tbody>\n", out);
		}
		fprintf(out, "<tr class=\"%s\"><td>", x->moved);
		html_esc(out, x->what);
		fputs(" (", out);
		html_esc(out, x->metric);
		fprintf(out, ")%s</td><td>", x->searched ? ", searched" : "");
		fprintf(out, "%+.1f%% %s</td><td>", 100 * x->change, x->unit);
		fprintf(out, "%s</td><td>", rep_pct_lohi(x->lo, x->hi, interval,
		    sizeof(interval)));
		html_esc(out, x->moved);
		if (x->bisect != NULL) {
			fputs("<br/>bisect it: <code>", out);
			html_esc(out, x->bisect);
			fputs("</code>", out);
		}
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table>\n</section>\n", out);
}

int
report_html(const json_t *report, FILE *out)
{
	struct report rp;
	json_t *rep;

	/* Control characters written out first, as every rendering for
	 * people does; html_esc() then handles markup. */
	if ((rep = text_escape_json(report)) == NULL)
		return -1;
	if (report_read(rep, &rp) < 0) {
		json_decref(rep);
		return -1;
	}
	page_header(out, &rp);
	section_verdict(out, &rp);
	section_else_changed(out, &rp);
	/* An output bisect measured texts, not times: no time plots. */
	if (!is_output(&rp)) {
		section_fit(out, &rp);
		section_metric(out, &rp);
		section_decode(out, &rp);
		section_ratios(out, &rp.verdict);
	}
	section_canary(out, &rp);
	gpu_releases_html(&rp, out);
	serve_html(&rp, out);
	section_cells(out, &rp);
	report_clear(&rp);
	fputs("</body>\n</html>\n", out);
	json_decref(rep);
	return ferror(out) ? -1 : 0;
}
