/*
 * test_alert.c: alert delivery against real receivers: the loopback
 * test server's /hook, /hook500 and SMTP sink, a closed port, and a
 * command that writes its stdin to a file.  Checks the document sent,
 * the attempts stored, the backoff, and one alert per regression.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "bisectd/notify/alert_sink.h"
#include "check.h"
#include "check_conf.h"
#include "config/conf.h"
#include "common/err.h"
#include "store/store.h"
#include "common/strv.h"
#include "testserver.h"

static struct testserver ts;

static int
file_exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

static const char *verdict_json =
    "{\"status\":\"regression\",\"first_bad\":\"0.2.4\","
    "\"last_good\":\"0.2.3\",\"candidates\":[\"0.2.4\"],"
    "\"kind\":\"per-token\",\"confirmed\":true,"
    "\"per_token_delta_ms\":2.36,\"fixed_delta_ms\":-6,"
    "\"metric_change\":2.5,\"confirm_change\":2.56}";

static void
test_text(void)
{
	json_t *v = json_loads(verdict_json, 0, NULL);
	char buf[512];

	struct alert_where w = { "bisectctl -c /etc/b.conf report basert "
	    "0.2.0..0.2.6", "bench1 (Some CPU)", NULL };

	/* One named figure (the confirmation's, not the search's x3.50),
	 * the machine and the command that shows the report. */
	CHECK_STR(alert_regression_text("basert", "per-token", v, &w, buf,
	    sizeof(buf)), "basert 0.2.4: per-token cost x3.56 since 0.2.3 "
	    "(confirm_change, interleaved re-measurement), confirmed, on "
	    "bench1 (Some CPU); report: bisectctl -c /etc/b.conf report "
	    "basert 0.2.0..0.2.6");
	json_object_set_new(v, "confirmed", json_false());
	json_object_del(v, "confirm_change");
	json_object_set_new(v, "candidates", json_pack("[s,s]", "0.2.3a",
	    "0.2.4"));
	alert_regression_text("basert", "pp512", v, NULL, buf, sizeof(buf));
	CHECK_STR(buf, "basert 0.2.4 (or an earlier candidate: 0.2.3a): "
	    "pp512 time x3.50 since 0.2.3 (metric_change, the search's "
	    "samples), not confirmed");
	/* A drill-down names the commit as well, its subject without a
	 * control byte. */
	json_object_set_new(v, "commit", json_pack("{s:s,s:s,s:s}", "short",
	    "3518294894cc", "subject", "slow:\r\nBcc: x@example.org",
	    "url", "https://github.com/o/r/commit/3518294894cc"));
	alert_regression_text("basert", "pp512", v, &w, buf, sizeof(buf));
	CHECK_STR(buf, "basert 0.2.4 (or an earlier candidate: 0.2.3a): "
	    "pp512 time x3.50 since 0.2.3 (metric_change, the search's "
	    "samples), not confirmed; first bad commit 3518294894cc \"slow:  "
	    "Bcc: x@example.org\" https://github.com/o/r/commit/3518294894cc, "
	    "on bench1 (Some CPU); report: bisectctl -c /etc/b.conf report "
	    "basert 0.2.0..0.2.6");
	json_decref(v);
}

/* A fresh folder with a config of one webhook sink "hook" at url and
 * the store t.db open in *s; NULL when either failed (checked). */
static struct conf *
one_hook(const char *name, const char *url, struct store **s)
{
	struct err e = ERR_INIT;
	char text[8192];
	struct conf *c;

	check_tmpdir(name);
	snprintf(text, sizeof(text), "[bisectd]\n\tdatabase = t.db\n"
	    "[alert \"hook\"]\n\twebhook = %s\n\tallow-http = true\n", url);
	c = check_conf_load(text);
	CHECK(c != NULL);
	if (c == NULL)
		return NULL;
	CHECK_INT(store_open("t.db", s, &e), 0);
	if (*s == NULL) {
		conf_free(c);
		return NULL;
	}
	return c;
}

