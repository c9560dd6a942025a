/*
 * test_daemon_canary.c: the output canary through a running bisectd.  A
 * github: source on loopback publishes fake-engine releases whose
 * generated text changes at 0.1.4, which is also faster; the daemon's
 * watch measures each new release's canary and posts exactly one
 * "output" alert to a webhook, in one line that says both, and the next
 * watch cycle posts nothing again.  Then 0.1.9, as fast as 0.1.5 but
 * with other text: one more alert, which says nothing of speed.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
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

/* The versions the source lists, oldest first, as published so far. */
static const char *const versions[] = { "0.1.1", "0.1.2", "0.1.4",
    "0.1.5", "0.1.9" };

/* The first n of versions, as GitHub lists releases. */
static void
publish(const struct testserver *ts, size_t n)
{
	char archives[4200];

	snprintf(archives, sizeof(archives), "%s/tests/releases", build);
	CHECK_INT(testserver_publish(ts, "demo/gen", "gen", archives, versions,
	    n), 0);
}

static void
write_config(const struct testserver *ts)
{
	char text[8192];

	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = %s/state/d.db\n\tcache = cache\n"
	    "\tmax-busy = 100%%\n"
	    "[weights \"demo\"]\n\tpath = %s/demo/weights.bin\n"
	    "[engine \"gen\"]\n\tsource = github:demo/gen\n\tapi = %s\n"
	    "\tallow-http = true\n\tasset = gen-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 128,512\n\tgen = 16\n"
	    "\treps = 3\n\tmax-reps = 12\n\twarmup = 0\n\ttimeout = 1m\n"
	    "\tcanary = {bin}/bin/fake-engine --generate -m {weights} "
	    "-o json\n\tcanary-prompt = prompt.txt\n"
	    "\tcanary-parser = json:content\n",
	    dir, build, testserver_url(ts, "/api"));
	/* The webhook after the engine: its own section. */
	snprintf(text + strlen(text), sizeof(text) - strlen(text),
	    "[alert \"hook\"]\n\twebhook = %s\n\tallow-http = true\n",
	    testserver_url(ts, "/hook"));
	check_write_file("d.conf", text);
}

/* Whether the daemon answers bisectctl status (within 20 s). */
static int
daemon_up(void)
{
	for (int i = 0; i < 200; i++) {
		json_t *st = check_ctl_ok_json(ctl_d, "status", 0);
		int up = json_is_object(json_object_get(st, "daemon"));

		json_decref(st);
		if (up)
			return 1;
		check_sleep_ms(100);
	}
	return 0;
}

/* Queue a watch of gen and wait for it to end (timeout_s); its exit
 * code, or -1 when it did not end "done". */
static int
watch_cycle(double timeout_s)
{
	char state[32] = "";
	int64_t id = check_ctl_job(ctl, "-c d.conf watch gen");
	int code = -1;

	if (strcmp(check_job_wait(dir, id, timeout_s, state, sizeof(state),
	    &code), "done") == 0)
		return code;
	fprintf(stderr, "watch job %lld: %s after %.0f s\n", (long long)id,
	    state, timeout_s);
	return -1;
}

/* POSTs the hook received, after a moment for a late, wrong one. */
static int
hooks_posted(const struct testserver *ts, int at_least)
{
	for (int i = 0; i < 100 && testserver_count(ts, "POST /hook ",
	    NULL) < at_least; i++)
		check_sleep_ms(100);
	check_sleep_ms(1000);
	return testserver_count(ts, "POST /hook ", NULL);
}

