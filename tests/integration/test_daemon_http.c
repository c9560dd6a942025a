/*
 * test_daemon_http.c: the daemon's HTTP server as a real process on
 * loopback, while the daemon bisects the demo's fake-engine releases:
 * the status page (the job in words, then the verdict in bisectctl
 * status's), the report, /api/ (byte for byte what bisectctl --format
 * json prints, a job's args an object), /metrics (accepted by promtool,
 * built again only when the store changed); and requests
 * that are malformed, oversized, of other methods, slow, or many and
 * idle are refused or cut off while the bisect goes on to its verdict.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "check_daemon.h"
#include "common/err.h"
#include "store/store.h"

static const char *ctl, *daemon_bin, *build;
static char dir[80];	/* a socket path must fit in sun_path */
static int port;

/* The demo's releases timed by the CPU clock (tests/demo-cpu): two busy
 * loops beside the suite do not turn its bisect's verdict into an
 * "unknown". */
static void
write_config(void)
{
	check_daemon_config("d.conf", dir, build, "\thttp = 127.0.0.1:0\n"
	    "\tpublic-url = https://bisectd.example.com/\n", "");
}

/* GET path from the daemon into file; the HTTP status, or -1. */
static int
get(const char *path, const char *file)
{
	return check_http_get(port, path, file);
}

/* bisectctl -c d.conf --format json ARGS into file; its exit code. */
static int
ctl_to(const char *args, const char *file)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "%s -c d.conf --format json %s > %s "
	    "2>>ctl.err", ctl, args, file);
	return check_run(cmd, NULL);
}

/* The API's answer and bisectctl's output are the same bytes. */
static void
same_as_ctl(const char *path, const char *args)
{
	char *a, *b;

	CHECK_INT(get(path, "api.out"), 200);
	ctl_to(args, "ctl.out");
	a = check_read_file("api.out");
	b = check_read_file("ctl.out");
	CHECK(b != NULL && (b[0] == '[' || b[0] == '{'));
	CHECK_STR(a, b);
	free(a);
	free(b);
}

static int
connect_port(void)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Wait up to timeout_ms for fd to be closed by the server: 1 when it
 * was (end of stream or reset), with whatever came before in buf. */
static int
closed_by_server(int fd, int timeout_ms, char *buf, size_t len)
{
	double t0 = check_now_s();
	size_t got = 0;

	buf[0] = '\0';
	while ((check_now_s() - t0) * 1000 < timeout_ms) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&p, 1, 200) <= 0)
			continue;
		n = read(fd, buf + got, len - 1 - got);
		if (n <= 0)
			return 1;
		got += (size_t)n;
		buf[got] = '\0';
		if (got + 1 >= len)
			got = 0;
	}
	return 0;
}

/* Send a request; the server's whole answer (until it closes),
 * malloced. */
static char *
raw(const char *bytes)
{
	size_t len = strlen(bytes);
	char *reply = calloc(1, 65536);
	int fd = connect_port();

	if (fd < 0 || reply == NULL) {
		free(reply);
		return NULL;
	}
	/* The server may close before reading it all. */
	(void)!write(fd, bytes, len);
	closed_by_server(fd, 60000, reply, 65536);
	close(fd);
	return reply;
}

