/*
 * http.c: every HTTP(S) and SMTP request bisectd makes, on libcurl (see
 * http.h).  Owns libcurl's global state (initialised once) and the easy
 * handle of each call; nothing else in the tree includes <curl/curl.h>.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "common/buf.h"
#include "common/err.h"
#include "http.h"
#include "http_value.h"
#include "common/strv.h"

#define MEM_MAX_DEFAULT		((uint64_t)64 << 20)
#define FILE_MAX_DEFAULT	((uint64_t)16 << 30)
#define BACKOFF_MAX_MS		30000L
#define RETRY_AFTER_MAX_S	60L
#define DEADLINE_UNIT		((uint64_t)1 << 30)	/* the deadline's
							 * size: 1 GiB */
#define SLEEP_SLICE_MS		200	/* stop and deadline checks while
					 * waiting to retry */

/* http_opts with every default filled in. */
struct eff {
	long connect_ms;
	long low_speed_s;
	long total_ms;
	long max_redirects;
	int max_retries;
	long retry_base_ms;
	uint64_t max_bytes;
	long deadline_ms;	/* 0: none */
	const atomic_int *stop;	/* or NULL */
	int64_t start_ns;	/* CLOCK_MONOTONIC when the call began */
	int64_t max_recv_speed;	/* bytes a second; 0: no cap */
};

/* Headers of the response being received; reset at each status line, so
 * after a redirect they describe the final answer. */
struct hdrs {
	long status;
	char reason[64];
	char *etag;		/* malloced or NULL */
	char *link_next;	/* malloced or NULL */
	char *content_type;	/* malloced or NULL */
	long retry_after_s;
	int64_t rl_reset;
	long rl_remaining;
	int64_t content_length;	/* -1 if absent */
	int64_t range_start;	/* Content-Range, -1 if absent */
	int64_t range_total;	/* -1 if absent or "*" */
	int complete;		/* the blank line after them was seen */
};

enum xfer_mode { X_MEMORY, X_STREAM, X_FILE };

struct xfer {
	enum xfer_mode mode;
	struct eff f;
	char errbuf[CURL_ERROR_SIZE];
	struct hdrs h;
	char *location;		/* the last Location seen; malloced */
	int capped;		/* the body passed max_bytes */
	int io_errno;		/* a write to the file failed */
	int tap_failed;
	int callback_stop;	/* X_STREAM: fn returned 1 */
	int callback_error;	/* X_STREAM: fn returned -1 */
	int bad_range;		/* X_FILE: 206 not starting where asked */
	int writing;		/* the body goes to the sink */
	uint64_t received;	/* body bytes of this response */
	uint64_t paced;		/* body bytes of every attempt, for the
				 * rate cap */

