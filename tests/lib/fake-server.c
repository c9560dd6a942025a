/*
 * fake-server.c: a stand-in for an inference server under load, packed
 * into release archives for the serve-mode tests and the load client's
 * bench.  It streams OpenAI-style completions (POST /v1/completions)
 * and llama-server's (POST /completion) over keep-alive HTTP/1.1, with
 * a scripted cost kept on a virtual schedule, not burnt: a number of
 * slots, requests queued for a free one, a prefill time per prompt
 * word, a decode time per token, and now and then a stall.
 *
 * release.conf ("key = value" lines, '#' comments) at the archive's
 * root, beside bin/fake-server; --release FILE names another.  Keys:
 *   version               the release
 *   slots                 requests served at once (default 4)
 *   scheduler             continuous (default): a queued request takes
 *                         the first slot that frees; static: new
 *                         requests are admitted only once every slot is
 *                         free, a batch at a time (a slower scheduler
 *                         that an idle server does not show)
 *   fixed_us              per request, before its first token
 *   prefill_us_per_token  per prompt word, before the first token
 *   decode_us_per_token   between two tokens
 *   stall_p, stall_us     each token is late by stall_us with
 *                         probability stall_p
 *   drop_every            N: every Nth stream (1: all) is cut after its
 *                         first token, the connection closed
 *
 * fake-server --port N [--release FILE].  GET /health answers 200.
 * SIGTERM stops it.
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "fake-common.h"
#include "fake-release.h"

#define MAX_CONNS	1100
#define REQ_MAX		(256 * 1024)

struct release {
	char version[64];
	int slots;
	int static_batch;
	double fixed_us, prefill_us, decode_us, stall_p, stall_us;
	int drop_every;
};

struct conn {
	int fd;			/* -1: free */
	char *in;		/* the request being read; malloced */
	size_t len;
	/* The stream, once admitted: */
	int active;		/* a completion is queued or streaming */
	int llama;		/* the dialect */
	int words, tokens, sent;	/* prompt words, tokens asked, sent */
	int admitted;
	int drop;		/* cut after the first token */
	int64_t arrived, next_ns;	/* when queued; the next token due */
};

const char *const progname = "fake-server";
static struct conn conns[MAX_CONNS];
static struct release rel = { "0", 4, 0, 0, 0, 0, 0, 0, 0 };
static int busy_slots, streams;
static uint64_t rng = 88172645463325252u;

static double
uniform01(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) * 0x1p-53;
}

static void
conf_set(void *arg, const char *path, int line, const char *k,
    const char *v)
{
	(void)arg;
	if (strcmp(k, "version") == 0)
		snprintf(rel.version, sizeof(rel.version), "%s", v);
	else if (strcmp(k, "slots") == 0 && atoi(v) > 0)
		rel.slots = atoi(v);
	else if (strcmp(k, "scheduler") == 0 &&
	    (strcmp(v, "static") == 0 || strcmp(v, "continuous") == 0))
		rel.static_batch = strcmp(v, "static") == 0;
	else if (strcmp(k, "fixed_us") == 0)
		rel.fixed_us = atof(v);
	else if (strcmp(k, "prefill_us_per_token") == 0)
		rel.prefill_us = atof(v);
	else if (strcmp(k, "decode_us_per_token") == 0)
		rel.decode_us = atof(v);
	else if (strcmp(k, "stall_p") == 0)
		rel.stall_p = atof(v);
	else if (strcmp(k, "stall_us") == 0)
		rel.stall_us = atof(v);
	else if (strcmp(k, "drop_every") == 0)
		rel.drop_every = atoi(v);
	else
		die("%s:%d: unknown key or bad value '%s'", path, line, k);
}

static void
conn_close(struct conn *c)
{
	if (c->active && c->admitted)
		busy_slots--;
	close(c->fd);
	free(c->in);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static void
answer(struct conn *c, int status, const char *reason, const char *body)
{
	char head[256];

	snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\nContent-Type: "
	    "text/plain\r\nContent-Length: %zu\r\n\r\n", status, reason,
	    strlen(body));
	if (write_all(c->fd, head, strlen(head)) < 0 ||
	    write_all(c->fd, body, strlen(body)) < 0)
		conn_close(c);
}

