/*
 * ablate_html.c: an ablation's report as one self-contained page of the
 * report's kind (see html.h): the verdict with the positive control, the
 * baseline, a bar per switch of the share of the runtime it removed.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "fields.h"
#include "html.h"
#include "page.h"
#include "text_escape.h"

/* The figure key of o and its interval key_ci, scaled. */
static void
abl_figure(FILE *out, const json_t *o, const char *key, double scale)
{
	char ci_key[64];

	snprintf(ci_key, sizeof(ci_key), "%s_ci", key);
	html_num_ci(out, rep_real(o, key), json_object_get(o, ci_key), 0, scale);
}

/* What a switch was judged to do, in words. */
static void
abl_effect(FILE *out, const json_t *sw)
{
	const char *effect = rep_str(sw, "effect");

	if (json_is_integer(json_object_get(sw, "rank")))
		fprintf(out, "rank %lld: %s time",
		    (long long)json_integer_value(json_object_get(sw, "rank")),
		    strcmp(effect, "adds") == 0 ? "adds" : "removes");
	else if (strcmp(effect, "none") == 0)
		fprintf(out, "no measurable effect (the runs would have seen "
		    "%.2g%% of the runtime)", 100 * rep_real(sw,
		    "detectable_share"));
	else if (strcmp(effect, "unmeasured") == 0) {
		fprintf(out, "not measured: %lld runs failed, the last: ",
		    (long long)json_integer_value(json_object_get(sw,
		    "failed_runs")));
		html_esc(out, *rep_str(sw, "failure") ? rep_str(sw,
		    "failure") : "no reason stored");
	}
	else if (strcmp(effect, "not-judged") == 0)
		fputs("not judged: the control did not work", out);
	else
		html_esc(out, effect);
}

/*
 * The share of the runtime each switch removed, a bar with its 95%
 * interval per switch, the control in its own colour, and the least
 * the control had to remove (control-min) as a dashed line.
 */
static void
abl_plot(FILE *out, const json_t *rep)
{
	const json_t *sws = json_object_get(rep, "switches"), *sw;
	const double row = 28;
	struct plot_axes a;
	double min_share = rep_real(rep, "control_min");
	size_t i, n = json_array_size(sws);
	int h;

	if (n == 0)
		return;
	a.x0 = 0;
	a.x1 = isfinite(min_share) ? min_share : 0;
	json_array_foreach(sws, i, sw) {
		const json_t *ci = json_object_get(sw,
		    "runtime_removed_share_ci");
		double v[3] = { rep_real(sw, "runtime_removed_share"),
		    rep_at(ci, 0), rep_at(ci, 1) };

		for (int k = 0; k < 3; k++)
			if (isfinite(v[k])) {
				a.x0 = fmin(a.x0, 100 * v[k]);
				a.x1 = fmax(a.x1, 100 * v[k]);
			}
	}
	svg_nice_range(&a.x0, &a.x1);
	a.y0 = 0;
	a.y1 = 1;
	h = PAD_T + (int)(row * (double)n) + PAD_B;
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "id=\"ablation-plot\" viewBox=\"0 0 %d %d\" role=\"img\" "
	    "aria-label=\"share of the runtime each switch removed\">"
	    "<title>share of the runtime each switch removed</title>\n",
	    PLOT_W, h);
	for (double x = a.x0, step = svg_tick_step(a.x1 - a.x0); x <= a.x1 +
	    step / 2; x += step)
		fprintf(out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" "
		    "y1=\"%d\" y2=\"%d\"/><text x=\"%.1f\" y=\"%d\" "
		    "text-anchor=\"middle\">%.4g</text>\n", svg_px(&a, x),
		    svg_px(&a, x), PAD_T, h - PAD_B, svg_px(&a, x), h - PAD_B + 16,
		    fabs(x) < step / 1e6 ? 0 : x);
	fprintf(out, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" "
	    "y2=\"%d\"/>\n", svg_px(&a, 0), svg_px(&a, 0), PAD_T, h - PAD_B);
	if (isfinite(min_share))
		fprintf(out, "<line class=\"control-min\" x1=\"%.1f\" "
		    "x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>\n", svg_px(&a, 100 *
		    min_share), svg_px(&a, 100 * min_share), PAD_T, h - PAD_B);
	json_array_foreach(sws, i, sw) {
		const json_t *ci = json_object_get(sw,
		    "runtime_removed_share_ci");
		double v = 100 * rep_real(sw, "runtime_removed_share");
		double y = PAD_T + row * (double)i;

		fprintf(out, "<g class=\"switch\"><text x=\"%d\" y=\"%.1f\" "
		    "text-anchor=\"end\">", PAD_L + 56, y + row / 2 + 4);
		html_esc(out, rep_str(sw, "name"));
		fputs("</text>", out);
		if (isfinite(v))
			fprintf(out, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" "
			    "width=\"%.1f\" height=\"%.1f\"/>",
			    json_is_true(json_object_get(sw, "control")) ?
			    "control" : "removed", fmin(svg_px(&a, 0), svg_px(&a, v)),
			    y + 6, fabs(svg_px(&a, v) - svg_px(&a, 0)), row - 12);
		if (isfinite(rep_at(ci, 0)) && isfinite(rep_at(ci, 1)))
			fprintf(out, "<line class=\"ci\" x1=\"%.1f\" "
			    "x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
			    svg_px(&a, 100 * rep_at(ci, 0)), svg_px(&a, 100 *
			    rep_at(ci, 1)), y + row / 2, y + row / 2);
		fputs("</g>\n", out);
	}
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">share "
	    "of the runtime removed at %lld tokens (%%); dashed: "
	    "control-min</text>\n</svg>\n", (PAD_L + PLOT_W - PAD_R) / 2,
	    h - 6, (long long)json_integer_value(json_object_get(rep,
	    "tokens")));
}

