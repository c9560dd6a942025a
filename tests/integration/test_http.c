/*
 * test_http.c: the libcurl wrapper (fetch/http.c) against the loopback
 * test server: statuses, retries, caps, redirects, timeouts, headers,
 * streaming, file downloads with resume, and SMTP.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "common/err.h"
#include "fetch/http.h"
#include "common/strv.h"
#include "testserver.h"

static struct testserver ts;

static const char *
url(const char *path)
{
	return testserver_url(&ts, path);
}

/* Fast, test-sized options: http allowed, short backoff. */
static struct http_opts
opts(void)
{
	struct http_opts o = HTTP_OPTS_INIT;

	o.allow_http = 1;
	o.retry_base_ms = 10;
	o.connect_timeout_ms = 5000;
	o.low_speed_time_s = 10;
	return o;
}

static int
same_file(const char *a, int fd)
{
	FILE *f = fopen(a, "rb");
	char x[4096], y[4096];
	off_t off = 0;
	int same = f != NULL;

	while (same) {
		size_t n = fread(x, 1, sizeof(x), f);
		ssize_t m = pread(fd, y, sizeof(y), off);

		if (m < 0 || (size_t)m != n || memcmp(x, y, n) != 0)
			same = 0;
		if (n == 0)
			break;
		off += (off_t)n;
	}
	if (f)
		fclose(f);
	return same;
}

static void
test_get(void)
{
	struct http_opts o = opts();
	struct http_response r;
	struct err e = ERR_INIT;
	struct strv hdr = STRV_INIT;

	http_response_init(&r);
	CHECK_INT(http_get(url("/files/hello.txt"), &o, &r, &e), 0);
	CHECK_INT(r.status, 200);
	CHECK_STR(r.body.data, "hello, world\n");
	CHECK_INT(r.body.len, 13);
	CHECK(r.etag != NULL && r.etag[0] == '"');
	CHECK_STR(r.content_type, "application/octet-stream");

	/* Every request carries a User-Agent; the token and extra headers
	 * go along when given. */
	strv_push(&hdr, "X-Test: yes");
	o.headers = &hdr;
	o.token = "sekrit";
	CHECK_INT(http_get(url("/echo"), &o, &r, &e), 0);
	CHECK_CONTAINS(r.body.data, "User-Agent: bisectd/");
	CHECK_CONTAINS(r.body.data, "Authorization: Bearer sekrit");
	CHECK_CONTAINS(r.body.data, "X-Test: yes");
	CHECK_INT(testserver_count(&ts, "GET /echo ", "auth=Bearer+sekrit",
	    NULL), 1);

	/* A header with a line break is refused, never sent. */
	strv_clear(&hdr);
	strv_push(&hdr, "X-Evil: a\r\nX-Injected: b");
	o.token = NULL;
	CHECK_INT(http_get(url("/echo"), &o, &r, &e), -1);
	CHECK_CONTAINS(e.msg, "line break");
	CHECK_INT(testserver_count(&ts, "GET /echo ", NULL), 1);
	strv_clear(&hdr);
	http_response_release(&r);
}

static void
test_statuses(void)
{
	struct http_opts o = opts();
	struct http_response r;
	struct err e = ERR_INIT;
	time_t now = time(NULL);

	http_response_init(&r);
	/* 404: an answer, not a transport failure, asked exactly once. */
	CHECK_INT(http_get(url("/404"), &o, &r, &e), 0);
	CHECK_INT(r.status, 404);
	CHECK_INT(testserver_count(&ts, "GET /404 ", NULL), 1);

	/* 503 then 200: retried once. */
	CHECK_INT(http_get(url("/flaky503/get/hello.txt"), &o, &r, &e), 0);
	CHECK_INT(r.status, 200);
	CHECK_STR(r.body.data, "hello, world\n");
	CHECK_INT(testserver_count(&ts, "/flaky503/get/", "status=503", NULL),
	    1);
	CHECK_INT(testserver_count(&ts, "/flaky503/get/", "status=200", NULL),
	    1);

	/* 5xx for good: max_retries + 1 requests, the last one returned. */
	o.max_retries = 2;
	CHECK_INT(http_get(url("/status/500"), &o, &r, &e), 0);
	CHECK_INT(r.status, 500);
	CHECK_INT(testserver_count(&ts, "GET /status/500 ", NULL), 3);

	/* 4xx is never retried; rate-limit headers are reported. */
	CHECK_INT(http_get(url("/status/429?retry-after=7&reset=100"
	    "&remaining=0"), &o, &r, &e), 0);
	CHECK_INT(r.status, 429);
	CHECK_INT(r.retry_after_s, 7);
	CHECK_NEAR((double)r.ratelimit_reset, (double)(now + 100), 5);
	CHECK_INT(r.ratelimit_remaining, 0);
	CHECK_INT(testserver_count(&ts, "GET /status/429", NULL), 1);
	CHECK_INT(http_get(url("/status/403"), &o, &r, &e), 0);
	CHECK_INT(r.retry_after_s, -1);
	CHECK_INT(r.ratelimit_reset, -1);
	CHECK_INT(r.ratelimit_remaining, -1);
	CHECK_INT(testserver_count(&ts, "GET /status/403", NULL), 1);
	http_response_release(&r);
}