static void
test_webhook_and_dedup(void)
{
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct conf *c;
	struct store_alert_rows rows;
	json_t *v = json_loads(verdict_json, 0, NULL), *doc;
	char text[8192], *body;

	if ((c = one_hook("test_alert_webhook", testserver_url(&ts, "/hook"),
	    &s)) == NULL)
		return;
	/* The same regression twice (a later, wider search finds it
	 * again): one alert. */
	CHECK_INT(alert_record_regression(s, "basert", "0.2.0..0.2.6",
	    "per-token", v, NULL, &e), 0);
	CHECK_INT(alert_record_regression(s, "basert", "0.2.3..0.2.5",
	    "per-token", v, NULL, &e), 1);
	CHECK_INT(alert_deliver_pending(c, s, NULL, &e), 0);
	CHECK_INT(alert_deliver_pending(c, s, NULL, &e), 0);
	CHECK(file_exists(ts.root) && file_exists("hooks") == 0);
	snprintf(text, sizeof(text), "%s/hooks/1.json", ts.root);
	body = check_read_file(text);
	CHECK(body != NULL);
	snprintf(text, sizeof(text), "%s/hooks/2.json", ts.root);
	CHECK(!file_exists(text));
	doc = body ? json_loads(body, 0, NULL) : NULL;
	CHECK(doc != NULL);
	CHECK_STR(json_string_value(json_object_get(doc, "text")),
	    "basert 0.2.4: per-token cost x3.56 since 0.2.3 (confirm_change, "
	    "interleaved re-measurement), confirmed");
	CHECK_STR(json_string_value(json_object_get(doc, "kind")),
	    "regression");
	CHECK_STR(json_string_value(json_object_get(doc, "engine")), "basert");
	CHECK_STR(json_string_value(json_object_get(json_object_get(doc,
	    "range"), "from")), "0.2.0");
	CHECK_STR(json_string_value(json_object_get(json_object_get(doc,
	    "verdict"), "first_bad")), "0.2.4");
	CHECK_STR(json_string_value(json_object_get(json_object_get(doc,
	    "verdict"), "kind")), "per-token");
	json_decref(doc);
	free(body);
	/* The attempt is stored: delivered, HTTP 200. */
	CHECK_INT(store_alert_list(s, 10, &rows, &e), 0);
	CHECK_INT(rows.n, 1);
	if (rows.n == 1 && rows.v[0].nsinks == 1) {
		CHECK_STR(rows.v[0].sinks[0].state, "delivered");
		CHECK_INT(rows.v[0].sinks[0].ntries, 1);
		CHECK_INT(rows.v[0].sinks[0].tries[0].http_status, 200);
		CHECK_INT(rows.v[0].sinks[0].tries[0].ok, 1);
	} else
		CHECK(0);
	store_alert_rows_release(&rows);
	/* An alert another part recorded (no verdict) goes out too. */
	CHECK_INT(store_alert_record(s, "archive-changed", "basert",
	    "archive-changed:x", "basert 0.2.2: release archive changed",
	    "{\"kind\":\"archive-changed\"}", &e), 0);
	CHECK_INT(alert_deliver_pending(c, s, NULL, &e), 0);
	snprintf(text, sizeof(text), "%s/hooks/2.json", ts.root);
	body = check_read_file(text);
	CHECK_CONTAINS(body, "\"text\":\"basert 0.2.2: release archive "
	    "changed\"");
	free(body);
	/* bisectctl alerts: what was sent, when, to whom */
	if (getenv("BISECTCTL")) {
		json_t *a;

		snprintf(text, sizeof(text), "%s -c t.conf alerts",
		    getenv("BISECTCTL"));
		CHECK_INT(check_run(text, &body), 0);
		CHECK_CONTAINS(body, "regression");
		CHECK_CONTAINS(body, "basert 0.2.4: per-token cost x3.56");
		CHECK_CONTAINS(body, "hook -> http://127.0.0.1:");
		CHECK_CONTAINS(body, "delivered at ");
		CHECK_CONTAINS(body, "(1 attempt)");
		free(body);
		snprintf(text, sizeof(text), "%s -c t.conf alerts --format "
		    "json 2>/dev/null", getenv("BISECTCTL"));
		CHECK_INT(check_run(text, &body), 0);
		a = body ? json_loads(body, 0, NULL) : NULL;
		CHECK_INT(json_array_size(a), 2);
		CHECK_STR(json_string_value(json_object_get(json_array_get(
		    json_object_get(json_array_get(a, 1), "sinks"), 0),
		    "state")), "delivered");
		CHECK_INT(json_integer_value(json_object_get(json_array_get(
		    json_object_get(json_array_get(json_object_get(
		    json_array_get(a, 1), "sinks"), 0), "tries"), 0),
		    "http_status")), 200);
		json_decref(a);
		free(body);
	}
	store_close(s);
	conf_free(c);
	json_decref(v);
}

/* Whether any log line held the secret below. */
static int secret_logged, lines_logged;

static void
secret_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	lines_logged++;
	if (strstr(msg, "SECRETXYZ") || strstr(msg, "hunter2"))
		secret_logged = 1;
}

/*
 * A webhook URL is a credential (user:password@, and a Slack hook's
 * path): never in the store, the log, check-config or `alerts`.  And a
 * tag is upstream text: in the webhook's text a <!channel>, an @here and
 * an ESC sequence are made inert.
 */
