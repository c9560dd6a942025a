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

#include "bisectd/jobs/status.h"
#include "bisectd/report/build.h"
#include "bisectd/report/fields.h"
#include "bisectd/report/listing_json.h"
#include "bisectd/report/page.h"
#include "bisectd/report/report.h"
#include "bisectd/report/text_escape.h"
#include "bisectd/report/trend.h"
#include "bisectd/search/verdict_json.h"
#include "common/buf.h"
#include "common/err.h"
#include "config/conf.h"
#include "pages.h"
#include "store/store.h"

/* Recent alerts on the status page. */
#define PAGE_ALERTS	10
/* Reports linked under each engine: its newest bisected ranges. */
#define PAGE_REPORTS	8
/* The releases an engine's plot shows: its newest measured ones.  A
 * watched engine gains one a night; the plot stays readable, and the
 * report behind it cheap, however long its history grows. */
#define PAGE_TREND	40

/* The verdict statuses /metrics names, one series each. */
static const char *const verdict_statuses[] = { "regression",
    "gradual", "no-regression", "unknown" };

/* What the status page adds to the report's style: its tables hold
 * words, not figures, and each engine is a box of its own. */
static const char status_style[] =
    "body.status-page th,body.status-page td{text-align:left;"
    "white-space:normal;vertical-align:top}"
    "section.engine{border:1px solid #ccc;border-radius:.3em;"
    "padding:0 .8em .4em;margin:1em 0}"
    "section.engine h2{border:none;margin:.5em 0 .2em}"
    "section.engine dl.verdict{margin:.3em 0}"
    "ul.reports{margin:0;padding-left:1.2em}"
    "figure.trend svg{max-width:40em}"
    "td.failed{color:#8a1a12}td.cancelled{color:#555}"
    "p.warning{background:#f5e7c0;padding:.3em .5em}";

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

/* In UTC: whoever reads a page may be anywhere. */
static const char *
when(int64_t t, char *b, size_t len)
{
	return rep_when(t, 1, b, len);
}

/* A span of seconds for people: "40s", "3m05s", "2h03m", "3d04h". */
static const char *
span(int64_t t, char *b, size_t len)
{
	return rep_span(t > 0 ? (long long)t : 0, b, len);
}

/* Whether a metric's name can go into a query as it is. */
static int
plain_metric(const char *m)
{
	if (m == NULL || *m == '\0')
		return 0;
	for (; *m; m++)
		if (!((*m >= 'a' && *m <= 'z') || (*m >= '0' && *m <= '9') ||
		    *m == '-'))
			return 0;
	return 1;
}

/*
 * A link to the report of engine over range, <a href="...">range</a>,
 * for metric when it is not NULL (the report's default is the engine's
 * own metric).
 */
static int
report_link(struct buf *out, const char *engine, const char *range,
    const char *metric)
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
	    (plain_metric(metric) && buf_printf(out, "?metric=%s",
	    metric) < 0) || buf_addstr(out, "\">") < 0 ||
	    page_html(out, range) < 0 || buf_addstr(out, "</a>") < 0 ? -1 : 0;
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

/* The engine's own metric by name, into buf; NULL when it is not in the
 * configuration. */
static const char *
engine_metric(const struct page_ctx *p, const char *engine, char *buf,
    size_t len)
{
	const struct conf_engine *g = conf_engine(p->conf, engine);

	return g ? conf_metric_name(&g->metric, buf, len) : NULL;
}

/*
 * What a job does, in words, from its kind, engine and arguments (an
 * object; a string is read as the stored text): "bisect of basert over
 * 0.2.0..0.2.6, metric per-token, threshold 20%", "watch of basert's
 * releases", "bench of basert 0.2.4, prompts 128,512, 3 repetitions".
 * What a bisect leaves to the engine is named as the engine has it.
 * Upstream text, unescaped.  Returns buf.
 */
