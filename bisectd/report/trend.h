/*
 * trend.h: an engine's releases at a glance, for the daemon's status
 * page: the two figures a watch keeps an eye on, the prefill cost per
 * prompt token (the fit's) and the decode time per generated token, of
 * each release of a report (build.h), drawn in the frame of the
 * report's plots (page.h) as one small inline SVG.  Each figure is
 * plotted relative to its first measured release, so both share one
 * axis however far apart their units are; the caption gives them in
 * ms.
 */
#ifndef BISECTD_REPORT_TREND_H
#define BISECTD_REPORT_TREND_H

#include <stdio.h>

struct json_t;

/* The style of trend_html()'s classes, for the page it goes in. */
extern const char trend_style[];

/*
 * A <figure class="trend"> of report's releases in version order with
 * id for its <svg>: a line and a dot per measured release for each
 * figure (the dot's title gives the version and the figure in ms), a
 * dashed line at each change point of the report's verdict, and a
 * caption with each figure's first and last value.  Versions are
 * escaped as report_html() escapes them.  Returns 0, 1 when no release
 * has either figure (nothing written), or -1 when out of memory or a
 * write to out failed.
 */
int trend_html(const struct json_t *report, const char *id, FILE *out);

#endif