static void
test_hostile_text_and_secret_url(void)
{
	struct alert_opts o = { secret_log, NULL };
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct store_alert_rows rows;
	struct conf *c;
	char text[8192], *body;
	const char *t;
	json_t *doc;

	check_tmpdir("test_alert_hostile");
	snprintf(text, sizeof(text), "[bisectd]\n\tdatabase = t.db\n"
	    "[alert \"hook\"]\n\twebhook = %s\n\tallow-http = true\n"
	    "[alert \"down\"]\n\twebhook = http://bot:hunter2@127.0.0.1:1"
	    "/services/T0/B0/SECRETXYZ\n\tallow-http = true\n",
	    testserver_url(&ts, "/hook"));
	c = check_conf_load(text);
	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_INT(store_open("t.db", &s, &e), 0);
	CHECK_INT(store_alert_record(s, "regression", "basert", "k-hostile",
	    "basert 1.0<!channel> @here \x1b]0;pwned\x07\x1b[2J",
	    "{}", &e), 0);
	CHECK_INT(alert_deliver_pending(c, s, &o, &e), 0);
	CHECK(lines_logged >= 1);
	CHECK_INT(secret_logged, 0);

	/* The receiver numbers what it got; earlier tests sent some. */
	body = NULL;
	for (int n = 1; n < 50 && body == NULL; n++) {
		snprintf(text, sizeof(text), "%s/hooks/%d.json", ts.root, n);
		if (!file_exists(text))
			break;
		body = check_read_file(text);
		if (body != NULL && strstr(body, "pwned") == NULL) {
			free(body);
			body = NULL;
		}
	}
	doc = body ? json_loads(body, 0, NULL) : NULL;
	t = json_string_value(json_object_get(doc, "text"));
	CHECK(t != NULL);
	if (t != NULL) {
		CHECK(strstr(t, "<!channel>") == NULL);
		CHECK_CONTAINS(t, "&lt;!channel&gt;");
		CHECK(strstr(t, "@here") == NULL);
		CHECK(strchr(t, '\x1b') == NULL);
		CHECK(strchr(t, '\x07') == NULL);
		CHECK_CONTAINS(t, "\\x1b]0;pwned");
	}
	json_decref(doc);
	free(body);

	CHECK_INT(store_alert_list(s, 10, &rows, &e), 0);
	for (size_t i = 0; i < rows.n; i++)
		for (size_t j = 0; j < rows.v[i].nsinks; j++) {
			const struct store_alert_sink *k = &rows.v[i].sinks[j];

			CHECK(strstr(k->target, "SECRETXYZ") == NULL);
			CHECK(strstr(k->target, "hunter2") == NULL);
			for (size_t n = 0; n < k->ntries; n++)
				if (k->tries[n].error != NULL) {
					CHECK(strstr(k->tries[n].error,
					    "SECRETXYZ") == NULL);
					CHECK(strstr(k->tries[n].error,
					    "hunter2") == NULL);
				}
			if (strcmp(k->sink, "down") == 0) {
				CHECK_STR(k->target,
				    "http://127.0.0.1:1/...");
				CHECK_INT((int)k->ntries, 1);
			}
		}
	store_alert_rows_release(&rows);
	store_close(s);

	/* What bisectctl shows of the same. */
	if (getenv("BISECTCTL")) {
		const char *cmds[] = { "check-config", "alerts",
		    "alerts --format json" };

		for (size_t i = 0; i < 3; i++) {
			snprintf(text, sizeof(text), "%s -c t.conf %s 2>&1",
			    getenv("BISECTCTL"), cmds[i]);
			CHECK_INT(check_run(text, &body), 0);
			CHECK(body != NULL && strstr(body, "SECRETXYZ") == NULL &&
			    strstr(body, "hunter2") == NULL);
			/* On a terminal the tag's ESC is written out. */
			CHECK(body != NULL && strchr(body, '\x1b') == NULL);
			free(body);
		}
	}
	conf_free(c);
}

/* Total of log lines the callback saw, by level. */
static int warnings, errors;

static void
count_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)msg;
	if (level == ALERT_LOG_WARNING)
		warnings++;
	else if (level == ALERT_LOG_ERR)
		errors++;
}

/* A receiver answering 500, and one that is not there: retried with
 * backoff, every attempt stored, the other alerts wait with the first. */
/* A pass whose clock began before a sink was reached (an earlier sink
 * was slow, and the second turned): the alerts that sink is given in
 * this pass are due in this pass, not one second later. */
static void
test_enlisted_due_in_same_pass(void)
{
	struct alert_opts o = { count_log, NULL };
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct store_alert_rows rows;
	struct conf *c;

	if ((c = one_hook("test_alert_same_pass", testserver_url(&ts, "/hook"),
	    &s)) == NULL)
		return;
	CHECK_INT(store_alert_record(s, "regression", "basert", "k-pass",
	    "one", "{}", &e), 0);
	CHECK_INT(alert_deliver_at(c, s, &o, (int64_t)time(NULL) - 5, &e), 0);
	CHECK_INT(store_alert_list(s, 10, &rows, &e), 0);
	CHECK_INT(rows.n, 1);
	if (rows.n == 1 && rows.v[0].nsinks == 1) {
		CHECK_INT(rows.v[0].sinks[0].ntries, 1);
		CHECK_STR(rows.v[0].sinks[0].state, "delivered");
	}
	store_alert_rows_release(&rows);
	store_close(s);
	conf_free(c);
}

