/*
 * report.h: what bisectctl report shows: for each release of a range its
 * throughput per cell with spread and n, the fit (per-token cost, fixed
 * overhead, ceiling) with intervals, flags and failures; the verdict; and
 * how to reproduce it.  Built as JSON (the shape DESIGN.md documents),
 * then rendered as text, markdown or csv.
 */
#ifndef BISECTD_REPORT_H
#define BISECTD_REPORT_H

#include <stdio.h>

#include "bisect.h"
#include "conf.h"

struct err;
struct range;
struct store;

/* The verdict object of the report JSON (a json_t *, new reference). */
void *report_verdict_json(const struct bisect_verdict *v,
    const struct range *r, const struct bisect_params *p);

struct report_opts {
	struct conf_metric metric;	/* kind -1: the engine's */
	double threshold;		/* < 0: the engine's */
	int all;
};

/*
 * Build the report for spec ("A..B") from the store alone: no download,
 * no run.  The verdict is the bisection's decision on the stored
 * samples; where they are not enough to decide, it is "unknown" and says
 * what to run.  *report is a json_t * the caller decrefs.
 */
int report_build(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *spec, const struct report_opts *o,
    void **report, enum bisect_status *status, struct err *e);

enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_MARKDOWN, REPORT_CSV };

/* Render a report built by report_build(). */
void report_print(const void *report, enum report_format f, FILE *out);

#endif
