/*
 * history_print.c: an engine's history (history.h) as text for a
 * terminal, CSV, JSON and an HTML page that draws each series with its
 * change points marked.  Versions are upstream text: each goes out
 * escaped for where it is shown.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config/conf.h"
#include "history.h"
#include "page.h"
#include "text_escape.h"

/* s with its control characters written out. */
static void
put_safe(FILE *out, const char *s)
{
	char *t = text_escape(s, 0);

	fputs(t ? t : "?", out);
	free(t);
}

/* The JSON's entry of the series' point k (history_json() made it). */
static const json_t *
point_entry(const json_t *series, size_t k)
{
	return json_array_get(json_object_get(series, "change_points"), k);
}

static double
real_at(const json_t *a, size_t i)
{
	const json_t *x = json_array_get(a, i);

	return x ? json_number_value(x) : NAN;
}

/* The point of s starting at release k, or NULL. */
static const struct cp_point *
point_at(const struct history_series *s, size_t k, size_t *which)
{
	for (size_t i = 0; i < s->cp.n; i++)
		if (s->cp.v[i].at == k) {
			*which = i;
			return &s->cp.v[i];
		}
	return NULL;
}

static void
print_text(const struct history *h, const json_t *j, FILE *out)
{
	fprintf(out, "history of %s: %zu releases stored; change points by "
	    "E-divisive means, each at p <= %g (%d permutations)\n",
	    h->eng->name, h->releases, CP_ALPHA, CP_PERMUTATIONS);
	for (size_t i = 0; i < h->nseries; i++) {
		const struct history_series *s = &h->series[i];
		const json_t *js = json_array_get(json_object_get(j, "series"),
		    i);
		const json_t *rel = json_object_get(js, "releases");

		fprintf(out, "\n%s (%s, %s): %zu releases measured, ",
		    s->metric, s->what, history_unit(s), s->n);
		if (s->cp.n == 0)
			fprintf(out, "no change point (the test's p %.2g)\n",
			    s->cp.last_p);
		else
			fprintf(out, "%zu change point%s\n", s->cp.n,
			    s->cp.n == 1 ? "" : "s");
		for (size_t k = 0; k < s->n; k++) {
			const json_t *r = json_array_get(rel, k);
			const json_t *ci = json_object_get(r, "ci");
			size_t w;

			fputs(point_at(s, k, &w) ? "> " : "  ", out);
			put_safe(out, s->v[k].version);
			fprintf(out, "  %.4g", json_number_value(json_object_get(
			    r, "value")));
			if (json_is_array(ci))
				fprintf(out, " [%.4g, %.4g]", real_at(ci, 0),
				    real_at(ci, 1));
			fprintf(out, "  n %zu\n", s->v[k].n);
		}
		for (size_t k = 0; k < s->cp.n; k++) {
			const struct cp_point *p = &s->cp.v[k];
			const json_t *pe = point_entry(js, k);
			const json_t *ci = json_object_get(pe, "change_ci");

			fputs("  change point at ", out);
			put_safe(out, s->v[p->at].version);
			fputs(" (after ", out);
			put_safe(out, s->v[p->at - 1].version);
			fprintf(out, "): %s, %+.1f%%", p->up ? "slower" :
			    "faster", 100 * json_number_value(json_object_get(
			    pe, "change")));
			if (json_is_array(ci))
				fprintf(out, " [%+.1f%%, %+.1f%%]", 100 *
				    real_at(ci, 0), 100 * real_at(ci, 1));
			fprintf(out, " %s, p %.2g", history_unit(s), p->p);
			if (p->slide)
				fprintf(out, ", part of slide %d", p->slide);
			fputc('\n', out);
			if (json_is_string(json_object_get(pe, "bisect"))) {
				fputs("    bisect it: ", out);
				put_safe(out, json_string_value(json_object_get(
				    pe, "bisect")));
				fputc('\n', out);
			}
			fputs("    report:    ", out);
			put_safe(out, json_string_value(json_object_get(pe,
			    "report")));
			fputc('\n', out);
		}
	}
}

