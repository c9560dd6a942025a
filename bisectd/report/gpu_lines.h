/*
 * gpu_lines.h: the report's GPU lines (docs/gpu.md) in text, Markdown
 * and HTML: the verdict's clocks (from the report JSON) and each
 * release's GPU figures (report.h).  A report without them prints nothing.
 */
#ifndef BISECTD_REPORT_GPU_LINES_H
#define BISECTD_REPORT_GPU_LINES_H

#include <stdio.h>

struct json_t;
struct report;

/* The verdict's "clocks" line, in text (md 0) or Markdown. */
void gpu_clocks_text(const struct json_t *verdict, FILE *out, int md);
/* The same as a verdict list's item. */
void gpu_clocks_html(const struct json_t *verdict, FILE *out);

/* One line per release of rp with GPU figures, under a heading. */
void gpu_releases_text(const struct report *rp, FILE *out, int md);
/* The same as a small table in its own section. */
void gpu_releases_html(const struct report *rp, FILE *out);

#endif