	struct buf *body;	/* X_MEMORY */
	http_chunk_fn fn;	/* X_STREAM */
	void *fn_arg;
	int fd;			/* X_FILE */
	uint64_t have;		/* X_FILE: bytes in the file */
	int range_sent;
	struct http_download_ctl *ctl;
	uint64_t total;		/* for progress, 0 if unknown */
	uint64_t expected;	/* the largest total of any attempt, for the
				 * deadline */
	int stopped;		/* the stop flag ended the call */
	int timed_out;		/* the deadline ended the call */
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_OK;

static void
global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static int
http_global(struct err *e)
{
	pthread_once(&global_once, global_init);
	if (global_rc != CURLE_OK)
		return err_set(e, "cannot initialise libcurl: %s",
		    curl_easy_strerror(global_rc));
	return 0;
}

int
http_global_init(struct err *e)
{
	return http_global(e);
}

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The deadline in ms from the start, scaled by the expected size. */
static double
deadline_ms(const struct xfer *x)
{
	uint64_t expected = x->total > x->expected ? x->total : x->expected;

	if (expected <= DEADLINE_UNIT)
		return (double)x->f.deadline_ms;
	return (double)x->f.deadline_ms * ((double)expected /
	    (double)DEADLINE_UNIT);
}

/*
 * 1 when the call must end now: the stop flag is set or the deadline has
 * passed (noted in x for the message).
 */
static int
must_end(struct xfer *x)
{
	if (x->f.stop != NULL && atomic_load(x->f.stop)) {
		x->stopped = 1;
		return 1;
	}
	if (x->f.deadline_ms > 0 &&
	    (double)(now_ns() - x->f.start_ns) / 1e6 > deadline_ms(x)) {
		x->timed_out = 1;
		return 1;
	}
	return 0;
}

/* libcurl's progress callback, called at least once a second even on a
 * silent connection: where the stop flag and the deadline are seen. */
static int
xferinfo_cb(void *arg, curl_off_t dltotal, curl_off_t dlnow,
    curl_off_t ultotal, curl_off_t ulnow)
{
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return must_end(arg);
}

static void
eff_fill(struct eff *f, const struct http_opts *o, uint64_t max_default)
{
	f->connect_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms :
	    30000;
	f->low_speed_s = o->low_speed_time_s > 0 ? o->low_speed_time_s : 60;
	f->total_ms = o->total_timeout_ms > 0 ? o->total_timeout_ms : 0;
	f->max_redirects = o->max_redirects >= 0 ? o->max_redirects : 5;
	f->max_retries = o->max_retries >= 0 ? o->max_retries : 4;
	f->retry_base_ms = o->retry_base_ms > 0 ? o->retry_base_ms : 500;
	f->max_bytes = o->max_bytes > 0 ? o->max_bytes : max_default;
	f->deadline_ms = o->deadline_ms > 0 ? o->deadline_ms : 0;
	f->stop = o->stop;
	f->start_ns = now_ns();
	f->max_recv_speed = o->max_recv_speed > 0 ? o->max_recv_speed : 0;
}

static void
hdrs_clear(struct hdrs *h)
{
	free(h->etag);
	free(h->link_next);
	free(h->content_type);
	memset(h, 0, sizeof(*h));
	h->retry_after_s = -1;
	h->rl_reset = -1;
	h->rl_remaining = -1;
	h->content_length = -1;
	h->range_start = -1;
	h->range_total = -1;
}

static void
xfer_reset(struct xfer *x)
{
	hdrs_clear(&x->h);
	x->errbuf[0] = '\0';
	x->capped = x->io_errno = x->tap_failed = 0;
	x->callback_stop = x->callback_error = x->bad_range = 0;
	x->writing = 0;
	x->received = 0;
	if (x->total > x->expected)
		x->expected = x->total;
	x->total = 0;
}

static void
xfer_release(struct xfer *x)
{
	hdrs_clear(&x->h);
	free(x->location);
	x->location = NULL;
}

void
http_response_init(struct http_response *r)
{
	memset(r, 0, sizeof(*r));
	r->retry_after_s = -1;
	r->ratelimit_reset = -1;
	r->ratelimit_remaining = -1;
	buf_init(&r->body, MEM_MAX_DEFAULT);
}

void
http_response_release(struct http_response *r)
{
	free(r->etag);
	free(r->link_next);
	free(r->content_type);
	buf_release(&r->body);
	http_response_init(r);
}

/* 1 when url starts with scheme followed by "://", case-insensitively. */
static int
has_scheme(const char *url, const char *scheme)
{
	size_t n = strlen(scheme);

	return strncasecmp(url, scheme, n) == 0 && strncmp(url + n, "://", 3)
	    == 0;
}

static int
check_url(const char *url, const struct http_opts *o, struct err *e)
{
	if (has_scheme(url, "https"))
		return 0;
	if (has_scheme(url, "http")) {
		if (o->allow_http)
			return 0;
		return err_set(e, "refusing '%s': plain http is not allowed "
		    "(allow-http is off)", url);
	}
	return err_set(e, "refusing '%s': not an http(s) URL", url);
}

/* Retry-After: delta-seconds or an HTTP date; seconds from now, >= 0. */
static long
parse_retry_after(const char *v)
{
	char *end;
	long s;
	time_t t;

	while (*v == ' ')
		v++;
	s = strtol(v, &end, 10);
	if (end != v && (*end == '\0' || *end == ' '))
		return s < 0 ? 0 : s;
	if ((t = curl_getdate(v, NULL)) < 0)
		return -1;
	s = (long)(t - time(NULL));
	return s < 0 ? 0 : s;
}

static void
parse_content_range(struct hdrs *h, const char *v)
{
	long long a, b, total;

	while (*v == ' ')
		v++;
	if (strncasecmp(v, "bytes ", 6) != 0)
		return;
	v += 6;
	if (sscanf(v, "%lld-%lld/%lld", &a, &b, &total) == 3) {
		h->range_start = a;
		h->range_total = total;
	} else if (sscanf(v, "%lld-%lld/*", &a, &b) == 2) {
		h->range_start = a;
	}
}

/* Empty the file to start over; the tap starts over too. */
static int
restart_file(struct xfer *x, struct http_download_ctl *ctl)
{
	if (ftruncate(x->fd, 0) < 0) {
		x->io_errno = errno;
		return -1;
	}
	x->have = 0;
	ctl->restarted++;
	if (ctl->tap != NULL && ctl->tap(ctl->tap_arg, NULL, 0) < 0) {
		x->tap_failed = 1;
		return -1;
	}
	return 0;
}

/* The response's headers are complete: decide where its body goes.
 * Returns 0, or -1 to abort the transfer. */
static int
headers_done(struct xfer *x)
{
	struct hdrs *h = &x->h;
	int redirect = h->status >= 300 && h->status < 400 &&
	    x->location != NULL;

	h->complete = 1;
	if (h->status < 200 || redirect) {
		x->writing = 0;
		return 0;
	}
	/* A declared length past the cap fails now, not at the cap. */
	if (h->status < 300 && h->content_length >= 0 &&
	    (uint64_t)h->content_length > x->f.max_bytes -
	    (h->status == 206 ? x->have : 0)) {
		x->capped = 1;
		return -1;
	}
	if (x->mode != X_FILE) {
		x->writing = 1;
		return 0;
	}
	if (h->status == 206) {
		if (!x->range_sent || h->range_start < 0 ||
		    (uint64_t)h->range_start != x->have) {
			x->bad_range = 1;
			return -1;
		}
		x->writing = 1;
		x->total = h->range_total > 0 ? (uint64_t)h->range_total :
		    h->content_length >= 0 ?
		    x->have + (uint64_t)h->content_length : 0;
		x->ctl->resumed++;
		return 0;
	}
	if (h->status == 200) {
		/* A 200 to a Range request is the whole body again (or a
		 * changed one, after If-Range): never append it. */
		if (x->have > 0 && restart_file(x, x->ctl) < 0)
			return -1;
		free(x->ctl->etag);
		x->ctl->etag = http_strong_etag(h->etag);
		x->writing = 1;
		x->total = h->content_length >= 0 ?
		    (uint64_t)h->content_length : 0;
		return 0;
	}
	x->writing = 0;
	return 0;
}

static size_t
header_cb(char *data, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	struct hdrs *h = &x->h;
	size_t len = size * n;
	const char *colon;
	size_t nl;

	if (len >= 5 && strncmp(data, "HTTP/", 5) == 0) {
		/* libcurl's line is not NUL-terminated: read a copy. */
		char *line = http_value_dup(data, len), *sp, *end;

		hdrs_clear(h);
		free(x->location);
		x->location = NULL;
		if (line != NULL && (sp = strchr(line, ' ')) != NULL) {
			h->status = strtol(sp + 1, &end, 10);
			if (*end == ' ') {
				while (*end == ' ' || *end == '\t')
					end++;
				snprintf(h->reason, sizeof(h->reason), "%s",
				    end);
			}
		}
		free(line);
		return len;
	}
	if ((len == 2 && data[0] == '\r') || (len == 1 && data[0] == '\n'))
		return headers_done(x) < 0 ? 0 : len;
	if ((colon = memchr(data, ':', len)) == NULL)
		return len;
	nl = (size_t)(colon - data);
	colon++;
#define IS(name) (nl == sizeof(name) - 1 && strncasecmp(data, name, nl) == 0)
	{
		char *v = http_value_dup(colon, len - nl - 1);

		if (v == NULL)
			return len;
		if (IS("ETag")) {
			free(h->etag);
			h->etag = v;
			v = NULL;
		} else if (IS("Content-Type")) {
			free(h->content_type);
			h->content_type = v;
			v = NULL;
		} else if (IS("Location")) {
			free(x->location);
			x->location = v;
			v = NULL;
		} else if (IS("Link")) {
			if (h->link_next == NULL)
				h->link_next = http_link_next(v, strlen(v));
		} else if (IS("Retry-After"))
			h->retry_after_s = parse_retry_after(v);
		else if (IS("X-RateLimit-Reset"))
			h->rl_reset = strtoll(v, NULL, 10);
		else if (IS("X-RateLimit-Remaining"))
			h->rl_remaining = strtol(v, NULL, 10);
		else if (IS("Content-Length"))
			h->content_length = strtoll(v, NULL, 10);
		else if (IS("Content-Range"))
			parse_content_range(h, v);
		free(v);
	}
#undef IS
	return len;
}

static int
file_write(struct xfer *x, const char *data, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t w = pwrite(x->fd, data + done, len - done,
		    (off_t)(x->have + done));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			x->io_errno = w < 0 ? errno : EIO;
			return -1;
		}
		done += (size_t)w;
	}
	x->have += len;
	return 0;
}