static const char *
job_what(const struct page_ctx *p, const char *kind, const char *engine,
    const json_t *args, char *buf, size_t len)
{
	const struct conf_engine *g = conf_engine(p->conf, engine);
	json_t *parsed = NULL;
	const json_t *a = args, *t;
	const char *range, *version, *metric, *prompts;
	char name[32], cmd[512];
	long long reps;

	if (json_is_string(args))
		a = parsed = json_loads(json_string_value(args), 0, NULL);
	range = json_string_value(json_object_get(a, "range"));
	version = json_string_value(json_object_get(a, "version"));
	if (strcmp(kind, "bisect") == 0 && range) {
		int off;

		if ((metric = json_string_value(json_object_get(a,
		    "metric"))) == NULL)
			metric = engine_metric(p, engine, name, sizeof(name));
		t = json_object_get(a, "threshold");
		off = snprintf(buf, len, "%s of %s over %s, metric %s",
		    json_is_true(json_object_get(a, "commits")) ?
		    "commit bisect" : "bisect", engine, range, metric ?
		    metric : "the engine's");
		if (off >= 0 && (size_t)off < len) {
			if (json_is_number(t))
				off += snprintf(buf + off, len - off,
				    ", threshold %g%%", 100 *
				    json_number_value(t));
			else if (json_is_string(t))
				off += snprintf(buf + off, len - off,
				    ", threshold %s", json_string_value(t));
			else if (g)
				off += snprintf(buf + off, len - off,
				    ", threshold %g%%", 100 * g->threshold);
		}
		if (off >= 0 && (size_t)off < len &&
		    json_is_true(json_object_get(a, "all")))
			snprintf(buf + off, len - off, ", every change");
	} else if (strcmp(kind, "watch") == 0 &&
	    json_is_string(json_object_get(a, "compare")))
		snprintf(buf, len, "compare check %s",
		    json_string_value(json_object_get(a, "compare")));
	else if (strcmp(kind, "watch") == 0)
		snprintf(buf, len, json_is_true(json_object_get(a,
		    "yardstick")) ? "yardstick check of %s" :
		    "watch of %s's releases", engine);
	else if (strcmp(kind, "fetch") == 0 && version)
		snprintf(buf, len, "fetch of %s %s", engine, version);
	else if (strcmp(kind, "ablate") == 0 && version)
		snprintf(buf, len, "ablation of %s %s", engine, version);
	else if (strcmp(kind, "bench") == 0 && version) {
		prompts = json_string_value(json_object_get(a, "prompts"));
		reps = (long long)json_integer_value(json_object_get(a,
		    "reps"));
		snprintf(buf, len, "bench of %s %s%s%s", engine, version,
		    prompts ? ", prompts " : "", prompts ? prompts : "");
		if (reps > 0 && strlen(buf) + 1 < len)
			snprintf(buf + strlen(buf), len - strlen(buf),
			    ", %lld repetitions", reps);
	} else
		snprintf(buf, len, "%s of %s %s", kind, engine,
		    status_job_args_text(kind, args, cmd, sizeof(cmd)));
	json_decref(parsed);
	return buf;
}

/* One running job: its paragraph and its progress. */
static int
running_job(const struct page_ctx *p, const json_t *job, struct buf *b)
{
	const json_t *g;
	char what[1024], t[32];

	job_what(p, jstr(job, "kind"), jstr(job, "engine"), json_object_get(
	    job, "args"), what, sizeof(what));
	if (buf_printf(b, "<p class=\"running\" id=\"running-%lld\">Job %lld: ",
	    jint(job, "id"), jint(job, "id")) < 0 || page_html(b, what) < 0 ||
	    buf_printf(b, ", for %s", span(jint(job, "elapsed"), t,
	    sizeof(t))) < 0)
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
	if (jstr(g, "waiting")[0] && (buf_addstr(b, "<br/>") < 0 ||
	    page_html(b, jstr(g, "waiting")) < 0))
		return -1;
	return buf_addstr(b, "</p>\n");
}

