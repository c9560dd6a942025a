/*
 * report_print.h: rendering a report that jobs/report_build.h built, as
 * aligned text for a terminal, markdown, csv, the JSON itself, or an HTML
 * page (report_html.h).
 */
#ifndef BISECTD_REPORT_PRINT_H
#define BISECTD_REPORT_PRINT_H

#include <stdio.h>

struct json_t;

enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_MARKDOWN, REPORT_CSV,
	REPORT_HTML };

/* Render a report built by report_build(). */
void report_print(const struct json_t *report, enum report_format f, FILE *out);

#endif
