/*
 * page.c: what the report's pages share (see page.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include <jansson.h>

#include "fields.h"
#include "page.h"

const char html_page_style[] =
    "body{font:15px/1.4 system-ui,sans-serif;color:#111;background:#fff;"
    "max-width:60em;margin:0 auto;padding:0 .75em}"
    "h1{font-size:1.35em;margin:.6em 0 .2em}"
    "h2{font-size:1.1em;margin:1.4em 0 .4em;border-bottom:1px solid #ccc}"
    "p.meta{color:#444;margin:.2em 0;overflow-wrap:anywhere}"
    ".status{font-weight:bold;padding:.1em .4em;border-radius:.2em}"
    ".regression{background:#fbd5d5}.no-regression{background:#d5f0d5}"
    ".unknown{background:#f5e7c0}"
    ".ranked{background:#d5f0d5}.inert,.no-control{background:#f5e7c0}"
    "dl.verdict{display:grid;grid-template-columns:max-content 1fr;"
    "gap:.15em 1em;margin:.5em 0}"
    "dl.verdict dt{font-weight:600}dl.verdict dd{margin:0;"
    "overflow-wrap:anywhere}"
    "pre{background:#f4f4f4;padding:.4em;overflow-x:auto;"
    "white-space:pre-wrap;overflow-wrap:anywhere;font-size:.85em}"
    "svg{width:100%;height:auto;max-width:42em;display:block}"
    ".panels{display:flex;flex-wrap:wrap;gap:1em}"
    "table.changes tr.slower td{color:#c0261b;font-weight:600}"
    "table.changes caption{text-align:left;font-weight:600}"
    ".panels svg{flex:1 1 20em;min-width:0}"
    "svg text{font:12px system-ui,sans-serif;fill:#222}"
    "svg .axis{stroke:#444;stroke-width:1}"
    "svg .grid{stroke:#ddd;stroke-width:1}"
    "svg .good{fill:#1f5fa8;stroke:#1f5fa8}"
    "svg .bad{fill:#fff;stroke:#c0261b;stroke-width:1.5}"
    "svg .line-good{stroke:#1f5fa8;stroke-width:2;fill:none}"
    "svg .line-bad{stroke:#c0261b;stroke-width:2;fill:none;"
    "stroke-dasharray:6 3}"
    "svg .band-good{fill:#1f5fa8;fill-opacity:.15;stroke:none}"
    "svg .band-bad{fill:#c0261b;fill-opacity:.15;stroke:none}"
    "svg .metric{fill:#111;stroke:#111}"
    "svg .ci{stroke:#111;stroke-width:1.2}"
    "svg .skipped{stroke:#b26b00;stroke-width:2}"
    "svg .failed{stroke:#c0261b;stroke-width:2}"
    "svg .gap{fill:none;stroke:#999;stroke-width:1.5}"
    "svg .change{stroke:#c0261b;stroke-width:1.5;stroke-dasharray:4 3}"
    "svg .one{stroke:#888;stroke-dasharray:3 3}"
    "svg .ratio{fill:#111;stroke:#111}"
    "svg .ratio-line{fill:none;stroke:#111;stroke-width:1.5}"
    "svg .ratio-ci{fill:none;stroke:#111;stroke-width:1.2}"
    "svg .removed{fill:#1f5fa8;fill-opacity:.6;stroke:none}"
    "svg .control{fill:#c0261b;fill-opacity:.6;stroke:none}"
    "svg .control-min{stroke:#c0261b;stroke-width:1;"
    "stroke-dasharray:4 3}"
    "details{margin:.3em 0}summary{cursor:pointer}"
    ".cells{overflow-x:auto}"
    "table{border-collapse:collapse;font-size:.85em;"
    "font-variant-numeric:tabular-nums}"
    "th,td{padding:.15em .5em;border-bottom:1px solid #e4e4e4;"
    "text-align:right;white-space:nowrap}"
    "th:nth-child(-n+3),td:nth-child(-n+3){text-align:left}"
    "td.fail{text-align:left;white-space:normal;color:#8a1a12}"
    "table.canary td{text-align:left;white-space:normal;"
    "overflow-wrap:anywhere}"
    "tr.nondeterministic td,tr.failed td{background:#f5e7c0}"
    "tr.changed td{background:#fbd5d5}"
    "code.before{background:#fde8e8}code.after{background:#e3f5e3}"
    "@media print{body{max-width:none;font-size:11pt}"
    "section{break-inside:avoid}"
    "pre{white-space:pre-wrap}}";

/* s as HTML text or attribute value: the five characters with a meaning
 * in markup as entities.  Control characters were written out before. */
void
html_esc(FILE *out, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fputc(*s, out);
		}
}

/*
 * Markup and text in turn: the first argument and every other one after
 * it written as they are, the ones between escaped; NULL ends the list.
 */
void
html_markup(FILE *out, const char *first, ...)
{
	const char *s = first;
	va_list ap;
	int text = 0;

	va_start(ap, first);
	for (; s != NULL; s = va_arg(ap, const char *), text = !text) {
		if (text)
			html_esc(out, s);
		else
			fputs(s, out);
	}
	va_end(ap);
}

/* "12.3 [11.9, 12.8]" with the interval when it is known, all times
 * scale. */
void
html_num_ci(FILE *out, double v, const json_t *ci, int sign, double scale)
{
	html_num_lohi(out, v, rep_at(ci, 0), rep_at(ci, 1), sign, scale);
}

