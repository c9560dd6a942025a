/*
 * sse.c: reading a streamed completion's events (see sse.h).
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "sse.h"

void
sse_init(struct sse_stream *s, enum sse_dialect d)
{
	memset(s, 0, sizeof(*s));
	s->dialect = d;
	s->usage_prompt = s->usage_completion = -1;
}

static int
nonempty(json_t *v)
{
	return json_is_string(v) && json_string_length(v) > 0;
}

static long
count_of(json_t *v)
{
	return json_is_integer(v) && json_integer_value(v) >= 0 &&
	    json_integer_value(v) < 1000000000 ? (long)json_integer_value(v) :
	    -1;
}

static int
fail(struct sse_stream *s, const char *what, const char *more)
{
	s->failed = 1;
	snprintf(s->detail, sizeof(s->detail), "%s%s%.200s", what,
	    more ? ": " : "", more ? more : "");
	return -1;
}

/* One complete line: 1 a token, 0 none, -1 the stream failed. */
static int
line(struct sse_stream *s, const char *l)
{
	json_t *ev, *choice, *usage;
	const char *payload;
	int token = 0;

	if (strncmp(l, "data:", 5) != 0)
		return 0;	/* comments, event:, id:, retry: */
	payload = l + 5 + (l[5] == ' ');
	if (*payload == '\0')
		return 0;
	if (s->done)
		return fail(s, "data after the end of the stream", payload);
	if (s->dialect == SSE_OPENAI && strcmp(payload, "[DONE]") == 0) {
		s->done = 1;
		return 0;
	}
	if ((ev = json_loads(payload, 0, NULL)) == NULL ||
	    !json_is_object(ev)) {
		json_decref(ev);
		return fail(s, "an event that is not a JSON object", payload);
	}
	if (json_object_get(ev, "error") != NULL) {
		char *dump = json_dumps(json_object_get(ev, "error"),
		    JSON_COMPACT | JSON_ENCODE_ANY);

		fail(s, "the server streamed an error", dump ? dump : "?");
		free(dump);
		json_decref(ev);
		return -1;
	}
	if (s->dialect == SSE_OPENAI) {
		json_t *finish;

		choice = json_array_get(json_object_get(ev, "choices"), 0);
		finish = json_object_get(choice, "finish_reason");
		if (nonempty(finish))
			snprintf(s->finish, sizeof(s->finish), "%.31s",
			    json_string_value(finish));
		token = nonempty(json_object_get(choice, "text"));
		usage = json_object_get(ev, "usage");
		if (json_is_object(usage)) {
			s->usage_prompt = count_of(json_object_get(usage,
			    "prompt_tokens"));
			s->usage_completion = count_of(json_object_get(usage,
			    "completion_tokens"));
		}
	} else {
		token = nonempty(json_object_get(ev, "content"));
		if (json_is_true(json_object_get(ev, "stop"))) {
			s->done = 1;
			s->usage_prompt = count_of(json_object_get(ev,
			    "tokens_evaluated"));
			s->usage_completion = count_of(json_object_get(ev,
			    "tokens_predicted"));
			snprintf(s->finish, sizeof(s->finish), "%s",
			    json_is_true(json_object_get(ev, "stopped_limit")) ?
			    "length" : "stop");
		}
	}
	json_decref(ev);
	s->tokens += token;
	return token;
}

int
sse_feed(struct sse_stream *s, const char *data, size_t len)
{
	int got = 0, rc;

	if (s->failed)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (data[i] != '\n') {
			if (s->len + 1 >= sizeof(s->line))
				return fail(s, "a line of the stream passed "
				    "16 KiB", NULL);
			s->line[s->len++] = data[i];
			continue;
		}
		if (s->len > 0 && s->line[s->len - 1] == '\r')
			s->len--;
		s->line[s->len] = '\0';
		s->len = 0;
		if ((rc = line(s, s->line)) < 0)
			return -1;
		got += rc;
	}
	return got;
}