static int
section_daemon(const struct page_ctx *p, struct buf *b)
{
	const json_t *d = p->daemon, *jobs, *x, *failed;
	char t[32];
	size_t i;

	if (d == NULL)
		return buf_addstr(b, "<p>The daemon's status is not "
		    "available.</p>\n");
	if (buf_printf(b, "<p class=\"meta\">Daemon pid %lld, up %s, "
	    "configuration ", jint(d, "pid"), span(jint(d, "uptime"), t,
	    sizeof(t))) < 0 || page_html(b, jstr(d, "config")) < 0 ||
	    buf_addstr(b, ".</p>\n") < 0)
		return -1;
	if (json_is_object(failed = json_object_get(d, "reload_failed")) &&
	    (buf_printf(b, "<p class=\"warning\">The last reload failed at "
	    "%s: ", when(jint(failed, "at"), t, sizeof(t))) < 0 ||
	    page_html(b, jstr(failed, "error")) < 0 || buf_addstr(b, " (the "
	    "configuration loaded before it stays in force).</p>\n") < 0))
		return -1;
	if (buf_addstr(b, "<h2>Running</h2>\n") < 0)
		return -1;
	jobs = json_object_get(d, "jobs");
	if (json_array_size(jobs) == 0)
		return buf_addstr(b, "<p id=\"running\">Nothing.</p>\n");
	json_array_foreach(jobs, i, x)
		if (running_job(p, x, b) < 0)
			return -1;
	return 0;
}

/* --- an engine's box --- */

/* "regression at 0.2.4, per-token, confirmed over 0.2.0..0.2.6, metric
 * per-token, finished ..." of the newest verdict. */
static int
engine_verdict(const struct conf_engine *g, const struct store_bisect_row *r,
    struct buf *b)
{
	json_t *v = json_loads(r->verdict, 0, NULL);
	char words[1024], range[600], t[32], name[32];
	const char *own = conf_metric_name(&g->metric, name, sizeof(name));

	verdict_words(v, words, sizeof(words));
	json_decref(v);
	snprintf(range, sizeof(range), "%s..%s", r->good, r->bad);
	return buf_addstr(b, "<dt>Latest verdict</dt><dd>") < 0 ||
	    buf_addstr(b, "<span class=\"status ") < 0 ||
	    page_html(b, r->status) < 0 ||
	    buf_addstr(b, "\">") < 0 || page_html(b, words) < 0 ||
	    buf_addstr(b, "</span> over ") < 0 ||
	    report_link(b, g->name, range, strcmp(r->metric, own) ? r->metric :
	    NULL) < 0 || buf_addstr(b, ", metric ") < 0 ||
	    page_html(b, r->metric) < 0 || buf_printf(b, ", finished %s</dd>\n",
	    when(r->finished, t, sizeof(t))) < 0 ? -1 : 0;
}

/* Every bisected range's report, newest first; the plot's own range. */
static int
engine_reports(const struct conf_engine *g,
    const struct store_bisect_rows *rows, const char *plotted,
    struct buf *b)
{
	char range[600], t[32], name[32], words[1024];
	const char *own = conf_metric_name(&g->metric, name, sizeof(name));

	if (buf_addstr(b, "<dt>Reports</dt><dd>") < 0)
		return -1;
	if (rows->n == 0 && plotted == NULL)
		return buf_addstr(b, "none yet</dd>\n");
	if (buf_addstr(b, "<ul class=\"reports\">\n") < 0)
		return -1;
	for (size_t i = 0; i < rows->n; i++) {
		const struct store_bisect_row *r = &rows->v[i];
		json_t *v = json_loads(r->verdict, 0, NULL);

		verdict_words(v, words, sizeof(words));
		json_decref(v);
		snprintf(range, sizeof(range), "%s..%s", r->good, r->bad);
		if (buf_addstr(b, "<li>") < 0 || report_link(b, g->name,
		    range, strcmp(r->metric, own) ? r->metric : NULL) < 0 ||
		    buf_addstr(b, " (") < 0 || page_html(b, r->metric) < 0 ||
		    buf_addstr(b, "): ") < 0 || page_html(b, words) < 0 ||
		    buf_printf(b, ", %s</li>\n", when(r->finished, t,
		    sizeof(t))) < 0)
			return -1;
	}
	/* The plotted range gets a line unless a bisect's covers it. */
	for (size_t i = 0; plotted && i < rows->n; i++) {
		snprintf(range, sizeof(range), "%s..%s", rows->v[i].good,
		    rows->v[i].bad);
		if (strcmp(range, plotted) == 0 &&
		    strcmp(rows->v[i].metric, own) == 0)
			plotted = NULL;
	}
	if (plotted && (buf_addstr(b, "<li>") < 0 ||
	    report_link(b, g->name, plotted, NULL) < 0 ||
	    buf_addstr(b, ": the releases plotted below</li>\n") < 0))
		return -1;
	return buf_addstr(b, "</ul></dd>\n");
}

