/*
 * pages.c: the daemon's status page and its Prometheus metrics (see
 * pages.h), built from the store, the configuration and the daemon's
 * status object.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "bisectd/report/build.h"
#include "bisectd/jobs/status.h"
#include "bisectd/report/listing_json.h"
#include "bisectd/report/text_escape.h"
#include "common/buf.h"
#include "common/err.h"
#include "config/conf.h"
#include "pages.h"
#include "store/store.h"

/* Recent alerts on the status page. */
#define PAGE_ALERTS	10

/* The verdict statuses /metrics names, one series each. */
static const char *const verdict_statuses[] = { "regression",
    "no-regression", "unknown" };

static int
too_big(struct err *e)
{
	return errno == E2BIG ? err_set(e, "the page is too large") :
	    err_set(e, "out of memory");
}

int
page_html(struct buf *out, const char *s)
{
	char *safe = text_escape(s ? s : "", 0);
	int rc = 0;

	if (safe == NULL)
		return -1;
	for (const char *p = safe; *p && rc == 0; p++)
		switch (*p) {
		case '&': rc = buf_addstr(out, "&amp;"); break;
		case '<': rc = buf_addstr(out, "&lt;"); break;
		case '>': rc = buf_addstr(out, "&gt;"); break;
		case '"': rc = buf_addstr(out, "&quot;"); break;
		case '\'': rc = buf_addstr(out, "&#39;"); break;
		default: rc = buf_add(out, p, 1);
		}
	free(safe);
	return rc;
}

static const char *
when(int64_t t, char *b, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0)
		return "-";
	gmtime_r(&tt, &tm);
	strftime(b, len, "%Y-%m-%d %H:%M:%SZ", &tm);
	return b;
}

/* A link to the report of engine over range: <a href="...">range</a>. */
static int
report_link(struct buf *out, const char *engine, const char *range)
{
	const char *dots = strstr(range, "..");
	char good[256], *path;
	int rc;

	if (dots == NULL || (size_t)(dots - range) >= sizeof(good))
		return page_html(out, range);
	snprintf(good, sizeof(good), "%.*s", (int)(dots - range), range);
	if ((path = text_report_path(engine, good, dots + 2)) == NULL)
		return -1;
	rc = buf_addstr(out, "<a href=\"") < 0 || buf_addstr(out, path) < 0 ||
	    buf_addstr(out, "\">") < 0 || page_html(out, range) < 0 ||
	    buf_addstr(out, "</a>") < 0 ? -1 : 0;
	free(path);
	return rc;
}

