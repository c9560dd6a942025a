/*
 * test_daemon_e2e.c: the daemon end to end on loopback: it watches a
 * github: source served by the test server, finds a newly published
 * regressing fake-engine release, benchmarks and confirms it, and posts
 * exactly one alert to a webhook; and a schedule missed on several days
 * while the daemon was down fires once at start-up.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "check_daemon.h"
#include "check_json.h"
#include "common/err.h"
#include "store/store.h"
#include "testserver.h"

static const char *ctl, *daemon_bin, *build;
static char ctl_d[4096];	/* bisectctl -c d.conf --format json */
static char dir[80];	/* a socket path must fit in sun_path */

/*
 * The fake engine with few runs (see test_watch.c), its releases those
 * of the demo timed by the CPU clock (tests/demo-cpu), so that another
 * build beside the test does not move their figures.  0.2.2 and 0.2.3
 * cost the same: at 3 runs their comparison may stay undecided, and
 * max-reps bounds how long the run count keeps doubling for it.
 */
#define ENGINE_FMT \
    "[engine \"%s\"]\n%s" \
    "\tasset = basert-{version}.tar.gz\n" \
    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} " \
    "-n {gen} -t 1 -r 1 -o json\n" \
    "\tparser = llama-bench\n\tprompts = 128,512\n\tgen = 16\n" \
    "\treps = 3\n\tmax-reps = 12\n\twarmup = 0\n\ttimeout = 1m\n"

static void
write_config(const char *engines, const char *extra)
{
	char text[16384];

	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = %s/state/d.db\n\tcache = cache\n"
	    "\tmax-busy = 100%%\n"
	    "[weights \"demo\"]\n\tpath = %s/demo/weights.bin\n%s%s",
	    dir, build, engines, extra);
	check_write_file("d.conf", text);
}

/* write_config() of two engines, basert on source_a and other on
 * source_b (ENGINE_FMT's keys). */
static void
write_config_two(const char *source_a, const char *source_b,
    const char *extra)
{
	char a[2048], b[2048], eng[4096];

	snprintf(a, sizeof(a), ENGINE_FMT, "basert", source_a);
	snprintf(b, sizeof(b), ENGINE_FMT, "other", source_b);
	snprintf(eng, sizeof(eng), "%s%s", a, b);
	write_config(eng, extra);
}

/* The daemon's status through bisectctl, once it answers (20 s). */
static json_t *
daemon_status(void)
{
	for (int i = 0; i < 200; i++) {
		json_t *st = check_ctl_ok_json(ctl_d, "status", 0);
		json_t *d = json_object_get(st, "daemon");

		if (json_is_object(d))
			return st;
		json_decref(st);
		check_sleep_ms(100);
	}
	return NULL;
}

/* bisectctl watch engine; the job's number, or 0. */
static int64_t
queue_watch_of(const char *engine)
{
	char args[256];

	snprintf(args, sizeof(args), "-c d.conf watch %s", engine);
	return check_ctl_job(ctl, args);
}

static int64_t
queue_watch(void)
{
	return queue_watch_of("basert");
}

static struct store *
open_store(void)
{
	return check_daemon_store(dir);
}

/* Stop the daemon and the server; the daemon's log (malloced). */
static char *
stop_all(pid_t pid, struct testserver *ts)
{
	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 30), 0);
	testserver_stop(ts);
	return check_read_file("daemon.log");
}

/* Files N.json the webhook sink stored. */
static int
count_hooks(const char *root)
{
	char path[4200];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "%s/hooks", root);
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);

		n += de->d_name[0] != '.' && l > 5 &&
		    strcmp(de->d_name + l - 5, ".json") == 0;
	}
	closedir(d);
	return n;
}

/* Publish releases 0.2.0 .. 0.2.last in the GitHub emulation. */
static void
publish(const struct testserver *ts, int last)
{
	static const char *const versions[] = { "0.2.0", "0.2.1", "0.2.2",
	    "0.2.3", "0.2.4", "0.2.5", "0.2.6" };
	char archives[4200];

	snprintf(archives, sizeof(archives), "%s/tests/demo-cpu", build);
	CHECK_INT(testserver_publish(ts, "demo/basert", "basert", archives,
	    versions, (size_t)last + 1), 0);
}

