/*
 * html.h: a report that report/build.h built, as one
 * self-contained HTML page: the verdict first, then time against prompt
 * length for the boundary pair (and every measured release, one
 * <details> each), the bisected metric across the range, the "times
 * slower" ratio by prompt length and the cells of every release.  Plots
 * are inline SVG, the style inline CSS; no script, nothing fetched.  The
 * page is well-formed XML (XHTML syntax), so it can be parsed as such.
 */
#ifndef BISECTD_REPORT_HTML_H
#define BISECTD_REPORT_HTML_H

#include <stdio.h>

struct json_t;

/*
 * Write the page of report to out.  Every string of the report (versions,
 * reasons, an engine's output) is escaped: control characters written
 * out as in text_escape.h, then '&', '<', '>', '"' and '\'' as entities.
 * The dots and fitted bands of the time plots come from the report's
 * releases[].points and releases[].fit_band, which report_build() adds
 * when report_opts.plot is set; without them the plots show the fitted
 * figures alone.  Returns 0, or -1 when out of memory or a write to out
 * failed (errno set by stdio).
 */
int report_html(const struct json_t *report, FILE *out);

/*
 * An ablation's report (search/ablate.h) as a page of the same kind: the
 * verdict with its positive control (and, when the control moved
 * nothing, that the switches look inert), the baseline, then per switch
 * the share of the runtime it removed as a bar with its interval, and a
 * table of the time removed at the longest fit length, per token and
 * fixed, with intervals, and what it was judged to do ("no measurable
 * effect" with the smallest share the runs could have seen).  Returns
 * as report_html().
 */
int ablate_html(const struct json_t *report, FILE *out);

#endif