static void
test_retries(const char *url, const char *name)
{
	struct alert_opts o = { count_log, NULL };
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct store_alert_rows rows;
	struct conf *c;
	int64_t now, when = 0;
	time_t t0;

	if ((c = one_hook(name, url, &s)) == NULL)
		return;
	CHECK_INT(store_alert_record(s, "regression", "basert", "k1",
	    "one", "{}", &e), 0);
	CHECK_INT(store_alert_record(s, "regression", "basert", "k2",
	    "two", "{}", &e), 0);
	/* The clock the deliveries are judged by starts once both alerts
	 * exist: an alert recorded in a later second is not due before. */
	now = (int64_t)time(NULL);
	warnings = errors = 0;
	t0 = time(NULL);
	CHECK_INT(alert_deliver_at(c, s, &o, now, &e), 0);
	/* fails fast: no long wait on a closed port or a 500 */
	CHECK(time(NULL) - t0 < 8);
	CHECK_INT(warnings, 1);
	/* both alerts wait for the backoff: the second was not tried */
	CHECK_INT(alert_next_due(c, s, &when, &e), 0);
	CHECK_INT(when, now + ALERT_RETRY_BASE_S);
	CHECK_INT(alert_deliver_at(c, s, &o, now + 1, &e), 0);
	CHECK_INT(warnings, 1);
	/* after the backoff: the next attempt, then twice as long */
	CHECK_INT(alert_deliver_at(c, s, &o, now + ALERT_RETRY_BASE_S, &e), 0);
	CHECK_INT(warnings, 2);
	CHECK_INT(alert_next_due(c, s, &when, &e), 0);
	CHECK_INT(when, now + 3 * ALERT_RETRY_BASE_S);
	CHECK_INT(store_alert_list(s, 10, &rows, &e), 0);
	CHECK_INT(rows.n, 2);
	if (rows.n == 2 && rows.v[1].nsinks == 1 && rows.v[0].nsinks == 1) {
		/* newest first: v[1] is k1 */
		CHECK_STR(rows.v[1].sinks[0].state, "pending");
		CHECK_INT(rows.v[1].sinks[0].attempts, 2);
		CHECK_INT(rows.v[1].sinks[0].ntries, 2);
		CHECK_INT(rows.v[1].sinks[0].tries[0].ok, 0);
		CHECK(rows.v[1].sinks[0].tries[0].error != NULL);
		if (strstr(url, "hook500")) {
			CHECK_INT(rows.v[1].sinks[0].tries[0].http_status,
			    500);
			CHECK_CONTAINS(rows.v[1].sinks[0].tries[0].error,
			    "500");
		} else
			CHECK_INT(rows.v[1].sinks[0].tries[0].http_status,
			    -1);
		CHECK_INT(rows.v[0].sinks[0].ntries, 0);
	} else
		CHECK(0);
	store_alert_rows_release(&rows);
	/* it gives up after ALERT_MAX_ATTEMPTS, with an error logged */
	for (int i = 0; i < ALERT_MAX_ATTEMPTS; i++)
		CHECK_INT(alert_deliver_at(c, s, &o, now + 400000 * (i + 1),
		    &e), 0);
	CHECK(errors >= 1);
	CHECK_INT(store_alert_list(s, 10, &rows, &e), 0);
	if (rows.n == 2 && rows.v[1].nsinks == 1) {
		CHECK_STR(rows.v[1].sinks[0].state, "failed");
		CHECK_INT(rows.v[1].sinks[0].attempts, ALERT_MAX_ATTEMPTS);
	}
	store_alert_rows_release(&rows);
	store_close(s);
	conf_free(c);
}

static void
test_command(void)
{
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct store_alert_rows rows;
	struct conf *c;
	char text[8192], cwd[1024], *got;

	check_tmpdir("test_alert_command");
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return;
	check_write_file("sink.sh", "#!/bin/sh\ncat > \"$1\"\n"
	    "echo \"args=$#\" >> \"$1.args\"\n");
	check_write_file("fail.sh", "#!/bin/sh\necho broken >&2\nexit 3\n");
	chmod("sink.sh", 0755);
	chmod("fail.sh", 0755);
	snprintf(text, sizeof(text), "[bisectd]\n\tdatabase = t.db\n"
	    "[alert \"cmd\"]\n\tcommand = %s/sink.sh '%s/got it.json'\n"
	    "[alert \"bad\"]\n\tcommand = %s/fail.sh\n", cwd, cwd, cwd);
	c = check_conf_load(text);
	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_INT(store_open("t.db", &s, &e), 0);
	CHECK_INT(store_alert_record(s, "yardstick", "other", "y1",
	    "yardstick basert 0.2.3 is no longer the fastest; $(rm -rf x)",
	    "{\"kind\":\"yardstick\"}", &e), 0);
	CHECK_INT(alert_deliver_pending(c, s, NULL, &e), 0);
	got = check_read_file("got it.json");
	CHECK_CONTAINS(got, "\"text\":\"yardstick basert 0.2.3 is no longer "
	    "the fastest; $(rm -rf x)\"");
	CHECK_CONTAINS(got, "\"kind\":\"yardstick\"");
	free(got);
	got = check_read_file("got it.json.args");
	CHECK_STR(got, "args=1\n");
	free(got);
	CHECK_INT(store_alert_list(s, 10, &rows, &e), 0);
	if (rows.n == 1 && rows.v[0].nsinks == 2) {
		/* by name: "bad" then "cmd" */
		CHECK_STR(rows.v[0].sinks[0].state, "pending");
		CHECK_INT(rows.v[0].sinks[0].tries[0].exit_code, 3);
		CHECK_CONTAINS(rows.v[0].sinks[0].tries[0].error, "broken");
		CHECK_STR(rows.v[0].sinks[1].state, "delivered");
		CHECK_INT(rows.v[0].sinks[1].tries[0].exit_code, 0);
	} else
		CHECK(0);
	store_alert_rows_release(&rows);
	store_close(s);
	conf_free(c);
}

/* With public-url, a regression's alert links its report: the range's
 * parts percent-encoded, so a tag cannot bend the link. */