static void
test_watch_alert(void)
{
	struct testserver ts;
	char eng[4096], extra[1024], src[512], buf[64], *log;
	int64_t id;
	json_t *st, *hook, *alerts, *a, *sink;
	const char *change, *text;
	double t0 = check_now_s();
	pid_t pid;
	int code, n;

	if (testserver_start("srv", &ts) < 0) {
		CHECK(0);
		return;
	}
	publish(&ts, 3);
	snprintf(src, sizeof(src), "\tsource = github:demo/basert\n"
	    "\tapi = %s\n\tallow-http = true\n", testserver_url(&ts, "/api"));
	snprintf(eng, sizeof(eng), ENGINE_FMT, "basert", src);
	/* And the verdict as an issue upstream, the token from the
	 * daemon's environment. */
	snprintf(extra, sizeof(extra), "[alert \"hook\"]\n\twebhook = %s\n"
	    "\tallow-http = true\n[alert \"upstream\"]\n"
	    "\tgithub-issue = demo/basert\n\tapi = %s\n"
	    "\ttoken-env = BISECTD_TEST_GH_TOKEN\n\tallow-http = true\n",
	    testserver_url(&ts, "/hook"), testserver_url(&ts, "/api"));
	write_config(eng, extra);
	setenv("BISECTD_TEST_GH_TOKEN", "gh-e2e-token", 1);
	pid = check_start_daemon(daemon_bin, "d.conf", "daemon.log");
	unsetenv("BISECTD_TEST_GH_TOKEN");
	st = daemon_status();
	CHECK(st != NULL);
	json_decref(st);

	/* The first watch sets the baseline: 0.2.3 against 0.2.2. */
	id = queue_watch();
	CHECK_STR(check_job_wait(dir, id, 150, buf, sizeof(buf), &code),
	    "done");
	CHECK(code == 0 || code == 4);	/* no regression, or undecided */
	fprintf(stderr, "baseline watch done at %.1f s\n", check_now_s() - t0);
	CHECK_INT(count_hooks(ts.root), 0);

	/* 0.2.4 is published: found, benchmarked, confirmed, alerted. */
	publish(&ts, 4);
	id = queue_watch();
	CHECK_STR(check_job_wait(dir, id, 150, buf, sizeof(buf), &code),
	    "done");
	CHECK_INT(code, 3);
	fprintf(stderr, "regression watch done at %.1f s\n", check_now_s() - t0);
	for (int i = 0; i < 100 && count_hooks(ts.root) == 0; i++)
		check_sleep_ms(100);
	check_sleep_ms(2000);	/* room for a second, wrong, delivery */
	CHECK_INT(count_hooks(ts.root), 1);
	hook = check_hook(ts.root, 1);
	CHECK(hook != NULL);
	text = json_string_value(json_object_get(hook, "text"));
	CHECK_CONTAINS(text, "basert 0.2.4");
	CHECK_CONTAINS(text, "since 0.2.3");
	/* The headline names its figure, the machine and the report. */
	CHECK_CONTAINS(text, "(confirm_change, interleaved re-measurement)");
	CHECK_CONTAINS(text, ", on ");
	CHECK_CONTAINS(text, " report basert ");
	CHECK(json_string_value(json_object_get(hook, "machine")) != NULL);
	CHECK_CONTAINS(json_string_value(json_object_get(hook, "report")),
	    "bisectctl -c ");
	CHECK_STR(json_string_value(json_object_get(hook, "first_bad")),
	    "0.2.4");
	CHECK_STR(json_string_value(json_object_get(json_object_get(hook,
	    "verdict"), "first_bad")), "0.2.4");
	CHECK(json_is_true(json_object_get(json_object_get(hook, "verdict"),
	    "confirmed")));
	change = json_string_value(json_object_get(json_object_get(hook,
	    "verdict"), "kind"));
	if (change == NULL || (strcmp(change, "per-token") != 0 &&
	    strcmp(change, "both") != 0))
		fprintf(stderr, "kind: %s\n%s\n", change ? change : "(none)",
		    text ? text : "");
	CHECK(change && (strcmp(change, "per-token") == 0 ||
	    strcmp(change, "both") == 0));
	CHECK_STR(json_string_value(json_object_get(hook, "change")), change);
	json_decref(hook);

	/* bisectctl alerts: that one alert, delivered to the hook. */
	alerts = check_ctl_ok_json(ctl_d, "alerts", 0);
	CHECK_INT(json_array_size(alerts), 1);
	a = json_array_get(alerts, 0);
	CHECK_STR(json_string_value(json_object_get(a, "kind")),
	    "regression");
	CHECK_CONTAINS(json_string_value(json_object_get(a, "summary")),
	    "basert 0.2.4");
	CHECK_INT(json_array_size(json_object_get(a, "sinks")), 2);
	for (size_t i = 0; i < 2; i++) {
		sink = json_array_get(json_object_get(a, "sinks"), i);
		CHECK_STR(json_string_value(json_object_get(sink, "state")),
		    "delivered");
		CHECK_INT(json_integer_value(json_object_get(sink, "attempts")),
		    1);
	}
	json_decref(alerts);
	/* The issue: the headline, then the report for upstream, with no
	 * local path in it. */
	{
		char path[4200], here[4096];
		char *body;
		json_t *issue;
		const char *md;

		snprintf(path, sizeof(path), "%s/api/demo/basert/issues/1.json",
		    ts.root);
		body = check_read_file(path);
		issue = json_loads(body ? body : "", 0, NULL);
		free(body);
		CHECK_CONTAINS(json_string_value(json_object_get(issue,
		    "title")), "basert 0.2.4: per-token slower since 0.2.3");
		md = json_string_value(json_object_get(issue, "body"));
		CHECK_CONTAINS(md, "<!-- bisectd-alert ");
		CHECK_CONTAINS(md, "### basert 0.2.3..0.2.4");
		CHECK_CONTAINS(md, "| 0.2.4 | measured |");
		CHECK_CONTAINS(md, "**Verdict: regression");
		CHECK(getcwd(here, sizeof(here)) != NULL);
		CHECK(md != NULL && strstr(md, here) == NULL);
		json_decref(issue);
		snprintf(path, sizeof(path), "%s/api/demo/basert/issues/2.json",
		    ts.root);
		CHECK(check_read_file(path) == NULL);
	}

	/* Nothing new: the watch runs, nothing more is posted. */
	id = queue_watch();
	CHECK_STR(check_job_wait(dir, id, 60, buf, sizeof(buf), &code),
	    "done");
	CHECK_INT(code, 0);
	check_sleep_ms(1000);
	CHECK_INT(count_hooks(ts.root), 1);
	CHECK_INT(testserver_count(&ts, "POST /hook ", NULL), 1);

	/* The queue as bisectctl shows it: three watches, all done. */
	st = check_ctl_ok_json(ctl_d, "status", 0);
	n = 0;
	for (size_t i = 0; i < json_array_size(json_object_get(st, "jobs"));
	    i++) {
		json_t *j = json_array_get(json_object_get(st, "jobs"), i);

		CHECK_STR(json_string_value(json_object_get(j, "state")),
		    "done");
		n += strcmp(json_string_value(json_object_get(j, "kind")),
		    "watch") == 0;
	}
	CHECK_INT(n, 3);
	json_decref(st);

	log = stop_all(pid, &ts);
	CHECK_CONTAINS(log, "regression 0.2.3..0.2.4");
	free(log);
	fprintf(stderr, "watch and alert: %.1f s\n", check_now_s() - t0);
}