static void
test_link(void)
{
	struct http_opts o = opts();
	struct http_response r;
	struct err e = ERR_INIT;
	char want[256];

	check_write_file("srv/api/o/r/releases.jsonl",
	    "{\"tag_name\": \"v1\"}\n{\"tag_name\": \"v2\"}\n"
	    "{\"tag_name\": \"v3\"}\n");
	http_response_init(&r);
	/* Page 2 of 3 has prev before next: the next one is found. */
	CHECK_INT(http_get(url("/api/repos/o/r/releases?per_page=1&page=2"),
	    &o, &r, &e), 0);
	CHECK_INT(r.status, 200);
	snprintf(want, sizeof(want),
	    "%s/api/repos/o/r/releases?per_page=1&page=3", ts.base);
	CHECK_STR(r.link_next, want);
	CHECK_STR(r.body.data, "[{\"tag_name\": \"v2\"}]");
	/* The last page has none. */
	CHECK_INT(http_get(url("/api/repos/o/r/releases?per_page=1&page=3"),
	    &o, &r, &e), 0);
	CHECK(r.link_next == NULL);
	http_response_release(&r);
}

/* Parse block from a buffer of exactly its length, as libcurl hands
 * over lines that are not NUL-terminated. */
static int
parse_exact(const char *block, struct http_response *r)
{
	size_t len = strlen(block);
	char *copy = malloc(len > 0 ? len : 1);
	struct err e = ERR_INIT;
	int rc;

	memcpy(copy, block, len);
	rc = http_parse_headers(copy, len, r, &e);
	free(copy);
	return rc;
}

/* Header lines without a transfer: the last response's headers count. */
static void
test_parse_headers(void)
{
	struct http_response r;

	http_response_init(&r);
	CHECK_INT(parse_exact("HTTP/1.1 302 Found\r\nETag: \"old\"\r\n"
	    "Location: https://x/\r\n\r\nHTTP/2 200 \r\n"
	    "ETag:  \"abc\"\r\nLink: <https://x/?page=1>; rel=\"prev\", "
	    "<https://x/?page=3>; title=\"a\"; rel=\"last next\"\r\n"
	    "Retry-After: 7\r\nX-RateLimit-Remaining: 59\r\n"
	    "X-RateLimit-Reset: 1764590000\r\n\r\n", &r), 0);
	CHECK_INT(r.status, 200);
	CHECK_STR(r.etag, "\"abc\"");
	CHECK_STR(r.link_next, "https://x/?page=3");
	CHECK_INT(r.retry_after_s, 7);
	CHECK_INT(r.ratelimit_remaining, 59);
	CHECK_INT(r.ratelimit_reset, 1764590000);
	/* A status line that ends the buffer, without CR LF: its number is
	 * read from a copy, not past the line (ASan saw the read). */
	CHECK_INT(parse_exact("HTTP/1.1 204", &r), 0);
	CHECK_INT(r.status, 204);
	CHECK(r.etag == NULL && r.link_next == NULL);
	CHECK_INT(parse_exact("HTTP/1.1 2", &r), 0);
	CHECK_INT(r.status, 2);
	http_response_release(&r);
}

