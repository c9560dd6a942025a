/*
 * http_multi.c: concurrent streamed POSTs on libcurl's multi interface
 * (see http_multi.h).  Easy handles are pooled, so that a thousand
 * requests cost a thousand transfers, not a thousand set-ups.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "common/err.h"
#include "http.h"
#include "http_multi.h"

struct slot {
	CURL *easy;
	int busy;
	http_multi_chunk_fn fn;
	void *arg;
	int aborted;		/* fn asked to stop */
	char error[CURL_ERROR_SIZE];
};

struct http_multi {
	CURLM *multi;
	struct curl_slist *headers;
	struct slot *slots;	/* max of them; malloced */
	size_t max, busy;
};

static size_t
on_body(char *data, size_t size, size_t n, void *arg)
{
	struct slot *s = arg;

	if (s->fn(s->arg, data, size * n) != 0) {
		s->aborted = 1;
		return 0;	/* CURLE_WRITE_ERROR: the transfer ends */
	}
	return size * n;
}

int
http_multi_new(size_t max, struct http_multi **out, struct err *e)
{
	struct http_multi *m;

	*out = NULL;
	if (http_global_init(e) < 0)
		return -1;
	if ((m = calloc(1, sizeof(*m))) == NULL ||
	    (m->slots = calloc(max ? max : 1, sizeof(*m->slots))) == NULL ||
	    (m->multi = curl_multi_init()) == NULL ||
	    (m->headers = curl_slist_append(NULL,
	    "Content-Type: application/json")) == NULL) {
		http_multi_free(m);
		return err_set(e, "out of memory");
	}
	m->max = max;
	/* One connection per transfer in flight, each kept for the next. */
	curl_multi_setopt(m->multi, CURLMOPT_MAXCONNECTS, (long)max);
	*out = m;
	return 0;
}

int
http_multi_add(struct http_multi *m, const char *url, const char *body,
    int64_t timeout_ms, http_multi_chunk_fn fn, void *arg, struct err *e)
{
	struct slot *s = NULL;

	for (size_t i = 0; i < m->max; i++)
		if (!m->slots[i].busy) {
			s = &m->slots[i];
			break;
		}
	if (s == NULL)
		return err_set(e, "%zu transfers in flight already", m->max);
	if (s->easy == NULL && (s->easy = curl_easy_init()) == NULL)
		return err_set(e, "out of memory");
	curl_easy_reset(s->easy);
	curl_easy_setopt(s->easy, CURLOPT_URL, url);
	curl_easy_setopt(s->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(s->easy, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, m->headers);
	curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(s->easy, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(s->easy, CURLOPT_PRIVATE, s);
	curl_easy_setopt(s->easy, CURLOPT_ERRORBUFFER, s->error);
	curl_easy_setopt(s->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(s->easy, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(s->easy, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	s->fn = fn;
	s->arg = arg;
	s->aborted = 0;
	s->error[0] = '\0';
	if (curl_multi_add_handle(m->multi, s->easy) != CURLM_OK)
		return err_set(e, "cannot start a transfer to '%s'", url);
	s->busy = 1;
	m->busy++;
	return 0;
}

static enum http_multi_end
end_of(CURLcode rc, const struct slot *s)
{
	switch (rc) {
	case CURLE_OK:
		return HTTP_MULTI_OK;
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
		return HTTP_MULTI_REFUSED;
	case CURLE_OPERATION_TIMEDOUT:
		return HTTP_MULTI_TIMEOUT;
	case CURLE_WRITE_ERROR:
		return s->aborted ? HTTP_MULTI_ABORTED : HTTP_MULTI_TRANSPORT;
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
		return HTTP_MULTI_CUT;
	default:
		return HTTP_MULTI_TRANSPORT;
	}
}

int
http_multi_step(struct http_multi *m, int64_t wait_ns,
    http_multi_done_fn done, void *ctx, struct err *e)
{
	CURLMsg *msg;
	int running, left;

	if (curl_multi_perform(m->multi, &running) != CURLM_OK)
		return err_set(e, "curl_multi_perform failed");
	if (wait_ns >= 1000000 && curl_multi_poll(m->multi, NULL, 0,
	    (int)(wait_ns / 1000000), NULL) != CURLM_OK)
		return err_set(e, "curl_multi_poll failed");
	if (wait_ns >= 1000000 &&
	    curl_multi_perform(m->multi, &running) != CURLM_OK)
		return err_set(e, "curl_multi_perform failed");
	while ((msg = curl_multi_info_read(m->multi, &left)) != NULL) {
		struct http_multi_done d;
		struct slot *s;
		char *p;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &p);
		s = (struct slot *)(void *)p;
		memset(&d, 0, sizeof(d));
		d.arg = s->arg;
		d.end = end_of(msg->data.result, s);
		curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &d.status);
		if (d.end != HTTP_MULTI_OK)
			snprintf(d.detail, sizeof(d.detail), "%s",
			    s->error[0] ? s->error :
			    curl_easy_strerror(msg->data.result));
		curl_multi_remove_handle(m->multi, s->easy);
		s->busy = 0;
		m->busy--;
		done(ctx, &d);
	}
	return (int)m->busy;
}

void
http_multi_free(struct http_multi *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; m->slots && i < m->max; i++)
		if (m->slots[i].easy) {
			if (m->slots[i].busy)
				curl_multi_remove_handle(m->multi,
				    m->slots[i].easy);
			curl_easy_cleanup(m->slots[i].easy);
		}
	if (m->multi)
		curl_multi_cleanup(m->multi);
	curl_slist_free_all(m->headers);
	free(m->slots);
	free(m);
}