/* Link release 1.0.v of name into rel/. */
static void
add_release(const char *name, int v)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "mkdir -p rel && ln -sf %s/tests/releases/"
	    "%s-1.0.%d.tar.gz rel/", build, name, v);
	CHECK_INT(check_run(cmd, NULL), 0);
}

/* bisectctl bench of each release of name from 1.0.0 to 1.0.last. */
static void
bench_each(const char *name, int last)
{
	char cmd[4200];

	for (int v = 0; v <= last; v++) {
		snprintf(cmd, sizeof(cmd), "%s -c d.conf bench %s 1.0.%d "
		    ">/dev/null", ctl, name, v);
		CHECK_INT(check_run(cmd, NULL), 0);
	}
}

/*
 * The configuration of engine NAME on the fake-engine releases
 * NAME-VERSION.tar.gz in rel/ (5 runs a cell, up to max_reps), alerts
 * to a webhook of ts, started here; versions 1.0.0 to 1.0.last linked
 * into rel/.  -1 when the server does not start.
 */
static int
fake_watched(const char *name, int max_reps, int last, struct testserver *ts)
{
	char eng[4096], extra[1024];
	size_t len = 0;

	if (testserver_start("srv", ts) < 0) {
		CHECK(0);
		return -1;
	}
	snprintf(extra, sizeof(extra), "\treps = 5\n\tmax-reps = %d\n"
	    "\twarmup = 0\n\ttimeout = 1m\n", max_reps);
	check_fake_engine(eng, sizeof(eng), &len, name, "dir:rel", extra);
	snprintf(extra, sizeof(extra), "[alert \"hook\"]\n\twebhook = %s\n"
	    "\tallow-http = true\n", testserver_url(ts, "/hook"));
	write_config(eng, extra);
	for (int v = 0; v <= last; v++)
		add_release(name, v);
	return 0;
}

