/*
 * build.h: what bisectctl report shows: for each release of a
 * range its
 * throughput per cell with spread and n, the fit (per-token cost, fixed
 * overhead, ceiling) with intervals, flags and failures; the verdict; and
 * how to reproduce it.  Its head, releases and what else changed are
 * built as the typed values of report/report.h and encoded once into
 * the JSON (the shape docs/report.md documents); the verdict, how to
 * reproduce it and "about" are built as JSON.  report/print.h renders
 * it as text, markdown or csv.
 */
#ifndef BISECTD_REPORT_BUILD_H
#define BISECTD_REPORT_BUILD_H

#include "bisectd/analysis/bisect.h"
#include "bisectd/search/request.h"
#include "config/conf.h"

struct err;
struct json_t;
struct store;

/*
 * Where a report's releases go as they are built, instead of into its
 * "releases" array: a report of many releases then holds one release's
 * JSON at a time.  head() gets the report with every key but the
 * releases filled in, before the first release; release() each release
 * in order, which the report decrefs after the call.  The report
 * returned then has an empty "releases".  Everything that can fail,
 * but memory, comes before head(): a report that fails for its store
 * hands the sink nothing.
 */
struct report_sink {
	void (*head)(const struct json_t *report, void *arg);
	void (*release)(const struct json_t *release, size_t i, void *arg);
	void *arg;
};

struct report_opts {
	struct bisect_request req;	/* the metric (the canary's verdict
					 * with METRIC_CANARY), threshold,
					 * all, commits: spec names commits
					 * of the engine's repository */
	/* For pasting upstream: no local path (the config, archive files,
	 * absolute paths in the command) and no hostname; an "about"
	 * object with bisectd's version, the engine's build, the model,
	 * threads, runs per cell, the CPU model and its flags. */
	int upstream;
	/* 1: each release also carries its runs as plot points (points,
	 * [tokens, ms] per process run of each prompt length) and the
	 * fitted line's 95% band (fit_band, [tokens, ms, lo, hi]), which
	 * report/html.h draws. */
	int plot;
	/* 1: every release computed from its runs, no summary read or
	 * kept (a summary gives the same bytes: this checks it). */
	int fresh;
	const struct report_sink *sink;	/* NULL: releases in the report */
};

/*
 * Build the report for spec ("A..B") from the store alone: no download,
 * no run.  The verdict is the judgement of search/verdict.h on the stored
 * samples, the one the driver reaches; where they are not enough to
 * decide, it is "unknown" and says what to run.  *report is a new
 * reference the caller decrefs; *exit_code is the judgement's.
 *
 * What a release shows of its runs is kept in the store, per release,
 * weights, machine and configuration, and used while its runs are
 * unchanged (sql/011_release_summary.sql); a report on a read-only or
 * busy store computes what it lacks and keeps nothing.
 *
 * With a canary, each release also has its canary: its state, the sha256
 * of its text, and where the text changed since the release before with
 * a text, the first differing tokens.
 */
int report_build(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *spec, const struct report_opts *o,
    struct json_t **report, int *exit_code, struct err *e);

#endif
