/*
 * testserver.c: a real HTTP/1.1 server (and a tiny SMTP sink) on 127.0.0.1
 * that the tests drive into each misbehaviour by the path they ask for.
 * It owns nothing but what it writes under --root (hooks/, mail/, .state/).
 *
 *   testserver --port-file FILE [--root DIR] [--log FILE]
 *              [--smtp-port-file FILE]
 *
 * Binds port 0, writes the port to FILE atomically once listening, serves
 * until killed and exits by itself after 10 minutes.  One process per
 * connection (fork), one request per connection ("Connection: close").
 * Each request is logged before its answer is sent, one line:
 *
 *   METHOD TARGET status=N range=R inm=V auth=V ifr=V
 *
 * with "-" for a missing header and blanks in values turned into '+'.
 *
 * Paths (NAME is a file under --root; no "..", no leading '/'):
 *   /files/NAME          the file: ETag ("SIZE-MTIME" in hex), Content-
 *                        Length, Range honoured ("bytes=A-", "bytes=A-B",
 *                        "bytes=-N"; 416 past the end) unless an If-Range
 *                        names another ETag
 *   /drop/NAME           without Range: half the body, then close; with
 *                        Range: as /files
 *   /flip/NAME           without Range: as /drop; with Range: the range
 *                        with the byte at offset size*3/4 flipped
 *   /norange/NAME        Range ignored: always 200 and the whole file
 *   /416/NAME            any Range answered 416; without Range as /files
 *   /flaky503/KEY/NAME   503 the first time per KEY, then as /files
 *   /slow/NAME?ms=N      full headers, then one byte every N ms (2000)
 *   /rate/KIB/NAME       as /files (Range honoured), at KIB KiB a second
 *   /hang/NAME           full headers, half the body, then nothing more:
 *                        the connection stays open until the client
 *                        closes it
 *   /endless             200, chunked, never ends
 *   /status/CODE?retry-after=S&reset=S&remaining=N
 *                        answers CODE with those headers (reset: seconds
 *                        from now, sent as X-RateLimit-Reset epoch)
 *   /redirect-file       302 to file:///etc/passwd
 *   /redirect-http[/NAME]  302 to http://127.0.0.1:PORT/files/NAME
 *   /redirect-loop       302 to itself
 *   /redirect-ok/NAME    302 to /files/NAME
 *   /echo                200, body: the request's header block and body
 *   /stream?n=N&ms=M     200, chunked: N lines "chunk I\n", M ms apart
 *   POST /hook           body stored as --root/hooks/N.json (N = 1, 2...)
 *   /hook500             500
 *   /hookslow?ms=N       200 after N ms (3000), nothing stored
 *   /git/NAME/info/refs  git's smart HTTP ref advertisement (what
 *                        git_remote_ls() reads) of the refs in file NAME,
 *                        one "ID REFNAME" a line, each name sent as it
 *                        is, however git would judge it; nothing can be
 *                        fetched
 *   /api/repos/OWNER/REPO/releases?per_page=P&page=K
 *                        GitHub's list-releases, from --root/api/OWNER/
 *                        REPO/releases.jsonl (one release object a line):
 *                        pages of P (30, at most 100), Link rel="next",
 *                        "last", "prev", "first"; ETag per page and 304 on
 *                        If-None-Match.  An optional file mode beside it
 *                        holds one line:
 *                          ratelimit403 S   403, X-RateLimit-Remaining: 0,
 *                                           X-RateLimit-Reset: now + S
 *                          ratelimit429 S   429, Retry-After: S
 *                          notjson [K]      an HTML page (page K only)
 *                          foreignlink      Link URLs name host localhost
 *                        A mode whose name ends in "-once" (ratelimit429-once
 *                        1) applies to one request, then the file is
 *                        renamed to mode.used.
 *   /api/repos/OWNER/REPO/issues, /api/repos/OWNER/REPO/issues/N/comments
 *                        GitHub's issues and an issue's comments (see
 *                        testserver_github.c): POST stores, GET lists.
 *   anything else        404
 *
 * SMTP (with --smtp-port-file): EHLO/HELO, MAIL, RCPT, DATA, RSET, NOOP,
 * QUIT; each message is stored as --root/mail/N.eml, preceded by
 * "X-Envelope-From: <a>" and "X-Envelope-To: <b>" lines, and logged as
 * "SMTP DATA from=<a> to=<b>,<c> status=250".
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fake-common.h"
#include "testserver_int.h"

#define BODY_MAX	(16 << 20)
#define LIFETIME_S	600

const char *const progname = "testserver";
const char *root = ".";
static int log_fd = -1;
int http_port;

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Log value v (or "-"), blanks turned into '+'. */
static void
log_value(char *out, size_t outlen, const char *name, const char *v)
{
	size_t len = strlen(out);

	snprintf(out + len, outlen - len, " %s=", name);
	len = strlen(out);
	if (v == NULL || *v == '\0')
		v = "-";
	for (; *v && len + 1 < outlen; v++, len++)
		out[len] = isspace((unsigned char)*v) ? '+' : *v;
	out[len] = '\0';
}

