/*
 * sse.h: the token stream of a streamed completion, read from its
 * server-sent events as they arrive: which events carry a token, when
 * the stream says it is done, the usage it reports, and an error event.
 * Pure: bytes in, state out; the load client stamps the times.
 *
 * Two dialects.  OpenAI's /v1/completions (llama-server, vLLM, SGLang):
 * "data: {"choices":[{"text":...,"finish_reason":...}]}" events, a last
 * one that may carry "usage", then "data: [DONE]".  llama-server's
 * /completion: "data: {"content":...,"stop":false}" events and a last
 * one with "stop": true, "tokens_predicted" and "tokens_evaluated".
 */
#ifndef BISECTD_SSE_H
#define BISECTD_SSE_H

#include <stddef.h>

enum sse_dialect { SSE_OPENAI, SSE_LLAMA };

/* The line bound: a longer line is an error of the stream. */
#define SSE_LINE_MAX	(16 * 1024)

struct sse_stream {
	enum sse_dialect dialect;
	char line[SSE_LINE_MAX];	/* the line being assembled */
	size_t len;
	int tokens;		/* events that carried a token */
	int done;		/* [DONE], or llama's "stop": true */
	int failed;		/* an error event, an overlong line, or data
				 * after the end: detail says which */
	long usage_prompt;	/* the stream's own counts; -1 unsaid */
	long usage_completion;
	char finish[32];	/* the last finish_reason, or "" */
	char detail[256];
};

void sse_init(struct sse_stream *s, enum sse_dialect d);

/*
 * Feed the next bytes of the body.  Returns how many token events the
 * bytes completed (each one the arrival of a token, to be stamped by
 * the caller), or -1 once the stream has failed (and on every call
 * after).  Tokens in an event past the end are not counted.
 */
int sse_feed(struct sse_stream *s, const char *data, size_t len);

#endif