static const char *
jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static long long
jint(const json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

/* One running job: its paragraph and its progress. */
static int
running_job(const json_t *job, struct buf *b)
{
	const json_t *g;
	char args[512];

	status_job_args_text(jstr(job, "kind"), json_object_get(job, "args"),
	    args, sizeof(args));
	if (buf_printf(b, "<p class=\"running\" id=\"running-%lld\">Job %lld: ",
	    jint(job, "id"), jint(job, "id")) < 0 ||
	    page_html(b, jstr(job, "kind")) < 0 || buf_addstr(b, " ") < 0 ||
	    page_html(b, jstr(job, "engine")) < 0 || buf_addstr(b, " ") < 0 ||
	    page_html(b, args) < 0 ||
	    buf_printf(b, ", for %llds", jint(job, "elapsed")) < 0)
		return -1;
	if (jstr(job, "runner")[0] && (buf_addstr(b, ", measured on Slurm "
	    "runner ") < 0 || page_html(b, jstr(job, "runner")) < 0))
		return -1;
	if (buf_addstr(b, ".</p>\n") < 0)
		return -1;
	if (json_is_object(g = json_object_get(job, "build")))
		return buf_addstr(b, "<p id=\"build\">Building commit ") < 0 ||
		    page_html(b, jstr(g, "short")) < 0 ||
		    buf_addstr(b, " “") < 0 || page_html(b, jstr(g,
		    "subject")) < 0 || buf_printf(b, "” for probe %lld, for "
		    "%.0fs.</p>\n", jint(g, "probe"), json_number_value(
		    json_object_get(g, "elapsed_s"))) < 0 ? -1 : 0;
	if (!json_is_object(g = json_object_get(job, "progress")))
		return 0;
	if (buf_addstr(b, "<p class=\"progress\">Release ") < 0 ||
	    page_html(b, jstr(g, "release")) < 0 ||
	    buf_addstr(b, ", cell ") < 0 || page_html(b, jstr(g, "cell")) < 0 ||
	    buf_printf(b, " (%lld of %lld), %s %lld of %lld, run %lld of %lld",
	    jint(g, "cell_no"), jint(g, "cells"), json_is_true(json_object_get(
	    g, "warmup")) ? "warm-up" : "repetition", jint(g, "rep"),
	    jint(g, "reps"), jint(g, "run"), jint(g, "runs")) < 0)
		return -1;
	if (json_is_number(json_object_get(g, "eta_s")) &&
	    buf_printf(b, ", about %.0fs left", json_number_value(
	    json_object_get(g, "eta_s"))) < 0)
		return -1;
	if (buf_printf(b, " <progress max=\"%lld\" value=\"%lld\"></progress>",
	    jint(g, "runs"), jint(g, "run")) < 0)
		return -1;
	if (jstr(g, "waiting")[0] && (buf_addstr(b, "<br>") < 0 ||
	    page_html(b, jstr(g, "waiting")) < 0))
		return -1;
	return buf_addstr(b, "</p>\n");
}

static int
section_daemon(const struct page_ctx *p, struct buf *b)
{
	const json_t *d = p->daemon, *jobs, *x;
	size_t i;

	if (d == NULL)
		return buf_addstr(b, "<p>The daemon's status is not "
		    "available.</p>\n");
	if (buf_printf(b, "<p>Daemon pid %lld, up %llds, configuration ",
	    jint(d, "pid"), jint(d, "uptime")) < 0 ||
	    page_html(b, jstr(d, "config")) < 0 ||
	    buf_addstr(b, ".</p>\n<h2>Running</h2>\n") < 0)
		return -1;
	jobs = json_object_get(d, "jobs");
	if (json_array_size(jobs) == 0)
		return buf_addstr(b, "<p id=\"running\">Nothing.</p>\n");
	json_array_foreach(jobs, i, x)
		if (running_job(x, b) < 0)
			return -1;
	return 0;
}

/* The measurements on Slurm: each job's id, state, node and age. */
static int
section_slurm(const struct page_ctx *p, struct buf *b, struct err *e)
{
	json_t *a, *j;
	size_t i;
	int rc = 0;

	if (status_slurm_json(p->s, time(NULL), &a, e) < 0)
		return -2;
	if (json_array_size(a) == 0) {
		json_decref(a);
		return 0;
	}
	if (buf_addstr(b, "<h2>Slurm jobs</h2>\n<table id=\"slurm\"><tr><th>"
	    "Slurm job</th><th>job</th><th>engine</th><th>state</th><th>node"
	    "</th><th>age</th><th>failure</th></tr>\n") < 0)
		rc = -1;
	json_array_foreach(a, i, j) {
		if (rc < 0)
			break;
		if (buf_printf(b, "<tr><td>%lld</td><td>%lld</td><td>",
		    jint(j, "slurm_id"), jint(j, "job")) < 0 ||
		    page_html(b, jstr(j, "engine")) < 0 ||
		    buf_addstr(b, "</td><td>") < 0 ||
		    page_html(b, jstr(j, "state")) < 0 ||
		    buf_addstr(b, "</td><td>") < 0 ||
		    page_html(b, jstr(j, "node")) < 0 ||
		    buf_printf(b, "</td><td>%llds</td><td>", jint(j,
		    "age_s")) < 0 || page_html(b, jstr(j, "failure")) < 0 ||
		    buf_addstr(b, "</td></tr>\n") < 0)
			rc = -1;
	}
	if (rc == 0 && buf_addstr(b, "</table>\n") < 0)
		rc = -1;
	json_decref(a);
	return rc;
}

static int
section_queue(const struct page_ctx *p, struct buf *b, struct err *e)
{
	struct store_jobs jobs;
	char t[32];
	int rc = 0;

	if (store_job_list(p->s, STATUS_JOBS, &jobs, e) < 0)
		return -2;
	if (buf_addstr(b, "<h2>Queue</h2>\n<table id=\"queue\"><tr><th>job"
	    "</th><th>kind</th><th>engine</th><th>state</th><th>created</th>"
	    "<th>exit</th><th>arguments</th></tr>\n") < 0)
		rc = -1;
	for (size_t i = 0; i < jobs.n && rc == 0; i++) {
		const struct store_job *j = &jobs.v[i];

		if (buf_printf(b, "<tr><td>%lld</td><td>", (long long)j->id) < 0 ||
		    page_html(b, j->kind) < 0 || buf_addstr(b, "</td><td>") < 0 ||
		    page_html(b, j->engine) < 0 ||
		    buf_addstr(b, "</td><td>") < 0 ||
		    page_html(b, j->state) < 0 ||
		    buf_printf(b, "</td><td>%s</td><td>", when(j->created, t,
		    sizeof(t))) < 0 || (j->exit_code >= 0 &&
		    buf_printf(b, "%d", j->exit_code) < 0) ||
		    buf_addstr(b, "</td><td>") < 0 ||
		    page_html(b, j->args) < 0 ||
		    buf_addstr(b, "</td></tr>\n") < 0)
			rc = -1;
	}
	if (rc == 0 && buf_addstr(b, "</table>\n") < 0)
		rc = -1;
	if (rc == 0 && jobs.n == 0 && buf_addstr(b, "<p>The queue is empty."
	    "</p>\n") < 0)
		rc = -1;
	store_jobs_release(&jobs);
	return rc;
}

static int
section_verdicts(const struct page_ctx *p, struct buf *b, struct err *e)
{
	struct store_tally v;
	char t[32];
	int rc = 0;

	if (store_tally_verdicts(p->s, &v, e) < 0)
		return -2;
	if (buf_addstr(b, "<h2>Latest verdicts</h2>\n<table id=\"verdicts\">"
	    "<tr><th>engine</th><th>verdict</th><th>range</th><th>finished"
	    "</th></tr>\n") < 0)
		rc = -1;
	for (size_t i = 0; i < v.n && rc == 0; i++) {
		const struct store_tally_row *r = &v.v[i];

		if (buf_addstr(b, "<tr><td>") < 0 ||
		    page_html(b, r->key[0]) < 0 ||
		    buf_addstr(b, "</td><td class=\"") < 0 ||
		    page_html(b, r->key[1]) < 0 || buf_addstr(b, "\">") < 0 ||
		    page_html(b, r->key[1]) < 0 ||
		    buf_addstr(b, "</td><td>") < 0 ||
		    report_link(b, r->key[0], r->key[2] ? r->key[2] : "") < 0 ||
		    buf_printf(b, "</td><td>%s</td></tr>\n", when(r->n, t,
		    sizeof(t))) < 0)
			rc = -1;
	}
	if (rc == 0 && buf_addstr(b, "</table>\n") < 0)
		rc = -1;
	store_tally_release(&v);
	return rc;
}

static int
section_alerts(const struct page_ctx *p, struct buf *b, struct err *e)
{
	struct store_alert_rows rows;
	char t[32];
	int rc = 0;

	if (store_alert_list(p->s, PAGE_ALERTS, &rows, e) < 0)
		return -2;
	if (buf_addstr(b, "<h2>Recent alerts</h2>\n<table id=\"alerts\"><tr>"
	    "<th>alert</th><th>created</th><th>kind</th><th>engine</th>"
	    "<th>summary</th><th>delivery</th></tr>\n") < 0)
		rc = -1;
	for (size_t i = 0; i < rows.n && rc == 0; i++) {
		const struct store_alert_row *r = &rows.v[i];
		json_t *body = json_loads(r->alert.body, 0, NULL);
		const json_t *range = json_object_get(body, "range");
		char spec[600];

		if (buf_printf(b, "<tr><td>%lld</td><td>%s</td><td>",
		    (long long)r->alert.id, when(r->alert.created, t,
		    sizeof(t))) < 0 || page_html(b, r->alert.kind) < 0 ||
		    buf_addstr(b, "</td><td>") < 0 ||
		    page_html(b, r->alert.engine) < 0 ||
		    buf_addstr(b, "</td><td>") < 0 ||
		    page_html(b, r->alert.summary) < 0)
			rc = -1;
		if (rc == 0 && json_is_object(range)) {
			snprintf(spec, sizeof(spec), "%s..%s", jstr(range,
			    "from"), jstr(range, "to"));
			if (buf_addstr(b, " (report: ") < 0 ||
			    report_link(b, r->alert.engine, spec) < 0 ||
			    buf_addstr(b, ")") < 0)
				rc = -1;
		}
		json_decref(body);
		if (rc == 0 && buf_addstr(b, "</td><td>") < 0)
			rc = -1;
		for (size_t k = 0; k < r->nsinks && rc == 0; k++)
			if (page_html(b, r->sinks[k].sink) < 0 ||
			    buf_addstr(b, ": ") < 0 ||
			    page_html(b, r->sinks[k].state) < 0 ||
			    buf_addstr(b, "<br>") < 0)
				rc = -1;
		if (rc == 0 && buf_addstr(b, "</td></tr>\n") < 0)
			rc = -1;
	}
	if (rc == 0 && buf_addstr(b, "</table>\n") < 0)
		rc = -1;
	store_alert_rows_release(&rows);
	return rc;
}

int
page_status(const struct page_ctx *p, struct buf *out, struct err *e)
{
	int rc;

	if (buf_addstr(out, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
	    "<meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width="
	    "device-width\"><title>bisectd</title><style>"
	    "body{font-family:sans-serif;margin:1em;max-width:70em}"
	    "table{border-collapse:collapse}td,th{border:1px solid #ccc;"
	    "padding:.2em .5em;text-align:left;vertical-align:top}"
	    ".regression{color:#b00}.no-regression{color:#070}"
	    "</style></head><body>\n<h1>bisectd</h1>\n") < 0 ||
	    section_daemon(p, out) < 0)
		return too_big(e);
	if ((rc = section_slurm(p, out, e)) == 0 &&
	    (rc = section_queue(p, out, e)) == 0 &&
	    (rc = section_verdicts(p, out, e)) == 0)
		rc = section_alerts(p, out, e);
	if (rc == -2)
		return -1;
	if (rc < 0 || buf_addstr(out, "<p><a href=\"/metrics\">metrics</a> "
	    "&middot; <a href=\"/api/status\">status as JSON</a> &middot; "
	    "<a href=\"/api/alerts\">alerts as JSON</a></p>\n"
	    "</body></html>\n") < 0)
		return too_big(e);
	return 0;
}

/* --- metrics --- */

/* A label value: backslash, double quote and newline escaped. */
static int
label(struct buf *b, const char *name, const char *v, int first)
{
	if (buf_printf(b, "%s%s=\"", first ? "{" : ",", name) < 0)
		return -1;
	for (const char *p = v ? v : ""; *p; p++) {
		int rc = *p == '\\' ? buf_addstr(b, "\\\\") :
		    *p == '"' ? buf_addstr(b, "\\\"") :
		    *p == '\n' ? buf_addstr(b, "\\n") : buf_add(b, p, 1);

		if (rc < 0)
			return -1;
	}
	return buf_addstr(b, "\"");
}

static int
family(struct buf *b, const char *name, const char *type, const char *help)
{
	return buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
	    type);
}

