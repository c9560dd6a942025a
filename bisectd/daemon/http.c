/*
 * http.c: the daemon's read-only HTTP server (see http.h), on
 * libmicrohttpd driven from a thread of its own: select() over the
 * server's sockets and a stop pipe, with every connection's deadline
 * kept here.  It owns that thread, its read-only store connection and
 * the routing of paths to the JSON of report/listing_json.h, the
 * reports of report/build.h and the pages of pages.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <syslog.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

#include "bisectd/search/range.h"
#include "bisectd/report/build.h"
#include "bisectd/jobs/status.h"
#include "bisectd/measure/canary.h"
#include "bisectd/report/listing_json.h"
#include "bisectd/report/matrix.h"
#include "bisectd/report/print.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/logto.h"
#include "config/conf.h"
#include "http.h"
#include "pages.h"
#include "routes.h"
#include "store/store.h"

/* The largest answer: a report of thousands of releases fits. */
#define HTTP_RESPONSE_MAX	(64u << 20)
/* At most one log line of the server's own per this many ms. */
#define HTTP_LOG_MS		10000

struct conn {
	int used;
	int fd;
	int shut;		/* its deadline passed: shut down */
	int64_t deadline_ms;
};

struct http_server {
	struct http_opts o;
	char *address, *database;	/* owned copies */
	struct MHD_Daemon *mhd;
	pthread_t thread;
	int running;
	int stop_pipe[2];
	struct store *store;		/* the thread's; read-only, or NULL */
	struct metrics_cache metrics;	/* the thread's, for /metrics */
	struct conn conns[HTTP_CONNECTIONS_MAX + 8];
	int64_t log_quiet_until;
	unsigned log_muted;
	char start_error[512];		/* what libmicrohttpd said at start */
};

/* What one request gets. */
struct reply {
	int status;
	const char *type;
	struct buf body;
};

static void
server_log(struct http_server *h, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
server_log(struct http_server *h, int level, const char *fmt, ...)
{
	int64_t now = clock_now_ms();
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (h->mhd == NULL) {
		/* Starting: keep it for the error http_start() returns. */
		snprintf(h->start_error, sizeof(h->start_error), "%s", msg);
		return;
	}
	if (now < h->log_quiet_until) {
		h->log_muted++;
		return;
	}
	if (h->log_muted > 0)
		log_to(h->o.log, h->o.arg, level, "http: %s (and %u more "
		    "messages not logged)", msg, h->log_muted);
	else
		log_to(h->o.log, h->o.arg, level, "http: %s", msg);
	h->log_muted = 0;
	h->log_quiet_until = now + HTTP_LOG_MS;
}

static void
mhd_log(void *arg, const char *fmt, va_list ap)
{
	struct http_server *h = arg;
	char msg[512];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '.'))
		msg[--n] = '\0';
	server_log(h, LOG_WARNING, "%s", msg);
}

/* Every connection is tracked from accept to close for its deadline. */
static void
on_connection(void *arg, struct MHD_Connection *c, void **socket_context,
    enum MHD_ConnectionNotificationCode what)
{
	struct http_server *h = arg;
	const union MHD_ConnectionInfo *ci;
	struct conn *slot = *socket_context;

	if (what == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (slot)
			slot->used = 0;
		*socket_context = NULL;
		return;
	}
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	for (size_t i = 0; i < sizeof(h->conns) / sizeof(*h->conns); i++)
		if (!h->conns[i].used) {
			slot = &h->conns[i];
			slot->used = 1;
			slot->shut = 0;
			slot->fd = ci ? ci->connect_fd : -1;
			slot->deadline_ms = clock_now_ms() + HTTP_CONNECTION_MS;
			*socket_context = slot;
			return;
		}
}

/* Shut down connections past their deadline; the ms until the next one
 * is due (-1: none). */
static int64_t
sweep(struct http_server *h)
{
	int64_t now = clock_now_ms(), next = -1;

	for (size_t i = 0; i < sizeof(h->conns) / sizeof(*h->conns); i++) {
		struct conn *k = &h->conns[i];

		if (!k->used || k->shut || k->fd < 0)
			continue;
		if (k->deadline_ms <= now) {
			/* libmicrohttpd sees the end of the stream and
			 * closes it in its next pass. */
			shutdown(k->fd, SHUT_RDWR);
			k->shut = 1;
			next = 0;
		} else if (next < 0 || k->deadline_ms - now < next)
			next = k->deadline_ms - now;
	}
	return next;
}