/* Start the daemon and wait until it answers. */
static pid_t
start_daemon(void)
{
	pid_t pid = check_start_daemon(daemon_bin, "d.conf", "daemon.log");
	json_t *st = daemon_status();

	CHECK(st != NULL);
	json_decref(st);
	return pid;
}

/* Queue a watch of engine and wait for it to end with exit code want. */
static void
watch_ends(const char *engine, int want)
{
	char buf[64];
	int code;

	CHECK_STR(check_job_wait(dir, queue_watch_of(engine), 150, buf,
	    sizeof(buf), &code), "done");
	CHECK_INT(code, want);
}

/* The one alert the webhook got, once it came (and no second one). */
static json_t *
only_hook(const struct testserver *ts)
{
	json_t *hook;

	for (int i = 0; i < 100 && count_hooks(ts->root) == 0; i++)
		check_sleep_ms(100);
	check_sleep_ms(1000);	/* room for a second, wrong, delivery */
	CHECK_INT(count_hooks(ts->root), 1);
	hook = check_hook(ts->root, 1);
	CHECK(hook != NULL);
	return hook;
}

static const char *
hook_str(const json_t *hook, const char *key)
{
	return json_string_value(json_object_get(hook, key));
}

/*
 * Every metric watched, through a running daemon: releases whose decode
 * alone gets slower at 1.0.3 (tests/releases/dec-*).  The watch of 1.0.2
 * posts nothing; the watch of 1.0.3 posts one alert naming tg16, though
 * the engine's metric (per-token) did not move.
 */
static void
test_watch_decode(void)
{
	struct testserver ts;
	json_t *hook;
	char *log;
	pid_t pid;

	if (fake_watched("dec", 40, 2, &ts) < 0)
		return;
	pid = start_daemon();
	watch_ends("dec", 0);
	CHECK_INT(count_hooks(ts.root), 0);
	add_release("dec", 3);
	watch_ends("dec", 3);
	hook = only_hook(&ts);
	CHECK_STR(hook_str(hook, "metric"), "tg16");
	CHECK_STR(hook_str(hook, "first_bad"), "1.0.3");
	CHECK_CONTAINS(hook_str(hook, "text"), "dec 1.0.3");
	json_decref(hook);
	log = stop_all(pid, &ts);
	CHECK_CONTAINS(log, "regression 1.0.2..1.0.3 on tg16");
	free(log);
}

/*
 * The opening of the history cases: name's releases 1.0.0 to 1.0.18
 * benched, the daemon started and a watch of name ended with no
 * regression between its ends; the daemon's pid, or -1 when the server
 * does not start.
 */
static pid_t
history_watched(const char *name, struct testserver *ts)
{
	pid_t pid;

	if (fake_watched(name, 20, 18, ts) < 0)
		return -1;
	bench_each(name, 18);
	pid = start_daemon();
	watch_ends(name, 0);
	return pid;
}

/*
 * The history through a running daemon: releases 50% dearer per prompt
 * token from 1.0.6 to 1.0.10 (tests/releases/bump-*), all benched.  A
 * watch of the newest, 1.0.18, finds no regression between its ends,
 * and its history the step up: one alert (kind history) naming 1.0.6,
 * though per-token, pp64 and pp256 all show it; the step back down is
 * not alerted.  The watch of 1.0.19 finds the same step again and
 * alerts nothing more.
 */
static void
test_watch_history(void)
{
	struct testserver ts;
	char *log;
	json_t *hook;
	pid_t pid;

	if ((pid = history_watched("bump", &ts)) < 0)
		return;
	hook = only_hook(&ts);
	CHECK_STR(hook_str(hook, "kind"), "history");
	CHECK_STR(hook_str(hook, "metric"), "per-token");
	CHECK_STR(hook_str(hook, "first_bad"), "1.0.6");
	CHECK_STR(hook_str(hook, "last_good"), "1.0.5");
	CHECK_CONTAINS(hook_str(hook, "text"), "bump 1.0.6: prefill cost per "
	    "token slower, +");
	CHECK_CONTAINS(hook_str(hook, "text"), "% ms/token since 1.0.5 (a "
	    "change point of the history, p ");
	CHECK_CONTAINS(hook_str(hook, "bisect"), " bisect --metric per-token "
	    "bump 1.0.4..1.0.7");
	json_decref(hook);

	/* A new release: the same step found again is not news. */
	add_release("bump", 19);
	watch_ends("bump", 0);
	check_sleep_ms(1000);
	CHECK_INT(count_hooks(ts.root), 1);
	log = stop_all(pid, &ts);
	CHECK_CONTAINS(log, "watch bump: history of per-token: slower at 1.0.6 "
	    "since 1.0.5 (alert recorded)");
	CHECK_CONTAINS(log, "watch bump: history of pp256: slower at 1.0.6 "
	    "(alerted before)");
	CHECK_CONTAINS(log, "watch bump: history of per-token: faster at "
	    "1.0.11");
	free(log);
}

