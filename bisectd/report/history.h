/*
 * history.h: the history of an engine: every stored release's runs
 * under the current definitions, weights and machine, in release
 * order, one series per metric, with the change points of each
 * (bisectd/analysis/changepoint.h), up and down, and its renderings
 * (text, JSON, CSV, HTML).  A change point is the start of a bisect:
 * each names the releases around it, which `bisect` and `report` take.
 */
#ifndef BISECTD_REPORT_HISTORY_H
#define BISECTD_REPORT_HISTORY_H

#include <stdint.h>
#include <stdio.h>

#include "bisectd/analysis/changepoint.h"
#include "bisectd/analysis/stats.h"
#include "print.h"

struct conf;
struct conf_engine;
struct conf_metric;
struct err;
struct json_t;
struct store;

/* One measured release of a series. */
struct history_point {
	char *version;		/* malloced */
	double *runs;		/* the metric's run values, ns; malloced */
	size_t n;
	struct estimate cost;	/* the mean run value, ns */
};

/* One metric over the releases that measured it. */
struct history_series {
	char metric[96];	/* as --metric names it: per-token, fixed,
				 * ppN, tgN (tgN/CONTENT for the others);
				 * a serve engine's ttft-p90 ... */
	char what[128];		/* in words */
	int tokens;		/* ppN, tgN: N (a throughput); 0 for the fit's */
	int serve;		/* a serve engine's latency (ms): ttft-p90 ... */
	struct history_point *v;	/* malloced */
	size_t n;
	struct cp_result cp;	/* v's change points */
};

struct history {
	const struct conf_engine *eng;
	const char *config_path;	/* for the commands printed; or NULL */
	size_t releases;	/* every stored release, measured or not */
	struct history_series *series;	/* malloced */
	size_t nseries;
};

/*
 * The history of eng from the store: its releases in order, each
 * metric's run values under the current definitions (the release's own
 * runs: a boundary's confirmation runs are the comparison's) on the
 * pinned weights and this machine (a Slurm runner's node), and the
 * change points of each series.  only: one metric, or NULL for every
 * metric of the matrix.  Returns 0 (free with history_release()), or -1
 * with e set (an err_usage() one for a metric not in the matrix).
 */
int history_build(const struct conf *c, const struct conf_engine *eng,
    struct store *s, const struct conf_metric *only, struct history *h,
    struct err *e);
void history_release(struct history *h);

/* The unit a series is shown in: "ms/token", "ms" or "tok/s". */
const char *history_unit(const struct history_series *s);

/* The change points over every series. */
size_t history_changes(const struct history *h);

/*
 * A change point's range: the releases two before and one after its
 * first release (the point's place is sure to a release either way),
 * within its two segments.  *from and *to index s->v.
 */
void history_range(const struct history_series *s, const struct cp_point *p,
    size_t *from, size_t *to);

/* The history as JSON: {"engine", "releases", "series": [{"metric",
 * "what", "unit", "releases": [{"version", "n", "value", "ci"}],
 * "change_points": [{"at", "version", "direction", "change",
 * "change_ci", "p", "slide", "from", "to", "bisect", "report"}]}]}.
 * New reference, NULL when memory runs out. */
struct json_t *history_json(const struct history *h);

/* Render as REPORT_TEXT, REPORT_JSON, REPORT_CSV or REPORT_HTML (markdown
 * is not one of the history's). */
void history_print(const struct history *h, enum report_format f, FILE *out);

#endif
