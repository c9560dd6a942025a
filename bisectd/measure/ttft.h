/*
 * ttft.h: server mode.  Start an engine's server through the runner,
 * wait for its health URL to answer 200, time an OpenAI-style streaming
 * completion from just before the request to the first streamed token,
 * and stop the server's whole process group.
 *
 * Time to first token also holds the HTTP round trip, tokenization and
 * one decode step, so prefill speed derived from it is a LOWER BOUND:
 * every result says so (lower_bound), and so must everything showing it.
 */
#ifndef BISECTD_TTFT_H
#define BISECTD_TTFT_H

#include <stdint.h>

#include "bisectd/process/runner.h"

struct err;

enum ttft_status {
	TTFT_OK,
	TTFT_SPAWN,		/* the server could not be started */
	TTFT_DIED,		/* the server ended before or while asked */
	TTFT_NOT_READY,		/* health URL not 200 within the wait */
	TTFT_HTTP,		/* transport failure or a non-200 answer */
	TTFT_NO_TOKEN,		/* the stream ended without a token */
	TTFT_RUNNER		/* the runner itself failed (pipes, memory):
				 * no fault of the server's */
};

/*
 * What every request asks besides its prompt, max_tokens and stream, as
 * a JSON object: greedy sampling (temperature 0) from a fixed seed, and
 * end-of-text held back (ignore_eos: llama.cpp, vLLM, SGLang; min_tokens:
 * vLLM), so that the one token asked for is seldom one that streams no
 * text.  Most servers ignore the fields they do not know; one that
 * refuses them fails every request with its answer.  Part of a server
 * mode measurement definition: a change here is a new definition.
 */
#define TTFT_REQUEST_FIELDS \
	"{\"seed\":1,\"temperature\":0,\"ignore_eos\":true,\"min_tokens\":1}"

struct ttft_server_spec {
	struct child_spec proc;		/* the server command; its timeout
					 * bounds the server's whole life */
	const char *health_url;		/* GET until 200; not owned */
	int64_t ready_timeout_ms;	/* 0: 60 s */
	int allow_http;			/* plain http (loopback servers) */
};

/* A request: TTFT_REQUEST_FIELDS and these. */
struct ttft_request {
	const char *url;	/* the completions URL; not owned */
	int prompt_tokens;	/* N: the prompt is N words */
	int max_tokens;		/* G, sent as max_tokens (>= 1) */
	const char *prompt;	/* or NULL: N words, new on every request
				 * so that no prompt cache can answer */
	int64_t timeout_ms;	/* 0: 10 min */
};

struct ttft_result {
	enum ttft_status status;
	int64_t ttft_ns;	/* request start to the first token event */
	int lower_bound;	/* always 1: see the top of this file */
	int prompt_tokens;	/* N as requested */
	long http_status;	/* 0 if no answer */
	char detail[1024];	/* what failed, with the server's stderr tail
				 * where it says more; "" on success */
};

struct ttft_server;

/*
 * Start the server and wait until its health URL answers 200.  Returns 0
 * with *out set, or -1 with r->status (SPAWN, DIED, NOT_READY, RUNNER)
 * and r->detail set, the server stopped, and its run in *server_run when
 * that is not NULL (released by the caller); e gets the same message.
 */
int ttft_server_start(const struct ttft_server_spec *s,
    struct ttft_server **out, struct ttft_result *r,
    struct run_result *server_run, struct err *e);

/*
 * Time one streaming completion against a started server.  Returns 0
 * with r filled (status TTFT_OK), or -1 with r->status and r->detail (and
 * e) saying what failed.
 */
int ttft_measure(struct ttft_server *srv, const struct ttft_request *rq,
    struct ttft_result *r, struct err *e);

/* Stop the server's process group (SIGTERM, grace, SIGKILL) and free
 * srv; its run goes to *server_run when that is not NULL. */
void ttft_server_stop(struct ttft_server *srv,
    struct run_result *server_run);

/* Start, measure once, stop.  Returns as ttft_measure(). */
int ttft_run(const struct ttft_server_spec *s, const struct ttft_request *rq,
    struct ttft_result *r, struct run_result *server_run, struct err *e);

/* "ok", "spawn", "died", "not-ready", "http", "no-token", "runner". */
const char *ttft_status_name(enum ttft_status st);

/*
 * Find the first token in a chunk of a server-sent-event stream.  Feed
 * chunks in order; returns 1 at the first "data:" event carrying a token
 * (OpenAI completions "choices[0].text", chat "choices[0].delta.content",
 * or llama.cpp's "content"), 0 if none yet, -1 at "data: [DONE]" or an
 * error event (detail says which, with the finish_reason of the events
 * before when one gave it).  Exposed for tests.
 */
struct ttft_sse {
	char line[64 * 1024];	/* the line being assembled */
	size_t len;
	int overflow;		/* the current line passed the bound */
	char finish[32];	/* the last finish_reason streamed, or "" */
	char detail[256];
};

void ttft_sse_init(struct ttft_sse *p);
int ttft_sse_feed(struct ttft_sse *p, const char *data, size_t len);

#endif