static void
test_report_link(void)
{
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct conf *c;
	json_t *v;
	char text[8192], cwd[1024], *got;

	check_tmpdir("test_alert_link");
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return;
	check_write_file("sink.sh", "#!/bin/sh\ncat >> \"$1\"\n");
	chmod("sink.sh", 0755);
	snprintf(text, sizeof(text), "[bisectd]\n\tdatabase = t.db\n"
	    "\tpublic-url = https://b.example.com/bisectd/\n"
	    "[alert \"cmd\"]\n\tcommand = %s/sink.sh %s/got.json\n", cwd,
	    cwd);
	c = check_conf_load(text);
	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_INT(store_open("t.db", &s, &e), 0);
	v = json_pack("{s:s,s:s,s:s,s:b}", "status", "regression",
	    "first_bad", "0.2.4<x>", "last_good", "0.2.3", "confirmed", 1);
	CHECK_INT(alert_record_regression(s, "basert", "0.2.0..0.2.4<x>",
	    "per-token", v, NULL, &e), 0);
	json_decref(v);
	CHECK_INT(alert_deliver_pending(c, s, NULL, &e), 0);
	got = check_read_file("got.json");
	CHECK_CONTAINS(got, "\"report_url\":\"https://b.example.com/bisectd"
	    "/report/basert/0.2.0..0.2.4%3Cx%3E\"");
	CHECK_CONTAINS(got, "\\nhttps://b.example.com/bisectd/report/"
	    "basert/0.2.0..0.2.4%3Cx%3E\",");
	free(got);
	store_close(s);
	conf_free(c);
}

static void
test_email(void)
{
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct conf *c;
	char text[8192], *mail;

	check_tmpdir("test_alert_email");
	snprintf(text, sizeof(text), "[bisectd]\n\tdatabase = t.db\n"
	    "[alert \"mail\"]\n\temail = a@example.org, b@example.org\n"
	    "\tsmtp = smtp://127.0.0.1:%d\n\tfrom = bench@example.org\n"
	    "\tallow-http = true\n", ts.smtp_port);
	c = check_conf_load(text);
	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_INT(store_open("t.db", &s, &e), 0);
	CHECK_INT(store_alert_record(s, "regression", "basert", "m1",
	    "basert 0.2.4: per-token prefill cost +2.36 ms (x3.56) since "
	    "0.2.3, confirmed\nBcc: x@evil", "{\"kind\":\"regression\"}",
	    &e), 0);
	CHECK_INT(alert_deliver_pending(c, s, NULL, &e), 0);
	snprintf(text, sizeof(text), "%s/mail/1.eml", ts.root);
	mail = check_read_file(text);
	CHECK_CONTAINS(mail, "X-Envelope-From: <bench@example.org>");
	CHECK_CONTAINS(mail, "b@example.org");
	CHECK_CONTAINS(mail, "Subject: basert 0.2.4: per-token prefill cost "
	    "+2.36 ms (x3.56) since 0.2.3, confirmed Bcc: x@evil\r\n");
	CHECK_CONTAINS(mail, "\"kind\": \"regression\"");
	/* the newline in the summary did not start a header */
	if (mail && strstr(mail, "\r\n\r\n"))
		*strstr(mail, "\r\n\r\n") = '\0';
	CHECK(mail != NULL && strstr(mail, "\nBcc:") == NULL);
	free(mail);
	CHECK_INT(testserver_count(&ts, "SMTP DATA", "status=250", NULL), 1);
	store_close(s);
	conf_free(c);
}


/* The delivery of the index-th newest alert: its state, its attempts,
 * and the last one's HTTP status and error (when error is not NULL). */
static void
check_delivery(struct store *s, int index, const char *state, int tries,
    long status, const char *error)
{
	struct store_alert_rows rows;
	struct err e = ERR_INIT;

	CHECK_INT(store_alert_list(s, 10, &rows, &e), 0);
	CHECK((size_t)index < rows.n);
	if ((size_t)index < rows.n && rows.v[index].nsinks == 1) {
		const struct store_alert_sink *d = &rows.v[index].sinks[0];

		CHECK_STR(d->state, state);
		CHECK_INT(d->ntries, tries);
		if (d->ntries > 0) {
			CHECK_INT(d->tries[d->ntries - 1].http_status, status);
			if (error)
				CHECK_CONTAINS(d->tries[d->ntries - 1].error,
				    error);
		}
	} else
		CHECK(!"one sink");
	store_alert_rows_release(&rows);
}

/* How many N.json files DIR under the server's root holds. */
static int
count_posts(const char *dir)
{
	char p[8192];
	int n = 0;

	for (int k = 1; k < 100; k++) {
		snprintf(p, sizeof(p), "%s/%s/%d.json", ts.root, dir, k);
		if (file_exists(p))
			n = k;
	}
	return n;
}

/*
 * github-issue: a confirmed regression opens one issue, with its marker
 * and the token in the Authorization header only; a 500, a 422 and a
 * rate limit are attempts that failed, saying why; an answer lost after
 * GitHub took the issue does not post it twice; an unconfirmed
 * regression posts nothing; a comment goes to the issue named.
 */
