/*
 * fake-engine_serve.c: the fake engine's server mode (--server): GET
 * /health and POST /v1/completions, streamed or whole, one request a
 * connection, each costing its prompt's and its tokens' work.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <jansson.h>

#include "fake-common.h"
#include "fake-engine_int.h"

#define HEADER_MAX (16 * 1024)
#define BODY_MAX (1024 * 1024)

static int
send_response(int fd, int status, const char *reason, const char *type,
    const char *body)
{
	char head[256];

	snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n\r\n", status,
	    reason, type, strlen(body));
	if (write_all(fd, head, strlen(head)) < 0)
		return -1;
	return write_all(fd, body, strlen(body));
}

static int
count_words(const char *s)
{
	int n = 0, in_word = 0;

	for (; *s; s++) {
		if (strchr(" \t\r\n", *s) != NULL)
			in_word = 0;
		else if (!in_word) {
			in_word = 1;
			n++;
		}
	}
	return n;
}

/* Append a request's body to $FAKE_ENGINE_REQUEST_LOG, one line. */
static void
log_request(json_t *req)
{
	const char *path = getenv("FAKE_ENGINE_REQUEST_LOG");
	char *line;
	FILE *f;

	if (path == NULL || *path == '\0')
		return;
	if ((line = json_dumps(req, JSON_COMPACT | JSON_SORT_KEYS)) == NULL ||
	    (f = fopen(path, "a")) == NULL)
		die("cannot log the request to '%s': %s", path,
		    strerror(errno));
	fprintf(f, "%s\n", line);
	if (fclose(f) == EOF)
		die("cannot write '%s': %s", path, strerror(errno));
	free(line);
}

/*
 * The number of this completions request among all those the release's
 * servers have answered, from 1.  Each run starts a server of its own,
 * so the count is kept in a file, under a lock for servers side by side.
 */
static long
request_number(const struct release *rel)
{
	char path[PATH_MAX + 16], text[32];
	ssize_t n;
	long count;
	int fd;

	snprintf(path, sizeof(path), "%s.requests", rel->path);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0 ||
	    flock(fd, LOCK_EX) < 0 ||
	    (n = pread(fd, text, sizeof(text) - 1, 0)) < 0)
		die("cannot count requests in '%s': %s", path,
		    strerror(errno));
	text[n] = '\0';
	count = atol(text) + 1;
	n = snprintf(text, sizeof(text), "%ld\n", count);
	if (ftruncate(fd, 0) < 0 || pwrite(fd, text, (size_t)n, 0) != n)
		die("cannot count requests in '%s': %s", path,
		    strerror(errno));
	close(fd);
	return count;
}

/* What the first token of this request is, as the release says. */
static enum empty_kind
empty_first(const struct release *rel, int eos_held_back)
{
	long k;

	if (rel->empty_every == 0)
		return EMPTY_NONE;
	k = request_number(rel);
	if (k % rel->empty_every != 0 ||
	    (rel->empty_kind == EMPTY_EOS && eos_held_back))
		return EMPTY_NONE;
	fprintf(stderr, "fake-engine: request %ld: the first token is %s\n",
	    k, rel->empty_kind == EMPTY_EOS ? "end-of-text" :
	    "half a UTF-8 character");
	return rel->empty_kind;
}