static int
count_words(const char *s)
{
	int n = 0, in = 0;

	for (; *s; s++) {
		int sp = *s == ' ' || *s == '\n' || *s == '\t';

		n += !sp && !in;
		in = !sp;
	}
	return n;
}

/* A completion request: queue it. */
static void
completion(struct conn *c, const char *body, int llama)
{
	json_t *req = json_loads(body, 0, NULL);
	json_t *prompt = json_object_get(req, "prompt");
	json_t *max = json_object_get(req, llama ? "n_predict" : "max_tokens");
	static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: "
	    "text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";

	if (!json_is_string(prompt) || !json_is_integer(max) ||
	    json_integer_value(max) < 1 || json_integer_value(max) > 100000) {
		json_decref(req);
		answer(c, 400, "Bad Request", "expected prompt and max_tokens");
		return;
	}
	c->words = count_words(json_string_value(prompt));
	c->tokens = (int)json_integer_value(max);
	json_decref(req);
	c->llama = llama;
	c->sent = 0;
	c->admitted = 0;
	c->active = 1;
	c->arrived = now_ns();
	streams++;
	c->drop = rel.drop_every > 0 && streams % rel.drop_every == 0;
	if (write_all(c->fd, head, sizeof(head) - 1) < 0)
		conn_close(c);
}

/* A whole request has been read into c->in: route it. */
static void
route(struct conn *c, size_t head_len, size_t body_len)
{
	const char *body = c->in + head_len;

	c->in[head_len - 1] = '\0';
	if (strncmp(c->in, "GET /health ", 12) == 0)
		answer(c, 200, "OK", "{\"status\":\"ok\"}");
	else if (strncmp(c->in, "POST /v1/completions ", 21) == 0 ||
	    strncmp(c->in, "POST /completion ", 17) == 0) {
		char *b = strndup(body, body_len);

		if (b == NULL)
			die("out of memory");
		completion(c, b, c->in[6] != 'v');
		free(b);
	} else
		answer(c, 404, "Not Found", "no such path");
	if (c->fd < 0)
		return;
	memmove(c->in, c->in + head_len + body_len,
	    c->len - head_len - body_len);
	c->len -= head_len + body_len;
}

static void
read_conn(struct conn *c)
{
	char *end, *cl;
	size_t head, body = 0;
	ssize_t n;

	if ((c->in = realloc(c->in, REQ_MAX + 1)) == NULL)
		die("out of memory");
	n = recv(c->fd, c->in + c->len, REQ_MAX - c->len, 0);
	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			conn_close(c);
		return;
	}
	c->len += (size_t)n;
	c->in[c->len] = '\0';
	if (c->active || (end = strstr(c->in, "\r\n\r\n")) == NULL) {
		if (c->len >= REQ_MAX)
			conn_close(c);
		return;	/* one request at a time on a connection */
	}
	head = (size_t)(end - c->in) + 4;
	if ((cl = strcasestr(c->in, "\r\nContent-Length:")) != NULL && cl < end)
		body = strtoul(cl + 17, NULL, 10);
	if (head + body > REQ_MAX) {
		conn_close(c);
		return;
	}
	if (c->len >= head + body)
		route(c, head, body);
}

/* Admit queued requests to free slots, oldest first: at once, or as a
 * static batch once the server is idle. */
static void
admit(int64_t t)
{
	if (rel.static_batch && busy_slots > 0)
		return;
	while (busy_slots < rel.slots) {
		struct conn *oldest = NULL;

		for (int i = 0; i < MAX_CONNS; i++) {
			struct conn *c = &conns[i];

			if (c->fd >= 0 && c->active && !c->admitted &&
			    (oldest == NULL || c->arrived < oldest->arrived))
				oldest = c;
		}
		if (oldest == NULL)
			return;
		oldest->admitted = 1;
		oldest->next_ns = t + (int64_t)((rel.fixed_us +
		    rel.prefill_us * oldest->words) * 1000);
		busy_slots++;
	}
}

