/*
 * test_watch.c: watch_run() and yardstick_run() on the demo's fake-engine
 * releases in a dir: source: a first watch sets the baseline, a
 * regressing release gives exactly one alert, a later release none, a
 * failing source fails the job without an alert; the yardstick alerts
 * when another engine is faster (flagging different weights) and not
 * when it is the fastest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#include "bisectd/jobs/compare_check.h"
#include "bisectd/jobs/watch.h"

static const char *build;
static int errors_logged;

static void
log_line(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= ALERT_LOG_ERR)
		errors_logged++;
	if (getenv("TEST_WATCH_VERBOSE"))
		fprintf(stderr, "[%d] %s\n", level, msg);
}

/*
 * Publish demo release version in folder dir: the copy timed by the CPU
 * clock (tests/demo-cpu), so that a loaded machine does not move the
 * figures the watch and the yardstick compare.
 */
static void
publish(const char *dir, const char *version)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "mkdir -p %s && ln -sf "
	    "%s/tests/demo-cpu/basert-%s.tar.gz %s/", dir, build, version, dir);
	CHECK_INT(check_run(cmd, NULL), 0);
}

/* Few runs: every run waits 250 ms for the machine's busy share. */
#define ENGINE_FMT_REPS(reps) \
    "[engine \"%s\"]\n\tsource = dir:%s\n" \
    "\tasset = basert-{version}.tar.gz\n" \
    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} " \
    "-n {gen} -t 1 -r 1 -o json\n" \
    "\tparser = llama-bench\n\tprompts = 128,512\n\tgen = 16\n" \
    "\treps = " reps "\n\tmax-reps = 24\n\twarmup = 0\n" \
    "\tweights = %s\n\ttimeout = 1m\n"
#define ENGINE_FMT ENGINE_FMT_REPS("3")

static int
count_alerts(struct store *s, const char *kind, struct store_alert_rows *keep)
{
	struct store_alert_rows rows;
	struct err e = ERR_INIT;
	int n = 0;

	if (store_alert_list(s, 100, &rows, &e) < 0)
		return -1;
	for (size_t i = 0; i < rows.n; i++)
		n += strcmp(rows.v[i].alert.kind, kind) == 0;
	if (keep)
		*keep = rows;
	else
		store_alert_rows_release(&rows);
	return n;
}

static void
test_watch(void)
{
	struct watch_opts o = { .log = log_line };
	struct store_alert_rows rows;
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct conf *c;
	char text[8192], eng[4096];
	json_t *body;
	const char *change;
	int rc;

	check_tmpdir("test_watch");
	snprintf(eng, sizeof(eng), ENGINE_FMT, "basert", "rel", "demo");
	snprintf(text, sizeof(text), "[bisectd]\n\tdatabase = t.db\n"
	    "\tcache = cache\n\tmax-busy = 100%%\n"
	    "[weights \"demo\"]\n\tpath = %s/demo/weights.bin\n%s", build, eng);
	for (int v = 0; v <= 3; v++) {
		char ver[16];

		snprintf(ver, sizeof(ver), "0.2.%d", v);
		publish("rel", ver);
	}
	c = check_conf_load(text);
	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_INT(store_open("t.db", &s, &e), 0);
	/*
	 * First watch: 0.2.3 against 0.2.2, the same work: no regression, or
	 * unknown when a loaded machine makes their wall times drift apart;
	 * never an alert.
	 */
	rc = watch_run(c, &c->engines[0], s, &o, &e);
	CHECK(rc == 0 || rc == 4);
	if (e.msg[0])
		fprintf(stderr, "watch: %s\n", e.msg);
	CHECK_INT(count_alerts(s, "regression", NULL), 0);
	/* Nothing new: nothing run. */
	CHECK_INT(watch_run(c, &c->engines[0], s, &o, &e), 0);
	/* 0.2.4 regresses: one alert naming it. */
	publish("rel", "0.2.4");
	CHECK_INT(watch_run(c, &c->engines[0], s, &o, &e), 3);
	CHECK_INT(count_alerts(s, "regression", &rows), 1);
	if (rows.n == 1) {
		CHECK_CONTAINS(rows.v[0].alert.summary, "basert 0.2.4: ");
		CHECK_CONTAINS(rows.v[0].alert.summary, "since 0.2.3");
		body = json_loads(rows.v[0].alert.body, 0, NULL);
		CHECK_STR(json_string_value(json_object_get(body,
		    "first_bad")), "0.2.4");
		change = json_string_value(json_object_get(body, "change"));
		CHECK(change && (strcmp(change, "per-token") == 0 ||
		    strcmp(change, "both") == 0));
		CHECK(json_is_true(json_object_get(json_object_get(body,
		    "verdict"), "confirmed")));
		json_decref(body);
	}
	store_alert_rows_release(&rows);
	/*
	 * 0.2.5 (as slow as 0.2.4): the same regression, no new alert.  What
	 * the watch returns depends on how noisy the machine is (3 when it
	 * finds the known regression again, 0 when it compares 0.2.4 with
	 * 0.2.5 alone, 4 when that stays unknown); it never fails and never
	 * alerts again.
	 */
	publish("rel", "0.2.5");
	rc = watch_run(c, &c->engines[0], s, &o, &e);
	if (rc != 0 && rc != 3 && rc != 4)
		fprintf(stderr, "watch of 0.2.5: %d: %s\n", rc, e.msg);
	CHECK(rc == 0 || rc == 3 || rc == 4);
	CHECK_INT(count_alerts(s, "regression", NULL), 1);
	/* A source that fails: the job fails, logged, no alert. */
	CHECK_INT(check_run("mv rel rel.gone", NULL), 0);
	errors_logged = 0;
	CHECK_INT(watch_run(c, &c->engines[0], s, &o, &e), -1);
	CHECK_CONTAINS(e.msg, "rel");
	CHECK_INT(errors_logged, 1);
	CHECK_INT(watch_run(c, &c->engines[0], s, &o, &e), -1);
	CHECK_INT(count_alerts(s, "regression", NULL) +
	    count_alerts(s, "archive-changed", NULL), 1);
	store_close(s);
	conf_free(c);
}