/* When the engine's watch is queued next, and by which schedule. */
static int
engine_next_watch(const struct page_ctx *p, const struct conf_engine *g,
    time_t now, struct buf *b)
{
	struct err e = ERR_INIT;
	char t[32], in[32];
	time_t next;
	int rc;

	if (buf_addstr(b, "<dt>Next watch</dt><dd>") < 0)
		return -1;
	if ((rc = status_next_watch(g, p->s, now, &next, &e)) == 1)
		rc = buf_addstr(b, "none: the engine has no schedule");
	else if (rc < 0)
		rc = buf_addstr(b, "unknown: ") < 0 || page_html(b, e.msg) < 0 ?
		    -1 : 0;
	else if (next <= now)
		rc = buf_addstr(b, "due now, schedule ") < 0 ||
		    page_html(b, g->schedule) < 0 ? -1 : 0;
	else
		rc = buf_printf(b, "%s (in %s), schedule ", when(next, t,
		    sizeof(t)), span(next - now, in, sizeof(in))) < 0 ||
		    page_html(b, g->schedule) < 0 ? -1 : 0;
	return rc < 0 || buf_addstr(b, "</dd>\n") < 0 ? -1 : 0;
}

/* An alert's delivery to each sink: "hook: delivered, mail: pending". */
static int
alert_delivery(const struct store_alert_row *r, struct buf *b)
{
	for (size_t k = 0; k < r->nsinks; k++)
		if ((k && buf_addstr(b, ", ") < 0) ||
		    page_html(b, r->sinks[k].sink) < 0 ||
		    buf_addstr(b, ": ") < 0 ||
		    page_html(b, r->sinks[k].state) < 0)
			return -1;
	return 0;
}

/* The alert's summary, and a link to the report of its range. */
static int
alert_summary(const struct store_alert_row *r, struct buf *b)
{
	json_t *body = json_loads(r->alert.body, 0, NULL);
	const json_t *range = json_object_get(body, "range");
	char spec[600];
	int rc = page_html(b, r->alert.summary);

	if (rc == 0 && json_is_object(range)) {
		snprintf(spec, sizeof(spec), "%s..%s", jstr(range, "from"),
		    jstr(range, "to"));
		if (buf_addstr(b, " (report: ") < 0 ||
		    report_link(b, r->alert.engine, spec, NULL) < 0 ||
		    buf_addstr(b, ")") < 0)
			rc = -1;
	}
	json_decref(body);
	return rc;
}

static int
engine_last_alert(const struct page_ctx *p, const struct conf_engine *g,
    struct buf *b, struct err *e)
{
	struct store_alert_rows rows;
	char t[32];
	int rc;

	if (store_alert_list_engine(p->s, g->name, 1, &rows, e) < 0)
		return -2;
	if (buf_addstr(b, "<dt>Last alert</dt><dd>") < 0)
		rc = -1;
	else if (rows.n == 0)
		rc = buf_addstr(b, "none");
	else
		rc = buf_printf(b, "%s: ", when(rows.v[0].alert.created, t,
		    sizeof(t))) < 0 || alert_summary(&rows.v[0], b) < 0 ||
		    (rows.v[0].nsinks && (buf_addstr(b, "; ") < 0 ||
		    alert_delivery(&rows.v[0], b) < 0)) ? -1 : 0;
	store_alert_rows_release(&rows);
	return rc < 0 || buf_addstr(b, "</dd>\n") < 0 ? -1 : 0;
}

