/*
 * gpu_lines.h: the report's GPU lines (docs/gpu.md) in text, Markdown
 * and HTML: the verdict's clocks and each release's GPU figures
 * (report.h).  A report without them prints nothing.
 */
#ifndef BISECTD_REPORT_GPU_LINES_H
#define BISECTD_REPORT_GPU_LINES_H

#include <stdio.h>

struct report;
struct report_clocks;

/* The verdict's "clocks" line, in text (md 0) or Markdown. */
void gpu_clocks_text(const struct report_clocks *c, FILE *out, int md);
/* The same as a verdict list's item. */
void gpu_clocks_html(const struct report_clocks *c, FILE *out);

/* One line per release of rp with GPU figures, under a heading. */
void gpu_releases_text(const struct report *rp, FILE *out, int md);
/* The same as a small table in its own section. */
void gpu_releases_html(const struct report *rp, FILE *out);

#endif