/* One sample: name{l0="v0",l1="v1",...} value; names[i] NULL ends. */
static int
sample(struct buf *b, const char *name, const char *const *names,
    const char *const *values, double v)
{
	char num[64];

	if (buf_addstr(b, name) < 0)
		return -1;
	for (size_t i = 0; names[i]; i++)
		if (label(b, names[i], values[i], i == 0) < 0)
			return -1;
	if (names[0] && buf_addstr(b, "}") < 0)
		return -1;
	if (isnan(v))
		snprintf(num, sizeof(num), "NaN");
	else if (isinf(v))
		snprintf(num, sizeof(num), v > 0 ? "+Inf" : "-Inf");
	else
		snprintf(num, sizeof(num), "%.10g", v);
	return buf_printf(b, " %s\n", num);
}

static int
metrics_runs(const struct page_ctx *p, struct buf *b, struct err *e)
{
	static const char *const rl[] = { "engine", "outcome", "kind", NULL };
	static const char *const fl[] = { "engine", "reason", NULL };
	struct store_tally t;
	int rc = 0;

	if (store_tally_runs(p->s, &t, e) < 0)
		return -2;
	if (family(b, "bisectd_runs_total", "counter", "Benchmark runs "
	    "stored, by engine, outcome (ok or the failure reason) and kind "
	    "(run, warmup, confirm).") < 0)
		rc = -1;
	for (size_t i = 0; i < t.n && rc == 0; i++) {
		const char *v[] = { t.v[i].key[0], t.v[i].key[1],
		    t.v[i].key[2] };

		rc = sample(b, "bisectd_runs_total", rl, v, (double)t.v[i].n);
	}
	if (rc == 0 && family(b, "bisectd_run_failures_total", "counter",
	    "Failed benchmark runs, warm-ups included, by engine and reason "
	    "(exit, signal, timeout, parse, spawn, oom, interrupted).") < 0)
		rc = -1;
	for (size_t i = 0; i < t.n && rc == 0; i++) {
		const char *v[] = { t.v[i].key[0], t.v[i].key[1] };
		double n = (double)t.v[i].n;

		if (strcmp(t.v[i].key[1], "ok") == 0)
			continue;
		/* The kinds of one reason add up to one series. */
		while (i + 1 < t.n && strcmp(t.v[i + 1].key[0], v[0]) == 0 &&
		    strcmp(t.v[i + 1].key[1], v[1]) == 0)
			n += (double)t.v[++i].n;
		rc = sample(b, "bisectd_run_failures_total", fl, v, n);
	}
	store_tally_release(&t);
	return rc;
}

