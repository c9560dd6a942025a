/*
 * trend.c: the status page's plot of an engine's releases (see
 * trend.h), drawn with the report's plotting helpers (page.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fields.h"
#include "page.h"
#include "report.h"
#include "text_escape.h"
#include "trend.h"

const char trend_style[] =
    "figure.trend{margin:.4em 0}"
    "figure.trend figcaption{font-size:.9em;color:#333}"
    "svg .trend-pp{stroke:#1f5fa8;stroke-width:2;fill:none}"
    "svg .dot-pp{fill:#1f5fa8;stroke:#1f5fa8}"
    "svg .trend-tg{stroke:#b26b00;stroke-width:2;fill:none;"
    "stroke-dasharray:6 3}"
    "svg .dot-tg{fill:#fff;stroke:#b26b00;stroke-width:1.5}"
    ".key-pp,.key-tg{display:inline-block;width:1.6em;height:0;"
    "vertical-align:middle;margin-right:.3em}"
    ".key-pp{border-top:2px solid #1f5fa8}"
    ".key-tg{border-top:2px dashed #b26b00}";

/* One figure across the releases: ms, NAN where not measured. */
struct series {
	const char *name;	/* "pp" or "tg": its classes' suffix */
	const char *what;	/* for people */
	double *v;		/* per release; malloced */
	size_t first, last;	/* the first and last measured */
	int any;
};

/* Decode time per generated token (ms) of a release: its first decode
 * cell's, the engine's first generation length and content. */
static double
decode_ms(const struct report_release *rel)
{
	double tps = NAN;

	for (size_t k = 0; k < rel->ncells; k++)
		if (rel->cells[k].group == REPORT_TG) {
			tps = rel->cells[k].c.tps;
			break;
		}
	return tps > 0 ? 1000 / tps : NAN;
}

static double
change_pct(const struct series *s, size_t i)
{
	return 100 * (s->v[i] / s->v[s->first] - 1);
}

/* The line through a figure's measured releases, broken where one is
 * not, and a dot with its title for each. */
static void
draw_series(FILE *out, const struct plot_axes *a, const struct series *s,
    const struct report *rp)
{
	const char *lead = "M";
	size_t i, n = rp->nreleases;

	if (!s->any)
		return;
	fprintf(out, "<path class=\"trend-%s\" d=\"", s->name);
	for (i = 0; i < n; i++) {
		if (!isfinite(s->v[i])) {
			lead = "M";
			continue;
		}
		svg_xy(out, lead, svg_px(a, (double)i), svg_py(a,
		    change_pct(s, i)));
		lead = "L";
	}
	fputs("\"/>\n", out);
	for (i = 0; i < n; i++) {
		if (!isfinite(s->v[i]))
			continue;
		fprintf(out, "<circle class=\"dot-%s\" cx=\"", s->name);
		svg_coord(out, svg_px(a, (double)i));
		fputs("\" cy=\"", out);
		svg_coord(out, svg_py(a, change_pct(s, i)));
		fputs("\" r=\"3.5\"><title>", out);
		html_esc(out, rp->releases[i].version);
		fprintf(out, ": %s %.4g ms (%+.1f%%)</title></circle>\n",
		    s->what, s->v[i], change_pct(s, i));
	}
}

/* The release of rp named version: its index, or n. */
static size_t
release_index(const struct report *rp, const char *version)
{
	for (size_t i = 0; i < rp->nreleases; i++)
		if (strcmp(rp->releases[i].version, version) == 0)
			return i;
	return rp->nreleases;
}

/* A dashed line between the last good and the first bad release of
 * each change point. */
static void
draw_changes(FILE *out, const struct plot_axes *a, const json_t *rep,
    const struct report *rp)
{
	const json_t *cp;
	size_t i, n = rp->nreleases;

	json_array_foreach(json_object_get(json_object_get(rep, "verdict"),
	    "change_points"), i, cp) {
		size_t g = release_index(rp, rep_str(cp, "last_good"));
		size_t b = release_index(rp, rep_str(cp, "first_bad"));
		double x;

		if (g >= n || b >= n)
			continue;
		x = (svg_px(a, (double)g) + svg_px(a, (double)b)) / 2;
		fputs("<line class=\"change\" x1=\"", out);
		svg_coord(out, x);
		fputs("\" x2=\"", out);
		svg_coord(out, x);
		fprintf(out, "\" y1=\"%d\" y2=\"%d\"><title>change at ", PAD_T,
		    PLOT_H - PAD_B);
		html_esc(out, rep_str(cp, "first_bad"));
		fputs("</title></line>\n", out);
	}
}