static void
bad_requests(void)
{
	/* A request, the status line of its answer, what else the answer
	 * has and lacks (NULL: not looked at). */
	static const struct {
		const char *bytes, *status, *has, *lacks;
	} refused[] = {
		{ "GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
		    "HTTP/1.1 400", NULL, NULL },
		{ "GET / HTTP/9.9\r\nHost: x\r\n\r\n", "HTTP/1.1 505", NULL,
		    NULL },
		{ "POST /api/status HTTP/1.1\r\nHost: x\r\nContent-Length: 2"
		    "\r\n\r\n{}", "HTTP/1.1 405", "Allow: GET, HEAD", NULL },
		{ "DELETE / HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 405", NULL,
		    NULL },
		{ "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n"
		    "\r\n", "HTTP/1.1 413", NULL, NULL },
		{ "HEAD /api/status HTTP/1.1\r\nHost: x\r\nConnection: close"
		    "\r\n\r\n", "HTTP/1.1 200", NULL, "\"daemon\"" },
	};
	static char big[40000];
	char *r;

	r = raw("GARBAGE\r\n\r\n");
	CHECK(r != NULL && strstr(r, " 200 ") == NULL);
	free(r);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		r = raw(refused[i].bytes);
		CHECK_CONTAINS(r, refused[i].status);
		if (refused[i].has != NULL)
			CHECK_CONTAINS(r, refused[i].has);
		if (refused[i].lacks != NULL)
			CHECK(r != NULL && strstr(r, refused[i].lacks) == NULL);
		free(r);
	}
	/* A request line and headers past 16 KiB. */
	snprintf(big, sizeof(big), "GET /");
	memset(big + 5, 'a', 30000);
	snprintf(big + 30005, sizeof(big) - 30005, " HTTP/1.1\r\nHost: x\r\n"
	    "\r\n");
	r = raw(big);
	CHECK(r != NULL && (strstr(r, "HTTP/1.1 413") ||
	    strstr(r, "HTTP/1.1 414")));
	free(r);
	snprintf(big, sizeof(big), "GET / HTTP/1.1\r\nHost: x\r\nX-Big: ");
	memset(big + strlen(big), 'b', 30000);
	snprintf(big + strlen(big), 16, "\r\n\r\n");
	r = raw(big);
	CHECK(r != NULL && (strstr(r, "HTTP/1.1 413") ||
	    strstr(r, "HTTP/1.1 431")));
	free(r);
	CHECK_INT(get("/nope", "x.out"), 404);
	CHECK_INT(get("/api/versions/nope", "x.out"), 404);
	CHECK_INT(get("/api/runs/basert/9.9.9", "x.out"), 404);
	CHECK_INT(get("/api/report/basert/0.2.6..0.2.0", "x.out"), 404);
	CHECK_INT(get("/report/basert/0.2.0..0.2.6?metric=fast", "x.out"), 400);
	CHECK_INT(get("/api/versions/basert/x", "x.out"), 404);
}

/*
 * Many idle connections and one that sends half a request and stalls,
 * one that trickles a header forever: each is closed by the server, and
 * a request made meanwhile is answered.
 */
static void
slow_clients(void)
{
	int idle[24], half, trickle;
	char buf[4096];
	int closed = 0;

	for (size_t i = 0; i < 24; i++)
		idle[i] = connect_port();
	half = connect_port();
	CHECK(half >= 0 && write(half, "GET /api/status HTTP/1.1\r\nHo", 28) ==
	    28);
	/* Meanwhile a request is answered once idle ones are cut off: the
	 * server holds at most 16 at once and closes any more at once. */
	{
		int answered = 0;

		for (int i = 0; i < 120 && !answered; i++) {
			answered = get("/api/status", "x.out") == 200;
			if (!answered)
				check_sleep_ms(500);
		}
		CHECK(answered);
	}
	for (size_t i = 0; i < 24; i++)
		if (idle[i] >= 0) {
			closed += closed_by_server(idle[i], 60000, buf,
			    sizeof(buf));
			close(idle[i]);
		}
	CHECK_INT(closed, 24);
	CHECK(half >= 0 && closed_by_server(half, 60000, buf, sizeof(buf)));
	close(half);

	/* A byte every 300 ms keeps it from being idle, not from its
	 * connection deadline. */
	trickle = connect_port();
	CHECK(trickle >= 0 && write(trickle, "GET / HTTP/1.1\r\nX-Slow: ",
	    24) == 24);
	{
		double t0 = check_now_s();
		int cut = 0;

		while (!cut && check_now_s() - t0 < 120) {
			struct pollfd p = { trickle, POLLIN, 0 };

			if (send(trickle, "s", 1, MSG_NOSIGNAL) < 0 ||
			    (poll(&p, 1, 300) > 0 && read(trickle, buf,
			    sizeof(buf)) <= 0))
				cut = 1;
		}
		CHECK(cut);
		fprintf(stderr, "a trickling client was cut off after %.1f s\n",
		    check_now_s() - t0);
	}
	close(trickle);
}