static void
test_caps_and_redirects(void)
{
	struct http_opts o = opts();
	struct http_response r;
	struct err e = ERR_INIT;

	http_response_init(&r);
	/* An endless chunked body stops at the cap, without a retry. */
	o.max_bytes = 1 << 20;
	CHECK_INT(http_get(url("/endless"), &o, &r, &e), -1);
	CHECK_CONTAINS(e.msg, "exceeds the cap of 1048576 bytes");
	CHECK_CONTAINS(e.msg, "/endless");
	CHECK_INT(testserver_count(&ts, "GET /endless ", NULL), 1);
	o.max_bytes = 0;

	/* file:// is never followed. */
	CHECK_INT(http_get(url("/redirect-file"), &o, &r, &e), -1);
	CHECK_CONTAINS(e.msg, "refused redirect");
	CHECK_CONTAINS(e.msg, "file:///etc/passwd");
	CHECK_INT(testserver_count(&ts, "GET /redirect-file ", NULL), 1);

	/* Plain http is not followed when only https may be. */
	o.redirect_https_only = 1;
	CHECK_INT(http_get(url("/redirect-http/hello.txt"), &o, &r, &e), -1);
	CHECK_CONTAINS(e.msg, "refused redirect");
	CHECK_CONTAINS(e.msg, "only https");
	CHECK_INT(testserver_count(&ts, "GET /files/hello.txt ", NULL), 0);
	o.redirect_https_only = 0;

	/* A loop is cut after max_redirects. */
	o.max_redirects = 3;
	CHECK_INT(http_get(url("/redirect-loop"), &o, &r, &e), -1);
	CHECK_CONTAINS(e.msg, "too many redirects");
	CHECK_INT(testserver_count(&ts, "GET /redirect-loop ", NULL), 4);

	/* An allowed redirect is followed, and the headers are the final
	 * answer's. */
	CHECK_INT(http_get(url("/redirect-ok/hello.txt"), &o, &r, &e), 0);
	CHECK_INT(r.status, 200);
	CHECK_STR(r.body.data, "hello, world\n");

	/* https only unless allowed; other schemes never. */
	o.allow_http = 0;
	CHECK_INT(http_get(url("/files/hello.txt"), &o, &r, &e), -1);
	CHECK_CONTAINS(e.msg, "allow-http is off");
	CHECK_INT(http_get("file:///etc/passwd", &o, &r, &e), -1);
	CHECK_CONTAINS(e.msg, "not an http(s) URL");
	CHECK_INT(testserver_count(&ts, "GET /files/hello.txt ", NULL), 1);
	http_response_release(&r);
}

static void
test_timeouts(void)
{
	struct http_opts o = opts();
	struct http_response r;
	struct err e = ERR_INIT;
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	char closed[64];
	int fd;

	http_response_init(&r);
	/* A trickle below the low-speed limit is cut and retried. */
	o.low_speed_time_s = 1;
	o.max_retries = 1;
	CHECK_INT(http_get(url("/slow/hello.txt?ms=3000"), &o, &r, &e), -1);
	CHECK_CONTAINS(e.msg, "/slow/hello.txt");
	CHECK_CONTAINS(e.msg, "2 attempts");
	CHECK_INT(testserver_count(&ts, "GET /slow/hello.txt", NULL), 2);

	/* Nobody listening: retried, then a clear failure. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	getsockname(fd, (struct sockaddr *)&sa, &len);
	snprintf(closed, sizeof(closed), "http://127.0.0.1:%d/x",
	    ntohs(sa.sin_port));
	close(fd);
	o.max_retries = 2;
	CHECK_INT(http_get(closed, &o, &r, &e), -1);
	CHECK_CONTAINS(e.msg, "cannot fetch 'http://127.0.0.1:");
	CHECK_CONTAINS(e.msg, "3 attempts");
	http_response_release(&r);
}

static void
test_post(void)
{
	struct http_opts o = opts();
	struct http_response r;
	struct err e = ERR_INIT;
	static const char json[] = "{\"alert\": \"regression\"}";
	char *stored;

	http_response_init(&r);
	CHECK_INT(http_post(url("/echo"), &o, "application/json", json,
	    strlen(json), &r, &e), 0);
	CHECK_INT(r.status, 200);
	CHECK_CONTAINS(r.body.data, "POST /echo HTTP/1.1");
	CHECK_CONTAINS(r.body.data, "Content-Type: application/json");
	CHECK_CONTAINS(r.body.data, json);

	CHECK_INT(http_post(url("/hook"), &o, "application/json", json,
	    strlen(json), &r, &e), 0);
	CHECK_INT(r.status, 200);
	stored = check_read_file("srv/hooks/1.json");
	CHECK_STR(stored, json);
	free(stored);

	o.max_retries = 1;
	CHECK_INT(http_post(url("/hook500"), &o, "application/json", json,
	    strlen(json), &r, &e), 0);
	CHECK_INT(r.status, 500);
	CHECK_INT(testserver_count(&ts, "POST /hook500 ", NULL), 2);
	http_response_release(&r);
}

struct chunks {
	char text[256];
	int calls;
	int stop_after;		/* return 1 after this many calls; 0: never */
	int fail;		/* return -1 */
};

