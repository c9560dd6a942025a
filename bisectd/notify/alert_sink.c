/*
 * alert_sink.c: delivering recorded alerts to the configured sinks
 * (webhook, command, email, github-issue: github.c), with every attempt
 * stored and failures retried with exponential backoff; and the
 * regression and gradual alerts' wording and dedup keys.
 * It owns nothing but the temporary file a command sink reads.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "common/clock.h"
#include "alert_sink.h"
#include "sink.h"
#include "config/conf.h"
#include "common/err.h"
#include "common/logto.h"
#include "fetch/http.h"
#include "bisectd/process/runner.h"
#include "store/store.h"
#include "common/strv.h"
#include "bisectd/process/template.h"
#include "bisectd/report/text_escape.h"

/* A sink is never sent alerts older than this it has not tried yet: one
 * added to the configuration gets the recent alerts, not a backlog. */
#define ALERT_BACKLOG_S		(7 * 86400)
/* Alerts tried per sink and call; the rest wait for the next call. */
#define ALERT_BATCH		32
#define ALERT_REPLY_MAX		(64 * 1024)

/* Log through the caller's callback, if any. */
#define logf_(o, level, ...) log_to((o) ? (o)->log : NULL, \
	(o) ? (o)->arg : NULL, (level), __VA_ARGS__)

/* Seconds to wait after the attempts-th failure (1, 2, ...). */
static int64_t
backoff_s(int attempts)
{
	int64_t d = ALERT_RETRY_BASE_S;

	for (int i = 1; i < attempts && d < ALERT_RETRY_MAX_S; i++)
		d *= 2;
	return d < ALERT_RETRY_MAX_S ? d : ALERT_RETRY_MAX_S;
}

/*
 * With [bisectd] public-url, an alert over a range links the daemon's
 * page of its report: "report_url", and at the end of "text".  The link
 * is built here, not stored: a changed public-url applies to retries.
 */
static int
report_url(json_t *o, const char *public_url)
{
	const json_t *range = json_object_get(o, "range");
	const char *engine = json_string_value(json_object_get(o, "engine"));
	const char *from = json_string_value(json_object_get(range, "from"));
	const char *to = json_string_value(json_object_get(range, "to"));
	char *path, *url, *text;
	int rc = -1;

	if (engine == NULL || from == NULL || to == NULL)
		return 0;
	if ((path = text_report_path(engine, from, to)) == NULL)
		return -1;
	if (asprintf(&url, "%s%s", public_url, path) >= 0) {
		if (asprintf(&text, "%s\n%s", json_string_value(
		    json_object_get(o, "text")), url) >= 0) {
			json_object_set_new(o, "report_url", json_string(url));
			json_object_set_new(o, "text", json_string(text));
			free(text);
			rc = 0;
		}
		free(url);
	}
	free(path);
	return rc;
}

/*
 * The document a sink receives: the stored body with `text` (the line a
 * Slack-compatible receiver shows), the alert's id, kind, engine and
 * time beside what the recording part put there.  For a chat receiver
 * (chat set) `text` has mentions and control sequences made inert: it
 * holds upstream tags.  Malloced.
 */
static char *
payload(const struct store_alert *a, const char *public_url, int pretty,
    int chat)
{
	json_t *o = json_loads(a->body, 0, NULL);
	char when[32];
	struct tm tm;
	time_t t = (time_t)a->created;
	char *text;

	if (!json_is_object(o)) {
		json_decref(o);
		o = json_object();
		json_object_set_new(o, "body", json_string(a->body));
	}
	if (!json_is_string(json_object_get(o, "text")))
		json_object_set_new(o, "text", json_string(a->summary));
	if (public_url && report_url(o, public_url) < 0) {
		json_decref(o);
		return NULL;
	}
	if (chat) {
		char *safe = text_chat_safe(json_string_value(
		    json_object_get(o, "text")));

		if (safe == NULL) {
			json_decref(o);
			return NULL;
		}
		json_object_set_new(o, "text", json_string(safe));
		free(safe);
	}
	json_object_set_new(o, "alert_id", json_integer(a->id));
	if (json_object_get(o, "kind") == NULL)
		json_object_set_new(o, "kind", json_string(a->kind));
	if (json_object_get(o, "engine") == NULL)
		json_object_set_new(o, "engine", json_string(a->engine));
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(o, "time", json_string(when));
	text = json_dumps(o, (pretty ? JSON_INDENT(2) : JSON_COMPACT) |
	    JSON_SORT_KEYS);
	json_decref(o);
	return text;
}