static void *
serve(void *arg)
{
	struct http_server *h = arg;

	/* Beside a benchmark, take only the CPU it leaves (Linux gives each
	 * thread its own nice value). */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), 19) < 0)
		server_log(h, LOG_WARNING, "cannot lower the server "
		    "thread's priority: %s", strerror(errno));
	for (;;) {
		fd_set rs, ws, es;
		MHD_socket max = 0;
		MHD_UNSIGNED_LONG_LONG mt;
		struct timeval tv, *tvp = NULL;
		int64_t wait = sweep(h);

		FD_ZERO(&rs);
		FD_ZERO(&ws);
		FD_ZERO(&es);
		if (MHD_get_fdset2(h->mhd, &rs, &ws, &es, &max, FD_SETSIZE) !=
		    MHD_YES) {
			server_log(h, LOG_ERR, "cannot wait for clients; "
			    "the server stops");
			break;
		}
		FD_SET(h->stop_pipe[0], &rs);
		if (h->stop_pipe[0] > max)
			max = h->stop_pipe[0];
		if (MHD_get_timeout(h->mhd, &mt) == MHD_YES &&
		    (wait < 0 || (int64_t)mt < wait))
			wait = (int64_t)mt;
		if (wait >= 0) {
			tv.tv_sec = (time_t)(wait / 1000);
			tv.tv_usec = (suseconds_t)(wait % 1000 * 1000);
			tvp = &tv;
		}
		if (select(max + 1, &rs, &ws, &es, tvp) < 0) {
			if (errno == EINTR)
				continue;
			server_log(h, LOG_ERR, "select: %s; the server "
			    "stops", strerror(errno));
			break;
		}
		if (FD_ISSET(h->stop_pipe[0], &rs))
			break;
		MHD_run_from_select(h->mhd, &rs, &ws, &es);
	}
	return NULL;
}

/* --- answers --- */