static int
on_chunk(void *arg, const char *data, size_t len)
{
	struct chunks *c = arg;
	size_t have = strlen(c->text);

	c->calls++;
	if (len > sizeof(c->text) - 1 - have)
		len = sizeof(c->text) - 1 - have;
	memcpy(c->text + have, data, len);
	c->text[have + len] = '\0';
	if (c->fail)
		return -1;
	return c->stop_after && c->calls >= c->stop_after ? 1 : 0;
}

static void
test_stream(void)
{
	struct http_opts o = opts();
	struct err e = ERR_INIT;
	struct chunks c;
	long status = 0;

	memset(&c, 0, sizeof(c));
	CHECK_INT(http_stream_post(url("/stream?n=3"), &o, "application/json",
	    "{}", 2, on_chunk, &c, &status, &e), 0);
	CHECK_INT(status, 200);
	CHECK_STR(c.text, "chunk 0\nchunk 1\nchunk 2\n");

	/* Stopping at the first chunk ends the transfer there, with no
	 * error: the rest (10 s of it) is never waited for. */
	memset(&c, 0, sizeof(c));
	c.stop_after = 1;
	CHECK_INT(http_stream_post(url("/stream?n=3&ms=5000"), &o,
	    "application/json", "{}", 2, on_chunk, &c, &status, &e), 0);
	CHECK_INT(c.calls, 1);
	CHECK_STR(c.text, "chunk 0\n");

	memset(&c, 0, sizeof(c));
	c.fail = 1;
	CHECK_INT(http_stream_post(url("/stream?n=3"), &o, "application/json",
	    "{}", 2, on_chunk, &c, &status, &e), -1);
	CHECK_CONTAINS(e.msg, "/stream");

	/* Never retried, even on a 5xx. */
	memset(&c, 0, sizeof(c));
	CHECK_INT(http_stream_post(url("/status/503"), &o, "application/json",
	    "{}", 2, on_chunk, &c, &status, &e), 0);
	CHECK_INT(status, 503);
	CHECK_INT(testserver_count(&ts, "POST /status/503", NULL), 1);
}