/*
 * A capped download ahead of its rate waits here until the bytes it got
 * are due, in slices that see the stop flag and the deadline; TCP's
 * window holds the sender back meanwhile.  libcurl's own cap
 * (CURLOPT_MAX_RECV_SPEED_LARGE, 7.88) lets a burst of a megabyte and
 * more through at once.
 */
static void
pace(struct xfer *x, size_t len)
{
	x->paced += len;
	for (;;) {
		int64_t due = x->f.start_ns + (int64_t)((double)x->paced *
		    1e9 / (double)x->f.max_recv_speed);
		int64_t wait = due - now_ns();
		struct timespec ts;

		if (wait <= 0 || must_end(x))
			return;
		if (wait > SLEEP_SLICE_MS * 1000000LL)
			wait = SLEEP_SLICE_MS * 1000000LL;
		ts.tv_sec = (time_t)(wait / 1000000000);
		ts.tv_nsec = (long)(wait % 1000000000);
		nanosleep(&ts, NULL);
	}
}

static size_t
write_cb(char *data, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n;
	int r;

	if (!x->writing)
		return len;
	if (len > x->f.max_bytes - x->received ||
	    (x->mode == X_FILE && len > x->f.max_bytes - x->have)) {
		x->capped = 1;
		return 0;
	}
	x->received += len;
	switch (x->mode) {
	case X_MEMORY:
		if (buf_add(x->body, data, len) < 0) {
			x->capped = errno == E2BIG;
			return 0;
		}
		return len;
	case X_STREAM:
		r = x->fn(x->fn_arg, data, len);
		if (r == 0)
			return len;
		if (r > 0)
			x->callback_stop = 1;
		else
			x->callback_error = 1;
		return 0;
	case X_FILE:
		if (file_write(x, data, len) < 0)
			return 0;
		if (x->ctl && x->ctl->tap &&
		    x->ctl->tap(x->ctl->tap_arg, data, len) < 0) {
			x->tap_failed = 1;
			return 0;
		}
		if (x->ctl && x->ctl->progress)
			x->ctl->progress(x->ctl->progress_arg, x->have,
			    x->total);
		if (x->f.max_recv_speed > 0)
			pace(x, len);
		return len;
	}
	return 0;
}