/*
 * A step of 8% at 1.0.6 (tests/releases/nudge-*), its interval below
 * half the threshold (10%): the history shows it, the watch logs it,
 * and nothing is alerted.
 */
static void
test_history_below_threshold(void)
{
	struct testserver ts;
	char *log;
	pid_t pid;

	if ((pid = history_watched("nudge", &ts)) < 0)
		return;
	check_sleep_ms(1000);
	CHECK_INT(count_hooks(ts.root), 0);
	log = stop_all(pid, &ts);
	CHECK_CONTAINS(log, "watch nudge: history of per-token: slower at "
	    "1.0.6 by +");
	CHECK_CONTAINS(log, "below half the threshold: not alerted");
	free(log);
}

/* Watch jobs of engine in the store (any state). */
static int
count_watches(const char *engine)
{
	struct store *s = open_store();
	struct store_jobs jobs;
	struct err e = ERR_INIT;
	int n = 0;

	if (s == NULL || store_job_list(s, 1000, &jobs, &e) < 0) {
		fprintf(stderr, "jobs: %s\n", e.msg);
		store_close(s);
		return -1;
	}
	for (size_t i = 0; i < jobs.n; i++)
		n += strcmp(jobs.v[i].kind, "watch") == 0 &&
		    strcmp(jobs.v[i].engine, engine) == 0;
	store_jobs_release(&jobs);
	store_close(s);
	return n;
}

/*
 * Stop the daemon pid, its log saying logged, and start it again on the
 * same store; returns the new one's pid once it answers and has had
 * half a second to queue what it would.
 */
static pid_t
restart(pid_t pid, const char *logged)
{
	char *log;

	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 30), 0);
	log = check_read_file("daemon.log");
	CHECK_CONTAINS(log, logged);
	free(log);
	pid = check_start_daemon(daemon_bin, "d.conf", "daemon.log");
	json_decref(daemon_status());
	check_sleep_ms(500);
	return pid;
}

/* The first job store_job_list() gives from s (NULL: none), the next to
 * run or else the last to end: its number, or 0, and its arguments into
 * args when args is not NULL. */
static int64_t
first_job(struct store *s, char *args, size_t len)
{
	struct store_jobs jobs;
	struct err e = ERR_INIT;
	int64_t id = 0;

	if (s == NULL || store_job_list(s, 10, &jobs, &e) < 0)
		return 0;
	if (jobs.n > 0) {
		id = jobs.v[0].id;
		if (args != NULL)
			snprintf(args, len, "%s", jobs.v[0].args ?
			    jobs.v[0].args : "");
	}
	store_jobs_release(&jobs);
	return id;
}