static void
test_output_alert(void)
{
	struct testserver ts;
	char *log;
	json_t *hook, *alerts, *a;
	const char *text;
	double t0 = check_now_s();
	pid_t pid;
	int code, n;

	if (testserver_start("srv", &ts) < 0) {
		CHECK(0);
		return;
	}
	check_write_file("prompt.txt", "Once upon a time, a lighthouse.\n");
	write_config(&ts);
	publish(&ts, 2);
	pid = check_start_daemon(daemon_bin, "d.conf", "daemon.log");
	CHECK(daemon_up());

	/* The baseline: 0.1.2 against 0.1.1, the same text. */
	code = watch_cycle(150);
	CHECK(code == 0 || code == 4);
	CHECK_INT(hooks_posted(&ts, 0), 0);
	fprintf(stderr, "baseline watch at %.1f s\n", check_now_s() - t0);

	/* 0.1.4 is published: faster, and its text differs. */
	publish(&ts, 3);
	code = watch_cycle(150);
	CHECK(code == 0 || code == 4);	/* faster is no regression */
	CHECK_INT(hooks_posted(&ts, 1), 1);
	fprintf(stderr, "output watch at %.1f s\n", check_now_s() - t0);
	hook = check_hook(ts.root, 1);
	CHECK(hook != NULL);
	text = json_string_value(json_object_get(hook, "text"));
	CHECK_STR(json_string_value(json_object_get(hook, "kind")), "output");
	CHECK_CONTAINS(text, "gen 0.1.4 is ");
	CHECK_CONTAINS(text, "% faster than 0.1.2 (per-token) and generates "
	    "different text on the canary prompt");
	CHECK(text != NULL && strchr(text, '\n') == NULL);
	CHECK_STR(json_string_value(json_object_get(hook, "since")), "0.1.2");
	CHECK_STR(json_string_value(json_object_get(hook, "version")), "0.1.4");
	CHECK_INT(json_integer_value(json_object_get(json_object_get(hook,
	    "diff"), "token")), 8);
	CHECK(json_real_value(json_object_get(hook, "faster_by")) > 0);
	json_decref(hook);

	/* The next cycle measures 0.1.5, whose text is 0.1.4's: nothing
	 * posted again, one output alert in the store, delivered once. */
	publish(&ts, 4);
	code = watch_cycle(150);
	CHECK(code == 0 || code == 4);
	CHECK_INT(hooks_posted(&ts, 1), 1);
	alerts = check_ctl_ok_json(ctl_d, "alerts", 0);
	n = 0;
	for (size_t i = 0; i < json_array_size(alerts); i++) {
		a = json_array_get(alerts, i);
		if (strcmp(json_string_value(json_object_get(a, "kind")),
		    "output") != 0)
			continue;
		n++;
		CHECK_CONTAINS(json_string_value(json_object_get(a,
		    "summary")), "gen 0.1.4 is ");
		CHECK_STR(json_string_value(json_object_get(json_array_get(
		    json_object_get(a, "sinks"), 0), "state")), "delivered");
	}
	CHECK_INT(n, 1);
	json_decref(alerts);

	/* 0.1.9: timed as 0.1.5, another text. */
	publish(&ts, 5);
	code = watch_cycle(150);
	CHECK(code == 0 || code == 4);
	CHECK_INT(hooks_posted(&ts, 2), 2);
	hook = check_hook(ts.root, 2);
	CHECK_STR(json_string_value(json_object_get(hook, "text")),
	    "gen 0.1.9 generates different text from 0.1.5 on the canary "
	    "prompt");
	CHECK_STR(json_string_value(json_object_get(hook, "since")), "0.1.5");
	CHECK(json_is_null(json_object_get(hook, "faster_by")));
	json_decref(hook);

	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 30), 0);
	testserver_stop(&ts);
	log = check_read_file("daemon.log");
	CHECK_CONTAINS(log, "0.1.4 generates different text from 0.1.2 on the "
	    "canary prompt, and is faster (alert recorded)");
	CHECK_CONTAINS(log, "0.1.9 generates different text from 0.1.5 on the "
	    "canary prompt (alert recorded)");
	free(log);
	fprintf(stderr, "daemon canary: %.1f s\n", check_now_s() - t0);
}

int
main(void)
{
	check_env(&ctl, &daemon_bin, &build);
	snprintf(ctl_d, sizeof(ctl_d), "%s -c d.conf --format json", ctl);
	snprintf(dir, sizeof(dir), "%s", check_tmpdir("test_daemon_canary"));
	CHECK_CASE(test_output_alert);
	return check_done();
}