/* Timeouts, TLS verification and the error buffer, for every protocol. */
static void
set_limits(CURL *h, const struct eff *f, char *errbuf)
{
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, f->connect_ms);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, f->low_speed_s);
	if (f->total_ms > 0)
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, f->total_ms);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
}

/* Common options; the header list is built into *list (caller frees). */
static int
xfer_setup(CURL *h, struct xfer *x, const char *url,
    const struct http_opts *o, struct curl_slist **list, struct err *e)
{
	const char *protos = o->allow_http ? "http,https" : "https";
	const char *redir = o->allow_http && !o->redirect_https_only ?
	    "http,https" : "https";
	struct curl_slist *l = NULL, *t;
	char line[4096];

	*list = NULL;
	if (o->token != NULL) {
		if (!http_no_newline(o->token))
			return err_set(e, "refusing a token with a line break");
		snprintf(line, sizeof(line), "Authorization: Bearer %s",
		    o->token);
		if ((t = curl_slist_append(l, line)) == NULL)
			goto nomem;
		l = t;
	}
	for (size_t i = 0; o->headers != NULL && i < o->headers->n; i++) {
		if (!http_no_newline(o->headers->v[i]))
			goto badheader;
		if ((t = curl_slist_append(l, o->headers->v[i])) == NULL)
			goto nomem;
		l = t;
	}
	/* Never wait for a 100 Continue that a small server never sends. */
	if ((t = curl_slist_append(l, "Expect:")) == NULL)
		goto nomem;
	l = t;
	*list = l;

	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, protos);
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, redir);
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
	/* A proxy's answer to CONNECT is not the server's answer. */
	curl_easy_setopt(h, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
	curl_easy_setopt(h, CURLOPT_MAXREDIRS, x->f.max_redirects);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "bisectd/" BISECTD_VERSION);
	set_limits(h, &x->f, x->errbuf);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, x);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, l);
	return 0;
nomem:
	curl_slist_free_all(l);
	return err_set(e, "cannot request '%s': out of memory", url);
badheader:
	curl_slist_free_all(l);
	return err_set(e, "refusing a request header with a line break");
}

static int
transient(CURLcode rc)
{
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_COULDNT_CONNECT:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return 1;
	default:
		return 0;
	}
}