static void
print_csv(const struct history *h, const json_t *j, FILE *out)
{
	fputs("metric,version,n,value,value_lo,value_hi,unit,change_point,"
	    "change,change_lo,change_hi,p,slide\n", out);
	for (size_t i = 0; i < h->nseries; i++) {
		const struct history_series *s = &h->series[i];
		const json_t *js = json_array_get(json_object_get(j, "series"),
		    i);
		const json_t *rel = json_object_get(js, "releases");

		for (size_t k = 0; k < s->n; k++) {
			const json_t *r = json_array_get(rel, k);
			const json_t *ci = json_object_get(r, "ci");
			const struct cp_point *p;
			size_t w;

			text_csv_field(out, s->metric);
			fputc(',', out);
			text_csv_field(out, s->v[k].version);
			text_csv_number(out, (double)s->v[k].n);
			text_csv_number(out, json_number_value(json_object_get(
			    r, "value")));
			text_csv_number(out, real_at(ci, 0));
			text_csv_number(out, real_at(ci, 1));
			fputc(',', out);
			text_csv_field(out, history_unit(s));
			fputc(',', out);
			if ((p = point_at(s, k, &w)) == NULL) {
				fputs(",,,,,\n", out);
				continue;
			}
			ci = json_object_get(point_entry(js, w), "change_ci");
			text_csv_field(out, p->up ? "slower" : "faster");
			text_csv_number(out, json_number_value(json_object_get(
			    point_entry(js, w), "change")));
			text_csv_number(out, real_at(ci, 0));
			text_csv_number(out, real_at(ci, 1));
			text_csv_number(out, p->p);
			text_csv_number(out, p->slide ? p->slide : NAN);
			fputc('\n', out);
		}
	}
}

/* One series drawn: each release's value and interval, each segment's
 * level, a dashed line before each change point's first release. */
static void
html_series(const struct history_series *s, const json_t *js, size_t idx,
    FILE *out)
{
	const json_t *rel = json_object_get(js, "releases");
	struct plot_axes a = { -0.5, (double)s->n - 0.5, INFINITY, -INFINITY };
	size_t every = s->n > 10 ? (s->n + 9) / 10 : 1, from = 0;
	char id[32], label[160];

	for (size_t k = 0; k < s->n; k++) {
		const json_t *r = json_array_get(rel, k);
		const json_t *ci = json_object_get(r, "ci");
		double v = json_number_value(json_object_get(r, "value"));

		a.y0 = fmin(a.y0, json_is_array(ci) ? real_at(ci, 0) : v);
		a.y1 = fmax(a.y1, json_is_array(ci) ? real_at(ci, 1) : v);
	}
	if (a.y0 > 0 && a.y0 < a.y1 * 0.5)
		a.y0 = 0;
	svg_nice_range(&a.y0, &a.y1);
	snprintf(id, sizeof(id), "history-%zu", idx);
	snprintf(label, sizeof(label), "%s (%s)", s->what, history_unit(s));
	svg_open(out, id, label);
	svg_axes(out, &a, 0, "release (version order)", label);
	for (size_t k = 0; k < s->n; k++) {
		const json_t *r = json_array_get(rel, k);
		const json_t *ci = json_object_get(r, "ci");
		double x = svg_px(&a, (double)k);
		double v = json_number_value(json_object_get(r, "value"));

		if (k % every == 0 || k == s->n - 1) {
			fprintf(out, "<text x=\"%.1f\" y=\"%d\" "
			    "text-anchor=\"middle\">", x, PLOT_H - PAD_B + 16);
			html_esc(out, s->v[k].version);
			fputs("</text>\n", out);
		}
		if (json_is_array(ci))
			fprintf(out, "<line class=\"ci\" x1=\"%.1f\" x2=\"%.1f\" "
			    "y1=\"%.1f\" y2=\"%.1f\"/>\n", x, x, svg_py(&a,
			    real_at(ci, 0)), svg_py(&a, real_at(ci, 1)));
		fprintf(out, "<circle class=\"metric\" cx=\"%.1f\" cy=\"%.1f\" "
		    "r=\"3\"><title>", x, svg_py(&a, v));
		html_esc(out, s->v[k].version);
		fprintf(out, ": %.4g %s, %zu runs</title></circle>\n", v,
		    history_unit(s), s->v[k].n);
	}
	/* Each segment's level: the mean of its releases' values. */
	for (size_t k = 0; k <= s->cp.n; k++) {
		size_t to = k < s->cp.n ? s->cp.v[k].at : s->n;
		double sum = 0;

		for (size_t r = from; r < to; r++)
			sum += json_number_value(json_object_get(
			    json_array_get(rel, r), "value"));
		if (to > from) {
			svg_xy(out, "<path class=\"line-good\" d=\"", svg_px(&a,
			    (double)from - 0.4), svg_py(&a, sum / (double)(to -
			    from)));
			svg_xy(out, "L", svg_px(&a, (double)to - 0.6),
			    svg_py(&a, sum / (double)(to - from)));
			fputs("\"/>\n", out);
		}
		from = to;
	}
	for (size_t k = 0; k < s->cp.n; k++) {
		const json_t *pe = point_entry(js, k);
		double x = svg_px(&a, (double)s->cp.v[k].at - 0.5);

		fprintf(out, "<line class=\"change\" x1=\"%.1f\" x2=\"%.1f\" "
		    "y1=\"%d\" y2=\"%d\"/><text x=\"%.1f\" y=\"%d\" "
		    "text-anchor=\"middle\">%+.0f%%</text>\n", x, x, PAD_T,
		    PLOT_H - PAD_B, x, PAD_T + 10, 100 * json_number_value(
		    json_object_get(pe, "change")));
	}
	fputs("</svg>\n", out);
}

