/*
 * http_multi.h: many streamed POSTs in flight at once, driven from one
 * thread with libcurl's multi interface: the transport of a load
 * client, which must never be the bottleneck it measures.  Connections
 * are kept and reused between requests; plain http is allowed, since a
 * load client talks to a server it started on this machine.
 */
#ifndef FETCH_HTTP_MULTI_H
#define FETCH_HTTP_MULTI_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct http_multi;

/* How a transfer ended, by its transport; the HTTP status is apart. */
enum http_multi_end {
	HTTP_MULTI_OK,		/* the whole body came */
	HTTP_MULTI_REFUSED,	/* no connection: refused or unreachable */
	HTTP_MULTI_TIMEOUT,	/* its timeout passed */
	HTTP_MULTI_CUT,		/* the connection ended mid-body */
	HTTP_MULTI_ABORTED,	/* its chunk callback asked to stop */
	HTTP_MULTI_TRANSPORT	/* any other transport failure */
};

/* A chunk of a body as it arrives; nonzero stops the transfer. */
typedef int (*http_multi_chunk_fn)(void *arg, const char *data, size_t len);

struct http_multi_done {
	void *arg;			/* as given to http_multi_add() */
	enum http_multi_end end;
	long status;			/* the HTTP status; 0: no answer */
	char detail[256];		/* libcurl's words; "" when OK */
};

/* A transfer has ended; called from http_multi_step(). */
typedef void (*http_multi_done_fn)(void *ctx, const struct http_multi_done *d);

/* Up to max transfers at once.  0, or -1 with e set. */
int http_multi_new(size_t max, struct http_multi **out, struct err *e);

/*
 * Start POSTing body (JSON, not copied: it must live until the
 * transfer ends) to url; fn sees the answer's body as it arrives.
 * timeout_ms bounds the whole transfer.  0, or -1 with e set (max in
 * flight, memory).
 */
int http_multi_add(struct http_multi *m, const char *url, const char *body,
    int64_t timeout_ms, http_multi_chunk_fn fn, void *arg, struct err *e);

/*
 * Move every transfer on, waiting at most wait_ns for the network when
 * none is ready (whole milliseconds: less is no wait, so that a caller
 * keeping a schedule finer than that is never made late), and call
 * done for each that ended.  Returns the
 * transfers still in flight, or -1 with e set.
 */
int http_multi_step(struct http_multi *m, int64_t wait_ns,
    http_multi_done_fn done, void *ctx, struct err *e);

/* Abandon every transfer and free m (NULL is fine). */
void http_multi_free(struct http_multi *m);

#endif