static void
send_webhook(const struct conf_alert *k, const char *doc,
    struct sink_outcome *r)
{
	struct http_opts ho = HTTP_OPTS_INIT;
	struct http_response resp;

	/* One quick try: the retries are ours, spread over hours, so a down
	 * or slow receiver costs the daemon at most ALERT_TIMEOUT_MS. */
	ho.allow_http = k->allow_http;
	ho.connect_timeout_ms = ALERT_TIMEOUT_MS / 2;
	ho.total_timeout_ms = ALERT_TIMEOUT_MS;
	ho.low_speed_time_s = ALERT_TIMEOUT_MS / 1000;
	ho.max_retries = 0;
	ho.max_redirects = 0;
	ho.max_bytes = ALERT_REPLY_MAX;
	http_response_init(&resp);
	if (http_post(k->target, &ho, "application/json", doc, strlen(doc),
	    &resp, &r->err) == 0) {
		r->http_status = resp.status;
		if (resp.status >= 200 && resp.status < 300)
			r->ok = 1;
		else
			err_set(&r->err, "webhook answered HTTP %ld",
			    resp.status);
	} else if (resp.status > 0)
		r->http_status = resp.status;
	http_response_release(&resp);
}

static void
send_command(const struct conf_alert *k, const char *doc,
    struct sink_outcome *r)
{
	struct tmpl_vals v = TMPL_VALS_INIT;
	struct child_spec cs = CHILD_SPEC_INIT;
	struct strv argv = STRV_INIT;
	struct run_result res;
	const char *tmp = getenv("TMPDIR");
	char path[4096], how[512];
	size_t len = strlen(doc);
	int fd;

	if (tmpl_expand(k->target, &v, &argv, &r->err) < 0) {
		err_prefix(&r->err, "alert command '%s'", k->target);
		strv_clear(&argv);
		return;
	}
	snprintf(path, sizeof(path), "%s/bisectd-alert-XXXXXX",
	    tmp && tmp[0] ? tmp : "/tmp");
	if ((fd = mkstemp(path)) < 0) {
		err_errno(&r->err, "cannot create '%s' for an alert command",
		    path);
		strv_clear(&argv);
		return;
	}
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, doc + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err_errno(&r->err, "cannot write '%s'", path);
			close(fd);
			unlink(path);
			strv_clear(&argv);
			return;
		}
		off += (size_t)n;
	}
	close(fd);
	cs.argv = (const char *const *)argv.v;
	cs.timeout_ms = ALERT_TIMEOUT_MS;
	cs.stdin_path = path;
	if (run_child(&cs, &res, &r->err) == 0) {
		r->exit_code = res.exit_code;
		if (res.reason == RUN_OK)
			r->ok = 1;
		else
			err_set(&r->err, "alert command '%s': %s%s%.200s",
			    argv.v[0], run_describe(&res, how, sizeof(how)),
			    res.errtail.len ? ": " : "",
			    res.errtail.len ? res.errtail.data : "");
		run_result_release(&res);
	}
	unlink(path);
	strv_clear(&argv);
}

/* Replace control characters (a newline could start a header). */
static void
one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

/* Append s to b with every "\n" as "\r\n". */
static int
put_crlf(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\n' && buf_add(b, "\r", 1) < 0)
			return -1;
		if (buf_add(b, s, 1) < 0)
			return -1;
	}
	return 0;
}

