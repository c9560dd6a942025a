/*
 * test_drill_e2e.c: the drill-down through a running daemon.  An engine
 * with drill-down = yes, its releases published on a github: source by
 * the test server and its git repository made by gitengine.c; a new
 * release that regresses appears, the watch finds and confirms it, goes
 * on into the commits between the two tags, and posts exactly one alert,
 * naming the release and the commit, to a webhook.  While a commit is
 * built, status and the status page say which, for which probe and for
 * how long.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "check_json.h"
#include "gitengine.h"
#include "testserver.h"

static const char *ctl, *daemon_bin;
static char ctl_d[4096];	/* bisectctl -c d.conf --format json */
static char dir[80];	/* a socket path must fit in sun_path */

/* The releases listed, as GitHub lists them. */
static void
publish(const struct testserver *ts, const char *const *versions, int n)
{
	char archives[4200];

	snprintf(archives, sizeof(archives), "%s/rel", dir);
	CHECK_INT(testserver_publish(ts, "demo/eng", "eng", archives,
	    versions, (size_t)n), 0);
}

/* Queue a watch of eng and wait (timeout_s) for it to end; its exit
 * code, or -1. */
static int
watch(double timeout_s)
{
	char want[64];
	int64_t id = check_ctl_job(ctl, "-c d.conf watch eng");
	double t0 = check_now_s();

	snprintf(want, sizeof(want), "%lld", (long long)id);
	while (id > 0 && check_now_s() - t0 < timeout_s) {
		json_t *st = check_ctl_ok_json(ctl_d, "status", 1), *j;
		size_t i;

		json_array_foreach(json_object_get(st, "jobs"), i, j) {
			const char *state = json_string_value(
			    json_object_get(j, "state"));

			if (json_integer_value(json_object_get(j, "id")) !=
			    id || state == NULL || strcmp(state, "queued") == 0
			    || strcmp(state, "running") == 0)
				continue;
			if (strcmp(state, "done") == 0) {
				int code = (int)json_integer_value(
				    json_object_get(j, "exit_code"));

				json_decref(st);
				return code;
			}
			fprintf(stderr, "job %s: %s\n", want, state);
			json_decref(st);
			return -1;
		}
		json_decref(st);
		check_sleep_ms(200);
	}
	fprintf(stderr, "job %s did not end in %.0f s\n", want, timeout_s);
	return -1;
}

/* Files N.json the webhook stored. */
static int
count_hooks(const struct testserver *ts)
{
	char path[4200];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "%s/hooks", ts->root);
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.' && strstr(de->d_name, ".json");
	closedir(d);
	return n;
}