/*
 * Every metric is watched: over releases whose decode alone gets slower
 * at 1.0.3 (prefill the same), the watch of 1.0.2 alerts nothing (the
 * other metrics, noise and all, under Holm's 5%), the watch of 1.0.3
 * alerts once, naming tg16 and the release, and the watch of 1.0.4
 * (as slow) alerts nothing new.  The prefill metrics compared the
 * whole way stay below Holm's bar.
 */
static void
test_watch_every_metric(void)
{
	struct watch_opts o = { .log = log_line };
	struct store_alert_rows rows;
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct conf *c;
	char text[8192];
	json_t *body;
	int rc;

	check_tmpdir("test_watch_metrics");
	snprintf(text, sizeof(text), "[bisectd]\n\tdatabase = t.db\n"
	    "\tcache = cache\n\tmax-busy = 100%%\n"
	    "[weights \"demo\"]\n\tpath = %s/demo/weights.bin\n"
	    "[engine \"dec\"]\n\tsource = dir:rel\n"
	    "\tasset = dec-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 64,256\n\tgen = 16\n"
	    "\treps = 5\n\tmax-reps = 40\n\twarmup = 0\n"
	    "\ttimeout = 1m\n", build);
	c = check_conf_load(text);
	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_INT(store_open("t.db", &s, &e), 0);
	for (int v = 0; v <= 4; v++) {
		snprintf(text, sizeof(text), "mkdir -p rel && ln -sf "
		    "%s/tests/releases/dec-1.0.%d.tar.gz rel/", build, v);
		CHECK_INT(check_run(text, NULL), 0);
		if (v < 2)
			continue;
		rc = watch_run(c, &c->engines[0], s, &o, &e);
		if (e.msg[0])
			fprintf(stderr, "watch of 1.0.%d: %s\n", v, e.msg);
		/* 1.0.4: the regression known from 1.0.2, found again (3),
		 * never alerted twice. */
		if (v == 4)
			CHECK(rc == 0 || rc == 3);
		else
			CHECK_INT(rc, v == 3 ? 3 : 0);
		CHECK_INT(count_alerts(s, "regression", NULL), v < 3 ? 0 : 1);
	}
	CHECK_INT(count_alerts(s, "regression", &rows), 1);
	if (rows.n == 1) {
		CHECK_CONTAINS(rows.v[0].alert.summary, "dec 1.0.3: ");
		body = json_loads(rows.v[0].alert.body, 0, NULL);
		CHECK_STR(json_string_value(json_object_get(body, "metric")),
		    "tg16");
		CHECK_STR(json_string_value(json_object_get(body,
		    "first_bad")), "1.0.3");
		json_decref(body);
	}
	store_alert_rows_release(&rows);
	store_close(s);
	conf_free(c);
}