static void
send_email(const struct conf_alert *k, const struct store_alert *a,
    const char *doc, struct sink_outcome *r)
{
	struct http_opts ho = HTTP_OPTS_INIT;
	struct strv to = STRV_INIT;
	struct buf msg;
	char from[512], host[256], subject[512], date[64];
	time_t now = time(NULL);
	struct tm tm;

	if (k->from)
		snprintf(from, sizeof(from), "%s", k->from);
	else {
		if (gethostname(host, sizeof(host)) < 0)
			snprintf(host, sizeof(host), "localhost");
		host[sizeof(host) - 1] = '\0';
		snprintf(from, sizeof(from), "bisectd@%s", host);
	}
	one_line(from);
	if (strv_split(&to, k->target, ',') < 0) {
		err_set(&r->err, "bad recipient list '%s'", k->target);
		return;
	}
	snprintf(subject, sizeof(subject), "%s", a->summary);
	one_line(subject);
	localtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S %z", &tm);
	buf_init(&msg, 1024 * 1024);
	if (buf_printf(&msg, "From: %s\r\nTo: ", from) < 0)
		goto nomem;
	for (size_t i = 0; i < to.n; i++) {
		one_line(to.v[i]);
		if (buf_printf(&msg, "%s%s", i ? ", " : "", to.v[i]) < 0)
			goto nomem;
	}
	if (buf_printf(&msg, "\r\nSubject: %s\r\nDate: %s\r\n"
	    "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
	    "X-Bisectd-Alert: %lld\r\n\r\n", subject, date,
	    (long long)a->id) < 0 || put_crlf(&msg, a->summary) < 0 ||
	    put_crlf(&msg, "\n\n") < 0 || put_crlf(&msg, doc) < 0 ||
	    put_crlf(&msg, "\n") < 0)
		goto nomem;
	ho.allow_http = k->allow_http;
	ho.connect_timeout_ms = ALERT_TIMEOUT_MS / 2;
	ho.total_timeout_ms = ALERT_TIMEOUT_MS;
	ho.low_speed_time_s = ALERT_TIMEOUT_MS / 1000;
	ho.max_retries = 0;
	if (http_smtp_send(k->smtp, &ho, from, &to, msg.data, &r->err) == 0)
		r->ok = 1;
	buf_release(&msg);
	strv_clear(&to);
	return;
nomem:
	err_set(&r->err, "alert mail too large or out of memory");
	buf_release(&msg);
	strv_clear(&to);
}

static const char *const kind_names[] = { "webhook", "command", "email",
    "github-issue", "github-comment" };

/*
 * Replace every copy of url in msg (libcurl's and our own messages quote
 * it) by its redacted form: a webhook's URL is its credential, and msg
 * goes to the store and the log.
 */
static void
scrub_url(char *msg, size_t cap, const char *url)
{
	char shown[256], *hit, *out;
	size_t ulen = strlen(url), off = 0;

	if (ulen == 0 || (out = malloc(cap)) == NULL)
		return;
	conf_url_redact(url, shown, sizeof(shown));
	out[0] = '\0';
	for (const char *p = msg; ; p = hit + ulen) {
		if ((hit = strstr(p, url)) == NULL) {
			snprintf(out + off, cap - off, "%s", p);
			break;
		}
		off += (size_t)snprintf(out + off, cap - off, "%.*s%s",
		    (int)(hit - p), p, shown);
		if (off >= cap - 1)
			break;
	}
	snprintf(msg, cap, "%s", out);
	free(out);
}

/* One attempt of one alert through one sink. */
static void
deliver_one(const struct conf *c, struct store *s,
    const struct conf_alert *k, const struct store_alert *a,
    struct sink_outcome *r)
{
	char *doc = payload(a, c->public_url, k->kind == ALERT_EMAIL,
	    k->kind == ALERT_WEBHOOK);