static void
test_drill_alert(void)
{
	static const char *const versions[] = { "1.1", "1.2", "1.3" };
	struct testserver ts;
	char text[4096], expect[256], *slow, *log;
	json_t *hook, *alerts, *st;
	double t0 = check_now_s();
	pid_t pid;

	if (testserver_start("srv", &ts) < 0) {
		CHECK(0);
		return;
	}
	publish(&ts, versions, 2);
	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = %s/state/d.db\n\tcache = cache\n"
	    "\tmax-busy = 100%%\n"
	    "[weights \"w\"]\n\tpath = %s/w.bin\n"
	    "[engine \"eng\"]\n\tsource = github:demo/eng\n"
	    "\tapi = %s\n\tallow-http = true\n"
	    "\tasset = eng-{version}.tar.gz\n\trepo = %s/repo\n"
	    "\tbuild = cc -O0 -o {out}/engine {src}/engine.c\n"
	    "\tdrill-down = yes\n"
	    "\tcommand = {bin}/engine -p {prompt}\n"
	    "\tparser = regex:prefill_ms=([0-9.]+)\n\tregex-unit = ms\n"
	    "\tprompts = 128,512\n\tgen = 16\n\treps = 3\n\tmax-reps = 12\n"
	    "\twarmup = 0\n\ttimeout = 1m\n"
	    "[alert \"hook\"]\n\twebhook = %s\n\tallow-http = true\n",
	    dir, dir, testserver_url(&ts, "/api"), dir,
	    testserver_url(&ts, "/hook"));
	check_write_file("d.conf", text);
	pid = check_start_daemon(daemon_bin, "d.conf", "daemon.log");
	for (int i = 0; i < 200; i++) {
		st = check_ctl_ok_json(ctl_d, "status", 1);
		if (json_is_object(json_object_get(st, "daemon")))
			break;
		json_decref(st);
		st = NULL;
		check_sleep_ms(100);
	}
	CHECK(st != NULL);
	json_decref(st);

	/* The baseline: 1.2 against 1.1, the same engine. */
	CHECK(watch(120) != 3);
	CHECK_INT(count_hooks(&ts), 0);
	fprintf(stderr, "baseline watch: %.1f s\n", check_now_s() - t0);

	/* 1.3 appears: per-token work tripled by one of its commits. */
	publish(&ts, versions, 3);
	CHECK_INT(watch(300), 3);
	fprintf(stderr, "regression and drill-down: %.1f s\n",
	    check_now_s() - t0);
	for (int i = 0; i < 100 && count_hooks(&ts) == 0; i++)
		check_sleep_ms(100);
	check_sleep_ms(1500);	/* room for a second, wrong, delivery */
	CHECK_INT(count_hooks(&ts), 1);
	CHECK_INT(testserver_count(&ts, "POST /hook ", NULL), 1);

	if ((slow = check_read_file("slow.id")) != NULL)
		slow[strcspn(slow, "\n")] = '\0';
	hook = check_hook(ts.root, 1);
	CHECK(hook != NULL);
	snprintf(text, sizeof(text), "%s", json_string_value(json_object_get(
	    hook, "text")) ? json_string_value(json_object_get(hook, "text")) :
	    "");
	CHECK_CONTAINS(text, "eng 1.3");
	CHECK_CONTAINS(text, "since 1.2");
	CHECK_CONTAINS(text, "confirmed");
	/* The commit: short id and subject, once, after the release, with
	 * the broken commit before it as a candidate; a repository that is
	 * not on GitHub has no link. */
	snprintf(expect, sizeof(expect), "; first bad commit %.12s \"slow: "
	    "per-token work tripled\" (or a candidate before it),",
	    slow ? slow : "?");
	CHECK_CONTAINS(text, expect);
	CHECK(strstr(text, "eng 1.3") < strstr(text, expect));
	CHECK(strstr(text, "https://") == NULL);
	CHECK_INT(strstr(strstr(text, "first bad commit") + 1,
	    "first bad commit") == NULL, 1);
	CHECK_STR(json_string_value(json_object_get(hook, "first_bad")),
	    "1.3");
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_object_get(json_object_get(hook, "verdict"), "drill_down"),
	    "commit"), "id")), slow ? slow : "?");
	json_decref(hook);

	/* bisectctl alerts: that one alert, delivered. */
	alerts = check_ctl_ok_json(ctl_d, "alerts", 1);
	CHECK_INT(json_array_size(alerts), 1);
	CHECK_CONTAINS(json_string_value(json_object_get(json_array_get(
	    alerts, 0), "summary")), expect);
	json_decref(alerts);

	/* The next watch finds nothing new and posts nothing. */
	CHECK_INT(watch(120), 0);
	check_sleep_ms(1000);
	CHECK_INT(count_hooks(&ts), 1);

	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 30), 0);
	testserver_stop(&ts);
	log = check_read_file("daemon.log");
	CHECK_CONTAINS(log, "drill down into the commits 1.2..1.3");
	free(log);
	free(slow);
	fprintf(stderr, "drill-down through the daemon: %.1f s\n",
	    check_now_s() - t0);
}

/*
 * While a commit bisect builds, status (JSON and text) and the status
 * page say which commit, for which probe, and since when: the ends
 * first (probe 1), then the probes after them.
 */