static int
reply_text(struct reply *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
reply_text(struct reply *r, int status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	buf_reset(&r->body);
	r->status = status;
	r->type = "text/plain; charset=utf-8";
	if (buf_addstr(&r->body, msg) < 0 || buf_addstr(&r->body, "\n") < 0)
		return -1;
	return 0;
}

/* The JSON bisectctl prints, consumed. */
static int
reply_json(struct reply *r, json_t *json)
{
	char *text = json ? listing_json_text(json) : NULL;
	int rc;

	json_decref(json);
	if (text == NULL)
		return reply_text(r, 500, "out of memory");
	r->status = 200;
	r->type = "application/json";
	rc = buf_addstr(&r->body, text);
	free(text);
	return rc < 0 ? reply_text(r, 500, "the answer is too large") : 0;
}

static struct store *
server_store(struct http_server *h, struct err *e)
{
	if (h->store == NULL && store_open_readonly(h->database, &h->store,
	    e) < 0)
		h->store = NULL;
	return h->store;
}

static void
route_status(struct http_server *h, const struct conf *cf, struct store *s,
    struct reply *r)
{
	struct err e = ERR_INIT;
	json_t *o;

	if (status_json(cf, s, h->o.status ? h->o.status(h->o.arg) : NULL, 0,
	    STATUS_JOBS, &o, &e) < 0) {
		reply_text(r, 500, "%s", e.msg);
		return;
	}
	reply_json(r, o);
}

static void
route_alerts(struct store *s, struct reply *r)
{
	struct store_alert_rows rows;
	struct err e = ERR_INIT;

	if (store_alert_list(s, LISTING_ALERTS, &rows, &e) < 0) {
		reply_text(r, 500, "%s", e.msg);
		return;
	}
	reply_json(r, listing_alerts_json(&rows));
	store_alert_rows_release(&rows);
}

static void
route_versions(struct store *s, const struct conf_engine *g,
    struct reply *r)
{
	struct store_release_list l = { NULL, 0 };
	struct err e = ERR_INIT;
	int64_t id;
	int rc;

	rc = store_engine_find(s, g->name, &id, &e);
	if (rc == 0)
		rc = store_release_list(s, id, &l, &e);
	if (rc < 0) {
		reply_text(r, 500, "%s", e.msg);
		return;
	}
	reply_json(r, listing_releases_json(&l));
	store_release_list_release(&l);
}

static void
route_runs(struct store *s, const struct conf_engine *g, const char *version,
    struct reply *r)
{
	struct store_run_rows rows;
	struct canary_runs canary;
	struct store_release rel;
	struct err e = ERR_INIT;
	int64_t id;
	int rc;

	rc = store_engine_find(s, g->name, &id, &e);
	if (rc == 0)
		rc = store_release_get(s, id, version, &rel, &e);
	if (rc == 1) {
		reply_text(r, 404, "%s has no stored release '%s'", g->name,
		    version);
		return;
	}
	if (rc == 0) {
		rc = store_run_list(s, rel.id, &rows, &e);
		if (rc == 0 && (rc = canary_runs_list(s, rel.id, &canary,
		    &e)) < 0)
			store_run_rows_release(&rows);
		store_release_release(&rel);
	}
	if (rc < 0) {
		reply_text(r, 500, "%s", e.msg);
		return;
	}
	reply_json(r, listing_runs_json(&rows, &canary));
	store_run_rows_release(&rows);
	canary_runs_release(&canary);
}

/* ?metric=M&threshold=P&all=1, as bisectctl report's options. */
static int
report_options(struct MHD_Connection *c, const struct conf_engine *g,
    struct report_opts *o, struct reply *r)
{
	struct bisect_params bp;
	struct err e = ERR_INIT;
	char why[512];

	memset(o, 0, sizeof(*o));
	if (route_report_request(MHD_lookup_connection_value(c,
	    MHD_GET_ARGUMENT_KIND, "metric"), MHD_lookup_connection_value(c,
	    MHD_GET_ARGUMENT_KIND, "threshold"), MHD_lookup_connection_value(c,
	    MHD_GET_ARGUMENT_KIND, "all"), &o->req, why, sizeof(why)) < 0)
		return reply_text(r, 400, "%s", why), -1;
	if (range_params(g, &o->req, &bp, &e) < 0)
		return reply_text(r, 400, "%s", e.msg), -1;
	return 0;
}

/* A report's page or JSON, text (taken over, len bytes), as the 200. */
static void
reply_page(struct reply *r, int html, char *text, size_t len)
{
	int rc;

	r->status = 200;
	r->type = html ? "text/html; charset=utf-8" : "application/json";
	rc = buf_add(&r->body, text, len);
	free(text);
	if (rc < 0)
		reply_text(r, 500, "the report is too large");
}

/* The report, as JSON (html 0) or a page; rendered by output/. */
static void
route_report(struct MHD_Connection *c, const struct conf *cf,
    struct store *s, const struct conf_engine *g, const char *spec,
    int html, struct reply *r)
{
	struct report_opts o;
	struct report_json_stream w = { NULL, 0 };
	struct report_sink sink = { report_json_stream_head,
	    report_json_stream_release, &w };
	struct err e = ERR_INIT;
	struct range rg;
	json_t *rep;
	int64_t id;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int code, rc;

	if (report_options(c, g, &o, r) < 0)
		return;
	o.plot = html;
	if ((rc = store_engine_find(s, g->name, &id, &e)) == 1) {
		reply_text(r, 404, "nothing is stored for %s", g->name);
		return;
	}
	if (rc == 0 && range_resolve(s, id, spec, &rg, &e) < 0) {
		reply_text(r, 404, "%s", e.msg);
		return;
	}
	if (rc == 0)
		range_release(&rg);
	if (rc < 0) {
		reply_text(r, 500, "%s", e.msg);
		return;
	}
	if ((f = open_memstream(&text, &len)) == NULL) {
		reply_text(r, 500, "out of memory");
		return;
	}
	/* JSON goes out release by release, as bisectctl writes it. */
	w.out = f;
	if (!html)
		o.sink = &sink;
	if (report_build(cf, g, s, spec, &o, &rep, &code, &e) < 0) {
		fclose(f);
		free(text);
		reply_text(r, 500, "%s", e.msg);
		return;
	}
	if (html)
		report_print(rep, REPORT_HTML, f);
	else
		report_json_tail(rep, w.n, f);
	json_decref(rep);
	if (fclose(f) != 0) {
		free(text);
		reply_text(r, 500, "out of memory");
		return;
	}
	reply_page(r, html, text, len);
}

/* Whether name is an engine (a matrix's cell too) or a matrix of cf. */
static int
known_engine(const void *arg, const char *name)
{
	const struct conf *cf = arg;

	return conf_engine(cf, name) != NULL || conf_matrix(cf, name) != NULL;
}

/* A range across a matrix's cells: its grid, or its table as JSON. */
static void
route_matrix(struct MHD_Connection *c, const struct conf *cf,
    struct store *s, const struct conf_engine *m, const char *spec,
    int html, struct reply *r)
{
	struct report_matrix mx;
	struct report_opts o;
	struct err e = ERR_INIT;
	const struct conf_engine *cell = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int code, rc;

	/* Its cells share their options' checks: the first says. */
	for (size_t i = 0; i < cf->nengines && cell == NULL; i++)
		if (cf->engines[i].matrix == m)
			cell = &cf->engines[i];
	if (cell == NULL) {
		reply_text(r, 404, "matrix '%s' has no cells", m->name);
		return;
	}
	if (report_options(c, cell, &o, r) < 0)
		return;
	if ((f = open_memstream(&text, &len)) == NULL) {
		reply_text(r, 500, "out of memory");
		return;
	}
	rc = report_matrix_build(cf, m, s, spec, &o, &mx, &code, &e);
	if (rc == 0)
		report_matrix_print(&mx, html ? REPORT_HTML : REPORT_JSON, f);
	report_matrix_clear(&mx);
	if (fclose(f) != 0 || rc < 0) {
		free(text);
		reply_text(r, 500, "%s", rc < 0 ? e.msg : "out of memory");
		return;
	}
	reply_page(r, html, text, len);
}

static void
route(struct http_server *h, struct MHD_Connection *c, const char *url,
    struct reply *r)
{
	const struct conf *cf = h->o.conf_hold(h->o.arg);
	const struct conf_engine *g = NULL;
	struct err e = ERR_INIT;
	struct page_ctx p;
	struct route rt;
	struct store *s;

	if ((s = server_store(h, &e)) == NULL) {
		reply_text(r, 503, "%s", e.msg);
		goto out;
	}
	memset(&p, 0, sizeof(p));
	p.conf = cf;
	p.conf_generation = h->o.conf_generation ?
	    h->o.conf_generation(h->o.arg) : 0;
	p.s = s;
	p.metrics = &h->metrics;
	route_parse(url, &rt);
	route_engine(&rt, known_engine, cf);
	if (rt.engine[0] && conf_matrix(cf, rt.engine) != NULL &&
	    (rt.kind == ROUTE_REPORT || rt.kind == ROUTE_API_REPORT)) {
		route_matrix(c, cf, s, conf_matrix(cf, rt.engine), rt.rest,
		    rt.kind == ROUTE_REPORT, r);
		goto out;
	}
	if (rt.engine[0] && (g = conf_engine(cf, rt.engine)) == NULL) {
		reply_text(r, 404, "no engine '%s' in the configuration",
		    rt.engine);
		goto out;
	}
	switch (rt.kind) {
	case ROUTE_PAGE:
	case ROUTE_METRICS: {
		json_t *d = h->o.status ? h->o.status(h->o.arg) : NULL;
		int html = rt.kind == ROUTE_PAGE;

		p.daemon = d;
		r->status = 200;
		r->type = html ? "text/html; charset=utf-8" :
		    "text/plain; version=0.0.4; charset=utf-8";
		if ((html ? page_status(&p, &r->body, &e) :
		    page_metrics(&p, &r->body, &e)) < 0)
			reply_text(r, 500, "%s", e.msg);
		json_decref(d);
		break;
	}
	case ROUTE_API_STATUS:
		route_status(h, cf, s, r);
		break;
	case ROUTE_API_ALERTS:
		route_alerts(s, r);
		break;
	case ROUTE_API_VERSIONS:
		route_versions(s, g, r);
		break;
	case ROUTE_API_RUNS:
		route_runs(s, g, rt.rest, r);
		break;
	case ROUTE_API_REPORT:
	case ROUTE_REPORT:
		route_report(c, cf, s, g, rt.rest, rt.kind == ROUTE_REPORT, r);
		break;
	case ROUTE_NONE:
		reply_text(r, 404, "no such page");
		break;
	}
out:
	h->o.conf_release(h->o.arg);
}

static enum MHD_Result
send_reply(struct MHD_Connection *c, struct reply *r)
{
	struct MHD_Response *resp;
	enum MHD_Result rc;
	size_t len = r->body.len;
	char *body = buf_take(&r->body);

	if (body == NULL)
		return MHD_NO;
	resp = MHD_create_response_from_buffer(len, body,
	    MHD_RESPMEM_MUST_FREE);
	if (resp == NULL) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", r->type);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	/* Pages are self-contained: nothing is fetched, nothing runs. */
	MHD_add_response_header(resp, "Content-Security-Policy", "default-src "
	    "'none'; style-src 'unsafe-inline'; img-src data:; "
	    "frame-ancestors 'none'");
	if (r->status == 405)
		MHD_add_response_header(resp, "Allow", "GET, HEAD");
	rc = MHD_queue_response(c, (unsigned)r->status, resp);
	MHD_destroy_response(resp);
	return rc;
}

static enum MHD_Result
on_request(void *arg, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_size, void **req)
{
	struct http_server *h = arg;
	struct reply r;
	const char *length, *chunked;
	enum MHD_Result rc;

	(void)version;
	(void)upload;
	(void)req;
	r.status = 500;
	r.type = "text/plain; charset=utf-8";
	buf_init(&r.body, HTTP_RESPONSE_MAX);
	length = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_LENGTH);
	chunked = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_TRANSFER_ENCODING);
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		reply_text(&r, 405, "only GET and HEAD are served: nothing "
		    "over HTTP changes state");
	else if ((length && strcmp(length, "0") != 0) || chunked ||
	    *upload_size > 0)
		reply_text(&r, 413, "a request body is not taken here");
	else
		route(h, c, url, &r);
	rc = send_reply(c, &r);
	buf_release(&r.body);
	return rc;
}

