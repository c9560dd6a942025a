/*
 * http.h: the one wrapper around libcurl.  Downloads, the GitHub client,
 * webhooks, SMTP-less HTTP alerts and the server-mode TTFT probe all call
 * these functions; nothing else includes <curl/curl.h>.
 *
 * Every request: a User-Agent, TLS verification on, https only unless
 * allow_http, at most max_redirects redirects and only to http(s) (https
 * only unless allow_http), connect and low-speed timeouts, and a byte cap
 * counted in the write callback (CURLOPT_MAXFILESIZE does not stop a
 * chunked body of unknown length).
 */
#ifndef FETCH_HTTP_H
#define FETCH_HTTP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

struct err;
struct strv;

struct http_opts {
	int allow_http;		/* plain http allowed (loopback tests) */
	long connect_timeout_ms;	/* 0: 30 s */
	long low_speed_time_s;	/* abort below 1 byte/s for this long; 0: 60 */
	long total_timeout_ms;	/* 0: none */
	long max_redirects;	/* <0: 5 */
	int max_retries;	/* on timeouts, dropped connections and 5xx; <0: 4 */
	long retry_base_ms;	/* first backoff; doubled, with jitter; 0: 500 */
	uint64_t max_bytes;	/* body cap; 0: 64 MiB for memory bodies,
				 * 16 GiB for downloads to a file */
	const char *token;	/* "Authorization: Bearer" value, or NULL */
	const struct strv *headers;	/* extra "Name: value" lines, or NULL */
	int redirect_https_only;	/* redirects only to https even when
					 * allow_http lets the first URL be http */
	long deadline_ms;	/* the whole call, every attempt and wait
				 * between them, for a body up to 1 GiB; a
				 * larger expected size (Content-Length)
				 * lengthens it in proportion; 0: none */
	const atomic_int *stop;	/* set (by another thread or a signal
				 * handler): abort within about a second;
				 * or NULL */
	int64_t max_recv_speed;	/* a download to a file: bytes a second
				 * at most, on average since the call
				 * began; 0: no cap */
};

/* Defaults for every field, as documented above. */
#define HTTP_OPTS_INIT { 0, 0, 0, 0, -1, -1, 0, 0, NULL, NULL, 0, 0, NULL, 0 }

struct http_response {
	long status;		/* final HTTP status, 0 if none was received */
	char *etag;		/* ETag header or NULL; malloced */
	char *link_next;	/* Link rel="next" URL or NULL; malloced */
	char *content_type;	/* or NULL; malloced */
	long retry_after_s;	/* Retry-After seconds, -1 if absent */
	int64_t ratelimit_reset;	/* X-RateLimit-Reset epoch, -1 if absent */
	long ratelimit_remaining;	/* X-RateLimit-Remaining, -1 if absent */
	struct buf body;	/* the body, bounded by max_bytes */
};

/* Empty response: no status, no headers, body limit 64 MiB. */
/* libcurl's global set-up, once a process: 0, or -1 with e set.  The
 * calls here make it themselves; http_multi.c calls it. */
int http_global_init(struct err *e);

void http_response_init(struct http_response *r);
/* Free what r holds and leave it as http_response_init() does. */
void http_response_release(struct http_response *r);

/*
 * GET url into r->body (r initialised by http_response_init(); what it
 * held is released first).  Returns 0 when a response arrived (any status:
 * the caller judges 304, 404, 403...), -1 on a transport failure or a
 * refused URL/redirect after the retries.  5xx answers are retried; the
 * last one is returned with 0.
 */
int http_get(const char *url, const struct http_opts *o,
    struct http_response *r, struct err *e);

/* POST body (content_type, e.g. "application/json") to url, response into
 * r.  Same return rules as http_get(). */
int http_post(const char *url, const struct http_opts *o,
    const char *content_type, const void *body, size_t len,
    struct http_response *r, struct err *e);

/*
 * Called with each chunk of a streamed body.  Return 0 to go on, 1 to stop
 * the transfer early without error (e.g. the first token arrived), -1 to
 * abort with an error.
 */
typedef int (*http_chunk_fn)(void *arg, const char *data, size_t len);

/*
 * POST body and hand the response body to fn as it arrives, without
 * retries (a timed request must not be silently repeated).  *status gets
 * the HTTP status.  Returns 0 when the transfer ended normally or fn
 * returned 1, -1 otherwise.
 */
int http_stream_post(const char *url, const struct http_opts *o,
    const char *content_type, const void *body, size_t len,
    http_chunk_fn fn, void *arg, long *status, struct err *e);

/*
 * Called during a download with bytes so far and the expected total
 * (0 if unknown), for a progress display.
 */
typedef void (*http_progress_fn)(void *arg, uint64_t now, uint64_t total);

/*
 * Download url to the file open on fd, appending from offset *have (a
 * partial file already holds that many bytes).  When *have > 0 a Range
 * request is sent; a 206 answer is appended, a 200 answer truncates the
 * file and starts over (never appended), a 416 restarts from zero.  On
 * return *have is the file's length.  Retries with backoff on transport
 * errors and 5xx, resuming where the file ends.  max_bytes caps the file.
 * Returns 0 on a complete 2xx body, -1 otherwise (e->msg names the URL
 * and the HTTP status or curl error).
 */
int http_download_fd(const char *url, const struct http_opts *o, int fd,
    uint64_t *have, http_progress_fn progress, void *parg, struct err *e);

/*
 * Called with the bytes written to the file, in file order, so a caller
 * can hash while streaming.  data NULL (len 0): the file was truncated
 * to zero and the download starts over.  Return 0, or -1 to abort.
 */
typedef int (*http_tap_fn)(void *arg, const char *data, size_t len);

/* What a download reports besides its result; fill the in fields, zero
 * the rest. */
struct http_download_ctl {
	http_progress_fn progress;	/* in: or NULL */
	void *progress_arg;
	http_tap_fn tap;	/* in: or NULL */
	void *tap_arg;
	const char *if_range;	/* in: the ETag the partial file's bytes came
				 * with, or NULL; a resume then asks
				 * If-Range, so a changed file comes whole */
	char *etag;		/* out: the strong ETag of the bytes in the
				 * file, or NULL; malloced, caller frees */
	long status;		/* out: the last HTTP status, 0 if none */
	int resumed;		/* out: 206 answers appended to the file */
	int restarted;		/* out: times the file was truncated to start
				 * over (200 to a Range, 416, bad range) */
	int attempts;		/* out: requests made */
	int keep_partial;	/* out, on failure: the bytes in the file are
				 * worth resuming later (transport failure),
				 * not junk (4xx, cap, refused redirect) */
};

/* http_download_fd() with a tap and the report above; ctl may be NULL. */
int http_download(const char *url, const struct http_opts *o, int fd,
    uint64_t *have, struct http_download_ctl *ctl, struct err *e);

/*
 * Read a response's header block as libcurl hands it over, one line at a
 * time (status lines, header lines, the blank line after them; after a
 * redirect, the next response's), into r's status and header fields.
 * What http_get() does with each line, without a transfer, for tests.
 * Returns 0, or -1 with e set when a line would abort the transfer.
 */
int http_parse_headers(const char *block, size_t len,
    struct http_response *r, struct err *e);

/*
 * SMTP: send a message (headers and body, CRLF line ends) from "from" to
 * the recipients over url (smtp:// or smtps://).  Returns 0 or -1.
 */
int http_smtp_send(const char *url, const struct http_opts *o,
    const char *from, const struct strv *to, const char *message,
    struct err *e);

#endif