static void
test_github_issue(void)
{
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct conf *c;
	json_t *v = json_loads(verdict_json, 0, NULL), *doc;
	char text[8192], *body;
	const char *tok = "BISECTD_TEST_GH_TOKEN";
	int64_t now;
	size_t dblen;

	check_tmpdir("test_alert_github");
	snprintf(text, sizeof(text), "[bisectd]\n\tdatabase = t.db\n"
	    "[alert \"gh\"]\n\tgithub-issue = acme/engine\n\tapi = %s\n"
	    "\ttoken-env = %s\n\tallow-http = yes\n",
	    testserver_url(&ts, "/api"), tok);
	c = check_conf_load(text);
	CHECK(c != NULL);
	if (c == NULL || store_open("t.db", &s, &e) < 0) {
		CHECK(!"config and store");
		conf_free(c);
		return;
	}
	snprintf(text, sizeof(text), "mkdir -p %s/api/acme/engine", ts.root);
	CHECK_INT(check_run(text, NULL), 0);
	snprintf(text, sizeof(text), "%s/api/acme/engine/mode", ts.root);

	/* No token: the attempt fails, naming the variable only. */
	unsetenv(tok);
	CHECK_INT(alert_record_regression(s, "basert", "0.2.0..0.2.6",
	    "per-token", v, NULL, &e), 0);
	now = (int64_t)time(NULL);
	CHECK_INT(alert_deliver_at(c, s, NULL, now, &e), 0);
	check_delivery(s, 0, "pending", 1, -1, "$BISECTD_TEST_GH_TOKEN is "
	    "not set");
	setenv(tok, "SECRETXYZ-token", 1);

	/* A 500 fails the attempt; the next one, after the backoff, opens
	 * the issue. */
	check_write_file(text, "post500-once\n");
	CHECK_INT(alert_deliver_at(c, s, NULL, now + ALERT_RETRY_BASE_S, &e),
	    0);
	check_delivery(s, 0, "pending", 2, 500, "GitHub answered HTTP 500 to "
	    "the new issue: Server Error");
	CHECK_INT(count_posts("api/acme/engine/issues"), 0);
	CHECK_INT(alert_deliver_at(c, s, NULL, now + 3 * ALERT_RETRY_BASE_S,
	    &e), 0);
	check_delivery(s, 0, "delivered", 3, 201, NULL);
	CHECK_INT(count_posts("api/acme/engine/issues"), 1);
	snprintf(text, sizeof(text), "%s/api/acme/engine/issues/1.json",
	    ts.root);
	body = check_read_file(text);
	doc = body ? json_loads(body, 0, NULL) : NULL;
	CHECK_STR(json_string_value(json_object_get(doc, "title")),
	    "basert 0.2.4: per-token slower since 0.2.3 (per-token change, "
	    "found by bisectd)");
	CHECK_CONTAINS(json_string_value(json_object_get(doc, "body")),
	    "<!-- bisectd-alert ");
	/* No engine of that name here: the report says so in its place. */
	CHECK_CONTAINS(json_string_value(json_object_get(doc, "body")),
	    "(the report of 0.2.0..0.2.6 could not be built: engine basert "
	    "is no longer configured)");
	json_decref(doc);
	free(body);
	snprintf(text, sizeof(text), "%s/api/acme/engine/auth", ts.root);
	body = check_read_file(text);
	CHECK_CONTAINS(body, "Bearer SECRETXYZ-token");
	free(body);
	/* Delivered once: another pass posts nothing. */
	CHECK_INT(alert_deliver_at(c, s, NULL, now + 7 * ALERT_RETRY_BASE_S,
	    &e), 0);
	CHECK_INT(count_posts("api/acme/engine/issues"), 1);

	/* GitHub takes the issue and the answer is lost: the next attempt
	 * finds the marker and posts nothing. */
	snprintf(text, sizeof(text), "%s/api/acme/engine/mode", ts.root);
	check_write_file(text, "lost-once\n");
	json_object_set_new(v, "first_bad", json_string("0.3.1"));
	CHECK_INT(alert_record_regression(s, "basert", "0.3.0..0.3.2",
	    "fixed", v, NULL, &e), 0);
	now = (int64_t)time(NULL);
	CHECK_INT(alert_deliver_at(c, s, NULL, now, &e), 0);
	check_delivery(s, 0, "pending", 1, -1, NULL);
	CHECK_INT(count_posts("api/acme/engine/issues"), 2);
	CHECK_INT(alert_deliver_at(c, s, NULL, now + ALERT_RETRY_BASE_S, &e),
	    0);
	check_delivery(s, 0, "delivered", 2, -1, NULL);
	CHECK_INT(count_posts("api/acme/engine/issues"), 2);

	/* A 422 and a spent rate limit are said as GitHub said them. */
	check_write_file(text, "post422\n");
	json_object_set_new(v, "first_bad", json_string("0.4.1"));
	CHECK_INT(alert_record_regression(s, "basert", "0.4.0..0.4.2",
	    "fixed", v, NULL, &e), 0);
	now = (int64_t)time(NULL);
	CHECK_INT(alert_deliver_at(c, s, NULL, now, &e), 0);
	check_delivery(s, 0, "pending", 1, 422, "GitHub answered HTTP 422 to "
	    "the new issue: Validation Failed");
	check_write_file(text, "ratelimit403 600\n");
	CHECK_INT(alert_deliver_at(c, s, NULL, now + ALERT_RETRY_BASE_S, &e),
	    0);
	check_delivery(s, 0, "pending", 2, 403, "GitHub's rate limit is "
	    "spent until ");
	CHECK_INT(count_posts("api/acme/engine/issues"), 2);
	check_write_file(text, "\n");

	/* An unconfirmed regression is not for upstream: delivered by
	 * posting nothing. */
	json_object_set_new(v, "confirmed", json_false());
	json_object_set_new(v, "first_bad", json_string("0.5.1"));
	CHECK_INT(alert_record_regression(s, "basert", "0.5.0..0.5.2",
	    "fixed", v, NULL, &e), 0);
	now = (int64_t)time(NULL);
	CHECK_INT(alert_deliver_at(c, s, NULL, now + 100000, &e), 0);
	check_delivery(s, 0, "delivered", 1, -1, NULL);
	/* ... while the one refused before, due again, is posted. */
	check_delivery(s, 1, "delivered", 3, 201, NULL);
	CHECK_INT(count_posts("api/acme/engine/issues"), 3);

	/* The token reached no error, log or row of the store. */
	body = check_read_bytes("t.db", &dblen);
	CHECK(body != NULL && memmem(body, dblen, "SECRETXYZ", 9) == NULL);
	free(body);
	store_close(s);
	conf_free(c);

	/* A comment on issue 7 (quoted: an unquoted '#' starts a comment): the
	 * body alone, under that issue. */
	check_tmpdir("test_alert_github_comment");
	snprintf(text, sizeof(text), "[bisectd]\n\tdatabase = t.db\n"
	    "[alert \"gh\"]\n\tgithub-issue = \"acme/engine#7\"\n\tapi = %s\n"
	    "\ttoken-env = %s\n\tallow-http = yes\n",
	    testserver_url(&ts, "/api"), tok);
	c = check_conf_load(text);
	json_object_set_new(v, "confirmed", json_true());
	json_object_set_new(v, "first_bad", json_string("0.2.4"));
	if (c != NULL && store_open("t.db", &s, &e) == 0) {
		CHECK_INT(alert_record_regression(s, "basert", "0.2.0..0.2.6",
		    "per-token", v, NULL, &e), 0);
		CHECK_INT(alert_deliver_pending(c, s, NULL, &e), 0);
		check_delivery(s, 0, "delivered", 1, 201, NULL);
		snprintf(text, sizeof(text), "%s/api/acme/engine/"
		    "issue-7-comments/1.json", ts.root);
		body = check_read_file(text);
		doc = body ? json_loads(body, 0, NULL) : NULL;
		CHECK(json_object_get(doc, "title") == NULL);
		CHECK_CONTAINS(json_string_value(json_object_get(doc, "body")),
		    "**basert 0.2.4: per-token slower since 0.2.3");
		json_decref(doc);
		free(body);
		store_close(s);
	} else
		CHECK(!"config and store");
	conf_free(c);
	unsetenv(tok);
	json_decref(v);
}