/*
 * Sleep before retry number attempt (0 for the first retry): the base
 * doubled each time, capped, with jitter in [d/2, 3d/2) so clients that
 * failed together do not come back together.  A server's Retry-After up
 * to a minute is honoured when longer.  Returns 0, or -1 when the stop
 * flag or the deadline ended the wait (no retry then).
 */
static int
backoff(struct xfer *x, int attempt, long retry_after_s)
{
	uint64_t ms = (uint64_t)x->f.retry_base_ms << (attempt < 16 ? attempt :
	    16);

	if (ms > BACKOFF_MAX_MS)
		ms = BACKOFF_MAX_MS;
	ms = ms / 2 + arc4random_uniform((uint32_t)ms + 1);
	if (retry_after_s > 0 && retry_after_s <= RETRY_AFTER_MAX_S &&
	    (uint64_t)retry_after_s * 1000 > ms)
		ms = (uint64_t)retry_after_s * 1000;
	while (ms > 0) {
		uint64_t slice = ms < SLEEP_SLICE_MS ? ms : SLEEP_SLICE_MS;
		struct timespec ts;

		if (must_end(x))
			return -1;
		ts.tv_sec = (time_t)(slice / 1000);
		ts.tv_nsec = (long)(slice % 1000) * 1000000L;
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		ms -= slice;
	}
	return must_end(x) ? -1 : 0;
}

/* After a failed transfer: wait and return 1 when another attempt is
 * worth it (a transient failure with attempts left), else 0. */
static int
retry_transport(struct xfer *x, CURLcode cr, int attempt)
{
	if (x->capped || !transient(cr) || attempt >= x->f.max_retries)
		return 0;
	return backoff(x, attempt, -1) == 0;
}

static void
xfer_end(CURL *h, struct curl_slist *list, struct xfer *x)
{
	curl_easy_cleanup(h);
	curl_slist_free_all(list);
	xfer_release(x);
}

/* The message for a failed transfer. */
static int
xfer_fail(const struct xfer *x, CURLcode rc, const char *url,
    const struct http_opts *o, int attempts, struct err *e)
{
	const char *detail = x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc);
	char tail[64] = "";

	if (x->stopped)
		return err_set(e, "'%s': stopped (the job was asked to stop)",
		    url);
	if (x->timed_out)
		return err_set(e, "cannot fetch '%s': not done within its "
		    "deadline of %.0f s%s (download-deadline)", url,
		    deadline_ms(x) / 1000, x->total > DEADLINE_UNIT ||
		    x->expected > DEADLINE_UNIT ? ", scaled to its size" : "");
	if (x->capped)
		return err_set(e, "'%s': body exceeds the cap of %" PRIu64
		    " bytes", url, x->f.max_bytes);
	if (x->io_errno) {
		errno = x->io_errno;
		return err_errno(e, "cannot write the body of '%s'", url);
	}
	if (rc == CURLE_UNSUPPORTED_PROTOCOL && x->location != NULL)
		return err_set(e, "refused redirect from '%s' to '%s': only "
		    "%s may be followed", url, x->location,
		    o->allow_http && !o->redirect_https_only ? "http(s)" :
		    "https");
	if (rc == CURLE_TOO_MANY_REDIRECTS)
		return err_set(e, "too many redirects from '%s' (more than "
		    "%ld)", url, x->f.max_redirects);
	if (attempts > 1)
		snprintf(tail, sizeof(tail), " (%d attempts)", attempts);
	return err_set(e, "cannot fetch '%s': %s%s", url, detail, tail);
}

static void
take_headers(struct xfer *x, struct http_response *r)
{
	r->status = x->h.status;
	r->etag = x->h.etag;
	r->link_next = x->h.link_next;
	r->content_type = x->h.content_type;
	x->h.etag = x->h.link_next = x->h.content_type = NULL;
	r->retry_after_s = x->h.retry_after_s;
	r->ratelimit_reset = x->h.rl_reset;
	r->ratelimit_remaining = x->h.rl_remaining;
}

int
http_parse_headers(const char *block, size_t len, struct http_response *r,
    struct err *e)
{
	struct xfer x;
	const char *p = block, *end = block + len;
	int rc = 0;

	http_response_release(r);
	memset(&x, 0, sizeof(x));
	x.mode = X_MEMORY;
	x.f.max_bytes = MEM_MAX_DEFAULT;
	xfer_reset(&x);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl != NULL ? (size_t)(nl + 1 - p) : (size_t)(end - p);
		char *line;