static void
print_html(const struct history *h, const json_t *j, FILE *out)
{
	html_page_open(out);
	html_markup(out, "history of ", h->eng->name, NULL);
	fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>",
	    html_page_style);
	html_markup(out, "History of ", h->eng->name, "</h1>\n<p>", NULL);
	fprintf(out, "%zu releases stored. Change points by E-divisive means, "
	    "each at p ≤ %g (%d permutations); a dot and its 95%% interval "
	    "per measured release, a line at each segment's level, a dashed "
	    "line before each change point.</p>\n", h->releases, CP_ALPHA,
	    CP_PERMUTATIONS);
	for (size_t i = 0; i < h->nseries; i++) {
		const struct history_series *s = &h->series[i];
		const json_t *js = json_array_get(json_object_get(j, "series"),
		    i);

		html_markup(out, "<section>\n<h2>", s->metric, " (", s->what,
		    ")</h2>\n", NULL);
		if (s->n > 0)
			html_series(s, js, i, out);
		fprintf(out, "<p>%zu releases measured, %zu change point%s"
		    "%s</p>\n", s->n, s->cp.n, s->cp.n == 1 ? "" : "s",
		    s->cp.n ? ":" : ".");
		if (s->cp.n)
			fputs("<ul>\n", out);
		for (size_t k = 0; k < s->cp.n; k++) {
			const struct cp_point *p = &s->cp.v[k];
			const json_t *pe = point_entry(js, k);
			const json_t *ci = json_object_get(pe, "change_ci");
			const char *bisect = json_string_value(json_object_get(
			    pe, "bisect"));

			html_markup(out, "<li>", s->v[p->at].version,
			    " (after ", s->v[p->at - 1].version, "): ", NULL);
			fprintf(out, "%s, %+.1f%%", p->up ? "slower" : "faster",
			    100 * json_number_value(json_object_get(pe,
			    "change")));
			if (json_is_array(ci))
				fprintf(out, " [%+.1f%%, %+.1f%%]", 100 *
				    real_at(ci, 0), 100 * real_at(ci, 1));
			fprintf(out, ", p %.2g%s", p->p, p->slide ?
			    ", part of a slide" : "");
			if (bisect)
				html_markup(out, "<br/><code>", bisect,
				    "</code>", NULL);
			html_markup(out, "<br/><code>", json_string_value(
			    json_object_get(pe, "report")), "</code></li>\n",
			    NULL);
		}
		if (s->cp.n)
			fputs("</ul>\n", out);
		fputs("</section>\n", out);
	}
	fputs("</body>\n</html>\n", out);
}

void
history_print(const struct history *h, enum report_format f, FILE *out)
{
	json_t *j = history_json(h);

	if (j == NULL)
		return;
	switch (f) {
	case REPORT_JSON:
		json_dumpf(j, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', out);
		break;
	case REPORT_CSV:
		print_csv(h, j, out);
		break;
	case REPORT_HTML:
		print_html(h, j, out);
		break;
	default:
		print_text(h, j, out);
		break;
	}
	json_decref(j);
}
