/*
 * print.h: rendering a report that report/build.h built, as
 * aligned text for a terminal, markdown, csv, the JSON itself, or an HTML
 * page (html.h).
 */
#ifndef BISECTD_REPORT_PRINT_H
#define BISECTD_REPORT_PRINT_H

#include <stdio.h>

struct json_t;

enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_MARKDOWN, REPORT_CSV,
	REPORT_HTML };

/* Render a report built by report_build(). */
void report_print(const struct json_t *report, enum report_format f, FILE *out);

/*
 * The JSON report written in three parts, for a report whose releases
 * come one at a time (a report_build() sink): report_json_head() writes
 * the keys before "releases" and opens it, report_json_release() release
 * i, report_json_tail() closes the n releases and writes the keys after.
 * The bytes are those of the whole report dumped by jansson with
 * JSON_INDENT(2), which REPORT_JSON writes through the same three.
 */
void report_json_head(const struct json_t *report, FILE *out);
void report_json_release(const struct json_t *release, size_t i, FILE *out);
void report_json_tail(const struct json_t *report, size_t n, FILE *out);

/*
 * The same as a report_build() sink (report/build.h): with
 * report_json_stream_head and report_json_stream_release as its
 * functions and a struct report_json_stream as its argument, the report
 * goes to out as it is built; report_json_tail(report, n, out) ends it.
 */
struct report_json_stream {
	FILE *out;
	size_t n;	/* releases written */
};

void report_json_stream_head(const struct json_t *report, void *arg);
void report_json_stream_release(const struct json_t *release, size_t i,
    void *arg);

#endif