/* Yardstick basert on ys_version, "other" on other_version. */
static void
yardstick_case(const char *name, const char *ys_version,
    const char *other_version, int other_weights, int expect)
{
	struct watch_opts o = { .log = log_line };
	struct store_alert_rows rows;
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct conf *c;
	char text[16384], a[4096], b[4096];
	int64_t when = 0;

	check_tmpdir(name);
	publish("ra", ys_version);
	publish("rb", other_version);
	/* Different weights for "other": a copy with a byte more. */
	snprintf(text, sizeof(text), "cp %s/demo/weights.bin w2.bin && "
	    "echo >> w2.bin", build);
	CHECK_INT(check_run(text, NULL), 0);
	/*
	 * The yardstick check compares one measurement of each engine, not
	 * interleaved: ten runs a cell keep the intervals narrow enough to
	 * tell 3.5x apart on a loaded machine.
	 */
	snprintf(a, sizeof(a), ENGINE_FMT_REPS("10"), "basert", "ra",
	    "demo");
	snprintf(b, sizeof(b), ENGINE_FMT_REPS("10"), "other", "rb",
	    other_weights ? "w2" : "demo");
	snprintf(text, sizeof(text), "[bisectd]\n\tdatabase = t.db\n"
	    "\tcache = cache\n\tmax-busy = 100%%\n"
	    "[weights \"demo\"]\n\tpath = %s/demo/weights.bin\n"
	    "[weights \"w2\"]\n\tpath = w2.bin\n%s%s"
	    "[yardstick]\n\tengine = basert\n\tversion = %s\n\tevery = 7d\n",
	    build, a, b, ys_version);
	c = check_conf_load(text);
	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_INT(store_open("t.db", &s, &e), 0);
	/* never checked: due now */
	CHECK_INT(yardstick_next(c, s, &when, &e), 0);
	CHECK(when <= (int64_t)time(NULL));
	CHECK_INT(yardstick_run(c, s, &o, &e), expect);
	if (e.msg[0])
		fprintf(stderr, "yardstick: %s\n", e.msg);
	CHECK_INT(yardstick_next(c, s, &when, &e), 0);
	CHECK(when >= (int64_t)time(NULL) + 7 * 86400 - 60);
	CHECK_INT(count_alerts(s, "yardstick", &rows), expect ? 1 : 0);
	if (expect && rows.n == 1) {
		CHECK_STR(rows.v[0].alert.engine, "other");
		CHECK_CONTAINS(rows.v[0].alert.summary, "yardstick basert");
		CHECK_CONTAINS(rows.v[0].alert.summary, other_version);
		CHECK_CONTAINS(rows.v[0].alert.summary, "weights differ: the "
		    "ordering holds, not the decimals");
		CHECK_CONTAINS(rows.v[0].alert.body,
		    "\"weights_differ\":true");
	}
	store_alert_rows_release(&rows);
	store_close(s);
	conf_free(c);
}

/* [compare "m"] of specs over basert from dir a and other from dir b. */
static struct conf *
compare_conf(const char *a_dir, const char *b_dir, const char *specs)
{
	char text[16384], a[4096], b[4096];

	snprintf(a, sizeof(a), ENGINE_FMT_REPS("8"), "basert", a_dir, "demo");
	snprintf(b, sizeof(b), ENGINE_FMT_REPS("8"), "other", b_dir, "demo");
	snprintf(text, sizeof(text), "[bisectd]\n\tdatabase = t.db\n"
	    "\tcache = cache\n\tmax-busy = 100%%\n"
	    "[weights \"demo\"]\n\tpath = %s/demo/weights.bin\n%s%s"
	    "[compare \"m\"]\n\tengines = %s\n\tevery = 7d\n",
	    build, a, b, specs);
	return check_conf_load(text);
}

/* The prefill alerts of kind "compare" (a decode leader by chance is no
 * concern here: decode is the same in every demo release). */
static int
prefill_alerts(struct store *s, char *summary, size_t len)
{
	struct store_alert_rows rows;
	int n = 0;

	summary[0] = '\0';
	if (count_alerts(s, "compare", &rows) < 0)
		return -1;
	for (size_t i = 0; i < rows.n; i++)
		if (strcmp(rows.v[i].alert.kind, "compare") == 0 &&
		    strstr(rows.v[i].alert.body, "\"side\":\"prefill\"")) {
			snprintf(summary, len, "%s", rows.v[i].alert.summary);
			n++;
		}
	store_alert_rows_release(&rows);
	return n;
}

/*
 * A [compare] check: the first table (each engine's newest release) is
 * kept without an alert; when the other engine leads basert beyond the
 * noise, one alert names both with their figures; the same table again
 * alerts nothing more.
 */
