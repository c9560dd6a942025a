/*
 * test_matrix_daemon.c: the daemon watches a matrix cell by cell.  A
 * GitHub-like source (testserver) publishes fleet 1.0.0 and 1.0.1, then
 * 1.0.2, whose prefill costs 40 us more a token per MiB of weights on
 * machine class m1 alone (its runner's env says so): of the four cells
 * only m1's with the 1 MiB file regresses.  It is alerted once, on its
 * own, naming what the other cells say so far; once the last cell is in,
 * one alert for the matrix says where it regressed and where not.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <jansson.h>

#include "check.h"
#include "check_daemon.h"
#include "check_json.h"
#include "testserver.h"

static const char *ctl, *daemon_bin, *build;
static char dir[80];	/* a socket path must fit in sun_path */

static const char *const versions[] = { "1.0.0", "1.0.1", "1.0.2" };

static void
publish(const struct testserver *ts, size_t n)
{
	char archives[4200];

	snprintf(archives, sizeof(archives), "%s/tests/releases", build);
	CHECK_INT(testserver_publish(ts, "demo/fleet", "fleet", archives,
	    versions, n), 0);
}

static void
write_config(const struct testserver *ts)
{
	char src[1024], hook[1024];

	snprintf(src, sizeof(src), "\tsource = github:demo/fleet\n"
	    "\tapi = %s\n\tallow-http = true\n", testserver_url(ts, "/api"));
	/* [bisectd] again, for its HTTP server. */
	snprintf(hook, sizeof(hook), "[alert \"hook\"]\n\twebhook = %s\n"
	    "\tallow-http = true\n[bisectd]\n\thttp = 127.0.0.1:0\n",
	    testserver_url(ts, "/hook"));
	check_matrix_config("d.conf", dir,
	    "[runner \"m1\"]\n\tkind = local\n\tenv = FAKE_ENGINE_CLASS=m1\n"
	    "[runner \"m2\"]\n\tkind = local\n\tenv = FAKE_ENGINE_CLASS=m2\n",
	    "m1, m2", src, hook);
}

/* Queue a watch of the matrix: one job per cell, their ids into ids. */
static void
queue_watch(int64_t ids[4])
{
	char cmd[4096], *out = NULL;
	const char *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "%s -c d.conf watch fleet 2>/dev/null",
	    ctl);
	CHECK_INT(check_run(cmd, &out), 0);
	for (p = out; p && (p = strstr(p, "as job ")) != NULL && n < 4; p++)
		ids[n++] = strtoll(p + 7, NULL, 10);
	CHECK_INT(n, 4);
	CHECK_CONTAINS(out, "queued a watch of fleet/m1/small as job ");
	CHECK_CONTAINS(out, "queued a watch of fleet/m2/big as job ");
	free(out);
}

/* Wait for each job; their exit codes into codes. */
static void
wait_all(const int64_t ids[4], int codes[4])
{
	char state[32];

	for (int i = 0; i < 4; i++) {
		CHECK_STR(check_job_wait(dir, ids[i], 150, state, sizeof(state),
		    &codes[i]), "done");
	}
}

/* The hook whose text begins with the cell's name, among n. */
static json_t *
hook_of(const char *root, int n, const char *cell)
{
	for (int i = 1; i <= n; i++) {
		json_t *h = check_hook(root, i);
		const char *t = json_string_value(json_object_get(h, "text"));

		if (t && strncmp(t, cell, strlen(cell)) == 0 &&
		    t[strlen(cell)] == ' ')
			return h;
		json_decref(h);
	}
	return NULL;
}

/* The daemon's pages: the matrix's grid and JSON, and a cell's own
 * report under its name with its slashes encoded. */
static void
check_pages(void)
{
	int port = check_http_port("daemon.log");
	json_t *mx;
	char *x;

	CHECK(port > 0);
	CHECK_INT(check_http_get(port, "/report/fleet/1.0.1..1.0.2",
	    "grid.html"), 200);
	x = check_xpath("grid.html", "string(//*[local-name()=\"table\" and "
	    "@class=\"grid\"]/*[local-name()=\"tr\"][2]/*[local-name()="
	    "\"td\"][2]/@class)");
	CHECK_STR(x, "regression");
	free(x);
	CHECK_INT(check_http_get(port, "/api/report/fleet/1.0.1..1.0.2",
	    "grid.json"), 200);
	mx = json_load_file("grid.json", 0, NULL);
	CHECK_INT(json_array_size(json_object_get(mx, "regressed")), 1);
	CHECK_STR(json_string_value(json_array_get(json_object_get(mx,
	    "regressed"), 0)), "fleet/m1/big");
	json_decref(mx);
	CHECK_INT(check_http_get(port, "/api/report/fleet%2Fm1%2Fbig/"
	    "1.0.1..1.0.2", "cell.json"), 200);
	mx = json_load_file("cell.json", 0, NULL);
	CHECK_STR(json_string_value(json_object_get(mx, "engine")),
	    "fleet/m1/big");
	CHECK_STR(json_string_value(json_object_get(json_object_get(mx,
	    "verdict"), "first_bad")), "1.0.2");
	json_decref(mx);
	CHECK_INT(check_http_get(port, "/api/runs/fleet/1.0.2", "runs.json"),
	    404);
}