void
html_num_lohi(FILE *out, double v, double lo, double hi, int sign,
    double scale)
{
	if (!isfinite(v)) {
		fputs("–", out);
		return;
	}
	fprintf(out, sign ? "%+.4g" : "%.4g", v * scale);
	if (isfinite(lo) && isfinite(hi))
		fprintf(out, sign ? " [%+.4g, %+.4g]" : " [%.4g, %.4g]",
		    lo * scale, hi * scale);
}

/* --- plots --- */

/*
 * fprintf(out, "%.1f", v), the same bytes, in a tenth of the time: a
 * page carries two coordinates per run of every release.  Where v * 10
 * lies within rounding of a half, or beyond the shortcut's range,
 * printf decides.
 */
void
svg_coord(FILE *out, double v)
{
	double t = fabs(v) * 10, frac;
	long long n;
	char buf[32];
	int i = (int)sizeof(buf);

	if (!(t < 1e9)) {
		fprintf(out, "%.1f", v);
		return;
	}
	frac = t - floor(t);
	if (fabs(frac - 0.5) < 1e-6) {
		fprintf(out, "%.1f", v);
		return;
	}
	n = (long long)floor(t + 0.5);
	buf[--i] = '\0';
	buf[--i] = (char)('0' + n % 10);
	buf[--i] = '.';
	n /= 10;
	do
		buf[--i] = (char)('0' + n % 10);
	while ((n /= 10) > 0);
	if (signbit(v))
		buf[--i] = '-';
	fputs(buf + i, out);
}

/* lead, x, a space, y: "M12.5 40.0" of a path. */
void
svg_xy(FILE *out, const char *lead, double x, double y)
{
	fputs(lead, out);
	svg_coord(out, x);
	fputc(' ', out);
	svg_coord(out, y);
}


/* A round tick step giving about five ticks over span. */
double
svg_tick_step(double span)
{
	double raw = span / 5, mag = pow(10, floor(log10(raw)));

	if (raw / mag >= 5)
		return 5 * mag;
	if (raw / mag >= 2)
		return 2 * mag;
	return mag;
}

/* Widen [*lo, *hi] to tick steps, never to an empty span. */
void
svg_nice_range(double *lo, double *hi)
{
	double step;

	if (!isfinite(*lo) || !isfinite(*hi)) {
		*lo = 0;
		*hi = 1;
	}
	if (*hi <= *lo)
		*hi = *lo + (*lo != 0 ? fabs(*lo) * 0.1 : 1);
	step = svg_tick_step(*hi - *lo);
	*lo = floor(*lo / step) * step;
	*hi = ceil(*hi / step) * step;
}

void
svg_open(FILE *out, const char *id, const char *title)
{
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"%s\" "
	    "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", id, PLOT_W,
	    PLOT_H);
	html_esc(out, title);
	fputs("\"><title>", out);
	html_esc(out, title);
	fputs("</title>\n", out);
}

/* Axes with a grid, numeric ticks on y (and on x unless xnumeric is 0),
 * and both axis labels, units included. */
void
svg_axes(FILE *out, const struct plot_axes *a, int xnumeric,
    const char *xlabel, const char *ylabel)
{
	double step = svg_tick_step(a->y1 - a->y0);

	fputs("<g class=\"frame\">\n", out);
	for (double y = a->y0; y <= a->y1 + step / 2; y += step) {
		fprintf(out, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" "
		    "y1=\"", PAD_L, PLOT_W - PAD_R);
		svg_coord(out, svg_py(a, y));
		fputs("\" y2=\"", out);
		svg_coord(out, svg_py(a, y));
		fprintf(out, "\"/><text x=\"%d\" y=\"", PAD_L - 4);
		svg_coord(out, svg_py(a, y) + 4);
		fprintf(out, "\" text-anchor=\"end\">%.4g</text>\n",
		    fabs(y) < step / 1e6 ? 0 : y);
	}
	if (xnumeric) {
		step = svg_tick_step(a->x1 - a->x0);
		for (double x = a->x0; x <= a->x1 + step / 2; x += step) {
			fputs("<line class=\"axis\" x1=\"", out);
			svg_coord(out, svg_px(a, x));
			fputs("\" x2=\"", out);
			svg_coord(out, svg_px(a, x));
			fprintf(out, "\" y1=\"%d\" y2=\"%d\"/><text x=\"",
			    PLOT_H - PAD_B, PLOT_H - PAD_B + 4);
			svg_coord(out, svg_px(a, x));
			fprintf(out, "\" y=\"%d\" text-anchor=\"middle\">"
			    "%.4g</text>\n", PLOT_H - PAD_B + 16, x);
		}
	}
	fprintf(out, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" "
	    "y2=\"%d\"/><line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" "
	    "y2=\"%d\"/>\n", PAD_L, PLOT_W - PAD_R, PLOT_H - PAD_B,
	    PLOT_H - PAD_B, PAD_L, PAD_L, PAD_T, PLOT_H - PAD_B);
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
	    (PAD_L + PLOT_W - PAD_R) / 2, PLOT_H - 6);
	html_esc(out, xlabel);
	fprintf(out, "</text><text transform=\"translate(14 %d) rotate(-90)\" "
	    "text-anchor=\"middle\">", (PAD_T + PLOT_H - PAD_B) / 2);
	html_esc(out, ylabel);
	fputs("</text>\n</g>\n", out);
}

void
html_verdict_item(FILE *out, const char *term)
{
	fputs("<dt>", out);
	html_esc(out, term);
	fputs("</dt><dd>", out);
}

/* The page up to its <title>'s text. */
void
html_page_open(FILE *out)
{
	fputs("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" "
	    "lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
	    "<meta name=\"viewport\" content=\"width=device-width, "
	    "initial-scale=1\"/>\n<title>", out);
}