		/* A buffer of its own, not NUL-terminated, as libcurl's. */
		if ((line = malloc(n)) == NULL) {
			rc = err_set(e, "out of memory");
			break;
		}
		memcpy(line, p, n);
		if (header_cb(line, 1, n, &x) != n)
			rc = err_set(e, "the response's headers were refused");
		free(line);
		if (rc < 0)
			break;
		p += n;
	}
	take_headers(&x, r);
	xfer_release(&x);
	return rc;
}

/* Make the request a POST of body with its Content-Type. */
static int
set_post(CURL *h, struct curl_slist **list, const char *url,
    const char *ctype, const void *body, size_t len, struct err *e)
{
	struct curl_slist *t;
	char line[512];

	if (!http_no_newline(ctype))
		return err_set(e, "refusing a content type with a line break");
	snprintf(line, sizeof(line), "Content-Type: %s", ctype);
	if ((t = curl_slist_append(*list, line)) == NULL)
		return err_set(e, "cannot request '%s': out of memory", url);
	*list = t;
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, t);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	return 0;
}

/* A transfer of url in mode, its limits from o (max_default when o sets
 * none), and the handle to run it on; NULL with e set ("cannot verb
 * '...'") when the URL is refused or libcurl fails. */
static CURL *
xfer_open(struct xfer *x, enum xfer_mode mode, const char *url,
    const struct http_opts *o, uint64_t max_default, const char *verb,
    struct err *e)
{
	CURL *h;

	if (http_global(e) < 0 || check_url(url, o, e) < 0)
		return NULL;
	memset(x, 0, sizeof(*x));
	x->mode = mode;
	eff_fill(&x->f, o, max_default);
	hdrs_clear(&x->h);
	if ((h = curl_easy_init()) == NULL)
		err_set(e, "cannot %s '%s': libcurl failed", verb, url);
	return h;
}

/* GET or POST into memory, retrying transport failures and 5xx. */
static int
request_mem(const char *url, const struct http_opts *o, const char *ctype,
    const void *body, size_t len, int post, struct http_response *r,
    struct err *e)
{
	struct xfer x;
	struct curl_slist *list = NULL;
	CURL *h;
	int rc = -1;

	if ((h = xfer_open(&x, X_MEMORY, url, o, MEM_MAX_DEFAULT, "request",
	    e)) == NULL)
		return -1;
	if (xfer_setup(h, &x, url, o, &list, e) < 0)
		goto out;
	if (post && set_post(h, &list, url, ctype, body, len, e) < 0)
		goto out;
	for (int attempt = 0;; attempt++) {
		CURLcode cr;

		http_response_release(r);
		r->body.limit = x.f.max_bytes > SIZE_MAX - 1 ? SIZE_MAX - 1 :
		    (size_t)x.f.max_bytes;
		x.body = &r->body;
		xfer_reset(&x);
		cr = curl_easy_perform(h);
		if (cr == CURLE_OK) {
			take_headers(&x, r);
			if (r->status >= 500 && attempt < x.f.max_retries &&
			    backoff(&x, attempt, r->retry_after_s) == 0)
				continue;
			rc = 0;
			break;
		}
		if (retry_transport(&x, cr, attempt))
			continue;
		r->status = x.h.status;
		xfer_fail(&x, cr, url, o, attempt + 1, e);
		break;
	}
out:
	xfer_end(h, list, &x);
	return rc;
}

int
http_get(const char *url, const struct http_opts *o, struct http_response *r,
    struct err *e)
{
	return request_mem(url, o, NULL, NULL, 0, 0, r, e);
}

int
http_post(const char *url, const struct http_opts *o,
    const char *content_type, const void *body, size_t len,
    struct http_response *r, struct err *e)
{
	return request_mem(url, o, content_type, body, len, 1, r, e);
}

int
http_stream_post(const char *url, const struct http_opts *o,
    const char *content_type, const void *body, size_t len,
    http_chunk_fn fn, void *arg, long *status, struct err *e)
{
	struct xfer x;
	struct curl_slist *list = NULL;
	CURLcode cr;
	CURL *h;
	int rc = -1;

	*status = 0;
	if ((h = xfer_open(&x, X_STREAM, url, o, MEM_MAX_DEFAULT, "request",
	    e)) == NULL)
		return -1;
	x.fn = fn;
	x.fn_arg = arg;
	if (xfer_setup(h, &x, url, o, &list, e) < 0 ||
	    set_post(h, &list, url, content_type, body, len, e) < 0)
		goto out;
	cr = curl_easy_perform(h);
	*status = x.h.status;
	if (cr == CURLE_OK || x.callback_stop)
		rc = 0;
	else if (x.callback_error)
		err_set(e, "reading the answer of '%s' failed", url);
	else
		xfer_fail(&x, cr, url, o, 1, e);
out:
	xfer_end(h, list, &x);
	return rc;
}