static int
metrics_jobs(const struct page_ctx *p, struct buf *b, struct err *e)
{
	static const char *const jl[] = { "kind", "state", NULL };
	static const char *const none[] = { NULL };
	struct store_tally t;
	double queued = 0;
	int rc = 0;

	if (store_tally_jobs(p->s, &t, e) < 0)
		return -2;
	if (family(b, "bisectd_jobs", "gauge", "Jobs in the store, by kind "
	    "and state.") < 0)
		rc = -1;
	for (size_t i = 0; i < t.n && rc == 0; i++) {
		const char *v[] = { t.v[i].key[0], t.v[i].key[1] };

		if (strcmp(v[1], "queued") == 0)
			queued += (double)t.v[i].n;
		rc = sample(b, "bisectd_jobs", jl, v, (double)t.v[i].n);
	}
	if (rc == 0 && family(b, "bisectd_job_duration_seconds", "summary",
	    "Time from start to finish of the jobs that ended, by kind and "
	    "state (done, failed, cancelled).") < 0)
		rc = -1;
	for (size_t i = 0; i < t.n && rc == 0; i++) {
		const char *v[] = { t.v[i].key[0], t.v[i].key[1] };

		if (strcmp(v[1], "queued") == 0 || strcmp(v[1], "running") == 0)
			continue;
		if (sample(b, "bisectd_job_duration_seconds_sum", jl, v,
		    (double)t.v[i].sum) < 0 ||
		    sample(b, "bisectd_job_duration_seconds_count", jl, v,
		    (double)t.v[i].n) < 0)
			rc = -1;
	}
	if (rc == 0 && (family(b, "bisectd_queue_length", "gauge", "Jobs "
	    "waiting to run.") < 0 || sample(b, "bisectd_queue_length", none,
	    NULL, queued) < 0))
		rc = -1;
	store_tally_release(&t);
	return rc;
}