static void
test_download_fd(void)
{
	struct http_opts o = opts();
	struct err e = ERR_INIT;
	struct check_progress p;
	uint64_t have;
	int fd;

	testserver_write_pattern("srv/big.bin", 300000, 1);

	/* Whole file, with progress. */
	memset(&p, 0, sizeof(p));
	fd = open("out1", O_RDWR | O_CREAT | O_TRUNC, 0644);
	have = 0;
	CHECK_INT(http_download_fd(url("/files/big.bin"), &o, fd, &have,
	    check_on_progress, &p, &e), 0);
	CHECK_INT(have, 300000);
	CHECK(same_file("srv/big.bin", fd));
	CHECK(p.calls > 0);
	CHECK_INT(p.now, 300000);
	CHECK_INT(p.total, 300000);
	close(fd);

	/* Dropped half-way: retried with a Range, and the result whole. */
	fd = open("out2", O_RDWR | O_CREAT | O_TRUNC, 0644);
	have = 0;
	CHECK_INT(http_download_fd(url("/drop/big.bin"), &o, fd, &have,
	    NULL, NULL, &e), 0);
	CHECK_INT(have, 300000);
	CHECK(same_file("srv/big.bin", fd));
	CHECK_INT(testserver_count(&ts, "GET /drop/big.bin ", "range=-",
	    NULL), 1);
	CHECK_INT(testserver_count(&ts, "GET /drop/big.bin ",
	    "range=bytes=150000-", "status=206", NULL), 1);
	close(fd);

	/* A partial file of junk and a server that ignores Range: the 200
	 * replaces it, it is never appended to. */
	fd = open("out3", O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK_INT(write(fd, "junkjunk", 8), 8);
	have = 8;
	CHECK_INT(http_download_fd(url("/norange/big.bin"), &o, fd, &have,
	    NULL, NULL, &e), 0);
	CHECK_INT(have, 300000);
	CHECK(same_file("srv/big.bin", fd));
	CHECK_INT(testserver_count(&ts, "GET /norange/big.bin ",
	    "range=bytes=8-", "status=200", NULL), 1);
	close(fd);

	/* 416 to the resume: start over from zero. */
	fd = open("out4", O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK_INT(write(fd, "junk", 4), 4);
	have = 4;
	CHECK_INT(http_download_fd(url("/416/big.bin"), &o, fd, &have,
	    NULL, NULL, &e), 0);
	CHECK_INT(have, 300000);
	CHECK(same_file("srv/big.bin", fd));
	CHECK_INT(testserver_count(&ts, "GET /416/big.bin ", "status=416",
	    NULL), 1);
	CHECK_INT(testserver_count(&ts, "GET /416/big.bin ", "range=-",
	    "status=200", NULL), 1);
	close(fd);

	/* 404 is final: one request, a message with the status. */
	fd = open("out5", O_RDWR | O_CREAT | O_TRUNC, 0644);
	have = 0;
	CHECK_INT(http_download_fd(url("/files/missing.bin"), &o, fd, &have,
	    NULL, NULL, &e), -1);
	CHECK_CONTAINS(e.msg, "HTTP 404");
	CHECK_CONTAINS(e.msg, "/files/missing.bin");
	CHECK_INT(have, 0);
	CHECK_INT(testserver_count(&ts, "GET /files/missing.bin ", NULL), 1);
	close(fd);

	/* A declared length past the cap: refused before a byte is
	 * written. */
	fd = open("out6", O_RDWR | O_CREAT | O_TRUNC, 0644);
	have = 0;
	o.max_bytes = 100000;
	CHECK_INT(http_download_fd(url("/files/big.bin"), &o, fd, &have,
	    NULL, NULL, &e), -1);
	CHECK_CONTAINS(e.msg, "exceeds the cap of 100000 bytes");
	CHECK_INT(have, 0);
	close(fd);

	/* A chunked body of unknown length is counted as it comes and cut
	 * at the cap. */
	fd = open("out7", O_RDWR | O_CREAT | O_TRUNC, 0644);
	have = 0;
	CHECK_INT(http_download_fd(url("/endless"), &o, fd, &have, NULL,
	    NULL, &e), -1);
	CHECK_CONTAINS(e.msg, "exceeds the cap of 100000 bytes");
	CHECK(have > 0 && have <= 100000);
	CHECK_INT(testserver_count(&ts, "GET /endless ", NULL), 1);
	close(fd);
}

static void
test_smtp(void)
{
	struct http_opts o = opts();
	struct err e = ERR_INIT;
	struct strv to = STRV_INIT;
	char smtp[64];
	char *mail;

	snprintf(smtp, sizeof(smtp), "smtp://127.0.0.1:%d", ts.smtp_port);
	strv_push(&to, "ops@example.org");
	strv_push(&to, "<dev@example.org>");
	CHECK_INT(http_smtp_send(smtp, &o, "bisectd@example.org", &to,
	    "Subject: regression\r\n\r\nbasert 0.2.4 is slower\r\n"
	    ".leading dot\r\n", &e), 0);
	mail = check_read_file("srv/mail/1.eml");
	CHECK_CONTAINS(mail, "X-Envelope-From: <bisectd@example.org>");
	CHECK_CONTAINS(mail, "X-Envelope-To: <ops@example.org>,"
	    "<dev@example.org>");
	CHECK_CONTAINS(mail, "Subject: regression");
	CHECK_CONTAINS(mail, "basert 0.2.4 is slower");
	CHECK_CONTAINS(mail, "\r\n.leading dot\r\n");
	free(mail);

	/* Without allow_http a plain smtp:// server must offer STARTTLS,
	 * which this one does not. */
	o.allow_http = 0;
	o.max_retries = 0;
	CHECK_INT(http_smtp_send(smtp, &o, "bisectd@example.org", &to,
	    "Subject: x\r\n\r\nx\r\n", &e), -1);
	CHECK_CONTAINS(e.msg, "cannot send mail through");
	CHECK_INT(http_smtp_send("http://x/", &o, "a@b", &to, "x", &e), -1);
	CHECK_CONTAINS(e.msg, "not an smtp");
	strv_clear(&to);
}

int
main(void)
{
	check_tmpdir("http");
	if (testserver_start("srv", &ts) < 0)
		return 1;
	check_write_file("srv/hello.txt", "hello, world\n");
	check_run("mkdir -p srv/api/o/r", NULL);
	void (*tests[])(void) = { test_get, test_statuses, test_link,
	    test_parse_headers,
	    test_caps_and_redirects, test_timeouts, test_post, test_stream,
	    test_download_fd, test_smtp };

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		testserver_log_reset(&ts);
		tests[i]();
	}
	testserver_stop(&ts);
	return check_done();
}