static void
log_line(const char *line)
{
	char buf[8192];
	int n;

	if (log_fd < 0)
		return;
	n = snprintf(buf, sizeof(buf), "%s\n", line);
	if (n > 0)
		write_all(log_fd, buf, (size_t)n < sizeof(buf) ?
		    (size_t)n : sizeof(buf) - 1);
}

static void
log_req(const struct req *rq, int status)
{
	char line[8192];

	snprintf(line, sizeof(line), "%s %s status=%d", rq->method,
	    rq->target, status);
	log_value(line, sizeof(line), "range", rq->range);
	log_value(line, sizeof(line), "inm", rq->inm);
	log_value(line, sizeof(line), "auth", rq->auth);
	log_value(line, sizeof(line), "ifr", rq->if_range);
	log_line(line);
}

static const char *
reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 204: return "No Content";
	case 206: return "Partial Content";
	case 302: return "Found";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 416: return "Range Not Satisfiable";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	default: return "Status";
	}
}

/* Log, then send a whole response with a body of known length. */
void
respond(int fd, const struct req *rq, int status, const char *headers,
    const char *body, size_t len)
{
	char head[8192];
	int n;

	log_req(rq, status);
	n = snprintf(head, sizeof(head),
	    "HTTP/1.1 %d %s\r\nServer: testserver\r\nConnection: close\r\n"
	    "Content-Length: %zu\r\n%s\r\n", status, reason(status), len,
	    headers ? headers : "");
	if (n < 0 || (size_t)n >= sizeof(head))
		return;
	if (write_all(fd, head, (size_t)n) < 0)
		return;
	if (len > 0 && strcmp(rq->method, "HEAD") != 0)
		write_all(fd, body, len);
}

void
respond_text(int fd, const struct req *rq, int status, const char *text)
{
	respond(fd, rq, status, "Content-Type: text/plain\r\n", text,
	    strlen(text));
}