/* A copy of list with an If-Range line added; NULL when out of memory. */
static struct curl_slist *
if_range_list(const struct curl_slist *list, const char *etag)
{
	struct curl_slist *copy = NULL, *t;
	char line[512];

	if (!http_no_newline(etag) || snprintf(line, sizeof(line), "If-Range: %s",
	    etag) >= (int)sizeof(line))
		return NULL;
	for (; list != NULL; list = list->next) {
		if ((t = curl_slist_append(copy, list->data)) == NULL)
			goto fail;
		copy = t;
	}
	if ((t = curl_slist_append(copy, line)) == NULL)
		goto fail;
	return t;
fail:
	curl_slist_free_all(copy);
	return NULL;
}

int
http_download(const char *url, const struct http_opts *o, int fd,
    uint64_t *have, struct http_download_ctl *ctl, struct err *e)
{
	struct http_download_ctl local;
	struct xfer x;
	struct curl_slist *list = NULL;
	CURL *h;
	int rc = -1;

	if (ctl == NULL) {
		memset(&local, 0, sizeof(local));
		ctl = &local;
	}
	ctl->status = 0;
	ctl->resumed = ctl->restarted = ctl->attempts = 0;
	ctl->keep_partial = 0;
	ctl->etag = NULL;
	if ((h = xfer_open(&x, X_FILE, url, o, FILE_MAX_DEFAULT, "download",
	    e)) == NULL)
		return -1;
	x.fd = fd;
	x.ctl = ctl;
	ctl->etag = http_strong_etag(ctl->if_range);
	if (xfer_setup(h, &x, url, o, &list, e) < 0)
		goto out;
	x.have = *have;
	if (x.have > x.f.max_bytes && restart_file(&x, ctl) < 0) {
		xfer_fail(&x, CURLE_WRITE_ERROR, url, o, 0, e);
		goto out;
	}
	for (int attempt = 0;; attempt++) {
		struct curl_slist *with_if_range = NULL;
		char range[32];
		long status;
		CURLcode cr;

		xfer_reset(&x);
		x.range_sent = x.have > 0;
		if (x.range_sent) {
			snprintf(range, sizeof(range), "%" PRIu64 "-", x.have);
			curl_easy_setopt(h, CURLOPT_RANGE, range);
			if (ctl->etag != NULL && (with_if_range =
			    if_range_list(list, ctl->etag)) == NULL) {
				err_set(e, "cannot download '%s': out of "
				    "memory", url);
				break;
			}
		} else
			curl_easy_setopt(h, CURLOPT_RANGE, (char *)NULL);
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, with_if_range ?
		    with_if_range : list);
		ctl->attempts++;
		cr = curl_easy_perform(h);
		curl_slist_free_all(with_if_range);
		status = ctl->status = x.h.status;
		*have = x.have;
		if (x.capped || x.io_errno || x.tap_failed) {
			if (x.tap_failed && !x.capped && !x.io_errno)
				err_set(e, "download of '%s' stopped by its "
				    "reader", url);
			else
				xfer_fail(&x, cr, url, o, attempt + 1, e);
			break;
		}
		if (x.bad_range || (cr == CURLE_OK && status == 416 &&
		    x.range_sent)) {
			/* The partial file cannot be continued: start over,
			 * at once, as one more attempt. */
			if (attempt >= x.f.max_retries) {
				err_set(e, "cannot download '%s': the server "
				    "refused to resume (HTTP %ld)", url, status);
				break;
			}
			if (restart_file(&x, ctl) < 0) {
				xfer_fail(&x, cr, url, o, attempt + 1, e);
				break;
			}
			*have = 0;
			continue;
		}
		if (cr == CURLE_OK && (status == 200 || status == 206)) {
			rc = 0;
			break;
		}
		if (cr == CURLE_OK && status >= 500) {
			if (attempt < x.f.max_retries &&
			    backoff(&x, attempt, x.h.retry_after_s) == 0)
				continue;
			if (x.stopped || x.timed_out) {
				ctl->keep_partial = x.have > 0;
				xfer_fail(&x, cr, url, o, attempt + 1, e);
				break;
			}
			ctl->keep_partial = x.have > 0;
			err_set(e, "cannot download '%s': HTTP %ld%s%s (%d "
			    "attempts)", url, status, x.h.reason[0] ? " " : "",
			    x.h.reason, attempt + 1);
			break;
		}
		if (cr == CURLE_OK) {
			err_set(e, "cannot download '%s': HTTP %ld%s%s", url,
			    status, x.h.reason[0] ? " " : "", x.h.reason);
			break;
		}
		if (retry_transport(&x, cr, attempt))
			continue;
		ctl->keep_partial = (transient(cr) || x.stopped ||
		    x.timed_out) && x.have > 0;
		xfer_fail(&x, cr, url, o, attempt + 1, e);
		break;
	}