/* The value of a sample "NAME VALUE" of page m (no labels), or -1. */
static double
metric_value(const char *m, const char *name)
{
	char key[128];
	const char *p;

	snprintf(key, sizeof(key), "\n%s ", name);
	p = m ? strstr(m, key) : NULL;
	return p ? atof(p + strlen(key)) : -1;
}

/* The line of page m that starts with prefix, malloced ("" if none). */
static char *
metric_line(const char *m, const char *prefix)
{
	const char *p = m ? strstr(m, prefix) : NULL;

	return strndup(p ? p : "", p ? strcspn(p, "\n") : 0);
}

/*
 * Scrapes of an unchanged store are served from what the first one
 * built: the same page, no rebuild.  A new run stored by another
 * process changes the store: the next scrape builds again, and the
 * release's figures move.
 */
static void
metrics_cached(void)
{
	static const char fit[] = "bisectd_per_token_seconds{engine=\"basert\","
	    "release=\"0.2.4\"} ";
	static const char runs[] = "bisectd_runs_total{engine=\"basert\","
	    "outcome=\"ok\",kind=\"run\"} ";
	char cmd[4096], *a, *b, *c, *fa, *fc, *ra, *rc;
	double n;

	CHECK_INT(get("/metrics", "a.prom"), 200);
	CHECK_INT(get("/metrics", "b.prom"), 200);
	a = check_read_file("a.prom");
	b = check_read_file("b.prom");
	n = metric_value(a, "bisectd_metrics_rebuilds_total");
	CHECK(n >= 1);
	CHECK_STR(a, b);
	CHECK(metric_value(b, "bisectd_metrics_rebuilds_total") == n);

	snprintf(cmd, sizeof(cmd), "%s -c d.conf bench basert 0.2.4 "
	    "--prompts 128,512 --reps 2 >/dev/null 2>&1", ctl);
	CHECK_INT(check_run(cmd, NULL), 0);
	CHECK_INT(get("/metrics", "c.prom"), 200);
	c = check_read_file("c.prom");
	CHECK(metric_value(c, "bisectd_metrics_rebuilds_total") == n + 1);
	fa = metric_line(a, fit);
	fc = metric_line(c, fit);
	ra = metric_line(a, runs);
	rc = metric_line(c, runs);
	CHECK(fa[0] != '\0' && fc[0] != '\0');
	CHECK(strcmp(fa, fc) != 0);
	CHECK(ra[0] != '\0' && strcmp(ra, rc) != 0);
	CHECK_INT(check_run("promtool check metrics < c.prom", NULL), 0);
	free(fa);
	free(fc);
	free(ra);
	free(rc);
	free(a);
	free(b);
	free(c);
}

/* /api/status while the bisect runs: the running job's arguments are an
 * object in the daemon's part and in the jobs, and bisectctl status
 * prints them as the command line that queued them. */
static void
running_args(void)
{
	json_t *o, *d, *j;

	CHECK_INT(get("/api/status", "running.json"), 200);
	o = json_load_file("running.json", 0, NULL);
	d = json_object_get(o, "daemon");
	j = json_array_get(json_object_get(d, "jobs"), 0);
	CHECK(json_is_object(json_object_get(j, "args")));
	CHECK_STR(json_string_value(json_object_get(json_object_get(j, "args"),
	    "range")), "0.2.0..0.2.6");
	CHECK(json_is_object(json_object_get(json_object_get(d, "job"),
	    "args")));
	j = json_array_get(json_object_get(o, "jobs"), 0);
	CHECK(json_is_object(json_object_get(j, "args")));
	json_decref(o);
	check_ctl_says(ctl, "-c d.conf status", 0,
	    "running: job 1, bisect basert 0.2.0..0.2.6, for ", NULL);
}

/* The status page once the bisect ended: the engine's verdict in the
 * words bisectctl status has, the queue empty, the job among those that
 * ended with its outcome in words, no exit code. */