	memset(r, 0, sizeof(*r));
	r->http_status = -1;
	r->exit_code = -1;
	if (doc == NULL) {
		err_set(&r->err, "cannot build alert %lld's document",
		    (long long)a->id);
		return;
	}
	switch (k->kind) {
	case ALERT_WEBHOOK:
		send_webhook(k, doc, r);
		break;
	case ALERT_COMMAND:
		send_command(k, doc, r);
		break;
	case ALERT_EMAIL:
		send_email(k, a, doc, r);
		break;
	case ALERT_GITHUB:
	case ALERT_GITHUB_COMMENT:
		github_send(c, s, k, a, r);
		break;
	}
	if (!r->ok && r->err.msg[0] == '\0')
		err_set(&r->err, "%s '%s' failed", kind_names[k->kind],
		    k->target);
	if (k->kind == ALERT_WEBHOOK)
		scrub_url(r->err.msg, sizeof(r->err.msg), k->target);
	free(doc);
}

int
alert_deliver_at(const struct conf *c, struct store *s,
    const struct alert_opts *o, int64_t now, struct err *e)
{
	for (size_t i = 0; i < c->nalerts; i++) {
		const struct conf_alert *k = &c->alerts[i];
		struct store_alert_dues due;
		char shown[512];

		if ((int)k->kind < 0 || k->kind > ALERT_GITHUB_COMMENT ||
		    !k->target)
			continue;
		if (store_alert_enlist(s, k->name, conf_alert_shown(k, shown,
		    sizeof(shown)), now - ALERT_BACKLOG_S, now, e) < 0 ||
		    store_alert_due(s, k->name, now, ALERT_BATCH, &due, e) < 0)
			return -1;
		for (size_t j = 0; j < due.n; j++) {
			const struct store_alert *a = &due.v[j].alert;
			struct store_alert_attempt at;
			struct sink_outcome r;
			int64_t t0 = clock_now_ms();
			int tries = due.v[j].attempts + 1;

			deliver_one(c, s, k, a, &r);
			memset(&at, 0, sizeof(at));
			at.alert_id = a->id;
			at.sink = k->name;
			at.at = now;
			at.ok = r.ok;
			at.http_status = r.http_status;
			at.exit_code = r.exit_code;
			at.error = r.err.msg;
			at.duration_ms = clock_now_ms() - t0;
			at.next_at = r.ok || tries >= ALERT_MAX_ATTEMPTS ? 0 :
			    now + backoff_s(tries);
			if (store_alert_attempt_add(s, &at, e) < 0) {
				store_alert_dues_release(&due);
				return -1;
			}
			if (r.ok) {
				logf_(o, ALERT_LOG_INFO, "alert %lld sent to "
				    "%s: %s", (long long)a->id, k->name,
				    a->summary);
				continue;
			}
			if (at.next_at)
				logf_(o, ALERT_LOG_WARNING, "alert %lld to %s "
				    "failed (attempt %d, next in %lld s): %s",
				    (long long)a->id, k->name, tries,
				    (long long)(at.next_at - now), r.err.msg);
			else
				logf_(o, ALERT_LOG_ERR, "alert %lld to %s "
				    "failed %d times, giving up: %s",
				    (long long)a->id, k->name, tries,
				    r.err.msg);
			/* The receiver is down or broken: the other alerts
			 * wait with this one instead of each costing a
			 * timeout now. */
			if (store_alert_postpone(s, k->name, at.next_at ?
			    at.next_at : now + backoff_s(1), e) < 0) {
				store_alert_dues_release(&due);
				return -1;
			}
			break;
		}
		store_alert_dues_release(&due);
	}
	return 0;
}

int
alert_deliver_pending(const struct conf *c, struct store *s,
    const struct alert_opts *o, struct err *e)
{
	return alert_deliver_at(c, s, o, (int64_t)time(NULL), e);
}

int
alert_next_due(const struct conf *c, struct store *s, int64_t *when,
    struct err *e)
{
	int64_t now = (int64_t)time(NULL);
	int found = 0;

	for (size_t i = 0; i < c->nalerts; i++) {
		char shown[512];
		int64_t t;
		int rc;

		/* New alerts have no delivery row until enlisted: due now. */
		if (store_alert_enlist(s, c->alerts[i].name,
		    conf_alert_shown(&c->alerts[i], shown, sizeof(shown)),
		    now - ALERT_BACKLOG_S, now, e) < 0)
			return -1;
		rc = store_alert_next_due(s, c->alerts[i].name, &t, e);
		if (rc < 0)
			return -1;
		if (rc == 0 && (!found || t < *when)) {
			*when = t;
			found = 1;
		}
	}
	return found ? 0 : 1;
}