/*
 * The report of the engine's newest PAGE_TREND measured releases, the
 * range in range; 1 when fewer than two are measured.  The same fit as
 * `bisectctl report` over that range.
 */
static int
engine_trend_report(const struct page_ctx *p, const struct conf_engine *g,
    int64_t id, char *range, size_t len, json_t **rep, struct err *e)
{
	struct store_release_list l = { NULL, 0 };
	struct report_opts o;
	size_t first = 0, last = 0, n = 0;
	int code, rc = 1;

	*rep = NULL;
	if (store_release_list(p->s, id, &l, e) < 0)
		return -1;
	for (size_t i = l.n; i-- > 0 && n < PAGE_TREND;)
		if (l.v[i].state == RELEASE_MEASURED) {
			if (n++ == 0)
				last = i;
			first = i;
		}
	if (n >= 2) {
		memset(&o, 0, sizeof(o));
		bisect_request_init(&o.req);
		snprintf(range, len, "%s..%s", l.v[first].version,
		    l.v[last].version);
		rc = report_build(p->conf, g, p->s, range, &o, rep, &code, e);
	}
	store_release_list_release(&l);
	return rc;
}

/* The plot of the report, or why there is none: no report (why: its
 * error, or NULL when fewer than two releases are measured). */
static int
engine_plot(const json_t *rep, const char *why, size_t idx, struct buf *b)
{
	char id[32], *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if (rep == NULL && why)
		return buf_addstr(b, "<p>No plot: ") < 0 ||
		    page_html(b, why) < 0 || buf_addstr(b, "</p>\n") < 0 ?
		    -1 : 0;
	if (rep == NULL)
		return buf_addstr(b, "<p>No plot yet: fewer than two of its "
		    "releases are measured.</p>\n");
	if ((f = open_memstream(&text, &len)) == NULL)
		return -1;
	snprintf(id, sizeof(id), "trend-%zu", idx + 1);
	rc = trend_html(rep, id, f);
	if (fclose(f) != 0)
		rc = -1;
	if (rc == 0)
		rc = buf_add(b, text, len);
	else if (rc == 1)
		rc = buf_addstr(b, "<p>No plot yet: no release has its "
		    "per-token cost or its decode time measured.</p>\n");
	free(text);
	return rc;
}

/*
 * One engine: its latest verdict in words, the next watch, the last
 * alert, its reports, and the plot of its newest releases.  A report
 * that cannot be built costs the plot, not the page.
 */
static int
section_engine(const struct page_ctx *p, size_t idx, time_t now,
    struct buf *b, struct err *e)
{
	const struct conf_engine *g = &p->conf->engines[idx];
	struct store_bisect_rows rows = { NULL, 0 };
	struct err re = ERR_INIT;
	char plotted[600];
	json_t *rep = NULL;
	int64_t id;
	int rc, found, trend = 1;

	if ((found = store_engine_find(p->s, g->name, &id, e)) < 0)
		return -2;
	if (found == 0 && store_bisect_recent(p->s, id, PAGE_REPORTS, &rows,
	    e) < 0)
		return -2;
	if (found == 0 && (trend = engine_trend_report(p, g, id, plotted,
	    sizeof(plotted), &rep, &re)) != 0)
		rep = NULL;
	rc = buf_addstr(b, "<section class=\"engine\" id=\"engine-") < 0 ||
	    page_html(b, g->name) < 0 || buf_addstr(b, "\">\n<h2>") < 0 ||
	    page_html(b, g->name) < 0 ||
	    buf_addstr(b, "</h2>\n<dl class=\"verdict\">\n") < 0 ? -1 : 0;
	if (rc == 0)
		rc = rows.n ? engine_verdict(g, &rows.v[0], b) :
		    buf_addstr(b, found == 0 ? "<dt>Latest verdict</dt><dd>"
		    "none yet</dd>\n" : "<dt>Latest verdict</dt><dd>none yet: "
		    "nothing is stored for it</dd>\n");
	if (rc == 0)
		rc = engine_next_watch(p, g, now, b);
	if (rc == 0)
		rc = engine_last_alert(p, g, b, e);
	if (rc == 0)
		rc = engine_reports(g, &rows, rep ? plotted : NULL, b);
	if (rc == 0 && buf_addstr(b, "</dl>\n") < 0)
		rc = -1;
	if (rc == 0 && found == 0)
		rc = engine_plot(rep, trend < 0 ? re.msg : NULL, idx, b);
	if (rc == 0 && buf_addstr(b, "</section>\n") < 0)
		rc = -1;
	json_decref(rep);
	store_bisect_rows_release(&rows);
	return rc;
}

