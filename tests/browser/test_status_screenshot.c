/*
 * test_status_screenshot.c: the daemon's status page as a browser draws
 * it.  A daemon on loopback with the demo's releases (tests/demo-cpu)
 * benched, bisected to its verdict, a second bisect queued and
 * cancelled, and an alert whose summary carries markup and an escape
 * sequence.  Headless Chromium loads the page from the daemon: the DOM
 * it built (--dump-dom) is read by XPath with xmllint's HTML parser, and
 * one screenshot is kept as BUILD/status-demo.png, the picture in the
 * README.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "check_daemon.h"
#include "common/err.h"
#include "store/store.h"

static const char *ctl, *daemon_bin, *build;
static char dir[80];	/* a socket path must fit in sun_path */
static int port;

static const char alert_summary[] = "basert 0.2.4 is 3.5x slower per "
    "token <script>alert(1)</script> \033[31m";

/* The demo's releases timed by the CPU clock, as test_daemon_http has
 * them, watched nightly. */
static void
write_config(void)
{
	check_daemon_config("d.conf", dir, build, "\thttp = 127.0.0.1:0\n",
	    "\tschedule = 30 2 * * *\n");
}

/* GET path from the daemon into file; the HTTP status, or -1. */
static int
get(const char *path, const char *file)
{
	return check_http_get(port, path, file);
}

/* bisectctl -c d.conf ARGS; its exit code, its output into *out. */
static int
ctl_run(const char *args, char **out)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "%s -c d.conf %s", ctl, args);
	return check_run(cmd, out);
}

/* An alert of the verdict, as a watch records one. */
static void
record_alert(void)
{
	char path[4200];
	struct store *s = NULL;
	struct err e = ERR_INIT;

	snprintf(path, sizeof(path), "%s/state/d.db", dir);
	CHECK_INT(store_open(path, &s, &e), 0);
	if (s == NULL)
		return;
	CHECK_INT(store_alert_record(s, "regression", "basert",
	    "regression:basert:0.2.3..0.2.4", alert_summary,
	    "{\"range\":{\"from\":\"0.2.3\",\"to\":\"0.2.4\"}}", &e), 0);
	store_close(s);
}

/* xmllint's HTML parser's answer to expr on file (its first line,
 * malloced), or NULL.  It warns of the tags HTML 4 lacks (svg,
 * section, figure): those go to /dev/null. */
static char *
xpath(const char *file, const char *expr)
{
	char cmd[4096], *out = NULL;

	snprintf(cmd, sizeof(cmd), "(xmllint --html --xpath \"%s\" %s "
	    "2>/dev/null)", expr, file);
	if (check_run(cmd, &out) != 0) {
		fprintf(stderr, "xpath %s: %s\n", expr, out ? out : "");
		free(out);
		return NULL;
	}
	out[strcspn(out, "\n")] = '\0';
	return out;
}

static void
check_xpath_str(const char *file, const char *expr, const char *want)
{
	char *got = xpath(file, expr);

	CHECK_STR(got, want);
	if (got == NULL || strcmp(got, want) != 0)
		fprintf(stderr, "  (XPath %s)\n", expr);
	free(got);
}

/* The words bisectctl status gives job id's outcome, malloced. */
static char *
ctl_outcome(long long id)
{
	char *out = NULL, *words = NULL;
	json_t *o, *j;
	size_t i;

	if (ctl_run("status --format json 2>/dev/null", &out) != 0) {
		free(out);
		return NULL;
	}
	o = json_loads(out, 0, NULL);
	json_array_foreach(json_object_get(o, "jobs"), i, j)
		if (json_integer_value(json_object_get(j, "id")) == id &&
		    json_is_string(json_object_get(j, "outcome")))
			words = strdup(json_string_value(json_object_get(j,
			    "outcome")));
	json_decref(o);
	free(out);
	return words;
}