/* --- the regression alert --- */

static double
jnum(const json_t *o, const char *key, double dflt)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : dflt;
}

static const char *
jstr(const json_t *o, const char *key, const char *dflt)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : dflt;
}

char *
sink_blank_controls(char *s)
{
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	return s;
}

/* What a metric measures, in a summary's words. */
static void
metric_words(const char *metric, char *buf, size_t len)
{
	if (strcmp(metric, "per-token") == 0)
		snprintf(buf, len, "per-token cost");
	else if (strcmp(metric, "fixed") == 0)
		snprintf(buf, len, "fixed overhead");
	else
		snprintf(buf, len, "%s time", metric);
}

const char *
alert_regression_text(const char *engine, const char *metric,
    const json_t *verdict, const struct alert_where *w, char *buf,
    size_t len)
{
	const json_t *v = verdict;
	const char *bad = jstr(v, "first_bad", "?");
	const char *good = jstr(v, "last_good", "?");
	const char *conf = json_is_true(json_object_get(v, "confirmed")) ?
	    "confirmed" : "not confirmed";
	const json_t *cand = json_object_get(v, "candidates");
	const int confirm = json_is_number(json_object_get(v,
	    "confirm_change"));
	char what[96], also[200] = "", where[3200] = "", commit[400] = "";
	size_t ncand = json_array_size(cand), off;

	metric_words(metric, what, sizeof(what));
	if (ncand > 1) {
		off = (size_t)snprintf(also, sizeof(also),
		    " (or an earlier candidate:");
		for (size_t i = 0; i + 1 < ncand && off < sizeof(also); i++)
			off += (size_t)snprintf(also + off, sizeof(also) - off,
			    " %s", json_string_value(json_array_get(cand, i)));
		if (off < sizeof(also))
			snprintf(also + off, sizeof(also) - off, ")");
	}
	off = 0;
	if (w && w->machine)
		off = (size_t)snprintf(where, sizeof(where), ", on %s",
		    w->machine);
	if (w && w->report && off < sizeof(where))
		off += (size_t)snprintf(where + off, sizeof(where) - off,
		    "; report: %s", w->report);
	if (w && w->cells && off < sizeof(where))
		snprintf(where + off, sizeof(where) - off, "; the other cells: "
		    "%s", w->cells);
	/* A drill-down names the commit too. */
	if (json_is_object(json_object_get(v, "commit"))) {
		const json_t *c = json_object_get(v, "commit");

		snprintf(commit, sizeof(commit), "; first bad commit %s "
		    "\"%s\"%s%s%s", jstr(c, "short", "?"),
		    jstr(c, "subject", ""), json_array_size(
		    json_object_get(v, "candidate_commits")) > 1 ?
		    " (or a candidate before it)" : "",
		    jstr(c, "url", "")[0] ? " " : "", jstr(c, "url", ""));
		/* The subject is upstream text: no control byte reaches a
		 * mail header or a terminal through the summary. */
		sink_blank_controls(commit);
	}
	snprintf(buf, len, "%s %s%s: %s x%.2f since %s (%s), %s%s%s", engine,
	    bad, also, what, 1 + jnum(v, confirm ? "confirm_change" :
	    "metric_change", 0), good, confirm ? "confirm_change, "
	    "interleaved re-measurement" : "metric_change, the search's "
	    "samples", conf, commit, where);
	return buf;
}

/*
 * Record a verdict's alert of kind under key: o (taken over) gets the
 * verdict, and w's report and machine, and becomes its body.
 */
static int
record_verdict(struct store *s, const char *kind, const char *engine,
    const char *key, const char *text, json_t *o, const json_t *verdict,
    const struct alert_where *w, struct err *e)
{
	char *body;
	int rc;

	json_object_set_new(o, "verdict", json_deep_copy(verdict));
	if (w && w->report)
		json_object_set_new(o, "report", json_string(w->report));
	if (w && w->machine)
		json_object_set_new(o, "machine", json_string(w->machine));
	if (w && w->cells)
		json_object_set_new(o, "cells", json_string(w->cells));
	body = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	if (body == NULL)
		return err_set(e, "cannot encode the alert for '%s'", key);
	rc = store_alert_record(s, kind, engine, key, text, body, e);
	free(body);
	return rc;
}