static int
section_engines(const struct page_ctx *p, struct buf *b, struct err *e)
{
	time_t now = time(NULL);
	int rc = 0;

	for (size_t i = 0; i < p->conf->nengines && rc == 0; i++)
		rc = section_engine(p, i, now, b, e);
	return rc;
}

/* --- the queue, the jobs that ended, Slurm, alerts --- */

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
ended(const struct store_job *j)
{
	return strcmp(j->state, "queued") != 0 &&
	    strcmp(j->state, "running") != 0;
}

/* A job's row: its number, what it does, and cell, then time. */
static int
job_row(const struct page_ctx *p, const struct store_job *j,
    const char *cls, const char *cell, int64_t t, struct buf *b)
{
	char what[1024], ts[32];
	json_t *args = status_job_args_json(j->args);

	if (args == NULL)
		return -1;
	job_what(p, j->kind, j->engine, args, what, sizeof(what));
	json_decref(args);
	return buf_printf(b, "<tr id=\"job-%lld\"><td>%lld</td><td>",
	    (long long)j->id, (long long)j->id) < 0 ||
	    page_html(b, what) < 0 || buf_addstr(b, "</td><td class=\"") < 0 ||
	    page_html(b, cls) < 0 || buf_addstr(b, "\">") < 0 ||
	    page_html(b, cell) < 0 || buf_printf(b, "</td><td>%s</td></tr>\n",
	    when(t, ts, sizeof(ts))) < 0 ? -1 : 0;
}

/*
 * The queue as it runs: the running jobs and the queued ones, in the
 * order they run; then the jobs that ended, newest first, with how each
 * ended in the words of `bisectctl status`.
 */