static void
finished_page(const char *file)
{
	char *page = check_read_file(file), cmd[4096];

	CHECK_CONTAINS(page, "<section class=\"engine\" id=\"engine-basert\">");
	CHECK_CONTAINS(page, "<dt>Latest verdict</dt><dd><span class=\"status "
	    "regression\">regression at 0.2.4, per-token, confirmed</span> "
	    "over <a href=\"/report/basert/0.2.0..0.2.6\">0.2.0..0.2.6</a>, "
	    "metric per-token, finished ");
	CHECK_CONTAINS(page, "<dt>Next watch</dt><dd>none: the engine has no "
	    "schedule</dd>");
	CHECK_CONTAINS(page, "<dt>Last alert</dt><dd>none</dd>");
	CHECK_CONTAINS(page, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "id=\"trend-1\"");
	CHECK_CONTAINS(page, "<circle class=\"dot-pp\"");
	CHECK_CONTAINS(page, "<p id=\"queue\">The queue is empty.</p>");
	CHECK_CONTAINS(page, "<h2>Recent jobs</h2>");
	CHECK_CONTAINS(page, "<tr id=\"job-1\"><td>1</td><td>bisect of basert "
	    "over 0.2.0..0.2.6, metric per-token, threshold 20%</td><td "
	    "class=\"done\">regression at 0.2.4, per-token, confirmed</td>");
	CHECK(page && strstr(page, "<th>exit</th>") == NULL);
	CHECK(page && strstr(page, "<script") == NULL);
	free(page);
	/* The same words as bisectctl status. */
	check_ctl_says(ctl, "-c d.conf status", 0,
	    "0.2.0..0.2.6: regression at 0.2.4, per-token, confirmed",
	    NULL);
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", file);
	CHECK_INT(check_run(cmd, NULL), 0);
}