static int
metrics_running(const struct page_ctx *p, struct buf *b)
{
	static const char *const jl[] = { "kind", "engine", NULL };
	static const char *const none[] = { NULL };
	const json_t *job = p->daemon ? json_object_get(p->daemon, "job") :
	    NULL, *g;

	if (family(b, "bisectd_job_running", "gauge", "1 while the daemon "
	    "runs a job, by its kind and engine.") < 0)
		return -1;
	if (!json_is_object(job))
		return 0;
	{
		const char *v[] = { jstr(job, "kind"), jstr(job, "engine") };

		if (sample(b, "bisectd_job_running", jl, v, 1) < 0)
			return -1;
	}
	g = json_object_get(job, "progress");
	if (!json_is_object(g) || jint(g, "runs") <= 0)
		return 0;
	if (family(b, "bisectd_job_progress_ratio", "gauge", "The running "
	    "job's runs done over the runs of its current step.") < 0)
		return -1;
	return sample(b, "bisectd_job_progress_ratio", none, NULL,
	    (double)(jint(g, "run") - 1) / (double)jint(g, "runs"));
}

static int
metrics_verdicts(const struct page_ctx *p, struct buf *b, struct err *e)
{
	static const char *const vl[] = { "engine", "range", "status", NULL };
	static const char *const tl[] = { "engine", "range", NULL };
	struct store_tally t;
	int rc = 0;

	if (store_tally_verdicts(p->s, &t, e) < 0)
		return -2;
	if (family(b, "bisectd_last_verdict", "gauge", "The newest finished "
	    "bisect of each engine: 1 for its status, 0 for the others.") < 0)
		rc = -1;
	for (size_t i = 0; i < t.n && rc == 0; i++)
		for (size_t k = 0; k < 3 && rc == 0; k++) {
			const char *v[] = { t.v[i].key[0], t.v[i].key[2],
			    verdict_statuses[k] };

			rc = sample(b, "bisectd_last_verdict", vl, v,
			    strcmp(t.v[i].key[1], v[2]) == 0);
		}
	if (rc == 0 && family(b, "bisectd_last_verdict_timestamp_seconds",
	    "gauge", "When the newest finished bisect of each engine ended, "
	    "in Unix time.") < 0)
		rc = -1;
	for (size_t i = 0; i < t.n && rc == 0; i++) {
		const char *v[] = { t.v[i].key[0], t.v[i].key[2] };

		rc = sample(b, "bisectd_last_verdict_timestamp_seconds", tl, v,
		    (double)t.v[i].n);
	}
	store_tally_release(&t);
	return rc;
}