static void
test_missed_schedule(void)
{
	char src[1024], cron[64], buf[64];
	char cmd[4200];
	struct err e = ERR_INIT;
	struct store *s;
	struct tm tm;
	time_t now = time(NULL), later;
	int64_t last = 0, id = 0;
	pid_t pid;
	int code;

	/* A daily schedule twelve hours away: it cannot come due during
	 * the test, whatever the hour it runs at. */
	later = now + 12 * 3600;
	localtime_r(&later, &tm);
	snprintf(cron, sizeof(cron), "%d %d * * *", tm.tm_min, tm.tm_hour);
	snprintf(cmd, sizeof(cmd), "mkdir -p rel state && ln -s %s/demo/"
	    "releases/basert-0.2.0.tar.gz rel/", build);
	CHECK_INT(check_run(cmd, NULL), 0);
	/* One release: the watch only notes it, nothing to benchmark. */
	snprintf(src, sizeof(src), "\tsource = dir:%s/rel\n\tschedule = %s\n",
	    dir, cron);
	write_config_two(src, src, "");

	/* basert last fired three days ago: three nights missed.  "other"
	 * never fired: it starts counting at start-up. */
	s = open_store();
	CHECK(s != NULL);
	if (s == NULL)
		return;
	CHECK_INT(store_schedule_set(s, "engine:basert",
	    (int64_t)now - 3 * 86400, &e), 0);
	store_close(s);

	pid = check_start_daemon(daemon_bin, "d.conf", "daemon.log");
	json_decref(daemon_status());
	CHECK_INT(count_watches("basert"), 1);
	CHECK_INT(count_watches("other"), 0);
	s = open_store();
	id = first_job(s, NULL, 0);
	if (s) {
		CHECK_INT(store_schedule_last(s, "engine:basert", &last, &e),
		    0);
		CHECK(last >= (int64_t)now);
	}
	store_close(s);
	CHECK(id > 0);
	CHECK_STR(check_job_wait(dir, id, 60, buf, sizeof(buf), &code),
	    "done");
	CHECK_INT(code, 0);
	check_sleep_ms(1500);
	CHECK_INT(count_watches("basert"), 1);
	CHECK_INT(count_watches("other"), 0);
	/* A restart the same day queues nothing more. */
	pid = restart(pid, "schedule: queued a watch of basert");
	CHECK_INT(count_watches("basert"), 1);
	CHECK_INT(count_watches("other"), 0);
	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 30), 0);
}

/*
 * A [compare] section through the daemon: never checked, it is due at
 * start-up, queued once as a watch job of its first engine, run to its
 * first table (nothing to alert), and `status` gives the check's words
 * and when it is due again; a restart queues nothing more.
 */
static void
test_compare_schedule(void)
{
	char sa[1024], sb[1024], buf[64], args[64] = "";
	char cmd[4200];
	struct store *s;
	int64_t id = 0;
	pid_t pid;
	int code;

	snprintf(cmd, sizeof(cmd), "mkdir -p ra rb state && ln -s %s/tests/"
	    "demo-cpu/basert-0.2.3.tar.gz ra/ && ln -s %s/tests/demo-cpu/"
	    "basert-0.2.4.tar.gz rb/", build, build);
	CHECK_INT(check_run(cmd, NULL), 0);
	snprintf(sa, sizeof(sa), "\tsource = dir:%s/ra\n", dir);
	snprintf(sb, sizeof(sb), "\tsource = dir:%s/rb\n", dir);
	write_config_two(sa, sb, "[compare \"m\"]\n\tengines = basert, other\n"
	    "\tevery = 7d\n");

	pid = check_start_daemon(daemon_bin, "d.conf", "daemon.log");
	json_decref(daemon_status());
	CHECK_INT(count_watches("basert"), 1);
	s = open_store();
	id = first_job(s, args, sizeof(args));
	store_close(s);
	CHECK(id > 0);
	CHECK_STR(args, "{\"compare\":\"m\"}");
	CHECK_STR(check_job_wait(dir, id, 120, buf, sizeof(buf), &code),
	    "done");
	CHECK_INT(code, 0);
	check_ctl_says(ctl, "-c d.conf status", 0, "compare check m",
	    "the same leaders (or none apart from the rest)", "  compare m ",
	    NULL);
	/* Checked: a restart queues nothing more. */
	pid = restart(pid, "compare: queued the compare check m as job ");
	CHECK_INT(count_watches("basert"), 1);
	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 30), 0);
}

/* A folder of its own for the next case: the last one is removed when
 * every check passed (check_done removes the last folder only). */
static int
next_dir(void)
{
	char cmd[200];

	if (chdir("..") != 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (check_failures == 0)
		(void)check_run(cmd, NULL);
	snprintf(dir, sizeof(dir), "%s", check_tmpdir("test_daemon_e2e"));
	return 0;
}

int
main(void)
{
	check_env(&ctl, &daemon_bin, &build);
	snprintf(ctl_d, sizeof(ctl_d), "%s -c d.conf --format json", ctl);
	snprintf(dir, sizeof(dir), "%s", check_tmpdir("test_daemon_e2e"));
	CHECK_CASE(test_watch_alert);
	if (next_dir() == 0)
		CHECK_CASE(test_missed_schedule);
	if (check_failures == 0 && next_dir() == 0)
		CHECK_CASE(test_watch_decode);
	if (check_failures == 0 && next_dir() == 0)
		CHECK_CASE(test_watch_history);
	if (check_failures == 0 && next_dir() == 0)
		CHECK_CASE(test_compare_schedule);
	if (check_failures == 0 && next_dir() == 0)
		CHECK_CASE(test_history_below_threshold);
	return check_done();
}