out:
	xfer_end(h, list, &x);
	if (ctl == &local)
		free(local.etag);
	return rc;
}

int
http_download_fd(const char *url, const struct http_opts *o, int fd,
    uint64_t *have, http_progress_fn progress, void *parg, struct err *e)
{
	struct http_download_ctl ctl;

	int rc;

	memset(&ctl, 0, sizeof(ctl));
	ctl.progress = progress;
	ctl.progress_arg = parg;
	rc = http_download(url, o, fd, have, &ctl, e);
	free(ctl.etag);
	return rc;
}

struct smtp_body {
	const char *p;
	size_t left;
};

static size_t
smtp_read_cb(char *out, size_t size, size_t n, void *arg)
{
	struct smtp_body *b = arg;
	size_t len = size * n;

	if (len > b->left)
		len = b->left;
	memcpy(out, b->p, len);
	b->p += len;
	b->left -= len;
	return len;
}

/* "<addr>" for an envelope address, unless it already has brackets. */
static int
envelope(char *out, size_t len, const char *addr)
{
	int n;

	if (!http_no_newline(addr))
		return -1;
	n = snprintf(out, len, strchr(addr, '<') ? "%s" : "<%s>", addr);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int
http_smtp_send(const char *url, const struct http_opts *o, const char *from,
    const struct strv *to, const char *message, struct err *e)
{
	struct curl_slist *rcpt = NULL, *t;
	char addr[512], sender[512];
	struct smtp_body body;
	struct xfer x;
	CURL *h;
	int rc = -1;

	if (http_global(e) < 0)
		return -1;
	if (!has_scheme(url, "smtp") && !has_scheme(url, "smtps"))
		return err_set(e, "refusing '%s': not an smtp:// or smtps:// "
		    "URL", url);
	if (to == NULL || to->n == 0)
		return err_set(e, "no recipients for mail through '%s'", url);
	if (envelope(sender, sizeof(sender), from) < 0)
		return err_set(e, "bad sender address '%s'", from);
	for (size_t i = 0; i < to->n; i++) {
		if (envelope(addr, sizeof(addr), to->v[i]) < 0) {
			curl_slist_free_all(rcpt);
			return err_set(e, "bad recipient address '%s'",
			    to->v[i]);
		}
		if ((t = curl_slist_append(rcpt, addr)) == NULL) {
			curl_slist_free_all(rcpt);
			return err_set(e, "cannot send mail: out of memory");
		}
		rcpt = t;
	}
	memset(&x, 0, sizeof(x));
	eff_fill(&x.f, o, MEM_MAX_DEFAULT);
	if ((h = curl_easy_init()) == NULL) {
		curl_slist_free_all(rcpt);
		return err_set(e, "cannot send mail: libcurl failed");
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
	/* Plain smtp:// must upgrade with STARTTLS unless plain text is
	 * allowed (loopback tests). */
	curl_easy_setopt(h, CURLOPT_USE_SSL, o->allow_http ?
	    (long)CURLUSESSL_TRY : (long)CURLUSESSL_ALL);
	curl_easy_setopt(h, CURLOPT_MAIL_FROM, sender);
	curl_easy_setopt(h, CURLOPT_MAIL_RCPT, rcpt);
	curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(h, CURLOPT_READFUNCTION, smtp_read_cb);
	curl_easy_setopt(h, CURLOPT_READDATA, &body);
	set_limits(h, &x.f, x.errbuf);
	for (int attempt = 0;; attempt++) {
		CURLcode cr;

		body.p = message;
		body.left = strlen(message);
		x.errbuf[0] = '\0';
		cr = curl_easy_perform(h);
		if (cr == CURLE_OK) {
			rc = 0;
			break;
		}
		if (retry_transport(&x, cr, attempt))
			continue;
		err_set(e, "cannot send mail through '%s': %s", url,
		    x.errbuf[0] ? x.errbuf : curl_easy_strerror(cr));
		break;
	}
	curl_easy_cleanup(h);
	curl_slist_free_all(rcpt);
	return rc;
}