/*
 * Per-token cost and ceiling of every release of every engine, from the
 * report of the engine's whole range: the same fit, under the same
 * measurement definitions, as `bisectctl report`.  An engine with fewer
 * than two stored releases has no range and no series.
 */
static int
metrics_fits(const struct page_ctx *p, struct buf *b)
{
	static const char *const fl[] = { "engine", "release", NULL };
	json_t **reps = calloc(p->conf->nengines + 1, sizeof(*reps));
	int rc = 0;

	if (reps == NULL)
		return -1;
	for (size_t i = 0; i < p->conf->nengines; i++) {
		const struct conf_engine *g = &p->conf->engines[i];
		struct store_release_list l = { NULL, 0 };
		struct report_opts o;
		struct err e = ERR_INIT;
		char spec[600];
		int64_t id;
		int code;

		if (store_engine_find(p->s, g->name, &id, &e) != 0 ||
		    store_release_list(p->s, id, &l, &e) < 0)
			continue;
		if (l.n >= 2) {
			memset(&o, 0, sizeof(o));
			bisect_request_init(&o.req);
			snprintf(spec, sizeof(spec), "%s..%s", l.v[0].version,
			    l.v[l.n - 1].version);
			if (report_build(p->conf, g, p->s, spec, &o, &reps[i],
			    &code, &e) < 0)
				reps[i] = NULL;
		}
		store_release_list_release(&l);
	}
	for (int m = 0; m < 2 && rc == 0; m++) {
		const char *name = m == 0 ? "bisectd_per_token_seconds" :
		    "bisectd_ceiling_tokens_per_second";
		const char *key = m == 0 ? "per_token_ms" : "ceiling_tps";

		if (family(b, name, "gauge", m == 0 ? "Prefill cost per prompt "
		    "token of each measured release, from the fit over the "
		    "engine's fit lengths (times 1000: ms)." : "Prefill "
		    "ceiling of each measured release: 1 / per-token cost.") < 0)
			rc = -1;
		for (size_t i = 0; i < p->conf->nengines && rc == 0; i++) {
			const json_t *rel = json_object_get(reps[i], "releases");
			size_t k;
			json_t *r;

			json_array_foreach(rel, k, r) {
				const json_t *x = json_object_get(r, key);
				const char *v[] = { p->conf->engines[i].name,
				    jstr(r, "version") };

				if (!json_is_number(x))
					continue;
				if ((rc = sample(b, name, fl, v, json_number_value(
				    x) / (m == 0 ? 1000 : 1))) < 0)
					break;
			}
		}
	}
	for (size_t i = 0; i < p->conf->nengines; i++)
		json_decref(reps[i]);
	free(reps);
	return rc;
}