/* Stream the token of c that is due. */
static void
stream_token(struct conn *c, int64_t t)
{
	char ev[256];
	int last = c->sent + 1 == c->tokens;

	if (c->llama)
		snprintf(ev, sizeof(ev), "data: {\"content\":\" tok\","
		    "\"stop\":false}\n\n");
	else
		snprintf(ev, sizeof(ev), "data: {\"choices\":[{\"text\":\" "
		    "tok\",\"index\":0,\"finish_reason\":%s}]}\n\n", last ?
		    "\"length\"" : "null");
	if (write_chunk(c->fd, ev) < 0) {
		conn_close(c);
		return;
	}
	c->sent++;
	if (c->drop) {
		conn_close(c);	/* the stream is cut */
		return;
	}
	if (!last) {
		double us = rel.decode_us;

		if (rel.stall_p > 0 && uniform01() < rel.stall_p)
			us += rel.stall_us;
		c->next_ns = t + (int64_t)(us * 1000);
		return;
	}
	if (c->llama)
		snprintf(ev, sizeof(ev), "data: {\"content\":\"\",\"stop\":true,"
		    "\"stopped_limit\":true,\"tokens_predicted\":%d,"
		    "\"tokens_evaluated\":%d}\n\n", c->tokens, c->words);
	else
		snprintf(ev, sizeof(ev), "data: {\"choices\":[],\"usage\":{"
		    "\"prompt_tokens\":%d,\"completion_tokens\":%d}}\n\n"
		    "data: [DONE]\n\n", c->words, c->tokens);
	if (write_chunk(c->fd, ev) < 0 ||
	    write_all(c->fd, "0\r\n\r\n", 5) < 0) {
		conn_close(c);
		return;
	}
	c->active = 0;
	c->admitted = 0;
	busy_slots--;
}

static void
serve(int port)
{
	static struct pollfd pfd[MAX_CONNS + 1];
	static int of[MAX_CONNS + 1];	/* pfd[k]'s connection */
	int lfd, one = 1;

	lfd = listen_loopback(port, SOCK_NONBLOCK, NULL);
	for (int i = 0; i < MAX_CONNS; i++)
		conns[i].fd = -1;
	while (!stopping) {
		int64_t t = now_ns(), next = t + 200000000;
		struct timespec wait;
		int np = 1;

		admit(t);
		for (int i = 0; i < MAX_CONNS; i++) {
			struct conn *c = &conns[i];

			if (c->fd >= 0 && c->active && c->admitted) {
				if (c->next_ns <= t)
					stream_token(c, t);
				if (c->fd >= 0 && c->active && c->admitted &&
				    c->next_ns < next)
					next = c->next_ns;
			}
		}
		admit(now_ns());
		pfd[0].fd = lfd;
		pfd[0].events = POLLIN;
		for (int i = 0; i < MAX_CONNS; i++)
			if (conns[i].fd >= 0) {
				pfd[np].fd = conns[i].fd;
				pfd[np].events = POLLIN;
				pfd[np].revents = 0;
				of[np++] = i;
			}
		t = now_ns();
		/* To the nanosecond: a token is neither early nor spun for. */
		wait.tv_sec = next > t ? (next - t) / 1000000000 : 0;
		wait.tv_nsec = next > t ? (next - t) % 1000000000 : 0;
		if (ppoll(pfd, (nfds_t)np, &wait, NULL) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (pfd[0].revents & POLLIN) {
			int fd;

			while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC |
			    SOCK_NONBLOCK)) >= 0) {
				int i;

				for (i = 0; i < MAX_CONNS && conns[i].fd >= 0;
				    i++)
					;
				if (i == MAX_CONNS) {
					close(fd);
					continue;
				}
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
				    sizeof(one));
				conns[i].fd = fd;
			}
		}
		for (int k = 1; k < np; k++)
			if ((pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) &&
			    conns[of[k]].fd == pfd[k].fd)
				read_conn(&conns[of[k]]);
	}
	close(lfd);
}

int
main(int argc, char **argv)
{
	const char *release = NULL;
	char path[PATH_MAX];
	int port = -1;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
			port = atoi(argv[++i]);
		else if (strcmp(argv[i], "--release") == 0 && i + 1 < argc)
			release = argv[++i];
		else
			die("usage: fake-server --port N [--release FILE]");
	}
	if (port < 0)
		die("usage: fake-server --port N [--release FILE]");
	fake_release_read(release, path, sizeof(path), conf_set, NULL);
	stop_on_signals();
	serve(port);
	return 0;
}