static void
test_watch(void)
{
	struct testserver ts;
	int64_t ids[4] = { 0 };
	int codes[4] = { -1, -1, -1, -1 };
	json_t *h;
	const char *text;
	pid_t pid;

	if (testserver_start("srv", &ts) < 0) {
		CHECK(0);
		return;
	}
	write_config(&ts);
	publish(&ts, 2);
	queue_watch(ids);
	pid = check_start_daemon(daemon_bin, "d.conf", "daemon.log");
	/* The baseline of every cell: 1.0.1 against 1.0.0. */
	wait_all(ids, codes);
	for (int i = 0; i < 4; i++)
		CHECK(codes[i] == 0 || codes[i] == 4);
	CHECK_INT(testserver_count(&ts, "POST /hook ", NULL), 0);

	/* 1.0.2: the large file's cell on m1 (the 2nd) alone regresses. */
	publish(&ts, 3);
	queue_watch(ids);
	wait_all(ids, codes);
	CHECK(codes[0] == 0 || codes[0] == 4);
	CHECK_INT(codes[1], 3);
	CHECK(codes[2] == 0 || codes[2] == 4);
	CHECK(codes[3] == 0 || codes[3] == 4);
	for (int i = 0; i < 100 && testserver_count(&ts, "POST /hook ",
	    NULL) < 2; i++)
		check_sleep_ms(100);
	check_sleep_ms(1000);	/* room for a third, wrong, one */
	CHECK_INT(testserver_count(&ts, "POST /hook ", NULL), 2);

	/* The cell's own, when found: m2's cells are not judged yet (one
	 * measurement at a time here, in the order queued). */
	h = hook_of(ts.root, 2, "fleet/m1/big");
	CHECK(h != NULL);
	text = json_string_value(json_object_get(h, "text"));
	fprintf(stderr, "cell alert: %s\n", text ? text : "(none)");
	CHECK_STR(json_string_value(json_object_get(h, "kind")), "regression");
	CHECK_CONTAINS(text, "fleet/m1/big 1.0.2: ");
	CHECK_CONTAINS(text, " since 1.0.1 ");
	CHECK_CONTAINS(text, "; the other cells: fleet/m1/small: no "
	    "regression (within noise, would have seen ");
	CHECK_CONTAINS(text, "; fleet/m2/small: not judged over "
	    "1.0.1..1.0.2 yet; fleet/m2/big: not judged over 1.0.1..1.0.2 "
	    "yet");
	CHECK(strchr(text ? text : "", '\n') == NULL);
	json_decref(h);

	/* The matrix's, once its last cell is in. */
	h = hook_of(ts.root, 2, "fleet");
	CHECK(h != NULL);
	text = json_string_value(json_object_get(h, "text"));
	fprintf(stderr, "matrix alert: %s\n", text ? text : "(none)");
	CHECK_STR(json_string_value(json_object_get(h, "kind")), "matrix");
	CHECK_CONTAINS(text, "fleet 1.0.1..1.0.2: fleet/m1/big regressed at "
	    "1.0.2 (");
	CHECK_CONTAINS(text, "; unchanged: fleet/m1/small (within noise, "
	    "would have seen ");
	CHECK_CONTAINS(text, ", fleet/m2/small (within noise, would have "
	    "seen ");
	CHECK_CONTAINS(text, ", fleet/m2/big (within noise, would have seen ");
	CHECK_INT(json_array_size(json_object_get(h, "regressed")), 1);
	CHECK_INT(json_array_size(json_object_get(h, "unchanged")), 3);
	json_decref(h);
	CHECK(hook_of(ts.root, 2, "fleet/m1/small") == NULL);
	CHECK(hook_of(ts.root, 2, "fleet/m2/big") == NULL);
	check_pages();

	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 30), 0);
	testserver_stop(&ts);
}

int
main(void)
{
	check_env(&ctl, &daemon_bin, &build);
	snprintf(dir, sizeof(dir), "%s", check_tmpdir("test_matrix_daemon"));
	CHECK_CASE(test_watch);
	return check_done();
}