static void
part_free(struct buf *b)
{
	if (b)
		buf_release(b);
	free(b);
}

void
page_metrics_cache_release(struct metrics_cache *c)
{
	part_free(c->store_part);
	part_free(c->verdict_part);
	memset(c, 0, sizeof(*c));
}

/* The families read from the store, before and after the running job's
 * in the page: runs and jobs, then verdicts and fits.  rc as metrics_*. */
static int
metrics_store(const struct page_ctx *p, struct buf *runs,
    struct buf *verdicts, struct err *e)
{
	int rc;

	if ((rc = metrics_runs(p, runs, e)) == 0 &&
	    (rc = metrics_jobs(p, runs, e)) == 0 &&
	    (rc = metrics_verdicts(p, verdicts, e)) == 0)
		rc = metrics_fits(p, verdicts);
	return rc;
}

/* p->metrics built again when the store or the configuration changed
 * since; rc as metrics_*. */
static int
metrics_refresh(const struct page_ctx *p, size_t limit, struct err *e)
{
	struct metrics_cache *c = p->metrics;
	struct buf *runs, *verdicts;
	int version, rc;

	if (store_data_version(p->s, &version, e) < 0)
		return -2;
	if (c->valid && c->data_version == version &&
	    c->conf_generation == p->conf_generation)
		return 0;
	runs = calloc(1, sizeof(*runs));
	verdicts = calloc(1, sizeof(*verdicts));
	if (runs == NULL || verdicts == NULL) {
		free(runs);
		free(verdicts);
		errno = ENOMEM;
		return -1;
	}
	buf_init(runs, limit);
	buf_init(verdicts, limit);
	if ((rc = metrics_store(p, runs, verdicts, e)) < 0) {
		part_free(runs);
		part_free(verdicts);
		return rc;
	}
	part_free(c->store_part);
	part_free(c->verdict_part);
	c->store_part = runs;
	c->verdict_part = verdicts;
	c->data_version = version;
	c->conf_generation = p->conf_generation;
	c->valid = 1;
	c->rebuilds++;
	return 0;
}

int
page_metrics(const struct page_ctx *p, struct buf *out, struct err *e)
{
	static const char *const none[] = { NULL };
	struct buf runs = BUF_INIT(out->limit), verdicts = BUF_INIT(out->limit);
	const struct buf *rp = &runs, *vp = &verdicts;
	int rc;

	if (family(out, "bisectd_up", "gauge", "1: the daemon answers.") < 0 ||
	    sample(out, "bisectd_up", none, NULL, 1) < 0)
		return too_big(e);
	if (p->metrics) {
		rc = metrics_refresh(p, out->limit, e);
		rp = p->metrics->store_part;
		vp = p->metrics->verdict_part;
	} else
		rc = metrics_store(p, &runs, &verdicts, e);
	if (rc == 0 && p->metrics && (family(out,
	    "bisectd_metrics_rebuilds_total", "counter", "Times these "
	    "metrics were read from the store again: once per change of "
	    "the store or the configuration, not per scrape.") < 0 ||
	    sample(out, "bisectd_metrics_rebuilds_total", none, NULL,
	    (double)p->metrics->rebuilds) < 0))
		rc = -1;
	if (rc == 0 && (buf_add(out, rp->data ? rp->data : "", rp->len) < 0 ||
	    metrics_running(p, out) < 0 || buf_add(out, vp->data ?
	    vp->data : "", vp->len) < 0))
		rc = -1;
	buf_release(&runs);
	buf_release(&verdicts);
	if (rc == -2)
		return -1;
	return rc < 0 ? too_big(e) : 0;
}