static int
section_queue(const struct page_ctx *p, struct buf *b, struct err *e)
{
	struct store_jobs jobs;
	time_t now = time(NULL);
	char words[1024], t[32];
	size_t waiting = 0, done = 0;
	int rc = 0;

	if (store_job_list(p->s, STATUS_JOBS, &jobs, e) < 0)
		return -2;
	for (size_t i = 0; i < jobs.n; i++)
		waiting += !ended(&jobs.v[i]);
	if (buf_addstr(b, "<h2>Queue</h2>\n") < 0)
		rc = -1;
	else if (waiting == 0)
		rc = buf_addstr(b, "<p id=\"queue\">The queue is empty.</p>\n");
	else
		rc = buf_addstr(b, "<table id=\"queue\"><tr><th>job</th>"
		    "<th>what</th><th>state</th><th>queued</th></tr>\n");
	for (size_t i = 0; i < jobs.n && rc == 0; i++) {
		const struct store_job *j = &jobs.v[i];

		if (ended(j))
			continue;
		if (strcmp(j->state, "running") == 0)
			snprintf(words, sizeof(words), "running for %s", span(
			    now - j->started, t, sizeof(t)));
		else
			snprintf(words, sizeof(words), "queued");
		rc = job_row(p, j, j->state, words, j->created, b);
	}
	if (rc == 0 && waiting && buf_addstr(b, "</table>\n") < 0)
		rc = -1;
	for (size_t i = 0; i < jobs.n && rc == 0; i++) {
		const struct store_job *j = &jobs.v[i];

		if (!ended(j))
			continue;
		if (done++ == 0 && buf_addstr(b, "<h2>Recent jobs</h2>\n"
		    "<table id=\"recent\"><tr><th>job</th><th>what</th>"
		    "<th>outcome</th><th>ended</th></tr>\n") < 0)
			rc = -1;
		else
			rc = job_row(p, j, j->state, status_job_outcome(j,
			    words, sizeof(words)), j->finished, b);
	}
	if (rc == 0 && done && buf_addstr(b, "</table>\n") < 0)
		rc = -1;
	store_jobs_release(&jobs);
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
	if (rows.n == 0) {
		store_alert_rows_release(&rows);
		return buf_addstr(b, "<h2>Recent alerts</h2>\n<p id=\"alerts\">"
		    "None.</p>\n");
	}
	if (buf_addstr(b, "<h2>Recent alerts</h2>\n<table id=\"alerts\"><tr>"
	    "<th>alert</th><th>created</th><th>kind</th><th>engine</th>"
	    "<th>summary</th><th>delivery</th></tr>\n") < 0)
		rc = -1;
	for (size_t i = 0; i < rows.n && rc == 0; i++) {
		const struct store_alert_row *r = &rows.v[i];

		if (buf_printf(b, "<tr><td>%lld</td><td>%s</td><td>",
		    (long long)r->alert.id, when(r->alert.created, t,
		    sizeof(t))) < 0 || page_html(b, r->alert.kind) < 0 ||
		    buf_addstr(b, "</td><td>") < 0 ||
		    page_html(b, r->alert.engine) < 0 ||
		    buf_addstr(b, "</td><td>") < 0 ||
		    alert_summary(r, b) < 0 ||
		    buf_addstr(b, "</td><td>") < 0 ||
		    alert_delivery(r, b) < 0 ||
		    buf_addstr(b, "</td></tr>\n") < 0)
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

	/* XHTML syntax, as the report's page: a browser and an XML parser
	 * read the same tree. */
	if (buf_addstr(out, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/"
	    "1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
	    "<meta name=\"viewport\" content=\"width=device-width, "
	    "initial-scale=1\"/>\n<title>bisectd status</title>\n"
	    "<style>") < 0 ||
	    buf_addstr(out, html_page_style) < 0 ||
	    buf_addstr(out, trend_style) < 0 ||
	    buf_addstr(out, status_style) < 0 ||
	    buf_addstr(out, "</style>\n</head>\n<body class=\"status-page\">\n"
	    "<h1>bisectd</h1>\n") < 0 || section_daemon(p, out) < 0)
		return too_big(e);
	if ((rc = section_engines(p, out, e)) == 0 &&
	    (rc = section_queue(p, out, e)) == 0 &&
	    (rc = section_slurm(p, out, e)) == 0)
		rc = section_alerts(p, out, e);
	if (rc == -2)
		return -1;
	if (rc < 0 || buf_addstr(out, "<p class=\"meta\"><a href=\"/metrics\">"
	    "metrics</a> &#183; <a href=\"/api/status\">status as JSON</a> "
	    "&#183; <a href=\"/api/alerts\">alerts as JSON</a></p>\n"
	    "</body>\n</html>\n") < 0)
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
		for (size_t k = 0; k < sizeof(verdict_statuses) /
		    sizeof(verdict_statuses[0]) && rc == 0; k++) {
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

		if (family(b, name, "gauge", m == 0 ? "Prefill cost per prompt "
		    "token of each measured release, from the fit over the "
		    "engine's fit lengths (times 1000: ms)." : "Prefill "
		    "ceiling of each measured release: 1 / per-token cost.") < 0)
			rc = -1;
		for (size_t i = 0; i < p->conf->nengines && rc == 0; i++) {
			struct report rp;

			if (report_read(reps[i], &rp) < 0) {
				rc = -1;
				break;
			}
			for (size_t k = 0; k < rp.nreleases; k++) {
				const struct report_fit *f =
				    &rp.releases[k].fit;
				double x = m == 0 ? f->per_token.value / 1000 :
				    f->ceiling.value;
				const char *v[] = { p->conf->engines[i].name,
				    rp.releases[k].version };

				if (!isfinite(x))
					continue;
				if ((rc = sample(b, name, fl, v, x)) < 0)
					break;
			}
			report_clear(&rp);
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