static void
test_build_status(void)
{
	char text[4096], cmd[4200], first[41] = "", *good = NULL;
	double seen_s = -1;
	int port, probe = 0, page_ok = 0, text_ok = 0, grew = 0;
	long long id = 0;
	pid_t pid;

	CHECK_INT(check_run("git -C repo rev-parse v1.0", &good), 0);
	if (good != NULL)
		good[strcspn(good, "\n")] = '\0';
	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = %s/state2/d.db\n\tcache = cache2\n"
	    "\tmax-busy = 100%%\n\thttp = 127.0.0.1:0\n"
	    "[weights \"w\"]\n\tpath = %s/w.bin\n"
	    "[engine \"eng\"]\n\tsource = git:%s/repo\n"
	    "\tbuild = cc -O0 -o {out}/engine {src}/engine.c\n"
	    "\tbuild = sleep 2\n"
	    "\tcommand = {bin}/engine -p {prompt}\n"
	    "\tparser = regex:prefill_ms=([0-9.]+)\n\tregex-unit = ms\n"
	    "\tprompts = 128,512\n\tgen = 16\n\treps = 3\n\twarmup = 0\n"
	    "\ttimeout = 1m\n", dir, dir, dir);
	check_write_file("d.conf", text);
	CHECK_INT(check_run("mkdir -p state2", NULL), 0);
	pid = check_start_daemon(daemon_bin, "d.conf", "daemon2.log");
	port = check_http_port("daemon2.log");
	CHECK(port > 0);
	id = check_ctl_job(ctl, "-c d.conf bisect --commits eng v1.0..v2.0");

	/* Until a build for a probe after the ends is seen (2 minutes). */
	for (int i = 0; i < 1200 && probe < 2; i++) {
		json_t *st = check_ctl_ok_json(ctl_d, "status", 1);
		json_t *b = json_object_get(json_object_get(json_object_get(st,
		    "daemon"), "job"), "build");
		const char *commit = json_string_value(json_object_get(b,
		    "commit"));
		double el = json_number_value(json_object_get(b, "elapsed_s"));
		int n = (int)json_integer_value(json_object_get(b, "probe"));

		if (commit == NULL) {
			json_decref(st);
			check_sleep_ms(100);
			continue;
		}
		/* The first build is the good end's (v1.0), for probe 1. */
		if (first[0] == '\0') {
			snprintf(first, sizeof(first), "%s", commit);
			CHECK_STR(first, good ? good : "?");
			CHECK_INT(n, 1);
			CHECK_STR(json_string_value(json_object_get(b,
			    "subject")), "the engine");
			CHECK_INT(strlen(json_string_value(json_object_get(b,
			    "short"))), 12);
		}
		if (strcmp(commit, first) == 0) {
			grew += seen_s >= 0 && el > seen_s;
			seen_s = el;
		}
		CHECK(el >= 0 && el < 120);
		CHECK(n >= probe);
		probe = n;
		if (!text_ok) {
			char *t = NULL;

			snprintf(cmd, sizeof(cmd), "%s -c d.conf status", ctl);
			(void)check_run(cmd, &t);
			text_ok = t && strstr(t, "  building commit ") &&
			    strstr(t, "\" for probe ") && strstr(t, ", for ");
			free(t);
		}
		if (!page_ok) {
			char *page;

			snprintf(cmd, sizeof(cmd), "curl -sS --max-time 60 -o "
			    "status.html 'http://127.0.0.1:%d/'", port);
			(void)check_run(cmd, NULL);
			page = check_read_file("status.html");
			page_ok = page && strstr(page, "<p id=\"build\">"
			    "Building commit ") && strstr(page, " for probe ");
			free(page);
		}
		json_decref(st);
		check_sleep_ms(100);
	}
	CHECK(first[0] != '\0');
	CHECK(probe >= 2);
	CHECK(grew >= 1);
	CHECK(text_ok);
	CHECK(page_ok);
	snprintf(cmd, sizeof(cmd), "%s -c d.conf cancel %lld", ctl, id);
	CHECK_INT(check_run(cmd, NULL), 0);
	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 60), 0);
	free(good);
}

int
main(void)
{
	check_env(&ctl, &daemon_bin, NULL);
	snprintf(ctl_d, sizeof(ctl_d), "%s -c d.conf --format json", ctl);
	snprintf(dir, sizeof(dir), "%s", check_tmpdir("test_drill_e2e"));
	check_write_file("w.bin", "weights\n");
	CHECK_INT(gitengine_make_repo(), 0);
	CHECK_INT(gitengine_make_releases(), 0);
	CHECK_INT(check_run("mkdir -p state", NULL), 0);
	CHECK_CASE(test_drill_alert);
	CHECK_CASE(test_build_status);
	return check_done();
}