/* Value of name in the query string into out; 1 if present. */
static int
query_get(const char *query, const char *name, char *out, size_t outlen)
{
	size_t nl = strlen(name);
	const char *p = query;

	while (p && *p) {
		const char *end = strchr(p, '&');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len > nl && strncmp(p, name, nl) == 0 && p[nl] == '=') {
			size_t vl = len - nl - 1;

			if (vl >= outlen)
				vl = outlen - 1;
			memcpy(out, p + nl + 1, vl);
			out[vl] = '\0';
			return 1;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

long
query_long(const char *query, const char *name, long def)
{
	char v[64];

	if (!query_get(query, name, v, sizeof(v)) || v[0] == '\0')
		return def;
	return strtol(v, NULL, 10);
}

/* A relative name that stays under the root. */
int
safe_name(const char *name)
{
	return name[0] != '\0' && name[0] != '/' && strstr(name, "..") == NULL;
}

static void
copy_header(char *out, size_t outlen, const char *v, size_t len)
{
	while (len > 0 && (*v == ' ' || *v == '\t')) {
		v++;
		len--;
	}
	while (len > 0 && isspace((unsigned char)v[len - 1]))
		len--;
	if (len >= outlen)
		len = outlen - 1;
	memcpy(out, v, len);
	out[len] = '\0';
}

/* Read one request: headers, then a Content-Length body.  0 or -1. */
static int
read_request(int fd, struct req *rq)
{
	size_t have = 0, body_off = 0;
	long long clen = 0;
	char *end = NULL, *line, *next;
	int expect_continue = 0;

	for (;;) {
		ssize_t n;

		if (have >= sizeof(rq->head) - 1)
			return -1;
		n = read(fd, rq->head + have, sizeof(rq->head) - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		have += (size_t)n;
		rq->head[have] = '\0';
		if ((end = strstr(rq->head, "\r\n\r\n")) != NULL)
			break;
	}
	body_off = (size_t)(end - rq->head) + 4;
	rq->head_len = body_off;

	line = rq->head;
	next = strstr(line, "\r\n");
	*next = '\0';
	if (sscanf(line, "%15s %4095s", rq->method, rq->target) != 2)
		return -1;
	*next = '\r';
	{
		char *q = strchr(rq->target, '?');
		size_t pl = q ? (size_t)(q - rq->target) : strlen(rq->target);

		memcpy(rq->path, rq->target, pl);
		rq->path[pl] = '\0';
		snprintf(rq->query, sizeof(rq->query), "%s", q ? q + 1 : "");
	}
	for (line = next + 2; line < end; line = next + 2) {
		char *colon;
		size_t nl, vl;

		next = strstr(line, "\r\n");
		colon = memchr(line, ':', (size_t)(next - line));
		if (colon == NULL)
			continue;
		nl = (size_t)(colon - line);
		vl = (size_t)(next - colon - 1);
#define IS(h) (nl == strlen(h) && strncasecmp(line, h, nl) == 0)
		if (IS("Range"))
			copy_header(rq->range, sizeof(rq->range), colon + 1, vl);
		else if (IS("If-None-Match"))
			copy_header(rq->inm, sizeof(rq->inm), colon + 1, vl);
		else if (IS("If-Range"))
			copy_header(rq->if_range, sizeof(rq->if_range),
			    colon + 1, vl);
		else if (IS("Authorization"))
			copy_header(rq->auth, sizeof(rq->auth), colon + 1, vl);
		else if (IS("Content-Type"))
			copy_header(rq->ctype, sizeof(rq->ctype), colon + 1, vl);
		else if (IS("Content-Length"))
			clen = strtoll(colon + 1, NULL, 10);
		else if (IS("Expect"))
			expect_continue = 1;
#undef IS
	}
	if (clen < 0 || clen > BODY_MAX)
		return -1;
	if ((rq->body = malloc((size_t)clen + 1)) == NULL)
		return -1;
	rq->body_len = have - body_off;
	if (rq->body_len > (size_t)clen)
		rq->body_len = (size_t)clen;
	memcpy(rq->body, rq->head + body_off, rq->body_len);
	if (expect_continue && rq->body_len < (size_t)clen) {
		static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";

		write_all(fd, cont, sizeof(cont) - 1);
	}
	while (rq->body_len < (size_t)clen) {
		ssize_t n = read(fd, rq->body + rq->body_len,
		    (size_t)clen - rq->body_len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		rq->body_len += (size_t)n;
	}
	rq->body[rq->body_len] = '\0';
	return 0;
}

/* Parse a single byte range against size: 1 ok, 0 none/ignored, -1 past
 * the end (416). */
static int
parse_range(const char *range, long long size, long long *from,
    long long *to)
{
	char *endp;
	long long a, b;

	if (range[0] == '\0' || strncmp(range, "bytes=", 6) != 0 ||
	    strchr(range, ',') != NULL)
		return 0;
	range += 6;
	if (*range == '-') {
		b = strtoll(range + 1, &endp, 10);
		if (*endp != '\0' || b <= 0)
			return 0;
		*from = b >= size ? 0 : size - b;
		*to = size - 1;
		return size > 0 ? 1 : -1;
	}
	a = strtoll(range, &endp, 10);
	if (*endp != '-' || a < 0)
		return 0;
	if (endp[1] == '\0')
		b = size - 1;
	else {
		b = strtoll(endp + 1, &endp, 10);
		if (*endp != '\0' || b < a)
			return 0;
		if (b >= size)
			b = size - 1;
	}
	if (a >= size)
		return -1;
	*from = a;
	*to = b;
	return 1;
}

enum {
	F_NORANGE = 1,		/* ignore Range */
	F_DROP = 2,		/* no Range: half the body then close */
	F_FLIP = 4,		/* Range: flip the byte at size*3/4 */
	F_416 = 8,		/* any Range: 416 */
	F_SLOW = 16,		/* one byte every ms */
	F_HANG = 32,		/* half the body, then hold the connection */
	F_RATE = 64		/* at most arg bytes a second */
};

/* slow_ms: F_SLOW's gap between bytes; F_RATE's bytes a second. */
static void
serve_file(int fd, const struct req *rq, const char *name, int flags,
    long slow_ms)
{
	char path[PATH_MAX], headers[1024], buf[65536], etag[64];
	long long size, from = 0, to, off, end, flip_at;
	struct stat st;
	int ffd, r, status = 200;

	if (!safe_name(name) || snprintf(path, sizeof(path), "%s/%s", root,
	    name) >= (int)sizeof(path)) {
		respond_text(fd, rq, 400, "bad name\n");
		return;
	}
	if ((ffd = open(path, O_RDONLY | O_CLOEXEC)) < 0 ||
	    fstat(ffd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (ffd >= 0)
			close(ffd);
		respond_text(fd, rq, 404, "no such file\n");
		return;
	}
	size = (long long)st.st_size;
	to = size - 1;
	flip_at = size * 3 / 4;
	snprintf(etag, sizeof(etag), "\"%llx-%llx\"", size,
	    (long long)st.st_mtime);
	r = (flags & F_NORANGE) ? 0 : parse_range(rq->range, size, &from, &to);
	if (r > 0 && rq->if_range[0] != '\0' && strcmp(rq->if_range, etag)) {
		r = 0;	/* changed since: the whole file */
		from = 0;
		to = size - 1;
	}
	if (r != 0 && (flags & F_416))
		r = -1;
	if (r < 0) {
		snprintf(headers, sizeof(headers),
		    "Content-Range: bytes */%lld\r\n", size);
		respond(fd, rq, 416, headers, NULL, 0);
		close(ffd);
		return;
	}
	snprintf(headers, sizeof(headers),
	    "Content-Type: application/octet-stream\r\nAccept-Ranges: bytes"
	    "\r\nETag: %s\r\n", etag);
	if (r > 0) {
		status = 206;
		snprintf(headers + strlen(headers),
		    sizeof(headers) - strlen(headers),
		    "Content-Range: bytes %lld-%lld/%lld\r\n", from, to, size);
	}
	{
		char head[2048];
		int n;

		log_req(rq, status);
		n = snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\n"
		    "Server: testserver\r\nConnection: close\r\n"
		    "Content-Length: %lld\r\n%s\r\n", status, reason(status),
		    to - from + 1, headers);
		if (write_all(fd, head, (size_t)n) < 0 ||
		    strcmp(rq->method, "HEAD") == 0) {
			close(ffd);
			return;
		}
	}
	end = to + 1;
	if ((flags & (F_DROP | F_HANG)) && r == 0)
		end = from + (to - from + 1) / 2;
	if (flags & F_RATE) {
		struct timespec t0, t;
		long long sent = 0;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (off = from; off < end; ) {
			ssize_t n = pread(ffd, buf, (size_t)(end - off) < 4096 ?
			    (size_t)(end - off) : 4096, (off_t)off);
			double due;

			if (n <= 0 || write_all(fd, buf, (size_t)n) < 0)
				break;
			off += n;
			sent += n;
			/* Ahead of the rate: wait until the bytes sent are
			 * due. */
			clock_gettime(CLOCK_MONOTONIC, &t);
			due = (double)sent / (double)slow_ms -
			    ((double)(t.tv_sec - t0.tv_sec) +
			    (double)(t.tv_nsec - t0.tv_nsec) / 1e9);
			if (due > 0)
				sleep_ms((long)(due * 1000));
		}
		close(ffd);
		return;
	}
	if (!(flags & (F_FLIP | F_SLOW))) {
		off_t o = (off_t)from;

		while (o < (off_t)end) {
			ssize_t n = sendfile(fd, ffd, &o, (size_t)(end - o));

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
		}
		close(ffd);
		if (flags & F_HANG) {
			char c;

			/* Until the client gives up (read() returns 0). */
			while (read(fd, &c, 1) > 0)
				;
		}
		return;
	}
	for (off = from; off < end; ) {
		size_t want = sizeof(buf);
		ssize_t n;

		if (flags & F_SLOW)
			want = 1;
		if ((long long)want > end - off)
			want = (size_t)(end - off);
		n = pread(ffd, buf, want, (off_t)off);
		if (n <= 0)
			break;
		if ((flags & F_FLIP) && r > 0 && flip_at >= off &&
		    flip_at < off + n)
			buf[flip_at - off] ^= 0x20;
		if (write_all(fd, buf, (size_t)n) < 0)
			break;
		off += n;
		if (flags & F_SLOW)
			sleep_ms(slow_ms);
	}
	close(ffd);
}

static void
serve_endless(int fd, const struct req *rq)
{
	static const char head[] = "HTTP/1.1 200 OK\r\nServer: testserver\r\n"
	    "Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n";
	char chunk[8 + 65536 + 2];

	log_req(rq, 200);
	if (write_all(fd, head, sizeof(head) - 1) < 0)
		return;
	memcpy(chunk, "10000\r\n", 7);
	memset(chunk + 7, 'x', 65536);
	memcpy(chunk + 7 + 65536, "\r\n", 2);
	while (write_all(fd, chunk, 7 + 65536 + 2) == 0)
		;
}

static void
serve_stream(int fd, const struct req *rq)
{
	static const char head[] = "HTTP/1.1 200 OK\r\nServer: testserver\r\n"
	    "Connection: close\r\nContent-Type: text/plain\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n";
	long n = query_long(rq->query, "n", 3);
	long ms = query_long(rq->query, "ms", 0);

	log_req(rq, 200);
	if (write_all(fd, head, sizeof(head) - 1) < 0)
		return;
	for (long i = 0; i < n; i++) {
		char data[64], chunk[96];
		int dl, cl;

		if (i > 0 && ms > 0)
			sleep_ms(ms);
		dl = snprintf(data, sizeof(data), "chunk %ld\n", i);
		cl = snprintf(chunk, sizeof(chunk), "%x\r\n%s\r\n", dl, data);
		if (write_all(fd, chunk, (size_t)cl) < 0)
			return;
	}
	write_all(fd, "0\r\n\r\n", 5);
}

static void
serve_status(int fd, const struct req *rq, const char *code)
{
	char headers[1024] = "Content-Type: text/plain\r\n", body[64];
	int status = atoi(code);
	long v;

	if (status < 100 || status > 599) {
		respond_text(fd, rq, 400, "bad status\n");
		return;
	}
	if ((v = query_long(rq->query, "retry-after", -1)) >= 0)
		snprintf(headers + strlen(headers),
		    sizeof(headers) - strlen(headers), "Retry-After: %ld\r\n",
		    v);
	if ((v = query_long(rq->query, "reset", -1)) >= 0)
		snprintf(headers + strlen(headers),
		    sizeof(headers) - strlen(headers),
		    "X-RateLimit-Reset: %lld\r\n", (long long)time(NULL) + v);
	if ((v = query_long(rq->query, "remaining", -1)) >= 0)
		snprintf(headers + strlen(headers),
		    sizeof(headers) - strlen(headers),
		    "X-RateLimit-Remaining: %ld\r\n", v);
	snprintf(body, sizeof(body), "status %d\n", status);
	respond(fd, rq, status, headers, body, strlen(body));
}

static void
redirect(int fd, const struct req *rq, const char *location)
{
	char headers[4200];

	snprintf(headers, sizeof(headers), "Location: %s\r\n", location);
	respond(fd, rq, 302, headers, "redirect\n", 9);
}

/* Store data as DIR/N.EXT under the root, N the first free number. */
int
store_numbered(const char *dir, const char *ext, const char *data,
    size_t len)
{
	char d[PATH_MAX], tmp[PATH_MAX + 32], final[PATH_MAX + 32];
	int tfd;

	snprintf(d, sizeof(d), "%s/%s", root, dir);
	if (mkdir(d, 0755) < 0 && errno != EEXIST)
		return -1;
	snprintf(tmp, sizeof(tmp), "%s/.tmp.%ld", d, (long)getpid());
	if ((tfd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) < 0)
		return -1;
	if (write_all(tfd, data, len) < 0 || close(tfd) < 0) {
		unlink(tmp);
		return -1;
	}
	/* link() fails on an existing name, so concurrent children never
	 * take the same number and readers never see a partial file. */
	for (int n = 1; n < 100000; n++) {
		snprintf(final, sizeof(final), "%s/%d.%s", d, n, ext);
		if (link(tmp, final) == 0) {
			unlink(tmp);
			return n;
		}
		if (errno != EEXIST)
			break;
	}
	unlink(tmp);
	return -1;
}

static void
serve_hook(int fd, const struct req *rq)
{
	if (strcmp(rq->method, "POST") != 0) {
		respond_text(fd, rq, 400, "POST only\n");
		return;
	}
	if (store_numbered("hooks", "json", rq->body, rq->body_len) < 0) {
		respond_text(fd, rq, 500, "cannot store\n");
		return;
	}
	respond(fd, rq, 200, "Content-Type: application/json\r\n", "{}", 2);
}

static void
serve_echo(int fd, const struct req *rq)
{
	size_t len = rq->head_len + rq->body_len;
	char *out = malloc(len + 1);

	if (out == NULL)
		return;
	memcpy(out, rq->head, rq->head_len);
	memcpy(out + rq->head_len, rq->body, rq->body_len);
	respond(fd, rq, 200, "Content-Type: text/plain\r\n", out, len);
	free(out);
}

/* 1 when the first request per key: creates root/.state/NAME-KEY. */
static int
first_time(const char *name, const char *key)
{
	char d[PATH_MAX], p[PATH_MAX + 300];
	int sfd;

	snprintf(d, sizeof(d), "%s/.state", root);
	if (mkdir(d, 0755) < 0 && errno != EEXIST)
		return 0;
	snprintf(p, sizeof(p), "%s/%s-%s", d, name, key);
	if ((sfd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0644)) < 0)
		return 0;
	close(sfd);
	return 1;
}

static int
has_prefix(const char *s, const char *prefix, const char **rest)
{
	size_t n = strlen(prefix);

	if (strncmp(s, prefix, n) != 0)
		return 0;
	*rest = s + n;
	return 1;
}

/* One pkt-line of git's protocol: its length in 4 hex digits, then it. */
static void
pkt_line(FILE *out, const char *s, size_t len)
{
	fprintf(out, "%04zx", len + 4);
	fwrite(s, 1, len, out);
}

static void
serve_git_refs(int fd, const struct req *rq, const char *rest)
{
	static const char caps[] = "multi_ack side-band-64k ofs-delta";
	char name[PATH_MAX], path[2 * PATH_MAX], line[4096], pkt[4200];
	const char *tail = strstr(rest, "/info/refs");
	char *body = NULL;
	size_t len = 0;
	FILE *f, *out;
	int first = 1;

	if (tail == NULL || strcmp(tail, "/info/refs") != 0 ||
	    tail - rest >= (long)sizeof(name)) {
		respond_text(fd, rq, 404, "not found\n");
		return;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(tail - rest), rest);
	snprintf(path, sizeof(path), "%s/%s", root, name);
	if (!safe_name(name) || (f = fopen(path, "r")) == NULL) {
		respond_text(fd, rq, 404, "no such refs\n");
		return;
	}
	if ((out = open_memstream(&body, &len)) == NULL) {
		fclose(f);
		respond_text(fd, rq, 500, "out of memory\n");
		return;
	}
	pkt_line(out, "# service=git-upload-pack\n", 26);
	fputs("0000", out);
	while (fgets(line, sizeof(line), f) != NULL) {
		int n;

		line[strcspn(line, "\n")] = '\0';
		/* The first ref carries the capabilities after a NUL. */
		n = first ? snprintf(pkt, sizeof(pkt), "%s%c%s\n", line, '\0',
		    caps) : snprintf(pkt, sizeof(pkt), "%s\n", line);
		pkt_line(out, pkt, (size_t)n);
		first = 0;
	}
	fputs("0000", out);
	fclose(f);
	fclose(out);
	respond(fd, rq, 200, "Content-Type: "
	    "application/x-git-upload-pack-advertisement\r\n", body, len);
	free(body);
}

static void
handle_http(int fd)
{
	struct req *rq = calloc(1, sizeof(*rq));
	char location[4096];
	const char *rest;

	if (rq == NULL)
		return;
	if (read_request(fd, rq) < 0) {
		free(rq->body);
		free(rq);
		return;
	}
	if (has_prefix(rq->path, "/files/", &rest))
		serve_file(fd, rq, rest, 0, 0);
	else if (has_prefix(rq->path, "/drop/", &rest))
		serve_file(fd, rq, rest, F_DROP, 0);
	else if (has_prefix(rq->path, "/flip/", &rest))
		serve_file(fd, rq, rest, F_DROP | F_FLIP, 0);
	else if (has_prefix(rq->path, "/norange/", &rest))
		serve_file(fd, rq, rest, F_NORANGE, 0);
	else if (has_prefix(rq->path, "/416/", &rest))
		serve_file(fd, rq, rest, F_416, 0);
	else if (has_prefix(rq->path, "/hang/", &rest))
		serve_file(fd, rq, rest, F_HANG, 0);
	else if (has_prefix(rq->path, "/slow/", &rest))
		serve_file(fd, rq, rest, F_SLOW,
		    query_long(rq->query, "ms", 2000));
	else if (has_prefix(rq->path, "/rate/", &rest)) {
		char *slash;
		long kib = strtol(rest, &slash, 10);

		if (kib <= 0 || *slash != '/')
			respond_text(fd, rq, 404, "no rate\n");
		else
			serve_file(fd, rq, slash + 1, F_RATE, kib * 1024);
	} else if (has_prefix(rq->path, "/flaky503/", &rest)) {
		const char *slash = strchr(rest, '/');
		char key[256];

		if (slash == NULL || slash - rest >= (long)sizeof(key)) {
			respond_text(fd, rq, 404, "no key\n");
		} else {
			snprintf(key, sizeof(key), "%.*s", (int)(slash - rest),
			    rest);
			if (!safe_name(key))
				respond_text(fd, rq, 400, "bad key\n");
			else if (first_time("flaky503", key))
				respond_text(fd, rq, 503, "try again\n");
			else
				serve_file(fd, rq, slash + 1, 0, 0);
		}
	} else if (strcmp(rq->path, "/endless") == 0)
		serve_endless(fd, rq);
	else if (has_prefix(rq->path, "/status/", &rest))
		serve_status(fd, rq, rest);
	else if (strcmp(rq->path, "/redirect-file") == 0)
		redirect(fd, rq, "file:///etc/passwd");
	else if (strcmp(rq->path, "/redirect-http") == 0 ||
	    has_prefix(rq->path, "/redirect-http/", &rest)) {
		snprintf(location, sizeof(location),
		    "http://127.0.0.1:%d/files/%s", http_port,
		    strcmp(rq->path, "/redirect-http") == 0 ? "index" : rest);
		redirect(fd, rq, location);
	} else if (strcmp(rq->path, "/redirect-loop") == 0)
		redirect(fd, rq, "/redirect-loop");
	else if (has_prefix(rq->path, "/redirect-ok/", &rest)) {
		snprintf(location, sizeof(location), "/files/%s", rest);
		redirect(fd, rq, location);
	} else if (strcmp(rq->path, "/echo") == 0)
		serve_echo(fd, rq);
	else if (strcmp(rq->path, "/stream") == 0)
		serve_stream(fd, rq);
	else if (strcmp(rq->path, "/hook") == 0)
		serve_hook(fd, rq);
	else if (strcmp(rq->path, "/hook500") == 0)
		respond_text(fd, rq, 500, "hook failed\n");
	else if (strcmp(rq->path, "/hookslow") == 0) {
		sleep_ms(query_long(rq->query, "ms", 3000));
		respond(fd, rq, 200, "Content-Type: application/json\r\n",
		    "{}", 2);
	} else if (has_prefix(rq->path, "/git/", &rest))
		serve_git_refs(fd, rq, rest);
	else if (has_prefix(rq->path, "/api/repos/", &rest) &&
	    (strstr(rest, "/issues") != NULL ||
	    strstr(rest, "/comments") != NULL))
		serve_issues(fd, rq);
	else if (has_prefix(rq->path, "/api/repos/", &rest))
		serve_api(fd, rq);
	else
		respond_text(fd, rq, 404, "not found\n");
	free(rq->body);
	free(rq);
}

/* SMTP: a buffered line reader over the connection. */
struct lines {
	int fd;
	char buf[8192];
	size_t len;
};

/* Next line without its CRLF into out; -1 at EOF or on a line too long. */
static int
read_line(struct lines *l, char *out, size_t outlen)
{
	for (;;) {
		char *nl = memchr(l->buf, '\n', l->len);
		ssize_t n;

		if (nl != NULL) {
			size_t len = (size_t)(nl - l->buf);
			size_t keep = len;

			if (keep > 0 && l->buf[keep - 1] == '\r')
				keep--;
			if (keep >= outlen)
				return -1;
			memcpy(out, l->buf, keep);
			out[keep] = '\0';
			memmove(l->buf, nl + 1, l->len - len - 1);
			l->len -= len + 1;
			return 0;
		}
		if (l->len == sizeof(l->buf))
			return -1;
		n = read(l->fd, l->buf + l->len, sizeof(l->buf) - l->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		l->len += (size_t)n;
	}
}

static void
smtp_say(int fd, const char *s)
{
	write_all(fd, s, strlen(s));
}

static void
handle_smtp(int fd)
{
	struct lines l = { fd, { 0 }, 0 };
	char line[4096], from[512] = "", to[4096] = "";
	size_t cap = 1 << 20, mlen = 0;
	char *msg = NULL;

	smtp_say(fd, "220 testserver ESMTP\r\n");
	while (read_line(&l, line, sizeof(line)) == 0) {
		if (strncasecmp(line, "EHLO", 4) == 0 ||
		    strncasecmp(line, "HELO", 4) == 0)
			smtp_say(fd, "250 testserver\r\n");
		else if (strncasecmp(line, "MAIL FROM:", 10) == 0) {
			snprintf(from, sizeof(from), "%.*s",
			    (int)sizeof(from) - 1, line + 10);
			from[strcspn(from, " ")] = '\0';
			to[0] = '\0';
			smtp_say(fd, "250 OK\r\n");
		} else if (strncasecmp(line, "RCPT TO:", 8) == 0) {
			size_t tl = strlen(to);

			snprintf(to + tl, sizeof(to) - tl, "%s%s",
			    tl ? "," : "", line + 8);
			smtp_say(fd, "250 OK\r\n");
		} else if (strncasecmp(line, "DATA", 4) == 0) {
			char head[5000], logl[5000];
			int n;

			smtp_say(fd, "354 go ahead\r\n");
			free(msg);
			if ((msg = malloc(cap)) == NULL)
				return;
			n = snprintf(msg, cap, "X-Envelope-From: %s\r\n"
			    "X-Envelope-To: %s\r\n", from, to);
			mlen = (size_t)n;
			while (read_line(&l, line, sizeof(line)) == 0) {
				const char *p = line;
				size_t ll;

				if (strcmp(line, ".") == 0)
					break;
				if (line[0] == '.')
					p++;	/* dot-stuffing undone */
				ll = strlen(p);
				if (mlen + ll + 2 < cap) {
					memcpy(msg + mlen, p, ll);
					memcpy(msg + mlen + ll, "\r\n", 2);
					mlen += ll + 2;
				}
			}
			snprintf(logl, sizeof(logl),
			    "SMTP DATA from=%s to=%s status=250", from, to);
			log_line(logl);
			store_numbered("mail", "eml", msg, mlen);
			snprintf(head, sizeof(head), "250 queued\r\n");
			smtp_say(fd, head);
		} else if (strncasecmp(line, "RSET", 4) == 0 ||
		    strncasecmp(line, "NOOP", 4) == 0)
			smtp_say(fd, "250 OK\r\n");
		else if (strncasecmp(line, "QUIT", 4) == 0) {
			smtp_say(fd, "221 bye\r\n");
			break;
		} else
			smtp_say(fd, "502 not implemented\r\n");
	}
	free(msg);
}

static void
usage(void)
{
	fprintf(stderr, "usage: testserver --port-file FILE [--root DIR] "
	    "[--log FILE] [--smtp-port-file FILE]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	const char *port_file = NULL, *log_file = NULL, *smtp_file = NULL;
	struct pollfd pfd[2];
	int nfds = 1, smtp_port = 0;

	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "--port-file") == 0)
			port_file = argv[++i];
		else if (strcmp(argv[i], "--root") == 0)
			root = argv[++i];
		else if (strcmp(argv[i], "--log") == 0)
			log_file = argv[++i];
		else if (strcmp(argv[i], "--smtp-port-file") == 0)
			smtp_file = argv[++i];
		else
			usage();
	}
	if (port_file == NULL)
		usage();
	if (log_file != NULL && (log_fd = open(log_file, O_WRONLY | O_CREAT |
	    O_APPEND | O_CLOEXEC, 0644)) < 0)
		die("cannot open '%s': %s", log_file, strerror(errno));
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_IGN);	/* children are reaped by the kernel */
	alarm(LIFETIME_S);

	pfd[0].fd = listen_loopback(0, 0, &http_port);
	pfd[0].events = POLLIN;
	if (smtp_file != NULL) {
		pfd[1].fd = listen_loopback(0, 0, &smtp_port);
		pfd[1].events = POLLIN;
		nfds = 2;
		write_port_file(smtp_file, smtp_port);
	}
	write_port_file(port_file, http_port);

	for (;;) {
		if (poll(pfd, (nfds_t)nfds, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		for (int i = 0; i < nfds; i++) {
			pid_t pid;
			int c;

			if (!(pfd[i].revents & POLLIN))
				continue;
			if ((c = accept4(pfd[i].fd, NULL, NULL,
			    SOCK_CLOEXEC)) < 0)
				continue;
			if ((pid = fork()) == 0) {
				close(pfd[0].fd);
				if (nfds == 2)
					close(pfd[1].fd);
				alarm(LIFETIME_S);
				if (i == 0)
					handle_http(c);
				else
					handle_smtp(c);
				shutdown(c, SHUT_WR);
				close(c);
				_exit(0);
			}
			close(c);
		}
	}
}