static void
abl_switches(FILE *out, const json_t *rep)
{
	const json_t *sw;
	size_t i;

	fprintf(out, "<section id=\"switches\">\n<h2>Switches</h2>\n<p>Time "
	    "each switch removed from the baseline, with 95%% intervals: at "
	    "%lld tokens, per token and fixed (ms).</p>\n",
	    (long long)json_integer_value(json_object_get(rep, "tokens")));
	abl_plot(out, rep);
	fputs("<div class=\"cells\"><table>\n<thead><tr><th>switch</th>"
	    "<th>effect</th><th>runs</th><th>removed ms</th><th>share %</th>"
	    "<th>per token ms</th><th>fixed ms</th></tr></thead>\n<tbody>\n",
	    out);
	json_array_foreach(json_object_get(rep, "switches"), i, sw) {
		fputs("<tr class=\"switch\"><td>", out);
		html_esc(out, rep_str(sw, "name"));
		if (json_is_true(json_object_get(sw, "control")))
			fputs(" (control)", out);
		fputs("</td><td class=\"effect\">", out);
		abl_effect(out, sw);
		fprintf(out, "</td><td>%lld</td><td>", (long long)
		    json_integer_value(json_object_get(sw, "runs")));
		abl_figure(out, sw, "runtime_removed_ms", 1);
		fputs("</td><td>", out);
		abl_figure(out, sw, "runtime_removed_share", 100);
		fputs("</td><td class=\"per-token\">", out);
		abl_figure(out, sw, "per_token_removed_ms", 1);
		fputs("</td><td class=\"fixed\">", out);
		if (*rep_str(sw, "fixed_not_estimable")) {
			fputs("not estimable: ", out);
			html_esc(out, rep_str(sw, "fixed_not_estimable"));
		} else
			abl_figure(out, sw, "fixed_removed_ms", 1);
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table></div>\n</section>\n", out);
}

int
ablate_html(const json_t *report, FILE *out)
{
	const json_t *base, *ctl = NULL, *sw, *w;
	json_t *rep;
	const char *status;
	char key[24];
	size_t i;

	if ((rep = text_escape_json(report)) == NULL)
		return -1;
	base = json_object_get(rep, "baseline");
	w = json_object_get(rep, "weights");
	status = rep_str(rep, "status");
	json_array_foreach(json_object_get(rep, "switches"), i, sw)
		if (json_is_true(json_object_get(sw, "control")))
			ctl = sw;
	html_page_open(out);
	html_markup(out, "Ablation of ", rep_str(rep, "engine"), " ",
	    rep_str(rep, "version"), ": ", status, "</title>\n<style>", NULL);
	fprintf(out, "%s</style>\n</head>\n<body>\n", html_page_style);
	html_markup(out, "<h1>Ablation of ", rep_str(rep, "engine"), " ",
	    rep_str(rep, "version"), "</h1>\n<p class=\"meta\">archive sha256 ",
	    rep_str(rep, "sha256"), "; weights ", rep_str(w, "name"),
	    " sha256 ", rep_str(w, "sha256"), "; fit at", NULL);
	json_array_foreach(json_object_get(rep, "fit"), i, sw)
		fprintf(out, "%s%lld", i ? ", " : " ",
		    (long long)json_integer_value(sw));
	fputs(" tokens</p>\n", out);

	html_markup(out, "<section id=\"verdict\">\n<h2>Verdict</h2>\n<p><span "
	    "class=\"status ", status, "\">", status, "</span> ",
	    rep_str(rep, "reason"), "</p>\n", NULL);
	if (strcmp(status, "inert") == 0)
		fputs("<p class=\"inert\">The switches look inert in this "
		    "binary: the control did not move the runtime, so no "
		    "switch is ranked and none is said to cost nothing.</p>\n",
		    out);
	else if (strcmp(status, "control-adds") == 0)
		fputs("<p class=\"inert\">The control made the engine slower: "
		    "a control must turn a heavy part off and remove time, so "
		    "no switch is ranked.</p>\n", out);
	fputs("<dl class=\"verdict\">\n", out);
	html_verdict_item(out, "positive control");
	html_esc(out, rep_str(rep, "control"));
	fputs(": ", out);
	if (ctl != NULL)
		abl_figure(out, ctl, "runtime_removed_share", 100);
	fprintf(out, "%% of the runtime removed; %s the noise, %s "
	    "control-min (%.3g%%)</dd>\n", json_is_true(json_object_get(rep,
	    "control_beyond_noise")) ? "beyond" : "not beyond",
	    json_is_true(json_object_get(rep, "control_enough")) ?
	    "at least" : "less than", 100 * rep_real(rep, "control_min"));
	snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(
	    json_object_get(rep, "tokens")));
	html_verdict_item(out, "baseline");
	fprintf(out, "%.4g ms at %s tokens (%lld runs); per token ", rep_real(
	    json_object_get(base, key), "ms"), key, (long long)
	    json_integer_value(json_object_get(json_object_get(base, key),
	    "runs")));
	abl_figure(out, base, "per_token_ms", 1);
	fputs(" ms, fixed ", out);
	abl_figure(out, base, "fixed_ms", 1);
	fputs(" ms</dd>\n</dl>\n</section>\n", out);
	abl_switches(out, rep);
	fputs("</body>\n</html>\n", out);
	json_decref(rep);
	return ferror(out) ? -1 : 0;
}