/*
 * github-comment: a confirmed regression whose drill-down named a commit
 * is a comment on that commit (no title), posted once; a verdict naming
 * no commit posts nothing; an id that is no full commit id never reaches
 * a URL.
 */
static void
test_github_commit(void)
{
	static const char id[] = "3518294894cc0d5c2b1e4a7f9e8d6c5b4a392817";
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct conf *c;
	json_t *v = json_loads(verdict_json, 0, NULL), *doc;
	char text[8192], dir[128], *body;
	const char *tok = "BISECTD_TEST_GH_TOKEN";
	int64_t now = (int64_t)time(NULL);
	int issues;

	check_tmpdir("test_alert_github_commit");
	snprintf(text, sizeof(text), "[bisectd]\n\tdatabase = t.db\n"
	    "[alert \"gh\"]\n\tgithub-comment = acme/engine\n\tapi = %s\n"
	    "\ttoken-env = %s\n\tallow-http = yes\n",
	    testserver_url(&ts, "/api"), tok);
	c = check_conf_load(text);
	if (c == NULL || v == NULL || store_open("t.db", &s, &e) < 0) {
		CHECK(!"config and store");
		conf_free(c);
		json_decref(v);
		return;
	}
	CHECK_INT(c->alerts[0].kind, ALERT_GITHUB_COMMENT);
	setenv(tok, "SECRETXYZ-token", 1);
	snprintf(dir, sizeof(dir), "api/acme/engine/commit-%s-comments", id);

	/* No commit in the verdict: nothing to comment on. */
	CHECK_INT(alert_record_regression(s, "basert", "0.2.0..0.2.6",
	    "per-token", v, NULL, &e), 0);
	CHECK_INT(alert_deliver_at(c, s, NULL, now, &e), 0);
	check_delivery(s, 0, "delivered", 1, -1, NULL);
	CHECK_INT(count_posts(dir), 0);

	/* The drill-down's commit: one comment on it, and only one, though
	 * GitHub's answer to the first post was lost. */
	snprintf(text, sizeof(text), "mkdir -p %s/api/acme/engine", ts.root);
	CHECK_INT(check_run(text, NULL), 0);
	snprintf(text, sizeof(text), "%s/api/acme/engine/mode", ts.root);
	check_write_file(text, "lost-once\n");
	json_object_set_new(v, "commit", json_pack("{s:s,s:s,s:s}", "id", id,
	    "short", "3518294894cc", "subject", "sched: a slower queue"));
	json_object_set_new(v, "first_bad", json_string("0.3.1"));
	CHECK_INT(alert_record_regression(s, "basert", "0.3.0..0.3.2",
	    "per-token", v, NULL, &e), 0);
	CHECK_INT(alert_deliver_at(c, s, NULL, now, &e), 0);
	check_delivery(s, 0, "pending", 1, -1, NULL);
	CHECK_INT(count_posts(dir), 1);
	CHECK_INT(alert_deliver_at(c, s, NULL, now + ALERT_RETRY_BASE_S, &e),
	    0);
	check_delivery(s, 0, "delivered", 2, -1, NULL);
	CHECK_INT(count_posts(dir), 1);
	snprintf(text, sizeof(text), "%s/%s/1.json", ts.root, dir);
	body = check_read_file(text);
	doc = body ? json_loads(body, 0, NULL) : NULL;
	CHECK(json_object_get(doc, "title") == NULL);
	CHECK_CONTAINS(json_string_value(json_object_get(doc, "body")),
	    "<!-- bisectd-alert ");
	CHECK_CONTAINS(json_string_value(json_object_get(doc, "body")),
	    "**basert 0.3.1: per-token slower since 0.2.3");
	json_decref(doc);
	free(body);
	/* Delivered: another pass posts nothing. */
	CHECK_INT(alert_deliver_at(c, s, NULL, now + 7 * ALERT_RETRY_BASE_S,
	    &e), 0);
	CHECK_INT(count_posts(dir), 1);

	/* Upstream text as the id: refused before any request. */
	issues = count_posts("api/acme/engine/issues");
	json_object_set_new(v, "commit", json_pack("{s:s}", "id",
	    "../../issues"));
	json_object_set_new(v, "first_bad", json_string("0.4.1"));
	CHECK_INT(alert_record_regression(s, "basert", "0.4.0..0.4.2",
	    "per-token", v, NULL, &e), 0);
	CHECK_INT(alert_deliver_at(c, s, NULL, now, &e), 0);
	check_delivery(s, 0, "pending", 1, -1, "the first bad commit's id is "
	    "no commit id");
	CHECK_INT(count_posts("api/acme/engine/issues"), issues);
	unsetenv(tok);
	store_close(s);
	conf_free(c);
	json_decref(v);
}