/* "prefill per-token cost 0.025 ms at 0.2.0, 0.075 ms at 0.2.6
 * (+200.0%)" with its key. */
static void
caption_series(FILE *out, const struct series *s, const struct report *rp)
{
	fprintf(out, "<span class=\"key-%s\"></span>%s ", s->name, s->what);
	if (!s->any) {
		fputs("not measured", out);
		return;
	}
	fprintf(out, "%.4g ms at ", s->v[s->first]);
	html_esc(out, rp->releases[s->first].version);
	if (s->last == s->first)
		return;
	fprintf(out, ", %.4g ms at ", s->v[s->last]);
	html_esc(out, rp->releases[s->last].version);
	fprintf(out, " (%+.1f%%)", change_pct(s, s->last));
}

static void
draw(FILE *out, const char *id, const json_t *rep, const struct report *rp,
    struct series *s)
{
	size_t i, n = rp->nreleases, every;
	struct plot_axes a = { -0.5, (double)n - 0.5, 0, 0 };

	for (int k = 0; k < 2; k++)
		for (i = 0; s[k].any && i < n; i++)
			if (isfinite(s[k].v[i])) {
				a.y0 = fmin(a.y0, change_pct(&s[k], i));
				a.y1 = fmax(a.y1, change_pct(&s[k], i));
			}
	svg_nice_range(&a.y0, &a.y1);
	fputs("<figure class=\"trend\">\n", out);
	svg_open(out, id, "Prefill cost per token and decode time per token "
	    "of each release, as the change since the first");
	svg_axes(out, &a, 0, "release (version order)",
	    "change since the first (%)");
	fprintf(out, "<line class=\"one\" x1=\"%d\" x2=\"%d\" y1=\"", PAD_L,
	    PLOT_W - PAD_R);
	svg_coord(out, svg_py(&a, 0));
	fputs("\" y2=\"", out);
	svg_coord(out, svg_py(&a, 0));
	fputs("\"/>\n", out);
	/* About eight version labels, whatever the number of releases. */
	every = n > 8 ? (n + 7) / 8 : 1;
	for (i = 0; i < n; i++) {
		if (i % every != 0 && i != n - 1)
			continue;
		fputs("<text x=\"", out);
		svg_coord(out, svg_px(&a, (double)i));
		fprintf(out, "\" y=\"%d\" text-anchor=\"middle\">",
		    PLOT_H - PAD_B + 16);
		html_esc(out, rp->releases[i].version);
		fputs("</text>\n", out);
	}
	draw_changes(out, &a, rep, rp);
	draw_series(out, &a, &s[0], rp);
	draw_series(out, &a, &s[1], rp);
	fputs("</svg>\n<figcaption>", out);
	caption_series(out, &s[0], rp);
	fputs("; ", out);
	caption_series(out, &s[1], rp);
	fputs(".</figcaption>\n</figure>\n", out);
}

int
trend_html(const json_t *report, const char *id, FILE *out)
{
	struct series s[2] = {
		{ "pp", "prefill per-token cost", NULL, 0, 0, 0 },
		{ "tg", "decode time per token", NULL, 0, 0, 0 },
	};
	struct report rp;
	json_t *rep;
	size_t n;
	int rc = 1;

	/* Control characters written out first, as report_html() does. */
	if ((rep = text_escape_json(report)) == NULL)
		return -1;
	if (report_read(rep, &rp) < 0) {
		json_decref(rep);
		return -1;
	}
	n = rp.nreleases;
	s[0].v = calloc(n + 1, sizeof(double));
	s[1].v = calloc(n + 1, sizeof(double));
	if (s[0].v == NULL || s[1].v == NULL) {
		rc = -1;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		s[0].v[i] = rp.releases[i].fit.per_token.value;
		s[1].v[i] = decode_ms(&rp.releases[i]);
		for (int k = 0; k < 2; k++) {
			/* A figure of 0 or less is no base for a change. */
			if (!(s[k].v[i] > 0))
				s[k].v[i] = NAN;
			else if (!s[k].any) {
				s[k].first = i;
				s[k].any = 1;
			}
			if (isfinite(s[k].v[i]))
				s[k].last = i;
		}
	}
	if (s[0].any || s[1].any) {
		draw(out, id, rep, &rp, s);
		rc = ferror(out) ? -1 : 0;
	}
out:
	report_clear(&rp);
	free(s[0].v);
	free(s[1].v);
	json_decref(rep);
	return rc;
}