/* The page as built: the engine's box, the queue, the jobs that ended. */
#define BOX "//section[@id='engine-basert']"
static void
check_dom(const char *dom)
{
	char *words, *text;

	check_xpath_str(dom, "count(//section[@class='engine'])", "1");
	check_xpath_str(dom, "string(//section[@id='engine-basert']/h2)",
	    "basert");
	/* The verdict in bisectctl status's words, in its colour. */
	words = ctl_outcome(1);
	CHECK(words != NULL);
	check_xpath_str(dom, "string(" BOX "//dt[.='Latest verdict']"
	    "/following-sibling::dd[1]/span[contains(@class,'regression')])",
	    words ? words : "?");
	CHECK_STR(words, "regression at 0.2.4, per-token, confirmed");
	free(words);
	check_xpath_str(dom, "string(" BOX "//dt[.='Latest verdict']"
	    "/following-sibling::dd[1]/a/@href)",
	    "/report/basert/0.2.0..0.2.6");
	/* The next watch by its schedule, the last alert as text. */
	text = xpath(dom, "string(" BOX "//dt[.='Next watch']"
	    "/following-sibling::dd[1])");
	CHECK_CONTAINS(text, " (in ");
	CHECK_CONTAINS(text, "schedule 30 2 * * *");
	free(text);
	text = xpath(dom, "string(" BOX "//dt[.='Last alert']"
	    "/following-sibling::dd[1])");
	CHECK_CONTAINS(text, "3.5x slower per token "
	    "<script>alert(1)</script> \\x1b[31m");
	free(text);
	check_xpath_str(dom, "count(//script)", "0");
	check_xpath_str(dom, "string(" BOX "//dt[.='Last alert']"
	    "/following-sibling::dd[1]/a/@href)",
	    "/report/basert/0.2.3..0.2.4");
	check_xpath_str(dom, "count(" BOX "//ul[@class='reports']/li/a"
	    "[@href='/report/basert/0.2.0..0.2.6'])", "1");
	/* A dot per release for each figure: all seven are benched. */
	check_xpath_str(dom, "count(" BOX "//figure[@class='trend']"
	    "//*[local-name()='circle'][@class='dot-pp'])", "7");
	check_xpath_str(dom, "count(" BOX "//figure[@class='trend']"
	    "//*[local-name()='circle'][@class='dot-tg'])", "7");
	text = xpath(dom, "string(" BOX "//figure[@class='trend']"
	    "//*[local-name()='circle'][@class='dot-pp'][5]/*)");
	CHECK_CONTAINS(text, "0.2.4: prefill per-token cost ");
	free(text);

	/* Nothing waits: the queue says so; what ended is listed with its
	 * outcome in words, and no exit code. */
	check_xpath_str(dom, "string(//p[@id='queue'])", "The queue is empty.");
	check_xpath_str(dom, "count(//table[@id='recent']//tr[td])", "2");
	check_xpath_str(dom, "count(//th[.='exit'])", "0");
	check_xpath_str(dom, "string(//tr[@id='job-1']/td[2])", "bisect of "
	    "basert over 0.2.0..0.2.6, metric per-token, threshold 20%");
	check_xpath_str(dom, "string(//tr[@id='job-1']/td[3])",
	    "regression at 0.2.4, per-token, confirmed");
	check_xpath_str(dom, "string(//tr[@id='job-2']/td[2])", "bisect of "
	    "basert over 0.2.0..0.2.3, metric pp512, threshold 20%");
	check_xpath_str(dom, "string(//tr[@id='job-2']/td[3])", "cancelled");
}

/* The screenshot: not blank, the plot's two figures drawn, the verdict
 * in its colour. */
static void
check_screenshot(const char *png)
{
	struct check_image im;
	long ink, total, blue, amber, pink;

	if (check_screenshot_read(png, &im, &ink, &total) < 0)
		return;
	/* The prefill line and dots, the decode line and dots, the
	 * regression's background: each a few hundred pixels at least. */
	blue = check_count_colour(&im, 0x1f, 0x5f, 0xa8, 40);
	amber = check_count_colour(&im, 0xb2, 0x6b, 0x00, 40);
	pink = check_count_colour(&im, 0xfb, 0xd5, 0xd5, 6);
	CHECK(blue > 300);
	CHECK(amber > 300);
	CHECK(pink > 300);
	fprintf(stderr, "screenshot %s: %dx%d, %ld of %ld pixels inked, %ld "
	    "blue, %ld amber, %ld pink\n", png, im.w, im.h, ink, total, blue,
	    amber, pink);
	free(im.rgb);
}