static void
test_http(void)
{
	char buf[64], cmd[4096], *page, *m, *out = NULL;
	int code = -1, running = 0;
	pid_t pid;

	write_config();
	pid = check_start_daemon(daemon_bin, "d.conf", "daemon.log");
	port = check_http_port("daemon.log");
	CHECK(port > 0);
	if (port == 0)
		return;
	snprintf(cmd, sizeof(cmd), "%s -c d.conf bisect basert 0.2.0..0.2.6 "
	    ">/dev/null 2>&1", ctl);
	CHECK_INT(check_run(cmd, NULL), 0);

	/* While it runs: the status page shows the job and its progress. */
	for (int i = 0; i < 600 && !running; i++) {
		CHECK_INT(get("/", "status.html"), 200);
		page = check_read_file("status.html");
		running = page && strstr(page, "class=\"progress\"") != NULL;
		free(page);
		if (!running)
			check_sleep_ms(100);
	}
	CHECK(running);
	page = check_read_file("status.html");
	/* The job in words, in the queue as it runs. */
	CHECK_CONTAINS(page, "<p class=\"running\" id=\"running-1\">Job 1: "
	    "bisect of basert over 0.2.0..0.2.6, metric per-token, threshold "
	    "20%, for ");
	CHECK_CONTAINS(page, "<h2>Queue</h2>\n<table id=\"queue\">");
	CHECK_CONTAINS(page, "<tr id=\"job-1\"><td>1</td><td>bisect of basert "
	    "over 0.2.0..0.2.6, metric per-token, threshold 20%</td><td "
	    "class=\"running\">running for ");
	CHECK(page && strstr(page, "{&quot;range&quot;") == NULL);
	free(page);
	running_args();
	CHECK_INT(get("/metrics", "running.prom"), 200);
	m = check_read_file("running.prom");
	CHECK_CONTAINS(m, "bisectd_job_running{kind=\"bisect\","
	    "engine=\"basert\"} 1");
	free(m);
	bad_requests();
	slow_clients();

	/* The bisect was not disturbed: it reaches its verdict. */
	CHECK_STR(check_job_wait(dir, 1, 600, buf, sizeof(buf),
	    &code), "done");
	CHECK_INT(code, 3);

	CHECK_INT(get("/", "status.html"), 200);
	finished_page("status.html");
	CHECK_INT(get("/report/basert/0.2.0..0.2.6", "report.html"), 200);
	page = check_read_file("report.html");
	CHECK_CONTAINS(page, "0.2.4");
	/* The page of report/html.h, its time plot's dots in it. */
	CHECK_CONTAINS(page, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "id=\"fit-boundary\"");
	CHECK_CONTAINS(page, "<circle class=\"run bad\"");
	free(page);
	same_as_ctl("/api/report/basert/0.2.0..0.2.6",
	    "report basert 0.2.0..0.2.6");
	same_as_ctl("/api/report/basert/0.2.0..0.2.6?metric=pp512&"
	    "threshold=30%25", "report basert 0.2.0..0.2.6 --metric pp512 "
	    "--threshold 30%");
	same_as_ctl("/api/versions/basert", "versions basert");
	same_as_ctl("/api/runs/basert/0.2.4", "runs basert 0.2.4");
	same_as_ctl("/api/alerts", "alerts");
	/* status: the same but for the daemon's clock (uptime). */
	CHECK_INT(get("/api/status", "api.out"), 200);
	CHECK_INT(ctl_to("status", "ctl.out"), 0);
	{
		json_t *a = json_load_file("api.out", 0, NULL);
		json_t *b = json_load_file("ctl.out", 0, NULL);
		json_t *args = json_object_get(json_array_get(
		    json_object_get(a, "jobs"), 0), "args");

		CHECK(json_is_object(json_object_get(a, "daemon")));
		json_object_del(json_object_get(a, "daemon"), "uptime");
		json_object_del(json_object_get(b, "daemon"), "uptime");
		CHECK(json_array_size(json_object_get(a, "jobs")) == 1);
		CHECK(a != NULL && json_equal(a, b));
		/* The job's arguments as JSON, not as a string of it. */
		CHECK(json_is_object(args));
		CHECK_STR(json_string_value(json_object_get(args, "range")),
		    "0.2.0..0.2.6");
		CHECK(json_is_null(json_object_get(args, "metric")));
		CHECK(json_is_false(json_object_get(args, "all")));
		json_decref(a);
		json_decref(b);
	}

	CHECK_INT(get("/metrics", "metrics.prom"), 200);
	m = check_read_file("metrics.prom");
	CHECK_CONTAINS(m, "# TYPE bisectd_runs_total counter");
	CHECK_CONTAINS(m, "bisectd_runs_total{engine=\"basert\",outcome=\"ok\","
	    "kind=\"run\"} ");
	CHECK_CONTAINS(m, "bisectd_last_verdict{engine=\"basert\",range="
	    "\"0.2.0..0.2.6\",status=\"regression\"} 1");
	CHECK_CONTAINS(m, "bisectd_last_verdict{engine=\"basert\",range="
	    "\"0.2.0..0.2.6\",status=\"unknown\"} 0");
	CHECK_CONTAINS(m, "bisectd_per_token_seconds{engine=\"basert\","
	    "release=\"0.2.4\"} ");
	CHECK_CONTAINS(m, "bisectd_ceiling_tokens_per_second{engine=\"basert\","
	    "release=\"0.2.0\"} ");
	CHECK_CONTAINS(m, "bisectd_job_duration_seconds_count{kind=\"bisect\","
	    "state=\"done\"} 1");
	CHECK_CONTAINS(m, "bisectd_queue_length 0");
	free(m);
	/* promtool is part of the test command's packages: its absence is a
	 * failure, not a skip. */
	CHECK_INT(check_run("promtool check metrics < metrics.prom", &out), 0);
	if (out && out[0])
		fprintf(stderr, "promtool: %s\n", out);
	free(out);
	out = NULL;
	CHECK_INT(check_run("promtool check metrics < running.prom", &out), 0);
	free(out);
	metrics_cached();

	kill(pid, SIGTERM);
	CHECK_INT(check_wait_exit(pid, 60), 0);
	m = check_read_file("daemon.log");
	CHECK(m && strstr(m, "bisectd[error]") == NULL);
	free(m);
}

int
main(void)
{
	check_env(&ctl, &daemon_bin, &build);
	signal(SIGPIPE, SIG_IGN);
	snprintf(dir, sizeof(dir), "%s", check_tmpdir("test_daemon_http"));
	CHECK_CASE(test_http);
	return check_done();
}
