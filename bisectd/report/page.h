/*
 * page.h: what the report's pages share (html.c, ablate_html.c): the
 * style sheet, escaped text and markup, figures with their intervals,
 * and the SVG plots' frame: the drawing area, axes with ticks, and
 * coordinates written fast.
 */
#ifndef BISECTD_REPORT_PAGE_H
#define BISECTD_REPORT_PAGE_H

#include <stdio.h>

struct json_t;

/* The plots' drawing area, in the SVG's own units (its viewBox). */
#define PLOT_W 640
#define PLOT_H 300
#define PAD_L 64
#define PAD_R 16
#define PAD_T 16
#define PAD_B 48

struct plot_axes {
	double x0, x1, y0, y1;	/* the data shown */
};

static inline double
svg_px(const struct plot_axes *a, double x)
{
	return PAD_L + (x - a->x0) / (a->x1 - a->x0) * (PLOT_W - PAD_L -
	    PAD_R);
}

static inline double
svg_py(const struct plot_axes *a, double y)
{
	return PLOT_H - PAD_B - (y - a->y0) / (a->y1 - a->y0) * (PLOT_H -
	    PAD_T - PAD_B);
}

extern const char html_page_style[];

/* s as HTML text or attribute value: the five characters with a meaning
 * in markup as entities.  Control characters were written out before. */
void html_esc(FILE *out, const char *s);

/*
 * Markup and text in turn: the first argument and every other one after
 * it written as they are, the ones between escaped; NULL ends the list.
 */
void html_markup(FILE *out, const char *first, ...)
    __attribute__((sentinel));

/* "12.3 [11.9, 12.8]" with the interval [lo, hi] when it is known, all
 * times scale. */
void html_num_lohi(FILE *out, double v, double lo, double hi, int sign,
    double scale);

/* html_num_lohi() with the interval as the JSON array ci. */
void html_num_ci(FILE *out, double v, const struct json_t *ci, int sign,
    double scale);

/*
 * fprintf(out, "%.1f", v), the same bytes, in a tenth of the time: a
 * page carries two coordinates per run of every release.  Where v * 10
 * lies within rounding of a half, or beyond the shortcut's range,
 * printf decides.
 */
void svg_coord(FILE *out, double v);

/* lead, x, a space, y: "M12.5 40.0" of a path. */
void svg_xy(FILE *out, const char *lead, double x, double y);

/* A round tick step giving about five ticks over span. */
double svg_tick_step(double span);

/* Widen [*lo, *hi] to tick steps, never to an empty span. */
void svg_nice_range(double *lo, double *hi);

/* An <svg> of the drawing area, its title for people and readers. */
void svg_open(FILE *out, const char *id, const char *title);

/* Axes with a grid, numeric ticks on y (and on x unless xnumeric is 0),
 * and both axis labels, units included. */
void svg_axes(FILE *out, const struct plot_axes *a, int xnumeric,
    const char *xlabel, const char *ylabel);

/* A verdict list's term, and its description opened. */
void html_verdict_item(FILE *out, const char *term);

/* The page up to its <title>'s text. */
void html_page_open(FILE *out);

#endif