static void
test_compare_check(void)
{
	struct watch_opts o = { .log = log_line };
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct conf *c;
	char summary[1024];
	int64_t when = 0;
	int rc;

	check_tmpdir("test_watch_compare");
	publish("ra", "0.2.3");		/* 96.6 us a prompt token */
	publish("rb", "0.2.4");		/* 328 */
	if ((c = compare_conf("ra", "rb", "basert, other")) == NULL ||
	    store_open("t.db", &s, &e) < 0) {
		CHECK(!"config and store");
		conf_free(c);
		return;
	}
	CHECK_INT(compare_check_next(s, &c->compares[0], &when, &e), 0);
	CHECK(when <= (int64_t)time(NULL));
	rc = compare_check_run(c, s, &o, &c->compares[0], NULL, &e);
	if (rc < 0)
		fprintf(stderr, "compare: %s\n", e.msg);
	CHECK_INT(rc, 0);
	CHECK_INT(prefill_alerts(s, summary, sizeof(summary)), 0);
	CHECK_INT(compare_check_next(s, &c->compares[0], &when, &e), 0);
	CHECK(when >= (int64_t)time(NULL) + 7 * 86400 - 60);
	conf_free(c);

	/* The section now ranks basert's slow release against other's fast
	 * one: the same engines, another leader. */
	publish("ra", "0.2.4");
	publish("rb", "0.2.3");
	if ((c = compare_conf("ra", "rb", "basert@0.2.4, other@0.2.3")) ==
	    NULL) {
		CHECK(!"config");
		store_close(s);
		return;
	}
	rc = compare_check_run(c, s, &o, &c->compares[0], NULL, &e);
	if (rc < 0)
		fprintf(stderr, "compare: %s\n", e.msg);
	CHECK_INT(rc, 3);
	CHECK_INT(prefill_alerts(s, summary, sizeof(summary)), 1);
	CHECK_CONTAINS(summary, "compare m: other 0.2.3 now leads prefill at "
	    "512 tokens, ");
	CHECK_CONTAINS(summary, "over basert 0.2.4 at ");
	CHECK_CONTAINS(summary, "(n 8)");
	if (getenv("TEST_WATCH_VERBOSE"))
		fprintf(stderr, "alert: %s\n", summary);
	/* The same table again: the same leader, nothing more. */
	rc = compare_check_run(c, s, &o, &c->compares[0], NULL, &e);
	CHECK_INT(rc, 0);
	CHECK_INT(prefill_alerts(s, summary, sizeof(summary)), 1);
	store_close(s);
	conf_free(c);
}

/* A run that fails fails the check: no engine leads by another's crash. */
static void
test_compare_failed_run(void)
{
	struct watch_opts o = { .log = log_line };
	struct err e = ERR_INIT;
	struct store *s = NULL;
	struct conf *c;
	char summary[1024];

	check_tmpdir("test_watch_compare_fail");
	publish("ra", "0.2.4");
	publish("rb", "0.2.3");
	if ((c = compare_conf("ra", "rb", "basert, other")) == NULL ||
	    store_open("t.db", &s, &e) < 0) {
		CHECK(!"config and store");
		conf_free(c);
		return;
	}
	/* other's command cannot run: every run of it fails */
	free(c->engines[1].command);
	c->engines[1].command = strdup("{bin}/bin/no-such-engine");
	CHECK_INT(compare_check_run(c, s, &o, &c->compares[0], NULL, &e), -1);
	CHECK_CONTAINS(e.msg, "compare m: ");
	CHECK_CONTAINS(e.msg, " runs failed; the last: ");
	CHECK_INT(prefill_alerts(s, summary, sizeof(summary)), 0);
	store_close(s);
	conf_free(c);
}

/* The watch, with "yardstick" the yardstick, with "compare" the
 * [compare] check (three CTest tests). */
int
main(int argc, char **argv)
{
	const char *part = argc > 1 ? argv[1] : "";

	if ((build = getenv("BISECTD_BUILD_DIR")) == NULL) {
		fprintf(stderr, "BISECTD_BUILD_DIR is not set\n");
		return 1;
	}
	if (strcmp(part, "compare") == 0) {
		test_compare_check();
		test_compare_failed_run();
	} else if (strcmp(part, "yardstick") != 0) {
		test_watch();
		test_watch_every_metric();
	} else {
		/* The yardstick 3.5x dearer per token: alert. */
		yardstick_case("test_watch_ys_slower", "0.2.4", "0.2.3", 1, 3);
		/* The yardstick the faster one: no alert. */
		yardstick_case("test_watch_ys_faster", "0.2.3", "0.2.4", 0, 0);
	}
	return check_done();
}