static void
test_status_page(void)
{
	static const char *const versions[] = { "0.2.0", "0.2.1", "0.2.2",
	    "0.2.3", "0.2.4", "0.2.5", "0.2.6" };
	char cmd[8192], args[512], buf[64], png[4096], *page, *out = NULL;
	int running = 0;
	pid_t pid;

	if (!check_tool("chromium", "chromium") ||
	    !check_tool("xmllint", "libxml2-utils") ||
	    !check_tool("pngtopnm", "netpbm"))
		return;
	write_config();
	/* Every release benched, decode included, for the plot. */
	for (size_t i = 0; i < 7; i++) {
		snprintf(args, sizeof(args), "bench basert %s --reps 3 "
		    ">/dev/null 2>&1", versions[i]);
		CHECK_INT(ctl_run(args, NULL), 0);
	}
	pid = check_start_daemon(daemon_bin, "d.conf", "daemon.log");
	port = check_http_port("daemon.log");
	CHECK(port > 0);
	if (port == 0)
		return;
	CHECK_INT(ctl_run("bisect basert 0.2.0..0.2.6 >/dev/null 2>&1", NULL),
	    0);
	for (int i = 0; i < 600 && !running; i++) {
		CHECK_INT(get("/", "running.html"), 200);
		page = check_read_file("running.html");
		running = page && strstr(page, "<p class=\"running\" "
		    "id=\"running-1\">") != NULL;
		free(page);
		if (!running)
			check_sleep_ms(100);
	}
	CHECK(running);
	/* A second bisect waits behind the first: the queue lists both in
	 * words, the running one first. */
	CHECK_INT(ctl_run("bisect basert 0.2.0..0.2.3 --metric pp512 "
	    ">/dev/null 2>&1", NULL), 0);
	CHECK_INT(get("/", "queued.html"), 200);
	check_xpath_str("queued.html", "count(//table[@id='queue']//tr[td])",
	    "2");
	check_xpath_str("queued.html", "string(//table[@id='queue']"
	    "//tr[td][2]/td[2])", "bisect of basert over 0.2.0..0.2.3, "
	    "metric pp512, threshold 20%");
	check_xpath_str("queued.html", "string(//tr[@id='job-2']/td[3])",
	    "queued");
	CHECK_INT(ctl_run("cancel 2 >/dev/null 2>&1", NULL), 0);
	CHECK_STR(check_job_wait(dir, 1, 300, buf,
	    sizeof(buf), NULL), "done");
	CHECK_STR(check_job_wait(dir, 2, 60, buf,
	    sizeof(buf), NULL), "cancelled");
	record_alert();

	/* The page as served is well-formed: XHTML syntax throughout. */
	CHECK_INT(get("/", "status.html"), 200);
	CHECK_INT(check_run("xmllint --noout status.html", &out), 0);
	if (out && out[0])
		fprintf(stderr, "xmllint: %s\n", out);
	free(out);

	/* Chromium wants a writable HOME for its profile; the timeout is
	 * generous, a loaded machine starts it slowly.  Headless Chromium
	 * dumps the DOM and takes its screenshot through scripts of its
	 * own, so scripts stay on: the page has none (checked below) and
	 * its Content-Security-Policy allows none. */
	snprintf(cmd, sizeof(cmd), "(HOME=$PWD timeout 300 chromium "
	    "--headless --no-sandbox --disable-gpu "
	    "--user-data-dir=$PWD/profile --dump-dom http://127.0.0.1:%d/ "
	    ">dom.html 2>chromium.log)", port);
	CHECK_INT(check_run(cmd, NULL), 0);
	check_dom("dom.html");
	snprintf(png, sizeof(png), "%s/status-demo.png", build);
	remove(png);
	snprintf(cmd, sizeof(cmd), "HOME=$PWD timeout 300 chromium --headless "
	    "--no-sandbox --disable-gpu --hide-scrollbars "
	    "--user-data-dir=$PWD/profile --window-size=900,1080 "
	    "--screenshot=%s http://127.0.0.1:%d/ >>chromium.log 2>&1", png,
	    port);
	CHECK_INT(check_run(cmd, NULL), 0);
	check_screenshot(png);

	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 60), 0);
}

int
main(void)
{
	check_env(&ctl, &daemon_bin, &build);
	signal(SIGPIPE, SIG_IGN);
	snprintf(dir, sizeof(dir), "%s", check_tmpdir("test_status_shot"));
	CHECK_CASE(test_status_page);
	return check_done();
}