/* A slide is alerted once, in words that give its span, its total with
 * the interval and its change a release; a tag's control byte is inert. */
static void
test_gradual(void)
{
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct store_alert_rows rows;
	struct conf *c;
	json_t *v = json_loads("{\"status\":\"gradual\",\"gradual\":{"
	    "\"from\":\"0.3.0\",\"to\":\"0.3.8\\u0001\",\"releases\":[\"0.3.1\","
	    "\"0.3.2\",\"0.3.3\",\"0.3.4\",\"0.3.5\",\"0.3.6\",\"0.3.7\","
	    "\"0.3.8\"],\"total_change\":0.62,\"total_change_ci\":[0.551,"
	    "0.692],\"per_release_change\":0.062,\"per_release_change_ci\":"
	    "[0.05,0.07]}}", 0, NULL);

	if ((c = one_hook("test_alert_gradual", testserver_url(&ts, "/hook"),
	    &s)) == NULL) {
		json_decref(v);
		return;
	}
	CHECK(v != NULL);
	CHECK_INT(alert_record_gradual(s, "basert", "0.3.0..0.3.8",
	    "per-token", v, NULL, &e), 0);
	CHECK_INT(alert_record_gradual(s, "basert", "0.2.0..0.3.8",
	    "per-token", v, NULL, &e), 1);
	CHECK_INT(store_alert_list(s, 10, &rows, &e), 0);
	CHECK_INT(rows.n, 1);
	if (rows.n == 1) {
		CHECK_STR(rows.v[0].alert.kind, "gradual");
		CHECK_STR(rows.v[0].alert.summary, "basert: a slide from 0.3.0 "
		    "to 0.3.8 , per-token cost +62.0% [+55.1%, +69.2%] over 8 "
		    "releases (+6.2% a release)");
	}
	store_alert_rows_release(&rows);
	/* Without its slide the verdict is refused, not alerted blank. */
	json_object_del(v, "gradual");
	CHECK_INT(alert_record_gradual(s, "basert", "0.3.0..0.3.9",
	    "per-token", v, NULL, &e), -1);
	json_decref(v);
	store_close(s);
	conf_free(c);
}

int
main(void)
{
	char root[1100], closed[128];
	const char *dir = check_tmpdir("test_alert");

	snprintf(root, sizeof(root), "%s/srv", dir);
	if (testserver_start(root, &ts) < 0)
		return 1;
	CHECK_CASE(test_text);
	CHECK_CASE(test_webhook_and_dedup);
	CHECK_CASE(test_hostile_text_and_secret_url);
	CHECK_CASE(test_enlisted_due_in_same_pass);
	test_retries(testserver_url(&ts, "/hook500"), "test_alert_500");
	/* a receiver that is down: port 1 (tcpmux) is closed on a test
	 * machine, and the connection is refused at once */
	snprintf(closed, sizeof(closed), "http://127.0.0.1:1/hook");
	test_retries(closed, "test_alert_down");
	CHECK_CASE(test_command);
	CHECK_CASE(test_report_link);
	CHECK_CASE(test_email);
	CHECK_CASE(test_github_issue);
	CHECK_CASE(test_github_commit);
	CHECK_CASE(test_gradual);
	testserver_stop(&ts);
	return check_done();
}