static void
completions(int fd, const struct release *rel, const char *body,
    size_t body_len)
{
	const char *prompt = NULL, *piece;
	json_error_t je;
	json_t *req;
	json_int_t max_tokens = 16, seed = -1, min_tokens = 0;
	static const char stream_head[] = "HTTP/1.1 200 OK\r\n"
	    "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
	    "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
	enum empty_kind empty;
	int stream = 0, ignore_eos = 0, words, i;
	double speedup, f, temperature = 1;
	char event[128];

	/* Types are checked as a server's would be: a field of the wrong
	 * kind is a 400, not ignored. */
	req = json_loadb(body, body_len, 0, &je);
	if (req == NULL || json_unpack_ex(req, &je, 0,
	    "{s:s, s?I, s?b, s?I, s?F, s?b, s?I}", "prompt", &prompt,
	    "max_tokens", &max_tokens, "stream", &stream, "seed", &seed,
	    "temperature", &temperature, "ignore_eos", &ignore_eos,
	    "min_tokens", &min_tokens) < 0 || max_tokens < 0 ||
	    max_tokens > 100000 || temperature < 0 || min_tokens < 0) {
		send_response(fd, 400, "Bad Request", "application/json",
		    "{\"error\":\"expected {prompt, max_tokens, stream, "
		    "seed, temperature, ignore_eos, min_tokens}\"}");
		json_decref(req);
		return;
	}
	log_request(req);
	if (rel->fail == FAIL_GARBAGE) {
		send_response(fd, 200, "OK", "text/event-stream",
		    "d\x01ta: {garbage\n\n");
		json_decref(req);
		return;
	}
	words = count_words(prompt);
	speedup = speedup_for(rel, prompt, strlen(prompt));
	f = noise_factor(rel->noise_cv);
	json_decref(req);
	empty = stream ? empty_first(rel, ignore_eos || min_tokens >= 1) :
	    EMPTY_NONE;

	burn((rel->fixed_us + words * rel->prefill_us) * f);
	if (!stream) {
		char *text = malloc((size_t)max_tokens * 4 + 1);
		json_t *resp;
		char *out;

		if (text == NULL)
			die("out of memory");
		for (i = 0; i < max_tokens && !stopping; i++) {
			burn(rel->decode_us / speedup * f);
			memcpy(text + 4 * i, " tok", 4);
		}
		text[4 * i] = '\0';
		resp = json_pack("{s:s, s:[{s:s, s:i, s:s}], s:{s:i, s:i}}",
		    "object", "text_completion", "choices", "text", text,
		    "index", 0, "finish_reason", "length", "usage",
		    "prompt_tokens", words, "completion_tokens", i);
		out = json_dumps(resp, JSON_COMPACT);
		send_response(fd, 200, "OK", "application/json", out);
		free(out);
		free(text);
		json_decref(resp);
		return;
	}
	if (write_all(fd, stream_head, sizeof(stream_head) - 1) < 0)
		return;
	for (i = 0; i < max_tokens && !stopping; i++) {
		/* Every token, the first included, costs a decode step. */
		burn(rel->decode_us / speedup * f);
		if (empty == EMPTY_EOS)
			break;
		/* Half a character streams nothing until the next token
		 * completes it. */
		if (empty == EMPTY_UTF8 && i == 0)
			continue;
		piece = empty == EMPTY_UTF8 && i == 1 ? "\xc3\xa9" : " tok";
		snprintf(event, sizeof(event), "data: {\"choices\":[{\"text\":"
		    "\"%s\",\"index\":0}]}\n\n", piece);
		if (write_chunk(fd, event) < 0)
			return;
	}
	/* Generation ended with nothing streamed: the last event says why,
	 * with no text, as a server's does. */
	if (empty == EMPTY_EOS || (empty == EMPTY_UTF8 && i <= 1)) {
		snprintf(event, sizeof(event), "data: {\"choices\":[{\"text\":"
		    "\"\",\"index\":0,\"finish_reason\":\"%s\"}]}\n\n",
		    empty == EMPTY_EOS ? "stop" : "length");
		if (write_chunk(fd, event) < 0)
			return;
	}
	if (write_chunk(fd, "data: [DONE]\n\n") == 0)
		write_all(fd, "0\r\n\r\n", 5);
}

/* Read one request; answer it.  Malformed or slow clients are dropped. */
static void
handle(int fd, const struct release *rel)
{
	struct timeval tv = { 5, 0 };
	char *req, *end, *cl, method[16], target[256];
	size_t len = 0, head_len, body_len = 0;
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if ((req = malloc(HEADER_MAX + BODY_MAX + 1)) == NULL)
		die("out of memory");
	for (;;) {
		n = recv(fd, req + len, HEADER_MAX - len, 0);
		if (n <= 0)
			goto out;
		len += (size_t)n;
		req[len] = '\0';
		if ((end = strstr(req, "\r\n\r\n")) != NULL)
			break;
		if (len == HEADER_MAX)
			goto out;
	}
	head_len = (size_t)(end - req) + 4;
	if (sscanf(req, "%15s %255s", method, target) != 2)
		goto out;
	*end = '\0';
	if ((cl = strcasestr(req, "\r\ncontent-length:")) != NULL)
		body_len = strtoul(cl + 17, NULL, 10);
	if (body_len > BODY_MAX) {
		send_response(fd, 413, "Payload Too Large", "text/plain",
		    "too large\n");
		goto out;
	}
	/* curl waits a second for this before sending a large body. */
	if (len < head_len + body_len &&
	    strcasestr(req, "\r\nexpect: 100-continue") != NULL &&
	    write_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25) < 0)
		goto out;
	while (len < head_len + body_len) {
		n = recv(fd, req + len, head_len + body_len - len, 0);
		if (n <= 0)
			goto out;
		len += (size_t)n;
	}
	if (strcmp(target, "/health") == 0 && strcmp(method, "GET") == 0)
		send_response(fd, 200, "OK", "application/json",
		    "{\"status\":\"ok\"}");
	else if (strcmp(target, "/v1/completions") == 0 &&
	    strcmp(method, "POST") == 0)
		completions(fd, rel, req + head_len, body_len);
	else
		send_response(fd, 404, "Not Found", "text/plain",
		    "not found\n");
out:
	free(req);
}

int
serve(const struct release *rel, const struct opts *o)
{
	struct pollfd pfd;
	int fd, c, port;

	/* A server stops cleanly on SIGTERM; bench runs die of it. */
	stop_on_signals();
	fd = listen_loopback(o->port, 0, &port);
	if (o->port_file != NULL)
		write_port_file(o->port_file, port);
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (!stopping) {
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		if ((c = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) < 0)
			continue;
		handle(c, rel);
		close(c);
	}
	close(fd);
	return 0;
}