int
alert_record_regression(struct store *s, const char *engine,
    const char *spec, const char *metric, const json_t *verdict,
    const struct alert_where *w, struct err *e)
{
	const json_t *v = verdict;
	const char *bad = jstr(v, "first_bad", NULL);
	const char *good = jstr(v, "last_good", NULL);
	const char *dots = strstr(spec, "..");
	char key[512], text[4096];
	json_t *o, *range;

	if (bad == NULL || good == NULL)
		return err_set(e, "no change point in the verdict over '%s'",
		    spec);
	/* Keyed by the change point, not the range searched: the same
	 * regression found again by a later, wider search is not news. */
	snprintf(key, sizeof(key), "regression:%s:%s..%s:%s", engine, good,
	    bad, metric);
	alert_regression_text(engine, metric, verdict, w, text, sizeof(text));
	o = json_object();
	range = json_object();
	json_object_set_new(range, "from", dots ? json_stringn(spec,
	    (size_t)(dots - spec)) : json_string(spec));
	json_object_set_new(range, "to", json_string(dots ? dots + 2 : spec));
	json_object_set_new(o, "text", json_string(text));
	json_object_set_new(o, "kind", json_string("regression"));
	json_object_set_new(o, "engine", json_string(engine));
	json_object_set_new(o, "metric", json_string(metric));
	json_object_set_new(o, "range", range);
	json_object_set_new(o, "first_bad", json_string(bad));
	json_object_set_new(o, "last_good", json_string(good));
	json_object_set_new(o, "change", json_string(jstr(v, "kind",
	    "unknown")));
	return record_verdict(s, "regression", engine, key, text, o, v, w, e);
}

int
alert_record_gradual(struct store *s, const char *engine, const char *spec,
    const char *metric, const json_t *verdict, const struct alert_where *w,
    struct err *e)
{
	const json_t *g = json_object_get(verdict, "gradual");
	const json_t *tci = json_object_get(g, "total_change_ci");
	const char *from = jstr(g, "from", NULL), *to = jstr(g, "to", NULL);
	char key[600], text[4096], what[96];
	json_t *o;

	if (from == NULL || to == NULL)
		return err_set(e, "no slide in the verdict over '%s'", spec);
	metric_words(metric, what, sizeof(what));
	snprintf(key, sizeof(key), "gradual:%s:%s..%s:%s", engine, from, to,
	    metric);
	snprintf(text, sizeof(text), "%s: a slide from %s to %s, %s %+.1f%% "
	    "[%+.1f%%, %+.1f%%] over %zu releases (%+.1f%% a release)%s%s%s%s"
	    "%s%s",
	    engine, from, to, what, 100 * jnum(g, "total_change", NAN),
	    100 * json_number_value(json_array_get(tci, 0)),
	    100 * json_number_value(json_array_get(tci, 1)),
	    json_array_size(json_object_get(g, "releases")),
	    100 * jnum(g, "per_release_change", NAN),
	    w && w->machine ? ", on " : "", w && w->machine ? w->machine : "",
	    w && w->report ? "; report: " : "", w && w->report ? w->report :
	    "", w && w->cells ? "; the other cells: " : "", w && w->cells ?
	    w->cells : "");
	/* Versions are upstream text: no control byte in the summary. */
	sink_blank_controls(text);
	o = json_object();
	json_object_set_new(o, "text", json_string(text));
	json_object_set_new(o, "kind", json_string("gradual"));
	json_object_set_new(o, "engine", json_string(engine));
	json_object_set_new(o, "metric", json_string(metric));
	json_object_set_new(o, "range", json_pack("{s:s,s:s}", "from", from,
	    "to", to));
	return record_verdict(s, "gradual", engine, key, text, o, verdict, w,
	    e);
}
