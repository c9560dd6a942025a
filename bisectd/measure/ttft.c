/*
 * ttft.c: time to first token against an engine's server (see ttft.h).
 * The server runs under the runner; the requests go through fetch/http.h;
 * this file owns the readiness wait, the prompt, the stream parsing and
 * the clock.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/err.h"
#include "fetch/http.h"
#include "bisectd/process/runner.h"
#include "ttft.h"

#define NS_PER_MS		1000000LL
#define READY_DEFAULT_MS	60000
#define REQUEST_DEFAULT_MS	(10 * 60 * 1000)
#define HEALTH_POLL_MS		50
#define MAX_PROMPT_WORDS	1000000
#define HEAD_KEPT		512	/* body bytes kept for messages */

struct ttft_server {
	struct run_proc *proc;	/* owned */
	int allow_http;
	unsigned seq;		/* requests so far: varies the prompt */
};

static void
sleep_ms(int64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) *
	    1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

const char *
ttft_status_name(enum ttft_status st)
{
	switch (st) {
	case TTFT_OK:
		return "ok";
	case TTFT_SPAWN:
		return "spawn";
	case TTFT_DIED:
		return "died";
	case TTFT_NOT_READY:
		return "not-ready";
	case TTFT_HTTP:
		return "http";
	case TTFT_NO_TOKEN:
		return "no-token";
	case TTFT_RUNNER:
		return "runner";
	}
	return "unknown";
}

static void
result_init(struct ttft_result *r, int prompt_tokens)
{
	memset(r, 0, sizeof(*r));
	r->lower_bound = 1;
	r->prompt_tokens = prompt_tokens;
}