/* --- start and stop --- */

int
http_start(const struct http_opts *o, struct http_server **out, int *port,
    struct err *e)
{
	struct http_server *h = calloc(1, sizeof(*h));
	struct sockaddr_in6 a6;
	struct sockaddr_in a4;
	struct sockaddr *sa;
	const union MHD_DaemonInfo *di;
	sigset_t all, old;
	unsigned flags = MHD_USE_ERROR_LOG;
	int rc;

	*out = NULL;
	if (h == NULL)
		return err_set(e, "out of memory");
	h->o = *o;
	h->stop_pipe[0] = h->stop_pipe[1] = -1;
	h->address = strdup(o->address);
	h->database = strdup(o->database);
	if (h->address == NULL || h->database == NULL) {
		http_stop(h);
		return err_set(e, "out of memory");
	}
	memset(&a4, 0, sizeof(a4));
	memset(&a6, 0, sizeof(a6));
	if (inet_pton(AF_INET, o->address, &a4.sin_addr) == 1) {
		a4.sin_family = AF_INET;
		a4.sin_port = htons((uint16_t)o->port);
		sa = (struct sockaddr *)&a4;
	} else if (inet_pton(AF_INET6, o->address, &a6.sin6_addr) == 1) {
		a6.sin6_family = AF_INET6;
		a6.sin6_port = htons((uint16_t)o->port);
		sa = (struct sockaddr *)&a6;
		flags |= MHD_USE_IPv6;
	} else {
		http_stop(h);
		return err_set(e, "http: '%s' is not a numeric address",
		    o->address);
	}
	if (pipe2(h->stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		err_errno(e, "http: cannot create a pipe");
		http_stop(h);
		return -1;
	}
	if (h->stop_pipe[0] >= FD_SETSIZE) {
		http_stop(h);
		return err_set(e, "http: too many open files to serve HTTP");
	}
	h->mhd = MHD_start_daemon(flags, (uint16_t)o->port, NULL, NULL,
	    on_request, h,
	    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
	    MHD_OPTION_SOCK_ADDR, sa,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_CONNECTIONS_MAX,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_S,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_REQUEST_MAX,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
	    MHD_OPTION_END);
	if (h->mhd == NULL) {
		err_set(e, "http: cannot listen on %s port %d%s%s", o->address,
		    o->port, h->start_error[0] ? ": " : "", h->start_error);
		http_stop(h);
		return -1;
	}
	di = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);
	*port = di ? di->port : o->port;
	/* Signals are the daemon loop's: the thread runs with them blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&h->thread, NULL, serve, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		errno = rc;
		err_errno(e, "http: cannot start the server thread");
		http_stop(h);
		return -1;
	}
	h->running = 1;
	*out = h;
	return 0;
}

void
http_stop(struct http_server *h)
{
	if (h == NULL)
		return;
	if (h->running) {
		(void)write(h->stop_pipe[1], "s", 1);
		pthread_join(h->thread, NULL);
	}
	if (h->mhd)
		MHD_stop_daemon(h->mhd);
	for (int i = 0; i < 2; i++)
		if (h->stop_pipe[i] >= 0)
			close(h->stop_pipe[i]);
	store_close(h->store);
	page_metrics_cache_release(&h->metrics);
	free(h->address);
	free(h->database);
	free(h);
}