/* Set r's failure and e's message alike; returns -1. */
static int
fail(struct ttft_result *r, struct err *e, enum ttft_status st,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int
fail(struct ttft_result *r, struct err *e, enum ttft_status st,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
	r->status = st;
	return err_set(e, "%s", r->detail);
}

/* The last line or so of a run's stderr, one line, for messages. */
static void
stderr_tail(const struct run_result *run, char *out, size_t len)
{
	const char *s = run->errtail.data ? run->errtail.data : "";
	size_t n = strlen(s), i, w = 0;

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	i = n > 200 ? n - 200 : 0;
	for (; i < n && w + 1 < len; i++)
		out[w++] = s[i] == '\n' || s[i] == '\r' ? ' ' : s[i];
	out[w] = '\0';
}

/* Why the server ended, with what it said last. */
static int
server_ended(struct ttft_result *r, struct err *e, enum ttft_status st,
    const struct run_result *run, const char *when)
{
	char how[600], tail[256];

	run_describe(run, how, sizeof(how));
	stderr_tail(run, tail, sizeof(tail));
	if (run->reason == RUN_SPAWN)
		return fail(r, e, TTFT_SPAWN, "server: %s", how);
	return fail(r, e, st, "server %s %s%s%s", how, when,
	    tail[0] ? "; its stderr ends: " : "", tail);
}

/* ---- the stream ---- */

void
ttft_sse_init(struct ttft_sse *p)
{
	p->len = 0;
	p->overflow = 0;
	p->finish[0] = '\0';
	p->detail[0] = '\0';
}

static int
nonempty_string(json_t *v)
{
	return json_is_string(v) && json_string_length(v) > 0;
}

/* One complete line of the stream: 1 token, 0 nothing yet, -1 end. */
static int
sse_line(struct ttft_sse *p, char *line)
{
	json_t *ev, *choice, *finish;
	char *payload, *dump;
	int token;

	if (strncmp(line, "data:", 5) != 0)
		return 0;	/* comments, event:, id:, retry: */
	payload = line + 5;
	if (*payload == ' ')
		payload++;
	if (strcmp(payload, "[DONE]") == 0) {
		/* "stop" says the first token was end-of-text, "length"
		 * that it streamed no text (half a UTF-8 character). */
		if (p->finish[0] != '\0')
			snprintf(p->detail, sizeof(p->detail), "the stream "
			    "ended ([DONE]) before any token (finish_reason "
			    "\"%s\")", p->finish);
		else
			snprintf(p->detail, sizeof(p->detail), "the stream "
			    "ended ([DONE]) before any token");
		return -1;
	}
	if (*payload == '\0')
		return 0;
	/* Data that is not JSON is still data: a token of a plain-text
	 * stream. */
	if ((ev = json_loads(payload, 0, NULL)) == NULL)
		return 1;
	if (json_object_get(ev, "error") != NULL) {
		dump = json_dumps(json_object_get(ev, "error"),
		    JSON_COMPACT | JSON_ENCODE_ANY);
		snprintf(p->detail, sizeof(p->detail), "the server streamed "
		    "an error: %.200s", dump ? dump : "?");
		free(dump);
		json_decref(ev);
		return -1;
	}
	choice = json_array_get(json_object_get(ev, "choices"), 0);
	finish = json_object_get(choice, "finish_reason");
	if (nonempty_string(finish))
		snprintf(p->finish, sizeof(p->finish), "%.*s",
		    (int)sizeof(p->finish) - 1, json_string_value(finish));
	token = nonempty_string(json_object_get(choice, "text")) ||
	    nonempty_string(json_object_get(json_object_get(choice, "delta"),
	    "content")) ||
	    nonempty_string(json_object_get(ev, "content"));
	json_decref(ev);
	return token;
}

int
ttft_sse_feed(struct ttft_sse *p, const char *data, size_t len)
{
	size_t i;
	int rc;

	for (i = 0; i < len; i++) {
		if (data[i] != '\n') {
			if (p->len + 1 < sizeof(p->line))
				p->line[p->len++] = data[i];
			else
				p->overflow = 1;
			continue;
		}
		if (p->len > 0 && p->line[p->len - 1] == '\r')
			p->len--;
		p->line[p->len] = '\0';
		/* An overlong line is cut; as data, it still counts. */
		rc = sse_line(p, p->line);
		p->len = 0;
		p->overflow = 0;
		if (rc != 0)
			return rc;
	}
	return 0;
}

struct stream_ctx {
	struct ttft_sse sse;
	struct buf head;	/* the body's first bytes, for messages */
	int64_t t_first;
	int outcome;		/* 1 token, -1 end without one, 0 neither */
};

static int
on_chunk(void *arg, const char *data, size_t len)
{
	struct stream_ctx *c = arg;
	int64_t arrived = clock_now_ns();	/* before any parsing */

	buf_add_capped(&c->head, data, len);
	c->outcome = ttft_sse_feed(&c->sse, data, len);
	if (c->outcome == 1)
		c->t_first = arrived;
	return c->outcome != 0;	/* stop at the first token or the end */
}

/* n words from a small vocabulary, seeded so each request differs. */
static char *
make_prompt(int n, uint64_t seed)
{
	static const char *const words[] = {
		"the", "of", "and", "to", "in", "is", "was", "that", "for",
		"on", "with", "as", "by", "at", "from", "this", "it", "an",
		"be", "are", "or", "which", "one", "all", "were", "their",
		"there", "been", "has", "more", "when", "would", "time",
		"about", "into", "water", "river", "city", "light", "house",
		"world", "small", "great", "year", "long", "day", "work",
		"part", "place", "number", "people", "sound", "point", "word"
	};
	const size_t nwords = sizeof(words) / sizeof(words[0]);
	struct buf b = BUF_INIT((size_t)n * 8 + 16);
	uint64_t x = seed | 1;
	int i;

	for (i = 0; i < n; i++) {
		/* xorshift64: cheap, and good enough to defeat caches */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if ((i > 0 && buf_add(&b, " ", 1) < 0) ||
		    buf_addstr(&b, words[x % nwords]) < 0) {
			buf_release(&b);
			return NULL;
		}
	}
	return buf_take(&b);
}

int
ttft_measure(struct ttft_server *srv, const struct ttft_request *rq,
    struct ttft_result *r, struct err *e)
{
	struct http_opts o = HTTP_OPTS_INIT;
	struct stream_ctx ctx;
	struct err herr = ERR_INIT;
	int64_t timeout_ms, t0;
	char *prompt = NULL, *body = NULL;
	json_t *req;
	long status = 0;
	int rc, i;

	result_init(r, rq->prompt_tokens);
	if (rq->prompt == NULL && (rq->prompt_tokens < 1 ||
	    rq->prompt_tokens > MAX_PROMPT_WORDS))
		return fail(r, e, TTFT_HTTP, "prompt of %d tokens: expected "
		    "1 to %d", rq->prompt_tokens, MAX_PROMPT_WORDS);
	if (rq->max_tokens < 1)
		return fail(r, e, TTFT_HTTP, "max_tokens %d: expected 1 or "
		    "more", rq->max_tokens);
	if (run_proc_exited(srv->proc))
		return fail(r, e, TTFT_DIED, "server ended before the request "
		    "to '%s'", rq->url);
	srv->seq++;
	if (rq->prompt == NULL && (prompt = make_prompt(rq->prompt_tokens,
	    (uint64_t)clock_now_ns() ^ ((uint64_t)srv->seq << 40))) == NULL)
		return fail(r, e, TTFT_HTTP, "cannot build a prompt of %d "
		    "words: out of memory", rq->prompt_tokens);
	req = json_loads(TTFT_REQUEST_FIELDS, 0, NULL);
	if (req != NULL && (json_object_set_new(req, "prompt", json_string(
	    rq->prompt ? rq->prompt : prompt)) < 0 ||
	    json_object_set_new(req, "max_tokens",
	    json_integer(rq->max_tokens)) < 0 ||
	    json_object_set_new(req, "stream", json_true()) < 0)) {
		json_decref(req);
		req = NULL;
	}
	body = req ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	free(prompt);
	if (body == NULL)
		return fail(r, e, TTFT_HTTP, "cannot encode the request to "
		    "'%s'", rq->url);

	timeout_ms = rq->timeout_ms > 0 ? rq->timeout_ms : REQUEST_DEFAULT_MS;
	o.allow_http = srv->allow_http;
	o.total_timeout_ms = timeout_ms;
	/* Prefill may send nothing for a long time: only the timeout
	 * bounds it. */
	o.low_speed_time_s = (long)(timeout_ms / 1000) + 1;
	o.max_retries = 0;
	memset(&ctx, 0, sizeof(ctx));
	ttft_sse_init(&ctx.sse);
	buf_init(&ctx.head, HEAD_KEPT);

	t0 = clock_now_ns();
	rc = http_stream_post(rq->url, &o, "application/json", body,
	    strlen(body), on_chunk, &ctx, &status, &herr);
	free(body);
	r->http_status = status;
	if (rc == 0 && ctx.outcome == 1 && status >= 200 && status < 300) {
		r->ttft_ns = ctx.t_first - t0;
		r->status = TTFT_OK;
		buf_release(&ctx.head);
		return 0;
	}
	if (rc < 0) {
		/* A server that died mid-request drops the connection: give
		 * the runner a moment to notice, then say which it was. */
		for (i = 0; i < 20 && !run_proc_exited(srv->proc); i++)
			sleep_ms(10);
		if (run_proc_exited(srv->proc))
			rc = fail(r, e, TTFT_DIED, "server ended during the "
			    "request to '%s' (%s)", rq->url, herr.msg);
		else
			rc = fail(r, e, TTFT_HTTP, "%s", herr.msg);
	} else if (status < 200 || status >= 300)
		rc = fail(r, e, TTFT_HTTP, "'%s' answered HTTP %ld: %.300s",
		    rq->url, status, ctx.head.data ? ctx.head.data : "");
	else if (ctx.outcome < 0)
		rc = fail(r, e, TTFT_NO_TOKEN, "'%s': %s", rq->url,
		    ctx.sse.detail);
	else
		rc = fail(r, e, TTFT_NO_TOKEN, "the answer of '%s' ended "
		    "without a streamed token (does the server stream?)",
		    rq->url);
	buf_release(&ctx.head);
	return rc;
}

/* ---- the server ---- */

static void
stop_into(struct run_proc *p, struct run_result *server_run)
{
	struct run_result run;

	run_proc_stop(p, &run);
	if (server_run != NULL)
		*server_run = run;
	else
		run_result_release(&run);
}

int
ttft_server_start(const struct ttft_server_spec *s, struct ttft_server **out,
    struct ttft_result *r, struct run_result *server_run, struct err *e)
{
	struct http_opts o = HTTP_OPTS_INIT;
	struct http_response resp;
	struct run_result run;
	struct run_proc *p;
	struct err herr = ERR_INIT;
	int64_t wait_ms, deadline;
	char last[600] = "no answer yet";
	int rc;

	*out = NULL;
	result_init(r, 0);
	if (server_run != NULL)
		run_result_init(server_run);
	if (s->health_url == NULL)
		return fail(r, e, TTFT_NOT_READY, "server mode needs a health "
		    "URL");
	if (run_start(&s->proc, &p, e) < 0) {
		snprintf(r->detail, sizeof(r->detail), "%s", e->msg);
		r->status = TTFT_RUNNER;
		return -1;
	}
	wait_ms = s->ready_timeout_ms > 0 ? s->ready_timeout_ms :
	    READY_DEFAULT_MS;
	deadline = clock_now_ns() + wait_ms * NS_PER_MS;
	o.allow_http = s->allow_http;
	o.connect_timeout_ms = 1000;
	o.total_timeout_ms = 2000;
	o.max_retries = 0;
	o.max_bytes = 64 * 1024;
	for (;;) {
		if (run_proc_exited(p)) {
			run_proc_stop(p, &run);
			rc = server_ended(r, e, TTFT_DIED, &run,
			    "before it was ready");
			if (server_run != NULL)
				*server_run = run;
			else
				run_result_release(&run);
			return rc;
		}
		http_response_init(&resp);
		rc = http_get(s->health_url, &o, &resp, &herr);
		if (rc == 0 && resp.status == 200) {
			http_response_release(&resp);
			break;
		}
		if (rc == 0)
			snprintf(last, sizeof(last), "HTTP %ld", resp.status);
		else
			snprintf(last, sizeof(last), "%.500s", herr.msg);
		http_response_release(&resp);
		if (clock_now_ns() >= deadline) {
			stop_into(p, server_run);
			return fail(r, e, TTFT_NOT_READY, "server not ready: "
			    "'%s' did not answer 200 within %lld ms (last: "
			    "%.400s)", s->health_url, (long long)wait_ms,
			    last);
		}
		sleep_ms(HEALTH_POLL_MS);
	}
	if ((*out = calloc(1, sizeof(**out))) == NULL) {
		stop_into(p, server_run);
		return fail(r, e, TTFT_SPAWN, "server: out of memory");
	}
	(*out)->proc = p;
	(*out)->allow_http = s->allow_http;
	return 0;
}

void
ttft_server_stop(struct ttft_server *srv, struct run_result *server_run)
{
	if (srv == NULL)
		return;
	stop_into(srv->proc, server_run);
	free(srv);
}

int
ttft_run(const struct ttft_server_spec *s, const struct ttft_request *rq,
    struct ttft_result *r, struct run_result *server_run, struct err *e)
{
	struct ttft_server *srv;
	int rc;

	if (ttft_server_start(s, &srv, r, server_run, e) < 0) {
		r->prompt_tokens = rq->prompt_tokens;
		return -1;
	}
	rc = ttft_measure(srv, rq, r, e);
	if (server_run != NULL)
		run_result_release(server_run);
	ttft_server_stop(srv, server_run);
	return rc;
}
